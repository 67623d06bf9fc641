//! Per-site counters behind `GET /v1/public-stats/{siteId}`.
//!
//! The counters in `site_stats` are bumped inside the transaction that records the event itself (a
//! lead in `Leads::capture`, a query in `QueryLog::record`), so they agree with the rows they count,
//! and reading them is one primary-key lookup however many questions a site has had.

use rusqlite::{Connection, Transaction, params};

use super::{OptionalRow, Result};
use crate::domain::{SiteId, Timestamp};

/// Counts one answered question; `resolved` when the answer had sources.
pub(super) fn record_query(tx: &Transaction<'_>, site_id: &SiteId, resolved: bool, at: Timestamp) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO site_stats (site_id, questions, resolved_questions, active_since) VALUES (?1, 1, ?2, ?3)
         ON CONFLICT(site_id) DO UPDATE SET questions = questions + 1, resolved_questions = resolved_questions + excluded.resolved_questions,
             active_since = coalesce(active_since, excluded.active_since)",
    )?
    .execute(params![site_id, resolved as i64, at])?;
    Ok(())
}

/// Counts one captured lead.
pub(super) fn record_lead(tx: &Transaction<'_>, site_id: &SiteId, at: Timestamp) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO site_stats (site_id, leads, active_since) VALUES (?1, 1, ?2)
         ON CONFLICT(site_id) DO UPDATE SET leads = leads + 1, active_since = coalesce(active_since, excluded.active_since)",
    )?
    .execute(params![site_id, at])?;
    Ok(())
}

/// A site's counters as stored, with the site's creation time and state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteCounters {
    pub questions: u64,
    pub resolved_questions: u64,
    pub leads: u64,
    /// The first question or lead, if any.
    pub first_activity: Option<Timestamp>,
    pub site_created_at: Timestamp,
    pub site_enabled: bool,
}

/// The counters of a site; `None` when the site does not exist. One indexed lookup.
pub(super) fn counters(conn: &Connection, site_id: &SiteId) -> Result<Option<SiteCounters>> {
    conn.prepare_cached(
        "SELECT coalesce(st.questions, 0), coalesce(st.resolved_questions, 0), coalesce(st.leads, 0), st.active_since, s.created_at, s.enabled
         FROM sites s LEFT JOIN site_stats st ON st.site_id = s.id WHERE s.id = ?1",
    )?
    .query_row([site_id], |r| {
        Ok(SiteCounters {
            questions: r.get::<_, i64>(0)?.max(0) as u64,
            resolved_questions: r.get::<_, i64>(1)?.max(0) as u64,
            leads: r.get::<_, i64>(2)?.max(0) as u64,
            first_activity: r.get(3)?,
            site_created_at: r.get(4)?,
            site_enabled: r.get(5)?,
        })
    })
    .optional_row()
}
