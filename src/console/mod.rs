//! The console: web pages, in the binary, for the people who run each site, under `/console/` on the
//! server's own TLS listener. Server-rendered HTML (askama templates in `assets/console/templates/`,
//! compiled in), one stylesheet, no inline script or style, no CDN.
//!
//! - [`auth`]: Argon2id passwords, computed a few at once behind a bounded line, and sign-in throttling per
//!   account and per client (IPv4 address or IPv6 /64).
//! - [`session`]: server-side sessions behind a `__Host-` cookie, CSRF tokens, same-origin checks, and
//!   the console's security headers.
//! - [`texts`]: the console's words in English and German.
//! - [`pages`]: one template per page.
//! - [`views`]: the handlers: authorise, ask the store, render.
//! - [`inbox`]: live hand-off for the staff: the inbox's event stream (which makes its owners and
//!   editors "online") and take over, reply, hand back, close.
//! - [`pace`]: how fast one session's pages are served, so a looping script cannot slow the API.
//! - [`settings`]: a site's settings (live hand-off: on, hours, closed dates, time zone, wait), owners only.
//! - [`knowledge`], [`knowledge_sources`], [`knowledge_answers`]: a site's documents (upload, delete),
//!   crawl sources (add, re-sync now with live progress, remove) and curated answers; editors and up.
//! - [`site_settings`], [`members`] (#25): the site's other settings (name, language, currency, answers,
//!   tier, webhook and its test event, new secret and token, disable, delete) and its users.
//! - [`widget_editor`]: the widget's look, greetings, suggested questions and origins as a draft, its
//!   live preview, and publishing it (owners only).
//! - [`account`]: the user's own page: the weekly digest, and lead e-mails of the sites they manage (#25).
//! - `lane`: the console's reads, on their own threads at the lowest CPU priority, so its SQL uses the
//!   CPU the public API leaves over.
//! - [`oidc`]: single sign-on through an OpenID Connect provider (`[console.oidc]`), and local passwords
//!   switched off (`[console] local_passwords = false`).
//! - [`routing`]: the site a request is for (its path, or `?site=` on the sign-in's pages), kept on the
//!   sign-in's links and redirects for a balancer in front of several nodes (#27 scale-out).
//!
//! Users come from `sitebot user add`, which prints a one-time setup link; there is never a default
//! password. Every account event and every change made here is in the audit log (`sitebot audit`).

pub mod auth;
pub mod charts;
pub mod inbox;
mod lane;
pub mod pace;
pub mod pages;
pub mod session;
pub mod settings;
pub mod texts;
pub mod views;
// #25 knowledge
pub mod knowledge;
pub mod knowledge_answers;
pub mod knowledge_sources;

// #25 settings
pub mod members;
pub mod site_settings;

// #25 widget
pub mod widget_editor;
// #25 email
pub mod account;
// #25 oidc
pub mod oidc;
// #27 scale-out
pub mod routing;

use std::sync::Arc;

use poem::http::{StatusCode, header};
use poem::{EndpointExt, Request, Response, Route, get, handler, post};

use crate::app::AppState;

/// The stylesheet, compiled in.
const CSS: &str = include_str!("../../assets/console/console.css");

/// The inbox's script (live hand-off), compiled in.
const INBOX_JS: &str = include_str!("../../assets/console/inbox.js");

// #25 knowledge: the upload form's progress and the crawl sources' live progress, compiled in.
const UPLOAD_JS: &str = include_str!("../../assets/console/upload.js");
const KNOWLEDGE_JS: &str = include_str!("../../assets/console/knowledge.js");

#[handler]
fn upload_script(req: &Request) -> Response {
    asset(req, UPLOAD_JS, "text/javascript; charset=utf-8")
}

#[handler]
fn knowledge_script(req: &Request) -> Response {
    asset(req, KNOWLEDGE_JS, "text/javascript; charset=utf-8")
}

// #25 widget
/// The widget editor's script (the embed code's copy button), compiled in.
const WIDGET_EDITOR_JS: &str = include_str!("../../assets/console/widget_editor.js");

#[handler]
fn widget_editor_script(req: &Request) -> Response {
    asset(req, WIDGET_EDITOR_JS, "text/javascript; charset=utf-8")
}

