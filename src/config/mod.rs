//! Configuration: compiled-in defaults, then a TOML file, then `SITEBOT_<SECTION>__<KEY>` environment
//! variables, then command-line flags. Loaded once, validated, and passed around inside `AppState`;
//! there is no global.
//!
//! Unknown keys are an error that names the key, wherever they come from, so a typo never silently
//! falls back to a default.
//!
//! A leaf: this module holds plain values and checks what plain values can be checked for (ranges,
//! durations, keys that go together); it imports nothing from the rest of the crate. Each consumer
//! builds its own types from these values (the network policies, the queues, the retention cut-offs),
//! and `app::check_config` builds every one of them once at load, so a bad value is still named when the
//! configuration is read.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

mod oidc;
mod replication;
mod sections;
// #25 email
mod email;

pub use oidc::OidcConfig;
pub use replication::ReplicationConfig;
// #25 email
pub use email::EmailConfig;
pub use sections::*;

/// The example configuration shipped in `assets/`, printed by `sitebot config example`.
pub const EXAMPLE: &str = include_str!("../../assets/sitebot.example.toml");

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub server: ServerConfig,
    pub limits: LimitsConfig,
    pub storage: StorageConfig,
    pub webhooks: WebhooksConfig,
    pub knowledge: KnowledgeConfig,
    pub answer: AnswerConfig,
    pub crawl: CrawlConfig,
    pub retention: RetentionConfig,
    pub pricing: PricingConfig,
    pub secrets: SecretsConfig,
    pub log: LogConfig,
    pub console: ConsoleConfig,
    pub replication: ReplicationConfig,
    // #25 email
    pub email: EmailConfig,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read configuration file {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{origin}: {message}")]
    Syntax { origin: String, message: String },
    #[error("unknown configuration key `{key}`{origin}")]
    UnknownKey { key: String, origin: String },
    #[error("configuration key `{key}`: {message}")]
    BadValue { key: String, message: String },
    #[error("{0}")]
    Invalid(String),
}

/// Values given as command-line flags, applied last.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub listen: Option<SocketAddr>,
}

