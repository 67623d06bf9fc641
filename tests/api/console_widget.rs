//! The widget editor (#25) over the real server: drafts, the preview token, publishing, suggested
//! questions in `GET /v1/widget/config`, validation, roles and the audit log; and, in Chromium, an owner
//! editing the widget with its live preview while a visitor's host page keeps the published one.

use std::net::SocketAddr;

use reqwest::StatusCode;
use serde_json::Value;
use sitebot::domain::{SiteId, SiteRole, Tier, Timestamp};
use sitebot::store::users::Grant;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::console::{PASSWORD, add_user, audit_actions, csrf_of, get, post_form, session_cookie};
use crate::helpers::{TestApp, problem, spawn_app};

/// A console user with `role` on `site`, signed in through their setup link: (cookie, CSRF token).
async fn user(app: &TestApp, email: &str, site: SiteId, role: SiteRole) -> (String, String) {
    let link = add_user(app, email, Some(Grant { site_id: site, role })).await;
    let set = post_form(app, &link, None, Some(&app.base), &[("password", PASSWORD), ("repeat", PASSWORD)]).await;
    assert_eq!(set.status(), StatusCode::SEE_OTHER);
    let cookie = session_cookie(set.headers()).expect("signed in");
    let csrf = csrf_of(app, &cookie).await;
    (cookie, csrf)
}

/// The editor's form with these values (the site's language `en` in row 0, German in row 1).
fn form<'a>(csrf: &'a str, color: &'a str, en: &'a str, de: &'a str, origins: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("csrf", csrf),
        ("color", color),
        ("position", "bottom-left"),
        ("lead_form", "on"),
        ("lang_0", "en"),
        ("greeting_0", "Welcome to the clinic!"),
        ("questions_0", en),
        ("lang_1", "de"),
        ("greeting_1", ""),
        ("questions_1", de),
        ("lang_2", ""),
        ("greeting_2", ""),
        ("questions_2", ""),
        ("origins", origins),
    ]
}

async fn config(app: &TestApp, site: SiteId, query: &str, preview: Option<&str>) -> reqwest::Response {
    let mut req = app.client.get(app.url(&format!("/v1/widget/config{query}"))).header("X-Site-Id", site.to_string());
    if let Some(token) = preview {
        req = req.header("X-Widget-Preview", token);
    }
    req.send().await.unwrap()
}

async fn config_ok(app: &TestApp, site: SiteId, query: &str, preview: Option<&str>) -> Value {
    let resp = config(app, site, query, preview).await;
    assert_eq!(resp.status(), StatusCode::OK);
    resp.json().await.unwrap()
}

/// The preview token the console's preview page gives its widget.
async fn preview_token(app: &TestApp, site: SiteId, cookie: &str) -> String {
    let page = get(app, &format!("/console/sites/{site}/widget/preview"), Some(cookie)).await;
    assert_eq!(page.status(), StatusCode::OK);
    let csp = page.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(csp.contains("frame-ancestors 'self'") && !csp.contains("unsafe-inline"), "{csp}");
    assert_eq!(page.headers()["x-frame-options"], "SAMEORIGIN");
    let html = page.text().await.unwrap();
    assert!(html.contains("src=\"/v1/widget.js\""), "the real widget: {html}");
    let at = html.find("data-preview=\"").expect("a preview token") + "data-preview=\"".len();
    html[at..].split('"').next().unwrap().to_owned()
}

