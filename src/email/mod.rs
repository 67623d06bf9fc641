//! E-mail (#25 email): setup and reset links, the weekly digest to each owner who wants it, and an
//! e-mail to a site's owners for each new lead when the site asks for it; sent over SMTP (STARTTLS or
//! TLS, through lettre) and off until `[email] smtp_url` and `[email] from` are set.
//!
//! Delivery is durable, like the webhook outbox: what causes an e-mail writes its row in the store's
//! e-mail queue (`store::email`) in the same transaction (a lead and its owners' e-mails, a week's
//! digests and the week's mark), and [`Worker`] sends it, never a request. The guarantee: every queued
//! e-mail is sent at least once, retried on `[email] retry_schedule` until the SMTP server accepts it,
//! and marked sent right after it did; only a crash in that instant sends it again, with the same
//! Message-ID, so the receiver's server can tell.
//!
//! - [`smtp`]: `Mailer`, one SMTP attempt under the network rules (`[email] allow_private_networks`).
//! - [`messages`]: what each e-mail says, plain text and HTML (askama, escaped), subjects without CR/LF.
//! - [`digest`]: a site's week in figures, `sitebot digest send`, and the weekly schedule in the server.
//! - [`worker`]: claim, send, record.

pub mod digest;
pub mod messages;
pub mod smtp;
pub mod worker;

pub use worker::Worker;

use crate::config::Config;
use crate::domain::{Email, SiteId, Timestamp};
use crate::store::email::{Kind, NewEmail};
use crate::store::{Store, StoreError};

/// The console's address as people reach it, for links: `[email] base_url`, else
/// `https://HOSTNAME[:PORT]` from the first `server.hostnames` (else `localhost`) and `port` (the
/// listening port when the caller knows it, else `server.listen`'s).
pub fn base_url(config: &Config, port: Option<u16>) -> String {
    if let Some(b) = &config.email.base_url {
        return b.trim_end_matches('/').to_owned();
    }
    let host = config.server.hostnames.first().cloned().unwrap_or_else(|| "localhost".into());
    match port.unwrap_or(config.server.listen.port()) {
        443 => format!("https://{host}"),
        port => format!("https://{host}:{port}"),
    }
}

/// The console page `path` (`/console/...`, without a query) on `base`, as a link that starts a sign-in
/// on behalf of `site`: `?site=ID` lets a balancer in front of several nodes send a browser that has
/// never been there to the site's node (#27 scale-out, `assets/haproxy.cfg`); the node only carries it on.
/// Setup links (the CLI's, invitations) and e-mailed links to pages without the site in their path use it.
pub fn console_link(base: &str, path: &str, site: Option<SiteId>) -> String {
    match site {
        Some(site) => format!("{base}{path}?site={site}"),
        None => format!("{base}{path}"),
    }
}

/// The payload of a setup link's e-mail.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SetupLink {
    pub link: String,
    pub expires_at: i64,
    /// A reset (the old password no longer works) rather than a new account.
    pub reset: bool,
}

/// Queues the e-mail that carries a one-time setup (or reset) `link` to `to`, when e-mail is configured;
/// `Ok(false)` when it is not (nothing is queued: the caller shows or prints the link as before). Used by
/// `sitebot user add|reset` and by the console's invitations. The link is kept in the queue until the
/// SMTP server accepted the e-mail, then dropped.
pub fn queue_setup_link(store: &Store, config: &Config, to: &Email, link: &str, expires: Timestamp, reset: bool) -> Result<bool, StoreError> {
    if !config.email.enabled() {
        return Ok(false);
    }
    let payload = SetupLink { link: link.to_owned(), expires_at: expires.as_millis(), reset };
    let payload = serde_json::to_string(&payload).map_err(|e| StoreError::Invalid(e.to_string()))?;
    store.email().queue(&NewEmail { kind: Kind::SetupLink, site_id: None, recipient: to.as_str().to_owned(), payload })?;
    Ok(true)
}
