//! What anonymous traffic stored per site and UTC day: the counters behind the daily caps
//! (`limits.leads_per_site_per_day`, `limits.logged_questions_per_site_per_day`).
//!
//! A counter is read and bumped inside the transaction that writes the row it counts (`Leads::capture`,
//! `QueryLog::record`), on the one writer connection, so a cap is never overshot by concurrent requests
//! and holds across restarts within the day.

use rusqlite::{Transaction, params};

use super::{OptionalRow, Result};
use crate::domain::{SiteId, Timestamp};

/// How many rows of one kind a site may store a day; `None`: no cap (bearer-authenticated traffic, or a
/// cap the operator set to 0).
pub type DailyCap = Option<u64>;

/// A site's counts of one UTC day.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DayUsage {
    pub leads: u64,
    pub logged_questions: u64,
    /// Questions answered but not logged because the day's cap was reached.
    pub unlogged_questions: u64,
}

/// The site's counts of the day `at` falls in.
pub(super) fn day(tx: &Transaction<'_>, site: &SiteId, at: Timestamp) -> Result<DayUsage> {
    let row = tx
        .prepare_cached("SELECT leads, logged_questions, unlogged_questions FROM daily_usage WHERE site_id = ?1 AND day = ?2")?
        .query_row(params![site, at.day_start()], |r| {
            let n = |i| r.get::<_, i64>(i).map(|v| v.max(0) as u64);
            Ok(DayUsage { leads: n(0)?, logged_questions: n(1)?, unlogged_questions: n(2)? })
        })
        .optional_row()?;
    Ok(row.unwrap_or_default())
}

/// Whether `used` rows leave room for one more under `cap`.
pub(super) fn has_room(used: u64, cap: DailyCap) -> bool {
    cap.is_none_or(|cap| used < cap)
}

/// Adds to the day's counters.
pub(super) fn add(tx: &Transaction<'_>, site: &SiteId, at: Timestamp, add: DayUsage) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO daily_usage (site_id, day, leads, logged_questions, unlogged_questions) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT(site_id, day) DO UPDATE SET leads = leads + excluded.leads, logged_questions = logged_questions + excluded.logged_questions,
             unlogged_questions = unlogged_questions + excluded.unlogged_questions",
    )?
    .execute(params![site, at.day_start(), add.leads as i64, add.logged_questions as i64, add.unlogged_questions as i64])?;
    Ok(())
}
