//! Single sign-on to the console through one OpenID Connect provider per server (`[console.oidc]`).
//!
//! The authorization code flow with PKCE (S256), through the `openidconnect` crate: discovery, the
//! code exchange, the ID token's signature, issuer, audience, expiry and nonce, and the userinfo answer
//! (whose subject must be the ID token's). What a sign-on has to prove here: an e-mail address the
//! provider says it verified (`email_verified: true`), in one of `allowed_domains`. The user is the
//! console user with that address; an unknown one is added with no site roles (`create_users`, on by
//! default: an owner or an admin grants roles, or the admin claim makes them an admin), or refused.
//! When `admin_claim` is set, it decides at every sign-on whether the user is an admin. The session is
//! the one a password sign-in starts (`session::start`), audited as `login` with `"method": "oidc"`.
//!
//! A sign-on in flight (state, nonce, PKCE verifier) is kept here, in memory, for [`PENDING_FOR`],
//! under the hash of its `state`, and bound to the browser that started it by a random value in a
//! `__Host-` cookie: it is taken out at the first callback that names it, so a replayed, forged or
//! foreign `state` finds nothing. A restart forgets sign-ons in flight; the user starts again.
//!
//! The issuer is the operator's choice, so it is trusted as the webhook and crawl targets a site names
//! are not: no network policy applies to it (a company's Keycloak is often on a private address), but
//! it is `https://` or on loopback (`config::OidcConfig`), and this client follows no redirect.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use openidconnect::core::{
    CoreAuthDisplay, CoreAuthPrompt, CoreAuthenticationFlow, CoreErrorResponseType, CoreGenderClaim, CoreJsonWebKey, CoreJweContentEncryptionAlgorithm,
    CoreJwsSigningAlgorithm, CoreProviderMetadata, CoreRevocableToken, CoreRevocationErrorResponse, CoreTokenIntrospectionResponse, CoreTokenType,
};
use openidconnect::{
    AdditionalClaims, AuthorizationCode, ClientId, ClientSecret, CsrfToken, EmptyExtraTokenFields, EndpointMaybeSet, EndpointNotSet, EndpointSet,
    IdTokenFields, IssuerUrl, Nonce, OAuth2TokenResponse, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, Scope, StandardErrorResponse,
    StandardTokenResponse, UserInfoClaims,
};
use poem::http::{StatusCode, header};
use poem::web::Data;
use poem::{Endpoint, EndpointExt, IntoResponse, Request, Response, handler};
use serde::{Deserialize, Serialize};
use serde_json::json;
use subtle::ConstantTimeEq;

use super::session;
use super::texts::{self, Texts};
use super::views::{audit, failed, message, see_other};
use crate::app::AppState;
use crate::config::OidcConfig;
use crate::domain::Email;
use crate::http::edge::client_ip;
use crate::metrics::SignIn;
use crate::secrets::{new_url_token, token_hash};

/// The cookie that binds a sign-on in flight to the browser that started it.
pub const COOKIE: &str = "__Host-sitebot_sso";
/// How long a started sign-on may take at the provider.
pub const PENDING_FOR: Duration = Duration::from_secs(10 * 60);
/// Sign-ons in flight at most (a start costs one entry; a flood of starts is refused past this).
const MAX_PENDING: usize = 10_000;
/// Sign-ons in flight from one client (an IPv4 address or an IPv6 /64) at most, so that one client cannot
/// take the others' share of `MAX_PENDING`; an office behind one address still has room.
const MAX_PENDING_PER_CLIENT: usize = 50;
/// How long the provider's discovery document (and so its signing keys) is used before it is read again.
const REDISCOVER: Duration = Duration::from_secs(3600);
/// After a failed discovery, sign-ons are refused at once for this long rather than each waiting for
/// the provider again.
const RETRY_DISCOVERY: Duration = Duration::from_secs(5);
/// Every request to the provider ends within this.
const PROVIDER_TIMEOUT: Duration = Duration::from_secs(10);

/// Claims beyond the standard ones (the admin claim is looked up here by its configured name).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Extra {
    #[serde(flatten)]
    claims: serde_json::Map<String, serde_json::Value>,
}

