//! The widget in a real browser: Debian's headless Chromium, driven by `tests/browser/widget.mjs`
//! (playwright-core; `install.sh --deps-only` installs both, never a downloaded browser), against the
//! real server with the clinic's knowledge, embedded in a host page served from another origin with a
//! strict Content-Security-Policy. The script checks what a visitor sees (answer with working citation
//! links, a follow-up in context, feedback, the contact form, German texts, axe-core WCAG 2 A/AA, the
//! phone viewport, no script error); this test then checks that the contact form's lead reached the
//! CRM receiver signed, with the conversation's transcript. Screenshots go to
//! `target/widget-screenshots/`. Live hand-off with two browsers, a visitor and a staff member
//! (`tests/browser/handoff.mjs`), keeps its screenshots in `target/handoff-screenshots/`.

use std::net::SocketAddr;

use sitebot::domain::Tier;
use standardwebhooks::Webhook;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::helpers::{new_site, spawn_app_with_worker, with_webhook};
use crate::knowledge::{clinic, import_files};
use crate::receiver::Receiver;

/// The host page: a site's own page with the widget's one tag, on its own origin, under a CSP that
/// allows scripts and connections to the sitebot origin only and styles from itself only.
fn host_page(sitebot: &str, site_id: &str, lang: &str, data_lang: Option<&str>) -> String {
    let data_lang = data_lang.filter(|l| l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')).map(|l| format!(" data-lang=\"{l}\"")).unwrap_or_default();
    format!(
        "<!doctype html>\n<html lang=\"{lang}\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>Clinic (widget host page)</title><link rel=\"icon\" href=\"data:,\"><link rel=\"stylesheet\" href=\"/host.css\"></head>\
         <body><main><h1>Clinic</h1><p>A host page with its own styles.</p><p><button type=\"button\">A host page button</button></p></main>\
         <script src=\"{sitebot}/v1/widget.js\"{data_lang} data-site-id=\"{site_id}\" async></script></body></html>"
    )
}

const HOST_CSS: &str = "body{font:30px/3 Georgia,serif;color:rgb(200,0,0);text-transform:uppercase}button{background:rgb(255,0,255)}div{border:3px solid lime}";

/// A minimal HTTP/1.1 server for the host page (`/`, `/de`, `?dataLang=xx`, `/host.css`), one request
/// per connection.
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
                let target = head.split_whitespace().nth(1).unwrap_or("/");
                let (path, query) = target.split_once('?').unwrap_or((target, ""));
                let data_lang = query.strip_prefix("dataLang=");
                let (status, ctype, body) = match path {
                    "/host.css" => ("200 OK", "text/css; charset=utf-8", HOST_CSS.to_owned()),
                    "/" => ("200 OK", "text/html; charset=utf-8", host_page(&sitebot, &site_id, "en", data_lang)),
                    "/de" => ("200 OK", "text/html; charset=utf-8", host_page(&sitebot, &site_id, "de", data_lang)),
                    _ => ("404 Not Found", "text/plain", "not found".to_owned()),
                };
                // No Content-Length: the body ends when the connection closes, so the script's rewrites of
                // the page (data-lang variants) need no length of their own.
                let resp = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Security-Policy: {csp}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}"
                );
                let _ = conn.write_all(resp.as_bytes()).await;
            });
        }
    });
    addr
}

/// Runs `tests/browser/{script}` with Node against the test server (`env` beside it) and returns what it
/// printed, once it has passed every check within `minutes`. Debian's chromium and tests/browser's npm
/// packages must be there (`./install.sh --deps-only`).
pub(crate) async fn run_browser_script(script: &str, env: &[(&str, String)], minutes: u64) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    assert!(
        root.join("tests/browser/node_modules/playwright-core").is_dir() && std::path::Path::new("/usr/bin/chromium").exists(),
        "the browser test needs Debian's chromium and tests/browser's npm packages: run ./install.sh --deps-only"
    );
    let mut cmd = tokio::process::Command::new("node");
    cmd.arg(root.join("tests/browser").join(script)).current_dir(root.join("tests/browser")).kill_on_drop(true);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = tokio::time::timeout(std::time::Duration::from_secs(minutes * 60), cmd.output()).await.expect("the browser test finished in time").unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    println!("{stdout}");
    assert!(out.status.success(), "{script} failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.lines().any(|l| l.ends_with(" passed, 0 failed")), "{stdout}");
    stdout
}

