//! Black-box tests of the built binary: the CLI and a running server share one data directory.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;
use common::*;

fn post_lead(c: &reqwest::blocking::Client, port: u16, site: &str) -> reqwest::blocking::Response {
    c.post(format!("https://127.0.0.1:{port}/v1/leads")).header("X-Site-Id", site).json(&json!({"email": "ada@example.com"})).send().unwrap()
}

fn create_site(dir: &Path, tier: &str) -> Value {
    let out =
        run_ok(sitebot(dir).args(["site", "create", "--name", "Shop", "--vertical", "dental", "--tier", tier, "--currency", "EUR", "--lang", "en", "--json"]));
    serde_json::from_str(&out).unwrap()
}

#[test]
fn site_created_by_the_cli_is_served_and_cli_changes_apply_without_restart() {
    let dir = tempfile::tempdir().unwrap();
    let created = create_site(dir.path(), "pro");
    let site = created["siteId"].as_str().unwrap().to_owned();
    assert!(created["webhookSecret"].as_str().unwrap().starts_with("whsec_"));
    assert!(created["bearerToken"].as_str().unwrap().starts_with("sbt_"));

    let server = serve(dir.path());
    let c = client(dir.path());
    assert_eq!(post_lead(&c, server.port, &site).status(), 202);
    let resp = c
        .post(format!("https://127.0.0.1:{}/v1/leads", server.port))
        .bearer_auth(created["bearerToken"].as_str().unwrap())
        .json(&json!({"email": "b@example.com"}))
        .send()
        .unwrap();
    assert_eq!(resp.status(), 202);

    // The CLI writes while the server runs; the server sees it on the next request.
    run_ok(sitebot(dir.path()).args(["site", "disable", &site]));
    let resp = post_lead(&c, server.port, &site);
    assert_eq!(resp.status(), 403);
    assert_eq!(resp.json::<Value>().unwrap()["code"], "site_disabled");
    run_ok(sitebot(dir.path()).args(["site", "enable", &site]));
    assert_eq!(post_lead(&c, server.port, &site).status(), 202);

    let rotated: Value = serde_json::from_str(&run_ok(sitebot(dir.path()).args(["site", "rotate-token", &site, "--json"]))).unwrap();
    let resp = c
        .post(format!("https://127.0.0.1:{}/v1/leads", server.port))
        .bearer_auth(created["bearerToken"].as_str().unwrap())
        .json(&json!({"email": "c@example.com"}))
        .send()
        .unwrap();
    assert_eq!(resp.status(), 401);
    let resp = c
        .post(format!("https://127.0.0.1:{}/v1/leads", server.port))
        .bearer_auth(rotated["bearerToken"].as_str().unwrap())
        .json(&json!({"email": "c@example.com"}))
        .send()
        .unwrap();
    assert_eq!(resp.status(), 202);

    // healthcheck finds the local server through the data directory's certificate.
    run_ok(sitebot(dir.path()).args(["healthcheck", "--url", &format!("https://127.0.0.1:{}", server.port)]));
    let shown: Value = serde_json::from_str(&run_ok(sitebot(dir.path()).args(["site", "show", &site, "--json"]))).unwrap();
    assert_eq!(shown["tier"], "pro");
    assert_eq!(shown["enabled"], true);
    assert!(shown.get("tokenHash").is_none() && !shown.to_string().contains("sbt_"));
}

#[test]
fn backup_while_serving_is_a_consistent_database_holding_the_site() {
    let dir = tempfile::tempdir().unwrap();
    // Pro: one client's 51 leads stay within a visitor's share of the site's budget (150 a minute).
    let site = create_site(dir.path(), "pro")["siteId"].as_str().unwrap().to_owned();
    let server = serve(dir.path());
    let c = client(dir.path());
    // Keep the server writing while the backup runs.
    let port = server.port;
    let site2 = site.clone();
    let dir_path = dir.path().to_owned();
    let writer = std::thread::spawn(move || {
        let c = client(&dir_path);
        let mut accepted = 0;
        for _ in 0..50 {
            if post_lead(&c, port, &site2).status() == 202 {
                accepted += 1;
            }
        }
        accepted
    });
    let backup = dir.path().join("backup.db");
    let out = run_ok(sitebot(dir.path()).arg("backup").arg(&backup));
    assert!(out.contains("backup written"), "{out}");
    let accepted = writer.join().unwrap();
    assert!(accepted > 0);
    assert_eq!(post_lead(&c, port, &site).status(), 202);

    let conn = rusqlite::Connection::open(&backup).unwrap();
    let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(check, "ok");
    let name: String = conn.query_row("SELECT name FROM sites WHERE id = ?1", [&site], |r| r.get(0)).unwrap();
    assert_eq!(name, "Shop");
    let leads: i64 = conn.query_row("SELECT count(*) FROM leads", [], |r| r.get(0)).unwrap();
    assert!(leads <= 51);
    // Backups never overwrite.
    let out = sitebot(dir.path()).arg("backup").arg(&backup).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("already exists"));
}

