//! Crawl sources and crawled pages. [`Crawl`] is bound to one site (register, list, remove a source;
//! lease it; read and write its pages); [`CrawlSchedule`] is the server's operator-wide view that claims
//! the next due source.
//!
//! A source is crawled by whoever holds its lease (`lease_until` in the future, `lease_owner` naming the
//! process as `host:pid`): the CLI for `knowledge crawl`, the server's scheduler for a due source. The
//! holder renews the lease while it crawls; a process that dies leaves the source claimable when the
//! lease expires, or at once by a process on the same host that sees the owner is gone. So two
//! processes never crawl one source at once, and a crash only delays the next sync.

use std::time::Duration;

use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};

use super::{OptionalRow, Result, SiteStore, Store, StoreError};
use crate::domain::{SiteId, Timestamp};

/// How a source is crawled, as given to `knowledge crawl` and kept for scheduled syncs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceOptions {
    pub max_pages: usize,
    pub max_depth: Option<u32>,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
}

/// A crawl source as `knowledge sources` shows it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Source {
    pub url: String,
    pub options: SourceOptions,
    /// The sync interval in seconds; `None` when only the operator starts crawls.
    pub every_secs: Option<u64>,
    pub next_sync_at: Option<Timestamp>,
    pub last_sync_at: Option<Timestamp>,
    /// Pages that are documents of the site.
    pub pages: i64,
    /// The last crawl's summary (`fetched`, `imported`, ... `failed`).
    pub last_summary: Option<serde_json::Value>,
    /// Why the last crawl stopped, if it did not finish.
    pub last_error: Option<String>,
    /// A crawl holds the lease until then.
    pub crawling_until: Option<Timestamp>,
    /// Where the running crawl is, while one runs (`progress` below).
    pub progress: Option<CrawlProgress>,
}

/// Where a running crawl of a source is, as its lease holder last wrote it (`set_progress`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CrawlProgress {
    /// Page requests answered.
    pub done: usize,
    /// Pages waiting or in flight.
    pub queued: usize,
    /// The last page answered.
    pub url: String,
}

/// One crawled URL: what a conditional re-fetch sends, and what a 304 stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRecord {
    pub url: String,
    /// The canonical URL, source of the document the page became.
    pub document: Option<String>,
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    pub links: Vec<String>,
}

/// The result of asking for a source's lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    Claimed,
    /// Another process crawls it until then.
    Held {
        owner: String,
        until: Timestamp,
    },
}

fn source_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(Source, String)> {
    let every: Option<i64> = r.get(2)?;
    let summary: Option<String> = r.get(7)?;
    let lease: Option<Timestamp> = r.get::<_, Option<Timestamp>>(5)?.filter(|t| *t > Timestamp::now());
    let progress: Option<String> = r.get(10)?;
    Ok((
        Source {
            url: r.get(0)?,
            options: SourceOptions { max_pages: 0, max_depth: None, include: vec![], exclude: vec![] },
            every_secs: every.map(|ms| (ms / 1000) as u64),
            next_sync_at: r.get(3)?,
            last_sync_at: r.get(4)?,
            pages: r.get(9)?,
            last_summary: summary.and_then(|s| serde_json::from_str(&s).ok()),
            last_error: r.get(8)?,
            crawling_until: lease,
            // Only while the lease runs: a crashed crawl's last progress is no crawl.
            progress: progress.filter(|_| lease.is_some()).and_then(|p| serde_json::from_str(&p).ok()),
        },
        r.get(1)?,
    ))
}

const SOURCE_COLUMNS: &str = "s.url, s.options, s.every_ms, s.next_sync_at, s.last_sync_at, s.lease_until, s.lease_owner, s.last_summary, s.last_error,
     (SELECT count(DISTINCT p.document) FROM crawl_pages p WHERE p.site_id = s.site_id AND p.source_url = s.url), s.progress";

fn with_options((mut source, options): (Source, String)) -> Result<Source> {
    source.options = serde_json::from_str(&options).map_err(|e| StoreError::Corrupt(format!("crawl source options: {e}")))?;
    Ok(source)
}

