//! Crawling under a lease, and the server's scheduler of registered sources.
//!
//! Whoever crawls a source holds its lease (`store::crawl`): the CLI claims it before `knowledge
//! crawl` (waiting while another live process holds it), the server's [`Scheduler`] claims the most
//! overdue scheduled source. The holder renews the lease every [`LEASE`]/4 while it crawls and
//! releases it when done, recording the summary and setting the next sync `every` later. The
//! schedule is in SQLite, so a restart resumes it; a holder that died frees the source when its lease
//! expires, or at once for a process on the same host that sees the holder's pid is gone.
//!
//! Guarantee: two processes never crawl one source at once, and a due source is crawled within about
//! [`POLL`] of falling due while a server runs (one source at a time: a crawl is a guest on the site
//! and the embedder is shared with queries).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use url::Url;

use super::{CrawlError, Summary};
use crate::app::AppState;
use crate::domain::{SiteId, Timestamp};
use crate::store::Store;
use crate::store::crawl::{Claim, CrawlProgress, SourceOptions};

/// How long a lease lasts without renewal.
pub const LEASE: Duration = Duration::from_secs(60);
/// How often the scheduler looks for a due source.
pub const POLL: Duration = Duration::from_secs(2);

/// This process as a lease owner: `host:pid`.
pub fn owner() -> String {
    format!("{}:{}", hostname(), std::process::id())
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_owned()).unwrap_or_default()
}

/// Whether `owner` is a process of this host that has ended.
pub fn is_dead(owner: &str) -> bool {
    let Some((host, pid)) = owner.rsplit_once(':') else { return false };
    host == hostname() && pid.parse::<u32>().is_ok_and(|pid| !std::path::Path::new(&format!("/proc/{pid}")).exists())
}

