//! The settings page's other sections (#25): the site (name, default language, currency, answer mode,
//! and for admins the tier), the webhook (URL, events, "send a test event"), the credentials (a new
//! signing secret, a new bearer token) and disable or delete. The values are those `sitebot site update`
//! sets, parsed by the same domain types; the test event is `webhooks test`'s (`outbox::test_event`).
//!
//! Owners and admins only; the tier and deletion are for admins only (an owner's POST is 403). Every
//! change is a form post with the session's CSRF token and is audited. A wrong value is `422` with the
//! page, the form as sent and what is wrong; nothing is saved then. A new secret or token, and a test
//! event's answer, are shown once in the answer to the POST (`no-store`, like every console page), never
//! stored in a form or a URL.
//!
//! - `POST /console/sites/{site}/settings/site`: name, language, currency, answers, tier (admins).
//! - `POST .../settings/webhook`: URL (empty removes it) and events; `.../settings/webhook/test`.
//! - `POST .../settings/rotate-secret`, `.../settings/rotate-token`.
//! - `POST .../settings/disable` (the site's id or name typed again), `.../settings/enable`,
//!   `.../settings/delete` (admins; typed confirmation; then to the sites list).

use std::str::FromStr;
use std::sync::Arc;

use poem::http::StatusCode;
use poem::web::{Data, Path};
use poem::{Body, Request, Response, handler};
use serde_json::json;

use super::pages::{self, GeneralForm, Notice, SiteSections, WebhookForm};
use super::session::Me;
use super::texts::{self, Texts};
use super::views::{self, field, see_other};
use crate::app::AppState;
use crate::domain::{AnswerMode, Currency, EventType, Lang, NetworkPolicy, Tier, WebhookUrl};
use crate::store::sites::MAX_HANDOFF_WAIT_SECS;
use crate::store::{Site, SiteUpdate, StoreError};

/// How much of a test receiver's answer the page shows.
const EXCERPT_CHARS: usize = 300;

/// The sections as the site is now.
pub(super) fn sections(_state: &AppState, me: &Me, site: &Site) -> SiteSections {
    SiteSections {
        general: GeneralForm {
            name: site.name.clone(),
            lang: site.lang.to_string(),
            currency: site.currency.to_string(),
            answers: site.answers.as_str().to_owned(),
            tier: site.tier.as_str().to_owned(),
        },
        general_error: None,
        webhook: WebhookForm {
            url: site.webhook_url.as_ref().map(|u| u.as_str().to_owned()).unwrap_or_default(),
            events: EventType::SUBSCRIBABLE.iter().map(|e| (e.as_str(), site.wants_event(*e))).collect(),
        },
        webhook_error: None,
        webhook_disabled: site.webhook_disabled_at.is_some(),
        credentials_error: None,
        danger_error: None,
        notice: None,
        saved: String::new(),
        is_admin: me.user.is_admin,
        tier_has_token: site.tier.has_bearer_token(),
        enabled: site.enabled,
        currencies: Currency::all().collect(),
        tiers: [Tier::Starter.as_str(), Tier::Pro.as_str(), Tier::Enterprise.as_str()],
    }
}

/// The whole settings page with these sections.
fn show(t: &'static Texts, me: &Me, site: Site, sections: SiteSections) -> Response {
    let form = form_of(&site);
    page(t, me, site, form, None, false, sections)
}

/// The site form as an update (and whether it changes the tier), or the first thing wrong with it.
fn parse_general(t: &Texts, fields: &[(String, String)], site: &Site) -> Result<(SiteUpdate, bool), String> {
    let why = |label: &str, reason: String| format!("{label}: {reason}");
    let name = field(fields, "name").trim();
    if name.is_empty() || name.chars().count() > 200 || name.chars().any(char::is_control) {
        return Err(why(t.site_name, "1 – 200".into()));
    }
    let lang = Lang::parse(field(fields, "lang")).map_err(|e| why(t.site_lang, e.0))?;
    let currency = Currency::parse(field(fields, "currency")).map_err(|e| why(t.site_currency, e.0))?;
    let answers = AnswerMode::parse(field(fields, "answers").trim()).map_err(|e| why(t.site_answers, e.0))?;
    let tier = match field(fields, "tier").trim() {
        "" => None,
        raw => Some(Tier::from_str(raw).map_err(|e| why(t.site_tier, e.to_string()))?),
    };
    let tier = tier.filter(|tier| *tier != site.tier);
    let up = SiteUpdate { name: Some(name.to_owned()), lang: Some(lang), currency: Some(currency), answers: Some(answers), tier, ..Default::default() };
    Ok((up, tier.is_some()))
}

