//! The webhook outbox table: events written in the same transaction as the change they announce.
//! Delivery (the worker, signing, HTTP) lives in `crate::outbox`; this module is only the SQL.
//!
//! Row life cycle: `pending` (due at `next_attempt_at`, invisible to other workers while `lease_until`
//! is in the future) -> `delivered`, or back to `pending` with a later `next_attempt_at`, or `dead` once
//! the retry schedule is used up. `attempts` counts the attempts of the current round (a replay starts a
//! new round); `outbox_attempts` keeps every attempt ever made, numbered across rounds.

use rusqlite::{Connection, Transaction, params};
use serde::Serialize;

use super::{OptionalRow, Result, StoreError, now_rfc3339};
use crate::domain::SiteId;
use crate::store::Site;

/// The body every delivery of an event carries, byte for byte on each retry.
#[derive(Debug, Serialize)]
pub struct EventBody<'a, T: Serialize> {
    #[serde(rename = "type")]
    pub type_: &'a str,
    pub timestamp: String,
    pub data: T,
}

/// Puts an event in the outbox when the site has a webhook and opted in to this event type; returns the
/// message id (`msg_<ulid>`, the `webhook-id` of every attempt) or `None` when the site does not want it.
/// Call inside the transaction that makes the change the event reports.
pub fn enqueue<T: Serialize>(tx: &Transaction<'_>, site: &Site, event_type: &str, data: &T) -> Result<Option<String>> {
    if site.webhook_url.is_none() || !site.wants_event(event_type) {
        return Ok(None);
    }
    enqueue_unchecked(tx, &site.id, event_type, data).map(Some)
}

/// Enqueues regardless of the site's choices.
pub fn enqueue_unchecked<T: Serialize>(tx: &Transaction<'_>, site_id: &SiteId, event_type: &str, data: &T) -> Result<String> {
    let id = new_message_id();
    let payload = event_body(event_type, data)?;
    tx.execute(
        "INSERT INTO outbox (id, site_id, event_type, payload, next_attempt_at, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![id, site_id, event_type, payload, chrono::Utc::now().timestamp_millis(), now_rfc3339()],
    )?;
    Ok(id)
}

pub fn new_message_id() -> String {
    format!("msg_{}", ulid::Ulid::new())
}

/// The JSON body of an event: `{"type", "timestamp", "data"}`.
pub fn event_body<T: Serialize>(event_type: &str, data: &T) -> Result<String> {
    let body = EventBody { type_: event_type, timestamp: now_rfc3339(), data };
    serde_json::to_string(&body).map_err(|e| StoreError::Invalid(e.to_string()))
}

/// A claimed event, with where to send it.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub id: String,
    pub site_id: SiteId,
    pub event_type: String,
    pub payload: String,
    /// Attempts already made in this round.
    pub attempts: u32,
    pub url: String,
}

/// Leases up to `limit` due events until `lease_until_ms`, in one write transaction, so two workers (or
/// two processes) never claim the same row while a lease holds. A row whose lease ran out (its worker
/// died) is due again. Events of sites without a URL or with an endpoint disabled by a 410 are left
/// alone: they wait, they are not lost.
pub fn claim_due(tx: &Transaction<'_>, now_ms: i64, lease_until_ms: i64, limit: usize) -> Result<Vec<Claimed>> {
    let mut stmt = tx.prepare_cached(
        "UPDATE outbox SET lease_until = ?2
         WHERE id IN (
             SELECT o.id FROM outbox o JOIN sites s ON s.id = o.site_id
             WHERE o.status = 'pending' AND o.next_attempt_at <= ?1
               AND (o.lease_until IS NULL OR o.lease_until <= ?1)
               AND s.webhook_url IS NOT NULL AND s.webhook_disabled_at IS NULL
             ORDER BY o.next_attempt_at LIMIT ?3)
         RETURNING id, site_id, event_type, payload, attempts,
                   (SELECT webhook_url FROM sites WHERE sites.id = outbox.site_id)",
    )?;
    let rows = stmt.query_map(params![now_ms, lease_until_ms, limit as i64], |r| {
        Ok(Claimed { id: r.get(0)?, site_id: r.get(1)?, event_type: r.get(2)?, payload: r.get(3)?, attempts: r.get(4)?, url: r.get(5)? })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// When the next claimable event falls due (unix ms), if any.
pub fn next_due(conn: &Connection) -> Result<Option<i64>> {
    Ok(conn.query_row(
        "SELECT min(max(o.next_attempt_at, coalesce(o.lease_until, 0))) FROM outbox o JOIN sites s ON s.id = o.site_id
         WHERE o.status = 'pending' AND s.webhook_url IS NOT NULL AND s.webhook_disabled_at IS NULL",
        [],
        |r| r.get(0),
    )?)
}

/// One delivery attempt, as recorded.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Attempt {
    pub attempt: u32,
    pub at: String,
    pub status_code: Option<u16>,
    pub error: Option<String>,
    pub duration_ms: u64,
}

/// What to do with an event after an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    Delivered,
    /// Try again at this unix-ms instant.
    Retry(i64),
    Dead,
    /// The receiver answered 410: disable the site's endpoint; the event waits until it is re-enabled.
    Gone,
}

/// Records an attempt and applies its outcome, in one transaction.
pub fn record_attempt(tx: &Transaction<'_>, id: &str, site_id: &SiteId, attempt: &Attempt, next: &Next) -> Result<()> {
    let number: u32 = tx.query_row("SELECT coalesce(max(attempt), 0) + 1 FROM outbox_attempts WHERE message_id = ?1", [id], |r| r.get(0))?;
    tx.execute(
        "INSERT INTO outbox_attempts (message_id, attempt, at, status_code, error, duration_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![id, number, attempt.at, attempt.status_code, attempt.error, attempt.duration_ms as i64],
    )?;
    let now_ms = chrono::Utc::now().timestamp_millis();
    let (status, next_at) = match next {
        Next::Delivered => ("delivered", now_ms),
        Next::Retry(at) => ("pending", *at),
        Next::Dead => ("dead", now_ms),
        Next::Gone => ("pending", now_ms),
    };
    tx.execute(
        // After a 410 the event waits for the endpoint to be re-enabled, which starts a fresh round.
        "UPDATE outbox SET status = ?2, attempts = CASE WHEN ?7 THEN 0 ELSE attempts + 1 END, next_attempt_at = ?3,
                lease_until = NULL, last_error = ?4, delivered_at = CASE WHEN ?2 = 'delivered' THEN ?5 ELSE delivered_at END
         WHERE id = ?1 AND site_id = ?6",
        params![id, status, next_at, attempt.error, attempt.at, site_id, *next == Next::Gone],
    )?;
    if *next == Next::Gone {
        tx.execute("UPDATE sites SET webhook_disabled_at = ?2 WHERE id = ?1 AND webhook_disabled_at IS NULL", params![site_id, now_rfc3339()])?;
    }
    Ok(())
}

/// An outbox row for the admin CLI.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    pub id: String,
    pub site_id: SiteId,
    pub event_type: String,
    pub status: String,
    pub attempts: u32,
    pub next_attempt_at: String,
    pub last_error: Option<String>,
    pub created_at: String,
    pub delivered_at: Option<String>,
}

