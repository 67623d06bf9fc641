//! The console's handlers: each authorises (the session, the user's role on the site in the URL), asks
//! the store, renders a page. They never return an error to the edge: a refusal or a failure is a page
//! of its own (HTML, with the console's headers), never problem+json.

use std::sync::Arc;
use std::time::Duration;

use askama::Template;
use poem::http::{StatusCode, header};
use poem::web::{Data, Path};
use poem::{Body, Request, Response, handler};
use serde_json::json;

use super::auth::{self, Hashing, Throttle};
use super::lane;
use super::pages::{self, Header};
use super::routing;
use super::session::{self, Me};
use super::texts::{self, Texts};
use crate::app::AppState;
use crate::domain::Timestamp;
use crate::http::edge::client_ip;
use crate::metrics::SignIn;
use crate::secrets::token_hash;
use crate::store::conversations::{ConversationRow, Turn};

/// A console form's body is read no further than this.
const MAX_FORM_BYTES: usize = 16 * 1024;

fn html(status: StatusCode, body: String) -> Response {
    let mut resp = Response::builder().status(status).content_type("text/html; charset=utf-8").body(body);
    session::secure(&mut resp, false);
    resp
}

pub(super) fn render(status: StatusCode, page: impl Template) -> Response {
    match page.render() {
        Ok(body) => html(status, body),
        Err(e) => {
            tracing::error!(error = %e, "cannot render a console page");
            html(StatusCode::INTERNAL_SERVER_ERROR, "<!doctype html><title>Error</title><p>Something went wrong.</p>".into())
        }
    }
}

pub(super) fn see_other(to: &str) -> Response {
    let mut resp = Response::builder().status(StatusCode::SEE_OTHER).header(header::LOCATION, to).finish();
    session::secure(&mut resp, false);
    resp
}

/// The answer to a request without a session: the sign-in page, naming the site of the request (#27) and,
/// for a page asked for, that page to return to once signed in (a link from an e-mail lands on its lead).
pub(super) fn sign_in_first(req: &Request) -> Response {
    see_other(&routing::sign_in_link("/console/login", routing::site_of(req), routing::return_to(req).as_deref()))
}

/// Where a signed-in user goes from the sign-in: the page the sign-in was for, else the site list.
fn after_sign_in(req: &Request) -> Response {
    see_other(routing::landing(routing::next_of(req).as_deref()))
}

pub(super) fn header_of(me: &Me) -> Header<'_> {
    Header { email: &me.email, csrf: &me.csrf }
}

/// A message page: not found, not allowed, an expired link, a failure.
pub(super) fn message(t: &Texts, me: Option<&Me>, status: StatusCode, title: &str, text: &str) -> Response {
    let (link, link_text) = if me.is_some() { ("/console/sites", t.to_sites) } else { ("/console/login", t.to_sign_in) };
    render(status, pages::Message { t, me: me.map(header_of), title, text, link, link_text })
}

pub fn not_found(t: &Texts, me: Option<&Me>) -> Response {
    message(t, me, StatusCode::NOT_FOUND, t.not_found_title, t.not_found)
}

/// A console address asked with a method it does not take (a bookmarked `/console/logout`, say): a
/// readable 405 page rather than the API's problem+json.
pub async fn wrong_method(state: &AppState, req: &Request) -> Response {
    let t = texts::for_request(req);
    let me = session::current(state, req).await;
    message(t, me.as_ref(), StatusCode::METHOD_NOT_ALLOWED, t.wrong_method_title, t.wrong_method)
}

fn forbidden(t: &Texts, me: Option<&Me>) -> Response {
    message(t, me, StatusCode::FORBIDDEN, t.forbidden_title, t.forbidden)
}

/// A request the user's role on the site does not allow (403).
pub(super) fn role_refused(t: &Texts, me: &Me) -> Response {
    message(t, Some(me), StatusCode::FORBIDDEN, t.forbidden_title, t.role_refused)
}

pub(super) fn failed(t: &Texts, me: Option<&Me>, e: impl std::fmt::Display) -> Response {
    tracing::error!(error = %e, "console request failed");
    message(t, me, StatusCode::INTERNAL_SERVER_ERROR, t.error_title, t.error)
}

/// The form fields of a POST, read within `MAX_FORM_BYTES`; `None` for anything but a form.
async fn form(req: &Request, body: Body) -> Option<Vec<(String, String)>> {
    let is_form = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(';').next().is_some_and(|m| m.trim().eq_ignore_ascii_case("application/x-www-form-urlencoded")));
    if !is_form {
        return None;
    }
    let body = body.into_bytes_limit(MAX_FORM_BYTES).await.ok()?;
    Some(url::form_urlencoded::parse(&body).into_owned().collect())
}

pub(super) fn field<'a>(fields: &'a [(String, String)], name: &str) -> &'a str {
    fields.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str()).unwrap_or("")
}

/// A state change by a signed-in user: same origin, a form, the session's CSRF token. `Err` is the page
/// to send instead (sign in again, or 403).
pub async fn checked_post(state: &AppState, req: &Request, body: Body) -> Result<(Me, Vec<(String, String)>), Response> {
    let t = texts::for_request(req);
    let Some(me) = session::current(state, req).await else { return Err(sign_in_first(req)) };
    if !session::same_origin(req) {
        return Err(forbidden(t, Some(&me)));
    }
    let Some(fields) = form(req, body).await else { return Err(forbidden(t, Some(&me))) };
    if !me.csrf_matches(field(&fields, "csrf")) {
        return Err(forbidden(t, Some(&me)));
    }
    Ok((me, fields))
}

pub(super) async fn audit(state: &AppState, actor: &str, site: Option<crate::domain::SiteId>, action: &'static str, detail: serde_json::Value) {
    let actor = actor.to_owned();
    if let Err(e) = state.store.run(move |s| s.audit().record(&actor, site, action, &detail)).await {
        tracing::error!(error = %e, action, "cannot write the audit log");
    }
}

/// The console's home (`/console/`): the sites, or the sign-in page. Reached through [`fallback`].
async fn home(req: &Request, state: &AppState) -> Response {
    match session::current(state, req).await {
        Some(_) => see_other("/console/sites"),
        None => sign_in_first(req),
    }
}

#[handler]
pub async fn login_form(req: &Request, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    if session::current(state, req).await.is_some() {
        return after_sign_in(req);
    }
    let any_user = state.store.run(|s| s.users().any()).await.unwrap_or(true);
    let (sso, passwords) = (state.config.console.oidc.is_some(), state.config.console.local_passwords);
    render(
        StatusCode::OK,
        pages::Login { t, me: None, error: None, email: "", any_user, sso, passwords, site: routing::site_of(req), next: routing::next_of(req) },
    )
}

