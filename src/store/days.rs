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

/// The Monday (UTC midnight) of the week `day` falls in: 1970-01-01 was a Thursday.
pub fn week_of(day: Timestamp) -> Timestamp {
    let d = day.as_millis().div_euclid(DAY_MS);
    Timestamp::from_millis((d - (d + 3).rem_euclid(7)) * DAY_MS)
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
    let mut weekly = tx.prepare_cached(
        "INSERT INTO site_week_sources (site_id, week, document_id, title, url, citations) VALUES (?1, ?2, ?3, ?4, ?5, 1)
         ON CONFLICT (site_id, week, document_id) DO UPDATE SET citations = citations + 1, title = excluded.title, url = excluded.url",
    )?;
    for (id, title, url) in cited {
        source.execute(params![site, day, id, title, url])?;
        weekly.execute(params![site, week_of(day), id, title, url])?;
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

    /// The most cited documents since `since`, at most `limit`: whole weeks from the weekly counts, the
    /// days before the first whole week and those of the current week from the daily ones.
    pub fn top_sources(&self, since: Timestamp, limit: usize) -> Result<Vec<CitedDocument>> {
        let site = self.site.id();
        let since = day_of(since);
        let first_week = if week_of(since) == since { since } else { Timestamp::from_millis(week_of(since).as_millis() + 7 * DAY_MS) };
        let this_week = week_of(day_of(Timestamp::now())).max(since);
        self.site.store().read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT document_id, max(title), max(url), sum(n) AS total FROM (
                     SELECT document_id, title, url, citations AS n FROM site_day_sources WHERE site_id = ?1 AND day >= ?2 AND day < min(?3, ?4)
                     UNION ALL
                     SELECT document_id, title, url, citations FROM site_week_sources WHERE site_id = ?1 AND week >= ?3 AND week < ?4
                     UNION ALL
                     SELECT document_id, title, url, citations FROM site_day_sources WHERE site_id = ?1 AND day >= ?4
                 ) GROUP BY document_id ORDER BY total DESC, document_id LIMIT ?5",
            )?;
            let rows = stmt.query_map(params![site, since, first_week, this_week, limit as i64], |r| {
                Ok(CitedDocument { document_id: r.get(0)?, title: r.get(1)?, url: r.get(2)?, citations: r.get::<_, i64>(3)? as u64 })
            })?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Currency, Lang, Slug, Tier};
    use crate::secrets::Keyring;
    use crate::store::history::Event;
    use crate::store::queries::{Cited, QueryRecord};
    use crate::store::{NewSite, Store};

    #[test]
    fn weeks_then_days_count_the_same_citations_as_days_alone() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db"), Keyring::from_bytes(&[5; 32])).unwrap();
        let new = NewSite::new("S", Slug::vertical("dental").unwrap(), Tier::Pro, Currency::parse("EUR").unwrap(), Lang::parse("en").unwrap());
        let (site, _) = store.sites().create(new).unwrap();
        let today = day_of(Timestamp::now()).as_millis();
        // Document `d{n % 3}` cited once on each of the last 40 days, twice on days divisible by 4.
        let mut events = Vec::new();
        let mut expected = [0u64; 3];
        let since = Timestamp::from_millis(today - 29 * DAY_MS);
        for n in 0..40i64 {
            let at = Timestamp::from_millis(today - n * DAY_MS + 3_600_000);
            for _ in 0..(if n % 4 == 0 { 2 } else { 1 }) {
                let cited = vec![Cited { document_id: format!("d{}", n % 3), title: "t".into(), url: None, score: 0.5 }];
                let q = QueryRecord::answered(site.id, "q", None, cited);
                events.push((at, Event::Question(q)));
                if at >= since {
                    expected[(n % 3) as usize] += 1;
                }
            }
        }
        store.site(site.id).history().write(events).unwrap();
        let mut got: Vec<(String, u64)> =
            store.site(site.id).days().top_sources(since, 10).unwrap().into_iter().map(|d| (d.document_id, d.citations)).collect();
        got.sort();
        assert_eq!(got, vec![("d0".to_owned(), expected[0]), ("d1".to_owned(), expected[1]), ("d2".to_owned(), expected[2])]);
        // Every start day of the week and the current week alone agree with the days too.
        for back in 0..9 {
            let since = Timestamp::from_millis(today - back * DAY_MS);
            let total: u64 = store.site(site.id).days().top_sources(since, 10).unwrap().iter().map(|d| d.citations).sum();
            let days: u64 = (0..=back).map(|n| if n % 4 == 0 { 2 } else { 1 }).sum();
            assert_eq!(total, days, "since {back} days back");
        }
    }
}
