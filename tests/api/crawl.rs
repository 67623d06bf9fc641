//! The server re-syncs a registered crawl source by itself, on its durable schedule: the harness starts
//! the server through the composition root `sitebot serve` uses, whose crawl scheduler does it.

use std::time::Duration;

use sitebot::domain::Tier;
use sitebot::store::crawl::SourceOptions;

use crate::helpers::{spawn_app_with, test_config};
use crate::website::{Website, page_html};

/// Waits until the source has synced `n` times (as its last sync time moves), at most 60 s.
async fn synced_after(
    app: &crate::helpers::TestApp,
    site: sitebot::domain::SiteId,
    url: &str,
    after: Option<sitebot::domain::Timestamp>,
) -> sitebot::store::crawl::Source {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let (s, u) = (app.state.store.clone(), url.to_owned());
        let source = app.state.store.run(move |_| s.site(site).crawl().source(&u)).await.unwrap().expect("the source");
        if source.last_sync_at.is_some() && source.last_sync_at != after && source.crawling_until.is_none() {
            return source;
        }
        assert!(tokio::time::Instant::now() < deadline, "the server did not sync the source in 60 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A server allowed to crawl loopback, with a site whose crawl source is `web`'s home page, registered
/// with a schedule of `every` and never synced: due at once. Nothing but the running server's own
/// scheduler crawls it.
async fn server_with_source(web: &Website, max_pages: usize, every: Duration) -> (crate::helpers::TestApp, sitebot::domain::SiteId, String) {
    let mut config = test_config();
    config.crawl.allow_http = true;
    config.crawl.allow_private_networks = true;
    let app = spawn_app_with(config).await;
    let site = app.create_site(Tier::Pro).await.0.id;
    let url = web.url("/");
    let options = SourceOptions { max_pages, max_depth: None, include: vec![], exclude: vec![] };
    let (s, u) = (app.state.store.clone(), url.clone());
    app.state.store.run(move |_| s.site(site).crawl().register(&u, &options, Some(every), 20)).await.unwrap();
    (app, site, url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registered_source_is_resynced_by_the_running_server_when_due() {
    let pages = 20;
    let web = tokio::task::spawn_blocking(move || Website::generated(pages)).await.unwrap();
    let (app, site, url) = server_with_source(&web, 100, Duration::from_secs(60)).await;

    let first = synced_after(&app, site, &url, None).await;
    assert_eq!(first.pages, pages as i64 + 3, "{first:?}");
    assert_eq!(first.last_summary.as_ref().unwrap()["imported"], pages + 3);
    assert_eq!(first.next_sync_at.unwrap().as_millis() - first.last_sync_at.unwrap().as_millis(), 60_000);
    let docs = app.state.store.site(site).knowledge().list_documents().unwrap();
    assert_eq!(docs.len(), pages + 3);
    // Not due again before its minute is up.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (s, u) = (app.state.store.clone(), url.clone());
    assert_eq!(app.state.store.run(move |_| s.site(site).crawl().source(&u)).await.unwrap().unwrap().last_sync_at, first.last_sync_at);

    // The page changes; a minute later (moved forward in the stored schedule) the server picks it up.
    web.set_html("/page/2", page_html(2, pages, "Opening hours now include Sundays from ten to four."));
    app.db().execute("UPDATE crawl_sources SET next_sync_at = next_sync_at - 60000", []).unwrap();
    let second = synced_after(&app, site, &url, first.last_sync_at).await;
    let summary = second.last_summary.unwrap();
    assert_eq!(
        (summary["updated"].as_u64(), summary["unchanged"].as_u64(), summary["imported"].as_u64()),
        (Some(1), Some(pages as u64 + 2), Some(0)),
        "{summary}"
    );
    // And the server answers from the new text at once.
    let resp = app
        .client
        .post(app.url("/v1/query"))
        .header("X-Site-Id", site.to_string())
        .json(&serde_json::json!({"question": "Are you open on Sundays?"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let body: serde_json::Value = resp.json().await.unwrap();
    assert!(body.to_string().contains("Sundays"), "{body}");
    app.stop().await;
}

fn small_site() -> Website {
    let web = Website::start();
    // Our group lets sitebot in (everyone else is kept out) and asks for a second between requests.
    web.set("/robots.txt", "text/plain", "User-agent: *\nDisallow: /\n\nUser-agent: sitebot\nCrawl-delay: 1\nDisallow: /nope\n");
    web.set_html("/", "<html><head><title>Home</title></head><body><p>The bakery opens at seven.</p><a href=\"/a\">A</a> <a href=\"/b\">B</a> <a href=\"/nope\">No</a></body></html>".into());
    web.set_html("/a", "<html><head><title>Bread</title></head><body><p>Sourdough is baked every morning.</p></body></html>".into());
    web.set_html("/b", "<html><head><title>Cakes</title></head><body><p>Cakes are made to order with two days notice.</p></body></html>".into());
    web.set_html("/nope", "<html><body><p>Not for robots.</p></body></html>".into());
    web.fail("/a", 503, 1);
    web.fail("/b", 429, 1);
    web
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_retries_throttled_pages_paces_by_crawl_delay_and_obeys_its_robots_group() {
    let web = tokio::task::spawn_blocking(small_site).await.unwrap();
    let app = crate::helpers::spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let mut config = test_config().crawl;
    config.allow_http = true;
    config.allow_private_networks = true;
    let options = SourceOptions { max_pages: 100, max_depth: None, include: vec![], exclude: vec![] };
    let start = url::Url::parse(&web.url("/")).unwrap();
    app.state.store.site(site.id).crawl().register(start.as_str(), &options, None, 20).unwrap();
    let summary = sitebot::crawl::crawl(&app.state.store, &app.state.knowledge, &config, site.id, &start, &options, &|_| {}).await.unwrap();
    assert_eq!((summary.imported, summary.failed.len()), (3, 0), "{summary:?}");
    assert_eq!(web.requests_to("/nope"), 0);
    let statuses = |path: &str| web.log().iter().filter(|l| l.path == path).map(|l| l.status).collect::<Vec<_>>();
    assert_eq!(statuses("/a"), [503, 200]);
    assert_eq!(statuses("/b"), [429, 200]);
    // After robots.txt, one request at a time, a second apart.
    let log = web.log();
    for pair in log[1..].windows(2) {
        let gap = pair[1].at - pair[0].at;
        assert!(gap >= Duration::from_millis(950), "{} then {} after {gap:?}", pair[0].path, pair[1].path);
    }

    // The webhooks' network rules: plain http, then loopback, each refused unless allowed.
    let strict = test_config().crawl;
    let err = sitebot::crawl::crawl(&app.state.store, &app.state.knowledge, &strict, site.id, &start, &options, &|_| {}).await.unwrap_err();
    assert!(err.to_string().contains("crawl.allow_http"), "{err}");
    let http_allowed = sitebot::config::CrawlConfig { allow_http: true, ..test_config().crawl };
    let err = sitebot::crawl::crawl(&app.state.store, &app.state.knowledge, &http_allowed, site.id, &start, &options, &|_| {}).await.unwrap_err();
    assert!(err.to_string().contains("crawl.allow_private_networks"), "{err}");
}

/// The first three sources' URLs of the answer to `question`.
async fn top_urls(app: &crate::helpers::TestApp, site: sitebot::domain::SiteId, question: &str) -> (Vec<String>, serde_json::Value) {
    let resp = app
        .client
        .post(app.url("/v1/query"))
        .header("X-Site-Id", site.to_string())
        .json(&serde_json::json!({"question": question, "topK": 3, "scoreThreshold": 0.0}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let body: serde_json::Value = resp.json().await.unwrap();
    let urls = body["sources"].as_array().unwrap().iter().map(|s| s["url"].as_str().unwrap_or("").to_owned()).collect();
    (urls, body)
}

/// Visitors ask about page 5, room 7, plan B: terms of one character must be searched (#28).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_numbers_and_single_letters_find_their_page_on_a_crawled_site_of_300_pages() {
    let pages = 300;
    let codeword = |i: usize, round: usize| format!("The codeword for page {i} is {}.", ["amber", "birch", "cobalt"][round].to_owned() + &i.to_string());
    let web = tokio::task::spawn_blocking(move || Website::generated(pages)).await.unwrap();
    for i in 0..pages {
        let extra = match i {
            123 => "Plan B is the family plan: two adults and two children for 90 euros a month.".to_owned(),
            124 => "Plan C is the student plan for 20 euros a month.".to_owned(),
            125 => "Plan D is the company plan for teams of ten.".to_owned(),
            _ => codeword(i, 0),
        };
        web.set_html(&format!("/page/{i}"), page_html(i, pages, &extra));
    }
    let (app, site, url) = server_with_source(&web, 400, Duration::from_secs(3600)).await;
    let first = synced_after(&app, site, &url, None).await;
    assert!(first.pages >= pages as i64, "{first:?}");

    for (question, page) in [("What is the codeword for page 5?", 5), ("What is the codeword for page 9?", 9), ("What does plan B cost?", 123)] {
        let (urls, body) = top_urls(&app, site, question).await;
        assert!(urls.contains(&web.url(&format!("/page/{page}"))), "{question}: page {page} not in the top 3 {urls:?}: {body}");
    }
    let (_, body) = top_urls(&app, site, "What is the codeword for page 5?").await;
    assert!(body["answer"].as_str().unwrap().contains("amber5"), "{body}");

    // Page 9 changes; the scheduled re-sync (moved forward in the stored schedule) picks it up and the
    // same question finds the new text.
    web.set_html("/page/9", page_html(9, pages, &codeword(9, 1)));
    app.db().execute("UPDATE crawl_sources SET next_sync_at = next_sync_at - 3600000", []).unwrap();
    synced_after(&app, site, &url, first.last_sync_at).await;
    let (urls, body) = top_urls(&app, site, "What is the codeword for page 9?").await;
    assert!(urls.contains(&web.url("/page/9")), "{urls:?}: {body}");
    assert!(body["answer"].as_str().unwrap().contains("birch9"), "the re-synced text answers: {body}");
    app.stop().await;
}