impl Config {
    /// Loads the layers in order. `env` is passed in (rather than read here) so tests stay hermetic.
    pub fn load(file: Option<&Path>, env: impl IntoIterator<Item = (String, String)>, overrides: &Overrides) -> Result<Config, ConfigError> {
        let mut table = toml::Table::new();
        let mut origins: BTreeMap<String, String> = BTreeMap::new();
        if let Some(path) = file {
            let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read { path: path.to_owned(), source })?;
            let file_table: toml::Table =
                toml::from_str(&text).map_err(|e| ConfigError::Syntax { origin: path.display().to_string(), message: e.message().to_owned() })?;
            merge(&mut table, file_table);
        }
        for (name, value) in env {
            let Some(rest) = name.strip_prefix("SITEBOT_") else { continue };
            // Only SECTION__KEY names are configuration; single-word ones (SITEBOT_DATA_DIR) are flags.
            // SECTION__SUB__KEY names a key of a subsection (SITEBOT_CONSOLE__OIDC__CLIENT_SECRET).
            let path: Vec<String> = rest.split("__").map(str::to_ascii_lowercase).collect();
            if path.len() < 2 {
                continue;
            }
            origins.insert(path.join("."), name.clone());
            let parsed = parse_env_value(&value);
            let (key, sections) = path.split_last().expect("two parts at least");
            let mut at = &mut table;
            for section in sections {
                let entry = at.entry(section.clone()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
                match entry {
                    toml::Value::Table(t) => at = t,
                    _ => return Err(ConfigError::BadValue { key: name, message: "is not a section".into() }),
                }
            }
            at.insert(key.clone(), parsed);
        }
        let mut config: Config = serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
            let path = e.path().to_string();
            let message = e.inner().to_string();
            if let Some(field) = message.strip_prefix("unknown field `").and_then(|m| m.split('`').next()) {
                // The path already ends at the unknown field ("server.lisen").
                let key = if path == "." || path.is_empty() { field.to_owned() } else { path };
                let origin = origins.get(&key).map(|v| format!(" (from environment variable {v})")).unwrap_or_default();
                ConfigError::UnknownKey { key, origin }
            } else {
                ConfigError::BadValue { key: path, message: message.lines().next().unwrap_or_default().to_owned() }
            }
        })?;
        if let Some(listen) = overrides.listen {
            config.server.listen = listen;
        }
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        if self.server.tls_cert.is_some() != self.server.tls_key.is_some() {
            return Err(ConfigError::Invalid("server.tls_cert and server.tls_key go together: set both or neither".into()));
        }
        let s = &self.server;
        if [s.idle_timeout_secs, s.header_timeout_secs, s.body_timeout_secs, s.tls_start_timeout_secs, s.tls_handshake_timeout_secs].contains(&0) {
            return Err(ConfigError::Invalid("server.*_timeout_secs must be at least 1".into()));
        }
        if s.max_connections_per_ip == 0 || s.max_handshakes_per_ip == 0 {
            return Err(ConfigError::Invalid("server.max_connections_per_ip and server.max_handshakes_per_ip must be at least 1".into()));
        }
        if s.trusted_proxies.is_empty() && s.proxy_protocol {
            return Err(ConfigError::Invalid("server.proxy_protocol needs server.trusted_proxies: only those peers may send a PROXY header".into()));
        }
        // hyper's HTTP/1.1 read buffer is at least 8 KiB; far above 1 MiB the cap no longer protects memory.
        if !(8 * 1024..=1024 * 1024).contains(&s.max_header_bytes) {
            return Err(ConfigError::BadValue { key: "server.max_header_bytes".into(), message: "must be from 8192 to 1048576".into() });
        }
        if self.limits.ip_per_minute == 0 || self.limits.burst_multiplier == 0 {
            return Err(ConfigError::Invalid("limits.ip_per_minute and limits.burst_multiplier must be at least 1".into()));
        }
        if self.limits.json_body_bytes == 0 || self.limits.multipart_body_bytes == 0 {
            return Err(ConfigError::Invalid("limits.*_body_bytes must be at least 1".into()));
        }
        if self.console.upload_bytes == 0 {
            return Err(ConfigError::BadValue { key: "console.upload_bytes".into(), message: "must be at least 1".into() });
        }
        self.webhooks.retry_delays()?;
        self.webhooks.min_backoff()?;
        self.webhooks.endpoint_durations()?;
        if self.webhooks.max_in_flight_per_endpoint == 0 {
            return Err(ConfigError::BadValue { key: "webhooks.max_in_flight_per_endpoint".into(), message: "must be at least 1".into() });
        }
        if self.webhooks.workers == 0 || self.webhooks.timeout_secs == 0 {
            return Err(ConfigError::Invalid("webhooks.workers and webhooks.timeout_secs must be at least 1".into()));
        }
        self.limits.queue_wait()?;
        if !(self.limits.visitor_share > 0.0 && self.limits.visitor_share <= 1.0) {
            return Err(ConfigError::BadValue { key: "limits.visitor_share".into(), message: "must be above 0 and at most 1".into() });
        }
        if !(0.0..=1.0).contains(&self.knowledge.min_score) {
            return Err(ConfigError::BadValue { key: "knowledge.min_score".into(), message: "must be between 0 and 1".into() });
        }
        if !(0.0..=1.0).contains(&self.knowledge.curated_min_similarity) {
            return Err(ConfigError::BadValue { key: "knowledge.curated_min_similarity".into(), message: "must be between 0 and 1".into() });
        }
        if self.knowledge.embedding_sessions > MAX_EMBEDDING_SESSIONS {
            return Err(ConfigError::BadValue {
                key: "knowledge.embedding_sessions".into(),
                message: format!("must be at most {MAX_EMBEDDING_SESSIONS} (0 for one per core)"),
            });
        }
        if self.knowledge.max_file_bytes == 0 {
            return Err(ConfigError::BadValue { key: "knowledge.max_file_bytes".into(), message: "must be at least 1".into() });
        }
        if self.answer.generator == GeneratorKind::Openai {
            if self.answer.openai_base_url.is_none() {
                return Err(ConfigError::Invalid("answer.generator = \"openai\" needs answer.openai_base_url".into()));
            }
            if self.answer.model.trim().is_empty() {
                return Err(ConfigError::Invalid("answer.generator = \"openai\" needs answer.model".into()));
            }
        }
        if self.answer.timeout_secs == 0 || self.answer.max_concurrency == 0 {
            return Err(ConfigError::Invalid("answer.timeout_secs and answer.max_concurrency must be at least 1".into()));
        }
        let c = &self.crawl;
        if c.timeout_secs == 0 || c.max_page_bytes == 0 || c.connections == 0 || c.max_pages == 0 {
            return Err(ConfigError::Invalid("crawl.timeout_secs, crawl.max_page_bytes, crawl.connections and crawl.max_pages must be at least 1".into()));
        }
        if c.connections > 16 {
            return Err(ConfigError::BadValue { key: "crawl.connections".into(), message: "must be at most 16: a crawl is a guest on the site".into() });
        }
        // #25 email
        self.email.validate()?;
        // #25 oidc
        if let Some(oidc) = &self.console.oidc {
            oidc.validate()?;
        } else if !self.console.local_passwords {
            return Err(ConfigError::Invalid("console.local_passwords = false needs [console.oidc]: nobody could sign in".into()));
        }
        self.replication.validate()
    }

    /// The effective configuration as TOML, secrets redacted.
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).unwrap_or_else(|e| format!("# cannot print configuration: {e}\n"))
    }
}

