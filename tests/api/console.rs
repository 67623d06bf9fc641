//! The console over the real server: setup links, sign-in, sessions, CSRF, throttling, headers, audit.

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, SET_COOKIE};
use sitebot::domain::{Email, SiteId, SiteRole, Tier, Timestamp};
use sitebot::secrets::{new_url_token, token_hash};
use sitebot::store::users::Grant;

use crate::helpers::{TestApp, spawn_app};

pub const PASSWORD: &str = "a long enough passphrase";

/// Adds a user as `sitebot user add` does; returns the setup link's path.
pub async fn add_user(app: &TestApp, email: &str, grant: Option<Grant>) -> String {
    let token = new_url_token();
    let (hash, expires) = (token_hash(&token), Timestamp::from_millis(Timestamp::now().as_millis() + 86_400_000));
    let email = Email::parse(email).unwrap();
    let admin = grant.is_none();
    app.state.store.run(move |s| s.users().add(&email, admin, grant, &hash, expires)).await.unwrap();
    format!("/console/setup/{token}")
}

/// `owner@example.com`, the site's owner, with the password `PASSWORD` set through their setup link.
pub async fn owner_with_password(app: &TestApp, site: SiteId) {
    let link = add_user(app, "owner@example.com", Some(Grant { site_id: site, role: SiteRole::Owner })).await;
    let set = post_form(app, &link, None, Some(&origin(app)), &[("password", PASSWORD), ("repeat", PASSWORD)]).await;
    assert_eq!(set.status(), StatusCode::SEE_OTHER, "the owner's password was not set");
}

/// Where a redirect sends the browser.
pub fn location(r: &reqwest::Response) -> String {
    r.headers()["location"].to_str().unwrap().to_owned()
}

/// The session cookie a response sets (`name=value`).
pub fn session_cookie(headers: &HeaderMap) -> Option<String> {
    headers.get_all(SET_COOKIE).iter().filter_map(|v| v.to_str().ok()).find(|v| v.starts_with("__Host-sitebot_session=")).map(|v| {
        assert!(v.contains("; Secure") && v.contains("; HttpOnly") && v.contains("; SameSite=Lax") && v.contains("; Path=/"), "{v}");
        v.split(';').next().unwrap().to_owned()
    })
}

fn origin(app: &TestApp) -> String {
    app.base.clone()
}

pub async fn post_form(app: &TestApp, path: &str, cookie: Option<&str>, origin: Option<&str>, form: &[(&str, &str)]) -> reqwest::Response {
    let mut req = app.client.post(app.url(path)).form(form);
    if let Some(c) = cookie {
        req = req.header("Cookie", c);
    }
    if let Some(o) = origin {
        req = req.header("Origin", o);
    }
    req.send().await.unwrap()
}

pub async fn get(app: &TestApp, path: &str, cookie: Option<&str>) -> reqwest::Response {
    let mut req = app.client.get(app.url(path));
    if let Some(c) = cookie {
        req = req.header("Cookie", c);
    }
    req.send().await.unwrap()
}

/// Signs in; returns the session cookie.
async fn sign_in(app: &TestApp, email: &str, password: &str) -> String {
    let resp = post_form(app, "/console/login", None, Some(&origin(app)), &[("email", email), ("password", password)]).await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER, "{}", resp.text().await.unwrap());
    session_cookie(resp.headers()).expect("a session cookie")
}

/// The CSRF token of a page (the sign-out form holds it).
pub async fn csrf_of(app: &TestApp, cookie: &str) -> String {
    let page = get(app, "/console/sites", Some(cookie)).await.text().await.unwrap();
    let at = page.find("name=\"csrf\" value=\"").expect("a CSRF field") + "name=\"csrf\" value=\"".len();
    page[at..].split('"').next().unwrap().to_owned()
}

pub fn audit_actions(app: &TestApp) -> Vec<String> {
    let db = app.db();
    let mut stmt = db.prepare("SELECT action FROM audit_log ORDER BY id").unwrap();
    stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

#[tokio::test]
async fn a_setup_link_sets_the_password_once_and_signs_the_user_in() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let link = add_user(&app, "owner@example.com", Some(Grant { site_id: site.id, role: SiteRole::Owner })).await;

    let page = get(&app, &link, None).await;
    assert_eq!(page.status(), StatusCode::OK);
    let csp = page.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(csp.contains("frame-ancestors 'none'") && !csp.contains("unsafe-inline"), "{csp}");
    assert_eq!(page.headers()["referrer-policy"], "same-origin");
    assert_eq!(page.headers()["x-content-type-options"], "nosniff");
    assert_eq!(page.headers()["cache-control"], "no-store");
    assert!(page.text().await.unwrap().contains("owner@example.com"));

    // Too short, then two that differ: refused with the reason, the link still works.
    let short = post_form(&app, &link, None, Some(&origin(&app)), &[("password", "short"), ("repeat", "short")]).await;
    assert_eq!(short.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(short.text().await.unwrap().contains("at least 12 characters"));
    let differ = post_form(&app, &link, None, Some(&origin(&app)), &[("password", PASSWORD), ("repeat", "another long passphrase")]).await;
    assert_eq!(differ.status(), StatusCode::UNPROCESSABLE_ENTITY);
    // From another origin: refused before anything happens.
    let foreign = post_form(&app, &link, None, Some("https://evil.example"), &[("password", PASSWORD), ("repeat", PASSWORD)]).await;
    assert_eq!(foreign.status(), StatusCode::FORBIDDEN);

    let set = post_form(&app, &link, None, Some(&origin(&app)), &[("password", PASSWORD), ("repeat", PASSWORD)]).await;
    assert_eq!(set.status(), StatusCode::SEE_OTHER);
    let cookie = session_cookie(set.headers()).expect("signed in at once");
    let sites = get(&app, "/console/sites", Some(&cookie)).await;
    assert_eq!(sites.status(), StatusCode::OK);
    assert!(sites.text().await.unwrap().contains(&site.id.to_string()));
    // Single use.
    let again = get(&app, &link, None).await;
    assert_eq!(again.status(), StatusCode::NOT_FOUND);
    assert!(again.text().await.unwrap().contains("does not work"));
    let stored: String = app.db().query_row("SELECT password_hash FROM console_users", [], |r| r.get(0)).unwrap();
    assert!(stored.starts_with("$argon2id$") && !stored.contains(PASSWORD));
    assert_eq!(audit_actions(&app), ["password_set", "login"]);
}

#[tokio::test]
async fn a_sign_in_for_a_site_keeps_the_site_for_a_balancer_and_drops_a_malformed_one() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let id = site.id.to_string();
    let link = add_user(&app, "owner@example.com", Some(Grant { site_id: site.id, role: SiteRole::Owner })).await;
    let to_sign_in = format!("/console/login?site={id}");

    // Without a session, a site's page, a form posted to it, and a page that names the site in `?site=`
    // send the browser to the sign-in page for that site.
    // (A page asked for is also the one to return to: `a_sign_in_returns_to_the_page_asked_for...`.)
    let page = get(&app, &format!("/console/sites/{id}/leads"), None).await;
    assert_eq!((page.status(), location(&page)), (StatusCode::SEE_OTHER, format!("{to_sign_in}&next=%2Fconsole%2Fsites%2F{id}%2Fleads")));
    let posted = post_form(&app, &format!("/console/sites/{id}/settings"), None, Some(&origin(&app)), &[]).await;
    assert_eq!((posted.status(), location(&posted)), (StatusCode::SEE_OTHER, to_sign_in.clone()));
    let page = get(&app, &format!("/console/?site={id}"), None).await;
    assert_eq!((page.status(), location(&page)), (StatusCode::SEE_OTHER, to_sign_in.clone()));
    let upper = id.to_uppercase();
    let page = get(&app, &format!("/console/account?site={upper}"), None).await;
    assert_eq!((page.status(), location(&page)), (StatusCode::SEE_OTHER, format!("{to_sign_in}&next=%2Fconsole%2Faccount%3Fsite%3D{upper}")));
    // The sign-in page and the setup page keep it on their forms.
    let page = get(&app, &to_sign_in, None).await.text().await.unwrap();
    assert!(page.contains(&format!("action=\"{to_sign_in}\"")), "{page}");
    let setup = format!("{link}?site={id}");
    let page = get(&app, &setup, None).await.text().await.unwrap();
    assert!(page.contains(&format!("action=\"{setup}\"")), "{page}");

    // A malformed one is dropped, never echoed.
    let forged = "%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E";
    for path in [format!("/console/login?site={forged}"), format!("{link}?site={forged}")] {
        let page = get(&app, &path, None).await;
        assert_eq!(page.status(), StatusCode::OK);
        let page = page.text().await.unwrap();
        assert!(!page.contains("alert(1)") && !page.contains("?site="), "{page}");
    }
    let page = get(&app, "/console/sites/not-a-site/leads?site=x", None).await;
    assert_eq!(location(&page), "/console/login?next=%2Fconsole%2Fsites%2Fnot-a-site%2Fleads%3Fsite%3Dx");

    // The password set and a sign-in, both for the site, land on the site list as ever; a wrong password
    // shows the form for the site again.
    let set = post_form(&app, &setup, None, Some(&origin(&app)), &[("password", PASSWORD), ("repeat", PASSWORD)]).await;
    assert_eq!((set.status(), location(&set)), (StatusCode::SEE_OTHER, "/console/sites".to_owned()));
    assert!(session_cookie(set.headers()).is_some());
    let wrong = post_form(&app, &to_sign_in, None, Some(&origin(&app)), &[("email", "owner@example.com"), ("password", "not the password")]).await;
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    assert!(wrong.text().await.unwrap().contains(&format!("action=\"{to_sign_in}\"")));
    let signed = post_form(&app, &to_sign_in, None, Some(&origin(&app)), &[("email", "owner@example.com"), ("password", PASSWORD)]).await;
    assert_eq!((signed.status(), location(&signed)), (StatusCode::SEE_OTHER, "/console/sites".to_owned()));
}