/// `resp` with `Retry-After`: `wait` in whole seconds, rounded up, at least one.
fn retry_after(mut resp: Response, wait: Duration) -> Response {
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    resp.headers_mut().insert(header::RETRY_AFTER, secs.max(1).into());
    resp
}

#[handler]
pub async fn login(
    req: &Request,
    body: Body,
    Data(state): Data<&Arc<AppState>>,
    Data(throttle): Data<&Arc<Throttle>>,
    Data(hashing): Data<&Arc<Hashing>>,
) -> Response {
    let t = texts::for_request(req);
    if !session::same_origin(req) {
        return forbidden(t, None);
    }
    let Some(fields) = form(req, body).await else { return forbidden(t, None) };
    let (email, password) = (field(&fields, "email").trim().to_owned(), field(&fields, "password").to_owned());
    let address = client_ip(req);
    let sso = state.config.console.oidc.is_some();
    let page = |error: &'static str, status: StatusCode| {
        render(
            status,
            pages::Login {
                t,
                me: None,
                error: Some(error),
                email: &email,
                any_user: true,
                sso,
                passwords: true,
                site: routing::site_of(req),
                next: routing::next_of(req),
            },
        )
    };
    // Counted as a failure before the password is checked, in the same step that looks at the counts:
    // of any number of attempts sent at once, only those the counts allow are checked.
    let attempt = match throttle.reserve(&email, address) {
        Ok(attempt) => attempt,
        Err(wait) => {
            state.metrics.sign_in(SignIn::Throttled);
            tracing::warn!(%address, "console sign-in throttled");
            return retry_after(page(t.throttled, StatusCode::TOO_MANY_REQUESTS), wait);
        }
    };
    let Ok(turn) = hashing.admit() else {
        throttle.not_checked(attempt);
        state.metrics.sign_in(SignIn::Busy);
        tracing::warn!(%address, "console sign-in refused: too many password checks at once");
        return retry_after(page(t.hashing_busy, StatusCode::SERVICE_UNAVAILABLE), Duration::from_secs(1));
    };
    let lookup = email.clone();
    let (user, hash) = match state.store.run(move |s| s.users().password_hash(&lookup)).await {
        Ok(Some((user, hash))) => (Some(user), hash),
        Ok(None) => (None, None),
        Err(e) => return failed(t, None, e),
    };
    // The same work whether or not the account exists or has a password.
    let ok = match turn.run(move || auth::verify_password(&password, hash.as_deref())).await {
        Ok(ok) => ok,
        Err(e) => return failed(t, None, e),
    };
    let Some(user) = user.filter(|_| ok) else {
        // The attempt stays counted.
        state.metrics.sign_in(SignIn::Failed);
        tracing::warn!(%address, "console sign-in failed");
        audit(state, &email.chars().take(254).collect::<String>(), None, "login_failed", json!({"address": address.to_string()})).await;
        return page(t.wrong_credentials, StatusCode::UNAUTHORIZED);
    };
    throttle.succeeded(attempt);
    // A new session at every sign-in; an old cookie the browser still holds is replaced.
    let cookie = match session::start(state, &user).await {
        Ok(c) => c,
        Err(e) => return failed(t, None, e),
    };
    state.metrics.sign_in(SignIn::Succeeded);
    audit(state, &user.email, None, "login", json!({"address": address.to_string()})).await;
    let mut resp = after_sign_in(req);
    resp.headers_mut().insert(header::SET_COOKIE, cookie.parse().expect("a valid cookie"));
    resp
}

#[handler]
pub async fn logout(req: &Request, body: Body, Data(state): Data<&Arc<AppState>>) -> Response {
    let (me, _) = match checked_post(state, req, body).await {
        Ok(ok) => ok,
        Err(page) => return page,
    };
    let hash = *me.cookie_hash();
    if let Err(e) = state.store.run(move |s| s.users().end_session(&hash)).await {
        return failed(texts::for_request(req), Some(&me), e);
    }
    audit(state, &me.email, None, "logout", json!({})).await;
    // The user's inbox streams look at their session when rung: signed out, they end, and with them the
    // user's presence (live hand-off).
    for site in state.live.sites_of(&me.user.id) {
        state.live.ring(&crate::live::inbox_key(&site));
    }
    let mut resp = see_other("/console/login");
    resp.headers_mut().insert(header::SET_COOKIE, session::cleared().parse().expect("a valid cookie"));
    resp
}

#[handler]
pub async fn setup_form(req: &Request, Path(token): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let hash = token_hash(&token);
    match state.store.run(move |s| s.users().link_user(&hash, Timestamp::now())).await {
        Ok(Some(user)) => render(StatusCode::OK, pages::Setup { t, me: None, error: None, email: &user.email, token: &token, site: routing::site_of(req) }),
        Ok(None) => message(t, None, StatusCode::NOT_FOUND, t.link_invalid_title, t.link_invalid),
        Err(e) => failed(t, None, e),
    }
}

#[handler]
pub async fn setup(req: &Request, body: Body, Path(token): Path<String>, Data(state): Data<&Arc<AppState>>, Data(hashing): Data<&Arc<Hashing>>) -> Response {
    let t = texts::for_request(req);
    if !session::same_origin(req) {
        return forbidden(t, None);
    }
    let Some(fields) = form(req, body).await else { return forbidden(t, None) };
    let hash = token_hash(&token);
    let user = match state.store.run(move |s| s.users().link_user(&hash, Timestamp::now())).await {
        Ok(Some(u)) => u,
        Ok(None) => return message(t, None, StatusCode::NOT_FOUND, t.link_invalid_title, t.link_invalid),
        Err(e) => return failed(t, None, e),
    };
    if let Err(why) = auth::check_new_password(field(&fields, "password"), field(&fields, "repeat")) {
        let error = match why {
            "too_short" => t.too_short,
            "too_long" => t.too_long,
            _ => t.mismatch,
        };
        let site = routing::site_of(req);
        return render(StatusCode::UNPROCESSABLE_ENTITY, pages::Setup { t, me: None, error: Some(error), email: &user.email, token: &token, site });
    }
    let phc = match hashing.hash(field(&fields, "password").to_owned()).await {
        Ok(h) => h,
        Err(auth::HashError::Busy) => {
            let site = routing::site_of(req);
            let page = pages::Setup { t, me: None, error: Some(t.hashing_busy), email: &user.email, token: &token, site };
            return retry_after(render(StatusCode::SERVICE_UNAVAILABLE, page), Duration::from_secs(1));
        }
        Err(e) => return failed(t, None, e),
    };
    let user = match state.store.run(move |s| s.users().use_link(&hash, Timestamp::now(), &phc)).await {
        Ok(u) => u,
        Err(crate::store::StoreError::NotFound) => return message(t, None, StatusCode::NOT_FOUND, t.link_invalid_title, t.link_invalid),
        Err(e) => return failed(t, None, e),
    };
    audit(state, &user.email, None, "password_set", json!({"via": "setup_link"})).await;
    let cookie = match session::start(state, &user).await {
        Ok(c) => c,
        Err(e) => return failed(t, None, e),
    };
    audit(state, &user.email, None, "login", json!({"address": client_ip(req).to_string()})).await;
    let mut resp = see_other("/console/sites");
    resp.headers_mut().insert(header::SET_COOKIE, cookie.parse().expect("a valid cookie"));
    resp
}

