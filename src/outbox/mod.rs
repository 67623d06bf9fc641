//! Webhook delivery from the durable outbox, signed per Standard Webhooks v1.
//!
//! # Guarantee: at least once
//!
//! An event is written to the `outbox` table in the same SQLite transaction as the change it reports
//! (the store's `Leads::capture` and `QueryLog::record`), so once a lead is acknowledged its event is on disk. The worker claims due
//! events by setting a lease (`Outbox::claim_due`, one write transaction), sends them, and only
//! then records the outcome. If the process dies between sending and recording, the lease expires and the
//! event is sent again: a receiver may see an event more than once, never zero times, and deduplicates by
//! `webhook-id`, which is the outbox id and stays the same across retries and replays. Events of a site
//! whose endpoint is unset, backing off or disabled (a 410 Gone, or failing for `webhooks.disable_after`) are
//! kept and wait. A result is recorded only under the lease token its claim wrote, so a worker whose lease
//! expired cannot overwrite a newer state. After the last retry an event is
//! `dead`: kept until an operator replays (`sitebot webhooks replay`) or purges it.
//!
//! Modules: [`signing`] (the signature header), [`deliver`] (one HTTP attempt under the URL policy),
//! [`retry`] (when to try again), [`worker`] (`Worker`: claim, deliver, record; `run_once` drains what is due, for tests and the
//! CLI, `run_until_stopped` runs beside the server).

pub mod deliver;
pub mod retry;
pub mod signing;
pub mod worker;
// #25 settings
pub mod test_event;

pub use worker::{Summary, Worker, WorkerError};