#[tokio::test]
async fn a_sign_in_returns_to_the_page_asked_for_and_never_elsewhere() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let id = site.id.to_string();
    owner_with_password(&app, site.id).await;
    let credentials = [("email", "owner@example.com"), ("password", PASSWORD)];

    // A lead e-mail's link opened without a session: the sign-in page for the site, then the page itself.
    let asked = format!("/console/sites/{id}/leads?status=new");
    let page = get(&app, &asked, None).await;
    let login = location(&page);
    assert_eq!(login, format!("/console/login?site={id}&next=%2Fconsole%2Fsites%2F{id}%2Fleads%3Fstatus%3Dnew"));
    let form = get(&app, &login, None).await.text().await.unwrap();
    assert!(form.contains(&format!("action=\"{}\"", login.replace('&', "&#38;"))), "{form}");
    let wrong = post_form(&app, &login, None, Some(&origin(&app)), &[("email", "owner@example.com"), ("password", "not the password")]).await;
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    assert!(wrong.text().await.unwrap().contains(&format!("action=\"{}\"", login.replace('&', "&#38;"))), "a wrong password keeps the page to return to");
    let signed = post_form(&app, &login, None, Some(&origin(&app)), &credentials).await;
    assert_eq!((signed.status(), location(&signed)), (StatusCode::SEE_OTHER, asked.clone()));
    let cookie = session_cookie(signed.headers()).expect("signed in");
    assert_eq!(get(&app, &asked, Some(&cookie)).await.status(), StatusCode::OK);
    // Signed in already, the sign-in page goes straight there.
    let again = get(&app, &login, Some(&cookie)).await;
    assert_eq!((again.status(), location(&again)), (StatusCode::SEE_OTHER, asked.clone()));

    // Anything but a console page of this server lands on the site list: another host, a scheme, a
    // backslash, a sign-in page, text that is no path.
    for next in ["//evil.example/", "https://evil.example/console/sites", "/console/\\evil.example", "/console/logout", "/elsewhere", "javascript:alert(1)"] {
        let path = format!("/console/login?next={}", url::form_urlencoded::byte_serialize(next.as_bytes()).collect::<String>());
        let page = get(&app, &path, None).await.text().await.unwrap();
        assert!(page.contains("action=\"/console/login\"") && !page.contains("evil") && !page.contains("javascript"), "{next}: {page}");
        let signed = post_form(&app, &path, None, Some(&origin(&app)), &credentials).await;
        assert_eq!((signed.status(), location(&signed)), (StatusCode::SEE_OTHER, "/console/sites".to_owned()), "{next}");
    }
    // A hostile page to return to stays inert text on the sign-in page.
    let hostile = "/console/sites/\"><script>alert(1)</script>";
    let path = format!("/console/login?next={}", url::form_urlencoded::byte_serialize(hostile.as_bytes()).collect::<String>());
    let page = get(&app, &path, None).await.text().await.unwrap();
    assert!(!page.contains("<script>alert") && !page.contains("\"><script"), "{page}");
}

