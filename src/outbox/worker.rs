//! The delivery worker: claim due events with a lease, send them, record each attempt and its outcome.
//!
//! Scheduling is per endpoint (a site's webhook URL): the claim gives each endpoint at most
//! `webhooks.max_in_flight_per_endpoint` of the `webhooks.workers` slots, taking due events round-robin
//! across endpoints, and skips endpoints that are backing off after failures or disabled, so an endpoint
//! that never answers holds at most its own slots for `timeout_secs` and then mostly none.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::deliver::{Sender, Verdict};
use super::retry::{self, Policy};
use crate::app::AppState;
use crate::domain::{EndpointPolicy, Timestamp};
use crate::store::StoreError;
use crate::store::outbox::{Attempt, Claimed, EndpointChange, Lease, Next, Recorded};

/// The longest the worker sleeps between looks at the database when nothing wakes it: events written by
/// another process (the CLI's `webhooks replay`) and expired leases are noticed within this.
const POLL: Duration = Duration::from_secs(1);

#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("webhook configuration: {0}")]
    Config(#[from] crate::config::ConfigError),
    #[error("cannot build the webhook HTTP client: {0}")]
    Client(#[from] reqwest::Error),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What one `run_once` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub claimed: usize,
    pub delivered: usize,
    pub retrying: usize,
    pub dead: usize,
    /// Answered 410: the site's endpoint is now disabled.
    pub gone: usize,
    /// Results dropped because the lease was no longer this worker's.
    pub stale: usize,
}

impl Summary {
    fn add(&mut self, (next, recorded): &(Next, Option<Recorded>)) {
        if *recorded == Some(Recorded::Stale) {
            self.stale += 1;
            return;
        }
        match next {
            Next::Delivered => self.delivered += 1,
            Next::Retry(_) => self.retrying += 1,
            Next::Dead => self.dead += 1,
            Next::Gone => self.gone += 1,
        }
    }
}

/// Everything a delivery needs; cheap to clone into each delivery task.
#[derive(Debug, Clone)]
pub struct Worker {
    state: Arc<AppState>,
    sender: Sender,
    policy: Policy,
    endpoints: EndpointPolicy,
    lease: Duration,
    workers: usize,
}

impl Worker {
    pub fn new(state: Arc<AppState>) -> Result<Worker, WorkerError> {
        let c = &state.config.webhooks;
        let policy = Policy { schedule: c.retry_delays()?, min_after_throttle: c.min_backoff()? };
        let sender = Sender::new(c)?;
        // The lease outlives the request (bounded by the timeout) and the bookkeeping around it, so a
        // live worker never loses its row to another; a dead worker's row is free again soon after.
        let lease = Duration::from_secs(c.timeout_secs * 2 + 2);
        let workers = c.workers.max(1);
        let endpoints = crate::domain::EndpointPolicy::from_config(c)?;
        Ok(Worker { state, sender, policy, endpoints, lease, workers })
    }

    async fn claim(&self, limit: usize) -> Result<Vec<Claimed>, StoreError> {
        let (lease, endpoints) = (self.lease, self.endpoints);
        self.state
            .store
            .run(move |s| {
                let now = Timestamp::now();
                s.outbox().claim_due(now, now + lease, limit, &endpoints)
            })
            .await
    }

    /// Sends one claimed event and records the attempt. Errors are recorded on the event, not returned:
    /// a failure to record leaves the lease to expire, and the event is sent again (at least once). Returns
    /// what the attempt decided and what recording it did (`None`: it could not be recorded).
    pub async fn deliver(&self, event: Claimed) -> (Next, Option<Recorded>) {
        let site_id = event.site_id;
        let secrets = self.state.store.run(move |s| s.site(site_id).signing_secrets()).await;
        let sent = match secrets {
            Ok(secrets) => self.sender.send(event.url.as_str(), &event.id, &event.payload, &secrets).await,
            Err(e) => {
                tracing::error!(event = %event.id, error = %e, "cannot read the site's signing secret");
                super::deliver::Sent {
                    verdict: Verdict::Failed,
                    status: None,
                    body: String::new(),
                    error: Some("cannot read the site's signing secret".into()),
                    retry_after: None,
                    duration: Duration::ZERO,
                    private_peer: false,
                }
            }
        };
        self.state.metrics.delivery_attempt(match sent.verdict {
            Verdict::Delivered => "delivered",
            Verdict::Gone => "gone",
            Verdict::Throttled => "throttled",
            Verdict::Failed => "failed",
        });
        let now = Timestamp::now();
        let next = self.policy.next(sent.verdict, event.attempts, sent.retry_after, now, retry::jitter());
        let attempt = Attempt {
            attempt: event.attempts + 1,
            at: now,
            status_code: sent.status,
            error: sent.error.clone(),
            duration_ms: sent.duration.as_millis() as u64,
        };
        let (id, site, token, rec_next, endpoints) = (event.id.clone(), event.site_id, event.lease_token.clone(), next.clone(), self.endpoints);
        let retry_after = sent.retry_after.map(|d| d.min(retry::RETRY_AFTER_CAP));
        let recorded = match self
            .state
            .store
            .run(move |s| {
                let lease = Lease { id: &id, site_id: &site, token: &token };
                s.outbox().record_attempt(&lease, &attempt, &rec_next, retry_after, &endpoints)
            })
            .await
        {
            Ok(r) => Some(r),
            Err(e) => {
                tracing::error!(event = %event.id, error = %e, "cannot record a webhook attempt; the event will be sent again when its lease expires");
                None
            }
        };
        if recorded == Some(Recorded::Stale) {
            tracing::debug!(event = %event.id, site = %event.site_id, status = ?sent.status, "webhook result dropped: the lease expired and the event was claimed again, or its endpoint was reset");
            return (next, recorded);
        }
        match &next {
            Next::Delivered => {
                tracing::debug!(event = %event.id, site = %event.site_id, status = ?sent.status, "webhook delivered")
            }
            Next::Retry(at) => {
                tracing::info!(event = %event.id, site = %event.site_id, status = ?sent.status, error = ?sent.error, retry_in_ms = at.as_millis() - now.as_millis(), "webhook attempt failed; will retry")
            }
            Next::Dead => {
                tracing::warn!(event = %event.id, site = %event.site_id, status = ?sent.status, error = ?sent.error, "webhook dead-lettered after the last retry; replay with `sitebot webhooks replay`")
            }
            Next::Gone => {
                tracing::warn!(event = %event.id, site = %event.site_id, "receiver answered 410 Gone; the site's webhook endpoint is disabled until `sitebot webhooks enable` or its URL is set again")
            }
        }
        match recorded {
            Some(Recorded::Endpoint(EndpointChange::Disabled { failures, failing_since })) => tracing::warn!(
                site = %event.site_id, url = event.url.as_str(), failures, failing_since = %failing_since,
                "webhook endpoint disabled: every attempt failed for webhooks.disable_after; its events wait until `sitebot webhooks enable --site {}`",
                event.site_id
            ),
            Some(Recorded::Endpoint(EndpointChange::BackingOff { failures, until })) => tracing::debug!(
                site = %event.site_id, failures, retry_in_ms = until.as_millis() - now.as_millis(), "webhook endpoint backing off"
            ),
            _ => {}
        }
        (next, recorded)
    }

    /// Claims what is due now (up to `webhooks.workers` events), delivers it concurrently and returns
    /// what happened. Tests call this to drain the queue step by step.
    pub async fn run_once(&self) -> Result<Summary, WorkerError> {
        let claimed = self.claim(self.workers).await?;
        let mut summary = Summary { claimed: claimed.len(), ..Summary::default() };
        let mut set = JoinSet::new();
        for event in claimed {
            let w = self.clone();
            set.spawn(async move { w.deliver(event).await });
        }
        while let Some(next) = set.join_next().await {
            summary.add(&next.map_err(|e| StoreError::Join(e.to_string()))?);
        }
        Ok(summary)
    }

    /// When the next event may be claimed (its own time, its lease, its endpoint's backoff), if any.
    pub async fn next_due(&self) -> Result<Option<Timestamp>, StoreError> {
        let endpoints = self.endpoints;
        self.state.store.run(move |s| s.outbox().next_due(Timestamp::now(), &endpoints)).await
    }

    /// How long to sleep before something may be due: never more than `POLL`.
    async fn idle_wait(&self) -> Duration {
        match self.next_due().await {
            Ok(Some(at)) => {
                let ms = at.as_millis() - Timestamp::now().as_millis();
                Duration::from_millis(ms.clamp(1, POLL.as_millis() as i64) as u64)
            }
            Ok(None) => POLL,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the outbox");
                POLL
            }
        }
    }

    /// Delivers until `shutdown` is cancelled, with up to `webhooks.workers` deliveries at once; then
    /// stops claiming and lets the deliveries in flight finish.
    pub async fn run_until_stopped(self, shutdown: CancellationToken) {
        let slots = Arc::new(Semaphore::new(self.workers));
        let wake = self.state.outbox_wake.clone();
        let mut inflight = JoinSet::new();
        while !shutdown.is_cancelled() {
            while inflight.try_join_next().is_some() {}
            let free = slots.available_permits();
            if free > 0 {
                match self.claim(free).await {
                    Ok(events) => {
                        let full = events.len() == free;
                        for event in events {
                            let permit = slots.clone().try_acquire_owned().expect("a free slot was counted");
                            let w = self.clone();
                            inflight.spawn(async move {
                                w.deliver(event).await;
                                drop(permit);
                            });
                        }
                        if full {
                            continue; // more may be due; take them as slots free up
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "cannot claim webhook events; retrying"),
                }
            }
            let wait = if free > 0 { self.idle_wait().await } else { POLL };
            tokio::select! {
                _ = shutdown.cancelled() => break,
                _ = wake.notified() => {}
                _ = tokio::time::sleep(wait) => {}
                Some(_) = inflight.join_next(), if !inflight.is_empty() => {}
            }
        }
        if !inflight.is_empty() {
            tracing::info!(in_flight = inflight.len(), "webhook worker stopping; finishing deliveries in flight");
        }
        while inflight.join_next().await.is_some() {}
    }
}
