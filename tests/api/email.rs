//! E-mail (#25) against a real SMTP server: aiosmtpd (installed by `install.sh --deps-only` into a venv
//! of the cache), started by each test on loopback by `tests/email/smtp_server.py`, which writes every
//! message it accepts as a JSON line (Message-ID, envelope, subject, the decoded text and HTML parts).
//!
//! The CLI and the killed server are the built binary (`sitebot user add`, `sitebot digest send`,
//! `sitebot serve` killed with SIGKILL); the lead e-mail and the console's account page run against the
//! in-process server. Links in e-mails are fetched from the running server.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use sitebot::domain::{SiteRole, Tier};
use sitebot::store::users::Grant;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::console::{PASSWORD, add_user, get, post_form, session_cookie};
use crate::helpers::{spawn_app, spawn_app_with, test_config};

/// The venv's Python with aiosmtpd: `SITEBOT_AIOSMTPD_PYTHON`, else where install.sh puts it.
fn aiosmtpd_python() -> PathBuf {
    if let Some(p) = std::env::var_os("SITEBOT_AIOSMTPD_PYTHON") {
        return PathBuf::from(p);
    }
    let cache = std::env::var_os("SITEBOT_CACHE_DIR").map(PathBuf::from).unwrap_or_else(|| {
        let base =
            std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache"));
        base.join("sitebot")
    });
    let req = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/email/requirements.txt")).unwrap();
    let version = req.lines().find_map(|l| l.strip_prefix("aiosmtpd==").map(str::to_owned)).expect("aiosmtpd is pinned");
    cache.join(format!("tools/aiosmtpd-{version}/bin/python"))
}

/// A real SMTP server on loopback, stopped when dropped.
struct Smtp {
    _child: Child,
    out: PathBuf,
    _dir: tempfile::TempDir,
}

impl Smtp {
    async fn start(port: u16, tls: Option<(&Path, &Path)>) -> Smtp {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("messages.jsonl");
        let python = aiosmtpd_python();
        assert!(python.exists(), "{} is missing: run ./install.sh --deps-only", python.display());
        let mut cmd = Command::new(python);
        cmd.arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/email/smtp_server.py")).args(["--port", &port.to_string()]).arg("--out").arg(&out);
        if let Some((cert, key)) = tls {
            cmd.arg("--tls-cert").arg(cert).arg("--tls-key").arg(key);
        }
        let mut child = cmd.stdout(std::process::Stdio::piped()).kill_on_drop(true).spawn().expect("start the SMTP server");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let ready = tokio::time::timeout(Duration::from_secs(20), lines.next_line()).await.expect("the SMTP server starts").unwrap();
        assert_eq!(ready.as_deref(), Some(format!("ready {port}").as_str()));
        Smtp { _child: child, out, _dir: dir }
    }