const MESSAGE_COLUMNS: &str = "id, site_id, event_type, status, attempts, next_attempt_at, last_error, created_at, delivered_at";

fn message_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Message> {
    let next: i64 = r.get(5)?;
    Ok(Message {
        id: r.get(0)?,
        site_id: r.get(1)?,
        event_type: r.get(2)?,
        status: r.get(3)?,
        attempts: r.get(4)?,
        next_attempt_at: chrono::DateTime::from_timestamp_millis(next).map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)).unwrap_or_default(),
        last_error: r.get(6)?,
        created_at: r.get(7)?,
        delivered_at: r.get(8)?,
    })
}

/// Events, newest first, optionally of one site and one status.
pub fn list(conn: &Connection, site_id: Option<&SiteId>, status: Option<&str>, limit: usize) -> Result<Vec<Message>> {
    let sql = format!(
        "SELECT {MESSAGE_COLUMNS} FROM outbox WHERE (?1 IS NULL OR site_id = ?1) AND (?2 IS NULL OR status = ?2)
         ORDER BY id DESC LIMIT ?3"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(params![site_id, status, limit as i64], message_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// One event with its payload and every attempt.
pub fn get(conn: &Connection, id: &str) -> Result<Option<(Message, String, Vec<Attempt>)>> {
    let sql = format!("SELECT {MESSAGE_COLUMNS}, payload FROM outbox WHERE id = ?1");
    let Some((msg, payload)) = conn.query_row(&sql, [id], |r| Ok((message_row(r)?, r.get::<_, String>(9)?))).optional_row()? else {
        return Ok(None);
    };
    let mut stmt = conn.prepare("SELECT attempt, at, status_code, error, duration_ms FROM outbox_attempts WHERE message_id = ?1 ORDER BY attempt")?;
    let attempts = stmt
        .query_map([id], |r| {
            Ok(Attempt { attempt: r.get(0)?, at: r.get(1)?, status_code: r.get(2)?, error: r.get(3)?, duration_ms: r.get::<_, i64>(4)? as u64 })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(Some((msg, payload, attempts)))
}

/// Makes an event pending and due now, as a new round of attempts with the same id (and so the same
/// `webhook-id`). Works on dead, delivered and pending events alike.
pub fn replay(tx: &Transaction<'_>, id: &str) -> Result<Message> {
    let n = tx.execute(
        "UPDATE outbox SET status = 'pending', attempts = 0, next_attempt_at = ?2, lease_until = NULL WHERE id = ?1",
        params![id, chrono::Utc::now().timestamp_millis()],
    )?;
    if n == 0 {
        return Err(StoreError::NotFound);
    }
    let sql = format!("SELECT {MESSAGE_COLUMNS} FROM outbox WHERE id = ?1");
    Ok(tx.query_row(&sql, [id], message_row)?)
}

/// Deletes the dead events (of one site, or all); returns how many.
pub fn purge_dead(tx: &Transaction<'_>, site_id: Option<&SiteId>) -> Result<usize> {
    Ok(tx.execute("DELETE FROM outbox WHERE status = 'dead' AND (?1 IS NULL OR site_id = ?1)", params![site_id])?)
}

/// Deletes delivered events older than `older_than_secs` (their attempts go with them).
pub fn prune_delivered(tx: &Transaction<'_>, older_than_secs: i64) -> Result<usize> {
    let cutoff = (chrono::Utc::now() - chrono::Duration::seconds(older_than_secs)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    Ok(tx.execute("DELETE FROM outbox WHERE status = 'delivered' AND delivered_at < ?1", [cutoff])?)
}
