//! A site's history written in bulk at chosen times, for a benchmark that needs months of traffic
//! (`benches/console.rs`). Each item goes through the function its live path runs in its transaction
//! (`queries::log`, `analytics::rate`, `leads::store`), so the log rows, review groups, conversation
//! turns, day counters and outbox rows are what that traffic would have left. Only the clock (each item
//! carries its time) and the batching (many items in one transaction) differ. The server never calls it.

use super::analytics::Rating;
use super::leads::NewLead;
use super::queries::QueryRecord;
use super::{Result, SiteStore};
use crate::domain::{QueryId, Timestamp};

/// One thing a visitor did.
#[derive(Debug, Clone)]
// The events are made in bulk by the benchmark's fill and written at once; boxing each of a million
// questions would buy nothing there.
#[allow(clippy::large_enum_variant)]
pub enum Event {
    /// A question answered (or not), logged with no daily cap.
    Question(QueryRecord),
    /// A rating of a logged answer.
    Rating { query_id: QueryId, rating: Rating, comment: Option<String> },
    /// A lead, with its `lead.captured` event when the site wants one.
    Lead(NewLead),
}

/// One site's history.
pub struct History<'s> {
    site: SiteStore<'s>,
}

impl<'s> History<'s> {
    pub(super) fn new(site: SiteStore<'s>) -> Self {
        Self { site }
    }

    /// Writes `events` (each at its time, in the order given) in one transaction.
    pub fn write(&self, events: Vec<(Timestamp, Event)>) -> Result<()> {
        let site = self.site.id();
        self.site.write(|tx| {
            for (at, event) in events {
                match event {
                    Event::Question(q) => {
                        super::queries::log(tx, site, &q, None, at)?;
                    }
                    Event::Rating { query_id, rating, comment } => super::analytics::rate(tx, site, &query_id, rating, comment.as_deref(), at)?,
                    Event::Lead(new) => {
                        super::leads::store(tx, site, new, at)?;
                    }
                }
            }
            Ok(())
        })
    }
}