fn merge(into: &mut toml::Table, from: toml::Table) {
    for (k, v) in from {
        match (into.get_mut(&k), v) {
            (Some(toml::Value::Table(a)), toml::Value::Table(b)) => merge(a, b),
            (_, v) => {
                into.insert(k, v);
            }
        }
    }
}

/// An environment value is read as a TOML value when it parses as one (`true`, `15`, `["a", "b"]`),
/// else as a plain string, so `SITEBOT_SERVER__LISTEN=127.0.0.1:9443` needs no quotes.
fn parse_env_value(value: &str) -> toml::Value {
    toml::from_str::<toml::Table>(&format!("v = {value}")).ok().and_then(|mut t| t.remove("v")).unwrap_or_else(|| toml::Value::String(value.to_owned()))
}

/// `500ms`, `5s`, `5m`, `2h`, `1d`.
pub fn parse_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit())?;
    let (num, unit) = s.split_at(split);
    let n: u64 = num.parse().ok()?;
    let ms = match unit {
        "ms" => n,
        "s" => n.checked_mul(1_000)?,
        "m" => n.checked_mul(60_000)?,
        "h" => n.checked_mul(3_600_000)?,
        "d" => n.checked_mul(86_400_000)?,
        _ => return None,
    };
    Some(Duration::from_millis(ms))
}

/// `/var/lib/sitebot` for root, else `$XDG_DATA_HOME/sitebot` or `~/.local/share/sitebot`.
pub fn default_data_dir() -> PathBuf {
    if is_root() {
        return PathBuf::from("/var/lib/sitebot");
    }
    if let Some(xdg) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(xdg).join("sitebot");
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
    home.join(".local/share/sitebot")
}