#[test]
fn sigterm_stops_the_server_gracefully() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = serve(dir.path());
    let pid = server.child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let start = Instant::now();
    loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            assert!(status.success(), "exit status {status:?}");
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(15), "server did not stop after SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn configuration_layers_unknown_keys_and_redaction() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("sitebot.toml");
    std::fs::write(&cfg, "[server]\nlisten = \"127.0.0.1:9443\"\n[secrets]\nmaster_key = \"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\"\n").unwrap();
    let out = run_ok(sitebot(dir.path()).arg("--config").arg(&cfg).args(["config", "print"]).env("SITEBOT_WEBHOOKS__ALLOW_HTTP", "true"));
    assert!(out.contains("listen = \"127.0.0.1:9443\""), "{out}");
    assert!(out.contains("allow_http = true"), "{out}");
    assert!(out.contains("[redacted]") && !out.contains("AAAAAAAA"), "{out}");

    let out = sitebot(dir.path()).args(["config", "print"]).env("SITEBOT_SERVER__LISEN", "x").output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("server.lisen") && err.contains("SITEBOT_SERVER__LISEN"), "{err}");

    std::fs::write(&cfg, "[limits]\nip_per_minut = 5\n").unwrap();
    let out = sitebot(dir.path()).arg("--config").arg(&cfg).args(["config", "print"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("limits.ip_per_minut"));

    let example = run_ok(sitebot(dir.path()).args(["config", "example"]));
    let path = dir.path().join("example.toml");
    std::fs::write(&path, example).unwrap();
    run_ok(sitebot(dir.path()).arg("--config").arg(&path).args(["config", "print"]));
}

#[test]
fn site_commands_validate_input_and_migrate_reports_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    let out = sitebot(dir.path())
        .args([
            "site", "create", "--name", "X", "--vertical", "dental", "--tier", "starter", "--currency", "EUR", "--lang", "en", "--webhook-url",
            "http://127.0.0.1/hook",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("https"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = sitebot(dir.path())
        .args(["site", "create", "--name", "X", "--vertical", "dental", "--tier", "starter", "--currency", "XYZ", "--lang", "en"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let id = create_site(dir.path(), "starter")["siteId"].as_str().unwrap().to_owned();
    let out = sitebot(dir.path()).args(["site", "rotate-token", &id]).output().unwrap();
    assert!(!out.status.success(), "starter sites have no token");
    let listed = run_ok(sitebot(dir.path()).args(["site", "list"]));
    assert!(listed.contains(&id));
    // Moving up from Starter creates a bearer token, shown once.
    let updated = run_ok(sitebot(dir.path()).args(["site", "update", &id, "--tier", "enterprise", "--allowed-origin", "https://shop.example.com", "--json"]));
    assert!(updated.contains("\"bearerToken\":\"sbt_"), "{updated}");
    let shown: Value = serde_json::from_str(&run_ok(sitebot(dir.path()).args(["site", "show", &id, "--json"]))).unwrap();
    assert_eq!(shown["tier"], "enterprise");
    assert_eq!(shown["hasBearerToken"], true);
    assert_eq!(shown["allowedOrigins"], json!(["https://shop.example.com"]));
    let out = run_ok(sitebot(dir.path()).arg("migrate"));
    assert!(out.starts_with("schema version "), "{out}");
}

#[test]
fn webhook_urls_on_link_local_addresses_need_the_address_named_even_with_private_networks_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let create = |url: &str, named: &str| {
        let mut cmd = sitebot(dir.path());
        cmd.env("SITEBOT_WEBHOOKS__ALLOW_HTTP", "true").env("SITEBOT_WEBHOOKS__ALLOW_PRIVATE_NETWORKS", "true");
        if !named.is_empty() {
            cmd.env("SITEBOT_WEBHOOKS__ALLOWED_LINK_LOCAL", named);
        }
        cmd.args(["site", "create", "--name", "X", "--vertical", "dental", "--tier", "starter", "--currency", "EUR", "--lang", "en", "--webhook-url", url]);
        run(&mut cmd)
    };
    for url in ["http://169.254.169.254/latest/meta-data/", "http://[fd00:ec2::254]/", "http://[fe80::1]/hook", "http://169.254.10.5/hook"] {
        let out = create(url, "");
        assert!(!out.status.success(), "{url} accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("link-local") && err.contains("webhooks.allowed_link_local"), "{url}: {err}");
    }
    // Named, that one address is accepted and no other of the range.
    let out = create("http://169.254.10.5/hook", r#"["169.254.10.5"]"#);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!create("http://169.254.169.254/latest/meta-data/", r#"["169.254.10.5"]"#).status.success());
    // Private networks stay as allowed as before.
    assert!(create("http://10.0.0.7/hook", "").status.success());
}

#[test]
fn the_optional_plain_port_refuses_everything() {
    use std::io::{BufRead, BufReader, Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let mut child = sitebot(dir.path())
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("SITEBOT_SERVER__PLAIN_LISTEN", "127.0.0.1:0")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let tls_line = lines.next().unwrap().unwrap();
    assert!(tls_line.starts_with("listening on https://127.0.0.1:"), "{tls_line}");
    let plain_line = lines.next().unwrap().unwrap();
    let addr = plain_line.strip_prefix("refusing plain HTTP on http://").unwrap_or_else(|| panic!("{plain_line}")).to_owned();
    let mut s = std::net::TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"GET /v1/landing/dental/en/home HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.1 403 Forbidden"), "{out}");
    assert!(out.contains("\"code\":\"https_required\""), "{out}");
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn curated_answers_are_added_listed_served_and_deleted_and_insights_report_the_gaps() {
    let dir = tempfile::tempdir().unwrap();
    let site = create_site(dir.path(), "pro")["siteId"].as_str().unwrap().to_owned();
    let faq = dir.path().join("faq.csv");
    std::fs::write(&faq, "question,answer,url\n\"Do you treat children?\",\"Yes, children are welcome from their first tooth.\",https://clinic.example/faq\n")
        .unwrap();
    run_ok(sitebot(dir.path()).args(["knowledge", "import", "--site", &site]).arg(&faq));
    let answer = "We accept Visa, Mastercard and cash.";
    let added: Value = serde_json::from_str(&run_ok(sitebot(dir.path()).args([
        "knowledge", "answer", "add", "--site", &site, "--question", "Which payment methods do you accept?", "--answer", answer, "--url",
        "https://clinic.example/payment", "--json",
    ])))
    .unwrap();
    let id = added["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("ans_"), "{added}");
    let bad = run(sitebot(dir.path()).args(["knowledge", "answer", "add", "--site", &site, "--question", "q", "--answer", "a", "--url", "ftp://x.example/"]));
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("http or https"));
    let listed: Value = serde_json::from_str(&run_ok(sitebot(dir.path()).args(["knowledge", "answer", "list", "--site", &site, "--json"]))).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0]["answer"], answer);

    let server = serve(dir.path());
    let c = client(dir.path());
    let ask = |q: &str| -> Value {
        c.post(format!("https://127.0.0.1:{}/v1/query", server.port)).header("X-Site-Id", &site).json(&json!({"question": q})).send().unwrap().json().unwrap()
    };
    let a = ask("What payment methods do you accept?");
    assert_eq!(a["answer"], format!("{answer} [1]"), "{a}");
    assert_eq!(a["sources"][0]["url"], "https://clinic.example/payment");
    for q in ["Do you offer dental implants?", "Do you do dental implants?", "What is the capital of France?"] {
        assert_eq!(ask(q)["resolved"], false, "{q}");
    }

    let report: Value = serde_json::from_str(&run_ok(sitebot(dir.path()).args(["insights", "--site", &site, "--json"]))).unwrap();
    assert_eq!(report["questions"], 4, "{report}");
    assert_eq!(report["resolved"], 1, "{report}");
    assert_eq!(report["unanswered"][0]["count"], 2, "{report}");
    assert_eq!(report["unanswered"][1]["count"], 1, "{report}");
    assert_eq!(report["topSources"][0]["documentId"], id.as_str(), "{report}");
    let text = run_ok(sitebot(dir.path()).args(["insights", "--site", &site]));
    assert!(text.contains("2x  Do you do dental implants?  |  Do you offer dental implants?"), "{text}");

    run_ok(sitebot(dir.path()).args(["knowledge", "answer", "delete", "--site", &site, &id]));
    assert_eq!(ask("What payment methods do you accept?")["resolved"], false);
    let again = run(sitebot(dir.path()).args(["knowledge", "answer", "delete", "--site", &site, &id]));
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("no curated answer"));
}

/// A one-shot OpenAI-compatible endpoint on loopback: answers one streamed completion with `OK`.
fn completion_endpoint() -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let Ok((mut conn, _)) = listener.accept() else { return };
        let mut buf = Vec::new();
        let mut piece = [0u8; 4096];
        while let Ok(n) = conn.read(&mut piece) {
            buf.extend_from_slice(&piece[..n]);
            let text = String::from_utf8_lossy(&buf).to_string();
            if let Some(head) = text.find("\r\n\r\n") {
                let len = text[..head].lines().find_map(|l| l.to_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse::<usize>().unwrap()));
                if buf.len() >= head + 4 + len.unwrap_or(0) || n == 0 {
                    break;
                }
            }
        }
        let body = "data: {\"choices\":[{\"delta\":{\"content\":\"OK\"}}]}\n\ndata: [DONE]\n\n";
        let _ = conn.write_all(format!("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n{body}").as_bytes());
    });
    base
}