#[handler]
pub async fn save_site(req: &Request, body: Body, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, fields, site) = match views::owner_post(state, req, body, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let typed = GeneralForm {
        name: field(&fields, "name").to_owned(),
        lang: field(&fields, "lang").to_owned(),
        currency: field(&fields, "currency").to_owned(),
        answers: field(&fields, "answers").to_owned(),
        tier: if field(&fields, "tier").is_empty() { site.tier.as_str().to_owned() } else { field(&fields, "tier").to_owned() },
    };
    let (up, tier_changes) = match parse_general(t, &fields, &site) {
        Ok(v) => v,
        Err(error) => {
            let mut s = sections(state, &me, &site);
            (s.general, s.general_error) = (typed, Some(error));
            return show(t, &me, site, s);
        }
    };
    // Tiers are the operator's business (budget, bearer token): admins only.
    if tier_changes && !me.user.is_admin {
        return views::role_refused(t, &me);
    }
    let id = site.id;
    let (site, creds) = match state.store.run(move |s| s.site(id).update(up)).await {
        Ok(v) => v,
        Err(StoreError::Invalid(e)) => {
            let mut s = sections(state, &me, &site);
            (s.general, s.general_error) = (typed, Some(e));
            return show(t, &me, site, s);
        }
        Err(e) => return views::failed(t, Some(&me), e),
    };
    let detail =
        json!({"name": site.name, "lang": site.lang.as_str(), "currency": site.currency.code(), "answers": site.answers.as_str(), "tier": site.tier.as_str()});
    views::audit(state, &me.email, Some(id), "site_settings_changed", detail).await;
    // A move up from starter makes the site's first bearer token: shown now, once.
    if let Some(token) = creds.and_then(|c| c.bearer_token) {
        let mut s = sections(state, &me, &site);
        s.notice = Some(Notice { title: t.new_token_shown, secret: Some(token), facts: vec![] });
        s.saved = "site".into();
        return show(t, &me, site, s);
    }
    see_other(&format!("/console/sites/{id}/settings?saved=site#site"))
}

#[handler]
pub async fn save_webhook(req: &Request, body: Body, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, fields, site) = match views::owner_post(state, req, body, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let url = field(&fields, "url").trim().to_owned();
    let chosen: Vec<&str> = fields.iter().filter(|(k, _)| k == "events").map(|(_, v)| v.as_str()).collect();
    let parsed = (|| {
        let policy = NetworkPolicy::webhooks(&state.config.webhooks);
        let webhook = if url.is_empty() { None } else { Some(WebhookUrl::parse(&url, &policy).map_err(|e| format!("{}: {}", t.webhook_url, e.0))?) };
        let events = chosen.iter().map(|e| EventType::subscribable(e)).collect::<Result<Vec<_>, _>>().map_err(|e| format!("{}: {}", t.webhook_events, e.0))?;
        Ok::<_, String>((webhook, events))
    })();
    let (webhook, events) = match parsed {
        Ok(v) => v,
        Err(error) => {
            let mut s = sections(state, &me, &site);
            s.webhook = WebhookForm { url, events: EventType::SUBSCRIBABLE.iter().map(|e| (e.as_str(), chosen.contains(&e.as_str()))).collect() };
            s.webhook_error = Some(error);
            return show(t, &me, site, s);
        }
    };
    let id = site.id;
    let up = SiteUpdate { webhook_url: Some(webhook), webhook_events: Some(events), ..Default::default() };
    let site = match state.store.run(move |s| s.site(id).update(up)).await {
        Ok((site, _)) => site,
        Err(e) => return views::failed(t, Some(&me), e),
    };
    // Events that waited for a URL (or for a disabled endpoint) may be due now.
    state.outbox_wake.notify_one();
    let detail = json!({"url": site.webhook_url.as_ref().map(|u| u.as_str()), "events": site.webhook_events.iter().map(|e| e.as_str()).collect::<Vec<_>>()});
    views::audit(state, &me.email, Some(id), "webhook_changed", detail).await;
    see_other(&format!("/console/sites/{id}/settings?saved=webhook#webhook"))
}