#[tokio::test]
async fn a_user_sees_only_their_sites_and_an_unknown_account_answers_as_a_wrong_password() {
    let app = spawn_app().await;
    let (mine, _) = app.create_site(Tier::Pro).await;
    let (other, _) = app.create_site(Tier::Pro).await;
    let link = add_user(&app, "viewer@example.com", Some(Grant { site_id: mine.id, role: SiteRole::Viewer })).await;
    post_form(&app, &link, None, Some(&origin(&app)), &[("password", PASSWORD), ("repeat", PASSWORD)]).await;

    let wrong = post_form(&app, "/console/login", None, Some(&origin(&app)), &[("email", "viewer@example.com"), ("password", "not the password")]).await;
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    assert!(session_cookie(wrong.headers()).is_none());
    let wrong = wrong.text().await.unwrap();
    let unknown = post_form(&app, "/console/login", None, Some(&origin(&app)), &[("email", "nobody@example.com"), ("password", "not the password")]).await;
    assert_eq!(unknown.status(), StatusCode::UNAUTHORIZED);
    let unknown = unknown.text().await.unwrap();
    // The same page but for the address typed back into the form.
    assert_eq!(wrong.replace("viewer@example.com", "X"), unknown.replace("nobody@example.com", "X"));

    let cookie = sign_in(&app, "viewer@example.com", PASSWORD).await;
    let page = get(&app, "/console/sites", Some(&cookie)).await.text().await.unwrap();
    assert!(page.contains(&mine.id.to_string()) && !page.contains(&other.id.to_string()), "{page}");
    assert!(page.contains("viewer"));
    // The console's home is the user's sites (and the sign-in page without a session).
    for home in ["/console/", "/console"] {
        let page = get(&app, home, Some(&cookie)).await;
        assert_eq!((page.status(), page.headers()["location"].to_str().unwrap()), (StatusCode::SEE_OTHER, "/console/sites"), "{home}");
        let page = get(&app, home, None).await;
        assert_eq!((page.status(), page.headers()["location"].to_str().unwrap()), (StatusCode::SEE_OTHER, "/console/login"), "{home}");
    }
    // Anything else under /console is the console's own page, not the API's problem+json.
    let missing = get(&app, "/console/nothing-here", Some(&cookie)).await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    assert!(missing.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    // So is a wrong method (a bookmarked sign-out link), and it does not sign the user out.
    let wrong = get(&app, "/console/logout", Some(&cookie)).await;
    assert_eq!(wrong.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert!(wrong.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    let wrong = wrong.text().await.unwrap();
    assert!(wrong.contains("Not done this way") && wrong.contains("viewer@example.com"), "{wrong}");
    assert_eq!(get(&app, "/console/sites", Some(&cookie)).await.status(), StatusCode::OK);
}

#[tokio::test]
async fn state_changes_need_the_csrf_token_and_the_same_origin_and_sign_out_ends_the_session() {
    let app = spawn_app().await;
    let link = add_user(&app, "admin@example.com", None).await;
    post_form(&app, &link, None, Some(&origin(&app)), &[("password", PASSWORD), ("repeat", PASSWORD)]).await;
    let first = sign_in(&app, "admin@example.com", PASSWORD).await;
    let cookie = sign_in(&app, "admin@example.com", PASSWORD).await;
    assert_ne!(first, cookie, "every sign-in makes a new session");
    let csrf = csrf_of(&app, &cookie).await;

    let no_token = post_form(&app, "/console/logout", Some(&cookie), Some(&origin(&app)), &[]).await;
    assert_eq!(no_token.status(), StatusCode::FORBIDDEN);
    let wrong_token = post_form(&app, "/console/logout", Some(&cookie), Some(&origin(&app)), &[("csrf", "forged")]).await;
    assert_eq!(wrong_token.status(), StatusCode::FORBIDDEN);
    let other_origin = post_form(&app, "/console/logout", Some(&cookie), Some("https://evil.example"), &[("csrf", &csrf)]).await;
    assert_eq!(other_origin.status(), StatusCode::FORBIDDEN);
    let no_origin = post_form(&app, "/console/logout", Some(&cookie), None, &[("csrf", &csrf)]).await;
    assert_eq!(no_origin.status(), StatusCode::FORBIDDEN);
    // Still signed in after all four.
    assert_eq!(get(&app, "/console/sites", Some(&cookie)).await.status(), StatusCode::OK);

    let out = post_form(&app, "/console/logout", Some(&cookie), Some(&origin(&app)), &[("csrf", &csrf)]).await;
    assert_eq!(out.status(), StatusCode::SEE_OTHER);
    assert!(out.headers().get_all(SET_COOKIE).iter().any(|v| v.to_str().unwrap().contains("Max-Age=0")));
    let after = get(&app, "/console/sites", Some(&cookie)).await;
    assert_eq!((after.status(), after.headers()["location"].to_str().unwrap()), (StatusCode::SEE_OTHER, "/console/login"));
    // The other session lives on until it ends by itself.
    assert_eq!(get(&app, "/console/sites", Some(&first)).await.status(), StatusCode::OK);
    assert_eq!(audit_actions(&app), ["password_set", "login", "login", "login", "logout"]);
}

#[tokio::test]
async fn a_session_ends_when_idle_too_long_and_when_the_password_changes() {
    let app = spawn_app().await;
    let link = add_user(&app, "admin@example.com", None).await;
    post_form(&app, &link, None, Some(&origin(&app)), &[("password", PASSWORD), ("repeat", PASSWORD)]).await;
    let idle = sign_in(&app, "admin@example.com", PASSWORD).await;
    let live = sign_in(&app, "admin@example.com", PASSWORD).await;
    // 31 minutes without a request.
    let hash = token_hash(idle.split_once('=').unwrap().1);
    let before = Timestamp::now().as_millis() - 31 * 60_000;
    app.db().execute("UPDATE console_sessions SET last_seen_at = ?1 WHERE id_hash = ?2", rusqlite::params![before, &hash[..]]).unwrap();
    assert_eq!(get(&app, "/console/sites", Some(&idle)).await.status(), StatusCode::SEE_OTHER);
    assert_eq!(get(&app, "/console/sites", Some(&live)).await.status(), StatusCode::OK);
    // Twelve hours after sign-in, even if used a second ago.
    let hash = token_hash(live.split_once('=').unwrap().1);
    app.db()
        .execute(
            "UPDATE console_sessions SET created_at = ?1 WHERE id_hash = ?2",
            rusqlite::params![Timestamp::now().as_millis() - 12 * 3_600_000 - 1000, &hash[..]],
        )
        .unwrap();
    assert_eq!(get(&app, "/console/sites", Some(&live)).await.status(), StatusCode::SEE_OTHER);

    // A password change (through a reset link) ends every session.
    let live = sign_in(&app, "admin@example.com", PASSWORD).await;
    let token = new_url_token();
    let (h, expires) = (token_hash(&token), Timestamp::from_millis(Timestamp::now().as_millis() + 3_600_000));
    let id = app.state.store.users().by_email("admin@example.com").unwrap().unwrap().id;
    app.state.store.users().reset(&id, &h, expires).unwrap();
    assert_eq!(get(&app, "/console/sites", Some(&live)).await.status(), StatusCode::SEE_OTHER, "a reset ends the sessions");
    let new = "another long passphrase";
    post_form(&app, &format!("/console/setup/{token}"), None, Some(&origin(&app)), &[("password", new), ("repeat", new)]).await;
    let wrong = post_form(&app, "/console/login", None, Some(&origin(&app)), &[("email", "admin@example.com"), ("password", PASSWORD)]).await;
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED, "the old password no longer works");
    sign_in(&app, "admin@example.com", new).await;
}

#[tokio::test]
async fn failed_sign_ins_are_throttled_after_five_and_counted() {
    let app = spawn_app().await;
    let link = add_user(&app, "admin@example.com", None).await;
    post_form(&app, &link, None, Some(&origin(&app)), &[("password", PASSWORD), ("repeat", PASSWORD)]).await;
    for _ in 0..5 {
        let r = post_form(&app, "/console/login", None, Some(&origin(&app)), &[("email", "admin@example.com"), ("password", "guess guess guess")]).await;
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    }
    // The sixth is refused before any password is checked, even the right one.
    let sixth = post_form(&app, "/console/login", None, Some(&origin(&app)), &[("email", "admin@example.com"), ("password", PASSWORD)]).await;
    assert_eq!(sixth.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(sixth.text().await.unwrap().contains("Too many failed attempts"));
    // Another account from the same address is spaced too.
    let other = post_form(&app, "/console/login", None, Some(&origin(&app)), &[("email", "other@example.com"), ("password", "guess guess guess")]).await;
    assert_eq!(other.status(), StatusCode::TOO_MANY_REQUESTS);
    let failed: i64 = app.count("SELECT count(*) FROM audit_log WHERE action = 'login_failed'", []);
    assert_eq!(failed, 5, "each failure is in the audit log");
}

/// `sitebot_console_sign_ins_total{outcome}` as the metrics endpoint would show it.
fn sign_ins(app: &TestApp, outcome: &str) -> u64 {
    let text = app.state.metrics.encode(&[], 0, Default::default(), None);
    let line = format!("sitebot_console_sign_ins_total{{outcome=\"{outcome}\"}} ");
    text.lines().find_map(|l| l.strip_prefix(&line)).map_or(0, |v| v.trim().parse().unwrap())
}

#[tokio::test]
async fn a_hundred_wrong_passwords_sent_at_once_check_only_the_five_free_ones_and_refuse_the_rest_readably() {
    let mut config = crate::helpers::test_config();
    // Recording is on where something scrapes the metrics.
    config.server.metrics_listen = Some("127.0.0.1:0".parse().unwrap());
    let app = crate::helpers::spawn_app_with(config).await;
    let link = add_user(&app, "admin@example.com", None).await;
    post_form(&app, &link, None, Some(&origin(&app)), &[("password", PASSWORD), ("repeat", PASSWORD)]).await;
    let from = origin(&app);
    let tries = (0..100).map(|_| post_form(&app, "/console/login", None, Some(&from), &[("email", "admin@example.com"), ("password", "guess guess guess")]));
    let answers = futures_util::future::join_all(tries).await;
    let status_count = |status: StatusCode| answers.iter().filter(|r| r.status() == status).count();
    let (wrong, throttled) = (status_count(StatusCode::UNAUTHORIZED), status_count(StatusCode::TOO_MANY_REQUESTS));
    // Each attempt is counted before its password is checked: the five free failures are checked (the
    // line in front of the hashes holds more than five), every other attempt is refused unchecked. The
    // throttle's clock is the test's, so however long the burst takes, no wait is over meanwhile.
    assert_eq!((wrong, throttled), (5, 95), "wrong-password pages and throttled pages");
    assert_eq!(sign_ins(&app, "failed"), 5, "checked and failed, as the metrics show it");
    assert_eq!(sign_ins(&app, "throttled"), 95);
    assert_eq!(app.count("SELECT count(*) FROM audit_log WHERE action = 'login_failed'", []), 5);
    let refused = answers.into_iter().find(|r| r.status() == StatusCode::TOO_MANY_REQUESTS).unwrap();
    let retry: u64 = refused.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert_eq!(retry, 1, "the sixth failure in a row waits a second");
    let page = refused.text().await.unwrap();
    assert!(page.contains("<html") && page.contains("Too many failed attempts"), "a readable page: {page}");
    // The right password is refused unchecked too until the wait is over (the server's clock, which
    // only the test moves), and then signs in.
    let right = || post_form(&app, "/console/login", None, Some(&from), &[("email", "admin@example.com"), ("password", PASSWORD)]);
    assert_eq!(right().await.status(), StatusCode::TOO_MANY_REQUESTS);
    app.clock.advance(std::time::Duration::from_secs(1));
    assert_eq!(right().await.status(), StatusCode::SEE_OTHER);
    assert_eq!((sign_ins(&app, "failed"), sign_ins(&app, "succeeded")), (5, 1));
}

#[tokio::test]
async fn sign_ins_beyond_the_line_in_front_of_the_hashes_get_a_readable_busy_page_and_are_not_counted_as_failures() {
    // One hash at a time and none waiting; a trusted proxy names a hundred clients, each trying another
    // account, so the throttle lets every attempt through to the line.
    let mut config = crate::helpers::test_config();
    config.console.password_checks = 1;
    config.console.password_checks_waiting = 0;
    config.server.trusted_proxies = vec!["127.0.0.0/8".into()];
    config.server.metrics_listen = Some("127.0.0.1:0".parse().unwrap());
    let app = crate::helpers::spawn_app_with(config).await;
    let link = add_user(&app, "admin@example.com", None).await;
    post_form(&app, &link, None, Some(&origin(&app)), &[("password", PASSWORD), ("repeat", PASSWORD)]).await;
    let tries = (0..100).map(|i| {
        let email = format!("user{i}@example.com");
        let req = app
            .client
            .post(app.url("/console/login"))
            .header("Origin", origin(&app))
            .header("X-Forwarded-For", format!("203.0.113.{i}"))
            .header("Accept-Language", if i % 2 == 0 { "en" } else { "de" })
            .form(&[("email", email.as_str()), ("password", "guess guess guess")]);
        async move { (i, req.send().await.unwrap()) }
    });
    let answers = futures_util::future::join_all(tries).await;
    let (mut wrong, mut busy) = (0, 0);
    for (i, resp) in answers {
        match resp.status() {
            StatusCode::UNAUTHORIZED => wrong += 1,
            StatusCode::SERVICE_UNAVAILABLE => {
                busy += 1;
                assert_eq!(resp.headers()["retry-after"], "1");
                let page = resp.text().await.unwrap();
                let text = if i % 2 == 0 { "checking too many passwords" } else { "zu viele Passwörter" };
                assert!(page.contains("<html") && page.contains(text), "a readable page in the asked language: {page}");
            }
            other => panic!("attempt {i}: {other}, neither checked nor refused as busy"),
        }
    }
    // A hundred requests sent at once against one place, each holding it for a lookup and a hash: some
    // find it taken.
    assert!(wrong >= 1 && busy >= 1, "{wrong} checked, {busy} busy");
    assert_eq!((sign_ins(&app, "failed"), sign_ins(&app, "busy")), (wrong, busy), "the metrics tell them apart");
    assert_eq!(app.count("SELECT count(*) FROM audit_log WHERE action = 'login_failed'", []), wrong as i64, "only checked attempts are failures");
    // Every place was given back: the next sign-in is checked.
    let after = app
        .client
        .post(app.url("/console/login"))
        .header("Origin", origin(&app))
        .header("X-Forwarded-For", "198.51.100.1")
        .form(&[("email", "admin@example.com"), ("password", PASSWORD)])
        .send()
        .await
        .unwrap();
    assert_eq!(after.status(), StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn a_session_asking_for_many_pages_at_once_is_paced_and_then_refused_with_a_readable_page() {
    // One page every ten seconds beyond two at once: of ten asked together, two are served at once and
    // the others would wait longer than the console holds a request (5 s), so they are refused.
    let mut config = crate::helpers::test_config();
    config.console.pages_per_minute = 6;
    config.console.page_burst = 2;
    let app = crate::helpers::spawn_app_with(config).await;
    let link = add_user(&app, "admin@example.com", None).await;
    post_form(&app, &link, None, Some(&origin(&app)), &[("password", PASSWORD), ("repeat", PASSWORD)]).await;
    let cookie = sign_in(&app, "admin@example.com", PASSWORD).await;
    let asked: Vec<_> = (0..10).map(|_| get(&app, "/console/sites", Some(&cookie))).collect();
    let answers = futures_util::future::join_all(asked).await;
    let served = answers.iter().filter(|r| r.status() == StatusCode::OK).count();
    assert!((1..=3).contains(&served), "the burst (and at most one whose turn came meanwhile) is served: {served}");
    let refused: Vec<_> = answers.into_iter().filter(|r| r.status() == StatusCode::TOO_MANY_REQUESTS).collect();
    assert_eq!(refused.len(), 10 - served, "the rest are refused, none fails otherwise");
    let retry: u64 = refused[0].headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry), "Retry-After says when to come back: {retry}");
    assert_eq!(refused[0].headers()["cache-control"], "no-store");
    let page = refused.into_iter().next().unwrap().text().await.unwrap();
    assert!(page.contains("Too many pages at once") && page.contains("<html"), "a readable page: {page}");
    // The stylesheet is not paced, and another session is not slowed by this one.
    assert_eq!(get(&app, "/console/assets/console.css", Some(&cookie)).await.status(), StatusCode::OK);
    let other = sign_in(&app, "admin@example.com", PASSWORD).await;
    assert_eq!(get(&app, "/console/sites", Some(&other)).await.status(), StatusCode::OK);
}

#[tokio::test]
async fn the_console_speaks_german_when_asked_and_its_stylesheet_is_cached_by_etag() {
    let app = spawn_app().await;
    let page = app.client.get(app.url("/console/login")).header("Accept-Language", "de-CH, en;q=0.5").send().await.unwrap();
    let page = page.text().await.unwrap();
    assert!(page.contains("<html lang=\"de\">") && page.contains("Anmelden"), "{page}");
    assert!(page.contains("sitebot user add"), "with no user yet the page says how to make one");
    let css = get(&app, "/console/assets/console.css", None).await;
    assert_eq!(css.status(), StatusCode::OK);
    let etag = css.headers()["etag"].to_str().unwrap().to_owned();
    let again = app.client.get(app.url("/console/assets/console.css")).header("If-None-Match", &etag).send().await.unwrap();
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
}

/// The review groups listed on a site's page, as (id, example, count), in order.
fn listed_groups(page: &str, site: &str) -> Vec<(i64, String, u64)> {
    let marker = format!("/console/sites/{site}/review/");
    page.split(&marker)
        .skip(1)
        .map(|rest| {
            let id: i64 = rest.split('"').next().unwrap().parse().unwrap();
            let example = rest.split_once('>').unwrap().1.split("</a>").next().unwrap().to_owned();
            let count: u64 = rest.split("<td class=\"num\"").nth(1).unwrap().split_once('>').unwrap().1.split('<').next().unwrap().parse().unwrap();
            (id, example, count)
        })
        .collect()
}

#[tokio::test]
async fn unanswered_questions_group_by_meaning_and_an_answer_written_in_the_console_answers_the_next_visitor() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let (other, _) = app.create_site(Tier::Pro).await;
    crate::knowledge::import_files(&app, site.id, &crate::knowledge::clinic()).await;
    for q in [
        "Do you accept credit cards?", "Can I pay by credit card?", "Is payment by credit card possible?", "Do you offer dental implants?",
        "Do you do dental implants?", "<img src=x onerror=window.__xss=1>",
    ] {
        let a = crate::knowledge::ask_ok(&app, site.id, q).await;
        assert_eq!(a["resolved"], false, "{q}: {a}");
    }
    crate::knowledge::ask_ok(&app, other.id, "Do you accept credit cards?").await;

    owner_with_password(&app, site.id).await;
    let cookie = sign_in(&app, "owner@example.com", PASSWORD).await;
    let sid = site.id.to_string();
    let page = get(&app, &format!("/console/sites/{sid}"), Some(&cookie)).await.text().await.unwrap();
    let groups = listed_groups(&page, &sid);
    assert_eq!(groups.iter().map(|g| g.2).collect::<Vec<_>>(), [3, 2, 1], "{groups:?}");
    assert_eq!(groups[0].1, "Is payment by credit card possible?", "the newest wording");
    assert!(groups[1].1.contains("implants"));
    // Visitor text is shown as text.
    assert!(page.contains("&#60;img src=x onerror=window.__xss=1&#62;") || page.contains("&lt;img src=x onerror=window.__xss=1&gt;"), "{page}");
    assert!(!page.contains("<img src=x"));

    let (card_group, _, _) = groups[0].clone();
    let group_page = get(&app, &format!("/console/sites/{sid}/review/{card_group}"), Some(&cookie)).await.text().await.unwrap();
    assert!(group_page.contains("Do you accept credit cards?") && group_page.contains("Can I pay by credit card?"));
    let csrf = csrf_of(&app, &cookie).await;
    // An invalid form is refused with the reason and nothing is written.
    let bad = post_form(
        &app,
        &format!("/console/sites/{sid}/review/{card_group}/answer"),
        Some(&cookie),
        Some(&origin(&app)),
        &[("csrf", &csrf), ("question", "Do you accept credit cards?"), ("answer", ""), ("url", "javascript:alert(1)")],
    )
    .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let answer = "Yes, we accept all major credit cards and debit cards.";
    let saved = post_form(
        &app,
        &format!("/console/sites/{sid}/review/{card_group}/answer"),
        Some(&cookie),
        Some(&origin(&app)),
        &[("csrf", &csrf), ("question", "Do you accept credit cards?"), ("answer", answer), ("url", "https://clinic.example/payment")],
    )
    .await;
    assert_eq!(saved.status(), StatusCode::SEE_OTHER, "{}", saved.text().await.unwrap());

    // The next visitor's same question gets it at once, and the group has left the queue.
    let next = crate::knowledge::ask_ok(&app, site.id, "Do you accept credit cards?").await;
    assert_eq!(next["resolved"], true, "{next}");
    assert!(next["answer"].as_str().unwrap().starts_with(answer), "{next}");
    assert_eq!(next["sources"][0]["url"], "https://clinic.example/payment");
    let page = get(&app, &format!("/console/sites/{sid}"), Some(&cookie)).await.text().await.unwrap();
    let after = listed_groups(&page, &sid);
    assert!(after.iter().all(|g| g.0 != card_group), "{after:?}");
    assert_eq!(after.len(), 2);
    // Marked reviewed without an answer: gone too.
    let reviewed =
        post_form(&app, &format!("/console/sites/{sid}/review/{}/reviewed", after[0].0), Some(&cookie), Some(&origin(&app)), &[("csrf", &csrf)]).await;
    assert_eq!(reviewed.status(), StatusCode::SEE_OTHER);
    let page = get(&app, &format!("/console/sites/{sid}"), Some(&cookie)).await.text().await.unwrap();
    assert_eq!(listed_groups(&page, &sid).len(), 1);
    let actions = audit_actions(&app);
    assert!(actions.ends_with(&["curated_added".to_owned(), "group_reviewed".to_owned()]), "{actions:?}");

    // The other site, its pages and its groups: 404, exactly as for a site that does not exist.
    let oid = other.id.to_string();
    assert_eq!(get(&app, &format!("/console/sites/{oid}"), Some(&cookie)).await.status(), StatusCode::NOT_FOUND);
    let other_group: i64 = app.count("SELECT id FROM review_groups WHERE site_id = ?1", [&oid]);
    assert_eq!(get(&app, &format!("/console/sites/{oid}/review/{other_group}"), Some(&cookie)).await.status(), StatusCode::NOT_FOUND);
    assert_eq!(get(&app, &format!("/console/sites/{sid}/review/{other_group}"), Some(&cookie)).await.status(), StatusCode::NOT_FOUND);
    assert_eq!(get(&app, "/console/sites/3f2c0e6e-0000-4000-8000-000000000000", Some(&cookie)).await.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_viewer_reads_the_queue_but_has_no_write_control_and_a_write_by_hand_is_refused() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    crate::knowledge::ask_ok(&app, site.id, "Do you accept credit cards?").await;
    let link = add_user(&app, "viewer@example.com", Some(Grant { site_id: site.id, role: SiteRole::Viewer })).await;
    post_form(&app, &link, None, Some(&origin(&app)), &[("password", PASSWORD), ("repeat", PASSWORD)]).await;
    let cookie = sign_in(&app, "viewer@example.com", PASSWORD).await;
    let sid = site.id.to_string();
    let page = get(&app, &format!("/console/sites/{sid}"), Some(&cookie)).await.text().await.unwrap();
    let groups = listed_groups(&page, &sid);
    assert_eq!(groups.len(), 1);
    let group = get(&app, &format!("/console/sites/{sid}/review/{}", groups[0].0), Some(&cookie)).await.text().await.unwrap();
    assert!(!group.contains("/answer\"") && !group.contains("/reviewed\""), "no write form for a viewer");
    assert!(group.contains("editors and owners write answers"));
    let csrf = csrf_of(&app, &cookie).await;
    for action in ["answer", "reviewed"] {
        let r = post_form(
            &app,
            &format!("/console/sites/{sid}/review/{}/{action}", groups[0].0),
            Some(&cookie),
            Some(&origin(&app)),
            &[("csrf", &csrf), ("question", "q"), ("answer", "a")],
        )
        .await;
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "{action}");
    }
    assert_eq!(app.count("SELECT count(*) FROM curated_answers", []), 0);
    assert_eq!(app.count("SELECT count(*) FROM review_groups WHERE handled_at IS NULL", []), 1);
}

#[tokio::test]
async fn the_dashboard_and_the_sites_page_count_questions_answers_leads_and_ratings_by_day() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let (other, _) = app.create_site(Tier::Pro).await;
    crate::knowledge::import_files(&app, site.id, &crate::knowledge::clinic()).await;
    let answered = crate::knowledge::ask_ok(&app, site.id, "How much does teeth whitening cost?").await;
    assert_eq!(answered["resolved"], true);
    crate::knowledge::ask_ok(&app, site.id, "Wie viel kostet eine Zahnreinigung?").await;
    let missed = crate::knowledge::ask_ok(&app, site.id, "Do you accept credit cards?").await;
    assert_eq!(missed["resolved"], false);
    let qid = answered["id"].as_str().unwrap();
    let rate = |rating: &'static str| {
        app.client.post(app.url("/v1/feedback")).header("X-Site-Id", site.id.to_string()).json(&serde_json::json!({"queryId": qid, "rating": rating})).send()
    };
    assert_eq!(rate("down").await.unwrap().status(), StatusCode::ACCEPTED);
    assert_eq!(rate("up").await.unwrap().status(), StatusCode::ACCEPTED, "a second rating replaces the first");
    let lead = app
        .client
        .post(app.url("/v1/leads"))
        .header("X-Site-Id", site.id.to_string())
        .json(&serde_json::json!({"email": "ada@example.com"}))
        .send()
        .await
        .unwrap();
    assert_eq!(lead.status(), StatusCode::ACCEPTED);
    let (q, a, l, up, down): (i64, i64, i64, i64, i64) = app
        .db()
        .query_row("SELECT questions, answered, leads, thumbs_up, thumbs_down FROM site_days WHERE site_id = ?1", [site.id.to_string()], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap();
    assert_eq!((q, l, up, down), (3, 1, 1, 0), "one rating, moved from down to up");
    assert!((1..=2).contains(&a), "{a}");

    let link = add_user(&app, "viewer@example.com", Some(Grant { site_id: site.id, role: SiteRole::Viewer })).await;
    post_form(&app, &link, None, Some(&origin(&app)), &[("password", PASSWORD), ("repeat", PASSWORD)]).await;
    let cookie = sign_in(&app, "viewer@example.com", PASSWORD).await;
    let sid = site.id.to_string();
    let page = get(&app, &format!("/console/sites/{sid}/dashboard?days=7"), Some(&cookie)).await;
    assert_eq!(page.status(), StatusCode::OK);
    let page = page.text().await.unwrap();
    assert!(page.contains("<dd>3</dd>") && page.contains("<dd>1</dd>"), "three questions and one lead: {page}");
    assert!(page.contains("<svg") && page.contains("<rect"), "charts drawn");
    assert!(page.contains("<th scope=\"row\">en</th>") && page.contains("<th scope=\"row\">de</th>"), "languages");
    assert!(page.contains("https://clinic.example/prices"), "the cited source, with its link");
    assert!(page.contains("Do you accept credit cards?"), "the largest unanswered group");
    assert!(page.contains("<strong aria-current=\"true\">7 days</strong>"));
    // An unknown period falls back to 30 days; another site is 404.
    assert!(
        get(&app, &format!("/console/sites/{sid}/dashboard?days=5"), Some(&cookie))
            .await
            .text()
            .await
            .unwrap()
            .contains("<strong aria-current=\"true\">30 days</strong>")
    );
    assert_eq!(get(&app, &format!("/console/sites/{}/dashboard", other.id), Some(&cookie)).await.status(), StatusCode::NOT_FOUND);
    let sites = get(&app, "/console/sites", Some(&cookie)).await.text().await.unwrap();
    assert!(sites.contains("3 / 3") && sites.contains("class=\"spark\""), "{sites}");
}

#[tokio::test]
async fn leads_are_listed_shown_as_text_exported_safely_and_a_dead_delivery_is_sent_again_by_an_owner() {
    let app = crate::helpers::spawn_app_with(crate::webhooks::webhook_config()).await;
    let (site, _) = app.create_site_with(crate::helpers::with_webhook(crate::helpers::new_site(Tier::Pro), "http://127.0.0.1:9/crm")).await;
    let (other, _) = app.create_site(Tier::Pro).await;
    let post_lead =
        |site: sitebot::domain::SiteId, body: serde_json::Value| app.client.post(app.url("/v1/leads")).header("X-Site-Id", site.to_string()).json(&body).send();
    let hostile = serde_json::json!({"email": "ada@example.com", "name": "<script>window.__xss=1</script>", "message": "=HYPERLINK(\"http://evil.example\")", "pageUrl": "https://clinic.example/contact"});
    let accepted: serde_json::Value = post_lead(site.id, hostile).await.unwrap().json().await.unwrap();
    let lead_id = accepted["id"].as_str().unwrap().to_owned();
    let other_lead: serde_json::Value = post_lead(other.id, serde_json::json!({"email": "bob@example.com"})).await.unwrap().json().await.unwrap();
    // The API refuses a javascript: page address; one stored some other way is still never a link.
    app.db().execute("UPDATE leads SET page_url = 'javascript:alert(1)' WHERE id = ?1", [&lead_id]).unwrap();
    // Its delivery exhausted its retries.
    app.db().execute("UPDATE outbox SET status = 'dead', attempts = 4, last_error = 'connection refused' WHERE site_id = ?1", [site.id.to_string()]).unwrap();

    owner_with_password(&app, site.id).await;
    let cookie = sign_in(&app, "owner@example.com", PASSWORD).await;
    let sid = site.id.to_string();
    let list = get(&app, &format!("/console/sites/{sid}/leads"), Some(&cookie)).await.text().await.unwrap();
    assert!(list.contains(&lead_id) && list.contains("ada@example.com"), "{list}");
    assert!(!list.contains("<script>window.__xss") && list.contains("&#60;script&#62;") || list.contains("&lt;script&gt;"), "{list}");
    let page = get(&app, &format!("/console/sites/{sid}/leads/{lead_id}"), Some(&cookie)).await.text().await.unwrap();
    assert!(!page.contains("href=\"javascript:"), "a javascript: address is never a link");
    assert!(page.contains("javascript:alert(1)"), "but it is shown as text");
    assert!(page.contains("dead") && page.contains("connection refused"), "{page}");
    // Another site's lead through this site's URL is 404.
    let oid = other_lead["id"].as_str().unwrap();
    assert_eq!(get(&app, &format!("/console/sites/{sid}/leads/{oid}"), Some(&cookie)).await.status(), StatusCode::NOT_FOUND);

    // Exports: formulas neutralised in the CSV, every field in the JSONL.
    let csv = get(&app, &format!("/console/sites/{sid}/leads.csv"), Some(&cookie)).await;
    assert!(csv.headers()["content-disposition"].to_str().unwrap().starts_with("attachment"));
    let csv = csv.text().await.unwrap();
    assert!(csv.contains("\"'=HYPERLINK(\"\"http://evil.example\"\")\""), "{csv}");
    let jsonl = get(&app, &format!("/console/sites/{sid}/leads.jsonl"), Some(&cookie)).await.text().await.unwrap();
    let first: serde_json::Value = serde_json::from_str(jsonl.lines().next().unwrap()).unwrap();
    assert_eq!(first["leadId"], lead_id.as_str());

    // The owner sends it again: pending and due, under the same id.
    let csrf = csrf_of(&app, &cookie).await;
    let replay = post_form(&app, &format!("/console/sites/{sid}/leads/{lead_id}/replay"), Some(&cookie), Some(&origin(&app)), &[("csrf", &csrf)]).await;
    assert_eq!(replay.status(), StatusCode::SEE_OTHER);
    let status: String = app.db().query_row("SELECT status FROM outbox WHERE site_id = ?1", [&sid], |r| r.get(0)).unwrap();
    assert_eq!(status, "pending");
    assert!(audit_actions(&app).contains(&"webhook_replayed".to_owned()));

    // An editor sees the lead but may not send it again.
    app.db().execute("UPDATE outbox SET status = 'dead' WHERE site_id = ?1", [&sid]).unwrap();
    let editor = add_user(&app, "editor@example.com", Some(Grant { site_id: site.id, role: SiteRole::Editor })).await;
    post_form(&app, &editor, None, Some(&origin(&app)), &[("password", PASSWORD), ("repeat", PASSWORD)]).await;
    let ecookie = sign_in(&app, "editor@example.com", PASSWORD).await;
    let page = get(&app, &format!("/console/sites/{sid}/leads/{lead_id}"), Some(&ecookie)).await.text().await.unwrap();
    assert!(!page.contains("/replay\""), "no replay control for an editor");
    let ecsrf = csrf_of(&app, &ecookie).await;
    let refused = post_form(&app, &format!("/console/sites/{sid}/leads/{lead_id}/replay"), Some(&ecookie), Some(&origin(&app)), &[("csrf", &ecsrf)]).await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn the_audit_page_shows_a_sites_changes_to_its_owner_and_refuses_a_viewer() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    crate::knowledge::ask_ok(&app, site.id, "Do you accept credit cards?").await;
    owner_with_password(&app, site.id).await;
    let cookie = sign_in(&app, "owner@example.com", PASSWORD).await;
    let sid = site.id.to_string();
    let group: i64 = app.count("SELECT id FROM review_groups WHERE site_id = ?1", [&sid]);
    let csrf = csrf_of(&app, &cookie).await;
    post_form(&app, &format!("/console/sites/{sid}/review/{group}/reviewed"), Some(&cookie), Some(&origin(&app)), &[("csrf", &csrf)]).await;
    let page = get(&app, &format!("/console/sites/{sid}/audit"), Some(&cookie)).await;
    assert_eq!(page.status(), StatusCode::OK);
    let page = page.text().await.unwrap();
    assert!(page.contains("group_reviewed") && page.contains("owner@example.com"), "{page}");

    let viewer = add_user(&app, "viewer@example.com", Some(Grant { site_id: site.id, role: SiteRole::Viewer })).await;
    post_form(&app, &viewer, None, Some(&origin(&app)), &[("password", PASSWORD), ("repeat", PASSWORD)]).await;
    let vcookie = sign_in(&app, "viewer@example.com", PASSWORD).await;
    let refused = get(&app, &format!("/console/sites/{sid}/audit"), Some(&vcookie)).await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    assert!(refused.text().await.unwrap().contains("does not allow"));
    // The tab is offered only to those who may open it.
    let audit_tab = format!("href=\"/console/sites/{sid}/audit\"");
    let owners = get(&app, &format!("/console/sites/{sid}/leads"), Some(&cookie)).await.text().await.unwrap();
    assert!(owners.contains(&audit_tab), "{owners}");
    let viewers = get(&app, &format!("/console/sites/{sid}/leads"), Some(&vcookie)).await.text().await.unwrap();
    assert!(viewers.contains(&format!("href=\"/console/sites/{sid}/conversations\"")) && !viewers.contains(&audit_tab), "{viewers}");
}

#[tokio::test]
async fn conversations_are_filtered_shown_with_their_sources_and_exported_safely() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let (other, _) = app.create_site(Tier::Pro).await;
    crate::knowledge::import_files(&app, site.id, &crate::knowledge::clinic()).await;
    // One conversation answered, then continued with a question the knowledge cannot answer, then a lead.
    let first = crate::knowledge::ask_ok(&app, site.id, "=cmd|' /C calc'!A0 do you accept credit cards?").await;
    assert_eq!(first["resolved"], false);
    let cid = first["conversationId"].as_str().unwrap().to_owned();
    let token = first["conversationToken"].as_str().unwrap().to_owned();
    let ask = |body: serde_json::Value| {
        app.client.post(app.url("/v1/query")).header("X-Site-Id", site.id.to_string()).header("X-Conversation-Token", &token).json(&body).send()
    };
    let second = ask(serde_json::json!({"question": "How much does teeth whitening cost?", "conversationId": cid})).await.unwrap();
    assert_eq!(second.status(), StatusCode::OK);
    let lead = app
        .client
        .post(app.url("/v1/leads"))
        .header("X-Site-Id", site.id.to_string())
        .header("X-Conversation-Token", &token)
        .json(&serde_json::json!({"email": "ada@example.com", "conversationId": cid}))
        .send()
        .await
        .unwrap();
    assert_eq!(lead.status(), StatusCode::ACCEPTED);
    // Another, answered and without a lead; one on another site.
    crate::knowledge::ask_ok(&app, site.id, "When are you open on Saturdays?").await;
    let foreign = crate::knowledge::ask_ok(&app, other.id, "Hello?").await;

    // An editor: exports are for editors and owners (`a_viewer_reads_the_lists_but_exports_nothing`).
    let owner = add_user(&app, "owner@example.com", Some(Grant { site_id: site.id, role: SiteRole::Editor })).await;
    post_form(&app, &owner, None, Some(&origin(&app)), &[("password", PASSWORD), ("repeat", PASSWORD)]).await;
    let cookie = sign_in(&app, "owner@example.com", PASSWORD).await;
    let sid = site.id.to_string();
    let list = |query: &'static str| {
        let (app, cookie, sid) = (&app, cookie.clone(), sid.clone());
        async move { get(app, &format!("/console/sites/{sid}/conversations{query}"), Some(&cookie)).await.text().await.unwrap() }
    };
    let all = list("").await;
    assert!(all.contains(&cid) && all.matches("/conversations/cnv_").count() == 2, "{all}");
    let unanswered = list("?unanswered=1").await;
    assert_eq!(unanswered.matches("/conversations/cnv_").count(), 1);
    assert!(unanswered.contains(&cid));
    assert_eq!(list("?lead=1").await.matches("/conversations/cnv_").count(), 1);
    assert_eq!(list("?q=saturdays").await.matches("/conversations/cnv_").count(), 1, "text, in any case");
    assert_eq!(list("?lang=de").await.matches("/conversations/cnv_").count(), 0);

    let transcript = get(&app, &format!("/console/sites/{sid}/conversations/{cid}"), Some(&cookie)).await.text().await.unwrap();
    assert!(transcript.contains("How much does teeth whitening cost?") && transcript.contains("https://clinic.example/prices"), "{transcript}");
    assert!(transcript.contains("not answered") && transcript.contains("ada@example.com"));
    let fid = foreign["conversationId"].as_str().unwrap();
    assert_eq!(get(&app, &format!("/console/sites/{sid}/conversations/{fid}"), Some(&cookie)).await.status(), StatusCode::NOT_FOUND);

    let csv = get(&app, &format!("/console/sites/{sid}/conversations.csv?unanswered=1"), Some(&cookie)).await.text().await.unwrap();
    // One record besides the header (a transcript cell spans lines, as CSV allows in quotes).
    assert_eq!(csv::Reader::from_reader(csv.as_bytes()).records().count(), 1, "{csv}");
    assert!(csv.contains("'=cmd|") && !csv.contains(",=cmd") && !csv.contains("\"=cmd"), "a formula is neutralised: {csv}");
    let jsonl = get(&app, &format!("/console/sites/{sid}/conversations.jsonl"), Some(&cookie)).await.text().await.unwrap();
    assert_eq!(jsonl.lines().count(), 2);
}

