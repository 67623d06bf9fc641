//! The sections of the configuration file, each with its compiled-in defaults, and `Secret`, a value that
//! never prints.

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{ConfigError, parse_duration};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    /// TLS listen address; port 0 picks a free port.
    pub listen: SocketAddr,
    /// Optional plain-HTTP port whose every request is refused with `403 https_required`.
    pub plain_listen: Option<SocketAddr>,
    /// Host names put into the self-signed certificate besides `localhost` and `127.0.0.1`.
    pub hostnames: Vec<String>,
    /// PEM certificate chain and private key that replace the self-signed certificate.
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    /// How long in-flight requests may run after SIGTERM before they are cut.
    pub shutdown_grace_secs: u64,
    /// A connection with no request in flight for this long is closed (HTTP/2: GOAWAY).
    pub idle_timeout_secs: u64,
    /// A request head must arrive in full within this. It also bounds the wait for a connection's
    /// first request and, on HTTP/1.1, the keep-alive wait between requests.
    pub header_timeout_secs: u64,
    /// A request body must arrive in full within this of its head.
    pub body_timeout_secs: u64,
    /// When a request is answered before its body is read (an error such as 413 or 400), up to this
    /// many bytes of the body are still read and thrown away, within `body_timeout_secs`, so that the
    /// client, which is still sending, receives the answer. A larger body is answered at once and its
    /// stream or connection reset.
    pub discard_body_bytes: usize,
    /// The first byte of a TLS handshake (or of a plain-HTTP request) must arrive within this.
    pub tls_start_timeout_secs: u64,
    /// The whole TLS handshake must finish within this of the TCP connection.
    pub tls_handshake_timeout_secs: u64,
    /// Largest request head: HTTP/1.1 header bytes (431 beyond), HTTP/2 header list size.
    pub max_header_bytes: usize,
    /// Open connections per client (an IPv4 address or an IPv6 /64), handshakes included; further
    /// connections are closed at once.
    pub max_connections_per_ip: usize,
    /// TLS handshakes in progress per client (an IPv4 address or an IPv6 /64).
    pub max_handshakes_per_ip: usize,
    /// Peers (CIDR ranges or addresses) whose `Forwarded` / `X-Forwarded-For` headers, and PROXY headers
    /// when `proxy_protocol` is on, name the client. Empty: every peer is its own client.
    pub trusted_proxies: Vec<String>,
    /// Read a PROXY protocol v2 header before the TLS handshake on connections from trusted proxies.
    pub proxy_protocol: bool,
    /// Where to serve Prometheus metrics (`GET /metrics`); off when unset. Plain HTTP on loopback, TLS
    /// with the server's certificate on any other address.
    pub metrics_listen: Option<SocketAddr>,
    /// Label the per-request and query metrics with the site id (one series per site: mind the
    /// cardinality).
    pub metrics_per_site: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            listen: "0.0.0.0:8443".parse().expect("valid default address"),
            plain_listen: None,
            hostnames: Vec::new(),
            tls_cert: None,
            tls_key: None,
            shutdown_grace_secs: 10,
            idle_timeout_secs: 75,
            header_timeout_secs: 10,
            body_timeout_secs: 10,
            discard_body_bytes: 32 * 1024 * 1024,
            tls_start_timeout_secs: 3,
            tls_handshake_timeout_secs: 10,
            max_header_bytes: 16 * 1024,
            max_connections_per_ip: 64,
            max_handshakes_per_ip: 64,
            trusted_proxies: Vec::new(),
            proxy_protocol: false,
            metrics_listen: None,
            metrics_per_site: false,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    /// Requests a minute per client IP on routes without a site (landing, pricing, stats, multimodal).
    pub ip_per_minute: u32,
    /// Bucket capacity as a multiple of the per-minute rate, for sites and IPs alike.
    pub burst_multiplier: u32,
    /// Each visitor's (client IP, IPv6 by /64) share of its site's rate, in (0, 1]: one visitor cannot
    /// spend the whole site's budget. Calls with the site's bearer token have their own full budget.
    pub visitor_share: f64,
    /// Most rate-limit keys kept in memory; idle keys are pruned first.
    pub max_tracked_keys: usize,
    /// Largest JSON body read, in bytes.
    pub json_body_bytes: usize,
    /// Largest multipart body read, in bytes.
    pub multipart_body_bytes: usize,
    /// Leads a site stores a day (UTC) from anonymous visitors; more are refused with 429
    /// `daily_quota_exceeded` until midnight UTC. 0: no cap. Bearer-authenticated requests are not capped.
    pub leads_per_site_per_day: u64,
    /// Questions a site logs a day (UTC) from anonymous visitors; more are answered and counted in the
    /// public stats, but not logged. 0: no cap. Bearer-authenticated requests are not capped.
    pub logged_questions_per_site_per_day: u64,
    /// Questions waiting for an embedding session at most; further ones get 503 `unavailable`.
    pub embedding_queue: usize,
    /// Questions waiting for a search slot at most; further ones get 503 `unavailable`.
    pub search_queue: usize,
    /// Writes waiting for the database writer at most; further ones get 503 `unavailable`.
    pub write_queue: usize,
    /// Longest wait in any of those lines, e.g. `2s` or `500ms`; then 503 `unavailable`.
    pub queue_wait: String,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        Self {
            ip_per_minute: 600,
            burst_multiplier: 2,
            visitor_share: 0.25,
            max_tracked_keys: 100_000,
            json_body_bytes: 64 * 1024,
            multipart_body_bytes: 10 * 1024 * 1024,
            leads_per_site_per_day: 1_000,
            logged_questions_per_site_per_day: 50_000,
            embedding_queue: 32,
            search_queue: 64,
            write_queue: 64,
            queue_wait: "2s".into(),
        }
    }
}

