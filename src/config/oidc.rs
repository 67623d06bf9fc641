//! `[console.oidc]`: single sign-on to the console through an OpenID Connect provider (#25 oidc).

use serde::{Deserialize, Serialize};

use super::{ConfigError, Secret};

/// One OpenID Connect provider for the whole server (Keycloak, Entra ID, Authentik, ...). The console's
/// sign-in page then offers "Sign in with single sign-on": the authorization code flow with PKCE, users
/// matched by their verified e-mail address (docs/console.md, "Single sign-on").
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OidcConfig {
    /// The provider's issuer URL exactly as its discovery document names it (e.g.
    /// `https://id.example.com/realms/staff`); `/.well-known/openid-configuration` is read from it.
    /// `https://`, or `http://` on a loopback address only (a provider on the same machine).
    pub issuer: String,
    /// The client id registered at the provider for this server.
    pub client_id: String,
    /// The client's secret (`SITEBOT_CONSOLE__OIDC__CLIENT_SECRET`); unset for a public client, which
    /// PKCE alone protects.
    pub client_secret: Option<Secret>,
    /// E-mail domains whose users may sign in (`example.com`; exact, case-insensitive; a subdomain is a
    /// domain of its own). At least one.
    pub allowed_domains: Vec<String>,
    /// Scopes asked for besides `openid` (which is always asked for).
    pub scopes: Vec<String>,
    /// A claim (of the ID token or the userinfo answer) that makes a user an admin when it is, or
    /// contains, `admin_value`: e.g. `groups` containing `sitebot-admins`. When set, it decides at
    /// every single sign-on: a user without it stops being an admin.
    pub admin_claim: Option<String>,
    pub admin_value: Option<String>,
    /// Whether a user of an allowed domain whom the console does not know yet is added at their first
    /// sign-on (with no site roles: an admin or an owner grants them), or refused.
    pub create_users: bool,
    /// The redirect URI registered at the provider. Unset: `https://HOST/console/oidc/callback`, with
    /// the host the browser asked for.
    pub redirect_url: Option<String>,
}

impl Default for OidcConfig {
    fn default() -> Self {
        Self {
            issuer: String::new(),
            client_id: String::new(),
            client_secret: None,
            allowed_domains: Vec::new(),
            scopes: vec!["email".into()],
            admin_claim: None,
            admin_value: None,
            create_users: true,
            redirect_url: None,
        }
    }
}

impl OidcConfig {
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        let bad = |key: &str, message: &str| ConfigError::BadValue { key: format!("console.oidc.{key}"), message: message.into() };
        let issuer = url::Url::parse(self.issuer.trim()).map_err(|_| bad("issuer", "must be the provider's issuer URL"))?;
        let loopback = match issuer.host() {
            Some(url::Host::Ipv4(a)) => a.is_loopback(),
            Some(url::Host::Ipv6(a)) => a.is_loopback(),
            Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            None => false,
        };
        if !(issuer.scheme() == "https" || (issuer.scheme() == "http" && loopback)) {
            return Err(bad("issuer", "must be https:// (http:// only on a loopback address)"));
        }
        if self.client_id.trim().is_empty() {
            return Err(bad("client_id", "is required"));
        }
        if self.allowed_domains.is_empty() || self.allowed_domains.iter().any(|d| d.trim().is_empty() || d.contains('@')) {
            return Err(bad("allowed_domains", "must name at least one e-mail domain, such as \"example.com\""));
        }
        if self.admin_claim.is_some() != self.admin_value.is_some() {
            return Err(ConfigError::Invalid("console.oidc.admin_claim and console.oidc.admin_value go together: set both or neither".into()));
        }
        if let Some(u) = &self.redirect_url
            && !url::Url::parse(u).is_ok_and(|u| u.scheme() == "https" && u.path() == "/console/oidc/callback")
        {
            return Err(bad("redirect_url", "must be https://HOST/console/oidc/callback"));
        }
        Ok(())
    }

    /// Whether a verified address's domain is one of `allowed_domains`.
    pub fn allows(&self, email: &str) -> bool {
        let Some((_, domain)) = email.rsplit_once('@') else { return false };
        self.allowed_domains.iter().any(|d| d.trim().eq_ignore_ascii_case(domain))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(issuer: &str) -> OidcConfig {
        OidcConfig { issuer: issuer.into(), client_id: "sitebot".into(), allowed_domains: vec!["Example.com".into()], ..Default::default() }
    }

    #[test]
    fn the_issuer_is_https_or_on_loopback() {
        assert!(config("https://id.example.com/realms/staff").validate().is_ok());
        assert!(config("http://127.0.0.1:8080").validate().is_ok());
        assert!(config("http://localhost:8080").validate().is_ok());
        let err = config("http://id.example.com").validate().unwrap_err().to_string();
        assert!(err.contains("console.oidc.issuer"), "{err}");
        assert!(config("id.example.com").validate().is_err());
    }

    #[test]
    fn domains_match_exactly_and_without_case() {
        let c = config("https://id.example.com");
        assert!(c.allows("ann@example.com") && c.allows("ann@EXAMPLE.COM"));
        assert!(!c.allows("ann@sub.example.com") && !c.allows("ann@example.com.evil") && !c.allows("example.com"));
        let mut c = c;
        c.allowed_domains.clear();
        assert!(c.validate().unwrap_err().to_string().contains("allowed_domains"));
    }
}
