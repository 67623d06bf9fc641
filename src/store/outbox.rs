//! The webhook outbox table: events written in the same transaction as the change they announce.
//! Delivery (the worker, signing, HTTP) lives in `crate::outbox`; this module is only the storage.
//!
//! Row life cycle: `pending` (due at `next_attempt_at`, invisible to other workers while `lease_until`
//! is in the future) -> `delivered`, or back to `pending` with a later `next_attempt_at`, or `dead` once
//! the retry schedule is used up. A claim writes `lease_token`; only a result carrying it is recorded.
//! `attempts` counts the attempts of the current round (a replay starts a new round); `outbox_attempts`
//! keeps every attempt ever made, numbered across rounds.
//!
//! Each site's webhook URL is an endpoint with its own health (`webhook_endpoints`: failures in a row,
//! backoff, disabled by a 410 or by failing for `webhooks.disable_after`), which claiming respects.
//!
//! Enqueueing is tenant-bound (it happens inside a site's unit of work). Claiming, recording and the
//! admin views (`webhooks list|show|replay|purge|endpoints|enable`) are operator-wide: they address an event by its
//! message id, which only the worker and the operator's CLI ever hold.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use rusqlite::ToSql;
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSqlOutput, ValueRef};
use rusqlite::{Connection, Transaction, params};
use serde::Serialize;

use super::{OptionalRow, Result, Store, StoreError};
use crate::domain::{EndpointPolicy, EventType, SiteId, Timestamp, WebhookUrl};

/// `msg_<ulid>`: the event's id in the outbox and the `webhook-id` of every attempt.
pub type MessageId = String;

/// Where an event is in its life cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum OutboxStatus {
    Pending,
    Delivered,
    Dead,
}

impl OutboxStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            OutboxStatus::Pending => "pending",
            OutboxStatus::Delivered => "delivered",
            OutboxStatus::Dead => "dead",
        }
    }
}

impl fmt::Display for OutboxStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for OutboxStatus {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        [OutboxStatus::Pending, OutboxStatus::Delivered, OutboxStatus::Dead]
            .into_iter()
            .find(|x| x.as_str() == s)
            .ok_or_else(|| format!("unknown outbox status `{s}`"))
    }
}

impl ToSql for OutboxStatus {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::from(self.as_str()))
    }
}

impl FromSql for OutboxStatus {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        value.as_str()?.parse().map_err(|e: String| FromSqlError::Other(e.into()))
    }
}

/// The body every delivery of an event carries, byte for byte on each retry.
#[derive(Debug, Serialize)]
struct EventBody<'a, T: Serialize> {
    #[serde(rename = "type")]
    type_: EventType,
    timestamp: Timestamp,
    data: &'a T,
}

/// The JSON body of an event: `{"type", "timestamp", "data"}`.
pub fn event_body<T: Serialize>(event_type: EventType, data: &T) -> Result<String> {
    serde_json::to_string(&EventBody { type_: event_type, timestamp: Timestamp::now(), data }).map_err(|e| StoreError::Invalid(e.to_string()))
}

pub fn new_message_id() -> MessageId {
    format!("msg_{}", ulid::Ulid::new())
}

/// Puts an event in the outbox when the site has a webhook and opted in to this event type (read in the
/// same transaction, so a concurrent settings change is seen consistently); returns the message id or
/// `None` when the site does not want it. Called inside the transaction that makes the change reported,
/// at `now` (due at once).
pub(super) fn enqueue<T: Serialize>(tx: &Transaction<'_>, site_id: &SiteId, event_type: EventType, data: &T, now: Timestamp) -> Result<Option<MessageId>> {
    let prefs: Option<(bool, String)> = tx
        .prepare_cached("SELECT webhook_url IS NOT NULL, webhook_events FROM sites WHERE id = ?1")?
        .query_row([site_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional_row()?;
    let Some((has_url, events)) = prefs else { return Err(StoreError::NotFound) };
    if !has_url || !events.split(',').any(|e| e == event_type.as_str()) {
        return Ok(None);
    }
    let id = new_message_id();
    tx.prepare_cached("INSERT INTO outbox (id, site_id, event_type, payload, next_attempt_at, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5)")?
        .execute(params![id, site_id, event_type, event_body(event_type, data)?, now])?;
    Ok(Some(id))
}

/// A claimed event, with where to send it.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub id: MessageId,
    pub site_id: SiteId,
    pub event_type: EventType,
    pub payload: String,
    /// Attempts already made in this round.
    pub attempts: u32,
    pub url: WebhookUrl,
    /// Written at claim; recording the result needs it.
    pub lease_token: String,
}

impl Claimed {
    pub fn lease(&self) -> Lease<'_> {
        Lease { id: &self.id, site_id: &self.site_id, token: &self.lease_token }
    }
}

/// Who holds an event: its id, its site and the token its claim wrote.
#[derive(Debug, Clone, Copy)]
pub struct Lease<'a> {
    pub id: &'a str,
    pub site_id: &'a SiteId,
    pub token: &'a str,
}

/// What `record_attempt` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// The lease was no longer this worker's: nothing was written.
    Stale,
    /// Recorded; what became of the endpoint.
    Endpoint(EndpointChange),
}

