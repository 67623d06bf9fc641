//! Per-site, per-UTC-day counters behind the console's dashboards: questions and answered ones, leads,
//! ratings, questions by language and citations by document. Each is bumped in the transaction that
//! stores what it counts (the query log, a lead, a rating), so a dashboard of 90 days reads at most 90
//! rows of each, whatever the size of the log; retention keeps them, as it keeps the public-stats counters.

use rusqlite::{Transaction, params};

use super::{Result, SiteStore};
use crate::domain::{SiteId, Timestamp};

const DAY_MS: i64 = 86_400_000;

/// The UTC day `at` falls in, as its midnight.
pub fn day_of(at: Timestamp) -> Timestamp {
    Timestamp::from_millis(at.as_millis().div_euclid(DAY_MS) * DAY_MS)
}

/// One day of a site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Day {
    pub day: Timestamp,
    pub questions: u64,
    pub answered: u64,
    pub leads: u64,
    pub thumbs_up: u64,
    pub thumbs_down: u64,
}

/// A question answered (or not), in `lang`, citing `cited` (document id, title, url).
pub(super) fn question(tx: &Transaction<'_>, site: &SiteId, at: Timestamp, resolved: bool, lang: &str, cited: &[(&str, &str, Option<&str>)]) -> Result<()> {
    let day = day_of(at);
    tx.prepare_cached(
        "INSERT INTO site_days (site_id, day, questions, answered) VALUES (?1, ?2, 1, ?3)
         ON CONFLICT (site_id, day) DO UPDATE SET questions = questions + 1, answered = answered + excluded.answered",
    )?
    .execute(params![site, day, resolved as i64])?;
    tx.prepare_cached(
        "INSERT INTO site_day_langs (site_id, day, lang, questions) VALUES (?1, ?2, ?3, 1)
         ON CONFLICT (site_id, day, lang) DO UPDATE SET questions = questions + 1",
    )?
    .execute(params![site, day, lang])?;
    let mut source = tx.prepare_cached(
        "INSERT INTO site_day_sources (site_id, day, document_id, title, url, citations) VALUES (?1, ?2, ?3, ?4, ?5, 1)
         ON CONFLICT (site_id, day, document_id) DO UPDATE SET citations = citations + 1, title = excluded.title, url = excluded.url",
    )?;
    for (id, title, url) in cited {
        source.execute(params![site, day, id, title, url])?;
    }
    Ok(())
}

pub(super) fn lead(tx: &Transaction<'_>, site: &SiteId, at: Timestamp) -> Result<()> {
    tx.prepare_cached("INSERT INTO site_days (site_id, day, leads) VALUES (?1, ?2, 1) ON CONFLICT (site_id, day) DO UPDATE SET leads = leads + 1")?
        .execute(params![site, day_of(at)])?;
    Ok(())
}

/// A rating given on `at` (`up`), replacing `previous` (its rating and when it was given), if any.
pub(super) fn rating(tx: &Transaction<'_>, site: &SiteId, at: Timestamp, up: bool, previous: Option<(bool, Timestamp)>) -> Result<()> {
    if let Some((was_up, when)) = previous {
        let column = if was_up { "thumbs_up" } else { "thumbs_down" };
        tx.execute(&format!("UPDATE site_days SET {column} = max({column} - 1, 0) WHERE site_id = ?1 AND day = ?2"), params![site, day_of(when)])?;
    }
    let (u, d) = if up { (1, 0) } else { (0, 1) };
    tx.prepare_cached(
        "INSERT INTO site_days (site_id, day, thumbs_up, thumbs_down) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (site_id, day) DO UPDATE SET thumbs_up = thumbs_up + excluded.thumbs_up, thumbs_down = thumbs_down + excluded.thumbs_down",
    )?
    .execute(params![site, day_of(at), u, d])?;
    Ok(())
}

/// A document and how often answers cited it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CitedDocument {
    pub document_id: String,
    pub title: String,
    pub url: Option<String>,
    pub citations: u64,
}

/// One site's days.
pub struct Days<'s> {
    site: SiteStore<'s>,
}

impl<'s> Days<'s> {
    pub(super) fn new(site: SiteStore<'s>) -> Self {
        Self { site }
    }

    /// The days since `since` (its day included) that have anything, oldest first.
    pub fn since(&self, since: Timestamp) -> Result<Vec<Day>> {
        let site = self.site.id();
        self.site.store().read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT day, questions, answered, leads, thumbs_up, thumbs_down FROM site_days WHERE site_id = ?1 AND day >= ?2 ORDER BY day",
            )?;
            let rows = stmt.query_map(params![site, day_of(since)], |r| {
                let n = |i: usize| r.get::<_, i64>(i).map(|v| v.max(0) as u64);
                Ok(Day { day: r.get(0)?, questions: n(1)?, answered: n(2)?, leads: n(3)?, thumbs_up: n(4)?, thumbs_down: n(5)? })
            })?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// Questions by language since `since`, the most asked first, at most `limit`.
    pub fn languages(&self, since: Timestamp, limit: usize) -> Result<Vec<(String, u64)>> {
        let site = self.site.id();
        self.site.store().read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT lang, sum(questions) AS n FROM site_day_langs WHERE site_id = ?1 AND day >= ?2 GROUP BY lang ORDER BY n DESC, lang LIMIT ?3",
            )?;
            let rows = stmt.query_map(params![site, day_of(since), limit as i64], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// The most cited documents since `since`, at most `limit`.
    pub fn top_sources(&self, since: Timestamp, limit: usize) -> Result<Vec<CitedDocument>> {
        let site = self.site.id();
        self.site.store().read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT document_id, max(title), max(url), sum(citations) AS n FROM site_day_sources WHERE site_id = ?1 AND day >= ?2
                 GROUP BY document_id ORDER BY n DESC, document_id LIMIT ?3",
            )?;
            let rows = stmt.query_map(params![site, day_of(since), limit as i64], |r| {
                Ok(CitedDocument { document_id: r.get(0)?, title: r.get(1)?, url: r.get(2)?, citations: r.get::<_, i64>(3)? as u64 })
            })?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }
}
