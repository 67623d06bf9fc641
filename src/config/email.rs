//! `[email]` (#25 email): the SMTP server that sends setup links, the weekly digest and lead e-mails.
//! Off until both `smtp_url` and `from` are set.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{ConfigError, Secret, parse_duration};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EmailConfig {
    /// `smtp://[USER:PASSWORD@]HOST[:PORT]` (STARTTLS, port 587 by default) or `smtps://...` (TLS from
    /// the first byte, port 465). Never printed: it may carry the password.
    pub smtp_url: Option<Secret>,
    /// The sender, `sitebot@example.com` or `Sitebot <sitebot@example.com>`.
    pub from: Option<String>,
    /// Accept an SMTP server on a loopback or private address, and `plaintext`.
    pub allow_private_networks: bool,
    /// Talk to an `smtp://` server without STARTTLS (a relay on the same host or network); only with
    /// `allow_private_networks`.
    pub plaintext: bool,
    /// A PEM file of certificates to trust for the SMTP server besides the public roots (a private CA).
    pub tls_ca_file: Option<PathBuf>,
    /// The console's address as people reach it, for links in e-mails [default: https://HOSTNAME:PORT].
    pub base_url: Option<String>,
    /// Per-attempt timeout in seconds (connect, TLS, the whole SMTP exchange).
    pub timeout_secs: u64,
    /// Delays after the first attempt; the e-mail is given up (dead) after the last.
    pub retry_schedule: Vec<String>,
    /// Send the weekly digest (Mondays, at `digest_hour` UTC).
    pub digest: bool,
    /// The hour (UTC, 0-23) on Monday from which the week's digest is sent.
    pub digest_hour: u32,
}

impl Default for EmailConfig {
    fn default() -> Self {
        Self {
            smtp_url: None,
            from: None,
            allow_private_networks: false,
            plaintext: false,
            tls_ca_file: None,
            base_url: None,
            timeout_secs: 30,
            retry_schedule: ["30s", "2m", "10m", "30m", "1h", "2h", "4h", "8h", "12h"].map(String::from).to_vec(),
            digest: true,
            digest_hour: 7,
        }
    }
}

impl EmailConfig {
    /// Both `smtp_url` and `from` are set: e-mail is sent.
    pub fn enabled(&self) -> bool {
        self.smtp_url.is_some() && self.from.is_some()
    }

    pub fn retry_delays(&self) -> Result<Vec<Duration>, ConfigError> {
        self.retry_schedule
            .iter()
            .map(|s| {
                parse_duration(s).ok_or_else(|| ConfigError::BadValue {
                    key: "email.retry_schedule".into(),
                    message: format!("`{s}` is not a duration such as 30s, 5m or 2h"),
                })
            })
            .collect()
    }

    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        if self.smtp_url.is_some() != self.from.is_some() {
            return Err(ConfigError::Invalid("email.smtp_url and email.from go together: set both (e-mail on) or neither (off)".into()));
        }
        if self.plaintext && !self.allow_private_networks {
            return Err(ConfigError::BadValue {
                key: "email.plaintext".into(),
                message: "sends passwords and links unencrypted; only for a server on a private network, with email.allow_private_networks = true".into(),
            });
        }
        if self.timeout_secs == 0 {
            return Err(ConfigError::BadValue { key: "email.timeout_secs".into(), message: "must be at least 1".into() });
        }
        if self.digest_hour > 23 {
            return Err(ConfigError::BadValue { key: "email.digest_hour".into(), message: "must be from 0 to 23".into() });
        }
        self.retry_delays()?;
        Ok(())
    }
}