/// `/proc/self` belongs to the effective user, which tells root apart without `unsafe` libc calls.
pub fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map(|m| m.uid() == 0).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn layers_apply_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("c.toml");
        std::fs::write(&file, "[server]\nlisten = \"127.0.0.1:1000\"\nhostnames = [\"a.example\"]\n[webhooks]\nallow_http = true\n").unwrap();
        let c = Config::load(Some(&file), env(&[("SITEBOT_SERVER__LISTEN", "127.0.0.1:2000"), ("SITEBOT_DATA_DIR", "/x")]), &Overrides::default()).unwrap();
        assert_eq!(c.server.listen.port(), 2000);
        assert_eq!(c.server.hostnames, vec!["a.example"]);
        assert!(c.webhooks.allow_http);
        assert_eq!(c.limits.ip_per_minute, 600);
        let o = Overrides { listen: Some("127.0.0.1:3000".parse().unwrap()) };
        let c = Config::load(Some(&file), env(&[("SITEBOT_SERVER__LISTEN", "127.0.0.1:2000")]), &o).unwrap();
        assert_eq!(c.server.listen.port(), 3000);
    }

    #[test]
    fn unknown_keys_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("c.toml");
        std::fs::write(&file, "[server]\nlisen = \"127.0.0.1:1000\"\n").unwrap();
        let err = Config::load(Some(&file), env(&[]), &Overrides::default()).unwrap_err().to_string();
        assert_eq!(err, "unknown configuration key `server.lisen`");
        let err = Config::load(None, env(&[("SITEBOT_WEBHOOKS__ALLOW_HTTPS", "true")]), &Overrides::default()).unwrap_err().to_string();
        assert_eq!(err, "unknown configuration key `webhooks.allow_https` (from environment variable SITEBOT_WEBHOOKS__ALLOW_HTTPS)");
        let err = Config::load(None, env(&[("SITEBOT_NOPE__X", "1")]), &Overrides::default()).unwrap_err().to_string();
        assert!(err.contains("nope"), "{err}");
    }

    #[test]
    fn bad_values_name_the_key() {
        let err = Config::load(None, env(&[("SITEBOT_LIMITS__IP_PER_MINUTE", "lots")]), &Overrides::default()).unwrap_err().to_string();
        assert!(err.contains("limits.ip_per_minute"), "{err}");
        let err = Config::load(None, env(&[("SITEBOT_WEBHOOKS__RETRY_SCHEDULE", "[\"5 parsecs\"]")]), &Overrides::default()).unwrap_err().to_string();
        assert!(err.contains("retry_schedule"), "{err}");
    }

    #[test]
    fn fair_use_limits_are_checked() {
        let c = Config::load(None, env(&[]), &Overrides::default()).unwrap();
        assert_eq!((c.limits.visitor_rate(60), c.limits.visitor_rate(600), c.limits.visitor_rate(1)), (15, 150, 1));
        assert_eq!(c.limits.queue_wait().unwrap(), std::time::Duration::from_secs(2));
        for share in ["0", "1.5", "-0.1"] {
            let err = Config::load(None, env(&[("SITEBOT_LIMITS__VISITOR_SHARE", share)]), &Overrides::default()).unwrap_err().to_string();
            assert!(err.contains("limits.visitor_share"), "{share}: {err}");
        }
        let err = Config::load(None, env(&[("SITEBOT_LIMITS__QUEUE_WAIT", "soon")]), &Overrides::default()).unwrap_err().to_string();
        assert!(err.contains("limits.queue_wait"), "{err}");
        let c = Config::load(None, env(&[("SITEBOT_LIMITS__QUEUE_WAIT", "250ms"), ("SITEBOT_LIMITS__VISITOR_SHARE", "1")]), &Overrides::default()).unwrap();
        assert_eq!((c.limits.queue_wait().unwrap().as_millis(), c.limits.visitor_rate(60)), (250, 60));
    }

    #[test]
    fn secrets_are_redacted() {
        let key = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
        let c = Config::load(None, env(&[("SITEBOT_SECRETS__MASTER_KEY", key)]), &Overrides::default()).unwrap();
        assert_eq!(c.secrets.master_key.as_ref().unwrap().expose(), key);
        assert!(!c.to_toml().contains(key));
        assert!(c.to_toml().contains("[redacted]"));
        assert!(!format!("{c:?}").contains(key));
    }

    #[test]
    fn embedding_sessions_are_bounded() {
        let err = Config::load(None, env(&[("SITEBOT_KNOWLEDGE__EMBEDDING_SESSIONS", "65")]), &Overrides::default()).unwrap_err().to_string();
        assert!(err.contains("knowledge.embedding_sessions"), "{err}");
        let c = Config::load(None, env(&[("SITEBOT_KNOWLEDGE__EMBEDDING_SESSIONS", "2")]), &Overrides::default()).unwrap();
        assert_eq!(c.knowledge.embedding_sessions, 2);
    }

    #[test]
    fn scores_are_probabilities() {
        let err = Config::load(None, env(&[("SITEBOT_KNOWLEDGE__MIN_SCORE", "1.5")]), &Overrides::default()).unwrap_err().to_string();
        assert!(err.contains("knowledge.min_score"), "{err}");
        assert!(Config::load(None, env(&[("SITEBOT_KNOWLEDGE__MIN_SCORE", "0.4")]), &Overrides::default()).is_ok());
    }

    #[test]
    fn daily_caps_spare_bearer_traffic_and_zero_means_none() {
        let c = Config::load(None, env(&[]), &Overrides::default()).unwrap();
        assert_eq!((c.limits.lead_cap(false), c.limits.logged_question_cap(false), c.storage.min_free_mb), (Some(1000), Some(50_000), 512));
        assert_eq!((c.limits.lead_cap(true), c.limits.logged_question_cap(true)), (None, None));
        let c = Config::load(None, env(&[("SITEBOT_LIMITS__LEADS_PER_SITE_PER_DAY", "0")]), &Overrides::default()).unwrap();
        assert_eq!(c.limits.lead_cap(false), None);
    }

    #[test]
    fn replication_is_off_unless_said_and_its_metrics_need_it_on() {
        let c = Config::load(None, env(&[]), &Overrides::default()).unwrap();
        assert!(!c.replication.litestream && c.replication.metrics_addr.is_none());
        let on = [("SITEBOT_REPLICATION__LITESTREAM", "true"), ("SITEBOT_REPLICATION__METRICS_ADDR", "127.0.0.1:9090")];
        let c = Config::load(None, env(&on), &Overrides::default()).unwrap();
        assert!(c.replication.litestream);
        assert_eq!(c.replication.metrics_addr, Some("127.0.0.1:9090".parse().unwrap()));
        let err = Config::load(None, env(&on[1..]), &Overrides::default()).unwrap_err().to_string();
        assert!(err.contains("replication.litestream"), "{err}");
        let err = Config::load(None, env(&[("SITEBOT_REPLICATION__METRICS_ADDR", "localhost")]), &Overrides::default()).unwrap_err().to_string();
        assert!(err.contains("replication.metrics_addr"), "{err}");
    }

    // #25 oidc
    #[test]
    fn single_sign_on_is_configured_by_nested_environment_variables_and_its_secret_never_prints() {
        let vars = [
            ("SITEBOT_CONSOLE__OIDC__ISSUER", "https://id.example.com/realms/staff"),
            ("SITEBOT_CONSOLE__OIDC__CLIENT_ID", "sitebot"),
            ("SITEBOT_CONSOLE__OIDC__CLIENT_SECRET", "very-secret-value"),
            ("SITEBOT_CONSOLE__OIDC__ALLOWED_DOMAINS", "[\"example.com\"]"),
            ("SITEBOT_CONSOLE__LOCAL_PASSWORDS", "false"),
        ];
        let c = Config::load(None, env(&vars), &Overrides::default()).unwrap();
        let oidc = c.console.oidc.as_ref().unwrap();
        assert_eq!(oidc.client_secret.as_ref().unwrap().expose(), "very-secret-value");
        assert!(!c.console.local_passwords && oidc.allows("ann@example.com"));
        assert!(!c.to_toml().contains("very-secret-value") && !format!("{c:?}").contains("very-secret-value"));
        let err = Config::load(None, env(&[("SITEBOT_CONSOLE__LOCAL_PASSWORDS", "false")]), &Overrides::default()).unwrap_err().to_string();
        assert!(err.contains("console.oidc"), "{err}");
        let err = Config::load(None, env(&vars[..2]), &Overrides::default()).unwrap_err().to_string();
        assert!(err.contains("console.oidc.allowed_domains"), "{err}");
        let err = Config::load(None, env(&[("SITEBOT_CONSOLE__OIDC__ISSUR", "x")]), &Overrides::default()).unwrap_err().to_string();
        assert!(err.contains("console.oidc.issur") && err.contains("SITEBOT_CONSOLE__OIDC__ISSUR"), "{err}");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("5s"), Some(Duration::from_secs(5)));
        assert_eq!(parse_duration("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse_duration("2h"), Some(Duration::from_secs(7200)));
        assert_eq!(parse_duration("2 h"), None);
        assert_eq!(parse_duration("h"), None);
    }
}