#[tokio::test]
async fn suggested_questions_are_published_per_language_with_fallback() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let (cookie, csrf) = user(&app, "owner@example.com", site.id, SiteRole::Owner).await;
    let before = config_ok(&app, site.id, "", None).await;
    assert_eq!(before["suggestedQuestions"], serde_json::json!({"lang": null, "questions": []}), "{before}");

    let path = format!("/console/sites/{}/widget", site.id);
    let saved = post_form(
        &app,
        &path,
        Some(&cookie),
        Some(&app.base),
        &form(&csrf, "#AA3300", "When are you open?\r\n\r\nDo you take cards?", "Wann haben Sie geöffnet?", "https://shop.example"),
    )
    .await;
    assert_eq!(saved.status(), StatusCode::SEE_OTHER);
    assert_eq!(saved.headers()["location"], format!("{path}?saved=1"));
    // A draft only: visitors get what was published before.
    let draft_only = config_ok(&app, site.id, "?lang=de", None).await;
    assert_eq!(draft_only["suggestedQuestions"]["questions"], serde_json::json!([]), "{draft_only}");
    assert_eq!(draft_only["primaryColor"], before["primaryColor"]);
    assert_eq!(draft_only["position"], "bottom-right");
    let page = get(&app, &path, Some(&cookie)).await.text().await.unwrap();
    assert!(page.contains("Unpublished draft") && page.contains("Wann haben Sie geöffnet?"), "the editor shows the draft");
    // The embed code, as text (askama escapes `<`, `>` and `"` as numeric references).
    assert!(
        page.contains(&format!("&#60;script src=&#34;{}/v1/widget.js&#34; data-site-id=&#34;{}&#34; async&#62;&#60;/script&#62;", app.base, site.id)),
        "the embed code"
    );

    let published = post_form(&app, &format!("{path}/publish"), Some(&cookie), Some(&app.base), &[("csrf", &csrf)]).await;
    assert_eq!(published.status(), StatusCode::SEE_OTHER);
    let de = config_ok(&app, site.id, "?lang=de-CH", None).await;
    assert_eq!(de["suggestedQuestions"], serde_json::json!({"lang": "de", "questions": ["Wann haben Sie geöffnet?"]}), "{de}");
    assert_eq!((de["primaryColor"].as_str(), de["position"].as_str()), (Some("#aa3300"), Some("bottom-left")));
    assert_eq!(de["greeting"]["en"], "Welcome to the clinic!");
    let english = serde_json::json!({"lang": "en", "questions": ["When are you open?", "Do you take cards?"]});
    // A language without questions, and no language, fall back to the site's.
    assert_eq!(config_ok(&app, site.id, "?lang=fr", None).await["suggestedQuestions"], english);
    assert_eq!(config_ok(&app, site.id, "", None).await["suggestedQuestions"], english);
    problem(config(&app, site.id, "?lang=%3Cscript%3E", None).await, 400, "bad_request").await;

    // The published origins are enforced at once.
    let foreign =
        app.client.get(app.url("/v1/widget/config")).header("X-Site-Id", site.id.to_string()).header("Origin", "https://evil.example").send().await.unwrap();
    problem(foreign, 403, "origin_not_allowed").await;
    let shop =
        app.client.get(app.url("/v1/widget/config")).header("X-Site-Id", site.id.to_string()).header("Origin", "https://shop.example").send().await.unwrap();
    assert_eq!(shop.status(), StatusCode::OK);

    // Publishing again with no draft is refused on the page; nothing changes.
    let again = post_form(&app, &format!("{path}/publish"), Some(&cookie), Some(&app.base), &[("csrf", &csrf)]).await;
    assert_eq!(again.status(), StatusCode::CONFLICT);
    let actions = audit_actions(&app);
    for a in ["widget_draft_saved", "widget_published"] {
        assert!(actions.iter().any(|x| x == a), "{a} in {actions:?}");
    }
    let detail: String = app.db().query_row("SELECT detail FROM audit_log WHERE action = 'widget_published'", [], |r| r.get(0)).unwrap();
    assert!(detail.contains("Wann haben Sie geöffnet?") && detail.contains("#aa3300"), "the audit entry holds the values: {detail}");
}

