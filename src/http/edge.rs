//! The edge: the outermost layer every request passes. It assigns the request id, answers CORS
//! preflights, turns a panicking handler into a 500, renders every error as problem+json, and puts `X-Request-Id`, the rate-limit headers and
//! the CORS response headers on every response, errors and 429 included.
//!
//! Before the answer goes out, the edge reads what the handler left of the request body, up to
//! `server.discard_body_bytes` (see `unread.rs`), so an early answer reaches clients that are still
//! sending.
//!
//! Rate limiting itself happens in the route scopes (`scope.rs`), which know whether a route is counted
//! per site or per client IP; they record their decision in the request's [`RequestMeta`]. A request
//! no scope saw (an unknown route, a wrong method, a preflight) is counted per client IP here.

use std::net::{IpAddr, Ipv4Addr};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use futures_util::FutureExt;
use poem::PathPattern;
use poem::error::{MethodNotAllowedError, NotFoundError};
use poem::http::{HeaderValue, Method, StatusCode, header};
use poem::{Endpoint, IntoResponse, Request, Response};
use tokio::time::Instant;

use super::error::ApiError;
use super::unread::UnreadBody;
use crate::app::AppState;
use crate::domain::SiteId;
use crate::metrics::LimitScope;
use crate::ratelimit::{Decision, Key};

/// Per-request facts shared between the edge and the scopes.
#[derive(Debug)]
pub struct RequestMeta {
    pub request_id: String,
    /// The whole body must have arrived by then (`server.body_timeout_secs` after the head).
    pub body_deadline: Instant,
    decision: Mutex<Option<Decision>>,
    origin_refused: AtomicBool,
    /// The site a tenant scope resolved, for the access log and the metrics.
    site: OnceLock<SiteId>,
}

impl RequestMeta {
    fn new(request_id: String, body_deadline: Instant) -> Self {
        Self { request_id, body_deadline, decision: Mutex::new(None), origin_refused: AtomicBool::new(false), site: OnceLock::new() }
    }

    pub fn set_site(&self, site: SiteId) {
        let _ = self.site.set(site);
    }

    pub fn record(&self, d: Decision) {
        *self.decision.lock().unwrap_or_else(|p| p.into_inner()) = Some(d);
    }

    fn decision(&self) -> Option<Decision> {
        *self.decision.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn refuse_origin(&self) {
        self.origin_refused.store(true, Ordering::Relaxed);
    }

    fn origin_refused(&self) -> bool {
        self.origin_refused.load(Ordering::Relaxed)
    }
}

/// A client-sent `X-Request-Id` is echoed when it is 1 to 128 characters of `[A-Za-z0-9._:-]`.
fn sane_request_id(v: &str) -> bool {
    (1..=128).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_alphanumeric() || b"._:-".contains(&b))
}

pub fn new_request_id() -> String {
    format!("req_{}", ulid::Ulid::new())
}

/// The client's address as the edge decided it (`http::client`: the connection's peer, or what a
/// trusted proxy says).
#[derive(Debug, Clone, Copy)]
pub struct ClientIp(pub IpAddr);

pub fn client_ip(req: &Request) -> IpAddr {
    req.extensions().get::<ClientIp>().map(|c| c.0).unwrap_or_else(|| peer_ip(req))
}

fn peer_ip(req: &Request) -> IpAddr {
    req.remote_addr().as_socket_addr().map(|a| a.ip()).unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED))
}

pub const ALLOW_HEADERS: &str = "Authorization, Content-Type, Idempotency-Key, X-Site-Id, X-Request-Id, Last-Event-ID, Accept-Language, X-Conversation-Token";
pub const EXPOSE_HEADERS: &str =
    "X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-RateLimit-Policy, Retry-After, ETag, Last-Modified, Content-Language";

pub struct Edge<E> {
    inner: E,
    state: Arc<AppState>,
}

impl<E> Edge<E> {
    pub fn new(inner: E, state: Arc<AppState>) -> Self {
        Self { inner, state }
    }
}

