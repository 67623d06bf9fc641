//! Crawl throughput: a 1,000-page website served on loopback (`tests/common/website.rs`: robots.txt,
//! a gzip sitemap of half the pages, the rest reached by links) crawled and imported by the real
//! `sitebot knowledge crawl`, with the real embedding model; then crawled again with nothing changed
//! (conditional requests, no embedding). Prints both times and the summaries' counts. Aims: the first
//! crawl within 5 minutes, the re-sync within 30 seconds, on a 2-core machine.
//!
//! Run: `cargo test --release --bench crawl` (reuses the release build of the rest of the tree).
//! `SITEBOT_BENCH_PAGES` changes the size of the site.

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Instant;

use common::website::Website;
use common::*;
use serde_json::Value;

fn main() {
    if std::env::args().skip(1).any(|a| !a.starts_with('-') && !"crawl".contains(a.as_str())) {
        return;
    }
    let pages: usize = std::env::var("SITEBOT_BENCH_PAGES").ok().and_then(|v| v.parse().ok()).unwrap_or(1000);
    let web = Website::generated(pages);
    let dir = tempfile::tempdir().unwrap();
    let created = run_ok(
        sitebot(dir.path()).args(["site", "create", "--name", "Bench", "--vertical", "dental", "--tier", "pro", "--currency", "EUR", "--lang", "en", "--json"]),
    );
    let site = serde_json::from_str::<Value>(&created).unwrap()["siteId"].as_str().unwrap().to_owned();
    let crawl = || {
        let started = Instant::now();
        let out = run_ok(sitebot(dir.path()).env("SITEBOT_CRAWL__ALLOW_HTTP", "true").env("SITEBOT_CRAWL__ALLOW_PRIVATE_NETWORKS", "true").args([
            "knowledge",
            "crawl",
            "--json",
            "--site",
            &site,
            &web.url("/"),
        ]));
        let summary: Value = serde_json::from_str(&out).unwrap();
        (started.elapsed(), summary)
    };
    let count = |s: &Value, k: &str| s[k].as_u64().unwrap_or(0);
    let (first, s1) = crawl();
    println!(
        "first crawl of {} pages: {:.1}s ({} fetched, {} imported, {} failed, {} skipped); aim <= 300s",
        pages + 3,
        first.as_secs_f64(),
        count(&s1, "fetched"),
        count(&s1, "imported"),
        s1["failed"].as_array().map_or(0, Vec::len),
        s1["skipped"].as_array().map_or(0, Vec::len)
    );
    let requests = web.log().len();
    let (again, s2) = crawl();
    println!(
        "re-sync, nothing changed: {:.1}s ({} fetched, {} unchanged, {} imported, {} updated, {} answered 304); aim <= 30s",
        again.as_secs_f64(),
        count(&s2, "fetched"),
        count(&s2, "unchanged"),
        count(&s2, "imported"),
        count(&s2, "updated"),
        web.log()[requests..].iter().filter(|l| l.status == 304).count()
    );
}
