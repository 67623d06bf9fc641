//! Black-box tests of `sitebot knowledge crawl` and `knowledge sources`: the built binary crawls a real
//! website served on loopback by the test (`common::website`), which records every request.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;
use common::website::{Website, page_html};
use common::*;

/// `sitebot` allowed to crawl plain HTTP on loopback, as an intranet operator would configure it.
fn crawler(dir: &Path) -> Command {
    let mut c = sitebot(dir);
    c.env("SITEBOT_CRAWL__ALLOW_HTTP", "true").env("SITEBOT_CRAWL__ALLOW_PRIVATE_NETWORKS", "true");
    c
}

fn create_site(dir: &Path) -> String {
    let out = run_ok(
        sitebot(dir).args(["site", "create", "--name", "Handbook", "--vertical", "dental", "--tier", "pro", "--currency", "EUR", "--lang", "en", "--json"]),
    );
    serde_json::from_str::<Value>(&out).unwrap()["siteId"].as_str().unwrap().to_owned()
}

fn crawl(dir: &Path, site: &str, args: &[&str]) -> Value {
    let out = run_ok(crawler(dir).args(["knowledge", "crawl", "--json", "--site", site]).args(args));
    serde_json::from_str(&out).unwrap()
}

/// The site's documents: source → (id, updated time).
fn documents(dir: &Path, site: &str) -> BTreeMap<String, (String, String)> {
    let out = run_ok(sitebot(dir).args(["knowledge", "list", "--json", "--site", site]));
    let docs: Vec<Value> = serde_json::from_str(&out).unwrap();
    let map: BTreeMap<String, (String, String)> =
        docs.iter().map(|d| (d["source"].as_str().unwrap().to_owned(), (d["id"].as_str().unwrap().to_owned(), d["updatedAt"].to_string()))).collect();
    assert_eq!(map.len(), docs.len(), "one document per source");
    map
}

fn reasons(summary: &Value, list: &str) -> BTreeMap<String, String> {
    summary[list].as_array().unwrap().iter().map(|n| (n["url"].as_str().unwrap().to_owned(), n["reason"].as_str().unwrap().to_owned())).collect()
}

const PAGES: usize = 300;

/// Home, about, the hidden page and the generated pages.
fn expected_sources(site: &Website, pages: usize) -> HashSet<String> {
    let mut s: HashSet<String> = (0..pages).map(|i| site.url(&format!("/page/{i}"))).collect();
    s.extend([site.url("/"), site.url("/about"), site.url("/hidden/only-linked")]);
    s
}

