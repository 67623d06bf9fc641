//! Crawling a site into its knowledge, and keeping it in step.
//!
//! A crawl starts at one URL (a *source*): it reads `robots.txt` (texting_robots, for our token
//! `sitebot` or else `*`: Disallow, Allow, Crawl-delay, Sitemap), the sitemaps it names or
//! `/sitemap.xml` (indexes and gzip included), then follows links breadth-first on the same host and
//! port. A URL without its fragment and tracking parameters is what is fetched; a page's canonical URL
//! (`<link rel=canonical>` on the same site, else its URL after redirects) is its document's source,
//! so one page is one document whatever the URLs that reach it. HTML goes through the import's HTML
//! reader, PDFs through its PDF reader; other types are skipped with the reason.
//!
//! Re-crawls are incremental: a page known from an earlier crawl is asked for conditionally (its
//! `ETag`, its `Last-Modified`), a 304 stands for its stored document and links, and a 200 whose
//! parsed content hashes as before is not embedded again. A page that answers 404 or 410 loses its
//! document; after a crawl that reached the end of its frontier (not stopped by the page budget),
//! pages no longer linked nor in a sitemap lose theirs too. A page that failed otherwise (a timeout,
//! a 500) keeps its document.
//!
//! Guarantees: documents are written as pages arrive, each in its own transaction, and a page's
//! record (validators, links) only after its document is, so a crawl killed midway and run again
//! re-fetches what it had not recorded and completes without duplicates (the canonical URL is unique
//! per site). `schedule` runs the same crawl for the server on a durable schedule, under a lease.

pub mod fetch;
pub mod link;
pub mod schedule;
pub mod sitemap;

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use serde::Serialize;
use texting_robots::Robot;
use url::Url;

use self::fetch::{Answer, Fetcher, Validators};
use self::link::{Patterns, same_site};
use crate::config::CrawlConfig;
use crate::domain::SiteId;
use crate::knowledge::Engine;
use crate::knowledge::import::{self, Batch, Format, Input, Outcome, Parsed};
use crate::store::crawl::{PageRecord, SourceOptions};
use crate::store::{Store, StoreError};

/// Sitemap files read per crawl at most (an index and its children).
const MAX_SITEMAPS: usize = 50;

/// A URL passed over or failed, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Note {
    pub url: String,
    pub reason: String,
}

/// What a crawl did. `fetched` counts page requests answered (304s included); `imported` new
/// documents, `updated` changed ones, `unchanged` pages whose document stayed as it was (a 304, or
/// the same content hash: nothing embedded); `removed` documents deleted.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub fetched: usize,
    pub imported: usize,
    pub updated: usize,
    pub unchanged: usize,
    pub removed: usize,
    pub skipped: Vec<Note>,
    pub failed: Vec<Note>,
}