impl AdditionalClaims for Extra {}

type Fields = IdTokenFields<Extra, EmptyExtraTokenFields, CoreGenderClaim, CoreJweContentEncryptionAlgorithm, CoreJwsSigningAlgorithm>;
/// `openidconnect`'s `CoreClient` with [`Extra`] claims, as discovery makes it.
type SsoClient = openidconnect::Client<
    Extra,
    CoreAuthDisplay,
    CoreGenderClaim,
    CoreJweContentEncryptionAlgorithm,
    CoreJsonWebKey,
    CoreAuthPrompt,
    StandardErrorResponse<CoreErrorResponseType>,
    StandardTokenResponse<Fields, CoreTokenType>,
    CoreTokenIntrospectionResponse,
    CoreRevocableToken,
    CoreRevocationErrorResponse,
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

/// Why a sign-on did not get as far as the provider's answer about the user.
#[derive(Debug, thiserror::Error)]
pub enum SsoError {
    #[error("the provider's discovery failed: {0}")]
    Discovery(String),
    #[error("the provider was asked again too soon after a failed discovery")]
    Resting,
    #[error("the redirect URI is not a URL: {0}")]
    RedirectUrl(String),
    #[error("the code exchange failed: {0}")]
    Exchange(String),
    #[error("the token answer has no ID token")]
    NoIdToken,
    #[error("the ID token is not valid: {0}")]
    IdToken(String),
    #[error("the userinfo request failed: {0}")]
    UserInfo(String),
}

/// A sign-on in flight.
struct Pending {
    browser: [u8; 32],
    /// Who started it, for `MAX_PENDING_PER_CLIENT`.
    client: crate::ratelimit::Client,
    nonce: Nonce,
    verifier: PkceCodeVerifier,
    redirect: RedirectUrl,
    /// The console page to return to once signed on (`routing::safe_next`).
    next: Option<String>,
    at: Instant,
}

/// Why a sign-on was not started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TooMany {
    InAll,
    FromClient,
}

/// What the provider says about the user who signed on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub email: Option<String>,
    pub email_verified: bool,
    /// Whether the admin claim holds; `None` when no admin claim is configured.
    pub admin: Option<bool>,
}

/// Why a sign-on is refused (the audit log's `reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    NoEmail,
    Unverified,
    Domain,
    UnknownUser,
}

impl Refusal {
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::NoEmail => "no_email",
            Refusal::Unverified => "unverified",
            Refusal::Domain => "domain",
            Refusal::UnknownUser => "unknown_user",
        }
    }

    fn text(self, t: &Texts) -> &'static str {
        match self {
            Refusal::NoEmail => t.sso_no_email,
            Refusal::Unverified => t.sso_unverified,
            Refusal::Domain => t.sso_domain,
            Refusal::UnknownUser => t.sso_unknown_user,
        }
    }
}

/// The address a sign-on may use, or why not: present, verified, of an allowed domain.
pub fn judge(config: &OidcConfig, id: &Identity) -> Result<Email, Refusal> {
    let email = id.email.as_deref().and_then(|e| Email::parse(e).ok()).ok_or(Refusal::NoEmail)?;
    if !id.email_verified {
        return Err(Refusal::Unverified);
    }
    if !config.allows(email.as_str()) {
        return Err(Refusal::Domain);
    }
    Ok(email)
}

/// Whether a claim's value is `wanted` or, as a list (`groups`, `roles`), contains it.
fn claim_holds(value: Option<&serde_json::Value>, wanted: &str) -> bool {
    match value {
        Some(serde_json::Value::String(s)) => s == wanted,
        Some(serde_json::Value::Array(items)) => items.iter().any(|i| i.as_str() == Some(wanted)),
        _ => false,
    }
}

/// The server's single sign-on: its configuration, the provider's discovered metadata, the sign-ons
/// in flight.
pub struct Sso {
    config: Option<OidcConfig>,
    http: Option<reqwest::Client>,
    provider: tokio::sync::Mutex<Discovered>,
    pending: Mutex<HashMap<[u8; 32], Pending>>,
}

#[derive(Default)]
struct Discovered {
    metadata: Option<(CoreProviderMetadata, Instant)>,
    failed_at: Option<Instant>,
}