/// A loopback port that refuses every connection for as long as the socket lives: bound, so that no other
/// test's server is given it (a port freed by dropping a listener can be, and then answers), but not listening.
fn refusing_port() -> (tokio::net::TcpSocket, u16) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let port = socket.local_addr().unwrap().port();
    (socket, port)
}

#[test]
fn doctor_checks_the_answer_endpoint_and_sites_choose_their_answers() {
    let dir = tempfile::tempdir().unwrap();
    let generator = |cmd: &mut Command, base: &str| {
        cmd.env("SITEBOT_ANSWER__GENERATOR", "openai")
            .env("SITEBOT_ANSWER__OPENAI_BASE_URL", base)
            .env("SITEBOT_ANSWER__MODEL", "test-model")
            .env("SITEBOT_ANSWER__ALLOW_PRIVATE_NETWORKS", "true")
            .env("SITEBOT_ANSWER__TIMEOUT_SECS", "3");
    };
    let base = completion_endpoint();
    let mut cmd = sitebot(dir.path());
    generator(cmd.arg("doctor"), &base);
    let out = run(&mut cmd);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().find(|l| l.contains("answer generator")).unwrap_or_else(|| panic!("no generator check: {stdout}"));
    assert!(line.starts_with("ok") && line.contains("test-model") && line.contains("\"OK\""), "{line}");

    // Nothing listens there: doctor fails and says so.
    let (_held, port) = refusing_port();
    let closed = format!("http://127.0.0.1:{port}/v1");
    let mut cmd = sitebot(dir.path());
    generator(cmd.arg("doctor"), &closed);
    let out = run(&mut cmd);
    assert!(!out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.lines().any(|l| l.contains("answer generator") && l.contains("unreachable")), "{stdout}");

    // The free space is checked against storage.min_free_mb: fine by default, a failure above the disk's.
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(stdout.lines().any(|l| l.starts_with("ok    free space:") && l.contains("MiB free")), "{stdout}");
    let out = run(sitebot(dir.path()).env("SITEBOT_STORAGE__MIN_FREE_MB", "1099511627776").arg("doctor"));
    assert!(!out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.lines().any(|l| l.starts_with("FAIL  free space:") && l.contains("storage.min_free_mb")), "{stdout}");

    let site = create_site(dir.path(), "pro")["siteId"].as_str().unwrap().to_owned();
    let shown: Value = serde_json::from_str(&run_ok(sitebot(dir.path()).args(["site", "show", &site, "--json"]))).unwrap();
    assert_eq!(shown["answers"], "generative", "the default: {shown}");
    let updated: Value = serde_json::from_str(&run_ok(sitebot(dir.path()).args(["site", "update", &site, "--answers", "extractive", "--json"]))).unwrap();
    assert_eq!(updated["answers"], "extractive");
    let err = run(sitebot(dir.path()).args(["site", "update", &site, "--answers", "creative"]));
    assert!(!err.status.success());
}