#[tokio::test]
async fn the_draft_is_served_only_with_a_valid_preview_token_of_its_site() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let (other, _) = app.create_site(Tier::Pro).await;
    let (cookie, csrf) = user(&app, "owner@example.com", site.id, SiteRole::Owner).await;
    let path = format!("/console/sites/{}/widget", site.id);
    let saved = post_form(&app, &path, Some(&cookie), Some(&app.base), &form(&csrf, "#117a42", "Draft question?", "", "")).await;
    assert_eq!(saved.status(), StatusCode::SEE_OTHER);

    let token = preview_token(&app, site.id, &cookie).await;
    let shown = config_ok(&app, site.id, "", Some(&token)).await;
    assert_eq!(shown["primaryColor"], "#117a42");
    assert_eq!(shown["suggestedQuestions"]["questions"], serde_json::json!(["Draft question?"]));
    let public = config_ok(&app, site.id, "", None).await;
    assert_ne!(public["primaryColor"], "#117a42", "without a token the draft is not served");
    assert_eq!(public["suggestedQuestions"]["questions"], serde_json::json!([]));

    // The token names its site: another site's config refuses it.
    problem(config(&app, other.id, "", Some(&token)).await, 403, "preview_token_invalid").await;
    // A token of another site, made by the same server (an admin sees both), is refused for this one.
    let admin_link = add_user(&app, "admin@example.com", None).await;
    let set = post_form(&app, &admin_link, None, Some(&app.base), &[("password", PASSWORD), ("repeat", PASSWORD)]).await;
    let admin = session_cookie(set.headers()).unwrap();
    let others = preview_token(&app, other.id, &admin).await;
    problem(config(&app, site.id, "", Some(&others)).await, 403, "preview_token_invalid").await;
    // Expired, altered, or made up: refused.
    let id = site.id;
    let expired =
        app.state.store.run(move |s| Ok(s.site(id).widget().preview_token(Timestamp::from_millis(Timestamp::now().as_millis() - 1000)))).await.unwrap();
    problem(config(&app, site.id, "", Some(&expired)).await, 403, "preview_token_invalid").await;
    let mut altered = token.clone().into_bytes();
    let last = altered.len() - 3;
    altered[last] = if altered[last] == b'A' { b'B' } else { b'A' };
    problem(config(&app, site.id, "", Some(std::str::from_utf8(&altered).unwrap())).await, 403, "preview_token_invalid").await;
    problem(config(&app, site.id, "", Some("not-a-token")).await, 403, "preview_token_invalid").await;
    // The token grants nothing else: it is not a bearer token.
    let query = app.client.post(app.url("/v1/query")).bearer_auth(&token).json(&serde_json::json!({"question": "Hello?"})).send().await.unwrap();
    problem(query, 401, "invalid_token").await;
    // Without a session the preview page makes no token.
    let anonymous = get(&app, &format!("/console/sites/{}/widget/preview", site.id), None).await;
    assert_eq!(anonymous.status(), StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn bad_input_is_refused_with_the_form_kept_and_nothing_saved() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let (cookie, csrf) = user(&app, "owner@example.com", site.id, SiteRole::Owner).await;
    let path = format!("/console/sites/{}/widget", site.id);
    let long = "x".repeat(121);
    let six = "One?\nTwo?\nThree?\nFour?\nFive?\nSix?";
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (form(&csrf, "blue", "Kept question?", "", ""), "not a colour"),
        (form(&csrf, "#12345", "Kept question?", "", ""), "not a colour"),
        (form(&csrf, "#123456", six, "", ""), "at most 5"),
        (form(&csrf, "#123456", &long, "", ""), "longer than 120 characters"),
        (form(&csrf, "#123456", "Kept question?", "", "http://shop.example"), "not an https origin"),
        (form(&csrf, "#123456", "Kept question?", "", "https://shop.example/path"), "no path"),
        (form(&csrf, "#123456", "Kept question?", "", "javascript:alert(1)"), "origin"),
    ];
    for (fields, why) in &cases {
        let resp = post_form(&app, &path, Some(&cookie), Some(&app.base), fields).await;
        assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY, "{why}");
        let page = resp.text().await.unwrap();
        assert!(page.contains("role=\"alert\"") && page.contains(why), "{why}: the reason is on the page");
        let sent = fields.iter().find(|(k, _)| *k == "questions_0").unwrap().1;
        assert!(page.contains(sent.lines().next().unwrap()), "{why}: the form is kept");
    }
    let mut position = form(&csrf, "#123456", "Kept question?", "", "");
    position[2] = ("position", "top-center");
    let resp = post_form(&app, &path, Some(&cookie), Some(&app.base), &position).await;
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let mut lang = form(&csrf, "#123456", "Kept question?", "", "");
    lang[10] = ("lang_2", "<b>");
    lang[12] = ("questions_2", "Une question ?");
    let resp = post_form(&app, &path, Some(&cookie), Some(&app.base), &lang).await;
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let page = resp.text().await.unwrap();
    assert!(page.contains("&#60;b&#62;") && !page.contains("<b>"), "the sent tag is shown as text");
    assert_eq!(app.count("SELECT count(*) FROM site_widgets WHERE draft IS NOT NULL", []), 0, "nothing was saved");
    assert!(!audit_actions(&app).iter().any(|a| a.starts_with("widget_")));
}

