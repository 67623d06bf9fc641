//! Prometheus metrics, through the `prometheus-client` crate (text exposition format), served on
//! `server.metrics_listen` by `http::metrics`.
//!
//! Recording is a few atomic additions behind a read lock on the label map: the edge counts each
//! request, `knowledge` times the query stages, the scopes count rate-limit rejections, the webhook
//! worker counts attempts. Values that already live elsewhere (webhook events by state, the embedding
//! queue) are read when Prometheus scrapes, not kept twice.
//!
//! With `server.metrics_listen` unset nothing reads them, so the edge, the scopes and the worker record
//! nothing (`enabled` is false); the query-stage histograms, four observations a question, always run.
//!
//! No series carries a site id unless `server.metrics_per_site` is on: with thousands of sites that label
//! multiplies every request series by the number of sites.

use std::time::Duration;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::Registry;

use crate::domain::SiteId;

/// A label set: names are fixed, values are few (routes, statuses, states) or, opted in, site ids.
type Labels = Vec<(&'static str, String)>;
type Histograms = Family<Labels, Histogram, fn() -> Histogram>;

/// 0.5 ms to about 16 s, doubling.
fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.0005, 2.0, 16))
}

/// Query stages, timed inside `Knowledge::ask`.
#[derive(Debug, Clone, Copy)]
pub enum Stage {
    /// Embedding the question (waiting for the query session included).
    Embedding,
    /// BM25 over the site's full-text table.
    Lexical,
    /// The vector search and the fusion of both lists.
    Vector,
    /// Composing the answer from the passages.
    Answer,
}

impl Stage {
    fn as_str(self) -> &'static str {
        match self {
            Stage::Embedding => "embedding",
            Stage::Lexical => "lexical",
            Stage::Vector => "vector",
            Stage::Answer => "answer",
        }
    }
}

/// The query-stage histograms. `Knowledge` owns a handle (created with it, so it needs no metrics to
/// exist); [`Metrics`] registers the same series.
#[derive(Debug, Clone)]
pub struct Stages(Histograms);

impl Default for Stages {
    fn default() -> Self {
        Stages(Family::new_with_constructor(latency_histogram))
    }
}

impl Stages {
    pub fn observe(&self, stage: Stage, took: Duration) {
        self.0.get_or_create(&vec![("stage", stage.as_str().to_owned())]).observe(took.as_secs_f64());
    }
}

/// Who a rate-limit rejection counted against.
#[derive(Debug, Clone, Copy)]
pub enum LimitScope {
    /// A site's budget for its visitors.
    Site,
    /// A site's budget for bearer-token calls.
    Token,
    /// One visitor's share of a site's budget.
    Visitor,
    /// A client on routes without a site.
    Ip,
}

/// What a visitor sent that was not stored.
#[derive(Debug, Clone, Copy)]
pub enum Unstored {
    Question,
    Lead,
    Feedback,
    Event,
}

/// Why it was not stored.
#[derive(Debug, Clone, Copy)]
pub enum Because {
    /// The site's daily cap (`limits.*_per_site_per_day`).
    DailyCap,
    /// Free space below `storage.min_free_mb`.
    LowDisk,
    /// The write failed (a full disk, a busy or broken database); the answer was given anyway.
    Failed,
    /// The site is being moved to another node (`site export`).
    Moving,
}

/// Every series the server exposes, and the registry that encodes them.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    enabled: bool,
    per_site: bool,
    requests: Family<Labels, Counter>,
    durations: Histograms,
    rate_limited: Family<Labels, Counter>,
    attempts: Family<Labels, Counter>,
    outbox: Family<Labels, Gauge>,
    embedding_queue: Gauge,
    not_stored: Family<Labels, Counter>,
    free_bytes: Gauge,
    shed: Family<Labels, Counter>,
    sign_ins: Family<Labels, Counter>,
    handoffs: Family<Labels, Counter>,
    handoff_waits: Histograms,
}

/// What happened to a hand-off (live chat with a person).
#[derive(Debug, Clone, Copy)]
pub enum Handoff {
    /// A visitor asked and a person could come: now waiting.
    Requested,
    /// A visitor asked and was offered the contact form: hand-off off, closed, or nobody online.
    Unavailable(&'static str),
    /// A person took a waiting conversation.
    Taken,
    /// Nobody took it within the site's wait.
    Missed,
}

/// 0.5 s to about 68 min, doubling: how long a visitor waits for a person.
fn wait_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.5, 2.0, 14))
}

/// How a console sign-in attempt ended.
#[derive(Debug, Clone, Copy)]
pub enum SignIn {
    Succeeded,
    /// Unknown address or wrong password (told apart in neither the answer nor this label).
    Failed,
    /// Refused before any check: too many failures in a row for the account or the address.
    Throttled,
    /// Refused before any check: too many password checks running and waiting.
    Busy,
}

/// Requests turned away by a full line in front of shared work since start, by line (read at scrape
/// time from the gates and the store).
#[derive(Debug, Clone, Copy, Default)]
pub struct Shed {
    pub embedding: u64,
    pub search: u64,
    pub writer: u64,
}

