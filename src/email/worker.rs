//! The e-mail worker: claim due e-mails with a lease, render and send each, record the outcome under
//! the lease.
//!
//! Guarantee: an e-mail is marked sent only after the SMTP server accepted it, and only by the worker
//! whose lease it holds; a worker that dies mid-attempt leaves the lease to expire and the e-mail is
//! claimed again. So every queued e-mail is sent at least once, and twice only if the process dies
//! between the server's acceptance and the mark (the same Message-ID both times). A refused attempt is
//! tried again on `[email] retry_schedule`; a permanent refusal (5xx) or the end of the schedule makes
//! it dead (kept, with its last error, for the operator).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::SetupLink;
use super::digest::Digest;
use super::messages::{self, Envelope};
use super::smtp::{Mailer, SendError};
use crate::config::{Config, ConfigError};
use crate::domain::Timestamp;
use crate::store::email::{Claimed, Kind, Next};
use crate::store::{Store, StoreError};

/// The longest the worker sleeps when nothing wakes it: e-mails queued by another process (the CLI) and
/// expired leases are noticed within this.
const POLL: Duration = Duration::from_secs(1);
/// E-mails claimed at once.
const BATCH: usize = 8;

/// What one `run_once` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub claimed: usize,
    pub sent: usize,
    pub retrying: usize,
    pub dead: usize,
}

#[derive(Clone, Debug)]
pub struct Worker {
    store: Store,
    mailer: Mailer,
    base: String,
    schedule: Vec<Duration>,
    lease: Duration,
    /// Rings when something is queued in this process.
    pub wake: Arc<Notify>,
}

impl Worker {
    /// The worker of a configuration with e-mail on; `Ok(None)` when it is off. `base` is the console's
    /// address for links ([`super::base_url`]).
    pub fn new(store: Store, config: &Config, base: String) -> Result<Option<Worker>, ConfigError> {
        let Some(mailer) = Mailer::from_config(&config.email, &config.server.hostnames)? else { return Ok(None) };
        let schedule = config.email.retry_delays()?;
        // The lease outlives an attempt (bounded by twice the timeout) and its bookkeeping.
        let lease = Duration::from_secs(config.email.timeout_secs * 2 + 5);
        Ok(Some(Worker { store, mailer, base, schedule, lease, wake: Arc::new(Notify::new()) }))
    }

    pub fn server(&self) -> String {
        self.mailer.server()
    }

    async fn claim(&self) -> Result<Vec<Claimed>, StoreError> {
        let lease = self.lease;
        self.store
            .run(move |s| {
                let now = Timestamp::now();
                s.email().claim_due(now, now + lease, BATCH)
            })
            .await
    }

    /// The message of a claimed e-mail; `Ok(None)` when what it was about is gone (a site deleted, a lead
    /// erased): nothing to send.
    async fn render(&self, e: &Claimed) -> Result<Option<lettre::Message>, String> {
        let env = Envelope { from: &self.mailer.from, to: &e.recipient, message_id: format!("<{}@{}>", e.msg_id, self.mailer.domain) };
        let message = match e.kind {
            Kind::SetupLink => {
                let p: SetupLink = serde_json::from_str(&e.payload).map_err(|err| format!("stored setup link: {err}"))?;
                messages::setup_link(&env, &p)
            }
            Kind::Digest => {
                let d: Digest = serde_json::from_str(&e.payload).map_err(|err| format!("stored digest: {err}"))?;
                messages::digest(&env, &d, &self.base)
            }
            Kind::Lead => {
                let (Some(site), Some(lead)) = (e.site_id, e.lead_id.clone()) else { return Ok(None) };
                let found = self
                    .store
                    .run(move |s| {
                        let name = s.site(site).get()?.map(|s| s.name);
                        let lead = match s.site(site).leads().get(&lead) {
                            Ok(row) => Some(row.lead),
                            Err(StoreError::NotFound) => None,
                            Err(e) => return Err(e),
                        };
                        Ok(name.zip(lead))
                    })
                    .await
                    .map_err(|err| format!("cannot read the lead: {err}"))?;
                let Some((name, lead)) = found else { return Ok(None) };
                messages::lead(&env, &name, &lead, &self.base)
            }
        };
        message.map(Some).map_err(|err| err.to_string())
    }

    /// Sends one claimed e-mail and records the outcome; returns it (`None`: the lease was lost, or the
    /// outcome could not be recorded and the lease will expire).
    pub async fn deliver(&self, e: Claimed) -> Option<Next> {
        let (next, error) = match self.render(&e).await {
            Ok(None) => (Next::Dead, Some("what the e-mail was about is gone".to_owned())),
            Err(err) => (Next::Dead, Some(err)),
            Ok(Some(message)) => match self.mailer.send(message).await {
                Ok(()) => (Next::Sent, None),
                Err(SendError { message, permanent }) => {
                    let next = match self.schedule.get(e.attempts as usize) {
                        Some(delay) if !permanent => Next::Retry(Timestamp::now() + *delay),
                        _ => Next::Dead,
                    };
                    (next, Some(message))
                }
            },
        };
        let (id, token, err) = (e.id, e.lease_token.clone(), error.clone());
        match self.store.run(move |s| s.email().record(id, &token, next, err.as_deref())).await {
            Ok(true) => {}
            Ok(false) => {
                tracing::debug!(email = e.id, "e-mail outcome dropped: its lease expired and it was claimed again");
                return None;
            }
            Err(err) => {
                tracing::error!(email = e.id, error = %err, "cannot record an e-mail attempt; it is sent again when its lease expires");
                return None;
            }
        }
        let kind = e.kind.as_str();
        match next {
            Next::Sent => tracing::debug!(email = e.id, kind, "e-mail sent"),
            Next::Retry(at) => {
                tracing::info!(email = e.id, kind, server = %self.mailer.server(), error = ?error, retry_in_ms = at.as_millis() - Timestamp::now().as_millis(), "e-mail not accepted; will retry")
            }
            Next::Dead => tracing::warn!(email = e.id, kind, server = %self.mailer.server(), error = ?error, "e-mail given up"),
        }
        Some(next)
    }

    /// Claims what is due now and sends it, one after the other. Tests and the CLI call this to drain
    /// the queue step by step.
    pub async fn run_once(&self) -> Result<Summary, StoreError> {
        let claimed = self.claim().await?;
        let mut summary = Summary { claimed: claimed.len(), ..Summary::default() };
        for e in claimed {
            match self.deliver(e).await {
                Some(Next::Sent) => summary.sent += 1,
                Some(Next::Retry(_)) => summary.retrying += 1,
                Some(Next::Dead) => summary.dead += 1,
                None => {}
            }
        }
        Ok(summary)
    }

    async fn idle_wait(&self) -> Duration {
        match self.store.run(|s| s.email().next_due()).await {
            Ok(Some(at)) => Duration::from_millis((at.as_millis() - Timestamp::now().as_millis()).clamp(1, POLL.as_millis() as i64) as u64),
            Ok(None) => POLL,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the e-mail queue");
                POLL
            }
        }
    }

    /// Sends until `shutdown` is cancelled; the e-mail in flight is finished first.
    pub async fn run_until_stopped(self, shutdown: CancellationToken) {
        while !shutdown.is_cancelled() {
            match self.run_once().await {
                Ok(s) if s.claimed == BATCH => continue,
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "cannot claim e-mails; retrying"),
            }
            let wait = self.idle_wait().await;
            tokio::select! {
                _ = shutdown.cancelled() => break,
                _ = self.wake.notified() => {}
                _ = tokio::time::sleep(wait) => {}
            }
        }
    }
}
