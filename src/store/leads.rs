//! Leads and the idempotency keys of the route that creates them.

use rusqlite::{Transaction, params};
use serde::Serialize;

use super::outbox::{self, MessageId};
use super::usage::{self, DailyCap, DayUsage};
use super::{OptionalRow, Result, SiteStore, StoreError};
use crate::domain::{ConversationId, Email, EventType, SiteId, Timestamp};

/// How long an `Idempotency-Key` is remembered.
pub const IDEMPOTENCY_WINDOW: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

#[derive(Debug, Clone)]
pub struct NewLead {
    pub name: Option<String>,
    pub email: Email,
    pub message: Option<String>,
    pub page_url: Option<String>,
    /// The widget conversation the visitor had before asking for a person (`cnv_...`), if any.
    pub conversation_id: Option<ConversationId>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Lead {
    pub lead_id: String,
    pub site_id: SiteId,
    pub name: Option<String>,
    pub email: String,
    pub message: Option<String>,
    pub page_url: Option<String>,
    pub created_at: Timestamp,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<ConversationId>,
    /// The conversation's turns, in the `lead.captured` event only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transcript: Option<Vec<super::conversations::Turn>>,
}

/// A stored first response to replay for a repeated key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResponse {
    pub status: u16,
    pub body: String,
}

/// The outcome of a capture.
#[derive(Debug)]
pub enum Capture {
    Stored {
        lead: Lead,
        message_id: Option<MessageId>,
    },
    Replayed(StoredResponse),
    /// The key was used in the window with a different request: nothing is stored or replayed.
    KeyReused,
    /// The site has stored its daily cap of leads: nothing is stored until `resets_at` (midnight UTC).
    OverDailyCap {
        resets_at: Timestamp,
    },
}

/// An `Idempotency-Key` and the SHA-256 (hex) of the request it came with.
#[derive(Debug, Clone, Copy)]
pub struct Idempotency<'a> {
    pub key: &'a str,
    pub request_hash: &'a str,
}

/// One site's leads.
pub struct Leads<'s> {
    site: SiteStore<'s>,
}

impl<'s> Leads<'s> {
    pub(super) fn new(site: SiteStore<'s>) -> Self {
        Self { site }
    }

    /// Stores a lead, its `lead.captured` outbox event (when the site wants it), the site's lead counter
    /// and the idempotency key, all in one transaction. A key seen in the last 24 h for this site returns
    /// the first response instead, and nothing is written. A site that has stored `cap` leads today (UTC)
    /// gets `OverDailyCap` and nothing is written; a replay is answered whatever the count.
    pub fn capture(&self, new: NewLead, idempotency: Option<Idempotency<'_>>, cap: DailyCap, respond: impl FnOnce(&Lead) -> StoredResponse) -> Result<Capture> {
        let site_id = self.site.id();
        self.site.write(|tx| {
            let now = Timestamp::now();
            if let Some(i) = idempotency {
                let seen: Option<(i64, String, Option<String>)> = tx
                    .query_row(
                        "SELECT status, body, request_hash FROM idempotency_keys WHERE site_id = ?1 AND route = 'leads' AND key = ?2 AND created_at > ?3",
                        params![site_id, i.key, now - IDEMPOTENCY_WINDOW],
                        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                    )
                    .optional_row()?;
                match seen {
                    Some((_, _, Some(hash))) if hash != i.request_hash => return Ok(Capture::KeyReused),
                    Some((status, body, _)) => return Ok(Capture::Replayed(StoredResponse { status: status as u16, body })),
                    None => {}
                }
            }
            if !usage::has_room(usage::day(tx, &site_id, now)?.leads, cap) {
                return Ok(Capture::OverDailyCap { resets_at: now.next_day() });
            }
            let (lead, message_id) = store(tx, site_id, new, now)?;
            // #25 email: the owners' e-mails commit with the lead, or neither does.
            if self.site.store().email_enabled() {
                super::email::queue_lead(tx, &site_id, &lead.lead_id, now)?;
            }
            if let Some(i) = idempotency {
                let stored = respond(&lead);
                tx.execute(
                    "INSERT INTO idempotency_keys (site_id, route, key, status, body, created_at, request_hash) VALUES (?1, 'leads', ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT(site_id, route, key) DO UPDATE SET status = excluded.status, body = excluded.body, created_at = excluded.created_at,
                         request_hash = excluded.request_hash",
                    params![site_id, i.key, stored.status, stored.body, now, i.request_hash],
                )?;
            }
            Ok(Capture::Stored { lead, message_id })
        })
    }

    /// The site's leads, oldest first, optionally from an instant on.
    pub fn list(&self, since: Option<Timestamp>) -> Result<Vec<Lead>> {
        let site_id = self.site.id();
        self.site.store().read(|conn| {
            let mut stmt = conn.prepare(&format!("SELECT {LEAD_COLUMNS} FROM leads WHERE site_id = ?1 AND created_at >= ?2 ORDER BY created_at, id"))?;
            let rows = stmt.query_map(params![site_id, since.unwrap_or(Timestamp::from_millis(i64::MIN))], lead_row)?;
            Ok(rows.map(|r| r.map(|row| row.lead)).collect::<rusqlite::Result<_>>()?)
        })
    }
}