/// Claims the source's lease for this process, waiting while another live process holds it;
/// `waiting` is told once who holds it.
pub async fn acquire(store: &Store, site: SiteId, url: &str, owner: &str, waiting: impl FnOnce(&str, Timestamp)) -> Result<(), CrawlError> {
    let mut waiting = Some(waiting);
    let mut dead: Option<String> = None;
    loop {
        let (s, u, o, d) = (store.clone(), url.to_owned(), owner.to_owned(), dead.take());
        let claim = store.run(move |_| s.site(site).crawl().claim(&u, &o, Timestamp::now() + LEASE, d.as_deref())).await?;
        match claim {
            Claim::Claimed => return Ok(()),
            Claim::Held { owner: holder, .. } if is_dead(&holder) => dead = Some(holder),
            Claim::Held { owner: holder, until } => {
                if let Some(w) = waiting.take() {
                    w(&holder, until);
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}

/// Runs `crawl` while renewing the lease, then records its outcome and releases the lease.
pub async fn leased(
    store: &Store,
    site: SiteId,
    url: &str,
    owner: &str,
    crawl: impl Future<Output = Result<Summary, CrawlError>>,
) -> Result<Summary, CrawlError> {
    tokio::pin!(crawl);
    let mut renew = tokio::time::interval(LEASE / 4);
    renew.tick().await;
    let result = loop {
        tokio::select! {
            r = &mut crawl => break r,
            _ = renew.tick() => {
                let (s, u, o) = (store.clone(), url.to_owned(), owner.to_owned());
                match store.run(move |_| s.site(site).crawl().renew(&u, &o, Timestamp::now() + LEASE)).await {
                    Ok(true) => {}
                    Ok(false) => tracing::warn!(%site, url, "the crawl lease was taken over; finishing this crawl anyway"),
                    Err(e) => tracing::warn!(%site, url, error = %e, "cannot renew the crawl lease"),
                }
            }
        }
    };
    let summary = match &result {
        Ok(s) => serde_json::to_value(s).unwrap_or_default(),
        Err(_) => serde_json::Value::Null,
    };
    let error = result.as_ref().err().map(|e| e.to_string());
    let (s, u, o) = (store.clone(), url.to_owned(), owner.to_owned());
    store.run(move |_| s.site(site).crawl().finish(&u, &o, &summary, error.as_deref())).await?;
    result
}

/// How often a crawl's progress is written for the console to show.
const PROGRESS_EVERY: Duration = Duration::from_millis(400);

/// Crawls a source whose lease `owner` holds ([`leased`]), writing its progress to the store every
/// [`PROGRESS_EVERY`] while it runs, so the console can show it (the scheduler's crawls and "re-sync now").
async fn crawl_leased(state: &AppState, owner: &str, site: SiteId, url: &str, options: &SourceOptions) -> Result<Summary, CrawlError> {
    let store = &state.store;
    let latest: std::sync::Mutex<Option<CrawlProgress>> = std::sync::Mutex::new(None);
    let report = |p: super::Progress<'_>| {
        if let Ok(mut l) = latest.lock() {
            *l = Some(CrawlProgress { done: p.done, queued: p.queued, url: p.url.to_owned() });
        }
    };
    let crawl = async {
        let start = Url::parse(url).map_err(|e| CrawlError::Robots(format!("stored crawl URL {url}: {e}")))?;
        super::crawl(store, &state.knowledge, &state.config.crawl, site, &start, options, &report).await
    };
    let run = leased(store, site, url, owner, crawl);
    tokio::pin!(run);
    let mut tick = tokio::time::interval(PROGRESS_EVERY);
    let mut written: Option<CrawlProgress> = None;
    loop {
        tokio::select! {
            r = &mut run => return r,
            _ = tick.tick() => {
                let now = latest.lock().ok().and_then(|l| l.clone()).filter(|p| written.as_ref() != Some(p));
                if let Some(p) = now {
                    let (s, u, o, w) = (store.clone(), url.to_owned(), owner.to_owned(), p.clone());
                    if let Err(e) = store.run(move |_| s.site(site).crawl().set_progress(&u, &o, &w)).await {
                        tracing::warn!(%site, url, error = %e, "cannot record the crawl's progress");
                    }
                    written = Some(p);
                }
            }
        }
    }
}

/// What asking for a re-sync now did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resync {
    /// The crawl runs in the server now (a task of its own, under the source's lease).
    Started,
    /// A crawl of the source runs already (this process's or another's): no second one is started.
    Running,
}

/// Crawls a source now, in a task of the server, unless a crawl of it runs already (the lease is taken
/// only when free: [`crate::store::crawl::Crawl::claim_free`]). The console's "re-sync now": the request
/// returns at once, the crawl records its progress and outcome as a scheduled one does.
pub async fn resync_now(state: Arc<AppState>, site: SiteId, url: String) -> Result<Resync, CrawlError> {
    let (store, owner) = (state.store.clone(), owner());
    let (s, u, o) = (store.clone(), url.clone(), owner.clone());
    match store.run(move |_| s.site(site).crawl().claim_free(&u, &o, Timestamp::now() + LEASE)).await? {
        Claim::Held { .. } => return Ok(Resync::Running),
        Claim::Claimed => {}
    }
    let (s, u) = (store.clone(), url.clone());
    let Some(source) = store.run(move |_| s.site(site).crawl().source(&u)).await? else { return Ok(Resync::Running) };
    tokio::spawn(async move {
        tracing::info!(%site, url, "crawl started from the console");
        match crawl_leased(&state, &owner, site, &url, &source.options).await {
            Ok(s) => tracing::info!(%site, url, fetched = s.fetched, imported = s.imported, failed = s.failed.len(), "crawl from the console finished"),
            Err(e) => tracing::warn!(%site, url, error = %e, "crawl from the console failed"),
        }
    });
    Ok(Resync::Started)
}

/// Re-syncs scheduled sources while the server runs.
#[derive(Debug, Clone)]
pub struct Scheduler {
    state: Arc<AppState>,
    owner: String,
}

impl Scheduler {
    pub fn new(state: Arc<AppState>) -> Scheduler {
        Scheduler { state, owner: owner() }
    }

    /// Claims the most overdue source, if any, and crawls it. Returns whether one was due.
    pub async fn run_once(&self) -> Result<bool, CrawlError> {
        let (store, owner) = (self.state.store.clone(), self.owner.clone());
        let now = Timestamp::now();
        let claimed = store.run(move |s| s.crawl_schedule().claim_due(now, now + LEASE, &owner)).await?;
        let Some((site, url)) = claimed else { return Ok(false) };
        let (s, u) = (store.clone(), url.clone());
        let Some(source) = store.run(move |_| s.site(site).crawl().source(&u)).await? else { return Ok(true) };
        tracing::info!(%site, url, "scheduled crawl started");
        match crawl_leased(&self.state, &self.owner, site, &url, &source.options).await {
            Ok(s) => tracing::info!(%site, url, fetched = s.fetched, imported = s.imported, updated = s.updated, unchanged = s.unchanged, removed = s.removed,
                failed = s.failed.len(), "scheduled crawl finished"),
            Err(e) => tracing::warn!(%site, url, error = %e, "scheduled crawl failed"),
        }
        Ok(true)
    }

    /// Crawls due sources until `stop` is cancelled. A crawl in progress is abandoned at once and its
    /// lease released, so the source is due again as soon as a server runs.
    pub async fn run_until_stopped(self, stop: CancellationToken) {
        loop {
            let work = async {
                match self.run_once().await {
                    Ok(true) => Duration::ZERO,
                    Ok(false) => POLL,
                    Err(e) => {
                        tracing::warn!(error = %e, "crawl scheduler");
                        POLL
                    }
                }
            };
            let wait = tokio::select! {
                w = work => w,
                () = stop.cancelled() => break,
            };
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = stop.cancelled() => break,
            }
        }
        // An abandoned crawl's lease: expired now, so it is claimable at once.
        let (store, owner) = (self.state.store.clone(), self.owner.clone());
        if let Err(e) = store.run(move |s| s.crawl_schedule().release_all(&owner)).await {
            tracing::warn!(error = %e, "cannot release the crawl leases");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_owner_is_dead_only_when_its_process_on_this_host_has_ended() {
        let me = owner();
        assert!(!is_dead(&me));
        let host = me.rsplit_once(':').unwrap().0;
        // Above Linux's largest pid (2^22): never a running process.
        assert!(is_dead(&format!("{host}:999999999")));
        // Another host's process cannot be checked from here: it holds its lease until it expires.
        assert!(!is_dead("another-host:999999999"));
    }
}