/// An endpoint's health after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndpointChange {
    Healthy,
    /// Failed `failures` times in a row; none of its events is claimed before `until`.
    BackingOff {
        failures: u32,
        until: Timestamp,
    },
    /// Disabled by this attempt: failing continuously since `failing_since`.
    Disabled {
        failures: u32,
        failing_since: Timestamp,
    },
    /// Disabled by a 410.
    Gone,
}

/// An endpoint's state as `webhooks endpoints` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EndpointState {
    Healthy,
    /// Its events wait until `retry_at`.
    BackingOff,
    /// Since `disabled_at`, by a 410 or by failing for `webhooks.disable_after`; `webhooks enable`.
    Disabled,
    /// The site has events waiting but no URL.
    NoUrl,
}

/// A site's webhook endpoint: its health and its queue.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Endpoint {
    pub site_id: SiteId,
    pub url: Option<WebhookUrl>,
    pub state: EndpointState,
    pub disabled_at: Option<Timestamp>,
    pub retry_at: Option<Timestamp>,
    pub in_flight: u32,
    pub pending: u64,
    pub consecutive_failures: u32,
    pub failing_since: Option<Timestamp>,
    pub last_error: Option<String>,
    pub last_attempt_at: Option<Timestamp>,
    pub last_success_at: Option<Timestamp>,
}

/// `free(site_id, free, retry_at)`: the endpoints that may get events (a URL, not disabled), how many
/// more attempts each may have in flight, and until when it backs off. Parameters: ?1 now, ?4 the healthy
/// endpoint's slots.
const FREE_SLOTS: &str = "free AS (
    SELECT s.id AS site_id, coalesce(e.retry_at, 0) AS retry_at,
           CASE WHEN coalesce(e.consecutive_failures, 0) > 0 THEN 1 ELSE ?4 END
             - (SELECT count(*) FROM outbox l WHERE l.site_id = s.id AND l.lease_token IS NOT NULL AND l.lease_until > ?1) AS free
    FROM sites s LEFT JOIN webhook_endpoints e ON e.site_id = s.id
    WHERE s.webhook_url IS NOT NULL AND s.webhook_disabled_at IS NULL)";

/// A new start for a site's endpoint, when its URL is set (`site update --webhook-url`) or the operator
/// enables it (`webhooks enable`): enabled, its failure count and backoff cleared, and its pending events
/// due now as a fresh round of attempts. Leases in flight are revoked, so a result of the old endpoint
/// (recorded after this) is dropped and the event is sent again: at least once.
pub(super) fn reset_endpoint(tx: &Transaction<'_>, site_id: &SiteId, now: Timestamp) -> Result<()> {
    if tx.execute("UPDATE sites SET webhook_disabled_at = NULL WHERE id = ?1", [site_id])? == 0 {
        return Err(StoreError::NotFound);
    }
    tx.execute("DELETE FROM webhook_endpoints WHERE site_id = ?1", [site_id])?;
    tx.execute(
        "UPDATE outbox SET attempts = 0, next_attempt_at = min(next_attempt_at, ?2), lease_until = NULL, lease_token = NULL
         WHERE site_id = ?1 AND status = 'pending'",
        params![site_id, now],
    )?;
    Ok(())
}

/// One delivery attempt, as recorded.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Attempt {
    pub attempt: u32,
    pub at: Timestamp,
    pub status_code: Option<u16>,
    pub error: Option<String>,
    pub duration_ms: u64,
}

/// What to do with an event after an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    Delivered,
    /// Try again at this instant.
    Retry(Timestamp),
    Dead,
    /// The receiver answered 410: disable the site's endpoint; the event waits until it is re-enabled.
    Gone,
}

/// An outbox row for the admin CLI.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    pub id: MessageId,
    pub site_id: SiteId,
    pub event_type: EventType,
    pub status: OutboxStatus,
    pub attempts: u32,
    #[serde(serialize_with = "millis")]
    pub next_attempt_at: Timestamp,
    pub last_error: Option<String>,
    pub created_at: Timestamp,
    pub delivered_at: Option<Timestamp>,
}

/// The schedule is shown to the millisecond: retries are jittered below a second.
fn millis<S: serde::Serializer>(t: &Timestamp, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&t.rfc3339_millis())
}

const MESSAGE_COLUMNS: &str = "id, site_id, event_type, status, attempts, next_attempt_at, last_error, created_at, delivered_at";

fn message_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Message> {
    Ok(Message {
        id: r.get(0)?,
        site_id: r.get(1)?,
        event_type: r.get(2)?,
        status: r.get(3)?,
        attempts: r.get(4)?,
        next_attempt_at: r.get(5)?,
        last_error: r.get(6)?,
        created_at: r.get(7)?,
        delivered_at: r.get(8)?,
    })
}

fn message(conn: &Connection, id: &str) -> Result<Option<Message>> {
    conn.query_row(&format!("SELECT {MESSAGE_COLUMNS} FROM outbox WHERE id = ?1"), [id], message_row).optional_row()
}

/// The outbox as the worker and the operator see it.
pub struct Outbox<'s> {
    store: &'s Store,
}

