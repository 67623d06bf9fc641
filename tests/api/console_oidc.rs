//! Single sign-on to the console against a real OpenID Connect provider: the certified `oidc-provider`
//! package (tests/oidc/provider.mjs) on loopback, driven without a browser: this test's client follows
//! the redirects and posts the provider's own sign-in and consent forms, as a browser would.

use std::collections::BTreeMap;

use reqwest::StatusCode;
use reqwest::header::{LOCATION, SET_COOKIE};
use sitebot::config::OidcConfig;
use sitebot::domain::{SiteRole, Tier, Timestamp};
use sitebot::secrets::token_hash;
use sitebot::store::users::Grant;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::console::{PASSWORD, add_user, get, post_form, session_cookie};
use crate::helpers::{TestApp, spawn_app_with, test_config};

const CLIENT_ID: &str = "sitebot-console";
const CLIENT_SECRET: &str = "a-test-client-secret-of-some-length";

/// The provider, running until dropped (its standard input closes and `kill_on_drop` ends it).
struct Provider {
    issuer: String,
    _child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl Provider {
    async fn start() -> Provider {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oidc");
        assert!(dir.join("node_modules/oidc-provider").is_dir(), "the single sign-on tests need tests/oidc's npm packages: run ./install.sh --deps-only");
        let mut child = tokio::process::Command::new("node")
            .arg("provider.mjs")
            .current_dir(&dir)
            .env("OIDC_CLIENT_ID", CLIENT_ID)
            .env("OIDC_CLIENT_SECRET", CLIENT_SECRET)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("node runs tests/oidc/provider.mjs");
        let stdin = child.stdin.take().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let port = Self::wait_for(&mut lines, "port ").await;
        Provider { issuer: format!("http://127.0.0.1:{port}"), _child: child, stdin, lines }
    }

    async fn wait_for(lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>, prefix: &str) -> String {
        let read = async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if let Some(rest) = line.strip_prefix(prefix) {
                    return rest.to_owned();
                }
            }
            panic!("the provider ended before printing {prefix:?}");
        };
        tokio::time::timeout(std::time::Duration::from_secs(60), read).await.expect("the provider started in time")
    }

    /// Registers the client with sitebot's redirect URI; the provider answers from then on.
    async fn register(&mut self, app: &TestApp) {
        self.stdin.write_all(format!("{}\n", app.url("/console/oidc/callback")).as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
        Self::wait_for(&mut self.lines, "ready").await;
    }

    fn config(&self) -> OidcConfig {
        OidcConfig {
            issuer: self.issuer.clone(),
            client_id: CLIENT_ID.into(),
            client_secret: Some(serde_json::from_value(serde_json::json!(CLIENT_SECRET)).unwrap()),
            allowed_domains: vec!["corp.example".into()],
            scopes: vec!["email".into(), "groups".into()],
            admin_claim: Some("groups".into()),
            admin_value: Some("sitebot-admins".into()),
            ..OidcConfig::default()
        }
    }
}

/// sitebot with single sign-on through `provider`, and the provider registered with its callback.
async fn spawn(provider: &mut Provider, local_passwords: bool) -> TestApp {
    let mut config = test_config();
    config.console.oidc = Some(provider.config());
    config.console.local_passwords = local_passwords;
    let app = spawn_app_with(config).await;
    provider.register(&app).await;
    app
}

/// A sign-on started at sitebot and carried through the provider's pages as `account`: the callback
/// URL the provider sends the browser back to, and the browser's sign-on cookie.
async fn through_the_provider(app: &TestApp, provider: &Provider, account: &str) -> (String, String) {
    through_the_provider_from(app, provider, account, "/console/oidc/start").await
}