#[handler]
pub async fn sites(req: &Request, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let Some(me) = session::current(state, req).await else { return sign_in_first(req) };
    let visible = me.clone();
    let now = Timestamp::now();
    let since_30 = crate::store::days::day_of(Timestamp::from_millis(now.as_millis() - 29 * 86_400_000));
    let since_7 = crate::store::days::day_of(Timestamp::from_millis(now.as_millis() - 6 * 86_400_000));
    let rows = lane::read(&state.store, move |s| {
        let mut rows = Vec::new();
        for site in s.sites().list()? {
            let Some(role) = visible.role_on(&site.id) else { continue };
            let days = s.site(site.id).days().since(since_30)?;
            let sum = |f: fn(&crate::store::days::Day) -> u64, from: Timestamp| days.iter().filter(|d| d.day >= from).map(f).sum::<u64>();
            let (questions_30, answered_30) = (sum(|d| d.questions, since_30), sum(|d| d.answered, since_30));
            let spark = (0..30)
                .map(|i| {
                    let day = Timestamp::from_millis(since_30.as_millis() + i * 86_400_000);
                    vec![days.iter().find(|d| d.day == day).map_or(0, |d| d.questions)]
                })
                .collect::<Vec<_>>();
            let role = if visible.user.is_admin { "admin" } else { role.as_str() };
            rows.push(pages::SiteRow {
                id: site.id.to_string(),
                spark: super::charts::stacked(format!("{} · {questions_30}", site.name), &[], &spark),
                name: site.name,
                role,
                questions_7: sum(|d| d.questions, since_7),
                questions_30,
                resolution_30: share(answered_30, questions_30),
                leads_30: sum(|d| d.leads, since_30),
                thumbs_up_30: sum(|d| d.thumbs_up, since_30),
                thumbs_down_30: sum(|d| d.thumbs_down, since_30),
                enabled: site.enabled,
            });
        }
        Ok(rows)
    })
    .await;
    match rows {
        Ok(sites) => render(StatusCode::OK, pages::Sites { t, me: Some(header_of(&me)), sites }),
        Err(e) => failed(t, Some(&me), e),
    }
}

/// Anything else under `/console/`: the console's own 404 page. The home comes here too: poem's
/// catch-all `/*rest` matches an empty rest before a route `/` would (its radix tree prefers the
/// catch-all child at the end of a path), so `/console` and `/console/` arrive as `/`.
#[handler]
pub async fn fallback(req: &Request, Data(state): Data<&Arc<AppState>>) -> Response {
    if req.uri().path() == "/" {
        return home(req, state).await;
    }
    let t = texts::for_request(req);
    let me = session::current(state, req).await;
    not_found(t, me.as_ref())
}

/// The crumbs, title and tabs of one of the site's tabbed pages.
pub(super) fn site_nav(site: crate::store::Site, role: crate::domain::SiteRole, tab: &'static str) -> pages::SiteNav {
    pages::SiteNav { site_id: site.id.to_string(), site_name: site.name, tab, manage: role.may_manage(), export: role.may_export() }
}

/// The site named in a URL, when the signed-in user holds a role on it: the site and the role. `Err` is
/// the page to send: sign in, or the same 404 as for a site that does not exist.
pub(super) async fn site_for(state: &AppState, req: &Request, raw: &str) -> Result<(Me, crate::store::Site, crate::domain::SiteRole), Response> {
    let Some(me) = session::current(state, req).await else { return Err(sign_in_first(req)) };
    site_of(state, req, me, raw).await
}

/// An editor's page about one thing of a site (a document, a curated answer, a crawl source): the site and
/// role as [`site_for`] finds them, refused unless the role may edit, and the thing read from the site's
/// store by `read` (given the site's id). `Err` is the page to send; a thing that is not there is the 404.
pub(super) async fn editor_item<T, F>(
    state: &AppState,
    req: &Request,
    raw: &str,
    read: F,
) -> Result<(Me, crate::store::Site, crate::domain::SiteRole, T), Response>
where
    T: Send + 'static,
    F: FnOnce(&crate::store::Store, crate::domain::SiteId) -> crate::store::Result<Option<T>> + Send + 'static,
{
    let (me, site, role) = site_for(state, req, raw).await?;
    let t = texts::for_request(req);
    if !role.may_edit() {
        return Err(role_refused(t, &me));
    }
    let id = site.id;
    match lane::read(&state.store, move |s| read(s, id)).await {
        Ok(Some(item)) => Ok((me, site, role, item)),
        Ok(None) => Err(not_found(t, Some(&me))),
        Err(e) => Err(failed(t, Some(&me), e)),
    }
}

/// [`site_for`] for a user already signed in.
async fn site_of(state: &AppState, req: &Request, me: Me, raw: &str) -> Result<(Me, crate::store::Site, crate::domain::SiteRole), Response> {
    let t = texts::for_request(req);
    let Ok(id) = raw.parse::<crate::domain::SiteId>() else { return Err(not_found(t, Some(&me))) };
    let Some(role) = me.role_on(&id) else { return Err(not_found(t, Some(&me))) };
    match lane::read(&state.store, move |s| s.site(id).get()).await {
        Ok(Some(site)) => Ok((me, site, role)),
        Ok(None) => Err(not_found(t, Some(&me))),
        Err(e) => Err(failed(t, Some(&me), e)),
    }
}

pub(super) fn when(t: Timestamp) -> String {
    t.rfc3339().replace('T', " ").trim_end_matches('Z').to_owned() + " UTC"
}

/// Groups shown on the site page at most.
const QUEUE_PAGE: usize = 50;
/// Questions shown of a group at most.
const GROUP_QUESTIONS: usize = 50;

#[handler]
pub async fn site_queue(req: &Request, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, site, role) = match site_for(state, req, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let id = site.id;
    let since = Timestamp::from_millis(Timestamp::now().as_millis() - 30 * 86_400_000);
    let data = lane::read(&state.store, move |s| Ok((s.site(id).review().open(None, QUEUE_PAGE)?, s.site(id).insights().thumbs_down(since, 20)?))).await;
    let (groups, downs) = match data {
        Ok(v) => v,
        Err(e) => return failed(t, Some(&me), e),
    };
    let groups = groups.into_iter().map(|g| pages::GroupRow { id: g.id, example: g.example, count: g.count, last_at: when(g.last_at) }).collect();
    let thumbs_down = downs
        .into_iter()
        .map(|d| pages::DownRow { question: d.question.unwrap_or_default(), comment: d.comment.unwrap_or_default(), at: when(d.at) })
        .collect();
    render(StatusCode::OK, pages::Site { t, me: Some(header_of(&me)), nav: site_nav(site, role, "queue"), groups, thumbs_down })
}