/// A user with `role` on `site` and a password; returns their session cookie.
async fn signed_in_as(app: &TestApp, email: &str, site: SiteId, role: SiteRole) -> String {
    let link = add_user(app, email, Some(Grant { site_id: site, role })).await;
    let set = post_form(app, &link, None, Some(&origin(app)), &[("password", PASSWORD), ("repeat", PASSWORD)]).await;
    session_cookie(set.headers()).expect("signed in")
}

#[tokio::test]
async fn a_viewer_reads_the_lists_but_exports_nothing_and_an_editor_exports() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    crate::knowledge::ask_ok(&app, site.id, "Do you accept credit cards?").await;
    let lead = app.client.post(app.url("/v1/leads")).header("X-Site-Id", site.id.to_string()).json(&serde_json::json!({"email": "ada@example.com"}));
    assert_eq!(lead.send().await.unwrap().status(), StatusCode::ACCEPTED);
    let viewer = signed_in_as(&app, "viewer@example.com", site.id, SiteRole::Viewer).await;
    let editor = signed_in_as(&app, "editor@example.com", site.id, SiteRole::Editor).await;
    let sid = site.id.to_string();
    let exports = ["leads.csv", "leads.jsonl", "conversations.csv", "conversations.jsonl?days=7"];

    // The viewer sees both lists, with their data, and no export link on either.
    let leads = get(&app, &format!("/console/sites/{sid}/leads"), Some(&viewer)).await;
    assert_eq!(leads.status(), StatusCode::OK);
    let leads = leads.text().await.unwrap();
    let conversations = get(&app, &format!("/console/sites/{sid}/conversations"), Some(&viewer)).await.text().await.unwrap();
    assert!(leads.contains("ada@example.com") && conversations.contains("Do you accept credit cards?"), "the lists are there");
    for page in [&leads, &conversations] {
        assert!(!page.contains(".csv") && !page.contains(".jsonl"), "no export link for a viewer: {page}");
    }
    // Asked by hand, each export is a readable 403 page, and nothing is audited as exported.
    for path in exports {
        let refused = get(&app, &format!("/console/sites/{sid}/{path}"), Some(&viewer)).await;
        assert_eq!(refused.status(), StatusCode::FORBIDDEN, "{path}");
        assert!(refused.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
        assert!(refused.headers().get("content-disposition").is_none(), "{path}: no file");
        let page = refused.text().await.unwrap();
        assert!(page.contains("owners and editors") && !page.contains("ada@example.com"), "{page}");
    }
    assert!(!audit_actions(&app).iter().any(|a| a.ends_with("_exported")));

    // The editor sees the links and gets the files.
    let leads = get(&app, &format!("/console/sites/{sid}/leads"), Some(&editor)).await.text().await.unwrap();
    let conversations = get(&app, &format!("/console/sites/{sid}/conversations"), Some(&editor)).await.text().await.unwrap();
    assert!(leads.contains(&format!("href=\"/console/sites/{sid}/leads.csv\"")), "{leads}");
    assert!(conversations.contains(&format!("/console/sites/{sid}/conversations.csv?")), "{conversations}");
    for path in exports {
        let file = get(&app, &format!("/console/sites/{sid}/{path}"), Some(&editor)).await;
        assert_eq!(file.status(), StatusCode::OK, "{path}");
        assert!(file.headers()["content-disposition"].to_str().unwrap().starts_with("attachment"), "{path}");
        let body = file.text().await.unwrap();
        assert!(body.contains(if path.starts_with("leads") { "ada@example.com" } else { "credit cards" }), "{path}: {body}");
    }
}