#[derive(Debug, thiserror::Error)]
pub enum CrawlError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Import(#[from] import::ImportError),
    #[error(transparent)]
    Index(#[from] crate::knowledge::KnowledgeError),
    #[error("cannot build the crawl HTTP client: {0}")]
    Client(#[from] reqwest::Error),
    #[error("{0}")]
    Robots(String),
    #[error("the import stopped: {0}")]
    Join(String),
}

/// Where a crawl is, for a progress bar.
#[derive(Debug, Clone, Copy)]
pub struct Progress<'a> {
    /// Page requests answered.
    pub done: usize,
    /// Pages waiting or in flight.
    pub queued: usize,
    pub url: &'a str,
}

/// What decides whether a URL is crawled: the site, its robots.txt, the operator's patterns.
struct Scope {
    root: Url,
    robot: Option<Robot>,
    patterns: Patterns,
}

impl Scope {
    /// Why `url` is not crawled; `None` when it is.
    fn refuses(&self, url: &Url) -> Option<String> {
        if !same_site(&self.root, url) {
            return Some("another site".to_owned());
        }
        if self.robot.as_ref().is_some_and(|r| !r.allowed(url.as_str())) {
            return Some("disallowed by robots.txt".to_owned());
        }
        self.patterns.refuses(url)
    }
}

/// A URL waiting to be fetched.
#[derive(Debug, Clone)]
struct Item {
    url: Url,
    depth: u32,
    /// The page that linked to it ("sitemap" for a sitemap entry).
    from: Option<String>,
}

/// A parsed page on its way to the importer, with the record to save once its document is written.
struct Job {
    record: PageRecord,
    doc: Option<Parsed>,
}

/// The importer's counts.
#[derive(Default)]
struct Tally {
    imported: usize,
    updated: usize,
    unchanged: usize,
    failed: Vec<Note>,
}

/// Receives parsed pages, embeds and writes them in batches (on a blocking thread), and saves each
/// page's record once its document is written.
fn importer(store: Store, knowledge: Arc<Engine>, site: SiteId, source: String, mut jobs: tokio::sync::mpsc::Receiver<Job>) -> Result<Tally, CrawlError> {
    let mut batch = Batch::new(&store, knowledge.models(), &site, false);
    let mut tally = Tally::default();
    let mut waiting: Vec<PageRecord> = Vec::new();
    while let Some(job) = jobs.blocking_recv() {
        if let Some(doc) = job.doc {
            match batch.add(doc)? {
                Outcome::New => tally.imported += 1,
                Outcome::Changed => tally.updated += 1,
                Outcome::Unchanged => tally.unchanged += 1,
                Outcome::Failed(reason) => tally.failed.push(Note { url: job.record.url.clone(), reason }),
            }
        }
        waiting.push(job.record);
        if batch.is_flushed() {
            store.site(site).crawl().save_pages(&source, &waiting)?;
            waiting.clear();
        }
    }
    batch.finish()?;
    store.site(site).crawl().save_pages(&source, &waiting)?;
    Ok(tally)
}

/// Reads robots.txt: a missing one (4xx) allows everything; one that cannot be read (5xx, network)
/// stops the crawl, as RFC 9309 asks (a site in trouble may be hiding its rules).
async fn robots(fetcher: &Fetcher, root: &Url) -> Result<Option<Robot>, CrawlError> {
    let url = root.join("/robots.txt").expect("a path joins");
    let on_site = |u: &Url| (!same_site(root, u)).then(|| "another site".to_owned());
    match fetcher.get(&url, None, &on_site).await {
        Answer::Page { body, .. } => Ok(Robot::new(fetch::ROBOTS_AGENT, &body).ok()),
        Answer::Gone(_) | Answer::Unavailable(_) | Answer::Skipped(_) | Answer::NotModified => Ok(None),
        Answer::Failed(reason) => Err(CrawlError::Robots(format!("cannot read {url}: {reason}; not crawling a site whose robots.txt is unreadable"))),
    }
}

/// The pages the site's sitemaps list (robots.txt's, else `/sitemap.xml`), and what went wrong.
async fn sitemap_pages(fetcher: &Fetcher, scope: &Scope, summary: &mut Summary) -> Vec<Url> {
    let named: Vec<Url> = scope.robot.iter().flat_map(|r| &r.sitemaps).filter_map(|s| Url::parse(s).ok()).filter(|u| same_site(&scope.root, u)).collect();
    let explicit = !named.is_empty();
    let mut queue: VecDeque<Url> = if explicit { named.into() } else { [scope.root.join("/sitemap.xml").expect("a path joins")].into() };
    let mut seen = HashSet::new();
    let mut pages = Vec::new();
    let on_site = |u: &Url| (!same_site(&scope.root, u)).then(|| "another site".to_owned());
    while let Some(url) = queue.pop_front() {
        if seen.len() >= MAX_SITEMAPS || !seen.insert(url.clone()) {
            continue;
        }
        let body = match fetcher.get(&url, None, &on_site).await {
            Answer::Page { body, .. } => body,
            Answer::Gone(_) | Answer::Unavailable(_) if !explicit => continue,
            Answer::Gone(s) | Answer::Unavailable(s) => {
                summary.failed.push(Note { url: url.to_string(), reason: format!("sitemap: HTTP {s}") });
                continue;
            }
            Answer::Skipped(reason) | Answer::Failed(reason) => {
                summary.failed.push(Note { url: url.to_string(), reason: format!("sitemap: {reason}") });
                continue;
            }
            Answer::NotModified => continue,
        };
        match sitemap::inflate(body, fetcher.max_bytes()).and_then(|b| sitemap::parse(&b)) {
            Ok(map) => {
                pages.extend(map.pages.iter().filter_map(|p| Url::parse(p).ok()).filter_map(link::clean));
                queue.extend(map.sitemaps.iter().filter_map(|s| Url::parse(s).ok()).filter(|u| same_site(&scope.root, u)));
            }
            Err(reason) => summary.failed.push(Note { url: url.to_string(), reason }),
        }
    }
    pages
}

/// Crawls `start` into `site`'s knowledge as source `source` (its page records are kept under it),
/// then updates the site's vector index. `progress` is called after each page.
pub async fn crawl(
    store: &Store,
    knowledge: &Arc<Engine>,
    config: &CrawlConfig,
    site: SiteId,
    start: &Url,
    options: &SourceOptions,
    progress: &(dyn Fn(Progress<'_>) + Sync),
) -> Result<Summary, CrawlError> {
    let source = start.to_string();
    let mut summary = Summary::default();
    let mut fetcher = Fetcher::new(config)?;
    let robot = robots(&fetcher, start).await?;
    let mut connections = config.connections.max(1);
    if let Some(delay) = robot.as_ref().and_then(|r| r.delay).filter(|d| d.is_finite() && *d > 0.0) {
        fetcher = fetcher.with_delay(Duration::from_secs_f32(delay));
        connections = 1;
    }
    let scope = Arc::new(Scope { root: start.clone(), robot, patterns: Patterns::new(&options.include, &options.exclude) });

    let (previous, existing) = {
        let (store, source) = (store.clone(), source.clone());
        tokio::task::spawn_blocking(move || -> Result<_, StoreError> {
            let pages: HashMap<String, PageRecord> = store.site(site).crawl().pages(&source)?.into_iter().map(|p| (p.url.clone(), p)).collect();
            let docs: HashSet<String> = store.site(site).knowledge().list_documents()?.into_iter().map(|d| d.source).collect();
            Ok((pages, docs))
        })
        .await
        .map_err(|e| CrawlError::Join(e.to_string()))??
    };

    let (jobs, rx) = tokio::sync::mpsc::channel::<Job>(64);
    let importer = {
        let (store, knowledge, source) = (store.clone(), knowledge.clone(), source.clone());
        tokio::task::spawn_blocking(move || importer(store, knowledge, site, source, rx))
    };

    let mut crawler = Crawler { scope: scope.clone(), options, seen: HashSet::new(), frontier: VecDeque::new(), summary: &mut summary };
    crawler.consider(start.clone(), 0, None, true);
    for page in sitemap_pages(&fetcher, &scope, crawler.summary).await {
        crawler.consider(page, 1, Some("sitemap"), false);
    }

    // Canonical URLs confirmed this crawl, and those of pages that failed (their documents stay).
    let mut documents: HashSet<String> = HashSet::new();
    let mut keep: HashSet<String> = HashSet::new();
    let mut visited: HashSet<String> = HashSet::new();
    let mut gone: Vec<String> = Vec::new();
    let mut requested = 0usize;
    let mut inflight = FuturesUnordered::new();
    let mut import_stopped = false;
    loop {
        while inflight.len() < connections && requested < options.max_pages {
            let Some(item) = crawler.frontier.pop_front() else { break };
            requested += 1;
            let validators = previous
                .get(item.url.as_str())
                .filter(|p| p.document.as_ref().is_none_or(|d| existing.contains(d)))
                .map(|p| Validators { etag: p.etag.clone(), last_modified: p.last_modified.clone() })
                .filter(|v| v.etag.is_some() || v.last_modified.is_some());
            let (fetcher, scope) = (fetcher.clone(), scope.clone());
            inflight.push(async move {
                let answer = fetcher.get(&item.url, validators.as_ref(), &|u| scope.refuses(u)).await;
                (item, answer)
            });
        }
        let Some((item, answer)) = inflight.next().await else { break };
        let url = item.url.to_string();
        visited.insert(url.clone());
        let job = match answer {
            Answer::Page { url: last, content_type, body, validators } => {
                crawler.summary.fetched += 1;
                crawler.seen.insert(last.to_string());
                crawler.page(&item, &last, &content_type, body, validators, &mut documents)
            }
            Answer::NotModified => {
                crawler.summary.fetched += 1;
                // The stored record stands for the page: its links (none for a nofollow page) and its
                // document, unchanged.
                let record = &previous[&url];
                for l in &record.links {
                    if let Ok(l) = Url::parse(l) {
                        crawler.consider(l, item.depth + 1, Some(&url), false);
                    }
                }
                if let Some(d) = &record.document {
                    crawler.seen.insert(d.clone());
                    if !documents.contains(d) && keep.insert(d.clone()) {
                        crawler.summary.unchanged += 1;
                    }
                }
                None
            }
            Answer::Gone(status) => {
                let from = item.from.as_deref().map(|f| format!(" (linked from {f})")).unwrap_or_default();
                crawler.summary.failed.push(Note { url: url.clone(), reason: format!("HTTP {status}: the page is gone{from}") });
                gone.push(url.clone());
                None
            }
            Answer::Skipped(reason) => {
                crawler.summary.skipped.push(Note { url: url.clone(), reason });
                None
            }
            Answer::Unavailable(status) => {
                keep.extend(previous.get(&url).and_then(|p| p.document.clone()));
                crawler.summary.failed.push(Note { url: url.clone(), reason: format!("HTTP {status}") });
                None
            }
            Answer::Failed(reason) => {
                keep.extend(previous.get(&url).and_then(|p| p.document.clone()));
                crawler.summary.failed.push(Note { url: url.clone(), reason });
                None
            }
        };
        if let Some(job) = job
            && jobs.send(job).await.is_err()
        {
            // The importer ended early: its error is returned below.
            import_stopped = true;
            break;
        }
        progress(Progress { done: visited.len(), queued: crawler.frontier.len() + inflight.len(), url: &url });
    }
    drop(inflight);
    let complete = crawler.frontier.is_empty() && !import_stopped;
    for item in crawler.frontier.drain(..) {
        crawler.summary.skipped.push(Note { url: item.url.to_string(), reason: format!("the page budget ({}) was reached", options.max_pages) });
    }
    drop(jobs);
    let tally = importer.await.map_err(|e| CrawlError::Join(e.to_string()))??;
    summary.imported += tally.imported;
    summary.updated += tally.updated;
    summary.unchanged += tally.unchanged;
    summary.failed.extend(tally.failed);
    keep.extend(documents);

    // Pages gone, and (after a complete crawl) pages no longer reached: their records go, and their
    // documents unless a page reached this crawl is the same document. A record whose URL is itself
    // a document confirmed this crawl (a canonical URL reached through another URL) stays.
    let gone: HashSet<String> = gone.into_iter().collect();
    let forget: Vec<PageRecord> =
        previous.into_values().filter(|p| gone.contains(&p.url) || (complete && !visited.contains(&p.url) && !keep.contains(&p.url))).collect();
    let removed = {
        let store = store.clone();
        tokio::task::spawn_blocking(move || -> Result<usize, StoreError> {
            let crawl = store.site(site).crawl();
            crawl.forget_pages(&forget.iter().map(|p| p.url.clone()).collect::<Vec<_>>())?;
            let mut removed = 0;
            let docs: HashSet<&String> = forget.iter().filter_map(|p| p.document.as_ref()).filter(|d| !keep.contains(*d)).collect();
            for d in docs {
                if crawl.document_referenced(d)? {
                    continue;
                }
                match store.site(site).knowledge().delete_document(d) {
                    Ok(()) => removed += 1,
                    Err(StoreError::NotFound) => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(removed)
        })
        .await
        .map_err(|e| CrawlError::Join(e.to_string()))??
    };
    summary.removed += removed;

    let (store, knowledge) = (store.clone(), knowledge.clone());
    tokio::task::spawn_blocking(move || knowledge.sync_index_blocking(&store, &site)).await.map_err(|e| CrawlError::Join(e.to_string()))??;
    Ok(summary)
}

/// The crawl's frontier and what it has seen.
struct Crawler<'a> {
    scope: Arc<Scope>,
    options: &'a SourceOptions,
    /// URLs queued or fetched (and canonical URLs confirmed): none is fetched twice.
    seen: HashSet<String>,
    frontier: VecDeque<Item>,
    summary: &'a mut Summary,
}

impl Crawler<'_> {
    /// Queues `url` unless it was seen, is on another site (not reported: the web is large), or is
    /// refused by robots.txt, a pattern or the depth limit (reported). The start URL is not subject to
    /// the patterns.
    fn consider(&mut self, url: Url, depth: u32, from: Option<&str>, start: bool) {
        if !same_site(&self.scope.root, &url) || !self.seen.insert(url.to_string()) {
            return;
        }
        let refusal = if start {
            self.scope.robot.as_ref().filter(|r| !r.allowed(url.as_str())).map(|_| "disallowed by robots.txt".to_owned())
        } else {
            self.scope.refuses(&url)
        };
        let refusal = refusal.or_else(|| self.options.max_depth.filter(|max| depth > *max).map(|max| format!("deeper than --max-depth {max}")));
        match refusal {
            Some(reason) => self.summary.skipped.push(Note { url: url.to_string(), reason }),
            None => self.frontier.push_back(Item { url, depth, from: from.map(str::to_owned) }),
        }
    }

    /// Reads a fetched page: queues its links, and returns the import job for its document.
    fn page(&mut self, item: &Item, last: &Url, content_type: &str, body: Vec<u8>, validators: Validators, documents: &mut HashSet<String>) -> Option<Job> {
        let url = item.url.to_string();
        let record = |document: Option<String>, links: Vec<String>| PageRecord {
            url: url.clone(),
            document,
            etag: validators.etag.clone(),
            last_modified: validators.last_modified.clone(),
            links,
        };
        let duplicate = |identity: &str| format!("the same page as {identity}");
        match content_type {
            "text/html" | "application/xhtml+xml" => {
                let text = String::from_utf8_lossy(&body);
                let (mut parsed, meta) = import::html::parse_page(last.to_string(), last.path(), &text);
                let base = meta.base.as_deref().and_then(|b| last.join(b).ok()).unwrap_or_else(|| last.clone());
                let mut links: Vec<String> = Vec::new();
                if !meta.nofollow {
                    for href in &meta.links {
                        if let Some(l) = link::resolve(&base, href).filter(|l| same_site(&self.scope.root, l)) {
                            let s = l.to_string();
                            if !links.contains(&s) {
                                links.push(s);
                            }
                            self.consider(l, item.depth + 1, Some(&url), false);
                        }
                    }
                }
                let identity = meta
                    .canonical
                    .as_deref()
                    .and_then(|c| link::resolve(&base, c))
                    .filter(|c| same_site(&self.scope.root, c))
                    .unwrap_or_else(|| last.clone())
                    .to_string();
                if meta.noindex {
                    self.summary.skipped.push(Note { url: url.clone(), reason: "the page asks not to be indexed (robots noindex)".into() });
                    return Some(Job { record: record(None, links), doc: None });
                }
                self.seen.insert(identity.clone());
                if !documents.insert(identity.clone()) {
                    self.summary.skipped.push(Note { url: url.clone(), reason: duplicate(&identity) });
                    return Some(Job { record: record(Some(identity), links), doc: None });
                }
                parsed.source = identity.clone();
                parsed.url = Some(identity.clone());
                Some(Job { record: record(Some(identity), links), doc: Some(parsed) })
            }
            "application/pdf" => {
                let identity = last.to_string();
                if !documents.insert(identity.clone()) {
                    self.summary.skipped.push(Note { url: url.clone(), reason: duplicate(&identity) });
                    return None;
                }
                let input = Input { name: identity.clone(), format: Format::Pdf, bytes: body };
                match import::parse(&input).map(|mut docs| docs.pop()) {
                    Ok(Some(Ok(mut parsed))) => {
                        parsed.url = Some(identity.clone());
                        Some(Job { record: record(Some(identity), vec![]), doc: Some(parsed) })
                    }
                    Ok(Some(Err(reason))) | Err(reason) => {
                        documents.remove(&identity);
                        self.summary.failed.push(Note { url, reason });
                        None
                    }
                    Ok(None) => None,
                }
            }
            other => {
                self.summary.skipped.push(Note { url, reason: format!("unsupported content type {other} (HTML and PDF are read)") });
                None
            }
        }
    }
}