/// As `through_the_provider`, started at `start` (with a site, or a page to return to).
async fn through_the_provider_from(app: &TestApp, provider: &Provider, account: &str, start: &str) -> (String, String) {
    let start = get(app, start, None).await;
    assert_eq!(start.status(), StatusCode::SEE_OTHER);
    let browser = start
        .headers()
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("__Host-sitebot_sso="))
        .map(|v| {
            assert!(v.contains("; Secure") && v.contains("; HttpOnly") && v.contains("; Path=/") && v.contains("Max-Age=600"), "{v}");
            v.split(';').next().unwrap().to_owned()
        })
        .expect("the sign-on cookie");
    let mut url = start.headers()[LOCATION].to_str().unwrap().to_owned();
    assert!(url.starts_with(&format!("{}/auth?", provider.issuer)), "{url}");
    let query: BTreeMap<String, String> = reqwest::Url::parse(&url).unwrap().query_pairs().into_owned().collect();
    assert_eq!(query["code_challenge_method"], "S256");
    assert!(query["scope"].split(' ').any(|s| s == "openid") && query.contains_key("nonce") && query.contains_key("state"), "{query:?}");

    // The provider's pages, with its cookies kept as a browser keeps them (by name; its paths differ).
    let plain = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let mut jar: BTreeMap<String, String> = BTreeMap::new();
    for _ in 0..20 {
        if url.starts_with(&app.base) {
            return (url, browser);
        }
        let cookies = jar.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; ");
        let resp = plain.get(&url).header("Cookie", &cookies).send().await.unwrap();
        let resp = if resp.status() == StatusCode::OK {
            // A sign-in or consent form: filled in and sent as a person would.
            let html = resp.text().await.unwrap();
            let action = html.split("action=\"").nth(1).and_then(|s| s.split('"').next()).expect("a form on the provider's page").replace("&amp;", "&");
            let prompt = html.split("name=\"prompt\" value=\"").nth(1).and_then(|s| s.split('"').next()).expect("the form's prompt").to_owned();
            let form: Vec<(&str, &str)> = match prompt.as_str() {
                "login" => vec![("prompt", "login"), ("login", account), ("password", "any password")],
                _ => vec![("prompt", prompt.as_str())],
            };
            let target = reqwest::Url::parse(&url).unwrap().join(&action).unwrap();
            plain.post(target).header("Cookie", &cookies).form(&form).send().await.unwrap()
        } else {
            resp
        };
        for v in resp.headers().get_all(SET_COOKIE).iter().filter_map(|v| v.to_str().ok()) {
            if let Some((k, v)) = v.split(';').next().and_then(|p| p.split_once('=')) {
                jar.insert(k.to_owned(), v.to_owned());
            }
        }
        assert!(resp.status().is_redirection(), "the provider answered {} at {url}", resp.status());
        let next = resp.headers()[LOCATION].to_str().unwrap().to_owned();
        url = reqwest::Url::parse(&url).unwrap().join(&next).unwrap().to_string();
    }
    panic!("the provider never sent the browser back to sitebot");
}

async fn callback(app: &TestApp, url: &str, browser: Option<&str>) -> reqwest::Response {
    let mut req = app.client.get(url);
    if let Some(c) = browser {
        req = req.header("Cookie", c);
    }
    req.send().await.unwrap()
}

/// Signs `account` on through the provider; the session cookie.
async fn sign_on(app: &TestApp, provider: &Provider, account: &str) -> String {
    let (url, browser) = through_the_provider(app, provider, account).await;
    let resp = callback(app, &url, Some(&browser)).await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER, "{}", resp.text().await.unwrap());
    assert_eq!(resp.headers()[LOCATION], "/console/sites");
    let cleared =
        resp.headers().get_all(SET_COOKIE).iter().filter_map(|v| v.to_str().ok()).any(|v| v.starts_with("__Host-sitebot_sso=;") && v.contains("Max-Age=0"));
    assert!(cleared, "the sign-on cookie is cleared");
    session_cookie(resp.headers()).expect("a session cookie")
}

/// The audit log's (actor, action, detail) rows, oldest first.
fn audit(app: &TestApp) -> Vec<(String, String, serde_json::Value)> {
    let db = app.db();
    let mut stmt = db.prepare("SELECT actor, action, detail FROM audit_log ORDER BY id").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, serde_json::from_str(&r.get::<_, String>(2)?).unwrap()))).unwrap().map(Result::unwrap).collect()
}

fn is_admin(app: &TestApp, email: &str) -> Option<bool> {
    app.db().query_row("SELECT is_admin FROM console_users WHERE email = ?1", [email], |r| r.get(0)).ok()
}

