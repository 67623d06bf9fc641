//! Route scopes: who a request counts against, and for tenant routes, which site it acts for.
//!
//! `TenantScope` resolves the site from `Authorization: Bearer` (which identifies the site by itself
//! and skips the Origin check) or from `X-Site-Id`, counts the request against the site's tier budget,
//! and refuses disabled sites and browser origins outside the site's list. Handlers read the result as
//! `Data<&Tenant>`. `PublicScope` counts the request against the client IP.
//!
//! A site's budget is shared fairly: a visitor (client IP, IPv6 by /64) also has a bucket of its own,
//! `limits.visitor_share` of the tier's rate, and a request must pass both (one refused by the
//! visitor's bucket takes nothing from the site's). Calls with the site's bearer token count against a
//! third bucket, at the tier's full rate, which visitors neither drain nor are drained by.

use std::sync::Arc;

use poem::http::header;
use poem::{Endpoint, IntoResponse, Middleware, Request, Response};

use super::edge::{RequestMeta, client_ip};
use super::error::ApiError;
use crate::app::AppState;
use crate::domain::SiteId;
use crate::metrics::LimitScope;
use crate::ratelimit::{Client, Key};
use crate::store::Site;

/// The site a tenant route acts for.
#[derive(Debug, Clone)]
pub struct Tenant {
    pub site: Site,
    /// True when a bearer token identified the site (server-to-server call).
    pub via_token: bool,
}

fn state_and_meta(req: &Request) -> Result<(Arc<AppState>, Arc<RequestMeta>), ApiError> {
    let state = req.data::<Arc<AppState>>().cloned().ok_or_else(|| ApiError::Internal("AppState missing".into()))?;
    let meta = req.extensions().get::<Arc<RequestMeta>>().cloned().ok_or_else(|| ApiError::Internal("RequestMeta missing".into()))?;
    Ok((state, meta))
}

/// `Some(token)` for `Authorization: Bearer <token>`; other schemes are not ours and are ignored.
fn bearer(req: &Request) -> Option<String> {
    let v = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, rest) = v.split_once(' ').unwrap_or((v, ""));
    scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim().to_owned())
}

/// The site named by `X-Site-Id`, if the header is there; 400 when it is not a GUID.
pub fn header_site_id(req: &Request) -> Result<Option<SiteId>, ApiError> {
    req.headers().get("x-site-id").map(|v| SiteId::parse(v.to_str().unwrap_or("")).map_err(|e| ApiError::InvalidSiteId(e.0))).transpose()
}

async fn resolve(state: &AppState, req: &Request) -> Result<Tenant, ApiError> {
    let header_site = header_site_id(req)?;
    if let Some(token) = bearer(req) {
        if token.is_empty() || token.len() > 256 {
            return Err(ApiError::InvalidToken);
        }
        let site = state.store.run(move |s| s.sites().find_by_token(&token)).await?.ok_or(ApiError::InvalidToken)?;
        if header_site.is_some_and(|h| h != site.id) {
            return Err(ApiError::TokenSiteMismatch);
        }
        return Ok(Tenant { site, via_token: true });
    }
    let id = header_site.ok_or(ApiError::SiteIdRequired)?;
    Ok(Tenant { site: site_by_id(state, id).await?, via_token: false })
}

async fn site_by_id(state: &AppState, id: SiteId) -> Result<Site, ApiError> {
    state.store.run(move |s| s.site(id).get()).await?.ok_or(ApiError::SiteNotFound)
}

/// Counts the request against every bucket in `checks`, records the binding decision for the edge's
/// headers, and refuses it with 429 when one bucket is empty (then nothing is taken from the others).
fn charge(state: &AppState, meta: &RequestMeta, checks: &[(Key, u32)]) -> Result<(), ApiError> {
    let (binding, d) = state.limiter.check_all(checks);
    meta.record(d);
    if d.allowed {
        return Ok(());
    }
    let scope = match checks.get(binding).map(|c| c.0) {
        Some(Key::Site(_)) => LimitScope::Site,
        Some(Key::SiteToken(_)) => LimitScope::Token,
        Some(Key::Visitor(..)) => LimitScope::Visitor,
        Some(Key::Ip(_)) | None => LimitScope::Ip,
    };
    state.metrics.rate_limited(scope);
    Err(ApiError::RateLimited { retry_after_secs: d.retry_after_secs })
}