impl<'s> Outbox<'s> {
    pub(super) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Leases up to `limit` due events until `lease_until`, in one write transaction, so two workers (or
    /// two processes) never claim the same row while a lease holds. A row whose lease ran out (its worker
    /// died) is due again. Each claimed row gets a random `lease_token`; only its holder can record the
    /// result (`record_attempt`).
    ///
    /// Fair across endpoints: each site's endpoint gets at most its free slots (`EndpointPolicy::slots`,
    /// minus the events leased to it now), and the due events are taken round-robin, every endpoint's
    /// oldest first, then every endpoint's second, so a backlog on one endpoint never fills all `limit`
    /// slots. Events of sites without a URL, with a disabled endpoint, or whose endpoint is backing off
    /// are left alone: they wait, they are not lost.
    pub fn claim_due(&self, now: Timestamp, lease_until: Timestamp, limit: usize, endpoints: &EndpointPolicy) -> Result<Vec<Claimed>> {
        self.store.write(|tx| {
            let mut stmt = tx.prepare_cached(&format!(
                "WITH {FREE_SLOTS},
                 ranked AS (
                     SELECT o.id, o.next_attempt_at, f.free,
                            ROW_NUMBER() OVER (PARTITION BY o.site_id ORDER BY o.next_attempt_at, o.id) AS turn
                     FROM outbox o JOIN free f ON f.site_id = o.site_id
                     WHERE o.status = 'pending' AND o.next_attempt_at <= ?1 AND f.retry_at <= ?1
                       AND (o.lease_until IS NULL OR o.lease_until <= ?1)
                       -- A site moving away leaves its events to the node it moves to.
                       AND NOT EXISTS (SELECT 1 FROM sites m WHERE m.id = o.site_id AND m.moving_since IS NOT NULL))
                 UPDATE outbox SET lease_until = ?2, lease_token = lower(hex(randomblob(16)))
                 WHERE id IN (SELECT id FROM ranked WHERE turn <= free ORDER BY turn, next_attempt_at LIMIT ?3)
                 RETURNING id, site_id, event_type, payload, attempts,
                           (SELECT webhook_url FROM sites WHERE sites.id = outbox.site_id), lease_token"
            ))?;
            let rows = stmt.query_map(params![now, lease_until, limit as i64, endpoints.max_in_flight.max(1)], |r| {
                Ok(Claimed {
                    id: r.get(0)?,
                    site_id: r.get(1)?,
                    event_type: r.get(2)?,
                    payload: r.get(3)?,
                    attempts: r.get(4)?,
                    url: r.get(5)?,
                    lease_token: r.get(6)?,
                })
            })?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// How many events are in each state (every state, zeros included).
    pub fn counts_by_status(&self) -> Result<Vec<(OutboxStatus, u64)>> {
        self.store.read(|conn| {
            let mut out = vec![(OutboxStatus::Pending, 0), (OutboxStatus::Delivered, 0), (OutboxStatus::Dead, 0)];
            let mut stmt = conn.prepare_cached("SELECT status, count(*) FROM outbox GROUP BY status")?;
            for row in stmt.query_map([], |r| Ok((r.get::<_, OutboxStatus>(0)?, r.get::<_, i64>(1)?)))? {
                let (status, n) = row?;
                if let Some(slot) = out.iter_mut().find(|(s, _)| *s == status) {
                    slot.1 = n as u64;
                }
            }
            Ok(out)
        })
    }

    /// When the next claimable event falls due, if any: the later of its own time, its lease's end and
    /// its endpoint's backoff. Endpoints with no free slot are left out: one of their deliveries has to
    /// finish first, and the worker wakes when it does.
    pub fn next_due(&self, now: Timestamp, endpoints: &EndpointPolicy) -> Result<Option<Timestamp>> {
        self.store.read(|conn| {
            let sql = format!(
                "WITH {FREE_SLOTS}
                 SELECT min(max(o.next_attempt_at, coalesce(o.lease_until, 0), f.retry_at)) FROM outbox o JOIN free f ON f.site_id = o.site_id
                 WHERE o.status = 'pending' AND f.free > 0"
            );
            Ok(conn.query_row(&sql, params![now, Option::<i64>::None, Option::<i64>::None, endpoints.max_in_flight.max(1)], |r| r.get(0))?)
        })
    }

    /// Records an attempt, applies its outcome to the event and to its endpoint's health, in one
    /// transaction, if `lease_token` still holds the event's lease. When it does not (the lease expired
    /// and another worker claimed the event since, or an operator reset the endpoint), nothing is
    /// written and `Recorded::Stale` is returned: the newer state stands.
    ///
    /// The endpoint: a delivery makes it healthy; a 410 disables it; any other failure counts one more
    /// failure in a row, pauses the endpoint (`EndpointPolicy::after_failure`, at least `retry_after`) and
    /// disables it once it has failed continuously for `disable_after`.
    pub fn record_attempt(
        &self,
        lease: &Lease<'_>,
        attempt: &Attempt,
        next: &Next,
        retry_after: Option<Duration>,
        endpoints: &EndpointPolicy,
    ) -> Result<Recorded> {
        self.store.write(|tx| {
            let now = attempt.at;
            let (status, next_at) = match next {
                Next::Delivered => (OutboxStatus::Delivered, now),
                Next::Retry(at) => (OutboxStatus::Pending, *at),
                Next::Dead => (OutboxStatus::Dead, now),
                Next::Gone => (OutboxStatus::Pending, now),
            };
            let delivered_at = (status == OutboxStatus::Delivered).then_some(attempt.at);
            let changed = tx.execute(
                // After a 410 the event waits for the endpoint to be re-enabled, which starts a fresh round.
                "UPDATE outbox SET status = ?2, attempts = CASE WHEN ?7 THEN 0 ELSE attempts + 1 END, next_attempt_at = ?3,
                        lease_until = NULL, lease_token = NULL, last_error = ?4, delivered_at = coalesce(?5, delivered_at)
                 WHERE id = ?1 AND site_id = ?6 AND lease_token = ?8",
                params![lease.id, status, next_at, attempt.error, delivered_at, lease.site_id, *next == Next::Gone, lease.token],
            )?;
            if changed == 0 {
                return Ok(Recorded::Stale);
            }
            let number: u32 = tx.query_row("SELECT coalesce(max(attempt), 0) + 1 FROM outbox_attempts WHERE message_id = ?1", [lease.id], |r| r.get(0))?;
            tx.execute(
                "INSERT INTO outbox_attempts (message_id, attempt, at, status_code, error, duration_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![lease.id, number, attempt.at, attempt.status_code, attempt.error, attempt.duration_ms as i64],
            )?;
            let site = lease.site_id;
            match next {
                Next::Delivered => {
                    tx.execute(
                        "INSERT INTO webhook_endpoints (site_id, last_attempt_at, last_success_at) VALUES (?1, ?2, ?2)
                         ON CONFLICT (site_id) DO UPDATE SET consecutive_failures = 0, failing_since = NULL, retry_at = NULL,
                             last_attempt_at = ?2, last_success_at = ?2",
                        params![site, now],
                    )?;
                    Ok(Recorded::Endpoint(EndpointChange::Healthy))
                }
                Next::Gone => {
                    tx.execute(
                        "INSERT INTO webhook_endpoints (site_id, last_error, last_attempt_at) VALUES (?1, ?2, ?3)
                         ON CONFLICT (site_id) DO UPDATE SET last_error = ?2, last_attempt_at = ?3",
                        params![site, attempt.error, now],
                    )?;
                    tx.execute("UPDATE sites SET webhook_disabled_at = ?2 WHERE id = ?1 AND webhook_disabled_at IS NULL", params![site, now])?;
                    Ok(Recorded::Endpoint(EndpointChange::Gone))
                }
                Next::Retry(_) | Next::Dead => {
                    let (failures, since): (u32, Option<Timestamp>) = tx
                        .query_row("SELECT consecutive_failures, failing_since FROM webhook_endpoints WHERE site_id = ?1", [site], |r| {
                            Ok((r.get(0)?, r.get(1)?))
                        })
                        .optional_row()?
                        .unwrap_or((0, None));
                    let (failures, since) = (failures + 1, since.unwrap_or(now));
                    let failing = endpoints.after_failure(failures, since, now, retry_after);
                    tx.execute(
                        "INSERT INTO webhook_endpoints (site_id, consecutive_failures, failing_since, retry_at, last_error, last_attempt_at)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                         ON CONFLICT (site_id) DO UPDATE SET consecutive_failures = ?2, failing_since = ?3, retry_at = ?4, last_error = ?5,
                             last_attempt_at = ?6",
                        params![site, failures, since, failing.retry_at, attempt.error, now],
                    )?;
                    if failing.disable
                        && tx.execute("UPDATE sites SET webhook_disabled_at = ?2 WHERE id = ?1 AND webhook_disabled_at IS NULL", params![site, now])? > 0
                    {
                        return Ok(Recorded::Endpoint(EndpointChange::Disabled { failures, failing_since: since }));
                    }
                    Ok(Recorded::Endpoint(EndpointChange::BackingOff { failures, until: failing.retry_at }))
                }
            }
        })
    }

    /// Every webhook endpoint (sites with a URL, or with events waiting for one), or one site's, with its
    /// health and its queue.
    pub fn endpoints(&self, site_id: Option<SiteId>, now: Timestamp) -> Result<Vec<Endpoint>> {
        self.store.read(|conn| {
            let mut stmt = conn.prepare(
                "SELECT s.id, s.webhook_url, s.webhook_disabled_at, e.retry_at, e.consecutive_failures, e.failing_since, e.last_error,
                        e.last_attempt_at, e.last_success_at,
                        (SELECT count(*) FROM outbox o WHERE o.site_id = s.id AND o.status = 'pending'),
                        (SELECT count(*) FROM outbox o WHERE o.site_id = s.id AND o.lease_token IS NOT NULL AND o.lease_until > ?2)
                 FROM sites s LEFT JOIN webhook_endpoints e ON e.site_id = s.id
                 WHERE (?1 IS NULL OR s.id = ?1)
                   AND (s.webhook_url IS NOT NULL OR EXISTS (SELECT 1 FROM outbox o WHERE o.site_id = s.id AND o.status = 'pending'))
                 ORDER BY s.created_at, s.id",
            )?;
            let rows = stmt.query_map(params![site_id, now], |r| {
                let url: Option<WebhookUrl> = r.get(1)?;
                let disabled_at: Option<Timestamp> = r.get(2)?;
                let retry_at: Option<Timestamp> = r.get(3)?;
                let state = match (&url, disabled_at, retry_at) {
                    (None, _, _) => EndpointState::NoUrl,
                    (_, Some(_), _) => EndpointState::Disabled,
                    (_, None, Some(at)) if at > now => EndpointState::BackingOff,
                    _ => EndpointState::Healthy,
                };
                Ok(Endpoint {
                    site_id: r.get(0)?,
                    url,
                    state,
                    disabled_at,
                    retry_at: retry_at.filter(|at| *at > now),
                    consecutive_failures: r.get::<_, Option<u32>>(4)?.unwrap_or(0),
                    failing_since: r.get(5)?,
                    last_error: r.get(6)?,
                    last_attempt_at: r.get(7)?,
                    last_success_at: r.get(8)?,
                    pending: r.get(9)?,
                    in_flight: r.get(10)?,
                })
            })?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// Re-enables a site's endpoint (`webhooks enable`): see `reset_endpoint`. `NotFound` without the site.
    pub fn enable_endpoint(&self, site_id: SiteId, now: Timestamp) -> Result<Endpoint> {
        self.store.write(|tx| reset_endpoint(tx, &site_id, now))?;
        self.endpoints(Some(site_id), now)?.pop().ok_or(StoreError::NotFound)
    }

    /// Events, newest first, optionally of one site and one status.
    pub fn list(&self, site_id: Option<SiteId>, status: Option<OutboxStatus>, limit: usize) -> Result<Vec<Message>> {
        self.store.read(|conn| {
            let sql = format!(
                "SELECT {MESSAGE_COLUMNS} FROM outbox WHERE (?1 IS NULL OR site_id = ?1) AND (?2 IS NULL OR status = ?2)
                 ORDER BY id DESC LIMIT ?3"
            );
            let mut stmt = conn.prepare(&sql)?;
            let rows = stmt.query_map(params![site_id, status, limit as i64], message_row)?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// One event with its payload and every attempt.
    pub fn get(&self, id: &str) -> Result<Option<(Message, String, Vec<Attempt>)>> {
        self.store.read(|conn| {
            let Some(msg) = message(conn, id)? else { return Ok(None) };
            let payload: String = conn.query_row("SELECT payload FROM outbox WHERE id = ?1", [id], |r| r.get(0))?;
            let mut stmt = conn.prepare("SELECT attempt, at, status_code, error, duration_ms FROM outbox_attempts WHERE message_id = ?1 ORDER BY attempt")?;
            let attempts = stmt
                .query_map([id], |r| {
                    Ok(Attempt { attempt: r.get(0)?, at: r.get(1)?, status_code: r.get(2)?, error: r.get(3)?, duration_ms: r.get::<_, i64>(4)? as u64 })
                })?
                .collect::<rusqlite::Result<_>>()?;
            Ok(Some((msg, payload, attempts)))
        })
    }

    /// Makes an event pending and due now, as a new round of attempts with the same id (and so the same
    /// `webhook-id`). Works on dead, delivered and pending events alike.
    pub fn replay(&self, id: &str) -> Result<Message> {
        self.store.write(|tx| {
            let n = tx.execute(
                "UPDATE outbox SET status = 'pending', attempts = 0, next_attempt_at = ?2, lease_until = NULL, lease_token = NULL WHERE id = ?1",
                params![id, Timestamp::now()],
            )?;
            if n == 0 {
                return Err(StoreError::NotFound);
            }
            message(tx, id)?.ok_or(StoreError::NotFound)
        })
    }

    /// Deletes the dead events (of one site, or all); returns how many.
    pub fn purge_dead(&self, site_id: Option<SiteId>) -> Result<usize> {
        self.store.write(|tx| Ok(tx.execute("DELETE FROM outbox WHERE status = 'dead' AND (?1 IS NULL OR site_id = ?1)", params![site_id])?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Currency, Lang, NetworkPolicy, Slug, Tier};
    use crate::secrets::Keyring;
    use crate::store::{NewSite, Site};

    fn ms(t: i64) -> Timestamp {
        Timestamp::from_millis(t)
    }

    const POLICY: EndpointPolicy = EndpointPolicy {
        max_in_flight: 2,
        backoff_initial: Duration::from_secs(1),
        backoff_max: Duration::from_secs(600),
        disable_after: Duration::from_secs(5 * 86_400),
    };

    fn attempt_at(at: i64, status: u16) -> Attempt {
        Attempt { attempt: 1, at: ms(at), status_code: Some(status), error: Some(format!("receiver answered {status}")), duration_ms: 1 }
    }

    fn add_site(store: &Store, url: &str) -> Site {
        let open = NetworkPolicy::private();
        let mut new = NewSite::new("T", Slug::vertical("dental").unwrap(), Tier::Pro, Currency::parse("EUR").unwrap(), Lang::parse("en").unwrap());
        new.webhook_url = Some(WebhookUrl::parse(url, &open).unwrap());
        store.sites().create(new).unwrap().0
    }

    fn enqueue_lead(store: &Store, site: &Site, data: &impl Serialize) -> MessageId {
        store.write(|tx| enqueue(tx, &site.id, EventType::LeadCaptured, data, Timestamp::now())).unwrap().unwrap()
    }

    fn store_with_site(url: Option<&str>) -> (tempfile::TempDir, Store, Site) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db"), Keyring::from_bytes(&[3; 32])).unwrap();
        let open = NetworkPolicy::private();
        let mut new = NewSite::new("S", Slug::vertical("dental").unwrap(), Tier::Pro, Currency::parse("EUR").unwrap(), Lang::parse("en").unwrap());
        new.webhook_url = url.map(|u| WebhookUrl::parse(u, &open).unwrap());
        let (site, _) = store.sites().create(new).unwrap();
        (dir, store, site)
    }

    #[test]
    fn outbox_lease_hides_a_claimed_event_until_it_expires() {
        let (_d, store, site) = store_with_site(Some("http://127.0.0.1:9/hook"));
        let id = enqueue_lead(&store, &site, &serde_json::json!({"a": 1}));
        let now = Timestamp::now().as_millis();
        let first = store.outbox().claim_due(ms(now), ms(now + 30_000), 10, &POLICY).unwrap();
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].id, id);
        assert_eq!(first[0].url.as_str(), "http://127.0.0.1:9/hook");
        // Leased: another worker (or process) sees nothing.
        assert!(store.outbox().claim_due(ms(now + 1_000), ms(now + 31_000), 10, &POLICY).unwrap().is_empty());
        // The worker died: once the lease is over, the event is claimable again, same id.
        let again = store.outbox().claim_due(ms(now + 30_001), ms(now + 60_000), 10, &POLICY).unwrap();
        assert_eq!(again.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), vec![id.as_str()]);
    }

    #[test]
    fn outbox_skips_sites_without_an_enabled_endpoint_and_keeps_their_events() {
        let (_d, store, site) = store_with_site(Some("http://127.0.0.1:9/hook"));
        let id = enqueue_lead(&store, &site, &1);
        let now = Timestamp::now().as_millis() + 10;
        let claimed = store.outbox().claim_due(ms(now), ms(now + 1), 10, &POLICY).unwrap();
        let attempt = Attempt { attempt: 1, at: Timestamp::now(), status_code: Some(410), error: Some("gone".into()), duration_ms: 1 };
        store.outbox().record_attempt(&claimed[0].lease(), &attempt, &Next::Gone, None, &POLICY).unwrap();
        let disabled = store.site(site.id).get().unwrap().unwrap();
        assert!(disabled.webhook_disabled_at.is_some());
        let later = now + 60_000;
        assert!(store.outbox().claim_due(ms(later), ms(later + 1), 10, &POLICY).unwrap().is_empty());
        assert_eq!(store.outbox().next_due(ms(later), &POLICY).unwrap(), None);
        let (msg, _, attempts) = store.outbox().get(&id).unwrap().unwrap();
        assert_eq!(msg.status, OutboxStatus::Pending);
        assert_eq!(msg.attempts, 0, "a 410 does not use up the retry schedule");
        assert_eq!(attempts.len(), 1);
        // Setting the URL again re-enables the endpoint and the waiting event goes out.
        let url = WebhookUrl::parse("http://127.0.0.1:9/new", &NetworkPolicy::private()).unwrap();
        let up = crate::store::SiteUpdate { webhook_url: Some(Some(url)), ..Default::default() };
        store.site(site.id).update(up).unwrap();
        let claimed = store.outbox().claim_due(ms(later), ms(later + 1), 10, &POLICY).unwrap();
        assert_eq!(claimed.len(), 1);
        assert_eq!(claimed[0].url.as_str(), "http://127.0.0.1:9/new");
    }

    #[test]
    fn outbox_replay_starts_a_new_round_with_the_same_id() {
        let (_d, store, site) = store_with_site(Some("http://127.0.0.1:9/hook"));
        let id = enqueue_lead(&store, &site, &1);
        let now = Timestamp::now().as_millis() + 10;
        let claimed = store.outbox().claim_due(ms(now), ms(now + 1), 10, &POLICY).unwrap();
        let attempt = Attempt { attempt: 1, at: Timestamp::now(), status_code: Some(500), error: Some("500".into()), duration_ms: 1 };
        store.outbox().record_attempt(&claimed[0].lease(), &attempt, &Next::Dead, None, &POLICY).unwrap();
        assert_eq!(store.outbox().list(Some(site.id), Some(OutboxStatus::Dead), 10).unwrap().len(), 1);
        let replayed = store.outbox().replay(&id).unwrap();
        assert_eq!((replayed.id.as_str(), replayed.status, replayed.attempts), (id.as_str(), OutboxStatus::Pending, 0));
        // Due now, once the endpoint's one-second pause after the failure is over.
        let later = Timestamp::now().as_millis() + 1_010;
        let claimed = store.outbox().claim_due(ms(later), ms(later + 1), 10, &POLICY).unwrap();
        assert_eq!(claimed[0].id, id);
        store.outbox().record_attempt(&claimed[0].lease(), &attempt, &Next::Retry(ms(later)), None, &POLICY).unwrap();
        let (_, _, attempts) = store.outbox().get(&id).unwrap().unwrap();
        assert_eq!(attempts.iter().map(|a| a.attempt).collect::<Vec<_>>(), vec![1, 2], "attempt numbers continue across rounds");
        assert!(matches!(store.outbox().replay("msg_nope"), Err(StoreError::NotFound)));
    }

    #[test]
    fn outbox_prunes_old_delivered_events_and_keeps_dead_ones() {
        let (_d, store, site) = store_with_site(Some("http://127.0.0.1:9/hook"));
        let ids: Vec<MessageId> = (0..3).map(|_| enqueue_lead(&store, &site, &1)).collect();
        let old = Timestamp::now() - std::time::Duration::from_secs(25 * 3600);
        let recent = Timestamp::now();
        store
            .write(|tx| {
                tx.execute("UPDATE outbox SET status = 'delivered', delivered_at = ?2 WHERE id = ?1", rusqlite::params![ids[0], old])?;
                tx.execute("UPDATE outbox SET status = 'delivered', delivered_at = ?2 WHERE id = ?1", rusqlite::params![ids[1], recent])?;
                tx.execute("UPDATE outbox SET status = 'dead', created_at = ?2 WHERE id = ?1", rusqlite::params![ids[2], old])?;
                Ok(())
            })
            .unwrap();
        let pruned = store.retention().expire(Timestamp::now()).unwrap();
        assert_eq!(pruned.delivered_events, 1);
        let left: Vec<String> = store.outbox().list(Some(site.id), None, 10).unwrap().into_iter().map(|m| m.id).collect();
        assert_eq!(left.len(), 2);
        assert!(left.contains(&ids[1]) && left.contains(&ids[2]) && !left.contains(&ids[0]));
    }

    #[test]
    fn a_late_result_of_an_expired_lease_changes_nothing() {
        let (_d, store, site) = store_with_site(Some("http://127.0.0.1:9/hook"));
        let id = enqueue_lead(&store, &site, &1);
        let now = Timestamp::now().as_millis() + 10;
        // Worker A claims; its lease runs out while its request hangs; worker B claims the event.
        let a = store.outbox().claim_due(ms(now), ms(now + 1_000), 10, &POLICY).unwrap().remove(0);
        let b = store.outbox().claim_due(ms(now + 1_001), ms(now + 2_000), 10, &POLICY).unwrap().remove(0);
        assert_eq!(a.id, b.id);
        assert_ne!(a.lease_token, b.lease_token);
        // B delivers and records it.
        let done = store.outbox().record_attempt(&b.lease(), &attempt_at(now + 1_100, 200), &Next::Delivered, None, &POLICY).unwrap();
        assert_eq!(done, Recorded::Endpoint(EndpointChange::Healthy));
        // A's late failure is dropped: the event stays delivered, one attempt, the endpoint healthy.
        let late = attempt_at(now + 1_500, 500);
        assert_eq!(store.outbox().record_attempt(&a.lease(), &late, &Next::Retry(ms(now + 9_000)), None, &POLICY).unwrap(), Recorded::Stale);
        let (msg, _, attempts) = store.outbox().get(&id).unwrap().unwrap();
        assert_eq!(msg.status, OutboxStatus::Delivered);
        assert_eq!(attempts.iter().map(|a| a.status_code).collect::<Vec<_>>(), vec![Some(200)]);
        let ep = store.outbox().endpoints(Some(site.id), ms(now + 2_000)).unwrap().remove(0);
        assert_eq!((ep.state, ep.consecutive_failures), (EndpointState::Healthy, 0));
        // And B's own record cannot be applied twice either.
        assert_eq!(store.outbox().record_attempt(&b.lease(), &late, &Next::Dead, None, &POLICY).unwrap(), Recorded::Stale);
    }

    #[test]
    fn claiming_is_round_robin_across_endpoints_within_their_slots() {
        let (_d, store, busy) = store_with_site(Some("http://127.0.0.1:9/busy"));
        let quiet = add_site(&store, "http://127.0.0.1:9/quiet");
        let third = add_site(&store, "http://127.0.0.1:9/third");
        for _ in 0..20 {
            enqueue_lead(&store, &busy, &1);
        }
        enqueue_lead(&store, &quiet, &1);
        for _ in 0..3 {
            enqueue_lead(&store, &third, &1);
        }
        let now = Timestamp::now().as_millis() + 10;
        let sites = |c: &[Claimed]| c.iter().map(|c| c.site_id).collect::<Vec<_>>();
        // Three slots: every endpoint's oldest first, however long the busy one's backlog.
        let first = store.outbox().claim_due(ms(now), ms(now + 30_000), 3, &POLICY).unwrap();
        assert_eq!(first.len(), 3);
        for s in [busy.id, quiet.id, third.id] {
            assert_eq!(sites(&first).iter().filter(|x| **x == s).count(), 1, "{:?}", sites(&first));
        }
        // Plenty of slots: each endpoint gets at most 2 in flight, counting the leases it holds.
        let more = store.outbox().claim_due(ms(now), ms(now + 30_000), 100, &POLICY).unwrap();
        assert_eq!(sites(&more).iter().filter(|x| **x == busy.id).count(), 1);
        assert_eq!(sites(&more).iter().filter(|x| **x == third.id).count(), 1);
        assert_eq!(more.len(), 2);
        assert!(store.outbox().claim_due(ms(now), ms(now + 30_000), 100, &POLICY).unwrap().is_empty());
        // No free slot: nothing is due before a lease ends (or a delivery finishes and wakes the worker).
        assert_eq!(store.outbox().next_due(ms(now), &POLICY).unwrap(), Some(ms(now + 30_000)));
        let ep = store.outbox().endpoints(Some(busy.id), ms(now)).unwrap().remove(0);
        assert_eq!((ep.in_flight, ep.pending), (2, 20));
    }

    #[test]
    fn a_failing_endpoint_backs_off_probes_alone_is_disabled_and_resumes_when_enabled() {
        let (_d, store, site) = store_with_site(Some("http://127.0.0.1:9/hook"));
        let ids: Vec<MessageId> = (0..3).map(|_| enqueue_lead(&store, &site, &1)).collect();
        let t0 = Timestamp::now().as_millis() + 10;
        let out = store.outbox();
        let claimed = out.claim_due(ms(t0), ms(t0 + 30_000), 10, &POLICY).unwrap();
        assert_eq!(claimed.len(), 2, "two slots for a healthy endpoint");
        let r1 = out.record_attempt(&claimed[0].lease(), &attempt_at(t0, 500), &Next::Retry(ms(t0)), None, &POLICY).unwrap();
        assert_eq!(r1, Recorded::Endpoint(EndpointChange::BackingOff { failures: 1, until: ms(t0 + 1_000) }));
        let r2 = out.record_attempt(&claimed[1].lease(), &attempt_at(t0, 500), &Next::Retry(ms(t0)), None, &POLICY).unwrap();
        assert_eq!(r2, Recorded::Endpoint(EndpointChange::BackingOff { failures: 2, until: ms(t0 + 2_000) }));
        // Every event is due, but the endpoint is paused.
        assert!(out.claim_due(ms(t0 + 1_999), ms(t0 + 30_000), 10, &POLICY).unwrap().is_empty());
        assert_eq!(out.next_due(ms(t0), &POLICY).unwrap(), Some(ms(t0 + 2_000)));
        let ep = out.endpoints(None, ms(t0 + 1)).unwrap().remove(0);
        assert_eq!((ep.state, ep.retry_at, ep.consecutive_failures, ep.pending), (EndpointState::BackingOff, Some(ms(t0 + 2_000)), 2, 3));
        assert_eq!(ep.last_error.as_deref(), Some("receiver answered 500"));
        // Then one probe at a time; a Retry-After longer than the backoff is honoured.
        let probe = out.claim_due(ms(t0 + 2_000), ms(t0 + 32_000), 10, &POLICY).unwrap();
        assert_eq!(probe.len(), 1);
        let r3 = out.record_attempt(&probe[0].lease(), &attempt_at(t0 + 2_000, 429), &Next::Retry(ms(t0)), Some(Duration::from_secs(60)), &POLICY).unwrap();
        assert_eq!(r3, Recorded::Endpoint(EndpointChange::BackingOff { failures: 3, until: ms(t0 + 62_000) }));
        // Five days of nothing but failures: the next failure disables it.
        let day5 = t0 + 5 * 86_400_000;
        let probe = out.claim_due(ms(day5), ms(day5 + 30_000), 10, &POLICY).unwrap();
        let r4 = out.record_attempt(&probe[0].lease(), &attempt_at(day5, 503), &Next::Retry(ms(day5)), None, &POLICY).unwrap();
        assert_eq!(r4, Recorded::Endpoint(EndpointChange::Disabled { failures: 4, failing_since: ms(t0) }));
        let later = day5 + 86_400_000;
        assert!(out.claim_due(ms(later), ms(later + 1), 10, &POLICY).unwrap().is_empty());
        let ep = out.endpoints(Some(site.id), ms(later)).unwrap().remove(0);
        assert_eq!((ep.state, ep.disabled_at, ep.pending), (EndpointState::Disabled, Some(ms(day5)), 3), "its events wait");
        // Enabled: healthy, and every waiting event is due now, as a fresh round.
        let ep = out.enable_endpoint(site.id, ms(later)).unwrap();
        assert_eq!((ep.state, ep.consecutive_failures, ep.disabled_at), (EndpointState::Healthy, 0, None));
        let resumed = out.claim_due(ms(later), ms(later + 30_000), 10, &POLICY).unwrap();
        assert_eq!(resumed.len(), 2);
        assert!(resumed.iter().all(|c| c.attempts == 0 && ids.contains(&c.id)));
        assert!(matches!(out.enable_endpoint(SiteId::new_random(), ms(later)), Err(StoreError::NotFound)));
    }
}