#[tokio::test]
async fn viewers_and_editors_have_no_widget_editor_and_their_posts_are_refused() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let (owner, owner_csrf) = user(&app, "owner@example.com", site.id, SiteRole::Owner).await;
    let path = format!("/console/sites/{}/widget", site.id);
    let saved = post_form(&app, &path, Some(&owner), Some(&app.base), &form(&owner_csrf, "#222222", "Owner's question?", "", "")).await;
    assert_eq!(saved.status(), StatusCode::SEE_OTHER);
    let owner_nav = get(&app, &format!("/console/sites/{}", site.id), Some(&owner)).await.text().await.unwrap();
    assert!(owner_nav.contains(&format!("href=\"{path}\"")), "the owner has the Widget tab");

    for (email, role) in [("viewer@example.com", SiteRole::Viewer), ("editor@example.com", SiteRole::Editor)] {
        let (cookie, csrf) = user(&app, email, site.id, role).await;
        let nav = get(&app, &format!("/console/sites/{}", site.id), Some(&cookie)).await.text().await.unwrap();
        assert!(!nav.contains(&format!("href=\"{path}\"")), "{role:?}: no Widget tab");
        assert_eq!(get(&app, &path, Some(&cookie)).await.status(), StatusCode::FORBIDDEN, "{role:?}: the editor page");
        assert_eq!(get(&app, &format!("{path}/preview"), Some(&cookie)).await.status(), StatusCode::FORBIDDEN, "{role:?}: the preview");
        let by_hand = post_form(&app, &path, Some(&cookie), Some(&app.base), &form(&csrf, "#ff0000", "Hijacked?", "", "")).await;
        assert_eq!(by_hand.status(), StatusCode::FORBIDDEN, "{role:?}: saving by hand");
        for action in ["publish", "discard"] {
            let resp = post_form(&app, &format!("{path}/{action}"), Some(&cookie), Some(&app.base), &[("csrf", &csrf)]).await;
            assert_eq!(resp.status(), StatusCode::FORBIDDEN, "{role:?}: {action} by hand");
        }
    }
    // The owner's draft is as it was, unpublished.
    let id = site.id;
    let draft = app.state.store.run(move |s| s.site(id).widget().draft()).await.unwrap().expect("the owner's draft");
    assert_eq!(draft.draft.questions["en"], ["Owner's question?"]);
    assert_eq!(config_ok(&app, site.id, "", None).await["suggestedQuestions"]["questions"], serde_json::json!([]));
    // Without the CSRF token even the owner is refused.
    let forged = post_form(&app, &format!("{path}/publish"), Some(&owner), Some(&app.base), &[("csrf", "forged")]).await;
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    // Discarding is the owner's, and audited.
    let discarded = post_form(&app, &format!("{path}/discard"), Some(&owner), Some(&app.base), &[("csrf", &owner_csrf)]).await;
    assert_eq!(discarded.status(), StatusCode::SEE_OTHER);
    let actions = audit_actions(&app);
    assert_eq!(actions.iter().filter(|a| a.starts_with("widget_")).collect::<Vec<_>>(), ["widget_draft_saved", "widget_draft_discarded"]);
}