/// `sitebot serve` on a free port with JSON logs written to `log` and `env` set; its stdout lines after
/// the address it printed, and its port.
fn serve_logging_to(dir: &Path, log: &Path, env: &[(&str, &str)]) -> (std::process::Child, std::io::Lines<std::io::BufReader<std::process::ChildStdout>>, u16) {
    use std::io::{BufRead, BufReader};
    let mut child = sitebot(dir)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("SITEBOT_LOG__FORMAT", "json")
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let port: u16 = lines.next().unwrap().unwrap().strip_prefix("listening on https://127.0.0.1:").unwrap().parse().unwrap();
    (child, lines, port)
}

#[test]
fn serve_prints_the_metrics_address_and_logs_one_line_per_request_without_questions() {
    let dir = tempfile::tempdir().unwrap();
    let site = create_site(dir.path(), "pro")["siteId"].as_str().unwrap().to_owned();
    let log = dir.path().join("stderr.log");
    let (mut child, mut lines, port) = serve_logging_to(dir.path(), &log, &[("SITEBOT_SERVER__METRICS_LISTEN", "127.0.0.1:0")]);
    let metrics_line = lines.next().unwrap().unwrap();
    let metrics = metrics_line.strip_prefix("metrics on ").unwrap_or_else(|| panic!("{metrics_line}")).to_owned();
    assert!(metrics.starts_with("http://127.0.0.1:"), "plain HTTP on loopback: {metrics}");

    let c = client(dir.path());
    let resp = c
        .post(format!("https://127.0.0.1:{port}/v1/query"))
        .header("X-Site-Id", &site)
        .header("X-Request-Id", "req-access-log-1")
        .header("Authorization", "Bearer sbt_not_a_real_token_xyz")
        .json(&json!({"question": "what about my private matter xyzzy?"}))
        .send()
        .unwrap();
    assert_eq!(resp.status(), 401);
    let resp =
        c.post(format!("https://127.0.0.1:{port}/v1/query")).header("X-Site-Id", &site).json(&json!({"question": "plugh opening hours?"})).send().unwrap();
    let request_id = resp.headers()["x-request-id"].to_str().unwrap().to_owned();
    let scraped = reqwest::blocking::get(format!("{metrics}/metrics")).unwrap().text().unwrap();
    assert!(scraped.contains("sitebot_http_requests_total{route=\"/v1/query\",status=\"401\"} 1"), "{scraped}");
    let _ = child.kill();
    let _ = child.wait();

    let stderr = std::fs::read_to_string(&log).unwrap();
    let access: Vec<Value> = stderr.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).filter(|v| v["target"] == "sitebot::access").collect();
    let line = |id: &str| access.iter().find(|v| v["fields"]["request_id"] == id).unwrap_or_else(|| panic!("no access line for {id} in {stderr}")).clone();
    let denied = line("req-access-log-1");
    assert_eq!(denied["fields"]["route"], "/v1/query");
    assert_eq!(denied["fields"]["status"], 401);
    assert_eq!(denied["fields"]["client"], "127.0.0.1");
    assert!(denied["fields"]["duration_ms"].as_f64().is_some());
    let answered = line(&request_id);
    assert_eq!(answered["fields"]["status"], 200);
    assert_eq!(answered["fields"]["site"], site.as_str(), "the site when known");
    for secret in ["xyzzy", "plugh", "sbt_not_a_real_token"] {
        assert!(!stderr.contains(secret), "`{secret}` was logged:\n{stderr}");
    }

    // The operator may have questions logged; secrets still never are.
    let (mut child, _, port) = serve_logging_to(dir.path(), &log, &[("SITEBOT_LOG__QUESTIONS", "true")]);
    let resp = c
        .post(format!("https://127.0.0.1:{port}/v1/query"))
        .header("X-Site-Id", &site)
        .header("Authorization", "Bearer sbt_not_a_real_token_xyz")
        .json(&json!({"question": "plugh opening hours?"}))
        .send()
        .unwrap();
    assert_eq!(resp.status(), 401);
    let resp =
        c.post(format!("https://127.0.0.1:{port}/v1/query")).header("X-Site-Id", &site).json(&json!({"question": "plugh opening hours?"})).send().unwrap();
    assert_eq!(resp.status(), 200);
    let _ = child.kill();
    let _ = child.wait();
    let stderr = std::fs::read_to_string(&log).unwrap();
    let asked = stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["target"] == "sitebot::questions")
        .unwrap_or_else(|| panic!("{stderr}"));
    assert_eq!(asked["fields"]["question"], "plugh opening hours?");
    assert_eq!(asked["fields"]["site"], site.as_str());
    assert!(!stderr.contains("sbt_not_a_real_token"), "{stderr}");
}