/// Renders an error as problem+json; logs 5xx causes (never sent).
pub fn render(err: &ApiError, request_id: &str) -> Response {
    let problem = err.problem(request_id);
    let status = StatusCode::from_u16(problem.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if status.is_server_error() && status != StatusCode::NOT_IMPLEMENTED && !matches!(err, ApiError::Starting | ApiError::SiteMoving) {
        tracing::error!(request_id, error = %err, "request failed");
    }
    let body = serde_json::to_vec(&problem).unwrap_or_default();
    let mut resp = Response::builder().status(status).content_type("application/problem+json").body(body);
    match err {
        ApiError::InvalidToken => {
            resp.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer error=\"invalid_token\""));
        }
        ApiError::MethodNotAllowed { allow } if !allow.is_empty() => {
            resp.headers_mut().insert(header::ALLOW, HeaderValue::from_static(allow));
        }
        _ => {}
    }
    if let Some(secs) = err.retry_after_secs() {
        resp.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    resp
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic.downcast_ref::<&str>().copied().or_else(|| panic.downcast_ref::<String>().map(String::as_str)).unwrap_or("(no message)")
}

/// Maps whatever the router or an extractor produced to an `ApiError`.
fn classify(err: poem::Error) -> ApiError {
    let err = match err.downcast::<ApiError>() {
        Ok(api) => return api,
        Err(other) => other,
    };
    if err.is::<NotFoundError>() {
        return ApiError::NotFound;
    }
    if err.is::<MethodNotAllowedError>() {
        return ApiError::MethodNotAllowed { allow: "" };
    }
    match err.status() {
        StatusCode::NOT_FOUND => ApiError::NotFound,
        StatusCode::METHOD_NOT_ALLOWED => ApiError::MethodNotAllowed { allow: "" },
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::PayloadTooLarge { limit: 0 },
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ApiError::UnsupportedMediaType(err.to_string()),
        s if s.is_client_error() => ApiError::BadRequest(err.to_string()),
        _ => ApiError::Internal(err.to_string()),
    }
}

/// `X-RateLimit-Policy` in the form of the IETF RateLimit draft (-01): the refill rate as a quota per
/// 60-second window, and the bucket's capacity as `burst`: `60;w=60;burst=120`.
pub fn policy(d: &Decision) -> String {
    format!("{};w=60;burst={}", d.per_minute, d.limit)
}

pub fn set_rate_headers(resp: &mut Response, d: &Decision) {
    let h = resp.headers_mut();
    h.insert("x-ratelimit-limit", HeaderValue::from(d.limit));
    h.insert("x-ratelimit-remaining", HeaderValue::from(d.remaining));
    h.insert("x-ratelimit-reset", HeaderValue::from(d.reset_secs));
    if let Ok(v) = HeaderValue::from_str(&policy(d)) {
        h.insert("x-ratelimit-policy", v);
    }
    if !d.allowed {
        h.insert(header::RETRY_AFTER, HeaderValue::from(d.retry_after_secs));
    }
}

fn is_preflight(req: &Request) -> bool {
    req.method() == Method::OPTIONS && req.headers().contains_key(header::ORIGIN) && req.headers().contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
}

impl<E: Endpoint> Edge<E> {
    /// Preflights carry no `X-Site-Id`, so one is allowed when any enabled site accepts the origin; the
    /// real request is then checked against its own site's list.
    async fn preflight(&self, req: &Request, origin: &str) -> Result<Response, ApiError> {
        if !req.uri().path().starts_with("/v1/") {
            return Err(ApiError::NotFound);
        }
        let o = origin.to_owned();
        let allowed = self.state.store.run(move |s| s.sites().origin_allowed_by_any(&o)).await?;
        if !allowed {
            return Err(ApiError::OriginNotAllowed(origin.to_owned()));
        }
        let mut resp = Response::builder().status(StatusCode::NO_CONTENT).finish();
        let h = resp.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, POST, OPTIONS"));
        h.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static(ALLOW_HEADERS));
        h.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
        Ok(resp)
    }
}

