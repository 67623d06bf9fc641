//! `sitebot knowledge crawl` and `sitebot knowledge sources`: a website as a site's knowledge.

use std::io::IsTerminal;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::{Args, Subcommand};
use url::Url;

use crate::config::{Config, parse_duration};
use crate::crawl::{self, Summary, schedule};
use crate::domain::{EndpointNames, SiteId, check_endpoint};
use crate::knowledge::Engine;
use crate::store::Store;
use crate::store::crawl::{Source, SourceOptions};

/// The shortest `--every`: a re-sync is a guest on the site too.
const MIN_EVERY: Duration = Duration::from_secs(60);

#[derive(Debug, Args)]
pub struct CrawlArgs {
    /// Start URLs; each is a source crawled on its own host
    #[arg(required = true, value_name = "URL")]
    pub urls: Vec<String>,
    /// Pages requested at most [default: crawl.max_pages, 5000]
    #[arg(long, env = "SITEBOT_CRAWL_MAX_PAGES", value_name = "N")]
    pub max_pages: Option<usize>,
    /// Links followed from the start URL at most (sitemap entries count as one)
    #[arg(long, env = "SITEBOT_CRAWL_MAX_DEPTH", value_name = "N")]
    pub max_depth: Option<u32>,
    /// Crawl only URLs whose path (and query) matches one of these globs, e.g. '/docs/*'
    #[arg(long, env = "SITEBOT_CRAWL_INCLUDE", value_name = "PATTERN", value_delimiter = ',')]
    pub include: Vec<String>,
    /// Never crawl URLs whose path (and query) matches one of these globs, e.g. '*/print/*'
    #[arg(long, env = "SITEBOT_CRAWL_EXCLUDE", value_name = "PATTERN", value_delimiter = ',')]
    pub exclude: Vec<String>,
    /// Register the source for re-syncs this often by a running server (1m at least, e.g. 6h, 1d)
    #[arg(long, env = "SITEBOT_CRAWL_EVERY", value_name = "DURATION")]
    pub every: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum SourcesAction {
    /// Stop re-syncing a source and forget its pages' records; its documents stay until deleted
    Remove {
        #[command(flatten)]
        site: super::SiteArg,
        /// The source's start URL, as listed
        url: String,
    },
}

/// Crawls each URL under its lease and prints the summary (summed over the URLs).
pub fn crawl(store: &Store, config: &Config, data_dir: &Path, site: SiteId, args: CrawlArgs, json: bool) -> anyhow::Result<()> {
    let every = match &args.every {
        Some(s) => {
            let d = parse_duration(s).with_context(|| format!("--every: `{s}` is not a duration such as 30m, 6h or 1d"))?;
            anyhow::ensure!(d >= MIN_EVERY, "--every must be at least 1m");
            Some(d)
        }
        None => None,
    };
    let starts: Vec<Url> = args
        .urls
        .iter()
        .map(|u| {
            let checked = check_endpoint(u, &crate::domain::NetworkPolicy::crawl(&config.crawl), EndpointNames::CRAWL)?;
            crawl::link::clean(checked).with_context(|| format!("`{u}` is not an http(s) URL"))
        })
        .collect::<anyhow::Result<_>>()?;
    let options =
        SourceOptions { max_pages: args.max_pages.unwrap_or(config.crawl.max_pages), max_depth: args.max_depth, include: args.include, exclude: args.exclude };
    anyhow::ensure!(options.max_pages > 0, "--max-pages must be at least 1");
    let knowledge = Engine::open(&config.knowledge, data_dir)?;
    let bar = !json && std::io::stderr().is_terminal();
    let started = Instant::now();
    let mut total = Summary::default();
    super::runtime()?.block_on(async {
        let owner = schedule::owner();
        for start in &starts {
            let url = start.to_string();
            let (s, u, o) = (store.clone(), url.clone(), options.clone());
            let most = config.crawl.max_sources_per_site;
            store.run(move |_| s.site(site).crawl().register(&u, &o, every, most)).await?;
            schedule::acquire(store, site, &url, &owner, |holder, until| {
                eprintln!("waiting: {holder} is crawling {url} (its lease runs until {until})");
            })
            .await?;
            let progress = bar.then(|| {
                let pb = indicatif::ProgressBar::new_spinner();
                pb.set_style(indicatif::ProgressStyle::with_template("{spinner} {pos} pages, {msg} {elapsed}").expect("a valid template"));
                pb.enable_steady_tick(Duration::from_millis(120));
                pb
            });
            let on_page = |p: crawl::Progress<'_>| {
                if let Some(pb) = &progress {
                    pb.set_position(p.done as u64);
                    pb.set_message(format!("{} queued, {}", p.queued, p.url));
                }
            };
            let summary = schedule::leased(store, site, &url, &owner, crawl::crawl(store, &knowledge, &config.crawl, site, start, &options, &on_page)).await;
            if let Some(pb) = progress {
                pb.finish_and_clear();
            }
            add(&mut total, summary.with_context(|| format!("crawl of {url}"))?);
        }
        anyhow::Ok(())
    })?;
    if json {
        println!("{}", serde_json::to_string_pretty(&total)?);
        return Ok(());
    }
    let t = &total;
    println!(
        "fetched {} pages: {} imported, {} updated, {} unchanged, {} removed, {} skipped, {} failed in {:.1}s",
        t.fetched,
        t.imported,
        t.updated,
        t.unchanged,
        t.removed,
        t.skipped.len(),
        t.failed.len(),
        started.elapsed().as_secs_f64()
    );
    for f in &t.failed {
        println!("  failed: {}: {}", f.url, f.reason);
    }
    const SHOWN: usize = 20;
    for s in t.skipped.iter().take(SHOWN) {
        println!("  skipped: {}: {}", s.url, s.reason);
    }
    if t.skipped.len() > SHOWN {
        println!("  ... and {} more skipped (--json lists them all)", t.skipped.len() - SHOWN);
    }
    if let Some(every) = &args.every {
        println!("a running server re-syncs {} every {every}", starts.iter().map(Url::as_str).collect::<Vec<_>>().join(", "));
    }
    Ok(())
}