/// What the group page shows around a form (empty, or what was typed with the reason it was refused).
struct GroupForm<'a> {
    error: Option<&'a str>,
    question: String,
    answer: String,
    url: String,
}

async fn group_page(
    state: &AppState,
    t: &Texts,
    me: &Me,
    site: &crate::store::Site,
    role: crate::domain::SiteRole,
    group: i64,
    form: Option<GroupForm<'_>>,
) -> Response {
    let id = site.id;
    let data = lane::read(&state.store, move |s| Ok((s.site(id).review().group(group)?, s.site(id).review().questions(group, GROUP_QUESTIONS)?))).await;
    let (g, questions) = match data {
        Ok(v) => v,
        Err(crate::store::StoreError::NotFound) => return not_found(t, Some(me)),
        Err(e) => return failed(t, Some(me), e),
    };
    let status = if form.as_ref().is_some_and(|f| f.error.is_some()) { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::OK };
    let form = form.unwrap_or(GroupForm { error: None, question: g.example.clone(), answer: String::new(), url: String::new() });
    render(
        status,
        pages::Group {
            t,
            me: Some(header_of(me)),
            csrf: &me.csrf,
            site_id: id.to_string(),
            site_name: site.name.clone(),
            group_id: g.id,
            example: g.example,
            count: g.count,
            last_at: when(g.last_at),
            questions: questions.into_iter().map(|q| pages::QuestionRow { question: q.question, lang: q.lang, at: when(q.at) }).collect(),
            may_edit: role.may_edit() && g.handled.is_none(),
            error: form.error,
            form_question: form.question,
            form_answer: form.answer,
            form_url: form.url,
        },
    )
}

#[handler]
pub async fn group_view(req: &Request, Path((raw, group)): Path<(String, i64)>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    match site_for(state, req, &raw).await {
        Ok((me, site, role)) => group_page(state, t, &me, &site, role, group, None).await,
        Err(page) => page,
    }
}

/// A state change on a site: the session, same origin and CSRF (`checked_post`), then a role that may
/// edit (else 403, whatever the form says).
pub(super) async fn editor_post(
    state: &AppState,
    req: &Request,
    body: Body,
    raw: &str,
) -> Result<(Me, crate::store::Site, crate::domain::SiteRole, Vec<(String, String)>), Response> {
    let t = texts::for_request(req);
    let (me, fields) = checked_post(state, req, body).await?;
    let Ok(id) = raw.parse::<crate::domain::SiteId>() else { return Err(not_found(t, Some(&me))) };
    let Some(role) = me.role_on(&id) else { return Err(not_found(t, Some(&me))) };
    let site = match state.store.run(move |s| s.site(id).get()).await {
        Ok(Some(site)) => site,
        Ok(None) => return Err(not_found(t, Some(&me))),
        Err(e) => return Err(failed(t, Some(&me), e)),
    };
    if !role.may_edit() {
        return Err(role_refused(t, &me));
    }
    Ok((me, site, role, fields))
}

/// An absolute http(s) URL, or nothing.
pub(super) fn link(raw: &str) -> Result<Option<String>, ()> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(None);
    }
    match url::Url::parse(raw) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && raw.len() <= 2048 => Ok(Some(u.to_string())),
        _ => Err(()),
    }
}

#[handler]
pub async fn answer_group(req: &Request, body: Body, Path((raw, group)): Path<(String, i64)>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, site, role, fields) = match editor_post(state, req, body, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let (question, answer, url) =
        (field(&fields, "question").trim().to_owned(), field(&fields, "answer").trim().to_owned(), field(&fields, "url").trim().to_owned());
    let link = link(&url);
    let valid = !question.is_empty() && question.chars().count() <= 500 && !answer.is_empty() && answer.chars().count() <= 4000 && link.is_ok();
    if !valid {
        let form = GroupForm { error: Some(t.answer_invalid), question, answer, url };
        return group_page(state, t, &me, &site, role, group, Some(form)).await;
    }
    let link = link.unwrap_or_default();
    let id = site.id;
    // The group is the site's and still open, or nothing is written.
    match state.store.run(move |s| s.site(id).review().group(group)).await {
        Ok(g) if g.handled.is_none() => {}
        Ok(_) => return group_page(state, t, &me, &site, role, group, Some(GroupForm { error: Some(t.handled_already), question, answer, url })).await,
        Err(crate::store::StoreError::NotFound) => return not_found(t, Some(&me)),
        Err(e) => return failed(t, Some(&me), e),
    }
    let (store, embedder, q, a, l) = (state.store.clone(), state.knowledge.embedder.clone(), question.clone(), answer.clone(), link.clone());
    let added = tokio::task::spawn_blocking(move || crate::knowledge::answer::curated::add(&store, &embedder, &id, &q, &a, l.as_deref())).await;
    let curated = match added {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => return failed(t, Some(&me), e),
        Err(e) => return failed(t, Some(&me), e),
    };
    let by = me.email.clone();
    if let Err(e) = state.store.run(move |s| s.site(id).review().handle(group, "curated", &by)).await {
        tracing::warn!(error = %e, group, "a curated answer was added but its group could not be closed");
    }
    let short = |s: &str| s.chars().take(200).collect::<String>();
    audit(
        state,
        &me.email,
        Some(id),
        "curated_added",
        json!({"group": group, "answerId": curated.id, "question": short(&question), "answer": short(&answer), "url": link}),
    )
    .await;
    see_other(&format!("/console/sites/{id}"))
}

#[handler]
pub async fn review_group(req: &Request, body: Body, Path((raw, group)): Path<(String, i64)>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, site, role, _) = match editor_post(state, req, body, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let (id, by) = (site.id, me.email.clone());
    match state.store.run(move |s| s.site(id).review().handle(group, "reviewed", &by)).await {
        Ok(g) => {
            audit(state, &me.email, Some(id), "group_reviewed", json!({"group": group, "example": g.example.chars().take(200).collect::<String>()})).await;
            see_other(&format!("/console/sites/{id}"))
        }
        Err(crate::store::StoreError::NotFound) => not_found(t, Some(&me)),
        Err(crate::store::StoreError::Conflict(_)) => {
            group_page(
                state,
                t,
                &me,
                &site,
                role,
                group,
                Some(GroupForm { error: Some(t.handled_already), question: String::new(), answer: String::new(), url: String::new() }),
            )
            .await
        }
        Err(e) => failed(t, Some(&me), e),
    }
}