/// A visitor's host page on its own origin (loopback), with the widget's one tag, under a CSP that
/// allows scripts and connections to the sitebot origin only (as `browser.rs` serves it).
async fn serve_host(sitebot: String, site_id: String) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let csp = format!("default-src 'none'; script-src {sitebot}; connect-src {sitebot}; style-src 'self'; img-src 'self' data:");
    tokio::spawn(async move {
        loop {
            let Ok((mut conn, _)) = listener.accept().await else { return };
            let (sitebot, site_id, csp) = (sitebot.clone(), site_id.clone(), csp.clone());
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let n = conn.read(&mut buf).await.unwrap_or(0);
                let head = String::from_utf8_lossy(&buf[..n]);
                let path = head.split_whitespace().nth(1).unwrap_or("/");
                let lang = if path.starts_with("/de") { "de" } else { "en" };
                let body = format!(
                    "<!doctype html>\n<html lang=\"{lang}\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
                     <title>Clinic (widget host page)</title><link rel=\"icon\" href=\"data:,\"></head>\
                     <body><main><h1>Clinic</h1><p>A page of the clinic's own site.</p></main>\
                     <script src=\"{sitebot}/v1/widget.js\" data-site-id=\"{site_id}\" async></script></body></html>"
                );
                let resp = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Security-Policy: {csp}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}"
                );
                let _ = conn.write_all(resp.as_bytes()).await;
            });
        }
    });
    addr
}

/// The widget editor in Debian's headless Chromium (`tests/browser/widget_editor.mjs`): an owner changes
/// the colour and the suggested questions, sees them in the preview while a visitor's host page still
/// shows the old ones, publishes, and the host page shows the new ones; pressing a suggested question
/// there asks it and an answer appears. A viewer has no editor. axe-core on every page; screenshots at
/// 1280 and 375 px in `target/widget-editor-screenshots/`.
#[tokio::test]
async fn an_owner_edits_previews_and_publishes_the_widget_in_a_real_browser() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut config = crate::helpers::test_config();
    config.limits.ip_per_minute = 100_000;
    let app = crate::helpers::spawn_app_with(config).await;
    let (site, _) = app.create_site(Tier::Pro).await;
    crate::knowledge::import_files(&app, site.id, &crate::knowledge::clinic()).await;
    // What visitors get before: one published question, in the default colour.
    let (owner, csrf) = user(&app, "owner@example.com", site.id, SiteRole::Owner).await;
    let path = format!("/console/sites/{}/widget", site.id);
    let mut before = form(&csrf, "#0b5fff", "Where is the clinic?", "", "");
    before[2] = ("position", "bottom-right");
    assert_eq!(post_form(&app, &path, Some(&owner), Some(&app.base), &before).await.status(), StatusCode::SEE_OTHER);
    assert_eq!(post_form(&app, &format!("{path}/publish"), Some(&owner), Some(&app.base), &[("csrf", &csrf)]).await.status(), StatusCode::SEE_OTHER);
    let owner_link = add_user(&app, "second-owner@example.com", Some(Grant { site_id: site.id, role: SiteRole::Owner })).await;
    let viewer_link = add_user(&app, "viewer@example.com", Some(Grant { site_id: site.id, role: SiteRole::Viewer })).await;
    let host = serve_host(app.base.clone(), site.id.to_string()).await;
    let shots = root.join("target/widget-editor-screenshots");
    let env = [
        ("SITEBOT_URL", app.base.clone()),
        ("SITE_ID", site.id.to_string()),
        ("OWNER_LINK", app.url(&owner_link)),
        ("VIEWER_LINK", app.url(&viewer_link)),
        ("HOST_URL", format!("http://{host}/")),
        ("OLD_QUESTION", "Where is the clinic?".to_owned()),
        ("NEW_QUESTION", "When is the clinic open?".to_owned()),
        ("SCREENSHOT_DIR", shots.display().to_string()),
    ];
    crate::browser::run_browser_script("widget_editor.mjs", &env, 5).await;
    for page in ["editor", "editor-invalid", "editor-draft", "host-before", "host-after", "host-answered"] {
        for size in ["desktop", "phone"] {
            assert!(shots.join(format!("{size}-{page}.png")).is_file(), "{size}-{page}.png kept");
        }
    }
    let published = config_ok(&app, site.id, "", None).await;
    assert_eq!(published["primaryColor"], "#8a2be2", "{published}");
    let actions = audit_actions(&app);
    assert_eq!(actions.iter().filter(|a| *a == "widget_published").count(), 2, "{actions:?}");
}
