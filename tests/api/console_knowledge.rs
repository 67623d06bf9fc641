//! Knowledge in the console (#25) over the real server: documents uploaded through the console's form
//! and answered through `/v1/query`, deleted and gone from answers; uploads refused with a readable page;
//! crawl sources re-synced by the server with one crawl at a time; curated answers; a viewer's hand-made
//! requests refused; titles escaped. The browser side is `tests/browser/knowledge.mjs` (at the end).

use std::time::Duration;

use reqwest::StatusCode;
use sitebot::config::Config;
use sitebot::domain::{SiteId, SiteRole, Tier};
use sitebot::store::users::Grant;

use crate::console::{PASSWORD, add_user, csrf_of, get, post_form, session_cookie};
use crate::helpers::{TestApp, spawn_app_with, test_config};
use crate::knowledge::ask_ok;
use crate::website::Website;

/// A user with `role` on `site`, signed in through their setup link: (session cookie, CSRF token).
async fn user(app: &TestApp, email: &str, site: SiteId, role: SiteRole) -> (String, String) {
    let link = add_user(app, email, Some(Grant { site_id: site, role })).await;
    let set = post_form(app, &link, None, Some(&app.base), &[("password", PASSWORD), ("repeat", PASSWORD)]).await;
    assert_eq!(set.status(), StatusCode::SEE_OTHER);
    let cookie = session_cookie(set.headers()).expect("signed in");
    let csrf = csrf_of(app, &cookie).await;
    (cookie, csrf)
}

/// Uploads `files` as the console's form does (`multipart/form-data`, the CSRF field first).
async fn upload(app: &TestApp, site: SiteId, cookie: &str, csrf: &str, files: &[(&str, &[u8])]) -> reqwest::Response {
    let boundary = "----sitebot-test-boundary-7MA4YWxkTrZu0gW";
    let mut body = Vec::new();
    body.extend(format!("--{boundary}\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n{csrf}\r\n").into_bytes());
    for (name, bytes) in files {
        body.extend(
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n")
                .into_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend(b"\r\n");
    }
    body.extend(format!("--{boundary}--\r\n").into_bytes());
    app.client
        .post(app.url(&format!("/console/sites/{site}/knowledge/upload")))
        .header("Cookie", cookie)
        .header("Origin", &app.base)
        .header("Content-Type", format!("multipart/form-data; boundary={boundary}"))
        .body(body)
        .send()
        .await
        .unwrap()
}

fn documents(app: &TestApp, site: SiteId) -> i64 {
    app.count("SELECT count(*) FROM kb_documents WHERE site_id = ?1", [site.to_string()])
}

fn cites(answer: &serde_json::Value, title: &str) -> bool {
    answer["sources"].as_array().is_some_and(|s| s.iter().any(|s| s["title"] == title))
}

const LIGHTHOUSE: &str = "# Lighthouse tours\n\nTours of the old lighthouse start at the harbour gate every Tuesday at half past nine. \
    A tour takes ninety minutes and climbs all two hundred and twelve steps to the lantern room.\n";
const FERRY: &str = "# Ferry to the island\n\nThe ferry to Puffin Island leaves the north pier at a quarter past eleven. \
    Bicycles travel free; dogs must stay on a lead on the upper deck.\n";

#[tokio::test]
async fn an_editor_uploads_files_that_answer_and_a_deleted_one_no_longer_does() {
    let app = spawn_app_with(test_config()).await;
    let site = app.create_site(Tier::Pro).await.0.id;
    let (cookie, csrf) = user(&app, "editor@example.com", site, SiteRole::Editor).await;

    let resp = upload(&app, site, &cookie, &csrf, &[("lighthouse.md", LIGHTHOUSE.as_bytes()), ("ferry.md", FERRY.as_bytes())]).await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER, "{}", resp.text().await.unwrap());
    let to = resp.headers()["location"].to_str().unwrap().to_owned();
    let page = get(&app, &to, Some(&cookie)).await.text().await.unwrap();
    assert!(page.contains("Files imported: 2"), "{page}");
    assert!(page.contains("Lighthouse tours") && page.contains("Ferry to the island") && page.contains("lighthouse.md"), "{page}");
    // Search by title.
    let found = get(&app, &format!("/console/sites/{site}/knowledge?q=ferry"), Some(&cookie)).await.text().await.unwrap();
    assert!(found.contains("Ferry to the island") && !found.contains("Lighthouse tours"), "{found}");

    let a = ask_ok(&app, site, "When do the lighthouse tours start?").await;
    assert!(cites(&a, "Lighthouse tours"), "{a}");

    // Delete, with a confirmation first.
    let id: String = app.db().query_row("SELECT id FROM kb_documents WHERE title = 'Lighthouse tours'", [], |r| r.get(0)).unwrap();
    let confirm = get(&app, &format!("/console/sites/{site}/knowledge/documents/{id}/delete"), Some(&cookie)).await;
    assert_eq!(confirm.status(), StatusCode::OK);
    assert!(confirm.text().await.unwrap().contains("Delete this document?"));
    let gone = post_form(&app, &format!("/console/sites/{site}/knowledge/documents/{id}/delete"), Some(&cookie), Some(&app.base), &[("csrf", &csrf)]).await;
    assert_eq!(gone.status(), StatusCode::SEE_OTHER);
    assert_eq!(documents(&app, site), 1);
    let a = ask_ok(&app, site, "When do the lighthouse tours start?").await;
    assert!(!cites(&a, "Lighthouse tours"), "a deleted document is still cited: {a}");
    let audit = crate::console::audit_actions(&app);
    assert!(audit.contains(&"documents_uploaded".to_owned()) && audit.contains(&"document_deleted".to_owned()), "{audit:?}");
    // A document, answer or source that is not (or no longer) there: the console's 404 page, for an editor too.
    let b = format!("/console/sites/{site}/knowledge");
    for path in [
        format!("{b}/documents/{id}/delete"),
        format!("{b}/answers/ans_nope"),
        format!("{b}/answers/ans_nope/delete"),
        format!("{b}/sources/remove?url=https%3A%2F%2Fnope.example%2F"),
    ] {
        let resp = get(&app, &path, Some(&cookie)).await;
        assert_eq!(resp.status(), StatusCode::NOT_FOUND, "{path}");
        assert!(resp.text().await.unwrap().contains("<html"), "{path}: a readable page");
    }
}