/// The dashboard's periods, in days.
const PERIODS: [u32; 3] = [7, 30, 90];

fn share(part: u64, whole: u64) -> String {
    if whole == 0 { "–".to_owned() } else { format!("{:.0} %", part as f64 * 100.0 / whole as f64) }
}

#[handler]
pub async fn dashboard(req: &Request, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, site, role) = match site_for(state, req, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let days: u32 = req.uri().query().and_then(|q| q.strip_prefix("days=")).and_then(|d| d.parse().ok()).filter(|d| PERIODS.contains(d)).unwrap_or(30);
    let id = site.id;
    let now = Timestamp::now();
    let since = crate::store::days::day_of(Timestamp::from_millis(now.as_millis() - i64::from(days - 1) * 86_400_000));
    // What was answered in console over the last year, with the days around each (at most 5).
    let effects_since = Timestamp::from_millis(now.as_millis() - 400 * 86_400_000);
    let data = lane::read(&state.store, move |s| {
        let site = s.site(id);
        Ok((
            site.days().since(since)?,
            site.days().languages(since, 10)?,
            site.days().top_sources(since, 10)?,
            site.review().open(None, 5)?,
            site.review().handled("curated", 5)?,
            site.days().since(effects_since)?,
        ))
    })
    .await;
    let (rows, languages, sources, groups, curated, year) = match data {
        Ok(v) => v,
        Err(e) => return failed(t, Some(&me), e),
    };
    // Every day of the period, the empty ones too, so the chart's columns are days.
    let mut all = Vec::with_capacity(days as usize);
    for i in 0..days {
        let day = Timestamp::from_millis(since.as_millis() + i64::from(i) * 86_400_000);
        let row = rows.iter().find(|r| r.day == day).copied();
        all.push((day, row));
    }
    let sum = |f: fn(&crate::store::days::Day) -> u64| rows.iter().map(f).sum::<u64>();
    let (questions, answered, leads, up, down) = (sum(|d| d.questions), sum(|d| d.answered), sum(|d| d.leads), sum(|d| d.thumbs_up), sum(|d| d.thumbs_down));
    let get = |r: &Option<crate::store::days::Day>, f: fn(&crate::store::days::Day) -> u64| r.as_ref().map_or(0, f);
    let charts = vec![
        super::charts::stacked(
            t.chart_questions,
            &[t.answered_key, t.unanswered_key],
            &all.iter().map(|(_, r)| vec![get(r, |d| d.answered), get(r, |d| d.questions.saturating_sub(d.answered))]).collect::<Vec<_>>(),
        ),
        super::charts::stacked(t.chart_leads, &[t.leads], &all.iter().map(|(_, r)| vec![get(r, |d| d.leads)]).collect::<Vec<_>>()),
        super::charts::stacked(
            t.chart_feedback,
            &[t.rated_up, t.rated_down],
            &all.iter().map(|(_, r)| vec![get(r, |d| d.thumbs_up), get(r, |d| d.thumbs_down)]).collect::<Vec<_>>(),
        ),
    ];
    let date = |d: Timestamp| d.rfc3339()[..10].to_owned();
    let table = all.iter().filter_map(|(day, r)| r.map(|d| (date(*day), d.questions, d.answered, d.leads, d.thumbs_up, d.thumbs_down))).collect();
    let window = |from: i64, to: i64| {
        let (q, a) = year.iter().filter(|d| d.day.as_millis() >= from && d.day.as_millis() < to).fold((0, 0), |(q, a), d| (q + d.questions, a + d.answered));
        share(a, q)
    };
    let effects = curated
        .into_iter()
        .filter_map(|g| {
            let (at, _) = g.handled.clone()?;
            let day = crate::store::days::day_of(at).as_millis();
            Some(pages::EffectRow {
                example: g.example,
                at: date(at),
                before: window(day - 7 * 86_400_000, day),
                after: window(day + 86_400_000, day + 8 * 86_400_000),
            })
        })
        .collect();
    let web = |u: Option<String>| u.filter(|u| url::Url::parse(u).is_ok_and(|p| matches!(p.scheme(), "http" | "https")));
    render(
        StatusCode::OK,
        pages::Dashboard {
            t,
            me: Some(header_of(&me)),
            nav: site_nav(site, role, "dashboard"),
            days,
            periods: PERIODS.iter().map(|d| (*d, format!("{d} {}", t.days_label))).collect(),
            questions,
            resolution: share(answered, questions),
            leads,
            thumbs_up: up,
            thumbs_down: down,
            charts,
            table,
            languages,
            sources: sources.into_iter().map(|d| pages::SourceRow { title: d.title, url: web(d.url), citations: d.citations }).collect(),
            groups: groups.into_iter().map(|g| pages::GroupRow { id: g.id, example: g.example, count: g.count, last_at: when(g.last_at) }).collect(),
            effects,
        },
    )
}

/// Leads shown on a page of the leads list.
const LEADS_PAGE: usize = 50;

pub(super) fn short(s: &str, n: usize) -> String {
    let mut out: String = s.chars().take(n).collect();
    if s.chars().count() > n {
        out.push('…');
    }
    out
}

/// A visitor's page address as a link, only when it is http or https (never `javascript:` and the like).
fn web_link(u: &str) -> Option<String> {
    url::Url::parse(u).ok().filter(|p| matches!(p.scheme(), "http" | "https")).map(|p| p.to_string())
}

#[handler]
pub async fn leads_list(req: &Request, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, site, role) = match site_for(state, req, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let before = req.uri().query().and_then(|q| q.strip_prefix("before=")).and_then(|b| {
        let (ms, id) = b.split_once(':')?;
        Some((Timestamp::from_millis(ms.parse().ok()?), id.to_owned()))
    });
    let id = site.id;
    let rows = match lane::read(&state.store, move |s| s.site(id).leads().newest(before, LEADS_PAGE + 1)).await {
        Ok(r) => r,
        Err(e) => return failed(t, Some(&me), e),
    };
    let more = rows.len() > LEADS_PAGE;
    let rows: Vec<_> = rows.into_iter().take(LEADS_PAGE).collect();
    let next = more.then(|| rows.last().map(|r| format!("{}:{}", r.lead.created_at.as_millis(), r.lead.lead_id))).flatten();
    let leads = rows
        .into_iter()
        .map(|r| pages::LeadItem {
            id: r.lead.lead_id,
            at: when(r.lead.created_at),
            name: r.lead.name.unwrap_or_default(),
            email: r.lead.email,
            message: short(r.lead.message.as_deref().unwrap_or(""), 120),
            delivery: if r.message_id.is_some() { "lead.captured".into() } else { "–".into() },
        })
        .collect();
    render(StatusCode::OK, pages::Leads { t, me: Some(header_of(&me)), nav: site_nav(site, role, "leads"), leads, next })
}

