//! sitebot: a self-hosted AI assistant service for websites.
//!
//! One binary serves many customer sites (tenants) over HTTPS: grounded answers with citations from each
//! site's own knowledge, lead capture forwarded to the site's CRM through a durable, signed webhook
//! outbox, landing-page payloads, live pricing and public stats.
//!
//! Module map:
//! - [`cli`]: the command line (clap), one function per command; `main.rs` only calls [`cli::run`].
//! - [`config`]: layered configuration (defaults, TOML, `SITEBOT_*` env, flags) with redacted secrets.
//! - [`app`]: `AppState`, built once and shared by handlers and workers.
//! - [`http`]: the TLS-only listener, the edge (request ids, problem+json, rate-limit and CORS
//!   headers), route scopes (tenant or public), extractors and the OpenAPI document.
//! - [`api`]: one handler module per public resource.
//! - [`store`]: SQLite (WAL, one writer, pooled readers), migrations, typed repositories; tenant data only
//!   through a handle bound to one site (`store.site(id)`); the only module that knows SQL exists.
//! - [`knowledge`]: import (parsers, chunking, embedding), per-site FTS5 and vector indexes, hybrid
//!   retrieval and extractive answers with citations.
//! - [`outbox`]: webhook delivery from the durable outbox (lease, sign, retry, dead-letter), at least once.
//! - [`ratelimit`]: GCRA per site or client IP, with an injectable clock.
//! - [`content`]: landing pages, price lists, currency rates and public stats: file import (JSON or
//!   YAML) with field-level errors, Accept-Language negotiation, exact money conversion and formatting.
//! - [`domain`]: values parsed once at the boundary (`SiteId`, `Tier`, `Lang`, `Email`, `Timestamp`, ...)
//!   and the content model the store keeps.
//! - [`insights`]: the operator's report of unanswered questions (grouped by meaning), weak answers,
//!   thumbs-down ratings, most cited sources and resolution by day.
//! - [`disk`]: the data directory's free space against `storage.min_free_mb`.
//! - [`net`]: the checked resolver every outbound client uses (webhooks, crawler, generator).
//! - [`handoff`]: live hand-off from the assistant to the site's staff: the rules (on, open, someone
//!   online), the visitor's and the staff's actions, the expiry of waits.
//! - [`live`]: what one process knows in memory for hand-off: staff presence, bells, stream caps.
//! - [`secrets`]: bearer tokens (hashed), webhook secrets (sealed), constant-time comparison.
//! - [`email`]: setup links, the weekly digest and lead e-mails over SMTP, queued durably (#25).

pub mod answering;
pub mod api;
pub mod app;
pub mod cli;
pub mod config;
pub mod console;
pub mod content;
pub mod crawl;
pub mod disk;
pub mod domain;
pub mod handoff;
pub mod http;
pub mod insights;
pub mod knowledge;
pub mod live;
pub mod metrics;
pub mod net;
pub mod outbox;
pub mod ratelimit;
pub mod secrets;
pub mod server;
pub mod store;
// #25 email
pub mod email;