#[tokio::test]
async fn an_oversized_or_unsupported_upload_is_a_readable_422_and_nothing_is_stored() {
    let mut config: Config = test_config();
    config.knowledge.max_file_bytes = 2048;
    let app = spawn_app_with(config).await;
    let site = app.create_site(Tier::Pro).await.0.id;
    let (cookie, csrf) = user(&app, "editor@example.com", site, SiteRole::Editor).await;

    let big = format!("# Big\n\n{}", "All work and no play. ".repeat(200));
    let resp = upload(&app, site, &cookie, &csrf, &[("ferry.md", FERRY.as_bytes()), ("big.md", big.as_bytes())]).await;
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(resp.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    let page = resp.text().await.unwrap();
    assert!(page.contains("Nothing was stored") && page.contains("big.md: the file is larger than the limit of 2 KiB"), "{page}");
    assert!(page.contains("id=\"upload-form\""), "the form is there to try again: {page}");
    assert_eq!(documents(&app, site), 0);

    let resp = upload(&app, site, &cookie, &csrf, &[("ferry.md", FERRY.as_bytes()), ("setup.exe", b"MZ\x90\x00")]).await;
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let page = resp.text().await.unwrap();
    assert!(page.contains("setup.exe: this format is not supported"), "{page}");
    assert_eq!(documents(&app, site), 0);

    let resp = upload(&app, site, &cookie, &csrf, &[]).await;
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(resp.text().await.unwrap().contains("Choose at least one file."));
    // Without the session's CSRF token: refused before any file is read.
    let resp = upload(&app, site, &cookie, "forged", &[("ferry.md", FERRY.as_bytes())]).await;
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    assert_eq!(documents(&app, site), 0);
}

/// A whole upload is bounded by `console.upload_bytes` (each file by `knowledge.max_file_bytes`): over
/// it, a readable 413 page, and nothing of it stored; the files are spooled to disk, not held in memory
/// (the peak's size is printed by `cargo bench --bench console`).
#[tokio::test]
async fn an_upload_over_the_request_limit_is_a_readable_413_and_nothing_is_stored() {
    let mut config: Config = test_config();
    config.knowledge.max_file_bytes = 64 * 1024;
    config.console.upload_bytes = 100 * 1024;
    let app = spawn_app_with(config).await;
    let site = app.create_site(Tier::Pro).await.0.id;
    let (cookie, csrf) = user(&app, "editor@example.com", site, SiteRole::Editor).await;
    // Three files each within the file limit, together over the request's.
    let part = |title: &str| format!("# {title}\n\n{}", "The harbour opens at nine. ".repeat(1500)).into_bytes();
    let (a, b, c) = (part("A"), part("B"), part("C"));
    assert!(a.len() < 64 * 1024 && a.len() * 3 > 100 * 1024);
    let resp = upload(&app, site, &cookie, &csrf, &[("a.md", &a), ("b.md", &b), ("c.md", &c)]).await;
    assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert!(resp.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    let page = resp.text().await.unwrap();
    assert!(page.contains("Nothing was imported: the files together are larger than one upload may be, at most 100 KiB"), "{page}");
    assert!(page.contains("id=\"upload-form\""), "the form is there to try again");
    assert_eq!(documents(&app, site), 0);
    // Within the limit, the same files are imported (two of them).
    let resp = upload(&app, site, &cookie, &csrf, &[("a.md", &a), ("ferry.md", FERRY.as_bytes())]).await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    assert_eq!(documents(&app, site), 2);
    // Nothing spooled is left behind in the data directory.
    let left: Vec<_> = std::fs::read_dir(&app.state.data_dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().starts_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// An editor's crawl source asks for at most the operator's `crawl.max_pages`, and a site has at most
/// `crawl.max_sources_per_site` sources.
#[tokio::test]
async fn crawl_sources_are_bounded_by_the_operators_limits() {
    let mut config = test_config();
    config.crawl.allow_http = true;
    config.crawl.allow_private_networks = true;
    config.crawl.max_pages = 50;
    config.crawl.max_sources_per_site = 2;
    let app = spawn_app_with(config).await;
    let site = app.create_site(Tier::Pro).await.0.id;
    let (cookie, csrf) = user(&app, "editor@example.com", site, SiteRole::Editor).await;
    let sources = format!("/console/sites/{site}/knowledge/sources");
    let add = |url: &'static str, pages: &'static str| {
        let (app, sources, cookie, csrf) = (&app, sources.clone(), cookie.clone(), csrf.clone());
        async move { post_form(app, &sources, Some(&cookie), Some(&app.base), &[("csrf", &csrf), ("url", url), ("max_pages", pages), ("every", "")]).await }
    };
    let over = add("http://127.0.0.1:9/a/", "100000").await;
    assert_eq!(over.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(over.text().await.unwrap().contains("1 – 50"), "the limit is named");
    assert_eq!(app.count("SELECT count(*) FROM crawl_sources", []), 0);
    assert_eq!(add("http://127.0.0.1:9/a/", "50").await.status(), StatusCode::SEE_OTHER);
    assert_eq!(add("http://127.0.0.1:9/b/", "").await.status(), StatusCode::SEE_OTHER);
    let third = add("http://127.0.0.1:9/c/", "").await;
    assert_eq!(third.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(third.text().await.unwrap().contains("remove a source first"));
    assert_eq!(app.count("SELECT count(*) FROM crawl_sources", []), 2);
    // Changing an existing source is not a new one.
    assert_eq!(add("http://127.0.0.1:9/b/", "10").await.status(), StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn hostile_titles_and_answers_are_escaped() {
    let app = spawn_app_with(test_config()).await;
    let site = app.create_site(Tier::Pro).await.0.id;
    let (cookie, csrf) = user(&app, "editor@example.com", site, SiteRole::Editor).await;
    // A text file's first short line is its title.
    let hostile = "<script>alert(1)</script><img src=x onerror=alert(2)>\n\nA page about the harbour's opening hours in summer and winter.\n";
    let resp = upload(&app, site, &cookie, &csrf, &[("x<b>.txt", hostile.as_bytes())]).await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let page = get(&app, &format!("/console/sites/{site}/knowledge"), Some(&cookie)).await.text().await.unwrap();
    // askama writes `<` and `>` as numeric references.
    assert!(page.contains("&#60;script&#62;alert(1)&#60;/script&#62;&#60;img src=x onerror=alert(2)&#62;"), "{page}");
    assert!(!page.contains("<script>alert") && !page.contains("<img src=x") && !page.contains("x<b>"), "{page}");

    let form = [("csrf", csrf.as_str()), ("question", "<script>alert(3)</script>?"), ("answer", "<b onmouseover=alert(4)>hi</b>"), ("url", "")];
    let added = post_form(&app, &format!("/console/sites/{site}/knowledge/answers"), Some(&cookie), Some(&app.base), &form).await;
    assert_eq!(added.status(), StatusCode::SEE_OTHER);
    let page = get(&app, &format!("/console/sites/{site}/knowledge/answers"), Some(&cookie)).await.text().await.unwrap();
    assert!(page.contains("&#60;script&#62;alert(3)&#60;/script&#62;?") && page.contains("&#60;b onmouseover=alert(4)&#62;"), "{page}");
    assert!(!page.contains("<script>alert") && !page.contains("<b onmouseover"), "{page}");
}

#[tokio::test]
async fn curated_answers_are_added_edited_and_deleted_here_and_answer_accordingly() {
    let app = spawn_app_with(test_config()).await;
    let site = app.create_site(Tier::Pro).await.0.id;
    let (cookie, csrf) = user(&app, "owner@example.com", site, SiteRole::Owner).await;
    let base = format!("/console/sites/{site}/knowledge/answers");
    let bad = post_form(&app, &base, Some(&cookie), Some(&app.base), &[("csrf", &csrf), ("question", ""), ("answer", "x"), ("url", "")]).await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let form = [("csrf", csrf.as_str()), ("question", "Do you sell gift vouchers?"), ("answer", "Yes, at the front desk, from 20 euros."), ("url", "")];
    assert_eq!(post_form(&app, &base, Some(&cookie), Some(&app.base), &form).await.status(), StatusCode::SEE_OTHER);
    let a = ask_ok(&app, site, "Do you sell gift vouchers?").await;
    assert!(a["answer"].as_str().unwrap().contains("from 20 euros"), "{a}");

    let id: String = app.db().query_row("SELECT id FROM curated_answers", [], |r| r.get(0)).unwrap();
    let edit = get(&app, &format!("{base}/{id}"), Some(&cookie)).await.text().await.unwrap();
    assert!(edit.contains("Yes, at the front desk, from 20 euros."), "{edit}");
    let form = [("csrf", csrf.as_str()), ("question", "Do you sell gift vouchers?"), ("answer", "Yes, online and at the desk, from 25 euros."), ("url", "")];
    assert_eq!(post_form(&app, &format!("{base}/{id}"), Some(&cookie), Some(&app.base), &form).await.status(), StatusCode::SEE_OTHER);
    let a = ask_ok(&app, site, "Do you sell gift vouchers?").await;
    assert!(a["answer"].as_str().unwrap().contains("from 25 euros"), "{a}");

    assert_eq!(post_form(&app, &format!("{base}/{id}/delete"), Some(&cookie), Some(&app.base), &[("csrf", &csrf)]).await.status(), StatusCode::SEE_OTHER);
    let a = ask_ok(&app, site, "Do you sell gift vouchers?").await;
    assert!(!a["answer"].as_str().unwrap_or("").contains("euros"), "{a}");
    let audit = crate::console::audit_actions(&app);
    for action in ["curated_added", "curated_edited", "curated_deleted"] {
        assert!(audit.contains(&action.to_owned()), "{action} in {audit:?}");
    }
}

/// A server that may crawl loopback over http (as tests/api/crawl.rs configures it), with a site.
async fn crawling_app() -> (TestApp, SiteId) {
    let mut config = test_config();
    config.crawl.allow_http = true;
    config.crawl.allow_private_networks = true;
    let app = spawn_app_with(config).await;
    let site = app.create_site(Tier::Pro).await.0.id;
    (app, site)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_resync_while_one_runs_does_not_start_another_and_progress_shows() {
    let web = tokio::task::spawn_blocking(|| Website::generated(20)).await.unwrap();
    // A slow site: the crawl runs for seconds, so the progress is there to see even on a busy machine
    // (at full speed it can end before the first look).
    web.set_delay(Duration::from_millis(300));
    let (app, site) = crawling_app().await;
    let (cookie, csrf) = user(&app, "editor@example.com", site, SiteRole::Editor).await;
    let sources = format!("/console/sites/{site}/knowledge/sources");

    let bad = post_form(&app, &sources, Some(&cookie), Some(&app.base), &[("csrf", &csrf), ("url", "ftp://example.com/"), ("every", "")]).await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(bad.text().await.unwrap().contains("Start URL:"));
    let bad = post_form(&app, &sources, Some(&cookie), Some(&app.base), &[("csrf", &csrf), ("url", &web.url("/")), ("every", "5s")]).await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);

    let url = web.url("/");
    let added = post_form(&app, &sources, Some(&cookie), Some(&app.base), &[("csrf", &csrf), ("url", &url), ("max_pages", "100"), ("every", "")]).await;
    assert_eq!(added.status(), StatusCode::SEE_OTHER);
    let first = post_form(&app, &format!("{sources}/resync"), Some(&cookie), Some(&app.base), &[("csrf", &csrf), ("url", &url)]).await;
    assert_eq!(first.headers()["location"], format!("{sources}?done=started"));
    let second = post_form(&app, &format!("{sources}/resync"), Some(&cookie), Some(&app.base), &[("csrf", &csrf), ("url", &url)]).await;
    assert_eq!(second.headers()["location"], format!("{sources}?done=running"));
    let page = get(&app, &format!("{sources}?done=running"), Some(&cookie)).await.text().await.unwrap();
    assert!(page.contains("already running") && page.contains("data-running=\"true\"") && page.contains("Crawling"), "{page}");

    // The progress the page polls, until the crawl ends.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    let mut most = 0;
    loop {
        let p: serde_json::Value = get(&app, &format!("{sources}/progress"), Some(&cookie)).await.json().await.unwrap();
        most = most.max(p["sources"][0]["done"].as_u64().unwrap_or(0));
        if p["running"] == false {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the crawl did not end in 120 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(most > 0, "the progress showed pages done while the crawl ran");
    // One crawl ran: robots.txt was asked for once.
    assert_eq!(web.requests_to("/robots.txt"), 1, "{:?}", web.log());
    let page = get(&app, &sources, Some(&cookie)).await.text().await.unwrap();
    assert!(page.contains("data-running=\"false\"") && page.contains("23 new"), "{page}");
    assert_eq!(documents(&app, site), 23);
    let audit = crate::console::audit_actions(&app);
    assert_eq!(audit.iter().filter(|a| *a == "crawl_resync_requested").count(), 2, "{audit:?}");

    // Removing keeps the documents.
    let confirm = get(&app, &format!("{sources}/remove?url={}", url::form_urlencoded::byte_serialize(url.as_bytes()).collect::<String>()), Some(&cookie)).await;
    assert_eq!(confirm.status(), StatusCode::OK);
    let removed = post_form(&app, &format!("{sources}/remove"), Some(&cookie), Some(&app.base), &[("csrf", &csrf), ("url", &url)]).await;
    assert_eq!(removed.status(), StatusCode::SEE_OTHER);
    assert_eq!(app.count("SELECT count(*) FROM crawl_sources", []), 0);
    assert_eq!(documents(&app, site), 23);
}

#[tokio::test]
async fn a_viewer_sees_no_controls_and_their_hand_made_posts_are_403() {
    let (app, site) = crawling_app().await;
    let (ecookie, ecsrf) = user(&app, "editor@example.com", site, SiteRole::Editor).await;
    assert_eq!(upload(&app, site, &ecookie, &ecsrf, &[("ferry.md", FERRY.as_bytes())]).await.status(), StatusCode::SEE_OTHER);
    let form = [("csrf", ecsrf.as_str()), ("question", "Do you sell gift vouchers?"), ("answer", "Yes."), ("url", "")];
    post_form(&app, &format!("/console/sites/{site}/knowledge/answers"), Some(&ecookie), Some(&app.base), &form).await;
    let url = "http://127.0.0.1:9/";
    post_form(&app, &format!("/console/sites/{site}/knowledge/sources"), Some(&ecookie), Some(&app.base), &[("csrf", &ecsrf), ("url", url)]).await;
    let doc: String = app.db().query_row("SELECT id FROM kb_documents", [], |r| r.get(0)).unwrap();
    let answer: String = app.db().query_row("SELECT id FROM curated_answers", [], |r| r.get(0)).unwrap();
    let audit_before = crate::console::audit_actions(&app).len();

    let (cookie, csrf) = user(&app, "viewer@example.com", site, SiteRole::Viewer).await;
    for (path, gone) in [
        ("knowledge", vec!["upload-form", "/delete", "Upload"]),
        ("knowledge/sources", vec!["Re-sync now", "Add a website", "/remove"]),
        ("knowledge/answers", vec!["Add an answer", "/delete", "Edit"]),
    ] {
        let page = get(&app, &format!("/console/sites/{site}/{path}"), Some(&cookie)).await;
        assert_eq!(page.status(), StatusCode::OK, "{path}");
        let page = page.text().await.unwrap();
        assert!(page.contains("Ferry to the island") || page.contains(url) || page.contains("gift vouchers"), "{path} shows the knowledge: {page}");
        for control in gone {
            assert!(!page.contains(control), "a viewer sees {control} on {path}");
        }
    }
    let b = format!("/console/sites/{site}/knowledge");
    assert_eq!(upload(&app, site, &cookie, &csrf, &[("ferry.md", FERRY.as_bytes())]).await.status(), StatusCode::FORBIDDEN);
    let posts: Vec<(String, Vec<(&str, &str)>)> = vec![
        (format!("{b}/documents/{doc}/delete"), vec![]),
        (format!("{b}/sources"), vec![("url", "http://127.0.0.1:8/")]),
        (format!("{b}/sources/resync"), vec![("url", url)]),
        (format!("{b}/sources/remove"), vec![("url", url)]),
        (format!("{b}/answers"), vec![("question", "Q?"), ("answer", "A."), ("url", "")]),
        (format!("{b}/answers/{answer}"), vec![("question", "Q?"), ("answer", "A."), ("url", "")]),
        (format!("{b}/answers/{answer}/delete"), vec![]),
    ];
    for (path, fields) in posts {
        let mut form = vec![("csrf", csrf.as_str())];
        form.extend(fields);
        let resp = post_form(&app, &path, Some(&cookie), Some(&app.base), &form).await;
        assert_eq!(resp.status(), StatusCode::FORBIDDEN, "{path}");
        assert!(resp.text().await.unwrap().contains("<html"), "{path}: a readable page");
    }
    let remove = format!("{b}/sources/remove?url={}", url::form_urlencoded::byte_serialize(url.as_bytes()).collect::<String>());
    for path in [format!("{b}/documents/{doc}/delete"), format!("{b}/answers/{answer}"), format!("{b}/answers/{answer}/delete"), remove] {
        assert_eq!(get(&app, &path, Some(&cookie)).await.status(), StatusCode::FORBIDDEN, "{path}");
    }
    assert_eq!(documents(&app, site), 1);
    assert_eq!(app.count("SELECT count(*) FROM curated_answers", []), 1);
    assert_eq!(app.count("SELECT count(*) FROM crawl_sources", []), 1);
    assert_eq!(app.count("SELECT count(*) FROM crawl_sources WHERE lease_owner IS NOT NULL", []), 0);
    assert_eq!(crate::console::audit_actions(&app).len(), audit_before + 2, "only the viewer's setup and sign-in were audited");
}

/// The knowledge pages in Debian's headless Chromium (`tests/browser/knowledge.mjs`): an editor uploads
/// two files at once and sees them listed, adds a loopback website, presses "Re-sync now" and watches
/// the progress to the end, adds a curated answer; a viewer has no control. Then `/v1/query` answers a
/// question only the uploaded files answer, citing them. Screenshots: `target/knowledge-screenshots/`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn knowledge_is_managed_in_a_real_browser() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let web = tokio::task::spawn_blocking(|| Website::generated(20)).await.unwrap();
    let mut config = test_config();
    config.crawl.allow_http = true;
    config.crawl.allow_private_networks = true;
    config.limits.ip_per_minute = 100_000;
    let app = spawn_app_with(config).await;
    let site = app.create_site(Tier::Pro).await.0.id;
    let link = |email: &'static str, role| {
        let app = &app;
        async move { app.url(&add_user(app, email, Some(Grant { site_id: site, role })).await) }
    };
    let (editor, viewer) = (link("editor@example.com", SiteRole::Editor).await, link("viewer@example.com", SiteRole::Viewer).await);
    let files = tempfile::tempdir().unwrap();
    for (name, body) in [("lighthouse.md", LIGHTHOUSE.as_bytes()), ("ferry.md", FERRY.as_bytes()), ("notes.exe", b"MZ\x90\x00".as_slice())] {
        std::fs::write(files.path().join(name), body).unwrap();
    }
    let path = |n: &str| files.path().join(n).display().to_string();
    let shots = root.join("target/knowledge-screenshots");
    let env = [
        ("SITEBOT_URL", app.base.clone()),
        ("SITE_ID", site.to_string()),
        ("EDITOR_LINK", editor),
        ("VIEWER_LINK", viewer),
        ("FILE_A", path("lighthouse.md")),
        ("FILE_B", path("ferry.md")),
        ("FILE_BAD", path("notes.exe")),
        ("TITLE_A", "Lighthouse tours".to_owned()),
        ("TITLE_B", "Ferry to the island".to_owned()),
        ("WEBSITE_URL", web.url("/")),
        ("PAGES", "23".to_owned()),
        ("SCREENSHOT_DIR", shots.display().to_string()),
    ];
    crate::browser::run_browser_script("knowledge.mjs", &env, 6).await;
    for page in [
        "documents-empty", "documents", "upload-refused", "delete-confirm", "sources", "sources-synced", "documents-search", "answers", "answer-edit",
        "viewer-documents-de", "viewer-sources-de", "viewer-answers-de",
    ] {
        for size in ["desktop", "phone"] {
            assert!(shots.join(format!("{size}-{page}.png")).is_file(), "{size}-{page}.png kept");
        }
    }
    let a = ask_ok(&app, site, "When do the lighthouse tours start?").await;
    assert!(cites(&a, "Lighthouse tours"), "{a}");
    let b = ask_ok(&app, site, "Can I take my bicycle on the ferry to Puffin Island?").await;
    assert!(cites(&b, "Ferry to the island"), "{b}");
    assert_eq!(web.requests_to("/robots.txt"), 1, "one crawl");
}