fn get_source(conn: &Connection, site: &SiteId, url: &str) -> Result<Option<Source>> {
    conn.query_row(&format!("SELECT {SOURCE_COLUMNS} FROM crawl_sources s WHERE s.site_id = ?1 AND s.url = ?2"), params![site, url], source_row)
        .optional_row()?
        .map(with_options)
        .transpose()
}

/// One site's crawl sources and pages.
pub struct Crawl<'s> {
    site: SiteStore<'s>,
}

impl<'s> Crawl<'s> {
    pub(super) fn new(site: SiteStore<'s>) -> Self {
        Self { site }
    }

    /// Creates the source or updates its options. `every` sets the schedule (the first sync falls due
    /// at once unless one is already planned); `None` leaves an existing schedule as it is. A site has
    /// at most `max_sources` sources: a new one beyond is `Conflict`, checked in the same transaction.
    pub fn register(&self, url: &str, options: &SourceOptions, every: Option<Duration>, max_sources: usize) -> Result<Source> {
        let site = self.site.id();
        let options = serde_json::to_string(options).map_err(|e| StoreError::Invalid(e.to_string()))?;
        let now = Timestamp::now();
        self.site.write(|tx| {
            if get_source(tx, &site, url)?.is_none() {
                let n: i64 = tx.query_row("SELECT count(*) FROM crawl_sources WHERE site_id = ?1", [site], |r| r.get(0))?;
                if n as usize >= max_sources {
                    return Err(StoreError::Conflict(format!("the site already has {n} crawl sources, the most it may have: remove one first")));
                }
            }
            tx.execute(
                "INSERT INTO crawl_sources (site_id, url, options, every_ms, next_sync_at, created_at) VALUES (?1, ?2, ?3, ?4, CASE WHEN ?4 IS NULL THEN NULL ELSE ?5 END, ?5)
                 ON CONFLICT (site_id, url) DO UPDATE SET options = excluded.options,
                     every_ms = coalesce(excluded.every_ms, every_ms),
                     next_sync_at = CASE WHEN excluded.every_ms IS NULL THEN next_sync_at ELSE coalesce(next_sync_at, excluded.next_sync_at) END",
                params![site, url, options, every.map(|d| d.as_millis() as i64), now],
            )?;
            get_source(tx, &site, url)?.ok_or(StoreError::NotFound)
        })
    }

    pub fn sources(&self) -> Result<Vec<Source>> {
        let site = self.site.id();
        self.site.store().read(|conn| {
            let mut stmt = conn.prepare(&format!("SELECT {SOURCE_COLUMNS} FROM crawl_sources s WHERE s.site_id = ?1 ORDER BY s.url"))?;
            let rows: Vec<(Source, String)> = stmt.query_map([site], source_row)?.collect::<rusqlite::Result<_>>()?;
            rows.into_iter().map(with_options).collect()
        })
    }

    pub fn source(&self, url: &str) -> Result<Option<Source>> {
        let site = self.site.id();
        self.site.store().read(|conn| get_source(conn, &site, url))
    }

    /// Stops a source: it is no longer synced and its page records go; its documents stay.
    pub fn remove(&self, url: &str) -> Result<()> {
        let site = self.site.id();
        self.site.write(|tx| {
            tx.execute("DELETE FROM crawl_pages WHERE site_id = ?1 AND source_url = ?2", params![site, url])?;
            match tx.execute("DELETE FROM crawl_sources WHERE site_id = ?1 AND url = ?2", params![site, url])? {
                0 => Err(StoreError::NotFound),
                _ => Ok(()),
            }
        })
    }

