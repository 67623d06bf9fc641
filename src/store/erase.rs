//! Erasure on request: a whole site (`sitebot site delete`), or one visitor's leads across sites
//! (`sitebot leads erase`). Each is one IMMEDIATE transaction that reports what it removed, counted
//! in the same transaction, so the report is exactly what went.
//!
//! A site is found in every table by its `site_id` column, read from the schema at run time rather than
//! listed here, so a table a later migration adds is covered without touching this file. Rows of tables
//! without the column (conversation turns, delivery attempts) go with their parent by `ON DELETE
//! CASCADE`, and are counted as the difference of their row count. Public vertical content has no
//! site id and is never touched. The site's vector index files are the caller's to remove after the
//! commit (`knowledge::index::remove_files`): the store does not know where they live.

use rusqlite::{Connection, Transaction, params};
use serde::Serialize;

use super::{Result, Store, StoreError};
use crate::domain::{Email, SiteId};

/// What `site delete` removed: rows per table (only tables that had some), and whether the site's
/// full-text table existed and was dropped.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SiteRemoval {
    pub site_id: SiteId,
    pub rows: Vec<(String, u64)>,
    pub fts_table_dropped: bool,
}

impl SiteRemoval {
    pub fn total_rows(&self) -> u64 {
        self.rows.iter().map(|(_, n)| n).sum()
    }
}

/// What `leads erase` removed.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VisitorErasure {
    pub leads: u64,
    /// Webhook events carrying one of the leads, whatever their state: pending and dead ones would still
    /// be sent or replayed, and a delivered one keeps the same personal data in its payload.
    pub events: u64,
    /// Widget conversations the leads linked to, with their turns.
    pub conversations: u64,
    /// Questions asked in those conversations.
    pub questions: u64,
    /// Remembered `Idempotency-Key` answers naming one of the leads.
    pub idempotency_keys: u64,
}

/// The operator's erasure commands.
pub struct Erasure<'s> {
    store: &'s Store,
}

impl<'s> Erasure<'s> {
    pub(super) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Removes the site and everything keyed by it; `NotFound` when there is no such site.
    pub fn site(&self, id: SiteId) -> Result<SiteRemoval> {
        self.store.write(|tx| remove_site(tx, id))
    }

    /// Removes a visitor's leads (the e-mail address compared without regard to ASCII case), in one site
    /// or in all, with what carries or links to them.
    pub fn visitor(&self, email: &Email, site: Option<SiteId>) -> Result<VisitorErasure> {
        self.store.write(|tx| {
            let mut stmt = tx.prepare("SELECT id, site_id, conversation_id FROM leads WHERE email = ?1 COLLATE NOCASE AND (?2 IS NULL OR site_id = ?2)")?;
            let leads: Vec<(String, SiteId, Option<String>)> =
                stmt.query_map(params![email.as_str(), site], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect::<rusqlite::Result<_>>()?;
            drop(stmt);
            let mut out = VisitorErasure::default();
            for (lead, site_id, conversation) in &leads {
                out.events += tx.execute(
                    "DELETE FROM outbox WHERE site_id = ?1 AND event_type = 'lead.captured' AND json_extract(payload, '$.data.leadId') = ?2",
                    params![site_id, lead],
                )? as u64;
                out.idempotency_keys +=
                    tx.execute("DELETE FROM idempotency_keys WHERE site_id = ?1 AND route = 'leads' AND instr(body, ?2) > 0", params![site_id, lead])? as u64;
                if let Some(c) = conversation {
                    out.questions += tx.execute("DELETE FROM query_log WHERE site_id = ?1 AND conversation_id = ?2", params![site_id, c])? as u64;
                    out.conversations += tx.execute("DELETE FROM conversations WHERE site_id = ?1 AND id = ?2", params![site_id, c])? as u64;
                }
                out.leads += tx.execute("DELETE FROM leads WHERE site_id = ?1 AND id = ?2", params![site_id, lead])? as u64;
            }
            Ok(out)
        })
    }
}

/// Removes the site and everything keyed by it, in the caller's transaction; `NotFound` when there is
/// no such site (`site delete`, and `site import --replace`).
pub(super) fn remove_site(tx: &Transaction<'_>, id: SiteId) -> Result<SiteRemoval> {
    let exists: bool = tx.query_row("SELECT EXISTS (SELECT 1 FROM sites WHERE id = ?1)", [id], |r| r.get(0))?;
    if !exists {
        return Err(StoreError::NotFound);
    }
    let fts = super::knowledge::fts_table(&id);
    let tables = ordinary_tables(tx)?;
    let mut keyed = Vec::new();
    for t in &tables {
        if has_column(tx, t, "site_id")? {
            keyed.push(t);
        }
    }
    let mut before = Vec::with_capacity(tables.len());
    for t in &tables {
        before.push(count(tx, t)?);
    }
    // Children first by hand (each statement says what it removes); cascades take the rest.
    for t in keyed {
        tx.execute(&format!("DELETE FROM \"{t}\" WHERE site_id = ?1"), [id])?;
    }
    tx.execute("DELETE FROM sites WHERE id = ?1", [id])?;
    let mut rows = Vec::new();
    for (t, b) in tables.iter().zip(before) {
        let gone = b - count(tx, t)?;
        if gone > 0 {
            rows.push((t.clone(), gone));
        }
    }
    let fts_exists: bool = tx.query_row("SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1)", [&fts], |r| r.get(0))?;
    if fts_exists {
        tx.execute_batch(&format!("DROP TABLE {fts}"))?;
    }
    Ok(SiteRemoval { site_id: id, rows, fts_table_dropped: fts_exists })
}

/// Every ordinary table, without SQLite's own, the FTS5 tables and their shadow tables.
pub(super) fn ordinary_tables(tx: &Connection) -> Result<Vec<String>> {
    let mut stmt = tx.prepare(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
         AND name NOT LIKE 'kb\\_fts\\_%' ESCAPE '\\' AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name",
    )?;
    let names = stmt.query_map([], |r| r.get::<_, String>(0))?.collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(names)
}

pub(super) fn has_column(tx: &Connection, table: &str, column: &str) -> Result<bool> {
    Ok(tx.query_row("SELECT EXISTS (SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2)", [table, column], |r| r.get(0))?)
}

fn count(tx: &Connection, table: &str) -> Result<u64> {
    Ok(tx.query_row(&format!("SELECT count(*) FROM \"{table}\""), [], |r| r.get::<_, i64>(0))? as u64)
}