/// Issue #11: `webhooks endpoints` shows each endpoint's state, queue and last error; an endpoint that
/// fails for `webhooks.disable_after` (0 s here: at its first failure) is disabled with its event kept,
/// and `webhooks enable` makes it healthy with the event due.
#[test]
fn webhooks_endpoints_shows_a_disabled_endpoint_and_enable_restores_it() {
    let dir = tempfile::tempdir().unwrap();
    let env = [("SITEBOT_WEBHOOKS__ALLOW_HTTP", "true"), ("SITEBOT_WEBHOOKS__ALLOW_PRIVATE_NETWORKS", "true"), ("SITEBOT_WEBHOOKS__DISABLE_AFTER", "0s")];
    // A port nothing listens on: every attempt is refused.
    let (_held, port) = refusing_port();
    let url = format!("http://127.0.0.1:{port}/hook");
    let create = ["site", "create", "--name", "Shop", "--vertical", "dental", "--tier", "pro", "--currency", "EUR", "--lang", "en", "--json"];
    let out = run_ok(sitebot(dir.path()).envs(env).args(create).args(["--webhook-url", &url]));
    let site = serde_json::from_str::<Value>(&out).unwrap()["siteId"].as_str().unwrap().to_owned();
    assert_eq!(run_ok(sitebot(dir.path()).args(["webhooks", "endpoints"])).lines().next().unwrap(), format!("{site}  {url}"));

    let server = serve_with_env(dir.path(), &env);
    assert_eq!(post_lead(&client(dir.path()), server.port, &site).status(), 202);
    let endpoints = |args: &[&str]| run_ok(sitebot(dir.path()).args(["webhooks", "endpoints", "--site", &site]).args(args));
    let deadline = Instant::now() + Duration::from_secs(15);
    let ep = loop {
        let list: Value = serde_json::from_str(&endpoints(&["--json"])).unwrap();
        if list[0]["state"] == "disabled" {
            break list[0].clone();
        }
        assert!(Instant::now() < deadline, "not disabled: {list}");
        std::thread::sleep(Duration::from_millis(50));
    };
    drop(server);
    assert_eq!(ep["siteId"], site.as_str());
    assert_eq!(ep["url"], url.as_str());
    assert_eq!((ep["pending"].as_u64(), ep["inFlight"].as_u64(), ep["consecutiveFailures"].as_u64()), (Some(1), Some(0), Some(1)));
    assert!(ep["disabledAt"].is_string() && ep["failingSince"].is_string());
    let error = ep["lastError"].as_str().unwrap();
    assert!(!error.is_empty());
    let text = endpoints(&[]);
    assert!(text.contains(&format!("state:       disabled since {}", ep["disabledAt"].as_str().unwrap().split('.').next().unwrap())), "{text}");
    assert!(text.contains("pending:     1") && text.contains("failures:    1 in a row, since ") && text.contains(error), "{text}");

    let out = run_ok(sitebot(dir.path()).args(["webhooks", "enable", "--site", &site]));
    assert_eq!(out.trim(), format!("site {site}'s webhook endpoint is enabled; 1 waiting event(s) are due now"));
    let ep: Value = serde_json::from_str(&endpoints(&["--json"])).unwrap();
    assert_eq!((ep[0]["state"].as_str(), ep[0]["pending"].as_u64(), ep[0]["consecutiveFailures"].as_u64()), (Some("healthy"), Some(1), Some(0)));
    assert!(ep[0]["disabledAt"].is_null());
    let missing = run(sitebot(dir.path()).args(["webhooks", "enable", "--site", "00000000-0000-4000-8000-000000000000"]));
    assert!(!missing.status.success());
}

