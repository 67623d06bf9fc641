//! Per-site counters behind `GET /v1/public-stats/{siteId}`.
//!
//! The counters in `site_stats` are bumped inside the transaction that records the event itself (a
//! lead in `leads::capture`, a query in the query log through [`record_query`]), so they agree with the
//! rows they count, and reading them is one primary-key lookup however many questions a site has had.

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::Result;
use crate::domain::SiteId;

/// Counts one answered question for `site_id`; `resolved` when the answer had sources. Call it in the
/// same transaction that logs the query.
pub fn record_query(tx: &Transaction<'_>, site_id: &SiteId, resolved: bool) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO site_stats (site_id, questions, resolved_questions, active_since) VALUES (?1, 1, ?2, date('now'))
         ON CONFLICT(site_id) DO UPDATE SET questions = questions + 1, resolved_questions = resolved_questions + excluded.resolved_questions,
             active_since = coalesce(active_since, excluded.active_since)",
    )?
    .execute(params![site_id, resolved as i64])?;
    Ok(())
}

/// Counts one captured lead for `site_id`. Call it in the transaction that stores the lead.
pub fn record_lead(tx: &Transaction<'_>, site_id: &SiteId) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO site_stats (site_id, leads, active_since) VALUES (?1, 1, date('now'))
         ON CONFLICT(site_id) DO UPDATE SET leads = leads + 1, active_since = coalesce(active_since, excluded.active_since)",
    )?
    .execute([site_id])?;
    Ok(())
}

/// A site's counters as stored, with the site's creation time and state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteCounters {
    pub questions: u64,
    pub resolved_questions: u64,
    pub leads: u64,
    /// Date (`YYYY-MM-DD`, UTC) of the first question or lead, if any.
    pub first_activity: Option<String>,
    /// RFC 3339 creation time of the site.
    pub site_created_at: String,
    pub site_enabled: bool,
}

/// The counters of a site; `None` when the site does not exist. One indexed lookup.
pub fn counters(conn: &Connection, site_id: &SiteId) -> Result<Option<SiteCounters>> {
    Ok(conn
        .prepare_cached(
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
        .optional()?)
}