/// A lead, its counters and its `lead.captured` event at `now`, in the caller's transaction: what
/// `Leads::capture` writes once the key and the cap let it (also the history a benchmark writes in bulk,
/// `store::history`).
pub(super) fn store(tx: &Transaction<'_>, site_id: SiteId, new: NewLead, now: Timestamp) -> Result<(Lead, Option<MessageId>)> {
    let transcript = new.conversation_id.as_ref().map(|id| super::conversations::transcript_turns(tx, &site_id, id)).transpose()?;
    let lead = Lead {
        lead_id: format!("lead_{}", ulid::Ulid::new()),
        site_id,
        name: new.name,
        email: new.email.as_str().to_owned(),
        message: new.message,
        page_url: new.page_url,
        created_at: now,
        conversation_id: new.conversation_id,
        transcript,
    };
    tx.execute(
        "INSERT INTO leads (id, site_id, name, email, message, page_url, created_at, conversation_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![lead.lead_id, lead.site_id, lead.name, lead.email, lead.message, lead.page_url, lead.created_at, lead.conversation_id],
    )?;
    super::stats::record_lead(tx, &site_id, now)?;
    super::days::lead(tx, &site_id, now)?;
    usage::add(tx, &site_id, now, DayUsage { leads: 1, ..DayUsage::default() })?;
    let message_id = outbox::enqueue(tx, &site_id, EventType::LeadCaptured, &lead, now)?;
    tx.execute("UPDATE leads SET message_id = ?2 WHERE id = ?1", params![lead.lead_id, message_id])?;
    Ok((lead, message_id))
}

/// A lead as the console shows it: the lead, and the id of its `lead.captured` event, if one was sent.
#[derive(Debug, Clone)]
pub struct LeadRow {
    pub lead: Lead,
    pub message_id: Option<MessageId>,
}

const LEAD_COLUMNS: &str = "id, site_id, name, email, message, page_url, created_at, conversation_id, message_id";

fn lead_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<LeadRow> {
    Ok(LeadRow {
        lead: Lead {
            lead_id: r.get(0)?,
            site_id: r.get(1)?,
            name: r.get(2)?,
            email: r.get(3)?,
            message: r.get(4)?,
            page_url: r.get(5)?,
            created_at: r.get(6)?,
            conversation_id: r.get(7)?,
            transcript: None,
        },
        message_id: r.get(8)?,
    })
}

impl Leads<'_> {
    /// The site's leads, newest first, at most `limit`, before `(created_at, id)` when given (keyset
    /// pagination).
    pub fn newest(&self, before: Option<(Timestamp, String)>, limit: usize) -> Result<Vec<LeadRow>> {
        let site_id = self.site.id();
        self.site.store().read(|c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {LEAD_COLUMNS} FROM leads WHERE site_id = ?1 AND (?2 IS NULL OR (created_at, id) < (?2, ?3))
                 ORDER BY created_at DESC, id DESC LIMIT ?4"
            ))?;
            let (at, id) = before.map_or((None, None), |(a, i)| (Some(a), Some(i)));
            let rows = stmt.query_map(params![site_id, at, id, limit as i64], lead_row)?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// The site's leads that came out of conversation `id`, oldest first (by the conversation's index,
    /// however many leads the site has).
    pub fn of_conversation(&self, id: &str) -> Result<Vec<Lead>> {
        let site_id = self.site.id();
        self.site.store().read(|c| {
            let mut stmt =
                c.prepare_cached(&format!("SELECT {LEAD_COLUMNS} FROM leads WHERE conversation_id = ?2 AND site_id = ?1 ORDER BY created_at, id"))?;
            let rows = stmt.query_map(params![site_id, id], lead_row)?;
            Ok(rows.map(|r| r.map(|row| row.lead)).collect::<rusqlite::Result<_>>()?)
        })
    }

    /// One of the site's leads with its conversation's turns; `NotFound` for any other id.
    pub fn get(&self, id: &str) -> Result<LeadRow> {
        let site_id = self.site.id();
        self.site.store().read(|c| {
            let mut row = c
                .query_row(&format!("SELECT {LEAD_COLUMNS} FROM leads WHERE site_id = ?1 AND id = ?2"), params![site_id, id], lead_row)
                .optional_row()?
                .ok_or(StoreError::NotFound)?;
            if let Some(cid) = &row.lead.conversation_id {
                row.lead.transcript = match super::conversations::transcript_turns(c, &site_id, cid) {
                    Ok(t) => Some(t),
                    Err(StoreError::NotFound) => None,
                    Err(e) => return Err(e),
                };
            }
            Ok(row)
        })
    }
}

/// Forgets idempotency keys older than the window.
pub(super) fn prune_idempotency_keys(tx: &Transaction<'_>, now: Timestamp) -> Result<usize> {
    Ok(tx.execute("DELETE FROM idempotency_keys WHERE created_at <= ?1", [now - IDEMPOTENCY_WINDOW])?)
}
