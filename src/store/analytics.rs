//! What visitors do with the widget and think of the answers: ratings of answers (`feedback`), widget
//! events (kept raw for a bounded time, and counted per site, day and type so the counts stay cheap at
//! millions of events), and the report `sitebot analytics` prints.

use std::collections::BTreeMap;

use rusqlite::params;
use serde::Serialize;

use super::{OptionalRow, Result, SiteStore, StoreError};
use crate::domain::{QueryId, SiteId, Timestamp};

/// An answer's rating.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rating {
    Up,
    Down,
}

impl Rating {
    pub fn as_str(self) -> &'static str {
        match self {
            Rating::Up => "up",
            Rating::Down => "down",
        }
    }
}

/// A widget event as accepted by `POST /v1/events` (its type already checked).
#[derive(Debug, Clone)]
pub struct NewEvent {
    pub event_type: String,
    pub session_id: String,
    pub at: Timestamp,
    pub query_id: Option<QueryId>,
    pub url: Option<String>,
}

const DAY_MS: i64 = 86_400_000;

fn day_of(t: Timestamp) -> Timestamp {
    Timestamp::from_millis(t.as_millis().div_euclid(DAY_MS) * DAY_MS)
}

/// `Analytics::rate`'s unit of work at `now`, in the caller's transaction (also the history a benchmark
/// writes in bulk, `store::history`).
pub(super) fn rate(tx: &rusqlite::Transaction<'_>, site: SiteId, query_id: &QueryId, rating: Rating, comment: Option<&str>, now: Timestamp) -> Result<()> {
    let known = tx.query_row("SELECT 1 FROM query_log WHERE id = ?1 AND site_id = ?2", params![query_id, site], |_| Ok(())).optional_row()?;
    known.ok_or(StoreError::NotFound)?;
    let previous: Option<(String, Timestamp)> = tx
        .query_row("SELECT rating, at FROM feedback WHERE site_id = ?1 AND query_id = ?2", params![site, query_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional_row()?;
    tx.execute(
        "INSERT INTO feedback (site_id, query_id, rating, comment, at) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT(site_id, query_id) DO UPDATE SET rating = excluded.rating, comment = excluded.comment, at = excluded.at",
        params![site, query_id, rating.as_str(), comment, now],
    )?;
    super::days::rating(tx, &site, now, rating.as_str() == "up", previous.map(|(r, at)| (r == "up", at)))
}

/// One site's feedback and widget events.
pub struct Analytics<'s> {
    site: SiteStore<'s>,
}

/// Counts of one day.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DayCounts {
    pub day: String,
    pub events: BTreeMap<String, u64>,
}

/// A comment left with a thumbs-down (or up).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Comment {
    pub query_id: String,
    pub question: Option<String>,
    pub rating: Rating,
    pub comment: String,
    pub at: Timestamp,
}

/// `sitebot analytics`: what a site's visitors did since an instant.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AnalyticsReport {
    pub since: Timestamp,
    /// Widget events by type, all days together (API.md's type names).
    pub events: BTreeMap<String, u64>,
    pub by_day: Vec<DayCounts>,
    pub questions: u64,
    pub answered: u64,
    /// Questions answered but not logged (the daily cap was reached): in no other figure of the report.
    pub unlogged_questions: u64,
    /// Answered / questions (0 when there were none).
    pub answer_rate: f64,
    pub feedback_up: u64,
    pub feedback_down: u64,
    pub latest_comments: Vec<Comment>,
    /// Leads that came with a widget conversation.
    pub widget_leads: u64,
    /// Source links clicked most, with their click counts.
    pub top_sources: Vec<(String, u64)>,
}

impl<'s> Analytics<'s> {
    pub(super) fn new(site: SiteStore<'s>) -> Self {
        Self { site }
    }

    /// Rates one of the site's answers; rating again replaces the earlier rating. `NotFound` when the
    /// query is not the site's.
    pub fn rate(&self, query_id: &QueryId, rating: Rating, comment: Option<&str>) -> Result<()> {
        let site = self.site.id();
        self.site.write(|tx| rate(tx, site, query_id, rating, comment, Timestamp::now()))
    }

