//! Crash safety with the built binary: 200 leads accepted, the server killed with SIGKILL while webhook
//! deliveries are in flight, restarted on the same data directory. Every lead is in the database and
//! the receiver ends up with every event (at least once: duplicates allowed, losses not).

#[path = "api/receiver.rs"]
mod receiver;
#[path = "common/served.rs"]
mod served;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use receiver::Receiver;
use tokio::process::{Child, Command};

const LEADS: usize = 200;

fn sitebot(data_dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sitebot"));
    cmd.arg("--data-dir")
        .arg(data_dir)
        .env("SITEBOT_WEBHOOKS__ALLOW_HTTP", "true")
        .env("SITEBOT_WEBHOOKS__ALLOW_PRIVATE_NETWORKS", "true")
        .env("SITEBOT_WEBHOOKS__RETRY_SCHEDULE", r#"["50ms", "100ms", "200ms", "500ms", "1s", "1s"]"#)
        .env("SITEBOT_WEBHOOKS__MIN_BACKOFF_AFTER_THROTTLE", "100ms")
        // A 1 s timeout makes the lease 4 s, so the restarted server re-claims the killed one's rows soon.
        .env("SITEBOT_WEBHOOKS__TIMEOUT_SECS", "1")
        .env("SITEBOT_WEBHOOKS__WORKERS", "8")
        .env("SITEBOT_LOG__LEVEL", "warn")
        .kill_on_drop(true);
    cmd
}

/// Starts `serve` on a free port and returns it with its HTTPS base URL, read from its banner.
async fn serve(data_dir: &Path) -> (Child, String) {
    serve_with(data_dir, &[]).await
}

async fn serve_with(data_dir: &Path, env: &[(&str, &str)]) -> (Child, String) {
    let mut cmd = sitebot(data_dir);
    cmd.envs(env.iter().copied());
    served::serve_on_free_port(cmd).await
}

async fn run(data_dir: &Path, args: &[&str]) -> String {
    let out = sitebot(data_dir).args(args).output().await.unwrap();
    assert!(out.status.success(), "sitebot {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

async fn create_site(data_dir: &Path, hook: &str) -> serde_json::Value {
    let created = run(
        data_dir,
        &[
            "site", "create", "--json", "--name", "Crash", "--vertical", "dental", "--tier", "enterprise", "--currency", "EUR", "--lang", "en",
            "--webhook-url", hook,
        ],
    )
    .await;
    serde_json::from_str(&created).unwrap()
}

fn private_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    dir
}

fn trusting_client(data_dir: &Path) -> reqwest::Client {
    let pem = std::fs::read(sitebot::http::tls::self_signed_paths(data_dir).0).unwrap();
    reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(&pem).unwrap())
        .build()
        .unwrap()
}

async fn crash_and_recover() {
    let dir = private_dir();
    let rx = Receiver::start().await;
    // Slow enough that deliveries are in flight when the server dies.
    rx.set_delay(Duration::from_millis(100));
    let creds = create_site(dir.path(), &rx.url("/hook")).await;
    let site_id = creds["siteId"].as_str().unwrap().to_owned();

    let (mut server, base) = serve(dir.path()).await;
    let client = trusting_client(dir.path());
    let posts = (0..LEADS).map(|i| {
        let (client, base, site_id) = (client.clone(), base.clone(), site_id.clone());
        async move {
            let resp = client
                .post(format!("{base}/v1/leads"))
                .header("X-Site-Id", site_id)
                .json(&serde_json::json!({"name": format!("Lead {i}"), "email": format!("lead{i}@example.com")}))
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), 202);
            resp.json::<serde_json::Value>().await.unwrap()["id"].as_str().unwrap().to_owned()
        }
    });
    use futures_util::StreamExt;
    let accepted: BTreeSet<String> = futures_util::stream::iter(posts).buffer_unordered(16).collect().await;
    assert_eq!(accepted.len(), LEADS);

    rx.wait_for(20, Duration::from_secs(15)).await;
    server.kill().await.unwrap(); // SIGKILL: no graceful anything
    let at_kill = rx.distinct_ids().len();
    assert!(at_kill < LEADS, "the kill must land while deliveries remain ({at_kill} of {LEADS} already delivered)");

    let (mut server, _) = serve(dir.path()).await;
    // Done when the database has no pending event left: the rows leased by the killed server were
    // claimed again once their lease ran out, and sent again.
    loop {
        let pending = run(dir.path(), &["webhooks", "list", "--site", &site_id, "--status", "pending", "--json"]).await;
        if serde_json::from_str::<serde_json::Value>(&pending).unwrap().as_array().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    server.kill().await.unwrap();
    let got = rx.requests();
    let ids: BTreeSet<String> = got.iter().map(|r| r.id()).collect();
    assert_eq!(ids.len(), LEADS, "200 distinct webhook-ids");
    let delivered_leads: BTreeSet<String> = got.iter().map(|r| r.json()["data"]["leadId"].as_str().unwrap().to_owned()).collect();
    assert_eq!(delivered_leads, accepted, "every accepted lead reached the receiver");
    // The deliveries cut by the kill were never recorded, so they went out again with the same id.
    assert!(got.len() > ids.len(), "the kill landed mid-delivery: some events were sent twice ({} requests)", got.len());
    eprintln!("crash test: {at_kill} events delivered before the kill, {} requests in all for {} events", got.len(), ids.len());

    let export = run(dir.path(), &["leads", "export", "--site", &site_id, "--format", "jsonl"]).await;
    let exported: BTreeSet<String> =
        export.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["leadId"].as_str().unwrap().to_owned()).collect();
    assert_eq!(exported, accepted, "no accepted lead is missing from the database");
    let csv = run(dir.path(), &["leads", "export", "--site", &site_id]).await;
    assert_eq!(csv.lines().count(), LEADS + 1, "a header and one row per lead");
    let listed = run(dir.path(), &["webhooks", "list", "--site", &site_id, "--status", "delivered", "--limit", "1000", "--json"]).await;
    assert_eq!(serde_json::from_str::<serde_json::Value>(&listed).unwrap().as_array().unwrap().len(), LEADS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn killed_mid_delivery_loses_nothing() {
    tokio::time::timeout(Duration::from_secs(55), crash_and_recover()).await.expect("the crash test finishes in under a minute");
}

/// The admin commands, black-box: `webhooks test` (signed, synchronous), `list`, `show` and `purge`.
#[tokio::test]
async fn webhook_admin_commands() {
    let dir = private_dir();
    let rx = Receiver::start().await;
    let creds = create_site(dir.path(), &rx.url("/hook")).await;
    let (site_id, secret) = (creds["siteId"].as_str().unwrap().to_owned(), creds["webhookSecret"].as_str().unwrap().to_owned());

    let out = run(dir.path(), &["webhooks", "test", "--site", &site_id]).await;
    assert!(out.contains("status: 200") && out.contains("body: answered 200"), "{out}");
    let r = rx.wait_for(1, Duration::from_secs(5)).await.remove(0);
    standardwebhooks::Webhook::new(&secret).unwrap().verify(&r.body, &r.headers).expect("the test event is signed");
    assert_eq!(r.json()["type"], "webhook.test");
    assert_eq!(r.json()["data"]["siteId"], site_id.as_str());
    rx.set_default(receiver::Reply::Status(500));
    let failed = sitebot(dir.path()).args(["webhooks", "test", "--site", &site_id]).output().await.unwrap();
    assert!(!failed.status.success());
    assert!(String::from_utf8_lossy(&failed.stdout).contains("status: 500"));

    // A lead whose event dies (one retry, then dead) through a real server.
    let (mut server, base) = serve_with(dir.path(), &[("SITEBOT_WEBHOOKS__RETRY_SCHEDULE", r#"["10ms"]"#)]).await;
    let resp = trusting_client(dir.path())
        .post(format!("{base}/v1/leads"))
        .header("X-Site-Id", &site_id)
        .json(&serde_json::json!({"email": "ada@example.com"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 202);
    let dead = loop {
        let listed = run(dir.path(), &["webhooks", "list", "--status", "dead", "--json"]).await;
        let listed: serde_json::Value = serde_json::from_str(&listed).unwrap();
        if let Some(m) = listed.as_array().unwrap().first() {
            break m["id"].as_str().unwrap().to_owned();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    server.kill().await.unwrap();
    let shown = run(dir.path(), &["webhooks", "show", &dead]).await;
    assert!(shown.contains("status:        dead") && shown.contains("attempts:      2"), "{shown}");
    assert_eq!(shown.matches("status 500").count(), 2, "{shown}");
    assert!(run(dir.path(), &["webhooks", "list"]).await.contains(&dead));
    let purged = run(dir.path(), &["webhooks", "purge", "--status", "dead", "--site", &site_id]).await;
    assert!(purged.contains("purged 1"), "{purged}");
    assert!(!run(dir.path(), &["webhooks", "list"]).await.contains(&dead));
}