#[test]
fn a_site_is_imported_once_per_page_and_a_second_crawl_only_touches_what_changed() {
    let web = Website::generated(PAGES);
    let dir = tempfile::tempdir().unwrap();
    let site = create_site(dir.path());

    let first = crawl(dir.path(), &site, &[&web.url("/")]);
    let expected = expected_sources(&web, PAGES);
    let docs = documents(dir.path(), &site);
    assert_eq!(docs.keys().cloned().collect::<HashSet<_>>(), expected, "everything reachable and allowed, each page once");
    assert_eq!(first["imported"], expected.len());
    assert_eq!((first["updated"].as_u64(), first["unchanged"].as_u64(), first["removed"].as_u64()), (Some(0), Some(0), Some(0)));

    // Never requested: the disallowed area, the tracking-parameter twin (it is page 8).
    assert_eq!(web.requests_to("/private/"), 0);
    assert_eq!(web.requests_to("/page/8?"), 0);
    assert_eq!(web.requests_to("/robots.txt"), 1);
    // The redirect was followed (its target is page 7's one document, in the set above).
    assert_eq!(web.requests_to("/old-page"), 1);
    assert!(web.log().iter().all(|l| l.user_agent.starts_with("sitebot/")), "every request names sitebot");
    // Each page requested once (but page 7, which `/old-page` also redirects to).
    let mut paths: Vec<String> = web.log().iter().map(|l| l.path.clone()).filter(|p| p.starts_with("/page/") && p != "/page/7").collect();
    paths.sort();
    let before = paths.len();
    paths.dedup();
    assert_eq!(before, paths.len(), "no page was requested twice");

    let failed = reasons(&first, "failed");
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(failed[&web.url("/missing")].starts_with("HTTP 404"), "{failed:?}");
    assert!(failed[&web.url("/missing")].contains(&format!("linked from {}", web.url("/page/3"))));
    let skipped = reasons(&first, "skipped");
    assert_eq!(skipped[&web.url("/private/secret")], "disallowed by robots.txt");
    assert!(skipped[&web.url("/files/data.csv")].starts_with("unsupported content type text/csv"));
    assert_eq!(skipped[&web.url("/print/page/10")], format!("the same page as {}", web.url("/page/10")));
    // A link to another site is not this site's business, and not reported.
    assert!(!skipped.keys().any(|u| u.contains("elsewhere.example")));

    // The site changes: page 20 is revised, page 200 is deleted, page 5 no longer links the hidden page
    // (its text stays the same: the link's text is kept).
    web.set_html("/page/20", page_html(20, PAGES, "The revised warranty now covers ten years."));
    web.remove("/page/200");
    web.set_html("/page/5", page_html(5, PAGES, "").replace("/hidden/only-linked", "/page/5#self"));
    web.clear_log();
    let second = crawl(dir.path(), &site, &[&web.url("/")]);
    let after = documents(dir.path(), &site);
    assert_eq!((second["imported"].as_u64(), second["updated"].as_u64(), second["removed"].as_u64()), (Some(0), Some(1), Some(2)), "{second}");
    assert_eq!(second["unchanged"], expected.len() - 3);
    assert!(!after.contains_key(&web.url("/page/200")) && !after.contains_key(&web.url("/hidden/only-linked")));
    assert_eq!(after.len(), expected.len() - 2);
    // Unchanged pages were not re-embedded: the same document rows, untouched.
    for (source, doc) in &after {
        if source != &web.url("/page/20") {
            assert_eq!(doc, &docs[source], "{source} was rewritten");
        }
    }
    assert_ne!(after[&web.url("/page/20")], docs[&web.url("/page/20")]);
    // Conditional requests: the unchanged pages answered 304 without a body, but for page 5, whose
    // markup changed (a new ETag) and text did not (the same content hash: not re-embedded either).
    let not_modified = web.log().iter().filter(|l| l.status == 304).count();
    assert!(not_modified >= expected.len() - 4, "{not_modified} pages answered 304");
    assert!(web.log().iter().any(|l| l.path == "/page/5" && l.status == 200));

    // Registered for re-syncs: listed with its schedule; removed, its pages stay.
    let out = run(crawler(dir.path()).args(["knowledge", "crawl", "--site", &site, "--every", "30s", &web.url("/")]));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--every must be at least 1m"));
    crawl(dir.path(), &site, &["--every", "1h", &web.url("/")]);
    let sources: Vec<Value> = serde_json::from_str(&run_ok(sitebot(dir.path()).args(["knowledge", "sources", "--json", "--site", &site]))).unwrap();
    assert_eq!(sources.len(), 1);
    assert_eq!(sources[0]["url"], web.url("/"));
    assert_eq!(sources[0]["everySecs"], 3600);
    assert_eq!(sources[0]["pages"], expected.len() - 2);
    let (last, next) = (sources[0]["lastSyncAt"].as_str().unwrap(), sources[0]["nextSyncAt"].as_str().unwrap());
    let hour = chrono::DateTime::parse_from_rfc3339(next).unwrap() - chrono::DateTime::parse_from_rfc3339(last).unwrap();
    assert_eq!(hour.num_seconds(), 3600);
    let last_failed: Vec<&str> = sources[0]["lastSummary"]["failed"].as_array().unwrap().iter().map(|f| f["url"].as_str().unwrap()).collect();
    assert!(last_failed.contains(&web.url("/missing").as_str()), "{last_failed:?}");
    let text = run_ok(sitebot(dir.path()).args(["knowledge", "sources", "--site", &site]));
    assert!(text.contains("every 1h") && text.contains("/missing"), "{text}");
    run_ok(sitebot(dir.path()).args(["knowledge", "sources", "remove", "--site", &site, &web.url("/")]));
    assert_eq!(run_ok(sitebot(dir.path()).args(["knowledge", "sources", "--site", &site])).trim(), "0 sources");
    assert_eq!(documents(dir.path(), &site).len(), expected.len() - 2);
}

#[test]
fn a_crawl_killed_midway_and_run_again_completes_without_duplicates() {
    let pages = 150;
    let web = Website::generated(pages);
    let dir = tempfile::tempdir().unwrap();
    let site = create_site(dir.path());
    let mut child =
        crawler(dir.path()).args(["knowledge", "crawl", "--json", "--site", &site, &web.url("/")]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while web.requests_to("/page/") < 60 {
        assert!(Instant::now() < deadline, "the crawl did not get going");
        assert!(child.try_wait().unwrap().is_none(), "the crawl ended before it could be killed");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let partial = documents(dir.path(), &site).len();
    assert!(partial < pages, "killed midway: {partial} documents");

    // Run again at once: the dead process's lease does not hold it up.
    let started = Instant::now();
    let again = crawl(dir.path(), &site, &[&web.url("/")]);
    assert!(started.elapsed() < Duration::from_secs(50), "waited for the dead crawl's lease");
    let expected = expected_sources(&web, pages);
    let docs = documents(dir.path(), &site);
    assert_eq!(docs.keys().cloned().collect::<HashSet<_>>(), expected);
    assert_eq!(again["imported"].as_u64().unwrap() + again["unchanged"].as_u64().unwrap(), expected.len() as u64, "{again}");
    assert_eq!(again["updated"], 0);
}