#[tokio::test]
async fn a_user_of_an_allowed_domain_signs_on_with_the_role_the_claim_or_the_console_gives() {
    let mut provider = Provider::start().await;
    let app = spawn(&mut provider, true).await;
    let (site, _) = app.create_site(Tier::Pro).await;
    // An existing user (the provider sends the address in another case), with a role on the site.
    add_user(&app, "eddie.editor@corp.example", Some(Grant { site_id: site.id, role: SiteRole::Editor })).await;

    // The sign-in page offers single sign-on beside the password form.
    let page = get(&app, "/console/login", None).await.text().await.unwrap();
    assert!(page.contains("href=\"/console/oidc/start\"") && page.contains("Sign in with single sign-on") && page.contains("name=\"password\""), "{page}");
    // Opened for a site (#27: a balancer routes by it), both ways keep the site.
    let page = get(&app, &format!("/console/login?site={}", site.id), None).await.text().await.unwrap();
    assert!(
        page.contains(&format!("href=\"/console/oidc/start?site={}\"", site.id)) && page.contains(&format!("action=\"/console/login?site={}\"", site.id)),
        "{page}"
    );

    // The admin claim (groups contains sitebot-admins): a new user, an admin, who sees every site.
    let cookie = sign_on(&app, &provider, "admin").await;
    let sites = get(&app, "/console/sites", Some(&cookie)).await.text().await.unwrap();
    assert!(sites.contains(&site.id.to_string()) && sites.contains(">admin<"), "{sites}");
    assert_eq!(is_admin(&app, "ada.admin@corp.example"), Some(true));

    // The existing editor keeps the role the console gave; the provider does not make them an admin.
    let cookie = sign_on(&app, &provider, "editor").await;
    let sites = get(&app, "/console/sites", Some(&cookie)).await.text().await.unwrap();
    assert!(sites.contains(&site.id.to_string()) && sites.contains(">editor<"), "{sites}");
    assert_eq!(is_admin(&app, "eddie.editor@corp.example"), Some(false));
    assert_eq!(app.count("SELECT count(*) FROM console_users WHERE email = 'eddie.editor@corp.example' COLLATE NOCASE", []), 1);
    // An editor's page of the site opens (the same session as a password sign-in).
    let queue = get(&app, &format!("/console/sites/{}", site.id), Some(&cookie)).await;
    assert_eq!(queue.status(), StatusCode::OK);
    // Sent to sign in from a page of the site, the editor signs on and lands on that page.
    let asked = format!("/console/sites/{}/leads", site.id);
    let login = get(&app, &asked, None).await.headers()[LOCATION].to_str().unwrap().to_owned();
    let page = get(&app, &login, None).await.text().await.unwrap();
    let start = format!("/console/oidc/start?site={}&next=%2Fconsole%2Fsites%2F{}%2Fleads", site.id, site.id);
    assert!(page.contains(&format!("href=\"{}\"", start.replace('&', "&#38;"))), "{page}");
    let (url, browser) = through_the_provider_from(&app, &provider, "editor", &start).await;
    let landed = callback(&app, &url, Some(&browser)).await;
    assert_eq!((landed.status(), landed.headers()[LOCATION].to_str().unwrap()), (StatusCode::SEE_OTHER, asked.as_str()));
    let cookie = session_cookie(landed.headers()).expect("a session cookie");
    assert_eq!(get(&app, &asked, Some(&cookie)).await.status(), StatusCode::OK);

    // Someone new of the domain: added with no site roles, signed in, and sees none.
    let cookie = sign_on(&app, &provider, "newcomer").await;
    let sites = get(&app, "/console/sites", Some(&cookie)).await.text().await.unwrap();
    assert!(!sites.contains(&site.id.to_string()) && sites.contains("You have no sites yet"), "{sites}");
    assert_eq!(is_admin(&app, "nina.new@corp.example"), Some(false));
    assert_eq!(app.count("SELECT count(*) FROM console_grants g JOIN console_users u ON u.id = g.user_id WHERE u.email = 'nina.new@corp.example'", []), 0);

    // Audited: who was added, and each sign-in with its method.
    let log = audit(&app);
    let logins: Vec<&str> = log.iter().filter(|(_, a, d)| a == "login" && d["method"] == "oidc").map(|(actor, _, _)| actor.as_str()).collect();
    assert_eq!(logins, ["ada.admin@corp.example", "eddie.editor@corp.example", "eddie.editor@corp.example", "nina.new@corp.example"]);
    let added: Vec<(String, bool)> = log
        .iter()
        .filter(|(_, a, d)| a == "user_added" && d["via"] == "oidc")
        .map(|(_, _, d)| (d["user"].as_str().unwrap().to_owned(), d["admin"].as_bool().unwrap()))
        .collect();
    assert_eq!(added, [("ada.admin@corp.example".to_owned(), true), ("nina.new@corp.example".to_owned(), false)]);
}