/// An asset's `ETag`: a hash of its bytes, so a new build's asset is fetched again.
fn etag_of(body: &str) -> String {
    use sha2::Digest;
    format!("\"{}\"", &hex::encode(sha2::Sha256::digest(body.as_bytes()))[..16])
}

#[handler]
fn stylesheet(req: &Request) -> Response {
    asset(req, CSS, "text/css; charset=utf-8")
}

#[handler]
fn inbox_script(req: &Request) -> Response {
    asset(req, INBOX_JS, "text/javascript; charset=utf-8")
}

/// A compiled-in asset with its `ETag` (a hash of its bytes, so a new build's is fetched again).
fn asset(req: &Request, body: &'static str, content_type: &'static str) -> Response {
    let etag = etag_of(body);
    let fresh = req.headers().get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()).is_some_and(|v| v.split(',').any(|t| t.trim() == etag));
    let mut resp =
        if fresh { Response::builder().status(StatusCode::NOT_MODIFIED).finish() } else { Response::builder().content_type(content_type).body(body) };
    resp.headers_mut().insert(header::ETAG, etag.parse().expect("a valid ETag"));
    resp.headers_mut().insert(header::CACHE_CONTROL, "public, max-age=3600".parse().expect("a valid header"));
    session::secure(&mut resp, true);
    resp
}

/// Waits for this request's turn in its session's pace (`pace`); `Some` is the 429 page to send instead.
/// The stylesheet and scripts are not paced: a browser asks for them beside a page, and they are cached.
async fn paced(pacer: &pace::Pacer, req: &Request) -> Option<Response> {
    if req.uri().path().contains("/assets/") {
        return None;
    }
    let key = session::cookie_value(req).map(|v| crate::secrets::token_hash(&v))?;
    match pacer.turn(key) {
        pace::Turn::After(wait) => {
            if !wait.is_zero() {
                tokio::time::sleep(wait).await;
            }
            None
        }
        pace::Turn::Refused(retry) => {
            let t = texts::for_request(req);
            let mut resp = views::message(t, None, StatusCode::TOO_MANY_REQUESTS, t.too_fast_title, t.too_fast);
            let secs = retry.as_secs() + u64::from(retry.subsec_nanos() > 0);
            resp.headers_mut().insert(header::RETRY_AFTER, secs.max(1).into());
            session::secure(&mut resp, false);
            Some(resp)
        }
    }
}