    fn messages(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.out).unwrap_or_default().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }

    /// Waits until at least `n` messages arrived; returns them all.
    async fn wait_for(&self, n: usize, within: Duration) -> Vec<Value> {
        let until = tokio::time::Instant::now() + within;
        loop {
            let got = self.messages();
            if got.len() >= n {
                return got;
            }
            assert!(tokio::time::Instant::now() < until, "{} of {n} e-mails arrived: {got:#?}", got.len());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

fn private_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    dir
}

/// `[email]` for a plain SMTP server on loopback: allowed explicitly, as an operator would.
fn email_env(smtp_port: u16, base: &str) -> Vec<(String, String)> {
    [
        ("SITEBOT_EMAIL__SMTP_URL", format!("smtp://127.0.0.1:{smtp_port}")),
        ("SITEBOT_EMAIL__FROM", "Sitebot <bot@sitebot.example>".into()),
        ("SITEBOT_EMAIL__ALLOW_PRIVATE_NETWORKS", "true".into()),
        ("SITEBOT_EMAIL__PLAINTEXT", "true".into()),
        ("SITEBOT_EMAIL__TIMEOUT_SECS", "2".into()),
        // Short, and long enough that nothing is given up while a test keeps the SMTP server down.
        ("SITEBOT_EMAIL__RETRY_SCHEDULE", format!("[\"300ms\"{}]", ", \"1s\"".repeat(60))),
        ("SITEBOT_EMAIL__BASE_URL", base.into()),
        ("SITEBOT_LOG__LEVEL", "warn".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

fn sitebot(dir: &Path, env: &[(String, String)]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sitebot"));
    cmd.arg("--data-dir").arg(dir).envs(env.iter().map(|(k, v)| (k, v))).kill_on_drop(true);
    cmd
}

async fn run(dir: &Path, env: &[(String, String)], args: &[&str]) -> String {
    let out = sitebot(dir, env).args(args).output().await.unwrap();
    assert!(out.status.success(), "sitebot {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// `sitebot serve` on `port` (so that the links the server writes name it).
async fn serve_at(dir: &Path, env: &[(String, String)], port: u16) -> Child {
    let mut child =
        sitebot(dir, env).args(["serve", "--listen", &format!("127.0.0.1:{port}")]).stdout(std::process::Stdio::piped()).spawn().expect("start sitebot serve");
    crate::served::base_url(&mut child).await;
    child
}

fn trusting_client(data_dir: &Path) -> reqwest::Client {
    crate::helpers::client_for(&std::fs::read(sitebot::http::tls::self_signed_paths(data_dir).0).unwrap())
}

async fn create_site(dir: &Path, env: &[(String, String)], name: &str) -> String {
    let out = run(dir, env, &["site", "create", "--json", "--name", name, "--vertical", "dental", "--tier", "pro", "--currency", "EUR", "--lang", "en"]).await;
    serde_json::from_str::<Value>(&out).unwrap()["siteId"].as_str().unwrap().to_owned()
}

/// The first `https://` link of a text that starts with `prefix`.
fn link_in(text: &str, prefix: &str) -> String {
    let at = text.find(prefix).unwrap_or_else(|| panic!("no link {prefix}... in {text}"));
    text[at..].split(|c: char| c.is_whitespace() || c == '"' || c == '<').next().unwrap().to_owned()
}

/// Sets the password through a setup link and returns the session cookie it signs in with.
async fn use_setup_link(client: &reqwest::Client, base: &str, link: &str) -> String {
    let set = client.post(link).header("Origin", base).form(&[("password", PASSWORD), ("repeat", PASSWORD)]).send().await.unwrap();
    assert_eq!(set.status(), StatusCode::SEE_OTHER, "{}", set.text().await.unwrap());
    session_cookie(set.headers()).expect("signed in")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_setup_link_from_user_add_and_the_digest_arrive_and_their_links_work() {
    let (_smtp_port_held, smtp_port) = crate::helpers::held_port();
    let smtp = Smtp::start(smtp_port, None).await;
    let dir = private_dir();
    let (_port_held, port) = crate::helpers::held_port();
    let base = format!("https://127.0.0.1:{port}");
    let env = email_env(smtp_port, &base);
    let site = create_site(dir.path(), &env, "Clinic <b>Smile</b>").await;

    let added =
        run(dir.path(), &env, &["user", "add", "--email", "owner@example.com", "--site", &site, "--role", "owner", "--base-url", &base, "--json"]).await;
    let added: Value = serde_json::from_str(&added).unwrap();
    assert_eq!(added["emailed"], true, "{added}");
    let link = added["setupLink"].as_str().unwrap().to_owned();
    assert!(link.ends_with(&format!("?site={site}")), "the link names the site for a balancer: {link}");
    let mail = smtp.wait_for(1, Duration::from_secs(10)).await.remove(0);
    assert_eq!(mail["rcpt_tos"], json!(["owner@example.com"]));
    assert_eq!(mail["subject"], "Your sitebot console account");
    assert_eq!(mail["mail_from"], "bot@sitebot.example");
    assert!(mail["message_id"].as_str().unwrap().ends_with("@sitebot.example>"), "{mail}");
    assert_eq!(link_in(mail["text"].as_str().unwrap(), &format!("{base}/console/setup/")), link, "the e-mail carries the printed link");
    assert!(mail["html"].as_str().unwrap().contains(&format!("href=\"{link}\"")));
    let kept: String =
        rusqlite::Connection::open(dir.path().join("sitebot.db")).unwrap().query_row("SELECT payload FROM email_queue", [], |r| r.get(0)).unwrap();
    assert_eq!(kept, "{}", "the link is not kept once sent");

    let mut server = serve_at(dir.path(), &env, port).await;
    let client = trusting_client(dir.path());
    let cookie = use_setup_link(&client, &base, &link).await;

    // A week on the site: a question the knowledge cannot answer, and a lead.
    let asked =
        client.post(format!("{base}/v1/query")).header("X-Site-Id", &site).json(&json!({"question": "Is there parking for bicycles?"})).send().await.unwrap();
    assert_eq!(asked.status(), 200);
    assert_eq!(asked.json::<Value>().await.unwrap()["resolved"], false);
    let lead =
        client.post(format!("{base}/v1/leads")).header("X-Site-Id", &site).json(&json!({"name": "Ada", "email": "ada@example.com"})).send().await.unwrap();
    assert_eq!(lead.status(), 202);

    let out = run(dir.path(), &env, &["digest", "send", "--site", &site]).await;
    assert!(out.contains("queued for 1 owner(s)"), "{out}");
    let digest = smtp.wait_for(2, Duration::from_secs(10)).await.remove(1);
    assert_eq!(digest["rcpt_tos"], json!(["owner@example.com"]));
    assert_eq!(digest["subject"], "Clinic <b>Smile</b>: your week with sitebot");
    let text = digest["text"].as_str().unwrap();
    assert!(text.contains("Questions:        1") && text.contains("Answered:         0 (0 %)") && text.contains("Leads:            1"), "{text}");
    assert!(text.contains("1 × \"Is there parking for bicycles?\"") && text.contains("Ada <ada@example.com>"), "{text}");
    let html = digest["html"].as_str().unwrap();
    assert!(html.contains("Clinic &#60;b&#62;Smile&#60;/b&#62;") || html.contains("Clinic &lt;b&gt;Smile&lt;/b&gt;"), "{html}");
    assert!(!html.contains("<b>Smile"), "{html}");

    // The group's link opens the group in the review queue for the signed-in owner.
    let group_link = link_in(text, &format!("{base}/console/sites/{site}/review/"));
    let page = client.get(&group_link).header("Cookie", &cookie).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.text().await.unwrap().contains("Is there parking for bicycles?"));
    let queue = link_in(&text[text.find("The review queue: ").expect("a link to the queue")..], &base);
    assert_eq!(queue, format!("{base}/console/sites/{site}"));
    assert_eq!(client.get(&queue).header("Cookie", &cookie).send().await.unwrap().status(), 200);
    // The account page has no site in its path: its link names the site for a balancer.
    let account = link_in(text, &format!("{base}/console/account"));
    assert_eq!(account, format!("{base}/console/account?site={site}"));
    assert_eq!(client.get(&account).header("Cookie", &cookie).send().await.unwrap().status(), 200);
    server.kill().await.unwrap();
}

#[tokio::test]
async fn a_lead_email_arrives_with_the_visitor_text_escaped_and_links_to_the_lead() {
    let (_smtp_port_held, smtp_port) = crate::helpers::held_port();
    let smtp = Smtp::start(smtp_port, None).await;
    let (_port_held, port) = crate::helpers::held_port();
    let mut config = test_config();
    config.server.listen = format!("127.0.0.1:{port}").parse().unwrap();
    for (k, v) in email_env(smtp_port, &format!("https://127.0.0.1:{port}")) {
        let v = v.as_str();
        match k.as_str() {
            "SITEBOT_EMAIL__SMTP_URL" => config.email.smtp_url = Some(serde_json::from_value(json!(v)).unwrap()),
            "SITEBOT_EMAIL__FROM" => config.email.from = Some(v.into()),
            "SITEBOT_EMAIL__BASE_URL" => config.email.base_url = Some(v.into()),
            _ => {}
        }
    }
    config.email.allow_private_networks = true;
    config.email.plaintext = true;
    let app = spawn_app_with(config).await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let link = add_user(&app, "owner@example.com", Some(Grant { site_id: site.id, role: SiteRole::Owner })).await;
    add_user(&app, "viewer@example.com", Some(Grant { site_id: site.id, role: SiteRole::Viewer })).await;
    app.state.store.run(move |s| s.email().set_lead_email(site.id, true)).await.unwrap();

    let name = "<script>alert(1)</script>\r\nBcc: everyone@example.com";
    let message = "<img src=x onerror=alert(2)> & \"quotes\"";
    let resp = app
        .client
        .post(app.url("/v1/leads"))
        .header("X-Site-Id", site.id.to_string())
        .json(&json!({"name": name, "email": "visitor@example.com", "message": message, "pageUrl": "https://clinic.example/a?x=\"><script>alert(3)</script>"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 202);
    let lead_id = resp.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_owned();

    let mails = smtp.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(mails.len(), 1, "the owner only, not the viewer: {mails:#?}");
    let mail = &mails[0];
    assert_eq!(mail["rcpt_tos"], json!(["owner@example.com"]));
    let subject = mail["subject"].as_str().unwrap();
    assert_eq!(subject, format!("New lead on {}: <script>alert(1)</script> Bcc: everyone@example.com", site.name));
    let headers: Vec<&str> = mail["headers"].as_array().unwrap().iter().map(|h| h.as_str().unwrap()).collect();
    assert!(!headers.iter().any(|h| h.eq_ignore_ascii_case("bcc")), "no header from the visitor's text: {headers:?}");
    let html = mail["html"].as_str().unwrap();
    assert!(!html.contains("<script>") && !html.contains("<img") && !html.contains("\"><script>"), "{html}");
    assert!(html.contains("alert(1)") && html.contains("onerror=alert(2)"), "the text is there, escaped: {html}");
    let text = mail["text"].as_str().unwrap();
    assert!(text.contains(message) && text.contains("visitor@example.com"), "{text}");

    let lead_link = link_in(text, &format!("{}/console/sites/{}/leads/", app.base, site.id));
    assert!(lead_link.ends_with(&lead_id), "{lead_link}");
    let set = post_form(&app, &link, None, Some(&app.base), &[("password", PASSWORD), ("repeat", PASSWORD)]).await;
    let cookie = session_cookie(set.headers()).unwrap();
    let page = app.client.get(&lead_link).header("Cookie", &cookie).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.text().await.unwrap().contains("visitor@example.com"));
    // Marked sent right after the SMTP server accepted it (its reply may reach us first).
    let until = tokio::time::Instant::now() + Duration::from_secs(5);
    while app.count("SELECT count(*) FROM email_queue WHERE state = 'sent'", []) != 1 {
        assert!(tokio::time::Instant::now() < until, "the e-mail is marked sent");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn with_email_unconfigured_nothing_is_queued_and_leads_are_unaffected() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    add_user(&app, "owner@example.com", Some(Grant { site_id: site.id, role: SiteRole::Owner })).await;
    app.state.store.run(move |s| s.email().set_lead_email(site.id, true)).await.unwrap();
    let resp = app.client.post(app.url("/v1/leads")).header("X-Site-Id", site.id.to_string()).json(&json!({"email": "v@example.com"})).send().await.unwrap();
    assert_eq!(resp.status(), 202);
    assert_eq!(app.count("SELECT count(*) FROM leads", []), 1);
    assert_eq!(app.count("SELECT count(*) FROM email_queue", []), 0);
    let dir = app.stop().await;
    // The CLI: the link is printed, nothing is queued, and `digest send` says e-mail is off.
    let out = run(dir.path(), &[], &["user", "add", "--email", "second@example.com", "--admin", "--json"]).await;
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["emailed"], false);
    let refused = sitebot(dir.path(), &[]).args(["digest", "send"]).output().await.unwrap();
    assert!(!refused.status.success() && String::from_utf8_lossy(&refused.stderr).contains("e-mail is off"));
    let n: i64 = rusqlite::Connection::open(dir.path().join("sitebot.db")).unwrap().query_row("SELECT count(*) FROM email_queue", [], |r| r.get(0)).unwrap();
    assert_eq!(n, 0);
}

/// What the queue holds, by state.
fn states(dir: &Path) -> BTreeMap<String, i64> {
    let db = rusqlite::Connection::open(dir.join("sitebot.db")).unwrap();
    let mut stmt = db.prepare("SELECT state, count(*) FROM email_queue GROUP BY state").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_while_emails_wait_for_the_smtp_server_sends_each_exactly_once_after_restart() {
    let (_smtp_port_held, smtp_port) = crate::helpers::held_port(); // nothing listens there yet: the SMTP server is down
    let dir = private_dir();
    let (_port_held, port) = crate::helpers::held_port();
    let base = format!("https://127.0.0.1:{port}");
    let env = email_env(smtp_port, &base);
    let site = create_site(dir.path(), &env, "Crash").await;
    run(dir.path(), &env, &["site", "update", &site, "--lead-email", "on"]).await;
    for owner in ["one@example.com", "two@example.com"] {
        run(dir.path(), &env, &["user", "add", "--email", owner, "--site", &site, "--role", "owner"]).await;
    }
    let mut server = serve_at(dir.path(), &env, port).await;
    let client = trusting_client(dir.path());
    for i in 0..5 {
        let resp =
            client.post(format!("{base}/v1/leads")).header("X-Site-Id", &site).json(&json!({"email": format!("v{i}@example.com")})).send().await.unwrap();
        assert_eq!(resp.status(), 202);
    }
    run(dir.path(), &env, &["digest", "send", "--site", &site]).await;
    // 2 setup links, 5 leads × 2 owners, 2 digests; every one tried at least once and refused.
    let total = 14;
    let until = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let tried: i64 = rusqlite::Connection::open(dir.path().join("sitebot.db"))
            .unwrap()
            .query_row("SELECT count(*) FROM email_queue WHERE attempts > 0", [], |r| r.get(0))
            .unwrap();
        if tried == total {
            break;
        }
        assert!(tokio::time::Instant::now() < until, "{tried} of {total} tried: {:?}", states(dir.path()));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(states(dir.path()), BTreeMap::from([("queued".to_owned(), total)]));
    server.kill().await.unwrap(); // SIGKILL

    let smtp = Smtp::start(smtp_port, None).await;
    let mut server = serve_at(dir.path(), &env, port).await;
    let got = smtp.wait_for(total as usize, Duration::from_secs(30)).await;
    let until = tokio::time::Instant::now() + Duration::from_secs(10);
    while states(dir.path()) != BTreeMap::from([("sent".to_owned(), total)]) {
        assert!(tokio::time::Instant::now() < until, "{:?}", states(dir.path()));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await; // anything sent twice would have arrived by now
    server.kill().await.unwrap();
    let got = if smtp.messages().len() > got.len() { smtp.messages() } else { got };
    let mut by_id: BTreeMap<String, usize> = BTreeMap::new();
    for m in &got {
        *by_id.entry(m["message_id"].as_str().unwrap().to_owned()).or_default() += 1;
    }
    assert_eq!(got.len(), total as usize, "{by_id:#?}");
    assert!(by_id.values().all(|n| *n == 1), "each Message-ID once: {by_id:#?}");
    let db = rusqlite::Connection::open(dir.path().join("sitebot.db")).unwrap();
    let mut stmt = db.prepare("SELECT '<' || msg_id || '@sitebot.example>' FROM email_queue").unwrap();
    let queued: Vec<String> = stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
    assert_eq!(by_id.keys().cloned().collect::<Vec<_>>(), {
        let mut q = queued;
        q.sort();
        q
    });
    let kinds = got.iter().fold(BTreeMap::<&str, usize>::new(), |mut k, m| {
        let s = m["subject"].as_str().unwrap();
        *k.entry(if s.starts_with("New lead") {
            "lead"
        } else if s.contains("your week") {
            "digest"
        } else {
            "setup"
        })
        .or_default() += 1;
        k
    });
    assert_eq!(kinds, BTreeMap::from([("digest", 2), ("lead", 10), ("setup", 2)]));
}

#[tokio::test]
async fn starttls_is_required_and_verified_against_the_configured_certificate() {
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let files = tempfile::tempdir().unwrap();
    let (cert_path, key_path) = (files.path().join("smtp.pem"), files.path().join("smtp.key"));
    std::fs::write(&cert_path, cert.cert.pem()).unwrap();
    std::fs::write(&key_path, cert.signing_key.serialize_pem()).unwrap();
    let (_smtp_port_held, smtp_port) = crate::helpers::held_port();
    let smtp = Smtp::start(smtp_port, Some((&cert_path, &key_path))).await;
    let dir = private_dir();
    let env: Vec<(String, String)> = [
        ("SITEBOT_EMAIL__SMTP_URL", format!("smtp://localhost:{smtp_port}")),
        ("SITEBOT_EMAIL__FROM", "bot@sitebot.example".into()),
        ("SITEBOT_EMAIL__ALLOW_PRIVATE_NETWORKS", "true".into()),
        ("SITEBOT_EMAIL__TIMEOUT_SECS", "5".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    // Not trusted: the certificate is refused, the link stays queued (and is still printed).
    let out = run(dir.path(), &env, &["user", "add", "--email", "ada@example.com", "--admin"]).await;
    assert!(out.contains("/console/setup/") && out.contains("0 sent; 1 not accepted yet"), "{out}");
    let trusted = [env.clone(), vec![("SITEBOT_EMAIL__TLS_CA_FILE".to_owned(), cert_path.display().to_string())]].concat();
    let out = run(dir.path(), &trusted, &["user", "reset", "--email", "ada@example.com"]).await;
    assert!(out.contains("the link was e-mailed to ada@example.com"), "{out}");
    let got = smtp.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(got.len(), 1, "the untrusted attempt sent nothing: {got:#?}");
    assert_eq!(got[0]["tls"], true, "sent after STARTTLS");
    assert_eq!(got[0]["subject"], "Your new sitebot console link");
    // Plain text to a server that requires STARTTLS is not even possible without the operator's say.
    let plain = [
        env.clone(),
        vec![("SITEBOT_EMAIL__PLAINTEXT".to_owned(), "true".to_owned()), ("SITEBOT_EMAIL__ALLOW_PRIVATE_NETWORKS".to_owned(), "false".to_owned())],
    ]
    .concat();
    let refused = sitebot(dir.path(), &plain).args(["digest", "send"]).output().await.unwrap();
    assert!(!refused.status.success() && String::from_utf8_lossy(&refused.stderr).contains("email.plaintext"), "{}", String::from_utf8_lossy(&refused.stderr));
}

#[tokio::test]
async fn the_account_page_sets_the_digest_and_an_owner_sets_lead_emails_with_csrf_and_audit() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let owner = add_user(&app, "owner@example.com", Some(Grant { site_id: site.id, role: SiteRole::Owner })).await;
    let viewer = add_user(&app, "viewer@example.com", Some(Grant { site_id: site.id, role: SiteRole::Viewer })).await;
    let sign = |link: String| {
        let app = &app;
        async move { session_cookie(post_form(app, &link, None, Some(&app.base), &[("password", PASSWORD), ("repeat", PASSWORD)]).await.headers()).unwrap() }
    };
    let (owner, viewer) = (sign(owner).await, sign(viewer).await);
    let page = get(&app, "/console/account", Some(&owner)).await;
    assert_eq!(page.status(), 200);
    let page = page.text().await.unwrap();
    assert!(page.contains("name=\"digest\" type=\"checkbox\" value=\"on\" checked") && page.contains("E-mail is off on this server"), "{page}");
    let csrf = crate::console::csrf_of(&app, &owner).await;

    let off = post_form(&app, "/console/account", Some(&owner), Some(&app.base), &[("csrf", &csrf)]).await;
    assert_eq!(off.status(), StatusCode::SEE_OTHER);
    assert_eq!(app.count("SELECT digest FROM console_users WHERE email = 'owner@example.com'", []), 0);
    let forged = post_form(&app, "/console/account", Some(&owner), Some(&app.base), &[("csrf", "forged"), ("digest", "on")]).await;
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    let bad = post_form(&app, "/console/account", Some(&owner), Some(&app.base), &[("csrf", &csrf), ("digest", "maybe")]).await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(bad.text().await.unwrap().contains("Choose on or off."));

    let path = format!("/console/sites/{}/lead-email", site.id);
    let on = post_form(&app, &path, Some(&owner), Some(&app.base), &[("csrf", &csrf), ("lead_email", "off"), ("lead_email", "on")]).await;
    assert_eq!(on.status(), StatusCode::SEE_OTHER);
    assert_eq!(app.count("SELECT lead_email FROM sites", []), 1);
    assert!(
        get(&app, "/console/account?saved=1", Some(&owner)).await.text().await.unwrap().contains("name=\"lead_email\" type=\"checkbox\" value=\"on\" checked")
    );
    let viewer_csrf = crate::console::csrf_of(&app, &viewer).await;
    let refused = post_form(&app, &path, Some(&viewer), Some(&app.base), &[("csrf", &viewer_csrf), ("lead_email", "off")]).await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    assert_eq!(app.count("SELECT lead_email FROM sites", []), 1);
    assert!(!get(&app, "/console/account", Some(&viewer)).await.text().await.unwrap().contains("lead_email"), "a viewer has no lead e-mail control");
    let actions = crate::console::audit_actions(&app);
    assert!(actions.contains(&"digest_preference_changed".to_owned()) && actions.contains(&"lead_email_changed".to_owned()), "{actions:?}");
}

#[tokio::test]
async fn an_owner_sets_the_digest_and_lead_emails_on_the_account_page_in_a_real_browser() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut config = test_config();
    config.limits.ip_per_minute = 100_000; // the test clock stands still; a browser's requests are not what this tests
    let app = spawn_app_with(config).await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let link = add_user(&app, "owner@example.com", Some(Grant { site_id: site.id, role: SiteRole::Owner })).await;
    let env = [
        ("OWNER_LINK", app.url(&link)),
        ("OWNER_EMAIL", "owner@example.com".to_owned()),
        ("SITE_NAME", site.name.clone()),
        ("SCREENSHOT_DIR", root.join("target/account-screenshots").display().to_string()),
    ];
    crate::browser::run_browser_script("account.mjs", &env, 3).await;
    assert_eq!(app.count("SELECT digest FROM console_users", []), 0);
    assert_eq!(app.count("SELECT lead_email FROM sites", []), 1);
}