#[tokio::test]
async fn another_domain_or_an_unverified_address_does_not_get_in_and_is_audited() {
    let mut provider = Provider::start().await;
    let app = spawn(&mut provider, true).await;
    app.create_site(Tier::Pro).await;

    for (account, email, reason, says) in [
        ("outsider", "olga@elsewhere.example", "domain", "not of a domain that may sign in"),
        ("unverified", "ursula@corp.example", "unverified", "has not verified your e-mail address"),
    ] {
        let (url, browser) = through_the_provider(&app, &provider, account).await;
        let resp = callback(&app, &url, Some(&browser)).await;
        assert_eq!(resp.status(), StatusCode::FORBIDDEN, "{account}");
        assert!(session_cookie(resp.headers()).is_none(), "{account}");
        assert!(resp.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
        let page = resp.text().await.unwrap();
        assert!(page.contains("Not signed in") && page.contains(says), "{page}");
        // Neither is added, though both carry the admin group.
        assert_eq!(is_admin(&app, email), None, "{account}");
        let log = audit(&app);
        let (actor, action, detail) = log.last().unwrap();
        assert_eq!(
            (actor.as_str(), action.as_str(), detail["method"].as_str(), detail["reason"].as_str()),
            (email, "login_failed", Some("oidc"), Some(reason))
        );
    }
    assert_eq!(app.count("SELECT count(*) FROM console_users", []), 0);
    assert_eq!(app.count("SELECT count(*) FROM console_sessions", []), 0);
}

#[tokio::test]
async fn a_forged_replayed_or_foreign_state_is_refused() {
    let mut provider = Provider::start().await;
    let app = spawn(&mut provider, true).await;

    let (url, browser) = through_the_provider(&app, &provider, "editor").await;
    let mut forged = reqwest::Url::parse(&url).unwrap();
    let pairs: Vec<(String, String)> =
        forged.query_pairs().into_owned().map(|(k, v)| if k == "state" { (k, "forged-state-value".to_owned()) } else { (k, v) }).collect();
    forged.query_pairs_mut().clear().extend_pairs(pairs);
    let refused = callback(&app, forged.as_str(), Some(&browser)).await;
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    assert!(session_cookie(refused.headers()).is_none());
    assert!(refused.text().await.unwrap().contains("This sign-in has expired, was already used or was started in another browser"));

    // The real answer still signs in, once: the same callback again is refused.
    let first = callback(&app, &url, Some(&browser)).await;
    assert_eq!(first.status(), StatusCode::SEE_OTHER);
    assert!(session_cookie(first.headers()).is_some());
    let replayed = callback(&app, &url, Some(&browser)).await;
    assert_eq!(replayed.status(), StatusCode::BAD_REQUEST);
    assert!(session_cookie(replayed.headers()).is_none());

    // A callback carried to another browser (without the cookie that started it) is refused, and the
    // sign-on is used up by the attempt.
    let (url, browser) = through_the_provider(&app, &provider, "editor").await;
    let foreign = callback(&app, &url, None).await;
    assert_eq!(foreign.status(), StatusCode::BAD_REQUEST);
    let other_cookie = callback(&app, &url, Some("__Host-sitebot_sso=another-browsers-value")).await;
    assert_eq!(other_cookie.status(), StatusCode::BAD_REQUEST);
    let late = callback(&app, &url, Some(&browser)).await;
    assert_eq!(late.status(), StatusCode::BAD_REQUEST);
    assert_eq!(app.count("SELECT count(*) FROM console_sessions", []), 1);
    let reasons = audit(&app).into_iter().filter(|(_, a, d)| a == "login_failed" && d["reason"] == "state").count();
    assert_eq!(reasons, 5);
}

#[tokio::test]
async fn with_local_passwords_off_only_single_sign_on_signs_in() {
    let mut provider = Provider::start().await;
    let app = spawn(&mut provider, false).await;
    let (site, _) = app.create_site(Tier::Pro).await;
    // A user who has a password from before it was switched off.
    let link = add_user(&app, "eddie.editor@corp.example", Some(Grant { site_id: site.id, role: SiteRole::Owner })).await;
    let token = link.rsplit('/').next().unwrap().to_owned();
    let phc = sitebot::console::auth::hash_password(PASSWORD);
    app.state.store.run(move |s| s.users().use_link(&token_hash(&token), Timestamp::now(), &phc)).await.unwrap();

    // The sign-in page has no password form, only the single sign-on button.
    let page = get(&app, "/console/login", None).await;
    assert_eq!(page.status(), StatusCode::OK);
    let page = page.text().await.unwrap();
    assert!(page.contains("href=\"/console/oidc/start\"") && !page.contains("name=\"password\"") && !page.contains("action=\"/console/login\""), "{page}");

    // A password sent by hand, right as it is, is refused with a readable page.
    let resp = post_form(&app, "/console/login", None, Some(&app.base), &[("email", "eddie.editor@corp.example"), ("password", PASSWORD)]).await;
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    assert!(session_cookie(resp.headers()).is_none());
    assert!(resp.text().await.unwrap().contains("Sign-in with a password is off"));
    // So are setup links, read or sent.
    let link = add_user(&app, "new.owner@corp.example", Some(Grant { site_id: site.id, role: SiteRole::Owner })).await;
    let read = get(&app, &link, None).await;
    assert_eq!(read.status(), StatusCode::FORBIDDEN);
    assert!(read.text().await.unwrap().contains("single sign-on only"));
    let sent = post_form(&app, &link, None, Some(&app.base), &[("password", PASSWORD), ("repeat", PASSWORD)]).await;
    assert_eq!(sent.status(), StatusCode::FORBIDDEN);
    assert!(session_cookie(sent.headers()).is_none());
    assert_eq!(app.count("SELECT count(*) FROM console_users WHERE password_hash IS NOT NULL", []), 1);

    // Single sign-on still signs the owner in.
    let cookie = sign_on(&app, &provider, "editor").await;
    let sites = get(&app, "/console/sites", Some(&cookie)).await.text().await.unwrap();
    assert!(sites.contains(&site.id.to_string()) && sites.contains(">owner<"), "{sites}");
}

#[tokio::test]
async fn one_client_cannot_start_more_than_its_share_of_sign_ons() {
    let mut provider = Provider::start().await;
    let app = spawn(&mut provider, true).await;
    for _ in 0..50 {
        assert_eq!(get(&app, "/console/oidc/start", None).await.status(), StatusCode::SEE_OTHER);
    }
    let refused = get(&app, "/console/oidc/start", None).await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(refused.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    assert!(refused.text().await.unwrap().contains("Too many sign-ins were started from your network"));
    // Another client still starts one.
    let other = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(&app.cert_pem).unwrap())
        .local_address("127.0.0.2".parse::<std::net::IpAddr>().unwrap())
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    assert_eq!(other.get(app.url("/console/oidc/start")).send().await.unwrap().status(), StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn a_provider_that_cannot_be_reached_is_a_readable_page() {
    // A loopback port nobody listens on.
    let (_refusing, port) = crate::helpers::held_port();
    let mut config = test_config();
    let oidc = OidcConfig {
        issuer: format!("http://127.0.0.1:{port}"),
        client_id: CLIENT_ID.into(),
        allowed_domains: vec!["corp.example".into()],
        ..OidcConfig::default()
    };
    config.console.oidc = Some(oidc);
    let app = spawn_app_with(config).await;
    let resp = get(&app, "/console/oidc/start", None).await;
    assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(resp.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    let page = resp.text().await.unwrap();
    assert!(page.contains("The identity provider cannot be reached") && !page.contains("127.0.0.1"), "{page}");
    // Without [console.oidc] there is no single sign-on to start.
    let plain = spawn_app_with(test_config()).await;
    assert_eq!(get(&plain, "/console/oidc/start", None).await.status(), StatusCode::NOT_FOUND);
    assert!(!get(&plain, "/console/login", None).await.text().await.unwrap().contains("/console/oidc/start"));
}

/// The sign-in page with single sign-on configured, in Debian's headless Chromium (`tests/browser/sso_login.mjs`):
/// the button beside the password form, in English and German, axe-core clean, screenshots kept in
/// `target/sso-screenshots/`. The provider is not reached (discovery waits for the button's first use).
#[tokio::test]
async fn the_sign_in_page_with_single_sign_on_works_in_a_real_browser() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut config = test_config();
    config.console.oidc = Some(OidcConfig {
        issuer: format!("http://127.0.0.1:{port}"),
        client_id: CLIENT_ID.into(),
        allowed_domains: vec!["corp.example".into()],
        ..OidcConfig::default()
    });
    let app = spawn_app_with(config).await;
    let shots = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/sso-screenshots");
    let env = [("SITEBOT_URL", app.base.clone()), ("SCREENSHOT_DIR", shots.display().to_string())];
    crate::browser::run_browser_script("sso_login.mjs", &env, 3).await;
    for name in ["sso-login", "sso-login-de"] {
        assert!(shots.join(format!("desktop-{name}.png")).is_file() && shots.join(format!("phone-{name}.png")).is_file(), "{name}");
    }
}