    /// Stores a batch of widget events and counts them per day and type, in one transaction.
    pub fn record(&self, events: &[NewEvent]) -> Result<usize> {
        let site = self.site.id();
        self.site.write(|tx| {
            let mut raw = tx.prepare_cached("INSERT INTO widget_events (site_id, type, session_id, at, query_id, url) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?;
            let mut count = tx.prepare_cached(
                "INSERT INTO widget_event_counts (site_id, day, type, count) VALUES (?1, ?2, ?3, 1)
                 ON CONFLICT(site_id, day, type) DO UPDATE SET count = count + 1",
            )?;
            for e in events {
                raw.execute(params![site, e.event_type, e.session_id, e.at, e.query_id, e.url])?;
                count.execute(params![site, day_of(e.at), e.event_type])?;
            }
            Ok(events.len())
        })
    }

    /// The report of everything since `since`.
    pub fn report(&self, since: Timestamp) -> Result<AnalyticsReport> {
        let site = self.site.id();
        self.site.store().read(|c| {
            let mut by_day: BTreeMap<i64, DayCounts> = BTreeMap::new();
            let mut events: BTreeMap<String, u64> = BTreeMap::new();
            let mut stmt = c.prepare("SELECT day, type, count FROM widget_event_counts WHERE site_id = ?1 AND day >= ?2 ORDER BY day, type")?;
            for row in stmt.query_map(params![site, day_of(since)], |r| Ok((r.get::<_, Timestamp>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?)))? {
                let (day, t, n) = row?;
                let entry = by_day.entry(day.as_millis()).or_insert_with(|| DayCounts { day: day.date().to_string(), events: BTreeMap::new() });
                entry.events.insert(t.clone(), n as u64);
                *events.entry(t).or_default() += n as u64;
            }
            let (questions, answered): (i64, i64) =
                c.query_row("SELECT count(*), coalesce(sum(resolved), 0) FROM query_log WHERE site_id = ?1 AND created_at >= ?2", params![site, since], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })?;
            let unlogged: i64 = c.query_row(
                "SELECT coalesce(sum(unlogged_questions), 0) FROM daily_usage WHERE site_id = ?1 AND day >= ?2",
                params![site, day_of(since)],
                |r| r.get(0),
            )?;
            let (up, down): (i64, i64) = c.query_row(
                "SELECT coalesce(sum(rating = 'up'), 0), coalesce(sum(rating = 'down'), 0) FROM feedback WHERE site_id = ?1 AND at >= ?2",
                params![site, since],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            let mut stmt = c.prepare(
                "SELECT f.query_id, q.question, f.rating, f.comment, f.at FROM feedback f LEFT JOIN query_log q ON q.id = f.query_id AND q.site_id = f.site_id
                 WHERE f.site_id = ?1 AND f.at >= ?2 AND f.comment IS NOT NULL AND f.comment != '' ORDER BY f.at DESC LIMIT 10",
            )?;
            let latest_comments = stmt
                .query_map(params![site, since], |r| {
                    let rating: String = r.get(2)?;
                    Ok(Comment {
                        query_id: r.get(0)?,
                        question: r.get(1)?,
                        rating: if rating == "up" { Rating::Up } else { Rating::Down },
                        comment: r.get(3)?,
                        at: r.get(4)?,
                    })
                })?
                .collect::<rusqlite::Result<_>>()?;
            let widget_leads: i64 =
                c.query_row("SELECT count(*) FROM leads WHERE site_id = ?1 AND created_at >= ?2 AND conversation_id IS NOT NULL", params![site, since], |r| {
                    r.get(0)
                })?;
            let mut stmt = c.prepare(
                "SELECT url, count(*) AS n FROM widget_events WHERE site_id = ?1 AND at >= ?2 AND type = 'source_clicked' AND url IS NOT NULL
                 GROUP BY url ORDER BY n DESC, url LIMIT 10",
            )?;
            let top_sources =
                stmt.query_map(params![site, since], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64)))?.collect::<rusqlite::Result<_>>()?;
            Ok(AnalyticsReport {
                since,
                events,
                by_day: by_day.into_values().collect(),
                questions: questions as u64,
                answered: answered as u64,
                unlogged_questions: unlogged.max(0) as u64,
                answer_rate: if questions == 0 { 0.0 } else { (answered as f64 / questions as f64 * 10_000.0).round() / 10_000.0 },
                feedback_up: up as u64,
                feedback_down: down as u64,
                latest_comments,
                widget_leads: widget_leads as u64,
                top_sources,
            })
        })
    }
}