    /// Takes the source's lease for `owner` until `until`, if it is free, expired, already `owner`'s,
    /// or held by `dead_owner` (a process the caller knows has ended).
    pub fn claim(&self, url: &str, owner: &str, until: Timestamp, dead_owner: Option<&str>) -> Result<Claim> {
        let site = self.site.id();
        let now = Timestamp::now();
        self.site.write(|tx| {
            let n = tx.execute(
                "UPDATE crawl_sources SET lease_until = ?3, lease_owner = ?4
                 WHERE site_id = ?1 AND url = ?2 AND (lease_until IS NULL OR lease_until <= ?5 OR lease_owner = ?4 OR lease_owner = ?6)",
                params![site, url, until, owner, now, dead_owner],
            )?;
            if n == 1 {
                return Ok(Claim::Claimed);
            }
            let held: Option<(Option<String>, Option<Timestamp>)> = tx
                .query_row("SELECT lease_owner, lease_until FROM crawl_sources WHERE site_id = ?1 AND url = ?2", params![site, url], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .optional_row()?;
            match held {
                Some((owner, until)) => Ok(Claim::Held { owner: owner.unwrap_or_default(), until: until.unwrap_or(now) }),
                None => Err(StoreError::NotFound),
            }
        })
    }

    /// Takes the source's lease for `owner` until `until` only if no crawl holds it (free or expired),
    /// whoever asks: the console's "re-sync now", which must never start a second crawl beside one this
    /// same process (its scheduler, an earlier "re-sync now") is running.
    pub fn claim_free(&self, url: &str, owner: &str, until: Timestamp) -> Result<Claim> {
        let site = self.site.id();
        let now = Timestamp::now();
        self.site.write(|tx| {
            let n = tx.execute(
                "UPDATE crawl_sources SET lease_until = ?3, lease_owner = ?4, progress = NULL
                 WHERE site_id = ?1 AND url = ?2 AND (lease_until IS NULL OR lease_until <= ?5)",
                params![site, url, until, owner, now],
            )?;
            if n == 1 {
                return Ok(Claim::Claimed);
            }
            let held: Option<(Option<String>, Option<Timestamp>)> = tx
                .query_row("SELECT lease_owner, lease_until FROM crawl_sources WHERE site_id = ?1 AND url = ?2", params![site, url], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .optional_row()?;
            match held {
                Some((owner, until)) => Ok(Claim::Held { owner: owner.unwrap_or_default(), until: until.unwrap_or(now) }),
                None => Err(StoreError::NotFound),
            }
        })
    }

    /// Records where `owner`'s crawl of the source is; false when the lease is no longer theirs.
    pub fn set_progress(&self, url: &str, owner: &str, progress: &CrawlProgress) -> Result<bool> {
        let site = self.site.id();
        let json = serde_json::to_string(progress).map_err(|e| StoreError::Invalid(e.to_string()))?;
        self.site.write(|tx| {
            Ok(tx.execute("UPDATE crawl_sources SET progress = ?3 WHERE site_id = ?1 AND url = ?2 AND lease_owner = ?4", params![site, url, json, owner])? == 1)
        })
    }

    /// The current lease holder, if the lease has not expired.
    pub fn lease_owner(&self, url: &str) -> Result<Option<String>> {
        let site = self.site.id();
        let now = Timestamp::now();
        self.site.store().read(|conn| {
            Ok(conn
                .query_row("SELECT lease_owner FROM crawl_sources WHERE site_id = ?1 AND url = ?2 AND lease_until > ?3", params![site, url, now], |r| {
                    r.get::<_, Option<String>>(0)
                })
                .optional_row()?
                .flatten())
        })
    }

    /// Extends `owner`'s lease; false when it is no longer theirs.
    pub fn renew(&self, url: &str, owner: &str, until: Timestamp) -> Result<bool> {
        let site = self.site.id();
        self.site.write(|tx| {
            Ok(tx
                .execute("UPDATE crawl_sources SET lease_until = ?3 WHERE site_id = ?1 AND url = ?2 AND lease_owner = ?4", params![site, url, until, owner])?
                == 1)
        })
    }

    /// Records a crawl's end and releases the lease; a scheduled source falls due again `every` later.
    pub fn finish(&self, url: &str, owner: &str, summary: &serde_json::Value, error: Option<&str>) -> Result<()> {
        let site = self.site.id();
        let now = Timestamp::now();
        self.site.write(|tx| {
            tx.execute(
                "UPDATE crawl_sources SET last_sync_at = ?3, last_summary = ?4, last_error = ?5,
                     next_sync_at = CASE WHEN every_ms IS NULL THEN NULL ELSE ?3 + every_ms END,
                     lease_until = NULL, lease_owner = NULL, progress = NULL
                 WHERE site_id = ?1 AND url = ?2 AND (lease_owner = ?6 OR lease_owner IS NULL)",
                params![site, url, now, summary.to_string(), error, owner],
            )?;
            Ok(())
        })
    }

    /// The pages a source's last crawls recorded.
    pub fn pages(&self, source_url: &str) -> Result<Vec<PageRecord>> {
        let site = self.site.id();
        self.site.store().read(|conn| {
            let mut stmt =
                conn.prepare("SELECT url, document, etag, last_modified, links FROM crawl_pages WHERE site_id = ?1 AND source_url = ?2 ORDER BY url")?;
            let rows: Vec<(PageRecord, String)> = stmt
                .query_map(params![site, source_url], |r| {
                    Ok((PageRecord { url: r.get(0)?, document: r.get(1)?, etag: r.get(2)?, last_modified: r.get(3)?, links: vec![] }, r.get(4)?))
                })?
                .collect::<rusqlite::Result<_>>()?;
            rows.into_iter()
                .map(|(mut p, links)| {
                    p.links = serde_json::from_str(&links).map_err(|e| StoreError::Corrupt(format!("crawl page links: {e}")))?;
                    Ok(p)
                })
                .collect()
        })
    }

    /// Records pages of `source_url` (replacing their earlier records), in one transaction.
    pub fn save_pages(&self, source_url: &str, pages: &[PageRecord]) -> Result<()> {
        let site = self.site.id();
        let now = Timestamp::now();
        self.site.write(|tx| {
            let mut stmt = tx.prepare_cached(
                "INSERT INTO crawl_pages (site_id, source_url, url, document, etag, last_modified, links, fetched_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                 ON CONFLICT (site_id, url) DO UPDATE SET source_url = excluded.source_url, document = excluded.document, etag = excluded.etag,
                     last_modified = excluded.last_modified, links = excluded.links, fetched_at = excluded.fetched_at",
            )?;
            for p in pages {
                let links = serde_json::to_string(&p.links).map_err(|e| StoreError::Invalid(e.to_string()))?;
                stmt.execute(params![site, source_url, p.url, p.document, p.etag, p.last_modified, links, now])?;
            }
            Ok(())
        })
    }

    /// Forgets page records (the pages are gone, or no longer reached).
    pub fn forget_pages(&self, urls: &[String]) -> Result<()> {
        let site = self.site.id();
        self.site.write(|tx| {
            let mut stmt = tx.prepare_cached("DELETE FROM crawl_pages WHERE site_id = ?1 AND url = ?2")?;
            for u in urls {
                stmt.execute(params![site, u])?;
            }
            Ok(())
        })
    }

    /// Whether another page record still names `document` (another URL of the same page).
    pub fn document_referenced(&self, document: &str) -> Result<bool> {
        let site = self.site.id();
        self.site.store().read(|conn| {
            Ok(conn.query_row("SELECT EXISTS (SELECT 1 FROM crawl_pages WHERE site_id = ?1 AND document = ?2)", params![site, document], |r| r.get(0))?)
        })
    }
}

/// The server's view: which source falls due next, across sites.
pub struct CrawlSchedule<'s> {
    store: &'s Store,
}

impl<'s> CrawlSchedule<'s> {
    pub(super) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Leases the scheduled source most overdue at `now` to `owner` until `until`.
    pub fn claim_due(&self, now: Timestamp, until: Timestamp, owner: &str) -> Result<Option<(SiteId, String)>> {
        self.store.write(|tx| {
            tx.query_row(
                "UPDATE crawl_sources SET lease_until = ?2, lease_owner = ?3
                     WHERE rowid = (SELECT rowid FROM crawl_sources WHERE every_ms IS NOT NULL AND next_sync_at <= ?1
                                      AND (lease_until IS NULL OR lease_until <= ?1) ORDER BY next_sync_at LIMIT 1)
                     RETURNING site_id, url",
                params![now, until, owner],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional_row()
        })
    }

    /// Releases every lease `owner` holds (a server stopping mid-crawl): those sources are due again
    /// as scheduled, at once if they were due.
    pub fn release_all(&self, owner: &str) -> Result<usize> {
        self.store.write(|tx| Ok(tx.execute("UPDATE crawl_sources SET lease_until = NULL, lease_owner = NULL WHERE lease_owner = ?1", [owner])?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Tier;
    use crate::store::sites::tests::{new_site, store};

    fn options() -> SourceOptions {
        SourceOptions { max_pages: 10, max_depth: None, include: vec![], exclude: vec![] }
    }

    #[test]
    fn one_lease_holder_at_a_time_and_a_dead_one_is_replaced() {
        let (_d, store) = store();
        let (site, _) = store.sites().create(new_site("A", Tier::Pro, &[])).unwrap();
        let crawl = store.site(site.id).crawl();
        let url = "https://a.example/";
        crawl.register(url, &options(), None, 20).unwrap();
        let until = Timestamp::now() + Duration::from_secs(60);
        assert_eq!(crawl.claim(url, "h:1", until, None).unwrap(), Claim::Claimed);
        assert_eq!(crawl.claim(url, "h:2", until, None).unwrap(), Claim::Held { owner: "h:1".into(), until });
        // Renewal is the holder's only.
        assert!(!crawl.renew(url, "h:2", until).unwrap());
        assert!(crawl.renew(url, "h:1", until).unwrap());
        // A caller that knows h:1 has ended takes it over at once.
        assert_eq!(crawl.claim(url, "h:2", until, Some("h:1")).unwrap(), Claim::Claimed);
        assert_eq!(crawl.lease_owner(url).unwrap().as_deref(), Some("h:2"));
        crawl.finish(url, "h:2", &serde_json::json!({}), None).unwrap();
        assert_eq!(crawl.lease_owner(url).unwrap(), None);
    }

    #[test]
    fn a_scheduled_source_is_due_once_claimed_and_again_after_its_interval() {
        let (_d, store) = store();
        let (site, _) = store.sites().create(new_site("A", Tier::Pro, &[])).unwrap();
        let crawl = store.site(site.id).crawl();
        crawl.register("https://a.example/", &options(), Some(Duration::from_secs(60)), 20).unwrap();
        crawl.register("https://b.example/", &options(), None, 20).unwrap();
        let now = Timestamp::now();
        let lease = now + Duration::from_secs(60);
        let claimed = store.crawl_schedule().claim_due(now, lease, "h:1").unwrap();
        assert_eq!(claimed, Some((site.id, "https://a.example/".to_owned())));
        // Leased, and the other source is not scheduled: nothing else is due.
        assert_eq!(store.crawl_schedule().claim_due(now, lease, "h:2").unwrap(), None);
        crawl.finish("https://a.example/", "h:1", &serde_json::json!({"fetched": 1}), None).unwrap();
        let source = crawl.source("https://a.example/").unwrap().unwrap();
        assert_eq!(source.next_sync_at.unwrap().as_millis() - source.last_sync_at.unwrap().as_millis(), 60_000);
        assert_eq!(store.crawl_schedule().claim_due(now + Duration::from_secs(30), lease, "h:2").unwrap(), None);
        assert!(store.crawl_schedule().claim_due(now + Duration::from_secs(61), lease, "h:2").unwrap().is_some());
        // Registering again without a schedule keeps it.
        crawl.register("https://a.example/", &options(), None, 20).unwrap();
        assert_eq!(crawl.source("https://a.example/").unwrap().unwrap().every_secs, Some(60));
    }
}
