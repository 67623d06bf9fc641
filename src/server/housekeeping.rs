//! Housekeeping: what a server deletes on a schedule, once at start and then every hour.
//!
//! - What visitors leave behind, past the operator's `retention.*` days (the query log with its cited
//!   sources and ratings, conversations, raw widget events) and dead webhook events; the public-stats
//!   counters and daily widget counts are never touched.
//! - Delivered webhook events and idempotency keys past the 24-hour idempotency window.
//! - What memory holds of sites another process deleted (`sitebot site delete` while the server runs):
//!   their BM25 and vector indexes and embedded terms (`knowledge::Engine::forget_deleted`).
//! - Console sessions past their idle or absolute lifetime (`console::session::IDLE`, `ABSOLUTE`): a
//!   session ends when its cookie next comes back, and one whose browser never comes back would stay
//!   forever.
//!
//! Each is one transaction in the store (`store::retention`, `store::users`); a failure is logged and
//! tried again at the next round.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::app::AppState;
use crate::config::RetentionConfig;
use crate::console::session::{ABSOLUTE, IDLE};
use crate::domain::Timestamp;
use crate::store::retention::{Cutoffs, Expired, Pruned};

/// How often housekeeping runs.
const EVERY: Duration = Duration::from_secs(3600);

/// The cut-offs of `[retention]` as of `now`: rows older than each go; 0 days keeps them.
pub fn cutoffs(c: &RetentionConfig, now: Timestamp) -> Cutoffs {
    let before = |days: u32| (days > 0).then(|| Timestamp::from_millis(now.as_millis() - i64::from(days) * 86_400_000));
    Cutoffs {
        queries: before(c.query_log_days),
        conversations: before(c.conversations_days),
        widget_events: before(c.widget_events_days),
        dead_events: before(c.dead_events_days),
    }
}

/// What one round deleted; `None` where that part failed (and was logged).
#[derive(Debug, Default)]
pub struct Round {
    pub expired: Option<Expired>,
    pub pruned: Option<Pruned>,
    /// Console sessions past their idle or absolute lifetime.
    pub sessions: Option<usize>,
}

/// One round: the idempotency window, the retention settings, the console's lapsed sessions, then
/// deleted sites' indexes. What could not be done is logged.
pub async fn run_once(state: &AppState) -> Round {
    let expired = match state.store.run(|s| s.retention().expire(Timestamp::now())).await {
        Ok(e) => {
            if e.delivered_events + e.idempotency_keys > 0 {
                tracing::info!(events = e.delivered_events, keys = e.idempotency_keys, "pruned delivered webhook events and idempotency keys older than 24 h");
            }
            Some(e)
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot prune the outbox");
            None
        }
    };
    let cut = cutoffs(&state.config.retention, Timestamp::now());
    let pruned = match state.store.run(move |s| s.retention().prune(cut)).await {
        Ok(p) => {
            if p.total() > 0 {
                tracing::info!(
                    queries = p.queries,
                    sources = p.query_sources,
                    feedback = p.feedback,
                    conversations = p.conversations,
                    widget_events = p.widget_events,
                    dead_events = p.dead_events,
                    "pruned what is older than the retention settings (counters stay)"
                );
            }
            Some(p)
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot apply the retention settings");
            None
        }
    };
    let now = Timestamp::now();
    let (idle_before, started_before) = (now - IDLE, now - ABSOLUTE);
    let sessions = match state.store.run(move |s| s.users().expire_sessions(idle_before, started_before)).await {
        Ok(n) => {
            if n > 0 {
                tracing::info!(sessions = n, "deleted console sessions past their idle or absolute lifetime");
            }
            Some(n)
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot delete lapsed console sessions");
            None
        }
    };
    let (knowledge, store) = (state.knowledge.clone(), state.store.clone());
    match tokio::task::spawn_blocking(move || knowledge.forget_deleted(&store)).await {
        Ok(Ok(gone)) => {
            for site in gone {
                tracing::info!(site = %site, "forgot the indexes of a site deleted by another process");
            }
        }
        Ok(Err(e)) => tracing::warn!(error = %e, "cannot check which sites were deleted"),
        Err(e) => tracing::warn!(error = %e, "the check of deleted sites failed"),
    }
    Round { expired, pruned, sessions }
}

/// Runs a round now and then every hour until `stop`.
pub async fn run_until_stopped(state: &AppState, stop: CancellationToken) {
    loop {
        run_once(state).await;
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(EVERY) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_days_keeps_everything_and_days_count_back_from_now() {
        let c = RetentionConfig { query_log_days: 90, conversations_days: 0, widget_events_days: 1, dead_events_days: 30 };
        let now = Timestamp::from_millis(100 * 86_400_000);
        let cut = cutoffs(&c, now);
        assert_eq!(cut.queries, Some(Timestamp::from_millis(10 * 86_400_000)));
        assert_eq!(cut.conversations, None);
        assert_eq!(cut.widget_events, Some(Timestamp::from_millis(99 * 86_400_000)));
        assert_eq!(cut.dead_events, Some(Timestamp::from_millis(70 * 86_400_000)));
    }
}