impl LimitsConfig {
    /// The daily lead cap of a request: none for bearer-authenticated ones, none when set to 0.
    pub fn lead_cap(&self, via_token: bool) -> Option<u64> {
        (!via_token && self.leads_per_site_per_day > 0).then_some(self.leads_per_site_per_day)
    }

    /// The daily cap on logged questions of a request: none for bearer-authenticated ones, none when 0.
    pub fn logged_question_cap(&self, via_token: bool) -> Option<u64> {
        (!via_token && self.logged_questions_per_site_per_day > 0).then_some(self.logged_questions_per_site_per_day)
    }

    /// `queue_wait`, parsed (checked when the configuration loads).
    pub fn queue_wait(&self) -> Result<Duration, ConfigError> {
        parse_duration(&self.queue_wait)
            .ok_or_else(|| ConfigError::Invalid(format!("limits.queue_wait: `{}` is not a duration such as 500ms or 2s", self.queue_wait)))
    }

    /// One visitor's rate a minute on a site whose tier allows `site_rate`: at least one.
    pub fn visitor_rate(&self, site_rate: u32) -> u32 {
        ((f64::from(site_rate) * self.visitor_share).round() as u32).clamp(1, site_rate.max(1))
    }
}

/// The data directory's disk.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StorageConfig {
    /// Below this many MiB free on the data directory's file system, visitors' writes stop before answers
    /// do: questions are answered but not logged, widget events and feedback are not stored, leads are
    /// refused with 503 (never acknowledged and then lost). 0: never.
    pub min_free_mb: u64,
}