/// The start of a receiver's answer as the page shows it: at most `EXCERPT_CHARS` characters, control
/// characters as spaces (the template escapes the rest).
fn excerpt(body: &str) -> String {
    let mut out: String = body.chars().take(EXCERPT_CHARS).map(|c| if c.is_control() { ' ' } else { c }).collect();
    if body.chars().count() > EXCERPT_CHARS {
        out.push('…');
    }
    out
}

#[handler]
pub async fn test_webhook(req: &Request, body: Body, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, _, site) = match views::owner_post(state, req, body, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let Some(url) = site.webhook_url.clone() else {
        let mut s = sections(state, &me, &site);
        s.webhook_error = Some(t.no_webhook_yet.to_owned());
        return show(t, &me, site, s);
    };
    let id = site.id;
    let secrets = match state.store.run(move |s| s.site(id).signing_secrets()).await {
        Ok(v) => v,
        Err(e) => return views::failed(t, Some(&me), e),
    };
    let sender = match crate::outbox::deliver::Sender::new(&state.config.webhooks) {
        Ok(s) => s,
        Err(e) => return views::failed(t, Some(&me), e),
    };
    let tested = match crate::outbox::test_event::send(&sender, id, &url, &secrets, "the console").await {
        Ok(v) => v,
        Err(e) => return views::failed(t, Some(&me), e),
    };
    let sent = &tested.sent;
    let status = sent.status.map_or_else(|| t.test_no_answer.to_owned(), |s| format!("{s} ({} ms)", sent.duration.as_millis()));
    let mut facts = vec![(t.webhook_url, url.as_str().to_owned()), (t.test_id, tested.id.clone()), (t.test_status, status)];
    // A receiver on a private network (allowed by `webhooks.allow_private_networks`) may be any internal
    // service: a site owner sees that it answered and how fast, never what it said.
    if sent.private_peer {
        facts.push((t.test_body, t.test_body_private.to_owned()));
    } else if !sent.body.is_empty() {
        facts.push((t.test_body, excerpt(&sent.body)));
    }
    if let Some(e) = &sent.error {
        facts.push((t.test_problem, excerpt(e)));
    }
    views::audit(state, &me.email, Some(id), "webhook_tested", json!({"event": tested.id, "status": sent.status})).await;
    let mut s = sections(state, &me, &site);
    s.notice = Some(Notice { title: t.test_result, secret: None, facts });
    show(t, &me, site, s)
}

#[handler]
pub async fn rotate_secret(req: &Request, body: Body, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, _, site) = match views::owner_post(state, req, body, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let id = site.id;
    let secret = match state.store.run(move |s| s.site(id).rotate_secret()).await {
        Ok(v) => v,
        Err(e) => return views::failed(t, Some(&me), e),
    };
    views::audit(state, &me.email, Some(id), "webhook_secret_rotated", json!({})).await;
    let mut s = sections(state, &me, &site);
    s.notice = Some(Notice { title: t.new_secret_shown, secret: Some(secret), facts: vec![] });
    show(t, &me, site, s)
}

#[handler]
pub async fn rotate_token(req: &Request, body: Body, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, _, site) = match views::owner_post(state, req, body, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let id = site.id;
    let token = match state.store.run(move |s| s.site(id).rotate_token()).await {
        Ok(v) => v,
        Err(StoreError::Conflict(_)) => {
            let mut s = sections(state, &me, &site);
            s.credentials_error = Some(t.no_token_tier.to_owned());
            return show(t, &me, site, s);
        }
        Err(e) => return views::failed(t, Some(&me), e),
    };
    views::audit(state, &me.email, Some(id), "bearer_token_rotated", json!({})).await;
    let mut s = sections(state, &me, &site);
    s.notice = Some(Notice { title: t.new_token_shown, secret: Some(token), facts: vec![] });
    show(t, &me, site, s)
}