#[tokio::test]
async fn the_housekeeping_round_deletes_sessions_past_their_idle_or_absolute_lifetime() {
    use sitebot::console::session::{ABSOLUTE, IDLE};
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let live = signed_in_as(&app, "owner@example.com", site.id, SiteRole::Owner).await;
    let user = app.state.store.run(|s| s.users().by_email("owner@example.com")).await.unwrap().unwrap().id;
    let minute = std::time::Duration::from_secs(60);
    let now = Timestamp::now();
    // Abandoned: one idle past its limit, one used a minute ago but started before the absolute limit,
    // and one just inside both (idle for less than IDLE, started less than ABSOLUTE ago).
    let sessions = [("idle", now - IDLE - minute, None), ("old", now - ABSOLUTE - minute, Some(now - minute)), ("recent", now - IDLE + minute, None)];
    for (name, started, used) in sessions {
        let (hash, user) = (token_hash(name), user.clone());
        app.state
            .store
            .run(move |s| {
                s.users().start_session(&hash, &user, "csrf", started)?;
                used.map_or(Ok(()), |at| s.users().touch_session(&hash, at))
            })
            .await
            .unwrap();
    }
    let stored = || app.count("SELECT count(*) FROM console_sessions", []);
    assert_eq!(stored(), 4);

    // (The server's own round at start-up may have run meanwhile too: what is left is what counts.)
    let round = sitebot::server::housekeeping::run_once(&app.state).await;
    assert!(round.sessions.is_some(), "the round reached the sessions");
    assert_eq!(stored(), 2);
    let kept = |name: &str| app.count("SELECT count(*) FROM console_sessions WHERE id_hash = ?1", [token_hash(name).to_vec()]);
    assert_eq!((kept("idle"), kept("old"), kept("recent")), (0, 0, 1));
    assert_eq!(get(&app, "/console/sites", Some(&live)).await.status(), StatusCode::OK, "the session in use stays");
}