#[test]
fn a_user_added_on_the_command_line_sets_a_password_through_the_printed_link_and_the_audit_log_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let site = create_site(dir.path(), "pro")["siteId"].as_str().unwrap().to_owned();
    // Bad input gets a clear error and changes nothing.
    let out = run(sitebot(dir.path()).args(["user", "add", "--email", "not-an-address", "--admin"]));
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("--email"));
    let out = run(sitebot(dir.path()).args(["user", "add", "--email", "ed@example.com", "--site", &site, "--role", "boss"]));
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("owner, editor or viewer"));
    let out = run(sitebot(dir.path()).args(["user", "add", "--email", "ed@example.com"]));
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("--admin"));

    let server = serve(dir.path());
    let base = format!("https://localhost:{}", server.port);
    let added: Value = serde_json::from_str(&run_ok(
        sitebot(dir.path()).args(["user", "add", "--email", "ed@example.com", "--site", &site, "--role", "editor", "--base-url", &base, "--json"]),
    ))
    .unwrap();
    let link = added["setupLink"].as_str().unwrap().to_owned();
    assert!(link.starts_with(&format!("{base}/console/setup/")) && link.ends_with(&format!("?site={site}")), "{link}");
    let again = run(sitebot(dir.path()).args(["user", "add", "--email", "ED@example.com", "--admin"]));
    assert!(!again.status.success() && String::from_utf8_lossy(&again.stderr).contains("exists"), "one user per address, in any case");

    // The printed link, opened by a client that trusts the server's certificate.
    let client = reqwest::blocking::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(&std::fs::read(dir.path().join("tls/cert.pem")).unwrap()).unwrap())
        .resolve("localhost", std::net::SocketAddr::from(([127, 0, 0, 1], server.port)))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    assert_eq!(client.get(&link).send().unwrap().status(), 200);
    let password = "correct horse battery staple";
    let set = client.post(&link).header("Origin", &base).form(&[("password", password), ("repeat", password)]).send().unwrap();
    assert_eq!(set.status(), 303);
    let listed: Value = serde_json::from_str(&run_ok(sitebot(dir.path()).args(["user", "list", "--json"]))).unwrap();
    assert_eq!(listed[0]["passwordSet"], true);
    assert_eq!(listed[0]["sites"][0]["role"], "editor");

    // A reset: the old link is dead, a new one works, and the audit log has every step.
    let reset: Value =
        serde_json::from_str(&run_ok(sitebot(dir.path()).args(["user", "reset", "--email", "ed@example.com", "--base-url", &base, "--json"]))).unwrap();
    assert_ne!(reset["setupLink"], added["setupLink"]);
    assert!(reset["setupLink"].as_str().unwrap().ends_with(&format!("?site={site}")), "a reset link names a site of the user: {reset}");
    assert_eq!(client.get(&link).send().unwrap().status(), 404);
    assert_eq!(client.get(reset["setupLink"].as_str().unwrap()).send().unwrap().status(), 200);
    run_ok(sitebot(dir.path()).args(["user", "revoke", "--email", "ed@example.com", "--site", &site]));
    run_ok(sitebot(dir.path()).args(["user", "remove", "--email", "ed@example.com"]));
    let audit: Value = serde_json::from_str(&run_ok(sitebot(dir.path()).args(["audit", "--json"]))).unwrap();
    let actions: Vec<&str> = audit.as_array().unwrap().iter().rev().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["user_added", "password_set", "login", "password_reset", "role_revoked", "user_removed"]);
    assert_eq!(audit[0]["actor"], "cli");
    drop(server);
}

/// Rows of every table of a data directory's database, by table, read straight from the file.
fn rows_by_table(dir: &Path) -> Vec<(String, i64)> {
    let db = rusqlite::Connection::open(dir.join("sitebot.db")).unwrap();
    let tables: Vec<String> = db
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    tables.into_iter().map(|t| (t.clone(), db.query_row(&format!("SELECT count(*) FROM \"{t}\""), [], |r| r.get(0)).unwrap())).collect()
}