#[tokio::test]
async fn the_widget_works_in_a_real_browser_under_a_strict_csp() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let rx = Receiver::start().await;
    // The test server's rate-limit clock stands still (tests advance it by hand), and a browser session
    // of some hundred requests and preflights would drain the default per-IP bucket: not what this tests.
    let mut config = crate::webhooks::webhook_config();
    config.limits.ip_per_minute = 100_000;
    let app = spawn_app_with_worker(config).await;
    let (site, creds) = app.create_site_with(with_webhook(new_site(Tier::Enterprise), &rx.url("/crm"))).await;
    import_files(&app, site.id, &clinic()).await;
    let host = serve_host(app.base.clone(), site.id.to_string()).await;
    let shots = root.join("target/widget-screenshots");
    let env = [
        ("SITEBOT_URL", app.base.clone()),
        ("SITE_ID", site.id.to_string()),
        ("HOST_URL", format!("http://{host}/")),
        ("HOST_URL_DE", format!("http://{host}/de")),
        ("SCREENSHOT_DIR", shots.display().to_string()),
        ("QUESTION", "When is the clinic open?".to_owned()),
        ("FOLLOWUP", "And on Saturdays?".to_owned()),
    ];
    run_browser_script("widget.mjs", &env, 4).await;
    assert!(shots.join("desktop-answered.png").is_file(), "the answered panel was kept as a screenshot");

    // The contact form's lead reached the CRM signed, with the visitor's conversation.
    let leads = rx.wait_until(std::time::Duration::from_secs(15), "a lead.captured with a transcript", |all| {
        all.iter().any(|r| r.json()["type"] == "lead.captured" && r.json()["data"]["transcript"].is_array())
    });
    let leads = leads.await;
    let lead = leads.iter().find(|r| r.json()["data"]["transcript"].is_array()).unwrap();
    Webhook::new(creds.webhook_secret.as_deref().unwrap()).unwrap().verify(&lead.body, &lead.headers).expect("the lead is signed");
    let transcript = lead.json()["data"]["transcript"].as_array().unwrap().clone();
    assert!(transcript.iter().any(|t| t["role"] == "user"), "{transcript:?}");
}

/// A setup link for a new console user, made as `sitebot user add` makes it.
async fn setup_link(app: &crate::helpers::TestApp, email: &str, grant: Option<sitebot::store::users::Grant>) -> String {
    let token = sitebot::secrets::new_url_token();
    let (hash, expires) =
        (sitebot::secrets::token_hash(&token), sitebot::domain::Timestamp::from_millis(sitebot::domain::Timestamp::now().as_millis() + 86_400_000));
    let email = sitebot::domain::Email::parse(email).unwrap();
    let admin = grant.is_none();
    app.state.store.run(move |s| s.users().add(&email, admin, grant, &hash, expires)).await.unwrap();
    app.url(&format!("/console/setup/{token}"))
}