impl<E: Endpoint> Endpoint for Edge<E> {
    type Output = Response;

    async fn call(&self, mut req: Request) -> poem::Result<Response> {
        let started = Instant::now();
        let request_id =
            req.headers().get("x-request-id").and_then(|v| v.to_str().ok()).filter(|v| sane_request_id(v)).map(String::from).unwrap_or_else(new_request_id);
        let body_deadline = Instant::now() + std::time::Duration::from_secs(self.state.config.server.body_timeout_secs);
        let meta = Arc::new(RequestMeta::new(request_id.clone(), body_deadline));
        req.extensions_mut().insert(meta.clone());
        let unread = UnreadBody::track(&mut req);
        let ip = self.state.proxies.client(peer_ip(&req), req.headers());
        req.extensions_mut().insert(ClientIp(ip));
        let method = req.method().clone();
        let origin = req.headers().get(header::ORIGIN).and_then(|v| v.to_str().ok()).map(String::from);
        let preflight = is_preflight(&req);

        let mut route: Option<PathPattern> = None;
        let result = match (&origin, preflight) {
            (Some(o), true) => {
                route = Some(PathPattern("(preflight)".into()));
                self.preflight(&req, o).await.map_err(poem::Error::from)
            }
            // A panicking handler becomes a 500 here rather than a reset stream or connection, and still
            // gets the request id and the other headers below (poem's `CatchPanic` answers without them).
            // Unwind safety: the request's own state is dropped with it, and the shared state's mutexes
            // are all read through poisoning.
            _ => match AssertUnwindSafe(self.inner.call(req)).catch_unwind().await {
                Ok(r) => r.map(IntoResponse::into_response),
                Err(panic) => Err(ApiError::Internal(format!("handler panicked: {}", panic_message(panic.as_ref()))).into()),
            },
        };
        let mut resp = match result {
            Ok(r) => {
                route = route.or_else(|| r.data::<PathPattern>().cloned());
                r
            }
            Err(e) => {
                route = route.or_else(|| e.data::<PathPattern>().cloned());
                let api = classify(e);
                if matches!(api, ApiError::OriginNotAllowed(_)) {
                    meta.refuse_origin();
                }
                render(&api, &request_id)
            }
        };

        let decision = match meta.decision() {
            Some(d) => d,
            None => {
                let d = self.state.limiter.check(Key::ip(ip), self.state.config.limits.ip_per_minute);
                if !d.allowed {
                    self.state.metrics.rate_limited(LimitScope::Ip);
                    resp = render(&ApiError::RateLimited { retry_after_secs: d.retry_after_secs }, &request_id);
                }
                d
            }
        };
        set_rate_headers(&mut resp, &decision);
        let h = resp.headers_mut();
        if let Ok(v) = HeaderValue::from_str(&request_id) {
            h.insert("x-request-id", v);
        }
        if let Some(origin) = origin.filter(|_| !meta.origin_refused())
            && let Ok(v) = HeaderValue::from_str(&origin)
        {
            h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, v);
            h.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static(EXPOSE_HEADERS));
        }
        h.append(header::VARY, HeaderValue::from_static("Origin"));
        unread.drain(self.state.config.server.discard_body_bytes, body_deadline).await;
        let route = route.as_ref().map_or("(unmatched)", |p| &p.0);
        let (status, took, site) = (resp.status().as_u16(), started.elapsed(), meta.site.get().copied());
        self.state.metrics.request(route, status, site, took);
        // The access log: never a header value, a body or a query string (questions travel in bodies).
        tracing::info!(
            target: "sitebot::access",
            request_id,
            method = %method,
            route,
            status,
            duration_ms = took.as_secs_f64() * 1000.0,
            site = site.map(tracing::field::display),
            client = %ip,
            "request"
        );
        Ok(resp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids() {
        assert!(sane_request_id("abc-123_X.y:z"));
        assert!(!sane_request_id(""));
        assert!(!sane_request_id("has space"));
        assert!(!sane_request_id(&"a".repeat(129)));
        assert!(new_request_id().starts_with("req_"));
    }
}
