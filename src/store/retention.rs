//! Retention: what visitors leave behind (the query log with its cited sources and ratings,
//! conversations, raw widget events) and dead webhook events are deleted once older than the operator's
//! `retention.*` settings. The public-stats counters (`site_stats`) and the daily widget counts are
//! separate rows and are never touched, so the figures a site shows do not fall when its history goes.
//!
//! Past the idempotency window (24 h) delivered webhook events and idempotency keys expire too
//! (`expire`): a retry of a lead after that is a new lead.

use rusqlite::params;
use serde::Serialize;

use super::{Result, Store};
use crate::domain::{SiteId, Timestamp};

/// The cut-off of each kind: rows older than it go; `None` keeps them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cutoffs {
    pub queries: Option<Timestamp>,
    pub conversations: Option<Timestamp>,
    pub widget_events: Option<Timestamp>,
    pub dead_events: Option<Timestamp>,
}

/// Rows removed, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pruned {
    pub queries: usize,
    pub query_sources: usize,
    pub feedback: usize,
    pub conversations: usize,
    pub widget_events: usize,
    pub dead_events: usize,
}

impl Pruned {
    pub fn total(&self) -> usize {
        self.queries + self.query_sources + self.feedback + self.conversations + self.widget_events + self.dead_events
    }
}

/// What expired with the idempotency window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Expired {
    pub delivered_events: usize,
    pub idempotency_keys: usize,
}

/// The retention job over every site.
pub struct Retention<'s> {
    store: &'s Store,
}

impl<'s> Retention<'s> {
    pub(super) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Deletes what is older than each cut-off, in one transaction. A conversation goes with its turns
    /// once its last turn is older than its cut-off; a dead event with its attempts.
    ///
    /// Each site's rows are found through its index by time, so the cost is the rows deleted, not the
    /// size of the tables: a round that finds nothing old holds the writer for next to nothing (a scan of
    /// a million logged questions held it for seconds, and writes waiting longer than `limits.queue_wait`
    /// were refused).
    pub fn prune(&self, c: Cutoffs) -> Result<Pruned> {
        self.store.write(|tx| {
            let mut p = Pruned::default();
            let sites: Vec<SiteId> = tx.prepare("SELECT id FROM sites")?.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
            for site in &sites {
                if let Some(before) = c.queries {
                    p.queries += tx.execute("DELETE FROM query_log WHERE site_id = ?1 AND created_at < ?2", params![site, before])?;
                    p.query_sources += tx.execute("DELETE FROM query_sources WHERE site_id = ?1 AND created_at < ?2", params![site, before])?;
                    p.feedback += tx.execute("DELETE FROM feedback WHERE site_id = ?1 AND at < ?2", params![site, before])?;
                }
                if let Some(before) = c.conversations {
                    p.conversations += tx.execute("DELETE FROM conversations WHERE site_id = ?1 AND updated_at < ?2", params![site, before])?;
                }
                if let Some(before) = c.widget_events {
                    p.widget_events += tx.execute("DELETE FROM widget_events WHERE site_id = ?1 AND at < ?2", params![site, before])?;
                }
                if let Some(before) = c.dead_events {
                    p.dead_events += tx.execute("DELETE FROM outbox WHERE site_id = ?1 AND status = 'dead' AND created_at < ?2", params![site, before])?;
                }
            }
            Ok(p)
        })
    }

    /// Deletes delivered events older than the idempotency window (their attempts go with them) and the
    /// idempotency keys past it, in one transaction.
    pub fn expire(&self, now: Timestamp) -> Result<Expired> {
        self.store.write(|tx| {
            let delivered_events =
                tx.execute("DELETE FROM outbox WHERE status = 'delivered' AND delivered_at < ?1", [now - super::leads::IDEMPOTENCY_WINDOW])?;
            let idempotency_keys = super::leads::prune_idempotency_keys(tx, now)?;
            Ok(Expired { delivered_events, idempotency_keys })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{ConversationId, Currency, Lang, QueryId, Slug, Tier};
    use crate::secrets::Keyring;
    use crate::store::NewSite;
    use crate::store::queries::QueryRecord;

    #[test]
    fn old_rows_go_and_the_public_counters_stay() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db"), Keyring::from_bytes(&[3; 32])).unwrap();
        let new = NewSite::new("S", Slug::vertical("dental").unwrap(), Tier::Pro, Currency::parse("EUR").unwrap(), Lang::parse("en").unwrap());
        let (site, _) = store.sites().create(new).unwrap();
        let queries: Vec<QueryId> = (0..4).map(|_| QueryId::new()).collect();
        let conversations: Vec<ConversationId> = (0..4).map(|_| ConversationId::new()).collect();
        for i in 0..4 {
            let rec = QueryRecord {
                query_id: queries[i].clone(),
                resolved: i % 2 == 0,
                ..QueryRecord::answered(site.id, &format!("question {i}"), Some(conversations[i].clone()), Vec::new())
            };
            store.site(site.id).queries().record(&rec, None).unwrap();
        }
        let day = 86_400_000;
        let now = Timestamp::now();
        let old = Timestamp::from_millis(now.as_millis() - 100 * day);
        // Two questions and their conversations a hundred days old.
        store
            .write(|tx| {
                tx.execute("UPDATE query_log SET created_at = ?1 WHERE id IN (?2, ?3)", rusqlite::params![old, queries[0], queries[1]])?;
                tx.execute("UPDATE conversations SET updated_at = ?1 WHERE id IN (?2, ?3)", rusqlite::params![old, conversations[0], conversations[1]])?;
                Ok(())
            })
            .unwrap();
        let stats = |s: &Store| s.site(site.id).counters().unwrap();
        let before = stats(&store);
        let count = |sql: &str| store.read(|c| Ok(c.query_row(sql, [], |r| r.get::<_, i64>(0))?)).unwrap();

        // Nothing is old enough for 365 days; 90 days takes the two.
        let keep_year = Timestamp::from_millis(now.as_millis() - 365 * day);
        let none = store.retention().prune(Cutoffs { queries: Some(keep_year), conversations: Some(keep_year), ..Default::default() }).unwrap();
        assert_eq!(none.total(), 0);
        let cut = Timestamp::from_millis(now.as_millis() - 90 * day);
        let p = store.retention().prune(Cutoffs { queries: Some(cut), conversations: Some(cut), widget_events: Some(cut), dead_events: Some(cut) }).unwrap();
        assert_eq!((p.queries, p.conversations), (2, 2), "{p:?}");
        assert_eq!(count("SELECT count(*) FROM query_log"), 2);
        assert_eq!(count("SELECT count(*) FROM conversations"), 2);
        let turns_left: i64 = store
            .read(|c| {
                Ok(c.query_row(
                    "SELECT count(*) FROM conversation_turns WHERE conversation_id IN (?1, ?2)",
                    rusqlite::params![conversations[0], conversations[1]],
                    |r| r.get(0),
                )?)
            })
            .unwrap();
        assert_eq!(turns_left, 0, "turns go with them");
        assert_eq!(stats(&store), before, "the public counters are unaffected");
    }
}