#[handler]
pub async fn lead_view(req: &Request, Path((raw, lead)): Path<(String, String)>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, site, role) = match site_for(state, req, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let id = site.id;
    let found = lane::read(&state.store, move |s| {
        let row = s.site(id).leads().get(&lead)?;
        let event = match &row.message_id {
            Some(m) => s.outbox().get(m)?.filter(|(msg, _, _)| msg.site_id == id),
            None => None,
        };
        Ok((row, event))
    })
    .await;
    let (row, event) = match found {
        Ok(v) => v,
        Err(crate::store::StoreError::NotFound) => return not_found(t, Some(&me)),
        Err(e) => return failed(t, Some(&me), e),
    };
    let turns = row
        .lead
        .transcript
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|turn| {
            use crate::store::conversations::Role;
            let who = match turn.role {
                Role::User => t.visitor.to_owned(),
                Role::Assistant => t.assistant.to_owned(),
                Role::Staff => turn.author.unwrap_or_default(),
            };
            (who, turn.text)
        })
        .collect();
    let delivery = event.map(|(m, _, attempts)| pages::Delivery {
        status: m.status.as_str().to_owned(),
        attempts: m.attempts,
        last_error: m.last_error.unwrap_or_default(),
        rows: attempts
            .into_iter()
            .map(|a| (a.attempt, when(a.at), a.status_code.map(|c| c.to_string()).unwrap_or_default(), a.error.unwrap_or_default()))
            .collect(),
        replayable: role.may_manage() && m.status == crate::store::outbox::OutboxStatus::Dead,
    });
    let page_url = row.lead.page_url.clone().unwrap_or_default();
    render(
        StatusCode::OK,
        pages::Lead {
            t,
            me: Some(header_of(&me)),
            csrf: &me.csrf,
            site_id: id.to_string(),
            site_name: site.name,
            lead_id: row.lead.lead_id,
            at: when(row.lead.created_at),
            name: row.lead.name.unwrap_or_default(),
            email: row.lead.email,
            message: row.lead.message.unwrap_or_default(),
            page_link: web_link(&page_url),
            page_url,
            turns,
            delivery,
        },
    )
}

#[handler]
pub async fn replay_lead(req: &Request, body: Body, Path((raw, lead)): Path<(String, String)>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, fields) = match checked_post(state, req, body).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let _ = fields;
    let Ok(id) = raw.parse::<crate::domain::SiteId>() else { return not_found(t, Some(&me)) };
    let Some(role) = me.role_on(&id) else { return not_found(t, Some(&me)) };
    if !role.may_manage() {
        return role_refused(t, &me);
    }
    let lead_id = lead.clone();
    let replayed = state
        .store
        .run(move |s| {
            let row = s.site(id).leads().get(&lead_id)?;
            let m = row.message_id.ok_or(crate::store::StoreError::NotFound)?;
            let (msg, _, _) = s.outbox().get(&m)?.ok_or(crate::store::StoreError::NotFound)?;
            if msg.site_id != id || msg.status != crate::store::outbox::OutboxStatus::Dead {
                return Err(crate::store::StoreError::Conflict("only an event that exhausted its retries is sent again".into()));
            }
            s.outbox().replay(&m)
        })
        .await;
    match replayed {
        Ok(m) => {
            state.outbox_wake.notify_one();
            audit(state, &me.email, Some(id), "webhook_replayed", json!({"lead": lead, "event": m.id})).await;
            see_other(&format!("/console/sites/{id}/leads/{lead}"))
        }
        Err(crate::store::StoreError::NotFound) => not_found(t, Some(&me)),
        Err(crate::store::StoreError::Conflict(_)) => forbidden(t, Some(&me)),
        Err(e) => failed(t, Some(&me), e),
    }
}

/// The site named in a URL when the signed-in user may export its personal data (an owner or an
/// editor, or an admin): a viewer gets a 403 page that says why, anyone else what [`site_for`] sends.
async fn exportable_site(state: &AppState, req: &Request, raw: &str) -> Result<(Me, crate::store::Site), Response> {
    let (me, site, role) = site_for(state, req, raw).await?;
    if !role.may_export() {
        let t = texts::for_request(req);
        return Err(message(t, Some(&me), StatusCode::FORBIDDEN, t.forbidden_title, t.export_refused));
    }
    Ok((me, site))
}

/// The site's leads as a file: `csv` (formula-like values neutralised, as `sitebot leads export`) or
/// `jsonl`. Every lead, oldest first; for owners and editors.
async fn export_leads(req: &Request, raw: &str, state: &AppState, format: &str) -> Response {
    let t = texts::for_request(req);
    let (me, site) = match exportable_site(state, req, raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let id = site.id;
    let leads = match lane::read(&state.store, move |s| s.site(id).leads().list(None)).await {
        Ok(l) => l,
        Err(e) => return failed(t, Some(&me), e),
    };
    let file = File {
        noun: "leads",
        action: "leads_exported",
        header: &["leadId", "siteId", "createdAt", "name", "email", "message", "pageUrl"],
        csv: |l: &crate::store::leads::Lead| {
            let safe = |v: &Option<String>| crate::domain::spreadsheet_safe(v.as_deref().unwrap_or(""));
            vec![
                l.lead_id.clone(),
                l.site_id.to_string(),
                l.created_at.to_string(),
                safe(&l.name),
                crate::domain::spreadsheet_safe(&l.email),
                safe(&l.message),
                safe(&l.page_url),
            ]
        },
        json: |l| serde_json::to_string(l).unwrap_or_default(),
    };
    download(state, &me, id, format, &leads, file).await
}

/// What an export writes: its noun (in the file's name and the audit entry's count), its audit action,
/// the CSV header, and each row as CSV fields (formulas neutralised) and as a JSON line.
struct File<T> {
    noun: &'static str,
    action: &'static str,
    header: &'static [&'static str],
    csv: fn(&T) -> Vec<String>,
    json: fn(&T) -> String,
}

/// `rows` as a `csv` or `jsonl` download named after the site, audited.
async fn download<T>(state: &AppState, me: &Me, site: crate::domain::SiteId, format: &str, rows: &[T], file: File<T>) -> Response {
    let (body, ctype) = if format == "csv" {
        let mut w = csv::Writer::from_writer(Vec::new());
        let _ = w.write_record(file.header);
        for r in rows {
            let _ = w.write_record((file.csv)(r));
        }
        (w.into_inner().unwrap_or_default(), "text/csv; charset=utf-8")
    } else {
        let mut out = Vec::new();
        for r in rows {
            out.extend((file.json)(r).into_bytes());
            out.push(b'\n');
        }
        (out, "application/x-ndjson")
    };
    let mut detail = serde_json::Map::new();
    detail.insert("format".into(), format.into());
    detail.insert(file.noun.into(), rows.len().into());
    audit(state, &me.email, Some(site), file.action, detail.into()).await;
    let mut resp = Response::builder()
        .content_type(ctype)
        .header(header::CONTENT_DISPOSITION, format!("attachment; filename=\"{}-{site}.{format}\"", file.noun))
        .body(body);
    session::secure(&mut resp, false);
    resp
}