impl Metrics {
    /// `enabled`: whether anything will scrape them (`server.metrics_listen` is set).
    pub fn new(enabled: bool, per_site: bool, stages: &Stages) -> Metrics {
        let mut registry = Registry::default();
        let requests = Family::<Labels, Counter>::default();
        let durations: Histograms = Family::new_with_constructor(latency_histogram);
        let rate_limited = Family::<Labels, Counter>::default();
        let attempts = Family::<Labels, Counter>::default();
        let outbox = Family::<Labels, Gauge>::default();
        let embedding_queue = Gauge::default();
        let not_stored = Family::<Labels, Counter>::default();
        let free_bytes = Gauge::default();
        let shed = Family::<Labels, Counter>::default();
        let sign_ins = Family::<Labels, Counter>::default();
        let handoffs = Family::<Labels, Counter>::default();
        let handoff_waits: Histograms = Family::new_with_constructor(wait_histogram);
        registry.register(
            "sitebot_handoffs",
            "Hand-offs to a person, by what happened (requested, unavailable with its reason, taken, missed)",
            handoffs.clone(),
        );
        registry.register(
            "sitebot_handoff_seconds",
            "Seconds from a visitor's request for a person to the person taking it (stage=taken) and to their first reply (stage=first_reply)",
            handoff_waits.clone(),
        );
        registry.register("sitebot_console_sign_ins", "Console sign-in attempts, by outcome (succeeded, failed, throttled, busy)", sign_ins.clone());
        registry.register("sitebot_http_requests", "HTTP requests answered, by route template and status", requests.clone());
        registry.register("sitebot_http_request_duration_seconds", "Time to the response head, by route template", durations.clone());
        registry.register("sitebot_query_stage_duration_seconds", "Time spent in each stage of answering a question", stages.0.clone());
        registry.register(
            "sitebot_rate_limited",
            "Requests refused with 429, by the bucket that refused them (site, token, visitor or ip)",
            rate_limited.clone(),
        );
        registry.register("sitebot_webhook_delivery_attempts", "Webhook delivery attempts, by outcome", attempts.clone());
        registry.register("sitebot_outbox_events", "Webhook events in the outbox, by state (read at scrape time)", outbox.clone());
        registry.register("sitebot_embedding_queue_depth", "Questions waiting for the embedding session (read at scrape time)", embedding_queue.clone());
        registry.register(
            "sitebot_writes_not_stored",
            "Visitors' writes not stored, by what (question, lead, feedback, event) and why (daily_cap, low_disk, failed)",
            not_stored.clone(),
        );
        registry.register(
            "sitebot_data_dir_free_bytes",
            "Bytes free for the server on the data directory's file system (read at scrape time)",
            free_bytes.clone(),
        );
        registry.register(
            "sitebot_shed",
            "Requests answered 503 because a line in front of shared work was full or too slow, by line (embedding, search, writer)",
            shed.clone(),
        );
        let build = Info::new(vec![("version", env!("CARGO_PKG_VERSION").to_owned())]);
        registry.register("sitebot_build", "The running build", build);
        Metrics {
            registry,
            enabled,
            per_site,
            requests,
            durations,
            rate_limited,
            attempts,
            outbox,
            embedding_queue,
            not_stored,
            free_bytes,
            shed,
            sign_ins,
            handoffs,
            handoff_waits,
        }
    }

    /// One answered request. `route` is the route template (`/v1/landing/:site/:lang/:slug`), never the
    /// path, so the label's values stay few.
    pub fn request(&self, route: &str, status: u16, site: Option<SiteId>, took: Duration) {
        if !self.enabled {
            return;
        }
        let mut labels: Labels = vec![("route", route.to_owned())];
        if self.per_site {
            labels.push(("site", site.map(|s| s.to_string()).unwrap_or_default()));
        }
        self.durations.get_or_create(&labels).observe(took.as_secs_f64());
        labels.insert(1, ("status", status.to_string()));
        self.requests.get_or_create(&labels).inc();
    }

    pub fn sign_in(&self, outcome: SignIn) {
        if !self.enabled {
            return;
        }
        let outcome = match outcome {
            SignIn::Succeeded => "succeeded",
            SignIn::Failed => "failed",
            SignIn::Throttled => "throttled",
            SignIn::Busy => "busy",
        };
        self.sign_ins.get_or_create(&vec![("outcome", outcome.to_owned())]).inc();
    }

    /// A hand-off's step.
    pub fn handoff(&self, what: Handoff) {
        if !self.enabled {
            return;
        }
        let labels = match what {
            Handoff::Requested => vec![("event", "requested".to_owned())],
            Handoff::Unavailable(reason) => vec![("event", "unavailable".to_owned()), ("reason", reason.to_owned())],
            Handoff::Taken => vec![("event", "taken".to_owned())],
            Handoff::Missed => vec![("event", "missed".to_owned())],
        };
        self.handoffs.get_or_create(&labels).inc();
    }