/// The buckets a tenant request counts against: the token's, or the visitor's and the site's.
fn tenant_buckets(state: &AppState, tenant: &Tenant, client: std::net::IpAddr) -> Vec<(Key, u32)> {
    let (id, rate) = (tenant.site.id, tenant.site.tier.per_minute());
    if tenant.via_token {
        return vec![(Key::SiteToken(id), rate)];
    }
    vec![(Key::Visitor(id, Client::of(client)), state.config.limits.visitor_rate(rate)), (Key::Site(id), rate)]
}

pub struct TenantScope;

impl<E: Endpoint> Middleware<E> for TenantScope {
    type Output = TenantEndpoint<E>;
    fn transform(&self, ep: E) -> Self::Output {
        TenantEndpoint(ep)
    }
}

pub struct TenantEndpoint<E>(E);

impl<E: Endpoint> Endpoint for TenantEndpoint<E> {
    type Output = Response;

    async fn call(&self, mut req: Request) -> poem::Result<Response> {
        let (state, meta) = state_and_meta(&req)?;
        let tenant = match resolve(&state, &req).await {
            Ok(t) => t,
            Err(e) => {
                // Without a site, the failed request counts against the client's address.
                charge(&state, &meta, &[(Key::ip(client_ip(&req)), state.config.limits.ip_per_minute)])?;
                return Err(e.into());
            }
        };
        meta.set_site(tenant.site.id);
        charge(&state, &meta, &tenant_buckets(&state, &tenant, client_ip(&req)))?;
        if !tenant.site.enabled {
            return Err(ApiError::SiteDisabled.into());
        }
        if !tenant.via_token
            && let Some(origin) = req.headers().get(header::ORIGIN).and_then(|v| v.to_str().ok())
            && !tenant.site.allows_origin(origin)
        {
            return Err(ApiError::OriginNotAllowed(origin.to_owned()).into());
        }
        req.extensions_mut().insert(tenant);
        self.0.call(req).await.map(IntoResponse::into_response)
    }
}

/// A public route: counted against the client IP. `PublicScope::OPTIONAL_SITE` also resolves the site
/// when the request names one (`X-Site-Id` or a bearer token), for routes whose answer depends on it
/// (pricing in the site's currency); handlers read it as `Data<&OptionalTenant>`. Such a route stays
/// public: the site is not charged, and its state and origins are not checked.
#[derive(Default)]
pub struct PublicScope {
    resolve_site: bool,
}

impl PublicScope {
    pub const OPTIONAL_SITE: PublicScope = PublicScope { resolve_site: true };
}

/// The site a public route was asked about, if any.
#[derive(Debug, Clone)]
pub struct OptionalTenant(pub Option<Tenant>);

impl<E: Endpoint> Middleware<E> for PublicScope {
    type Output = PublicEndpoint<E>;
    fn transform(&self, ep: E) -> Self::Output {
        PublicEndpoint { inner: ep, resolve_site: self.resolve_site }
    }
}

pub struct PublicEndpoint<E> {
    inner: E,
    resolve_site: bool,
}

impl<E: Endpoint> Endpoint for PublicEndpoint<E> {
    type Output = Response;

    async fn call(&self, mut req: Request) -> poem::Result<Response> {
        let (state, meta) = state_and_meta(&req)?;
        charge(&state, &meta, &[(Key::ip(client_ip(&req)), state.config.limits.ip_per_minute)])?;
        if self.resolve_site {
            let tenant = match header_site_id(&req)? {
                Some(id) => Some(Tenant { site: site_by_id(&state, id).await?, via_token: false }),
                None => None,
            };
            req.extensions_mut().insert(OptionalTenant(tenant));
        }
        self.inner.call(req).await.map(IntoResponse::into_response)
    }
}