impl Sso {
    pub fn new(config: Option<OidcConfig>) -> Arc<Self> {
        // No redirects: a provider's endpoint that redirects is a misconfiguration, and following one
        // would let a response steer this client elsewhere.
        let http = config.as_ref().and_then(|_| {
            reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(PROVIDER_TIMEOUT)
                .user_agent(concat!("sitebot/", env!("CARGO_PKG_VERSION")))
                .build()
                .inspect_err(|e| tracing::error!(error = %e, "cannot build the single sign-on client"))
                .ok()
        });
        Arc::new(Self { config, http, provider: tokio::sync::Mutex::default(), pending: Mutex::default() })
    }

    pub fn offered(&self) -> bool {
        self.config.is_some()
    }

    /// The provider's metadata, discovered at the first sign-on and again after [`REDISCOVER`].
    async fn metadata(&self, config: &OidcConfig, http: &reqwest::Client) -> Result<CoreProviderMetadata, SsoError> {
        let mut d = self.provider.lock().await;
        if let Some((m, at)) = &d.metadata
            && at.elapsed() < REDISCOVER
        {
            return Ok(m.clone());
        }
        if d.failed_at.is_some_and(|at| at.elapsed() < RETRY_DISCOVERY) {
            return Err(SsoError::Resting);
        }
        let issuer = IssuerUrl::new(config.issuer.trim().to_owned()).map_err(|e| SsoError::Discovery(e.to_string()))?;
        match CoreProviderMetadata::discover_async(issuer, http).await {
            Ok(m) => {
                d.metadata = Some((m.clone(), Instant::now()));
                d.failed_at = None;
                Ok(m)
            }
            Err(e) => {
                d.failed_at = Some(Instant::now());
                Err(SsoError::Discovery(error_chain(&e)))
            }
        }
    }

    async fn client(&self, config: &OidcConfig, http: &reqwest::Client, redirect: RedirectUrl) -> Result<SsoClient, SsoError> {
        let metadata = self.metadata(config, http).await?;
        let secret = config.client_secret.as_ref().map(|s| ClientSecret::new(s.expose().to_owned()));
        Ok(SsoClient::from_provider_metadata(metadata, ClientId::new(config.client_id.clone()), secret).set_redirect_uri(redirect))
    }

    /// Keeps a sign-on in flight, unless too many are: in all, or from `p`'s client.
    fn remember(&self, state: [u8; 32], p: Pending) -> Result<(), TooMany> {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if pending.len() >= MAX_PENDING {
            pending.retain(|_, p| p.at.elapsed() < PENDING_FOR);
            if pending.len() >= MAX_PENDING {
                return Err(TooMany::InAll);
            }
        }
        if pending.values().filter(|q| q.client == p.client && q.at.elapsed() < PENDING_FOR).count() >= MAX_PENDING_PER_CLIENT {
            return Err(TooMany::FromClient);
        }
        pending.insert(state, p);
        Ok(())
    }

