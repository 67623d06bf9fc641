//! A site's settings in the console: live hand-off (on or off, opening hours, closed dates, time zone,
//! the visitor's wait), the same values `sitebot site update --handoff*` sets and parsed by the same
//! domain types. Owners (and admins) only; a change is a form post with the session's CSRF token, and
//! is audited (`handoff_settings_changed`, the new values).
//!
//! - `GET /console/sites/{site}/settings`: the form with the site's values.
//! - `POST /console/sites/{site}/settings`: saved, `303` back to the form; a wrong value is `422` with
//!   the form as sent and what is wrong with it; nothing is saved then.

use std::sync::Arc;

use poem::web::{Data, Path};
use poem::{Body, Request, Response, handler};
use serde_json::json;

use super::pages;
use super::site_settings::{form_of, page};
use super::texts::{self, Texts};
use super::views::{self, field, managed_site, see_other};
use crate::app::AppState;
use crate::domain::{ClosedDates, TimeZone, WeeklyHours};
use crate::store::SiteUpdate;
use crate::store::sites::MAX_HANDOFF_WAIT_SECS;

#[handler]
pub async fn settings_page(req: &Request, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, site) = match managed_site(state, req, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let saved = req.uri().query().is_some_and(|q| q.split('&').any(|p| p == "saved=1"));
    let mut sections = super::site_settings::sections(state, &me, &site);
    sections.saved = req.uri().query().and_then(|q| q.split('&').find_map(|p| p.strip_prefix("saved="))).unwrap_or("").chars().take(10).collect();
    let form = form_of(&site);
    page(t, &me, site, form, None, saved, sections)
}

/// The sent form as an update, or the first thing wrong with it (its label, then the reason).
fn parse(t: &Texts, fields: &[(String, String)]) -> Result<SiteUpdate, String> {
    let why = |label: &str, reason: String| format!("{label}: {reason}");
    let hours = WeeklyHours::parse(field(fields, "hours").trim()).map_err(|e| why(t.handoff_hours, e.0))?;
    let closed = ClosedDates::parse(field(fields, "closed").trim()).map_err(|e| why(t.handoff_closed, e.0))?;
    let zone = TimeZone::parse(field(fields, "timezone").trim()).map_err(|e| why(t.handoff_timezone, e.0))?;
    let wait = field(fields, "wait").trim().parse::<u32>().ok().filter(|w| (1..=MAX_HANDOFF_WAIT_SECS).contains(w));
    let wait = wait.ok_or_else(|| why(t.handoff_wait, format!("1 – {MAX_HANDOFF_WAIT_SECS}")))?;
    Ok(SiteUpdate {
        handoff: Some(field(fields, "enabled") == "on"),
        handoff_hours: Some(hours),
        handoff_closed: Some(closed),
        handoff_timezone: Some(zone),
        handoff_wait_secs: Some(wait),
        ..Default::default()
    })
}

#[handler]
pub async fn save_settings(req: &Request, body: Body, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, fields, site) = match views::owner_post(state, req, body, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let up = match parse(t, &fields) {
        Ok(up) => up,
        Err(error) => {
            let form = pages::HandoffForm {
                enabled: field(&fields, "enabled") == "on",
                hours: field(&fields, "hours").to_owned(),
                closed: field(&fields, "closed").to_owned(),
                timezone: field(&fields, "timezone").to_owned(),
                wait: field(&fields, "wait").to_owned(),
            };
            let sections = super::site_settings::sections(state, &me, &site);
            return page(t, &me, site, form, Some(error), false, sections);
        }
    };
    let id = site.id;
    let site = match state.store.run(move |s| s.site(id).update(up)).await {
        Ok((site, _)) => site,
        Err(e) => return views::failed(t, Some(&me), e),
    };
    let h = &site.handoff;
    let detail = json!({"enabled": h.enabled, "hours": h.hours.weekly.to_string(), "closed": h.hours.closed.to_string(),
                        "timezone": h.hours.zone.to_string(), "waitSecs": h.wait_secs});
    views::audit(state, &me.email, Some(id), "handoff_settings_changed", detail).await;
    see_other(&format!("/console/sites/{id}/settings?saved=1"))
}
