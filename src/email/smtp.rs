//! One SMTP attempt through lettre, under the network rules: the server's name is resolved here, every
//! address checked against `[email] allow_private_networks` (loopback and private addresses refused
//! without it, link-local and metadata ones always), and lettre connects to the checked address while
//! TLS verifies the certificate for the name, so a DNS answer that changes cannot lead it elsewhere.
//!
//! `smtp://` is STARTTLS, required (a server that does not offer it is a failed attempt), unless
//! `[email] plaintext`; `smtps://` is TLS from the first byte. The URL's user and password, if any,
//! authenticate; the URL is never logged, only its host.

use std::net::IpAddr;
use std::time::Duration;

use lettre::message::Mailbox;
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};
use lettre::transport::smtp::extension::ClientId;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use crate::config::{ConfigError, EmailConfig};
use crate::domain::{NetworkPolicy, is_link_local_or_metadata};

/// How the connection is secured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Security {
    StartTls,
    Tls,
    /// `[email] plaintext`: a relay on a private network, no encryption.
    Plain,
}

/// The SMTP server as configured, parsed once.
#[derive(Clone)]
pub struct Mailer {
    host: String,
    port: u16,
    security: Security,
    credentials: Option<Credentials>,
    extra_roots: Vec<Vec<u8>>,
    policy: NetworkPolicy,
    timeout: Duration,
    pub from: Mailbox,
    /// The domain of `from`: the right part of every Message-ID.
    pub domain: String,
    hello: String,
}

impl std::fmt::Debug for Mailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailer").field("host", &self.host).field("port", &self.port).field("security", &self.security).finish_non_exhaustive()
    }
}

/// Why an attempt failed, and whether another could succeed.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct SendError {
    pub message: String,
    /// The server refused for good (a 5xx answer): trying again will not help.
    pub permanent: bool,
}

fn bad(key: &str, message: impl Into<String>) -> ConfigError {
    ConfigError::BadValue { key: format!("email.{key}"), message: message.into() }
}

impl Mailer {
    /// Parses `[email]`; `Ok(None)` when e-mail is off. Every mistake names its key (the URL itself is
    /// never repeated: it may hold a password).
    pub fn from_config(c: &EmailConfig, hostnames: &[String]) -> Result<Option<Mailer>, ConfigError> {
        let (Some(raw), Some(from)) = (&c.smtp_url, &c.from) else { return Ok(None) };
        let url = url::Url::parse(raw.expose().trim()).map_err(|_| bad("smtp_url", "is not a URL such as smtp://user:password@mail.example.com:587"))?;
        let security = match (url.scheme(), c.plaintext) {
            ("smtp", false) => Security::StartTls,
            ("smtp", true) => Security::Plain,
            ("smtps", false) => Security::Tls,
            ("smtps", true) => return Err(bad("plaintext", "does not go with an smtps:// URL")),
            (other, _) => return Err(bad("smtp_url", format!("must start with smtp:// (STARTTLS) or smtps:// (TLS), not {other}://"))),
        };
        let host = match url.host() {
            Some(url::Host::Domain(d)) => d.to_owned(),
            Some(url::Host::Ipv4(ip)) => ip.to_string(),
            Some(url::Host::Ipv6(ip)) => ip.to_string(),
            None => return Err(bad("smtp_url", "needs a host")),
        };
        let port = url.port().unwrap_or(if security == Security::Tls { 465 } else { 587 });
        let decode = |s: &str| percent_decode(s);
        let credentials = (!url.username().is_empty()).then(|| Credentials::new(decode(url.username()), decode(url.password().unwrap_or(""))));
        let policy = NetworkPolicy { allow_http: c.plaintext, allow_private_networks: c.allow_private_networks, allowed_link_local: std::sync::Arc::new([]) };
        if let Ok(ip) = host.parse::<IpAddr>() {
            if !policy.allows(ip) {
                return Err(bad("smtp_url", format!("{ip} is not a public address (the operator can set email.allow_private_networks = true)")));
            }
        } else if !c.allow_private_networks {
            let d = host.trim_end_matches('.').to_ascii_lowercase();
            if d == "localhost" || d.ends_with(".localhost") || d.ends_with(".local") || d.ends_with(".internal") {
                return Err(bad("smtp_url", format!("{host} is not a public address (the operator can set email.allow_private_networks = true)")));
            }
        }
        let from: Mailbox = from.parse().map_err(|_| bad("from", "is not an address such as sitebot@example.com or \"Sitebot <sitebot@example.com>\""))?;
        let domain = from.email.domain().to_owned();
        let mut extra_roots = Vec::new();
        if let Some(path) = &c.tls_ca_file {
            let pem = std::fs::read(path).map_err(|e| bad("tls_ca_file", format!("cannot read {}: {e}", path.display())))?;
            Certificate::from_pem(&pem).map_err(|e| bad("tls_ca_file", format!("{}: {e}", path.display())))?;
            extra_roots.push(pem);
        }
        let hello = hostnames.first().cloned().unwrap_or_else(|| "localhost".into());
        Ok(Some(Mailer { host, port, security, credentials, extra_roots, policy, timeout: Duration::from_secs(c.timeout_secs), from, domain, hello }))
    }