fn add(total: &mut Summary, s: Summary) {
    total.fetched += s.fetched;
    total.imported += s.imported;
    total.updated += s.updated;
    total.unchanged += s.unchanged;
    total.removed += s.removed;
    total.skipped.extend(s.skipped);
    total.failed.extend(s.failed);
}

fn when(t: Option<crate::domain::Timestamp>) -> String {
    t.map_or_else(|| "-".to_owned(), |t| t.rfc3339())
}

/// Lists the site's crawl sources.
pub fn sources(store: &Store, site: SiteId, json: bool) -> anyhow::Result<()> {
    let sources: Vec<Source> = store.site(site).crawl().sources()?;
    if json {
        println!("{}", serde_json::to_string_pretty(&sources)?);
        return Ok(());
    }
    for s in &sources {
        let every = s.every_secs.map_or_else(|| "on demand".to_owned(), |e| format!("every {}", human(e)));
        println!("{}  {every}  {} pages  last sync {}  next sync {}", s.url, s.pages, when(s.last_sync_at), when(s.next_sync_at));
        if let Some(until) = s.crawling_until {
            println!("  crawling now (lease until {until})");
        }
        if let Some(e) = &s.last_error {
            println!("  last error: {e}");
        }
        if let Some(failed) = s.last_summary.as_ref().and_then(|v| v["failed"].as_array()).filter(|f| !f.is_empty()) {
            println!("  last crawl: {} failed URLs", failed.len());
            for f in failed.iter().take(5) {
                println!("    {}: {}", f["url"].as_str().unwrap_or(""), f["reason"].as_str().unwrap_or(""));
            }
        }
    }
    println!("{} sources", sources.len());
    Ok(())
}

fn human(secs: u64) -> String {
    match secs {
        s if s % 86_400 == 0 => format!("{}d", s / 86_400),
        s if s % 3600 == 0 => format!("{}h", s / 3600),
        s if s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

/// Removes one source.
pub fn remove(store: &Store, site: SiteId, url: &str) -> anyhow::Result<()> {
    let crawl = store.site(site).crawl();
    // Accept the URL as typed, or as crawl normalised it.
    let normalised = Url::parse(url).ok().and_then(crawl::link::clean).map(String::from);
    match crawl.remove(url) {
        Err(crate::store::StoreError::NotFound) if normalised.as_deref().is_some_and(|n| n != url) => crawl.remove(normalised.as_deref().unwrap_or(url)),
        other => other,
    }
    .with_context(|| format!("no crawl source {url} (see `knowledge sources`)"))?;
    println!("removed source {url}; its documents stay (`knowledge delete` removes them)");
    Ok(())
}
