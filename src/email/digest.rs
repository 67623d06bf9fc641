//! The weekly digest: a site's week in figures (questions, how many were answered, leads), the largest
//! groups of unanswered questions that started that week with links to them in the review queue, and the
//! week's leads; queued for each owner of the site who wants it.
//!
//! The server queues each week's digests once, on Monday from `[email] digest_hour` UTC, for the week
//! before ([`run_weekly`]), from the first Monday after e-mail was turned on; `sitebot digest send [--site
//! ID]` queues the last seven days' at once.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::domain::{SiteId, Timestamp};
use crate::store::days::week_of;
use crate::store::{Site, Store, StoreError};

/// New unanswered groups a digest lists at most.
const GROUPS: usize = 5;
/// Leads a digest lists at most (it counts them all).
const LEADS: usize = 10;
const DAY_MS: i64 = 86_400_000;

/// A site's digest for `[from, to)`, as queued (JSON) and rendered when sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Digest {
    /// The site's id, as text (ids are parsed where input enters; this one was written by us).
    pub site_id: String,
    pub site_name: String,
    /// Unix milliseconds.
    pub from: i64,
    pub to: i64,
    pub questions: u64,
    pub answered: u64,
    pub leads: u64,
    pub groups: Vec<DigestGroup>,
    pub recent_leads: Vec<DigestLead>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DigestGroup {
    pub id: i64,
    pub count: u64,
    pub example: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DigestLead {
    pub name: Option<String>,
    pub email: String,
    pub at: i64,
}

/// The digest of `site` for `[from, to)` (`from` a UTC midnight: the day counters are per day).
pub fn compute(store: &Store, site: &Site, from: Timestamp, to: Timestamp) -> Result<Digest, StoreError> {
    let s = store.site(site.id);
    let days: Vec<_> = s.days().since(from)?.into_iter().filter(|d| d.day < to).collect();
    let (questions, answered, leads) = days.iter().fold((0, 0, 0), |(q, a, l), d| (q + d.questions, a + d.answered, l + d.leads));
    // Open groups, largest first: those that started in the week.
    let mut groups: Vec<DigestGroup> = s
        .review()
        .open(None, 500)?
        .into_iter()
        .filter(|g| g.first_at >= from && g.first_at < to)
        .map(|g| DigestGroup { id: g.id, count: g.count, example: g.example })
        .collect();
    groups.truncate(GROUPS);
    let week_leads: Vec<_> = s.leads().list(Some(from))?.into_iter().filter(|l| l.created_at < to).collect();
    let recent_leads =
        week_leads.iter().rev().take(LEADS).map(|l| DigestLead { name: l.name.clone(), email: l.email.clone(), at: l.created_at.as_millis() }).collect();
    Ok(Digest {
        site_id: site.id.to_string(),
        site_name: site.name.clone(),
        from: from.as_millis(),
        to: to.as_millis(),
        questions,
        answered,
        leads,
        groups,
        recent_leads,
    })
}

/// What `sitebot digest send` queued.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Queued {
    pub sites: usize,
    pub emails: usize,
}

/// Queues the digest of the last seven days (from the midnight seven days before today's) of `site`, or
/// of every site, for their owners who want it.
pub fn queue_now(store: &Store, site: Option<SiteId>) -> Result<Queued, StoreError> {
    let today = Timestamp::now().day_start();
    let (from, to) = (Timestamp::from_millis(today.as_millis() - 6 * DAY_MS), Timestamp::from_millis(today.as_millis() + DAY_MS));
    let sites = match site {
        Some(id) => vec![store.site(id).get()?.ok_or(StoreError::NotFound)?],
        None => store.sites().list()?,
    };
    let mut out = Queued::default();
    for s in &sites {
        let d = compute(store, s, from, to)?;
        let payload = serde_json::to_string(&d).map_err(|e| StoreError::Invalid(e.to_string()))?;
        out.emails += store.email().queue_digest(s.id, &payload)?;
        out.sites += 1;
    }
    Ok(out)
}

/// The Monday (UTC) of the week whose digests are due at `now`, if they are: the week before the current
/// one, once the current one is `hour` hours old.
pub fn due_week(now: Timestamp, hour: u32) -> Option<Timestamp> {
    let this_week = week_of(now.day_start());
    (now.as_millis() >= this_week.as_millis() + i64::from(hour) * 3_600_000).then(|| Timestamp::from_millis(this_week.as_millis() - 7 * DAY_MS))
}

/// Queues the digests of the week before `now`'s when due and not yet queued (by any process: the week's
/// mark is written with its rows). `Ok(None)`: nothing was due or it was done already.
pub fn queue_due(store: &Store, now: Timestamp, hour: u32) -> Result<Option<usize>, StoreError> {
    let Some(week) = due_week(now, hour) else { return Ok(None) };
    match store.email().last_week()? {
        Some(done) if done >= week => return Ok(None),
        Some(_) => {}
        // The schedule's first run (a new installation, or e-mail just turned on): the week that is due
        // is marked done without sending, so nobody gets a digest of a week from before e-mail was on.
        None => {
            store.email().queue_week(week, &[])?;
            return Ok(None);
        }
    }
    let to = Timestamp::from_millis(week.as_millis() + 7 * DAY_MS);
    let mut digests = Vec::new();
    for s in store.sites().list()? {
        let d = compute(store, &s, week, to)?;
        digests.push((s.id, serde_json::to_string(&d).map_err(|e| StoreError::Invalid(e.to_string()))?));
    }
    store.email().queue_week(week, &digests)
}

/// How often the server looks whether a week's digests are due.
const LOOK_EVERY: Duration = Duration::from_secs(600);

/// The weekly schedule, beside the server's other tasks: every ten minutes, queue the last week's digests
/// if they are due and not queued yet.
pub async fn run_weekly(store: Store, hour: u32, wake: std::sync::Arc<tokio::sync::Notify>, shutdown: CancellationToken) {
    loop {
        match store.run(move |s| queue_due(s, Timestamp::now(), hour)).await {
            Ok(Some(n)) => {
                tracing::info!(emails = n, "weekly digests queued");
                wake.notify_one();
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(error = %e, "cannot queue the weekly digests; trying again later"),
        }
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(LOOK_EVERY) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_week_is_due_on_monday_from_the_hour() {
        let monday = Timestamp::parse("2026-11-23").unwrap();
        assert_eq!(week_of(monday), monday);
        let before = Timestamp::from_millis(monday.as_millis() + 6 * 3_600_000);
        assert_eq!(due_week(before, 7), None);
        let at = Timestamp::from_millis(monday.as_millis() + 7 * 3_600_000);
        assert_eq!(due_week(at, 7), Some(Timestamp::parse("2026-11-16").unwrap()));
        let sunday = Timestamp::parse("2026-11-29T23:00:00Z").unwrap();
        assert_eq!(due_week(sunday, 7), Some(Timestamp::parse("2026-11-16").unwrap()));
    }
}