/// A customer's export, rewritten by someone holding its export key (who can make its checksum and MAC
/// again), is refused whole when it reaches for another site of the importing node: a console role there
/// (with a password), a webhook event, knowledge, a curated answer, or a conversation turn hung on a
/// conversation the file does not hold. The error names the table, and the node is as it was. An edit by
/// someone without the key is refused as altered; the unedited export moves the site, its owner without
/// a password until given a setup link.
#[test]
fn an_import_refuses_an_export_rewritten_to_reach_another_site() {
    use sitebot::secrets::Keyring;
    use sitebot::store::transfer::sign_export;

    let (from, to) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let site = create_site(from.path(), "pro")["siteId"].as_str().unwrap().to_owned();
    let victim = create_site(to.path(), "pro")["siteId"].as_str().unwrap().to_owned();
    let doc = from.path().join("hours.md");
    std::fs::write(&doc, "# Hours\n\nThe clinic opens at eight on weekdays.\n").unwrap();
    for (dir, s) in [(from.path(), &site), (to.path(), &victim)] {
        run_ok(sitebot(dir).args(["knowledge", "import", "--site", s]).arg(&doc));
    }
    run_ok(sitebot(from.path()).args(["user", "add", "--email", "mover@example.com", "--site", &site, "--role", "owner"]));
    run_ok(sitebot(to.path()).args(["user", "add", "--email", "stays@example.com", "--site", &victim, "--role", "owner"]));
    let file = from.path().join("moving.site");
    let exported: Value = serde_json::from_str(&run_ok(sitebot(from.path()).args(["site", "export", &site, "--json", "--to"]).arg(&file))).unwrap();
    let key = exported["exportKey"].as_str().unwrap().to_owned();
    let edit = |name: &str, sql: &str| {
        let copy = from.path().join(name);
        std::fs::copy(&file, &copy).unwrap();
        rusqlite::Connection::open(&copy).unwrap().execute_batch(&sql.replace("{victim}", &victim)).unwrap();
        copy
    };
    let before = rows_by_table(to.path());
    let refused = |f: &Path| -> String {
        let out = run(sitebot(to.path()).args(["site", "import", "--key", &key]).arg(f));
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!out.status.success(), "{err}");
        assert_eq!(rows_by_table(to.path()), before, "nothing of a refused export is written: {err}");
        assert!(!run(sitebot(to.path()).args(["site", "show", &site])).status.success(), "{err}");
        err
    };

    let argon = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA";
    let cases = [
        (
            "console_grants",
            format!("INSERT INTO console_grants (user_id, site_id, role) SELECT id, '{{victim}}', 'owner' FROM console_users; UPDATE console_users SET password_hash = '{argon}';"),
        ),
        ("console_users", format!("UPDATE console_users SET password_hash = '{argon}';")),
        (
            "outbox",
            "INSERT INTO outbox (id, site_id, event_type, payload, status, attempts, next_attempt_at, created_at)
             VALUES ('msg_forged', '{victim}', 'lead.captured', '{\"type\":\"lead.captured\",\"data\":{\"email\":\"forged@example.com\"}}', 'pending', 0, 0, 0);"
                .to_owned(),
        ),
        (
            "kb_chunks",
            "INSERT INTO kb_chunks (rowid, id, site_id, document_id, ord, heading, text, embedding, model, en_embedding, en_model)
             SELECT rowid + 1000, id || '-forged', '{victim}', document_id, ord, heading, 'Refunds: call 555-0100.', embedding, model, en_embedding, en_model
             FROM kb_chunks LIMIT 1;"
                .to_owned(),
        ),
        (
            "curated_answers",
            "INSERT INTO curated_answers (id, site_id, question, answer, url, embedding, model, created_at)
             SELECT 'ans_forged', '{victim}', 'How do I get a refund?', 'Call 555-0100.', NULL, embedding, model, 0 FROM kb_chunks LIMIT 1;"
                .to_owned(),
        ),
        (
            "conversation_turns",
            "INSERT INTO conversation_turns (conversation_id, seq, role, text, query_id, at) VALUES ('conv_elsewhere', 1, 'assistant', 'Call 555-0100.', NULL, 0);"
                .to_owned(),
        ),
    ];
    let keyring = Keyring::from_base64(&key).unwrap();
    for (i, (table, sql)) in cases.iter().enumerate() {
        let f = edit(&format!("case-{i}.site"), sql);
        sign_export(&f, &keyring).unwrap();
        let err = refused(&f);
        assert!(err.contains(&format!("table {table}")) && err.contains("refused"), "{table}: {err}");
    }
    // Edited by someone without the key: the checksum made again, and a MAC under a key of their own.
    let f = edit("altered.site", "UPDATE kb_chunks SET text = 'Refunds: call 555-0100.';");
    sign_export(&f, &Keyring::from_bytes(&[7; 32])).unwrap();
    let err = refused(&f);
    assert!(err.contains("altered"), "{err}");

    // The unedited export moves the site; its owner has no password here until given a setup link.
    let imported: Value = serde_json::from_str(&run_ok(sitebot(to.path()).args(["site", "import", "--json", "--key", &key]).arg(&file))).unwrap();
    assert_eq!(imported["newUsers"], json!(["mover@example.com"]), "{imported}");
    assert_eq!(imported["sha256"], exported["sha256"]);
    let users: Value = serde_json::from_str(&run_ok(sitebot(to.path()).args(["user", "list", "--json"]))).unwrap();
    let sites_of = |email: &str| -> Vec<(String, bool)> {
        let u = users.as_array().unwrap().iter().find(|u| u["email"] == email).unwrap_or_else(|| panic!("{email}: {users}"));
        u["sites"].as_array().unwrap().iter().map(|g| (g["site"].as_str().unwrap().to_owned(), u["passwordSet"].as_bool().unwrap())).collect()
    };
    assert_eq!(sites_of("mover@example.com"), vec![(site.clone(), false)]);
    assert_eq!(sites_of("stays@example.com"), vec![(victim.clone(), false)]);
    let reset: Value = serde_json::from_str(&run_ok(sitebot(to.path()).args(["user", "reset", "--email", "mover@example.com", "--json"]))).unwrap();
    assert!(reset["setupLink"].as_str().unwrap().ends_with(&format!("?site={site}")), "{reset}");
}

#[test]
fn the_demo_prints_its_real_address_a_console_link_and_serves_a_page_with_the_widget() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = sitebot(dir.path()).args(["demo", "--listen", "127.0.0.1:0"]).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
    let mut banner = Vec::new();
    let port: u16 = loop {
        let line = lines.next().expect("the demo printed its address").unwrap();
        if let Some(addr) = line.strip_prefix("listening on https://127.0.0.1:") {
            break addr.trim().parse().unwrap();
        }
        banner.push(line);
    };
    let banner = banner.join("\n");
    let base = format!("https://127.0.0.1:{port}");
    assert!(!banner.contains("PORT") && !banner.contains("BASE"), "{banner}");
    assert!(banner.contains(&format!("{base}/v1/query")) && banner.contains(&format!("{base}/v1/leads")), "{banner}");
    let link = banner.lines().find_map(|l| l.split_once("(one-time link): ").map(|(_, u)| u.trim().to_owned())).expect("a console link");
    assert!(link.starts_with(&format!("{base}/console/setup/")), "{link}");
    assert!(banner.contains(&format!("{base}/demo/")), "{banner}");

    let c = client(dir.path());
    let page = c.get(format!("{base}/demo/")).send().unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.headers()["content-security-policy"].to_str().unwrap().contains("script-src 'self'"));
    let page = page.text().unwrap();
    let site = run_ok(sitebot(dir.path()).args(["site", "list", "--json"]));
    let site: Value = serde_json::from_str(&site).unwrap();
    let id = site[0]["id"].as_str().unwrap();
    assert!(page.contains(&format!("<script src=\"/v1/widget.js\" data-site-id=\"{id}\" async></script>")), "{page}");
    assert_eq!(c.get(&link).send().unwrap().status(), 200, "the console link works");
    let _ = child.kill();
    let _ = child.wait();

    // A later start prints a new link (the first is dead); `serve` has no demo page.
    let mut again = sitebot(dir.path()).args(["demo", "--listen", "127.0.0.1:0"]).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(again.stdout.take().unwrap()));
    let mut second = None;
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some((_, u)) = line.split_once("(one-time link): ") {
            second = Some(u.trim().to_owned());
        }
        if line.starts_with("listening on ") {
            break;
        }
    }
    let second = second.expect("a new link");
    assert_ne!(second, link);
    let _ = again.kill();
    let _ = again.wait();
    let server = serve(dir.path());
    assert_eq!(c.get(format!("https://127.0.0.1:{}/demo/", server.port)).send().unwrap().status(), 404);
}