#[handler]
pub async fn leads_csv(req: &Request, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    export_leads(req, &raw, state, "csv").await
}

#[handler]
pub async fn leads_jsonl(req: &Request, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    export_leads(req, &raw, state, "jsonl").await
}

/// The site named in a URL when the signed-in user may manage it (an owner, or an admin): the site; a
/// viewer or an editor gets 403, anyone else what [`site_for`] sends.
pub(super) async fn managed_site(state: &AppState, req: &Request, raw: &str) -> Result<(Me, crate::store::Site), Response> {
    let (me, site, role) = site_for(state, req, raw).await?;
    match unless_manager(req, &me, role) {
        Some(page) => Err(page),
        None => Ok((me, site)),
    }
}

/// A state change on a site the user may manage: [`checked_post`], then the site as [`managed_site`]
/// gives it (the session read once). `Err` is the page to send instead.
pub(super) async fn owner_post(state: &AppState, req: &Request, body: Body, raw: &str) -> Result<(Me, Vec<(String, String)>, crate::store::Site), Response> {
    let (me, fields) = checked_post(state, req, body).await?;
    let (me, site, role) = site_of(state, req, me, raw).await?;
    match unless_manager(req, &me, role) {
        Some(page) => Err(page),
        None => Ok((me, fields, site)),
    }
}

/// The 403 page when `role` may not manage its site (an editor or a viewer).
fn unless_manager(req: &Request, me: &Me, role: crate::domain::SiteRole) -> Option<Response> {
    (!role.may_manage()).then(|| role_refused(texts::for_request(req), me))
}

/// Audit entries on a page.
const AUDIT_PAGE: usize = 100;

/// A site's audit log: owners and admins (a viewer or an editor is refused with 403).
#[handler]
pub async fn audit_log(req: &Request, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, site) = match managed_site(state, req, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let before = req.uri().query().and_then(|q| q.strip_prefix("before=")).and_then(|b| b.parse::<i64>().ok());
    let id = site.id;
    let entries = match lane::read(&state.store, move |s| s.audit().list(Some(id), before, AUDIT_PAGE + 1)).await {
        Ok(e) => e,
        Err(e) => return failed(t, Some(&me), e),
    };
    let more = entries.len() > AUDIT_PAGE;
    let entries: Vec<_> = entries.into_iter().take(AUDIT_PAGE).collect();
    let next = if more { entries.last().map(|e| e.id) } else { None };
    let entries = entries.into_iter().map(|e| (when(e.at), e.actor, e.action, short(&e.detail, 300))).collect();
    render(StatusCode::OK, pages::Audit { t, me: Some(header_of(&me)), nav: site_nav(site, crate::domain::SiteRole::Owner, "audit"), entries, next })
}

/// The conversations page's filters, read from the query string (`days`, `unanswered`, `lead`, `rated`,
/// `lang`, `q`, `before`).
struct ConversationQuery {
    days: u32,
    filter: crate::store::conversations::ConversationFilter,
    before: Option<(Timestamp, String)>,
}

fn conversation_query(req: &Request) -> ConversationQuery {
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(req.uri().query().unwrap_or("").as_bytes()).into_owned().collect();
    let get = |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let days = get("days").and_then(|d| d.parse().ok()).filter(|d| PERIODS.contains(d)).unwrap_or(30);
    let since = crate::store::days::day_of(Timestamp::from_millis(Timestamp::now().as_millis() - i64::from(days - 1) * 86_400_000));
    let text = |k: &str, max: usize| get(k).map(|v| v.trim().chars().take(max).collect::<String>()).filter(|v| !v.is_empty());
    let filter = crate::store::conversations::ConversationFilter {
        since: Some(since),
        unanswered: get("unanswered") == Some("1"),
        with_lead: get("lead") == Some("1"),
        rated: get("rated") == Some("1"),
        lang: text("lang", 20),
        text: text("q", 200),
    };
    let before = get("before").and_then(|b| {
        let (ms, id) = b.split_once(':')?;
        Some((Timestamp::from_millis(ms.parse().ok()?), id.to_owned()))
    });
    ConversationQuery { days, filter, before }
}

/// The query string of these filters (for the next page and the exports).
fn filter_query(q: &ConversationQuery) -> String {
    let mut s = url::form_urlencoded::Serializer::new(String::new());
    s.append_pair("days", &q.days.to_string());
    if q.filter.unanswered {
        s.append_pair("unanswered", "1");
    }
    if q.filter.with_lead {
        s.append_pair("lead", "1");
    }
    if q.filter.rated {
        s.append_pair("rated", "1");
    }
    if let Some(l) = &q.filter.lang {
        s.append_pair("lang", l);
    }
    if let Some(t) = &q.filter.text {
        s.append_pair("q", t);
    }
    s.finish()
}

/// Conversations on a page of the list.
const CONVERSATIONS_PAGE: usize = 50;
/// Conversations a page of the filtered list examines at most (a few milliseconds of reading); a filter
/// that matches fewer in them gets a shorter page and a link that goes on from there.
const EXAMINED: usize = 2_000;
/// Conversations in an export at most.
const EXPORT_MAX: usize = 100_000;