    /// How long a visitor waited for a person to take the conversation (`taken`) or to write first
    /// (`first_reply`).
    pub fn handoff_wait(&self, stage: &'static str, waited: Duration) {
        if !self.enabled {
            return;
        }
        self.handoff_waits.get_or_create(&vec![("stage", stage.to_owned())]).observe(waited.as_secs_f64());
    }

    pub fn rate_limited(&self, scope: LimitScope) {
        if !self.enabled {
            return;
        }
        let scope = match scope {
            LimitScope::Site => "site",
            LimitScope::Token => "token",
            LimitScope::Visitor => "visitor",
            LimitScope::Ip => "ip",
        };
        self.rate_limited.get_or_create(&vec![("scope", scope.to_owned())]).inc();
    }

    /// One webhook attempt: `delivered`, `gone`, `throttled` or `failed`.
    pub fn delivery_attempt(&self, outcome: &'static str) {
        if !self.enabled {
            return;
        }
        self.attempts.get_or_create(&vec![("outcome", outcome.to_owned())]).inc();
    }

    /// A visitor's write that was not stored.
    pub fn not_stored(&self, what: Unstored, why: Because) {
        if !self.enabled {
            return;
        }
        let what = match what {
            Unstored::Question => "question",
            Unstored::Lead => "lead",
            Unstored::Feedback => "feedback",
            Unstored::Event => "event",
        };
        let why = match why {
            Because::DailyCap => "daily_cap",
            Because::LowDisk => "low_disk",
            Because::Failed => "failed",
            Because::Moving => "moving",
        };
        self.not_stored.get_or_create(&vec![("what", what.to_owned()), ("reason", why.to_owned())]).inc();
    }

    /// The text exposition of every series, with the scrape-time values given.
    pub fn encode(&self, outbox_by_state: &[(&'static str, u64)], embedding_queue: usize, shed: Shed, free_bytes: Option<u64>) -> String {
        if let Some(free) = free_bytes {
            self.free_bytes.set(i64::try_from(free).unwrap_or(i64::MAX));
        }
        for (state, n) in outbox_by_state {
            self.outbox.get_or_create(&vec![("state", (*state).to_owned())]).set(*n as i64);
        }
        for (line, n) in [("embedding", shed.embedding), ("search", shed.search), ("writer", shed.writer)] {
            let counter = self.shed.get_or_create(&vec![("queue", line.to_owned())]);
            counter.inc_by(n.saturating_sub(counter.get()));
        }
        self.embedding_queue.set(embedding_queue as i64);
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = encode(&mut out, &self.registry);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_are_named_and_labelled_as_documented() {
        let stages = Stages::default();
        let m = Metrics::new(true, false, &stages);
        m.request("/v1/query", 200, None, Duration::from_millis(3));
        m.rate_limited(LimitScope::Ip);
        m.delivery_attempt("delivered");
        m.not_stored(Unstored::Question, Because::DailyCap);
        m.handoff(Handoff::Requested);
        m.handoff(Handoff::Unavailable("nobody_online"));
        m.handoff_wait("first_reply", Duration::from_secs(3));
        stages.observe(Stage::Lexical, Duration::from_millis(1));
        let text = m.encode(&[("pending", 2), ("delivered", 5), ("dead", 0)], 1, Shed { embedding: 0, search: 3, writer: 0 }, Some(4096));
        for line in [
            "sitebot_http_requests_total{route=\"/v1/query\",status=\"200\"} 1",
            "sitebot_http_request_duration_seconds_count{route=\"/v1/query\"} 1",
            "sitebot_query_stage_duration_seconds_count{stage=\"lexical\"} 1",
            "sitebot_rate_limited_total{scope=\"ip\"} 1",
            "sitebot_webhook_delivery_attempts_total{outcome=\"delivered\"} 1",
            "sitebot_outbox_events{state=\"pending\"} 2",
            "sitebot_embedding_queue_depth 1",
            "sitebot_writes_not_stored_total{what=\"question\",reason=\"daily_cap\"} 1",
            "sitebot_data_dir_free_bytes 4096",
            "sitebot_shed_total{queue=\"search\"} 3",
            "sitebot_handoffs_total{event=\"requested\"} 1",
            "sitebot_handoffs_total{event=\"unavailable\",reason=\"nobody_online\"} 1",
            "sitebot_handoff_seconds_count{stage=\"first_reply\"} 1",
        ] {
            assert!(text.contains(line), "missing {line} in:\n{text}");
        }
        assert!(text.contains("sitebot_build_info{version="), "{text}");
        assert!(!text.contains("site="), "no site label by default");
        let m = Metrics::new(true, true, &stages);
        let site = SiteId::parse("6f1c2a8e-2b6a-4c1e-9a51-0d6c7a1e2f3b").unwrap();
        m.request("/v1/query", 200, Some(site), Duration::from_millis(3));
        assert!(m.encode(&[], 0, Shed::default(), None).contains(&format!("site=\"{site}\"")));
    }
}
