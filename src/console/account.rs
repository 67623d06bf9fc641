//! The signed-in user's own page (#25 email): whether they get the weekly digest of the sites they own,
//! and, for each site they may manage, whether it e-mails its owners each new lead (the same switch as
//! `sitebot site update ID --lead-email on|off`). Every change is a form post with the session's CSRF
//! token and is audited (`digest_preference_changed`, `lead_email_changed`).
//!
//! - `GET /console/account`: the page.
//! - `POST /console/account`: the digest preference; `303` back with `?saved=1`.
//! - `POST /console/sites/{site}/lead-email`: owners (and admins) only; `303` back to the account page.
//!   A value other than on or off is `422` with the page and what is wrong; nothing is saved then.

use std::sync::Arc;

use poem::http::StatusCode;
use poem::web::{Data, Path};
use poem::{Body, Request, Response, handler};
use serde_json::json;

use super::pages;
use super::session::{self, Me};
use super::texts::{self, Texts};
use super::views::{self, checked_post, see_other};
use crate::app::AppState;
use crate::domain::SiteRole;

/// On or off from a form's values of `name`: a checkbox after a hidden `off`, so the last value wins;
/// `Err` for any other value.
fn on_off(fields: &[(String, String)], name: &str) -> Result<bool, ()> {
    let mut on = false;
    for (_, v) in fields.iter().filter(|(k, _)| k == name) {
        on = match v.as_str() {
            "on" => true,
            "off" => false,
            _ => return Err(()),
        };
    }
    Ok(on)
}

async fn page(state: &AppState, t: &'static Texts, me: &Me, error: Option<&str>, saved: bool) -> Response {
    let (user, admin) = (me.user.id.clone(), me.user.is_admin);
    let owned: Vec<_> = me.grants.iter().filter(|g| g.role == SiteRole::Owner).map(|g| g.site_id).collect();
    let read = state
        .store
        .run(move |s| {
            let digest = s.email().digest_wanted(&user)?;
            let sites = if admin { s.sites().list()? } else { owned.iter().filter_map(|id| s.site(*id).get().transpose()).collect::<Result<Vec<_>, _>>()? };
            let mut rows = Vec::with_capacity(sites.len());
            for site in sites {
                rows.push(pages::LeadEmailRow { site_id: site.id.to_string(), on: s.email().lead_email(site.id)?, site_name: site.name });
            }
            Ok((digest, rows))
        })
        .await;
    let (digest, sites) = match read {
        Ok(v) => v,
        Err(e) => return views::failed(t, Some(me), e),
    };
    let status = if error.is_some() { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::OK };
    views::render(
        status,
        pages::Account {
            t,
            me: Some(views::header_of(me)),
            csrf: &me.csrf,
            email: &me.email,
            email_on: state.config.email.enabled(),
            digest,
            sites,
            error,
            saved,
        },
    )
}

#[handler]
pub async fn account_page(req: &Request, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let Some(me) = session::current(state, req).await else { return views::sign_in_first(req) };
    let saved = req.uri().query().is_some_and(|q| q.split('&').any(|p| p == "saved=1"));
    page(state, t, &me, None, saved).await
}

#[handler]
pub async fn save_account(req: &Request, body: Body, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, fields) = match checked_post(state, req, body).await {
        Ok(ok) => ok,
        Err(page) => return page,
    };
    let Ok(on) = on_off(&fields, "digest") else { return page(state, t, &me, Some(t.acct_bad_choice), false).await };
    let user = me.user.id.clone();
    if let Err(e) = state.store.run(move |s| s.email().set_digest_wanted(&user, on)).await {
        return views::failed(t, Some(&me), e);
    }
    views::audit(state, &me.email, None, "digest_preference_changed", json!({"digest": on})).await;
    see_other("/console/account?saved=1")
}

#[handler]
pub async fn save_lead_email(req: &Request, body: Body, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, fields, site) = match views::owner_post(state, req, body, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let Ok(on) = on_off(&fields, "lead_email") else { return page(state, t, &me, Some(t.acct_bad_choice), false).await };
    let id = site.id;
    if let Err(e) = state.store.run(move |s| s.email().set_lead_email(id, on)).await {
        return views::failed(t, Some(&me), e);
    }
    views::audit(state, &me.email, Some(id), "lead_email_changed", json!({"leadEmail": on})).await;
    see_other("/console/account?saved=1")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn a_checkbox_after_its_hidden_off_wins_and_anything_else_is_refused() {
        assert_eq!(on_off(&f(&[("x", "off"), ("x", "on")]), "x"), Ok(true));
        assert_eq!(on_off(&f(&[("x", "off")]), "x"), Ok(false));
        assert_eq!(on_off(&f(&[]), "x"), Ok(false));
        assert_eq!(on_off(&f(&[("x", "yes")]), "x"), Err(()));
    }
}
