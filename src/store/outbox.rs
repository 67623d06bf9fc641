//! The webhook outbox table: events written in the same transaction as the change they announce.
//! Delivery (the worker, signing, HTTP) lives in `crate::outbox`; this module is only the storage.
//!
//! Row life cycle: `pending` (due at `next_attempt_at`, invisible to other workers while `lease_until`
//! is in the future) -> `delivered`, or back to `pending` with a later `next_attempt_at`, or `dead` once
//! the retry schedule is used up. `attempts` counts the attempts of the current round (a replay starts a
//! new round); `outbox_attempts` keeps every attempt ever made, numbered across rounds.
//!
//! Enqueueing is tenant-bound (it happens inside a site's unit of work). Claiming, recording and the
//! admin views (`webhooks list|show|replay|purge`) are operator-wide: they address an event by its
//! message id, which only the worker and the operator's CLI ever hold.

use std::fmt;
use std::str::FromStr;

use rusqlite::ToSql;
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSqlOutput, ValueRef};
use rusqlite::{Connection, Transaction, params};
use serde::Serialize;

use super::{OptionalRow, Result, Store, StoreError};
use crate::domain::{EventType, SiteId, Timestamp, WebhookUrl};

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
/// `None` when the site does not want it. Called inside the transaction that makes the change reported.
pub(super) fn enqueue<T: Serialize>(tx: &Transaction<'_>, site_id: &SiteId, event_type: EventType, data: &T) -> Result<Option<MessageId>> {
    let prefs: Option<(bool, String)> = tx
        .prepare_cached("SELECT webhook_url IS NOT NULL, webhook_events FROM sites WHERE id = ?1")?
        .query_row([site_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional_row()?;
    let Some((has_url, events)) = prefs else { return Err(StoreError::NotFound) };
    if !has_url || !events.split(',').any(|e| e == event_type.as_str()) {
        return Ok(None);
    }
    let id = new_message_id();
    let now = Timestamp::now();
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

/// What a maintenance pass removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pruned {
    pub delivered_events: usize,
    pub idempotency_keys: usize,
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
    /// died) is due again. Events of sites without a URL or with an endpoint disabled by a 410 are left
    /// alone: they wait, they are not lost.
    pub fn claim_due(&self, now: Timestamp, lease_until: Timestamp, limit: usize) -> Result<Vec<Claimed>> {
        self.store.write(|tx| {
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
            let rows = stmt.query_map(params![now, lease_until, limit as i64], |r| {
                Ok(Claimed { id: r.get(0)?, site_id: r.get(1)?, event_type: r.get(2)?, payload: r.get(3)?, attempts: r.get(4)?, url: r.get(5)? })
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

    /// When the next claimable event falls due, if any.
    pub fn next_due(&self) -> Result<Option<Timestamp>> {
        self.store.read(|conn| {
            Ok(conn.query_row(
                "SELECT min(max(o.next_attempt_at, coalesce(o.lease_until, 0))) FROM outbox o JOIN sites s ON s.id = o.site_id
                 WHERE o.status = 'pending' AND s.webhook_url IS NOT NULL AND s.webhook_disabled_at IS NULL",
                [],
                |r| r.get(0),
            )?)
        })
    }

    /// Records an attempt and applies its outcome, in one transaction.
    pub fn record_attempt(&self, id: &str, site_id: &SiteId, attempt: &Attempt, next: &Next) -> Result<()> {
        self.store.write(|tx| {
            let number: u32 = tx.query_row("SELECT coalesce(max(attempt), 0) + 1 FROM outbox_attempts WHERE message_id = ?1", [id], |r| r.get(0))?;
            tx.execute(
                "INSERT INTO outbox_attempts (message_id, attempt, at, status_code, error, duration_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![id, number, attempt.at, attempt.status_code, attempt.error, attempt.duration_ms as i64],
            )?;
            let now = Timestamp::now();
            let (status, next_at) = match next {
                Next::Delivered => (OutboxStatus::Delivered, now),
                Next::Retry(at) => (OutboxStatus::Pending, *at),
                Next::Dead => (OutboxStatus::Dead, now),
                Next::Gone => (OutboxStatus::Pending, now),
            };
            let delivered_at = (status == OutboxStatus::Delivered).then_some(attempt.at);
            tx.execute(
                // After a 410 the event waits for the endpoint to be re-enabled, which starts a fresh round.
                "UPDATE outbox SET status = ?2, attempts = CASE WHEN ?7 THEN 0 ELSE attempts + 1 END, next_attempt_at = ?3,
                        lease_until = NULL, last_error = ?4, delivered_at = coalesce(?5, delivered_at)
                 WHERE id = ?1 AND site_id = ?6",
                params![id, status, next_at, attempt.error, delivered_at, site_id, *next == Next::Gone],
            )?;
            if *next == Next::Gone {
                tx.execute("UPDATE sites SET webhook_disabled_at = ?2 WHERE id = ?1 AND webhook_disabled_at IS NULL", params![site_id, now])?;
            }
            Ok(())
        })
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
                "UPDATE outbox SET status = 'pending', attempts = 0, next_attempt_at = ?2, lease_until = NULL WHERE id = ?1",
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

    /// Deletes delivered events older than the idempotency window (their attempts go with them) and the
    /// idempotency keys past it, in one transaction.
    pub fn prune(&self, now: Timestamp) -> Result<Pruned> {
        self.store.write(|tx| {
            let delivered_events =
                tx.execute("DELETE FROM outbox WHERE status = 'delivered' AND delivered_at < ?1", [now - super::leads::IDEMPOTENCY_WINDOW])?;
            let idempotency_keys = super::leads::prune_idempotency_keys(tx, now)?;
            Ok(Pruned { delivered_events, idempotency_keys })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Currency, Lang, Slug, Tier, NetworkPolicy};
    use crate::secrets::Keyring;
    use crate::store::{NewSite, Site};

    fn ms(t: i64) -> Timestamp {
        Timestamp::from_millis(t)
    }

    fn enqueue_lead(store: &Store, site: &Site, data: &impl Serialize) -> MessageId {
        store.write(|tx| enqueue(tx, &site.id, EventType::LeadCaptured, data)).unwrap().unwrap()
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
        let first = store.outbox().claim_due(ms(now), ms(now + 30_000), 10).unwrap();
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].id, id);
        assert_eq!(first[0].url.as_str(), "http://127.0.0.1:9/hook");
        // Leased: another worker (or process) sees nothing.
        assert!(store.outbox().claim_due(ms(now + 1_000), ms(now + 31_000), 10).unwrap().is_empty());
        // The worker died: once the lease is over, the event is claimable again, same id.
        let again = store.outbox().claim_due(ms(now + 30_001), ms(now + 60_000), 10).unwrap();
        assert_eq!(again.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), vec![id.as_str()]);
    }

    #[test]
    fn outbox_skips_sites_without_an_enabled_endpoint_and_keeps_their_events() {
        let (_d, store, site) = store_with_site(Some("http://127.0.0.1:9/hook"));
        let id = enqueue_lead(&store, &site, &1);
        let now = Timestamp::now().as_millis() + 10;
        let claimed = store.outbox().claim_due(ms(now), ms(now + 1), 10).unwrap();
        let attempt = Attempt { attempt: 1, at: Timestamp::now(), status_code: Some(410), error: Some("gone".into()), duration_ms: 1 };
        store.outbox().record_attempt(&claimed[0].id, &site.id, &attempt, &Next::Gone).unwrap();
        let disabled = store.site(site.id).get().unwrap().unwrap();
        assert!(disabled.webhook_disabled_at.is_some());
        let later = now + 60_000;
        assert!(store.outbox().claim_due(ms(later), ms(later + 1), 10).unwrap().is_empty());
        assert_eq!(store.outbox().next_due().unwrap(), None);
        let (msg, _, attempts) = store.outbox().get(&id).unwrap().unwrap();
        assert_eq!(msg.status, OutboxStatus::Pending);
        assert_eq!(msg.attempts, 0, "a 410 does not use up the retry schedule");
        assert_eq!(attempts.len(), 1);
        // Setting the URL again re-enables the endpoint and the waiting event goes out.
        let url = WebhookUrl::parse("http://127.0.0.1:9/new", &NetworkPolicy::private()).unwrap();
        let up = crate::store::SiteUpdate { webhook_url: Some(Some(url)), ..Default::default() };
        store.site(site.id).update(up).unwrap();
        let claimed = store.outbox().claim_due(ms(later), ms(later + 1), 10).unwrap();
        assert_eq!(claimed.len(), 1);
        assert_eq!(claimed[0].url.as_str(), "http://127.0.0.1:9/new");
    }

    #[test]
    fn outbox_replay_starts_a_new_round_with_the_same_id() {
        let (_d, store, site) = store_with_site(Some("http://127.0.0.1:9/hook"));
        let id = enqueue_lead(&store, &site, &1);
        let now = Timestamp::now().as_millis() + 10;
        store.outbox().claim_due(ms(now), ms(now + 1), 10).unwrap();
        let attempt = Attempt { attempt: 1, at: Timestamp::now(), status_code: Some(500), error: Some("500".into()), duration_ms: 1 };
        store.outbox().record_attempt(&id, &site.id, &attempt, &Next::Dead).unwrap();
        assert_eq!(store.outbox().list(Some(site.id), Some(OutboxStatus::Dead), 10).unwrap().len(), 1);
        let replayed = store.outbox().replay(&id).unwrap();
        assert_eq!((replayed.id.as_str(), replayed.status, replayed.attempts), (id.as_str(), OutboxStatus::Pending, 0));
        let later = Timestamp::now().as_millis() + 10;
        let claimed = store.outbox().claim_due(ms(later), ms(later + 1), 10).unwrap();
        assert_eq!(claimed[0].id, id);
        store.outbox().record_attempt(&id, &site.id, &attempt, &Next::Retry(ms(later))).unwrap();
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
        let pruned = store.outbox().prune(Timestamp::now()).unwrap();
        assert_eq!(pruned.delivered_events, 1);
        let left: Vec<String> = store.outbox().list(Some(site.id), None, 10).unwrap().into_iter().map(|m| m.id).collect();
        assert_eq!(left.len(), 2);
        assert!(left.contains(&ids[1]) && left.contains(&ids[2]) && !left.contains(&ids[0]));
    }
}