    /// Takes the sign-on a callback's `state` names out: it can be used once.
    fn take(&self, state: &str) -> Option<Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner()).remove(&token_hash(state))
    }

    /// The code exchanged (with the PKCE verifier), the ID token checked (with the nonce), the userinfo
    /// answer read: what the provider says about the user.
    async fn identity(&self, config: &OidcConfig, http: &reqwest::Client, code: &str, p: Pending) -> Result<Identity, SsoError> {
        let client = self.client(config, http, p.redirect).await?;
        let token = client
            .exchange_code(AuthorizationCode::new(code.to_owned()))
            .map_err(|e| SsoError::Exchange(e.to_string()))?
            .set_pkce_verifier(p.verifier)
            .request_async(http)
            .await
            .map_err(|e| SsoError::Exchange(error_chain(&e)))?;
        let id_token = token.extra_fields().id_token().ok_or(SsoError::NoIdToken)?;
        let claims = id_token.claims(&client.id_token_verifier(), &p.nonce).map_err(|e| SsoError::IdToken(e.to_string()))?;
        let mut email = claims.email().map(|e| e.as_str().to_owned());
        let mut email_verified = claims.email_verified().unwrap_or(false);
        let mut extra = claims.additional_claims().claims.clone();
        // Providers put the e-mail and groups in the ID token, the userinfo answer or both (oidc-provider
        // and Keycloak by default: userinfo when an access token is issued). What the ID token says wins.
        if let Ok(request) = client.user_info(token.access_token().clone(), Some(claims.subject().clone())) {
            let info: UserInfoClaims<Extra, CoreGenderClaim> = request.request_async(http).await.map_err(|e| SsoError::UserInfo(error_chain(&e)))?;
            if email.is_none() {
                email = info.email().map(|e| e.as_str().to_owned());
                email_verified = info.email_verified().unwrap_or(false);
            }
            for (k, v) in &info.additional_claims().claims {
                extra.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        let admin = config.admin_claim.as_ref().zip(config.admin_value.as_ref()).map(|(name, value)| claim_holds(extra.get(name), value));
        Ok(Identity { email, email_verified, admin })
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        s.push_str(": ");
        s.push_str(&cause.to_string());
        source = cause.source();
    }
    s
}

/// The value of this request's sign-on cookie, if it sent one.
fn browser_value(req: &Request) -> Option<String> {
    req.headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.to_owned())
}

fn with_cookie(mut resp: Response, cookie: &str) -> Response {
    if let Ok(v) = cookie.parse() {
        resp.headers_mut().append(header::SET_COOKIE, v);
    }
    resp
}

fn cleared() -> String {
    format!("{COOKIE}=; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=0")
}

/// The redirect URI: configured, or this server's callback on the host the browser asked for.
fn redirect_url(config: &OidcConfig, req: &Request) -> Result<RedirectUrl, SsoError> {
    let url = match &config.redirect_url {
        Some(u) => u.clone(),
        None => {
            let host = req.headers().get(header::HOST).and_then(|v| v.to_str().ok()).or_else(|| req.uri().authority().map(|a| a.as_str())).unwrap_or("");
            format!("https://{host}/console/oidc/callback")
        }
    };
    RedirectUrl::new(url).map_err(|e| SsoError::RedirectUrl(e.to_string()))
}

fn unavailable(t: &Texts, e: &SsoError) -> Response {
    tracing::warn!(error = %e, "single sign-on: the provider cannot be used");
    message(t, None, StatusCode::SERVICE_UNAVAILABLE, t.sso_failed_title, t.sso_unavailable)
}

/// `GET /console/oidc/start`: to the provider, with a new state, nonce and PKCE challenge.
#[handler]
pub async fn start(req: &Request, Data(state): Data<&Arc<AppState>>, Data(sso): Data<&Arc<Sso>>) -> Response {
    let t = texts::for_request(req);
    let (Some(config), Some(http)) = (&sso.config, &sso.http) else { return super::views::not_found(t, None) };
    let next = super::routing::next_of(req);
    if session::current(state, req).await.is_some() {
        return see_other(super::routing::landing(next.as_deref()));
    }
    let client = match redirect_url(config, req) {
        Ok(redirect) => sso.client(config, http, redirect.clone()).await.map(|c| (c, redirect)),
        Err(e) => Err(e),
    };
    let (client, redirect) = match client {
        Ok(c) => c,
        Err(e) => return unavailable(t, &e),
    };
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let mut auth = client.authorize_url(CoreAuthenticationFlow::AuthorizationCode, CsrfToken::new_random, Nonce::new_random);
    for scope in config.scopes.iter().filter(|s| s.as_str() != "openid") {
        auth = auth.add_scope(Scope::new(scope.clone()));
    }
    let (url, csrf, nonce) = auth.set_pkce_challenge(challenge).url();
    let browser = new_url_token();
    let client = crate::ratelimit::Client::of(client_ip(req));
    let pending = Pending { browser: token_hash(&browser), client, nonce, verifier, redirect, next, at: Instant::now() };
    match sso.remember(token_hash(csrf.secret()), pending) {
        Ok(()) => {}
        Err(TooMany::InAll) => {
            tracing::warn!("single sign-on: too many sign-ons in flight");
            return message(t, None, StatusCode::TOO_MANY_REQUESTS, t.too_fast_title, t.too_fast);
        }
        Err(TooMany::FromClient) => {
            tracing::warn!(client = ?client, "single sign-on: too many sign-ons in flight from one client");
            return message(t, None, StatusCode::TOO_MANY_REQUESTS, t.too_fast_title, t.sso_too_many);
        }
    }
    let cookie = format!("{COOKIE}={browser}; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age={}", PENDING_FOR.as_secs());
    with_cookie(see_other(url.as_str()), &cookie)
}