#[test]
fn dictionaries_are_packed_beside_their_sources_and_doctor_says_which_are() {
    let cache = sitebot::knowledge::embedding::runtime::cache_dir().expect("a cache directory").join("dictionaries");
    let dicts = tempfile::tempdir().unwrap();
    for f in sitebot::knowledge::search::dictionary::files() {
        std::fs::copy(cache.join(&f), dicts.path().join(&f)).unwrap_or_else(|e| panic!("{f} (run ./install.sh --deps-only): {e}"));
    }
    let data = tempfile::tempdir().unwrap();
    let doctor = || {
        let out = run(sitebot(data.path()).env("SITEBOT_KNOWLEDGE__DICTIONARIES_DIR", dicts.path()).arg("doctor"));
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        stdout.lines().filter(|l| l.contains("dictionaries")).map(str::to_owned).collect::<Vec<_>>()
    };
    let before = doctor();
    assert!(before[0].starts_with("ok") && before[0].contains("de 293213,") && !before[0].contains("packed"), "{before:?}");
    assert!(before.iter().any(|l| l.starts_with("note") && l.contains("pack-dictionaries")), "{before:?}");

    let packed = run_ok(sitebot(data.path()).args(["pack-dictionaries", "--dir"]).arg(dicts.path()));
    assert_eq!(packed.lines().filter(|l| l.starts_with("packed ")).count(), sitebot::knowledge::search::dictionary::LANGUAGES, "{packed}");
    assert!(packed.contains("packed de: 293213 words, 10.6 MB") && packed.contains("packed hi: 11239 words"), "{packed}");
    assert!(packed.contains("packed th: 98636 words, 5.2 MB"), "Thai WordNet's lemmas and the Thai word lists: {packed}");
    assert!(
        packed.contains("packed vi: 142720 words, 4.9 MB"),
        "CC-CEDICT's words of two and three characters by their Vietnamese readings, and the localization files' words and those their sentences pair: {packed}"
    );
    let after = doctor();
    assert!(
        after[0].contains("de 293213 packed")
            && after[0].contains("zh 114864 packed")
            && after[0].contains("hi 11239 packed")
            && after[0].contains("th 98636 packed")
            && after[0].contains("vi 142720 packed"),
        "{after:?}"
    );
    assert_eq!(after.len(), 1, "no note once all are packed: {after:?}");

    // A directory without them: an error naming the files, and nothing written.
    let empty = tempfile::tempdir().unwrap();
    let out = run(sitebot(data.path()).args(["pack-dictionaries", "--dir"]).arg(empty.path()));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("freedict-deu-eng.index"), "{out:?}");
    assert_eq!(std::fs::read_dir(empty.path()).unwrap().count(), 0);
}

/// `install.sh` runs for minutes, and bash reads a script as it runs it: once `main` returned, it went on
/// reading the file from its old place, so a file edited in place meanwhile (a pull, an editor) had whatever
/// lay there run. Its dispatch block, as it is in the file, after a stand-in `main` that waits while the file
/// is rewritten with a line more at its top: `main` runs once and nothing after it does.
#[test]
fn install_sh_runs_nothing_after_main_even_when_edited_while_it_runs() {
    let installer = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/install.sh")).unwrap();
    let dispatch = &installer[installer.rfind("\nif [ \"${BASH_SOURCE[0]}\" = \"$0\" ]; then").expect("the dispatch block")..];
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("install.sh");
    let (started, go) = (dir.path().join("started"), dir.path().join("go"));
    // The stand-in `main` says it started, then waits until the file has been rewritten.
    let body = format!(
        "#!/usr/bin/env bash\nset -euo pipefail\nmain() {{\n  touch '{}'\n  while [ ! -e '{}' ]; do sleep 0.05; done\n  echo main-ran\n}}\n{dispatch}",
        started.display(),
        go.display()
    );
    std::fs::write(&script, &body).unwrap();
    let child = Command::new("bash").arg(&script).stdout(Stdio::piped()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !started.exists() {
        assert!(Instant::now() < deadline, "the script never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Rewritten in place (same file, not replaced): bash's open file now holds the new text.
    let shebang = "#!/usr/bin/env bash\n";
    let edited = format!("{shebang}# a line added while it ran, long enough to move everything below it\necho edited-text-ran\n{}", &body[shebang.len()..]);
    std::io::Write::write_all(&mut std::fs::OpenOptions::new().write(true).truncate(true).open(&script).unwrap(), edited.as_bytes()).unwrap();
    std::fs::write(&go, "").unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(stdout.matches("main-ran").count(), 1, "main ran once: {stdout}");
    assert!(!stdout.contains("edited-text-ran"), "nothing of the edited file ran: {stdout}");
}