#[handler]
pub async fn conversations(req: &Request, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, site, role) = match site_for(state, req, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let q = conversation_query(req);
    let (id, filter, before) = (site.id, q.filter.clone(), q.before.clone());
    let page = match lane::read(&state.store, move |s| s.site(id).conversations().page(&filter, before, CONVERSATIONS_PAGE + 1, Some(EXAMINED))).await {
        Ok(r) => r,
        Err(e) => return failed(t, Some(&me), e),
    };
    let more = page.rows.len() > CONVERSATIONS_PAGE;
    let rows: Vec<_> = page.rows.into_iter().take(CONVERSATIONS_PAGE).collect();
    let query = filter_query(&q);
    // Past a full page, the next starts after its last row; short of one, after the last conversation
    // the bounded examination reached (a rare filter pages through the period a slice at a time).
    let (key, searched_to) = match (more, page.resume) {
        (true, _) => (rows.last().map(|r| (r.updated_at, r.id.clone())), None),
        (false, Some(resume)) => (Some(resume.clone()), Some(when(resume.0))),
        (false, None) => (None, None),
    };
    let next = key.map(|(at, c)| format!("/console/sites/{id}/conversations?{query}&before={}:{c}", at.as_millis()));
    let items = rows
        .into_iter()
        .map(|r| pages::ConversationItem {
            first: short(&r.first_question, 140),
            at: when(r.updated_at),
            turns: r.turns,
            unanswered: r.unanswered,
            lead: r.has_lead,
            id: r.id,
        })
        .collect();
    render(
        StatusCode::OK,
        pages::Conversations {
            t,
            me: Some(header_of(&me)),
            nav: site_nav(site, role, "conversations"),
            periods: PERIODS.iter().map(|d| (*d, format!("{d} {}", t.days_label))).collect(),
            days: q.days,
            lang: q.filter.lang.clone().unwrap_or_default(),
            q: q.filter.text.clone().unwrap_or_default(),
            unanswered: q.filter.unanswered,
            with_lead: q.filter.with_lead,
            rated: q.filter.rated,
            rows: items,
            next,
            searched_to,
            export_csv: format!("/console/sites/{id}/conversations.csv?{query}"),
            export_jsonl: format!("/console/sites/{id}/conversations.jsonl?{query}"),
        },
    )
}

#[handler]
pub async fn conversation(req: &Request, Path((raw, conversation)): Path<(String, String)>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, site, _) = match site_for(state, req, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let (id, cid) = (site.id, conversation.clone());
    let found = lane::read(&state.store, move |s| {
        let exchanges = s.site(id).conversations().transcript(&cid)?;
        let leads = s.site(id).leads().of_conversation(&cid)?.into_iter().map(|l| (l.lead_id, l.email)).collect::<Vec<_>>();
        // What was said with a person of the staff (live hand-off).
        let parsed = crate::domain::ConversationId::parse(&cid).map_err(|_| crate::store::StoreError::NotFound)?;
        let events = s.site(id).handoff().events_after(&parsed, 0)?;
        Ok((exchanges, leads, events))
    })
    .await;
    let (exchanges, leads, events) = match found {
        Ok(v) => v,
        Err(crate::store::StoreError::NotFound) => return not_found(t, Some(&me)),
        Err(e) => return failed(t, Some(&me), e),
    };
    let exchanges = exchanges
        .into_iter()
        .map(|e| pages::ExchangeItem {
            question: e.question,
            answer: e.answer,
            at: when(e.at),
            sources: e.sources.into_iter().map(|(title, url)| (title, url.as_deref().and_then(web_link))).collect(),
            outcome: match e.resolved {
                Some(true) => t.outcome_answered.to_owned(),
                Some(false) => t.outcome_unanswered.to_owned(),
                None => String::new(),
            },
            rating: e
                .rating
                .map(|(r, c)| if r == "up" { t.rated_up.to_owned() } else { t.rated_down.to_owned() } + &c.map(|c| format!(": {c}")).unwrap_or_default())
                .unwrap_or_default(),
        })
        .collect();
    let with_person = events
        .into_iter()
        .filter_map(|e| match e.kind {
            crate::store::handoff::EventKind::Message { role, name, text } => Some(pages::InboxTurn {
                staff: role == crate::store::handoff::Author::Staff,
                who: if role == crate::store::handoff::Author::Staff { name.unwrap_or_default() } else { t.visitor.to_owned() },
                text,
                at: when(e.at),
            }),
            crate::store::handoff::EventKind::State { .. } => None,
        })
        .collect();
    render(
        StatusCode::OK,
        pages::Conversation {
            t,
            me: Some(header_of(&me)),
            site_id: id.to_string(),
            site_name: site.name,
            conversation_id: conversation,
            exchanges,
            leads,
            with_person,
        },
    )
}

/// The filtered conversations as a file: one row (CSV, formulas neutralised) or object (JSONL) each;
/// for owners and editors.
async fn export_conversations(req: &Request, raw: &str, state: &AppState, format: &str) -> Response {
    let t = texts::for_request(req);
    let (me, site) = match exportable_site(state, req, raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let q = conversation_query(req);
    let (id, filter) = (site.id, q.filter.clone());
    // Each conversation with its whole transcript: the assistant's turns and what the visitor and the
    // staff said during a hand-off, in order.
    let rows = match lane::read(&state.store, move |s| {
        let store = s.site(id).conversations();
        let rows = store.page(&filter, None, EXPORT_MAX, None)?.rows;
        rows.into_iter()
            .map(|r| {
                let cid = crate::domain::ConversationId::parse(&r.id).map_err(|_| crate::store::StoreError::NotFound)?;
                Ok((store.transcript_turns(&cid)?, r))
            })
            .collect::<crate::store::Result<Vec<_>>>()
    })
    .await
    {
        Ok(r) => r,
        Err(e) => return failed(t, Some(&me), e),
    };
    let file = File {
        noun: "conversations",
        action: "conversations_exported",
        header: &["conversationId", "startedAt", "lastActiveAt", "turns", "unanswered", "lead", "firstQuestion", "personMessages", "transcript"],
        csv: |(turns, r): &(Vec<Turn>, ConversationRow)| {
            vec![
                r.id.clone(),
                r.created_at.to_string(),
                r.updated_at.to_string(),
                r.turns.to_string(),
                r.unanswered.to_string(),
                r.has_lead.to_string(),
                crate::domain::spreadsheet_safe(&r.first_question),
                r.person_messages.to_string(),
                crate::domain::spreadsheet_safe(&transcript_text(turns)),
            ]
        },
        json: |(turns, r)| {
            json!({"conversationId": r.id, "startedAt": r.created_at, "lastActiveAt": r.updated_at, "turns": r.turns,
                   "unanswered": r.unanswered, "lead": r.has_lead, "firstQuestion": r.first_question, "personMessages": r.person_messages,
                   "transcript": turns})
            .to_string()
        },
    };
    download(state, &me, id, format, &rows, file).await
}

/// A transcript as one spreadsheet cell: a line a turn, `who: text` (a person of the staff by name).
fn transcript_text(turns: &[Turn]) -> String {
    use crate::store::conversations::Role;
    let line = |t: &Turn| {
        let who = match (t.role, &t.author) {
            (Role::User, _) => "visitor".to_owned(),
            (Role::Assistant, _) => "assistant".to_owned(),
            (Role::Staff, Some(name)) => format!("staff ({name})"),
            (Role::Staff, None) => "staff".to_owned(),
        };
        format!("{who}: {}", t.text)
    };
    turns.iter().map(line).collect::<Vec<_>>().join("\n")
}

#[handler]
pub async fn conversations_csv(req: &Request, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    export_conversations(req, &raw, state, "csv").await
}

#[handler]
pub async fn conversations_jsonl(req: &Request, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    export_conversations(req, &raw, state, "jsonl").await
}