/// `GET /console/oidc/callback`: the provider's answer. Signs the user in, or says why not.
#[handler]
pub async fn callback(req: &Request, Data(state): Data<&Arc<AppState>>, Data(sso): Data<&Arc<Sso>>) -> Response {
    let t = texts::for_request(req);
    let (Some(config), Some(http)) = (&sso.config, &sso.http) else { return super::views::not_found(t, None) };
    let params: HashMap<String, String> = url::form_urlencoded::parse(req.uri().query().unwrap_or("").as_bytes()).into_owned().collect();
    let address = client_ip(req).to_string();
    let refuse = |status: StatusCode, text: &str| with_cookie(message(t, None, status, t.sso_failed_title, text), &cleared());

    // The state must name a sign-on in flight, started in this browser, not too long ago; either way
    // it is used up now.
    let pending = params.get("state").and_then(|s| sso.take(s));
    let browser = browser_value(req).map(|v| token_hash(&v));
    let pending = pending.filter(|p| browser.is_some_and(|b| bool::from(b.ct_eq(&p.browser))) && p.at.elapsed() < PENDING_FOR);
    let Some(pending) = pending else {
        state.metrics.sign_in(SignIn::Failed);
        tracing::warn!(%address, "single sign-on: a callback with an unknown, used, expired or foreign state");
        audit(state, "oidc", None, "login_failed", json!({"method": "oidc", "reason": "state", "address": address})).await;
        return refuse(StatusCode::BAD_REQUEST, t.sso_expired);
    };
    if let Some(error) = params.get("error") {
        tracing::info!(%address, error = %error.chars().take(100).collect::<String>(), "single sign-on: the provider did not sign the user in");
        return refuse(StatusCode::FORBIDDEN, t.sso_denied);
    }
    let Some(code) = params.get("code") else { return refuse(StatusCode::BAD_REQUEST, t.sso_expired) };
    let next = pending.next.clone();
    let identity = match sso.identity(config, http, code, pending).await {
        Ok(i) => i,
        Err(e @ (SsoError::Discovery(_) | SsoError::Resting)) => return with_cookie(unavailable(t, &e), &cleared()),
        Err(e) => {
            tracing::warn!(%address, error = %e, "single sign-on: the provider's answer cannot be used");
            state.metrics.sign_in(SignIn::Failed);
            return refuse(StatusCode::BAD_GATEWAY, t.sso_broken);
        }
    };
    let actor = identity.email.as_deref().unwrap_or("oidc").chars().take(254).collect::<String>();
    let why = match judge(config, &identity) {
        Ok(email) => {
            let (admin, create) = (identity.admin, config.create_users);
            match state.store.run(move |s| s.users().single_sign_on(&email, admin, create)).await {
                Ok(Some(s)) => Ok(s),
                Ok(None) => Err(Refusal::UnknownUser),
                Err(e) => return failed(t, None, e),
            }
        }
        Err(why) => Err(why),
    };
    let signed_on = match why {
        Ok(s) => s,
        Err(why) => {
            state.metrics.sign_in(SignIn::Failed);
            tracing::warn!(%address, reason = why.as_str(), "single sign-on refused");
            audit(state, &actor, None, "login_failed", json!({"method": "oidc", "reason": why.as_str(), "address": address})).await;
            return refuse(StatusCode::FORBIDDEN, why.text(t));
        }
    };
    let user = signed_on.user;
    if signed_on.created {
        audit(state, "oidc", None, "user_added", json!({"user": user.email, "admin": user.is_admin, "via": "oidc"})).await;
    }
    if signed_on.admin_changed {
        audit(state, "oidc", None, "admin_changed", json!({"user": user.email, "admin": user.is_admin, "via": "oidc"})).await;
    }
    let cookie = match session::start(state, &user).await {
        Ok(c) => c,
        Err(e) => return failed(t, None, e),
    };
    state.metrics.sign_in(SignIn::Succeeded);
    audit(state, &user.email, None, "login", json!({"method": "oidc", "address": address})).await;
    with_cookie(with_cookie(see_other(super::routing::landing(next.as_deref())), &cookie), &cleared())
}