/// The console's routes, to be nested under `/console` behind the edge. Any other path under it is the
/// console's own 404 page, never the API's problem+json.
pub fn routes(state: Arc<AppState>) -> impl poem::Endpoint<Output = Response> {
    let throttle = Arc::new(auth::Throttle::new(state.limiter.clock()));
    let hashing = Arc::new(auth::Hashing::from_config(&state.config.console));
    let pacer = Arc::new(pace::Pacer::new(state.config.console.pages_per_minute, state.config.console.page_burst));
    // The home, `/`, is answered by the fallback (`views::fallback` says why).
    Route::new()
        .at("/login", get(views::login_form).post(oidc::passwords_only(views::login)))
        .at("/logout", post(views::logout))
        .at("/setup/:token", oidc::passwords_only(get(views::setup_form).post(views::setup)))
        .at("/sites", get(views::sites))
        .at("/sites/:site", get(views::site_queue))
        .at("/sites/:site/dashboard", get(views::dashboard))
        .at("/sites/:site/conversations", get(views::conversations))
        .at("/sites/:site/conversations.csv", get(views::conversations_csv))
        .at("/sites/:site/conversations.jsonl", get(views::conversations_jsonl))
        .at("/sites/:site/conversations/:conversation", get(views::conversation))
        .at("/sites/:site/leads", get(views::leads_list))
        .at("/sites/:site/audit", get(views::audit_log))
        .at("/sites/:site/leads.csv", get(views::leads_csv))
        .at("/sites/:site/leads.jsonl", get(views::leads_jsonl))
        .at("/sites/:site/leads/:lead", get(views::lead_view))
        .at("/sites/:site/leads/:lead/replay", post(views::replay_lead))
        .at("/sites/:site/inbox", get(inbox::inbox_page))
        .at("/sites/:site/inbox/events", get(inbox::inbox_events))
        .at("/sites/:site/inbox/:conversation/take", post(inbox::take))
        .at("/sites/:site/inbox/:conversation/reply", post(inbox::reply))
        .at("/sites/:site/inbox/:conversation/hand-back", post(inbox::hand_back))
        .at("/sites/:site/inbox/:conversation/close", post(inbox::close))
        .at("/sites/:site/settings", get(settings::settings_page).post(settings::save_settings))
        .at("/sites/:site/review/:group", get(views::group_view))
        .at("/sites/:site/review/:group/answer", post(views::answer_group))
        .at("/sites/:site/review/:group/reviewed", post(views::review_group))
        // #25 settings
        .at("/sites/:site/settings/site", post(site_settings::save_site))
        .at("/sites/:site/settings/webhook", post(site_settings::save_webhook))
        .at("/sites/:site/settings/webhook/test", post(site_settings::test_webhook))
        .at("/sites/:site/settings/rotate-secret", post(site_settings::rotate_secret))
        .at("/sites/:site/settings/rotate-token", post(site_settings::rotate_token))
        .at("/sites/:site/settings/disable", post(site_settings::disable))
        .at("/sites/:site/settings/enable", post(site_settings::enable))
        .at("/sites/:site/settings/delete", post(site_settings::delete))
        .at("/sites/:site/users", get(members::members_page))
        .at("/sites/:site/users/invite", post(members::invite_member))
        .at("/sites/:site/users/:user/role", post(members::change_role))
        .at("/sites/:site/users/:user/remove", post(members::remove_member))
        .at("/assets/console.css", get(stylesheet))
        .at("/assets/inbox.js", get(inbox_script))
        // #25 knowledge
        .at("/sites/:site/knowledge", get(knowledge::index))
        .at("/sites/:site/knowledge/upload", post(knowledge::upload))
        .at("/sites/:site/knowledge/documents/:doc/delete", get(knowledge::delete_form).post(knowledge::delete))
        .at("/sites/:site/knowledge/sources", get(knowledge_sources::index).post(knowledge_sources::add))
        .at("/sites/:site/knowledge/sources/progress", get(knowledge_sources::progress))
        .at("/sites/:site/knowledge/sources/resync", post(knowledge_sources::resync))
        .at("/sites/:site/knowledge/sources/remove", get(knowledge_sources::remove_form).post(knowledge_sources::remove))
        .at("/sites/:site/knowledge/answers", get(knowledge_answers::index).post(knowledge_answers::add))
        .at("/sites/:site/knowledge/answers/:answer", get(knowledge_answers::edit_form).post(knowledge_answers::save))
        .at("/sites/:site/knowledge/answers/:answer/delete", get(knowledge_answers::delete_form).post(knowledge_answers::delete))
        .at("/assets/upload.js", get(upload_script))
        .at("/assets/knowledge.js", get(knowledge_script))
        // #25 widget
        .at("/sites/:site/widget", get(widget_editor::editor).post(widget_editor::save))
        .at("/sites/:site/widget/publish", post(widget_editor::publish))
        .at("/sites/:site/widget/discard", post(widget_editor::discard))
        .at("/sites/:site/widget/preview", get(widget_editor::preview))
        .at("/assets/widget_editor.js", get(widget_editor_script))
        // #25 email
        .at("/account", get(account::account_page).post(account::save_account))
        .at("/sites/:site/lead-email", post(account::save_lead_email))
        // #25 oidc
        .at("/oidc/start", get(oidc::start))
        .at("/oidc/callback", get(oidc::callback))
        .at("/*rest", views::fallback)
        .data(state.clone())
        .data(throttle)
        .data(hashing)
        // #25 oidc
        .data(oidc::Sso::new(state.config.console.oidc.clone()))
        .around(move |ep, req| {
            let (state, pacer) = (state.clone(), pacer.clone());
            async move {
                if let Some(refused) = paced(&pacer, &req).await {
                    return Ok(refused);
                }
                // What the 405 page needs (language, session cookie), kept before the request moves on.
                let mut probe = Request::builder().uri(req.uri().clone()).finish();
                *probe.headers_mut() = req.headers().clone();
                match poem::Endpoint::call(&*ep, req).await {
                    Err(e) if e.is::<poem::error::MethodNotAllowedError>() => Ok(views::wrong_method(&state, &probe).await),
                    other => other.map(poem::IntoResponse::into_response),
                }
            }
        })
        .map_to_response()
}
