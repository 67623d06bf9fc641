//! Sessions, CSRF and the console's response headers.
//!
//! A session is a row in the store, found by the SHA-256 of a 256-bit random cookie value, so the
//! database never holds what the browser holds. The cookie is `__Host-` prefixed (`Secure`, `Path=/`, no
//! `Domain`: only this origin over HTTPS can set or read it), `HttpOnly` and `SameSite=Lax`. A session
//! ends after [`IDLE`] without a request (an open inbox stream counts as one) or [`ABSOLUTE`] after sign-in, at sign-out, when the password
//! changes and when the user is removed; a new one is made at every sign-in (never reused).
//!
//! Every state-changing request needs the session's CSRF token in its form (compared in constant time)
//! and an `Origin` header naming this server; otherwise it is refused with 403 before anything happens.

use std::time::Duration;

use poem::Request;
use poem::http::{HeaderValue, header};
use subtle::ConstantTimeEq;

use crate::app::AppState;
use crate::domain::{SiteId, SiteRole, Timestamp};
use crate::secrets::{new_url_token, token_hash};
use crate::store::users::{Grant, Session, User};

pub const COOKIE: &str = "__Host-sitebot_session";
/// A session unused this long ends.
pub const IDLE: Duration = Duration::from_secs(30 * 60);
/// A session this old ends, used or not.
pub const ABSOLUTE: Duration = Duration::from_secs(12 * 3600);
/// The idle clock is written at most this often (a page view is a read, not a write, within it).
const TOUCH_EVERY: Duration = Duration::from_secs(60);

/// The signed-in user of a request, with what it may see.
#[derive(Debug, Clone)]
pub struct Me {
    pub user: User,
    pub email: String,
    pub csrf: String,
    pub grants: Vec<Grant>,
    cookie_hash: [u8; 32],
}

impl Me {
    /// The user's role on `site`: an admin is an owner of every site; `None` means the site is not the
    /// user's to see (and is answered 404, exactly as an unknown one).
    pub fn role_on(&self, site: &SiteId) -> Option<SiteRole> {
        if self.user.is_admin {
            return Some(SiteRole::Owner);
        }
        self.grants.iter().find(|g| g.site_id == *site).map(|g| g.role)
    }

    /// Whether `token` is this session's CSRF token (constant time).
    pub fn csrf_matches(&self, token: &str) -> bool {
        bool::from(self.csrf.as_bytes().ct_eq(token.as_bytes()))
    }

    pub fn cookie_hash(&self) -> &[u8; 32] {
        &self.cookie_hash
    }
}

/// The value of this request's session cookie, if it sent one.
pub(super) fn cookie_value(req: &Request) -> Option<String> {
    req.headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.to_owned())
}

/// The session of this request, when its cookie names a live one (an expired one is deleted).
pub async fn current(state: &AppState, req: &Request) -> Option<Me> {
    let value = cookie_value(req)?;
    let hash = token_hash(&value);
    let session = super::lane::read(&state.store, move |s| s.users().session(&hash)).await.ok()??;
    let now = Timestamp::now();
    if lapsed(&session, now) {
        let _ = state.store.run(move |s| s.users().end_session(&hash)).await;
        return None;
    }
    if touch_due(&session, now) {
        let _ = state.store.run(move |s| s.users().touch_session(&hash, now)).await;
    }
    let id = session.user.id.clone();
    let grants = super::lane::read(&state.store, move |s| s.users().grants(&id)).await.ok()?;
    Some(Me { email: session.user.email.clone(), user: session.user, csrf: session.csrf, grants, cookie_hash: hash })
}

/// Whether the session has ended by its clocks: [`IDLE`] without use, or [`ABSOLUTE`] after sign-in.
pub(super) fn lapsed(session: &Session, now: Timestamp) -> bool {
    let idle = now.as_millis() - session.last_seen_at.as_millis() > IDLE.as_millis() as i64;
    let old = now.as_millis() - session.created_at.as_millis() > ABSOLUTE.as_millis() as i64;
    idle || old
}

/// Whether a use of the session now should restart its idle clock (written at most every
/// [`TOUCH_EVERY`]). Besides requests, an open inbox stream is use (`console::inbox`): staff who keep
/// the inbox open to answer visitors are not signed out while they wait.
pub(super) fn touch_due(session: &Session, now: Timestamp) -> bool {
    now.as_millis() - session.last_seen_at.as_millis() > TOUCH_EVERY.as_millis() as i64
}

/// Starts a session for the user; returns the `Set-Cookie` value.
pub async fn start(state: &AppState, user: &User) -> Result<String, crate::store::StoreError> {
    let (value, csrf) = (new_url_token(), new_url_token());
    let hash = token_hash(&value);
    let id = user.id.clone();
    state.store.run(move |s| s.users().start_session(&hash, &id, &csrf, Timestamp::now())).await?;
    Ok(format!("{COOKIE}={value}; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age={}", ABSOLUTE.as_secs()))
}

/// The `Set-Cookie` value that deletes the session cookie.
pub fn cleared() -> String {
    format!("{COOKIE}=; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=0")
}

/// Whether the request's `Origin` is this server (`https://` and the `Host` it was sent to). A request
/// without `Origin` is not same-origin: every browser the console supports sends it with a POST.
pub fn same_origin(req: &Request) -> bool {
    let origin = req.headers().get(header::ORIGIN).and_then(|v| v.to_str().ok());
    let host = req.headers().get(header::HOST).and_then(|v| v.to_str().ok()).or_else(|| req.uri().authority().map(|a| a.as_str()));
    match (origin, host) {
        (Some(o), Some(h)) => o.eq_ignore_ascii_case(&format!("https://{h}")),
        _ => false,
    }
}

/// The console's security headers, on every response it sends; `Cache-Control: no-store` on pages with
/// data (everything but the stylesheet).
pub fn secure(resp: &mut poem::Response, cacheable: bool) {
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'self'; img-src 'self' data:; script-src 'self'; connect-src 'self'; form-action 'self'; \
             frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if !cacheable {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_cookie_is_read_among_others() {
        let req = Request::builder().header(header::COOKIE, "a=1; __Host-sitebot_session=abc; b=2").finish();
        assert_eq!(cookie_value(&req).as_deref(), Some("abc"));
        let req = Request::builder().header(header::COOKIE, "__Host-sitebot_sessionX=abc").finish();
        assert_eq!(cookie_value(&req), None);
    }

    #[test]
    fn only_this_servers_origin_is_same_origin() {
        let req = |origin: Option<&str>| {
            let b = Request::builder().header(header::HOST, "console.example:8443");
            match origin {
                Some(o) => b.header(header::ORIGIN, o).finish(),
                None => b.finish(),
            }
        };
        assert!(same_origin(&req(Some("https://console.example:8443"))));
        assert!(!same_origin(&req(Some("https://evil.example"))));
        assert!(!same_origin(&req(Some("http://console.example:8443"))));
        assert!(!same_origin(&req(Some("null"))));
        assert!(!same_origin(&req(None)));
    }
}