/// Password sign-in and setup links (which set a password), refused with a readable page when
/// `[console] local_passwords = false`.
pub fn passwords_only<E: Endpoint + 'static>(ep: E) -> impl Endpoint<Output = Response> {
    ep.around(|ep, req| async move {
        let on = req.data::<Arc<AppState>>().is_none_or(|s| s.config.console.local_passwords);
        if !on {
            let t = texts::for_request(&req);
            return Ok(message(t, None, StatusCode::FORBIDDEN, t.passwords_off_title, t.passwords_off));
        }
        ep.call(req).await.map(IntoResponse::into_response)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> OidcConfig {
        OidcConfig { issuer: "https://id.example.com".into(), client_id: "sitebot".into(), allowed_domains: vec!["example.com".into()], ..Default::default() }
    }

    fn id(email: Option<&str>, verified: bool) -> Identity {
        Identity { email: email.map(str::to_owned), email_verified: verified, admin: None }
    }

    #[test]
    fn only_a_verified_address_of_an_allowed_domain_signs_on() {
        let c = config();
        assert_eq!(judge(&c, &id(Some("ann@example.com"), true)).unwrap().as_str(), "ann@example.com");
        assert_eq!(judge(&c, &id(Some("ann@example.com"), false)), Err(Refusal::Unverified));
        assert_eq!(judge(&c, &id(Some("eve@example.org"), true)), Err(Refusal::Domain));
        assert_eq!(judge(&c, &id(Some("not an address"), true)), Err(Refusal::NoEmail));
        assert_eq!(judge(&c, &id(None, true)), Err(Refusal::NoEmail));
    }

    #[test]
    fn a_claim_holds_as_a_value_or_a_member() {
        let groups = json!(["staff", "sitebot-admins"]);
        assert!(claim_holds(Some(&groups), "sitebot-admins"));
        assert!(!claim_holds(Some(&groups), "sitebot"));
        assert!(claim_holds(Some(&json!("sitebot-admins")), "sitebot-admins"));
        assert!(!claim_holds(Some(&json!(true)), "true") && !claim_holds(None, "x"));
    }

    #[test]
    fn a_sign_on_is_taken_once() {
        let sso = Sso::new(Some(config()));
        assert!(sso.remember(token_hash("state"), pending([10, 0, 0, 1])).is_ok());
        assert!(sso.take("forged").is_none());
        assert!(sso.take("state").is_some());
        assert!(sso.take("state").is_none());
    }

    fn pending(ip: [u8; 4]) -> Pending {
        Pending {
            browser: [1; 32],
            client: crate::ratelimit::Client::of(std::net::IpAddr::from(ip)),
            nonce: Nonce::new("n".into()),
            verifier: PkceCodeVerifier::new("v".repeat(43)),
            redirect: RedirectUrl::new("https://console.example/console/oidc/callback".into()).unwrap(),
            next: None,
            at: Instant::now(),
        }
    }

    #[test]
    fn one_client_has_a_share_of_the_sign_ons_in_flight_and_a_finished_one_frees_its_place() {
        let sso = Sso::new(Some(config()));
        for i in 0..MAX_PENDING_PER_CLIENT {
            assert!(sso.remember(token_hash(&format!("s{i}")), pending([10, 0, 0, 1])).is_ok());
        }
        assert_eq!(sso.remember(token_hash("one more"), pending([10, 0, 0, 1])), Err(TooMany::FromClient));
        assert!(sso.remember(token_hash("another client"), pending([10, 0, 0, 2])).is_ok());
        assert!(sso.take("s0").is_some());
        assert!(sso.remember(token_hash("one more"), pending([10, 0, 0, 1])).is_ok(), "a finished sign-on frees its place");
    }
}
