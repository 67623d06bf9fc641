//! Leads and the idempotency keys of the routes that create them.

use rusqlite::{Connection, OptionalExtension, Transaction, params};
use serde::Serialize;

use super::{Result, now_rfc3339, outbox};
use crate::domain::{Email, SiteId};
use crate::store::Site;

/// How long an `Idempotency-Key` is remembered.
pub const IDEMPOTENCY_WINDOW_SECS: i64 = 24 * 3600;

#[derive(Debug, Clone)]
pub struct NewLead {
    pub name: Option<String>,
    pub email: Email,
    pub message: Option<String>,
    pub page_url: Option<String>,
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
    pub created_at: String,
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
    Stored { lead: Lead, message_id: Option<String> },
    Replayed(StoredResponse),
}

/// Stores a lead, its `lead.captured` outbox event (when the site wants it), the site's lead counter and
/// the idempotency key, all in the caller's one transaction. A key seen in the last 24 h for this site
/// returns the first response instead, and nothing is written.
pub fn capture(
    tx: &Transaction<'_>,
    site: &Site,
    new: NewLead,
    idempotency_key: Option<&str>,
    respond: impl FnOnce(&Lead) -> StoredResponse,
) -> Result<Capture> {
    let now = chrono::Utc::now().timestamp();
    if let Some(key) = idempotency_key {
        let seen: Option<(i64, String)> = tx
            .query_row(
                "SELECT status, body FROM idempotency_keys WHERE site_id = ?1 AND route = 'leads' AND key = ?2 AND created_at > ?3",
                params![site.id, key, now - IDEMPOTENCY_WINDOW_SECS],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        if let Some((status, body)) = seen {
            return Ok(Capture::Replayed(StoredResponse { status: status as u16, body }));
        }
    }
    let lead = Lead {
        lead_id: format!("lead_{}", ulid::Ulid::new()),
        site_id: site.id,
        name: new.name,
        email: new.email.as_str().to_owned(),
        message: new.message,
        page_url: new.page_url,
        created_at: now_rfc3339(),
    };
    tx.execute(
        "INSERT INTO leads (id, site_id, name, email, message, page_url, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![lead.lead_id, lead.site_id, lead.name, lead.email, lead.message, lead.page_url, lead.created_at],
    )?;
    super::stats::record_lead(tx, &site.id)?;
    let message_id = outbox::enqueue(tx, site, "lead.captured", &lead)?;
    if let Some(key) = idempotency_key {
        let stored = respond(&lead);
        tx.execute(
            "INSERT INTO idempotency_keys (site_id, route, key, status, body, created_at) VALUES (?1, 'leads', ?2, ?3, ?4, ?5)
             ON CONFLICT(site_id, route, key) DO UPDATE SET status = excluded.status, body = excluded.body, created_at = excluded.created_at",
            params![site.id, key, stored.status, stored.body, now],
        )?;
    }
    Ok(Capture::Stored { lead, message_id })
}

/// A site's leads, oldest first, optionally since an RFC 3339 instant or a date.
pub fn list(conn: &Connection, site_id: &SiteId, since: Option<&str>) -> Result<Vec<Lead>> {
    let mut stmt = conn.prepare(
        "SELECT id, site_id, name, email, message, page_url, created_at FROM leads
         WHERE site_id = ?1 AND created_at >= ?2 ORDER BY created_at, id",
    )?;
    let rows = stmt.query_map(params![site_id, since.unwrap_or("")], |r| {
        Ok(Lead { lead_id: r.get(0)?, site_id: r.get(1)?, name: r.get(2)?, email: r.get(3)?, message: r.get(4)?, page_url: r.get(5)?, created_at: r.get(6)? })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Forgets idempotency keys older than the window.
pub fn prune_idempotency_keys(tx: &Transaction<'_>) -> Result<usize> {
    let cutoff = chrono::Utc::now().timestamp() - IDEMPOTENCY_WINDOW_SECS;
    Ok(tx.execute("DELETE FROM idempotency_keys WHERE created_at <= ?1", [cutoff])?)
}