/// The console in Debian's headless Chromium (`tests/browser/console.mjs`): an owner sets a password
/// through the setup link, sees only their site (another site's page by URL is 404), finds the card
/// questions asked through `/v1/query` as one group beside a hostile question shown as text, writes the
/// answer, signs out and in; a lead its CRM refused once shows both delivery attempts; a viewer reads in
/// German, has no write control, and a write by hand is 403;
/// axe-core finds nothing serious on any page; screenshots at 1280x800 and 375x667 go to
/// `target/console-screenshots/`. Then the next visitor's question gets the owner's answer.
#[tokio::test]
async fn the_console_works_in_a_real_browser() {
    use sitebot::domain::SiteRole;
    use sitebot::store::users::Grant;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    // The site's CRM refuses the lead once, then takes it: the lead's page lists both attempts.
    let rx = Receiver::start().await;
    rx.script([crate::receiver::Reply::Status(500)]);
    let mut config = crate::webhooks::webhook_config();
    config.limits.ip_per_minute = 100_000;
    let app = spawn_app_with_worker(config).await;
    let (site, _) = app.create_site_with(with_webhook(new_site(Tier::Pro), &rx.url("/crm"))).await;
    let (other, _) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;
    let lead = app
        .client
        .post(app.url("/v1/leads"))
        .header("X-Site-Id", site.id.to_string())
        .json(&serde_json::json!({
            "email": "ada@example.com",
            "name": "<script>window.__xss=1</script>",
            "message": "Call me <b>now</b>",
            // A valid http(s) URL is stored as sent: the lead's page shows and links it without running it.
            "pageUrl": "https://clinic.example/prices?from=\"><script>window.__xss=1</script><img src=x onerror=window.__xss=1>"
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(lead.status(), 202);
    // Before any question, whose events go to the same receiver: the refusal is the lead's.
    rx.wait_until(std::time::Duration::from_secs(30), "the lead refused once, then delivered", |r| r.len() >= 2).await;
    for q in ["Do you accept credit cards?", "Can I pay by credit card?", "Is payment by credit card possible?", "<img src=x onerror=window.__xss=1>"] {
        let a = crate::knowledge::ask_ok(&app, site.id, q).await;
        assert_eq!(a["resolved"], false, "{q}: {a}");
    }
    let owner = setup_link(&app, "owner@example.com", Some(Grant { site_id: site.id, role: SiteRole::Owner })).await;
    let viewer = setup_link(&app, "viewer@example.com", Some(Grant { site_id: site.id, role: SiteRole::Viewer })).await;
    let answer = "Yes, we accept all major credit cards and debit cards.";
    let shots = root.join("target/console-screenshots");
    let env = [
        ("SITEBOT_URL", app.base.clone()),
        ("SITE_ID", site.id.to_string()),
        ("OTHER_SITE_ID", other.id.to_string()),
        ("OWNER_LINK", owner),
        ("OWNER_EMAIL", "owner@example.com".to_owned()),
        ("VIEWER_LINK", viewer),
        ("ANSWER", answer.to_owned()),
        ("SCREENSHOT_DIR", shots.display().to_string()),
    ];
    run_browser_script("console.mjs", &env, 4).await;
    for page in ["setup", "sites", "review-queue", "group", "dashboard", "conversations", "conversation", "leads", "lead", "audit", "login", "group-viewer-de"]
    {
        for size in ["desktop", "phone"] {
            assert!(shots.join(format!("{size}-{page}.png")).is_file(), "{size}-{page}.png kept");
        }
    }
    let next = crate::knowledge::ask_ok(&app, site.id, "Do you accept credit cards?").await;
    assert_eq!(next["resolved"], true, "{next}");
    assert!(next["answer"].as_str().unwrap().starts_with(answer), "{next}");
    let actions: Vec<String> = {
        let db = app.db();
        let mut stmt = db.prepare("SELECT action FROM audit_log ORDER BY id").unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    };
    for a in ["password_set", "curated_added", "logout", "login_failed"] {
        assert!(actions.iter().any(|x| x == a), "{a} in {actions:?}");
    }
}

/// Live hand-off with two Chromium contexts (`tests/browser/handoff.mjs`): a visitor on a host page and a
/// staff member in the console's inbox. The visitor asks for a person, Ada takes over and replies (a
/// hostile reply shown as text), the visitor's next message reaches the console and not the assistant,
/// a reload and a dropped connection show nothing twice, and after "hand back" the assistant answers
/// again. On a second site nobody is online at first (the contact form opens at once), the visitor
/// cancels a wait, then nobody takes the conversation within its 3 s wait: the contact form opens by
/// itself, and its lead (checked here, signed, from the CRM receiver) carries the whole transcript with
/// the visitor's message to the person. The owner's settings page is checked too (a wrong value, a save).
/// axe-core runs on the inbox and on each widget state; screenshots go to `target/handoff-screenshots/`.
#[tokio::test]
async fn hand_off_works_in_two_real_browsers() {
    use sitebot::domain::SiteRole;
    use sitebot::store::SiteUpdate;
    use sitebot::store::users::Grant;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let rx = Receiver::start().await;
    let mut config = crate::webhooks::webhook_config();
    config.limits.ip_per_minute = 100_000;
    let app = spawn_app_with_worker(config).await;
    let (open, _) = app.create_site(Tier::Enterprise).await;
    let (missed, creds) = app.create_site_with(with_webhook(new_site(Tier::Enterprise), &rx.url("/crm"))).await;
    for (site, wait) in [(open.id, 120), (missed.id, 3)] {
        import_files(&app, site, &clinic()).await;
        let up = SiteUpdate { handoff: Some(true), handoff_wait_secs: Some(wait), ..Default::default() };
        app.state.store.run(move |s| s.site(site).update(up)).await.unwrap();
    }
    let link = setup_link(&app, "ada@example.com", Some(Grant { site_id: open.id, role: SiteRole::Editor })).await;
    let second = missed.id;
    app.state
        .store
        .run(move |s| {
            let ada = s.users().by_email("ada@example.com")?.expect("Ada was added").id;
            s.users().set_display_name(&ada, "Ada")?;
            s.users().grant(&ada, Grant { site_id: second, role: SiteRole::Owner })
        })
        .await
        .unwrap();
    let host = serve_host(app.base.clone(), open.id.to_string()).await;
    let host_missed = serve_host(app.base.clone(), missed.id.to_string()).await;
    let shots = root.join("target/handoff-screenshots");
    let env = [
        ("SITEBOT_URL", app.base.clone()),
        ("SITE_ID", open.id.to_string()),
        ("HOST_URL", format!("http://{host}/")),
        ("MISSED_SITE_ID", missed.id.to_string()),
        ("MISSED_HOST_URL", format!("http://{host_missed}/")),
        ("STAFF_LINK", link),
        ("SCREENSHOT_DIR", shots.display().to_string()),
    ];
    run_browser_script("handoff.mjs", &env, 5).await;
    for shot in [
        "visitor-waiting", "visitor-held", "visitor-handed-back", "visitor-missed-form", "phone-visitor-held", "staff-inbox-waiting", "staff-inbox-held",
        "phone-staff-inbox-held", "staff-settings", "phone-staff-settings",
    ] {
        assert!(shots.join(format!("{shot}.png")).is_file(), "{shot}.png kept");
    }

    // The contact form after the missed wait: its lead reached the CRM signed, with everything said,
    // the visitor's message to the person who never came included.
    let leads = rx.wait_until(std::time::Duration::from_secs(15), "a lead.captured", |all| all.iter().any(|r| r.json()["type"] == "lead.captured"));
    let leads = leads.await;
    let lead = leads.iter().find(|r| r.json()["type"] == "lead.captured").unwrap();
    Webhook::new(creds.webhook_secret.as_deref().unwrap()).unwrap().verify(&lead.body, &lead.headers).expect("the lead is signed");
    let data = lead.json()["data"].clone();
    assert_eq!(data["email"], "late@example.com", "{data}");
    let turns = data["transcript"].as_array().expect("the lead carries the transcript").clone();
    let said = |role: &str, text: &str| turns.iter().any(|t| t["role"] == role && t["text"].as_str().is_some_and(|x| x.contains(text)));
    assert!(said("user", "Do you repair bicycles?") && said("assistant", ""), "{turns:?}");
    assert!(said("user", "Please call me back, my tooth hurts"), "the message written while waiting: {turns:?}");
}