    /// The server as logs may name it.
    pub fn server(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// The first address of the server's name that the network rules allow; an error names the refused one.
    async fn address(&self) -> Result<IpAddr, SendError> {
        let transient = |message: String| SendError { message, permanent: false };
        let mut addrs: Vec<IpAddr> = match self.host.parse::<IpAddr>() {
            Ok(ip) => vec![ip],
            Err(_) => tokio::net::lookup_host((self.host.as_str(), self.port))
                .await
                .map_err(|e| transient(format!("cannot resolve {}: {e}", self.host)))?
                .map(|a| a.ip())
                .collect(),
        };
        // One address is tried (a second attempt could send a message twice); IPv4 first, as `localhost`
        // relays often listen on 127.0.0.1 only.
        addrs.sort_by_key(|ip| ip.is_ipv6());
        if let Some(bad) = addrs.iter().find(|ip| !self.policy.allows(**ip)) {
            let why = if is_link_local_or_metadata(*bad) {
                "a link-local or metadata address"
            } else {
                "not a public address (the operator can set email.allow_private_networks = true)"
            };
            return Err(transient(format!("refused: {} resolves to {bad}, {why}", self.host)));
        }
        addrs.into_iter().next().ok_or_else(|| transient(format!("{} has no address", self.host)))
    }

    fn tls(&self) -> Result<TlsParameters, SendError> {
        let mut b = TlsParameters::builder(self.host.clone());
        for pem in &self.extra_roots {
            b = b.add_root_certificate(Certificate::from_pem(pem).map_err(|e| SendError { message: format!("email.tls_ca_file: {e}"), permanent: false })?);
        }
        b.build_rustls().map_err(|e| SendError { message: format!("TLS set-up: {e}"), permanent: false })
    }

    /// One attempt: connect, secure, authenticate, send `message`, quit.
    pub async fn send(&self, message: Message) -> Result<(), SendError> {
        let ip = self.address().await?;
        let tls = match self.security {
            Security::StartTls => Tls::Required(self.tls()?),
            Security::Tls => Tls::Wrapper(self.tls()?),
            Security::Plain => Tls::None,
        };
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(ip.to_string())
            .port(self.port)
            .tls(tls)
            .timeout(Some(self.timeout))
            .hello_name(ClientId::Domain(self.hello.clone()));
        if let Some(c) = &self.credentials {
            builder = builder.credentials(c.clone());
        }
        let transport = builder.build();
        match tokio::time::timeout(self.timeout * 2, transport.send(message)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(SendError { permanent: e.is_permanent(), message: crate::net::error_chain(&e) }),
            Err(_) => Err(SendError { message: format!("no answer within {} s", (self.timeout * 2).as_secs()), permanent: false }),
        }
    }
}

/// `%xx` sequences of a URL's user or password, decoded (the url crate keeps them encoded).
fn percent_decode(s: &str) -> String {
    url::form_urlencoded::parse(format!("x={}", s.replace('+', "%2B")).as_bytes()).next().map(|(_, v)| v.into_owned()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Secret;

    fn config(url: &str) -> EmailConfig {
        EmailConfig {
            smtp_url: Some(serde_json::from_value::<Secret>(serde_json::json!(url)).unwrap()),
            from: Some("Sitebot <bot@example.com>".into()),
            ..EmailConfig::default()
        }
    }

    #[test]
    fn the_url_says_how_the_connection_is_secured_and_who_signs_in() {
        let m = Mailer::from_config(&config("smtp://ada%40x:p%2Bw@mail.example.com"), &[]).unwrap().unwrap();
        assert_eq!((m.port, m.security, m.domain.as_str()), (587, Security::StartTls, "example.com"));
        let m = Mailer::from_config(&config("smtps://mail.example.com"), &[]).unwrap().unwrap();
        assert_eq!((m.port, m.security), (465, Security::Tls));
        assert_eq!(percent_decode("p%2Bw"), "p+w");
        let err = Mailer::from_config(&config("http://mail.example.com"), &[]).unwrap_err().to_string();
        assert!(err.contains("email.smtp_url"), "{err}");
    }

    #[test]
    fn a_private_server_or_plain_text_needs_the_operator_to_allow_it() {
        let err = Mailer::from_config(&config("smtp://127.0.0.1:2525"), &[]).unwrap_err().to_string();
        assert!(err.contains("email.allow_private_networks") && !err.contains("2525"), "{err}");
        let err = Mailer::from_config(&config("smtp://localhost:2525"), &[]).unwrap_err().to_string();
        assert!(err.contains("email.allow_private_networks"), "{err}");
        let mut c = config("smtp://127.0.0.1:2525");
        c.allow_private_networks = true;
        c.plaintext = true;
        assert_eq!(Mailer::from_config(&c, &[]).unwrap().unwrap().security, Security::Plain);
        let mut c = config("smtp://user:hunter2@127.0.0.1:2525");
        c.allow_private_networks = true;
        assert!(!format!("{:?} {:?}", Mailer::from_config(&c, &[]).unwrap(), c).contains("hunter2"));
    }
}