impl Default for StorageConfig {
    fn default() -> Self {
        Self { min_free_mb: 512 }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WebhooksConfig {
    /// Accept `http://` webhook URLs (on-premises CRMs without TLS).
    pub allow_http: bool,
    /// Accept webhook URLs on loopback and private networks (on-premises CRMs).
    pub allow_private_networks: bool,
    /// Link-local or metadata addresses (169.254.0.0/16, fe80::/10, fd00:ec2::254) webhooks may reach,
    /// each named; none otherwise, whatever `allow_private_networks` says.
    pub allowed_link_local: Vec<IpAddr>,
    /// Delays after the first attempt, e.g. `["5s", "5m", "30m", "2h", "5h", "10h"]`.
    pub retry_schedule: Vec<String>,
    /// Per-attempt timeout in seconds.
    pub timeout_secs: u64,
    /// Concurrent deliveries, across all endpoints.
    pub workers: usize,
    /// Shortest wait before retrying after a 429 or a timeout, whatever the schedule says.
    pub min_backoff_after_throttle: String,
    /// Deliveries in flight to one endpoint (a site's webhook URL) at once; one at a time while it fails.
    pub max_in_flight_per_endpoint: u32,
    /// An endpoint's pause after its first failure in a row, doubled with each further one...
    pub endpoint_backoff_initial: String,
    /// ...up to this.
    pub endpoint_backoff_max: String,
    /// An endpoint whose attempts have all failed for this long is disabled (its events wait).
    pub disable_after: String,
}

impl Default for WebhooksConfig {
    fn default() -> Self {
        Self {
            allow_http: false,
            allow_private_networks: false,
            allowed_link_local: Vec::new(),
            retry_schedule: ["5s", "5m", "30m", "2h", "5h", "10h"].map(String::from).to_vec(),
            timeout_secs: 15,
            workers: 16,
            min_backoff_after_throttle: "60s".into(),
            max_in_flight_per_endpoint: 2,
            endpoint_backoff_initial: "1s".into(),
            endpoint_backoff_max: "10m".into(),
            disable_after: "5d".into(),
        }
    }
}

impl WebhooksConfig {
    pub fn retry_delays(&self) -> Result<Vec<Duration>, ConfigError> {
        self.retry_schedule
            .iter()
            .map(|s| {
                parse_duration(s).ok_or_else(|| ConfigError::Invalid(format!("webhooks.retry_schedule: `{s}` is not a duration such as 500ms, 5s, 5m or 2h")))
            })
            .collect()
    }

    /// `endpoint_backoff_initial`, `endpoint_backoff_max` and `disable_after`, parsed.
    pub fn endpoint_durations(&self) -> Result<(Duration, Duration, Duration), ConfigError> {
        let duration = |key: &str, value: &str| {
            parse_duration(value).ok_or_else(|| ConfigError::BadValue {
                key: format!("webhooks.{key}"),
                message: format!("`{value}` is not a duration such as 500ms, 5s, 10m or 5d"),
            })
        };
        Ok((
            duration("endpoint_backoff_initial", &self.endpoint_backoff_initial)?,
            duration("endpoint_backoff_max", &self.endpoint_backoff_max)?,
            duration("disable_after", &self.disable_after)?,
        ))
    }

    pub fn min_backoff(&self) -> Result<Duration, ConfigError> {
        parse_duration(&self.min_backoff_after_throttle).ok_or_else(|| {
            ConfigError::Invalid(format!(
                "webhooks.min_backoff_after_throttle: `{}` is not a duration such as 500ms, 5s or 1m",
                self.min_backoff_after_throttle
            ))
        })
    }
}

/// The default `knowledge.curated_min_similarity`. With multilingual-e5-small, rewordings of a question
/// score 0.97-0.99 against it, while a different question of the same site can reach 0.93-0.94 ("How much
/// does a take-home whitening kit cost?" against "How much does teeth whitening cost?", "Do you accept
/// cash?" against "Do you accept credit cards?"): a wrong capture costs more than a missed rewording
/// (which the passages still answer), so the bar sits above those (`tests/api/curated.rs`).
pub const CURATED_MIN_SIMILARITY: f32 = 0.95;

/// The default `knowledge.max_file_bytes`: 20 MiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 20 << 20;

/// The most `knowledge.embedding_sessions` an operator may ask for.
pub const MAX_EMBEDDING_SESSIONS: usize = 64;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct KnowledgeConfig {
    /// Path to `libonnxruntime.so`; found next to the installed binary when unset.
    pub ort_library: Option<PathBuf>,
    /// Directory with `model.onnx` and its tokenizer files; found next to the installed binary when unset.
    pub model_dir: Option<PathBuf>,
    /// The threshold (0..1) of a question that sends no `scoreThreshold`: passages scoring below it do
    /// not count as sources, and a question with none above it gets the "not in my knowledge" answer.
    /// A `scoreThreshold` the client sends replaces it.
    pub min_score: f32,
    /// A question at least this similar (cosine of the embeddings, 0..1) to a curated answer's question
    /// gets that answer (`sitebot knowledge answer add`).
    pub curated_min_similarity: f32,
    /// A file larger than this is not imported (reported as a failure): it is never read whole.
    pub max_file_bytes: u64,
    /// ONNX Runtime sessions embedding questions and imports side by side, one core each; 0 for one per
    /// core, at most 4, plus (on two cores or more) one on every core for a question embedded alone.
    /// Each beyond the first costs about 30 MiB, or 5 MiB with three or more (every weight shared).
    pub embedding_sessions: usize,
    /// An English question the main model is unsure of (its best passage scores below 0.6) is ranked again
    /// on English passages with an English-only model's cosine (all-MiniLM-L6-v2; `knowledge::search::English`),
    /// and an import embeds English passages with it too. On by default since session 40: asked of a fifth of
    /// SciFact's questions it lifts SciFact from 0.726 to 0.746, for about 45 MiB, 5 % of the requests a
    /// second and imports 1.45 times as long (docs/performance.md, "The English model where the main model is unsure").
    pub english_model: bool,
    /// Directory of the English model (`model.onnx`, `tokenizer.json`); found next to the installed
    /// binary when unset, and off (with a warning) when not found there.
    pub english_model_dir: Option<PathBuf>,
    /// Directory of the bilingual dictionaries (`install.sh` fetches them): a question in Arabic, Chinese,
    /// German, Greek, Russian, Spanish or Turkish on English documents is also searched by its words'
    /// English translations. Found next to the installed binary when unset; without them questions are
    /// searched as they are.
    pub dictionaries_dir: Option<PathBuf>,
    /// A question in one of those languages on English documents also searches the site's English terms
    /// nearest its words by the main model's cosine (`knowledge::search::nearest`): a site's terms are
    /// embedded in the background at its first such question, and kept (about 2 MB for 5,000 terms).
    pub nearest_terms: bool,
}

impl Default for KnowledgeConfig {
    fn default() -> Self {
        Self {
            ort_library: None,
            model_dir: None,
            min_score: 0.25,
            curated_min_similarity: CURATED_MIN_SIMILARITY,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            embedding_sessions: 0,
            english_model: true,
            english_model_dir: None,
            dictionaries_dir: None,
            nearest_terms: true,
        }
    }
}

/// Which answers sitebot gives: quoted sentences (`extractive`), or sentences written by an
/// OpenAI-compatible model and each checked against the passages it cites (`openai`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GeneratorKind {
    #[default]
    Extractive,
    Openai,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AnswerConfig {
    pub generator: GeneratorKind,
    /// The API base, e.g. `https://api.openai.com/v1`; `/chat/completions` is appended.
    pub openai_base_url: Option<String>,
    /// The model name sent with every request.
    pub model: String,
    /// Sent as `Authorization: Bearer ...`; local servers usually need none.
    pub api_key: Option<Secret>,
    /// The whole generation (connect, first token, last token) must end within this; then the
    /// extractive answer is given instead.
    pub timeout_secs: u64,
    /// Generations in flight at once; further questions get the extractive answer.
    pub max_concurrency: usize,
    /// Accept an endpoint on loopback or a private network, over http too (a model served on the same
    /// host or LAN).
    pub allow_private_networks: bool,
    /// Link-local or metadata addresses the endpoint may be on, each named; none otherwise.
    pub allowed_link_local: Vec<IpAddr>,
}

impl Default for AnswerConfig {
    fn default() -> Self {
        Self {
            generator: GeneratorKind::Extractive,
            openai_base_url: None,
            model: String::new(),
            api_key: None,
            timeout_secs: 8,
            max_concurrency: 4,
            allow_private_networks: false,
            allowed_link_local: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CrawlConfig {
    /// Crawl `http://` sites (intranets, tests); https only otherwise.
    pub allow_http: bool,
    /// Crawl sites on loopback and private networks (intranets, tests).
    pub allow_private_networks: bool,
    /// Link-local or metadata addresses a crawl may reach, each named; none otherwise.
    pub allowed_link_local: Vec<IpAddr>,
    /// Per-request timeout in seconds (connecting, and reading the whole answer).
    pub timeout_secs: u64,
    /// A page or sitemap larger than this is not read (reported as a failure).
    pub max_page_bytes: u64,
    /// Concurrent requests to a site (one when its robots.txt sets a Crawl-delay).
    pub connections: usize,
    /// Pages one crawl requests at most, unless `--max-pages` says otherwise; also the most a site's
    /// editor may give a crawl source in the console.
    pub max_pages: usize,
    /// Crawl sources one site may have at most.
    pub max_sources_per_site: usize,
    /// Further attempts after a 429, a 5xx or a timeout, with exponential backoff from one second.
    pub retries: u32,
}

impl Default for CrawlConfig {
    fn default() -> Self {
        Self {
            allow_http: false,
            allow_private_networks: false,
            allowed_link_local: Vec::new(),
            timeout_secs: 30,
            max_page_bytes: 10 << 20,
            connections: 4,
            max_pages: 5000,
            max_sources_per_site: 20,
            retries: 3,
        }
    }
}

/// How long what visitors leave behind is kept, in days; 0 keeps it forever. The public-stats counters
/// and daily widget counts are kept apart and never pruned.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RetentionConfig {
    /// The query log, with each answer's cited sources and its rating.
    pub query_log_days: u32,
    /// Conversations, counted from their last turn.
    pub conversations_days: u32,
    /// Raw widget events (`POST /v1/events`).
    pub widget_events_days: u32,
    /// Webhook events that exhausted their retries (`webhooks replay` needs them).
    pub dead_events_days: u32,
}

impl Default for RetentionConfig {
    fn default() -> Self {
        Self { query_log_days: 90, conversations_days: 30, widget_events_days: 30, dead_events_days: 30 }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PricingConfig {
    /// The currency that `sitebot rates set CUR RATE` is relative to.
    pub reference_currency: String,
}

impl Default for PricingConfig {
    fn default() -> Self {
        Self { reference_currency: "EUR".into() }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SecretsConfig {
    /// Base64 of 32 bytes that encrypt webhook signing secrets at rest. When unset, a key is generated
    /// once into `DATA_DIR/master.key` (mode 0600).
    pub master_key: Option<Secret>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogConfig {
    /// A tracing filter such as `info` or `sitebot=debug,info`; `RUST_LOG` overrides it.
    pub level: String,
    /// `text` or `json`.
    pub format: LogFormat,
    /// Log each question's text (target `sitebot::questions`) with its site and query id. Off: questions
    /// are personal data, kept only in the query log.
    pub questions: bool,
}

impl Default for LogConfig {
    fn default() -> Self {
        Self { level: "info".into(), format: LogFormat::Text, questions: false }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Text,
    Json,
}

/// A configuration value that never prints: `Debug` and serialization show `[redacted]`.
#[derive(Clone, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl Serialize for Secret {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str("[redacted]")
    }
}

/// The web console under `/console/` (`sitebot user add` creates its users).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConsoleConfig {
    /// Serve the console on the server's listener; it shows only its sign-in page until a user exists.
    pub enabled: bool,
    /// How long a setup or reset link works, in hours.
    pub setup_link_hours: u32,
    /// Pages one session is served a minute, beyond `page_burst` at once; faster requests wait their
    /// turn (up to 5 s, then 429), so a script looping over pages cannot take the public API's CPU.
    pub pages_per_minute: u32,
    /// Pages one session may load at once before the rate applies.
    pub page_burst: u32,
    /// The most one knowledge upload may carry in all, in bytes. Its files are written to the data
    /// directory as they arrive (each also within `knowledge.max_file_bytes`), never held together in
    /// memory; beyond this the upload is refused with a 413 page and nothing is stored.
    pub upload_bytes: u64,
    /// Password hashes (sign-in checks, new passwords) computed at once, each holding 19 MiB and a core
    /// for about 30 ms; 0 for half the cores, at least one.
    pub password_checks: u32,
    /// Password hashes that may wait for a turn beyond those running; one more is refused at once with
    /// a page asking to try again (503), never held.
    pub password_checks_waiting: u32,
    // #25 oidc
    /// Sign-in with a password (and setup links, which set one). `false` needs `[console.oidc]`: the
    /// sign-in page then offers single sign-on only, and password sign-in and setup links are refused.
    pub local_passwords: bool,
    /// Single sign-on through an OpenID Connect provider; off when absent.
    pub oidc: Option<super::oidc::OidcConfig>,
}

impl Default for ConsoleConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            setup_link_hours: 24,
            pages_per_minute: 300,
            page_burst: 30,
            upload_bytes: 100 * 1024 * 1024,
            password_checks: 0,
            password_checks_waiting: 16,
            local_passwords: true,
            oidc: None,
        }
    }
}