/// Whether `typed` names the site: its id or its name, typed again (surrounding spaces aside).
fn confirms(typed: &str, site: &Site) -> bool {
    let typed = typed.trim();
    !typed.is_empty() && (typed == site.id.to_string() || typed == site.name.trim())
}

fn mismatch(state: &AppState, t: &'static Texts, me: &Me, site: Site) -> Response {
    let mut s = sections(state, me, &site);
    s.danger_error = Some(t.confirm_mismatch.to_owned());
    show(t, me, site, s)
}

async fn set_enabled(req: &Request, body: Body, raw: &str, state: &AppState, enabled: bool) -> Response {
    let t = texts::for_request(req);
    let (me, fields, site) = match views::owner_post(state, req, body, raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    if !enabled && !confirms(field(&fields, "confirm"), &site) {
        return mismatch(state, t, &me, site);
    }
    let id = site.id;
    if let Err(e) = state.store.run(move |s| s.site(id).set_enabled(enabled)).await {
        return views::failed(t, Some(&me), e);
    }
    let action = if enabled { "site_enabled" } else { "site_disabled" };
    views::audit(state, &me.email, Some(id), action, json!({})).await;
    see_other(&format!("/console/sites/{id}/settings?saved=danger#danger"))
}

#[handler]
pub async fn disable(req: &Request, body: Body, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    set_enabled(req, body, &raw, state, false).await
}

#[handler]
pub async fn enable(req: &Request, body: Body, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    set_enabled(req, body, &raw, state, true).await
}

/// Deletes the site as `sitebot site delete --yes` does: every row of it in one transaction, then its
/// vector index from memory and disk. Admins only.
#[handler]
pub async fn delete(req: &Request, body: Body, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, fields, site) = match views::owner_post(state, req, body, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    if !me.user.is_admin {
        return views::role_refused(t, &me);
    }
    if !confirms(field(&fields, "confirm"), &site) {
        return mismatch(state, t, &me, site);
    }
    let id = site.id;
    let removed = match state.store.run(move |s| s.erasure().site(id)).await {
        Ok(r) => r,
        Err(e) => return views::failed(t, Some(&me), e),
    };
    let (engine, dir) = (state.knowledge.clone(), state.data_dir.join(crate::knowledge::INDEX_DIR));
    let files = tokio::task::spawn_blocking(move || {
        engine.forget_site(&id);
        crate::knowledge::search::vector::remove_files(&dir, &id)
    })
    .await;
    if !matches!(files, Ok(Ok(_))) {
        tracing::error!(site = %id, "cannot remove a deleted site's index files");
    }
    // The site's own audit entries went with it; this one is kept, under no site.
    views::audit(state, &me.email, None, "site_deleted", json!({"site": id, "name": site.name, "rows": removed.total_rows()})).await;
    see_other("/console/sites")
}

/// The form's values, as shown (the site's, or what was sent with an error).
pub(super) fn form_of(site: &Site) -> pages::HandoffForm {
    let h = &site.handoff;
    pages::HandoffForm {
        enabled: h.enabled,
        hours: h.hours.weekly.to_string(),
        closed: h.hours.closed.to_string(),
        timezone: h.hours.zone.to_string(),
        wait: h.wait_secs.to_string(),
    }
}

/// The settings page: the site's other sections (`site_settings`) and live hand-off's form; `422` when
/// any section tells what is wrong with what was sent.
pub(super) fn page(
    t: &'static Texts,
    me: &Me,
    site: Site,
    form: pages::HandoffForm,
    error: Option<String>,
    saved: bool,
    sections: pages::SiteSections,
) -> Response {
    let wrong = error.is_some()
        || sections.general_error.is_some()
        || sections.webhook_error.is_some()
        || sections.credentials_error.is_some()
        || sections.danger_error.is_some();
    let status = if wrong { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::OK };
    let nav = views::site_nav(site, crate::domain::SiteRole::Owner, "settings");
    views::render(
        status,
        pages::Settings { t, me: Some(views::header_of(me)), nav, csrf: &me.csrf, form, error, saved, max_wait: MAX_HANDOFF_WAIT_SECS, site: sections },
    )
}
