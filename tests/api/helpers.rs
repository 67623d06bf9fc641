#![allow(dead_code)] // shared by every test module; each uses a subset
//! `spawn_app`: the real server, in-process, on port 0 over real TLS, with a fresh data directory
//! (SQLite file, certificate, keys) per test. The client trusts exactly that server's self-signed
//! certificate, so TLS is verified as a real client would. The server runs through the composition root
//! `sitebot serve` runs (`server::Server::run`): every task of a server, the crawl scheduler, the index
//! refresh and housekeeping included. Only the background webhook worker is left out unless a test asks
//! for it (`spawn_app_with_worker`): tests deliver with `deliver_due`, which drives the real worker one
//! `run_once` at a time.

use std::net::SocketAddr;
use std::sync::Arc;

use sitebot::app::AppState;
use sitebot::config::Config;
use sitebot::domain::{Currency, Lang, Origin, Tier, WebhookUrl};
use sitebot::http::tls;
use sitebot::ratelimit::ManualClock;
use sitebot::server::{Ended, Server};
use sitebot::store::{NewSite, Site, SiteCredentials};
use tokio::sync::oneshot;

pub struct TestApp {
    pub addr: SocketAddr,
    /// `https://127.0.0.1:PORT`
    pub base: String,
    /// Trusts this server's certificate only; HTTP/1.1 and h2 by ALPN.
    pub client: reqwest::Client,
    pub state: Arc<AppState>,
    /// The rate limiter's clock: advance it instead of sleeping.
    pub clock: ManualClock,
    pub data_dir: tempfile::TempDir,
    /// PEM of the server certificate, for other clients.
    pub cert_pem: Vec<u8>,
    shutdown: Option<oneshot::Sender<()>>,
    handle: Option<tokio::task::JoinHandle<anyhow::Result<Ended>>>,
}

/// A config for tests: loopback, any port, short grace.
pub fn test_config() -> Config {
    let mut c = Config::default();
    c.server.listen = "127.0.0.1:0".parse().unwrap();
    c.server.shutdown_grace_secs = 2;
    c
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(test_config()).await
}

pub async fn spawn_app_with(config: Config) -> TestApp {
    let data_dir = tempfile::tempdir().expect("temp dir");
    spawn_app_in(config, data_dir).await
}

/// Starts the server on an existing data directory (to test restarts and CLI writes).
pub async fn spawn_app_in(config: Config, data_dir: tempfile::TempDir) -> TestApp {
    spawn_serving_in(config, data_dir, sitebot::server::routes, false).await
}

/// As `spawn_app_with`, with the webhook worker delivering in the background as in `sitebot serve`.
pub async fn spawn_app_with_worker(config: Config) -> TestApp {
    spawn_serving_in(config, tempfile::tempdir().expect("temp dir"), sitebot::server::routes, true).await
}

/// Starts the server with `endpoint(state)` in place of the route table, e.g. test handlers behind the
/// real `Edge`.
pub async fn spawn_app_serving<E>(config: Config, endpoint: impl FnOnce(Arc<AppState>) -> E) -> TestApp
where
    E: poem::Endpoint<Output = poem::Response> + 'static,
{
    spawn_serving_in(config, tempfile::tempdir().expect("temp dir"), endpoint, false).await
}

async fn spawn_serving_in<E>(config: Config, data_dir: tempfile::TempDir, endpoint: impl FnOnce(Arc<AppState>) -> E, delivery: bool) -> TestApp
where
    E: poem::Endpoint<Output = poem::Response> + 'static,
{
    let clock = ManualClock::default();
    let server = Server::bind(config, data_dir.path().to_owned(), Arc::new(clock.clone())).await.expect("server");
    let server = if delivery { server } else { server.without_background_delivery() };
    let addr = server.addr().unwrap();
    let state = server.state().clone();
    let (tx, rx) = oneshot::channel::<()>();
    let endpoint = endpoint(state.clone());
    let handle = tokio::spawn(server.run_serving(endpoint, async {
        let _ = rx.await;
    }));
    let cert_pem = std::fs::read(tls::self_signed_paths(data_dir.path()).0).unwrap();
    let client = client_for(&cert_pem);
    TestApp { addr, base: format!("https://127.0.0.1:{}", addr.port()), client, state, clock, data_dir, cert_pem, shutdown: Some(tx), handle: Some(handle) }
}

fn client_builder(cert_pem: &[u8]) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(cert_pem).unwrap())
        .redirect(reqwest::redirect::Policy::none())
}

/// A client of the test server; it speaks HTTP/2 (ALPN), as browsers do.
pub fn client_for(cert_pem: &[u8]) -> reqwest::Client {
    client_builder(cert_pem).build().unwrap()
}

/// The same client told to speak HTTP/1.1 only.
pub fn http1_client_for(cert_pem: &[u8]) -> reqwest::Client {
    client_builder(cert_pem).http1_only().build().unwrap()
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// A site on `tier` with default settings (EUR, en, any origin, no webhook).
    pub async fn create_site(&self, tier: Tier) -> (Site, SiteCredentials) {
        self.create_site_with(new_site(tier)).await
    }

    pub async fn create_site_with(&self, new: NewSite) -> (Site, SiteCredentials) {
        self.state.store.run(move |s| s.sites().create(new)).await.expect("create site")
    }

    /// The database file, opened as an operator's `sqlite3` would: tests inspect what was stored.
    pub fn db(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.data_dir.path().join("sitebot.db")).expect("open the database file")
    }

    /// A count read straight from the database file.
    pub fn count(&self, sql: &str, params: impl rusqlite::Params) -> i64 {
        self.db().query_row(sql, params, |r| r.get(0)).expect("count query")
    }

    /// One step of webhook delivery: everything due now is delivered by the real worker (`run_once`);
    /// when nothing was due, waits until the next event falls due (at most a second).
    pub async fn deliver_due(&self) {
        let worker = sitebot::outbox::Worker::new(self.state.clone()).expect("webhook worker");
        if worker.run_once().await.expect("deliver").claimed > 0 {
            return;
        }
        let next = worker.next_due().await.expect("outbox");
        let now = sitebot::domain::Timestamp::now().as_millis();
        let wait = next.map_or(10, |t| (t.as_millis() - now).clamp(1, 1000));
        tokio::time::sleep(std::time::Duration::from_millis(wait as u64)).await;
    }

    /// Delivers until `done` holds, failing the test after 15 s.
    pub async fn deliver_until(&self, mut done: impl FnMut() -> bool) {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(15);
        while !done() {
            assert!(tokio::time::Instant::now() < deadline, "webhook delivery did not reach the expected state in 15 s");
            self.deliver_due().await;
        }
    }

    /// Waits for the start-up re-embedding (`knowledge::refresh`) to finish and returns what it did.
    pub async fn refreshed(&mut self) -> sitebot::knowledge::import::refresh::Reembedded {
        let mut done = self.state.refreshed.subscribe();
        done.wait_for(Option::is_some).await.expect("the server publishes the refresh report").clone().expect("done")
    }

    /// Stops the server and waits for it to finish.
    pub async fn stop(mut self) -> tempfile::TempDir {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(h) = self.handle.take() {
            let ended = h.await.expect("server task").expect("server result");
            assert!(matches!(ended, Ended::Signal), "a task ended before the shutdown signal: {ended:?}");
        }
        let dir = tempfile::tempdir().unwrap();
        std::mem::replace(&mut self.data_dir, dir)
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

pub fn new_site(tier: Tier) -> NewSite {
    NewSite::new("Test Site", sitebot::domain::Slug::vertical("dental").unwrap(), tier, Currency::parse("EUR").unwrap(), Lang::parse("en").unwrap())
}

pub fn with_origins(mut s: NewSite, origins: &[&str]) -> NewSite {
    s.allowed_origins = origins.iter().map(|o| Origin::parse(o).unwrap()).collect();
    s
}

pub fn with_webhook(mut s: NewSite, url: &str) -> NewSite {
    s.webhook_url = Some(WebhookUrl::parse(url, &sitebot::domain::NetworkPolicy::private()).unwrap());
    s
}

/// The rate-limit headers describe one bucket: what is left is never above its limit, and the policy
/// names the same capacity.
pub fn assert_rate_headers_agree(h: &reqwest::header::HeaderMap) {
    let n = |name: &str| h[name].to_str().unwrap().parse::<u64>().unwrap_or_else(|_| panic!("{name} is a whole number"));
    let (limit, remaining) = (n("x-ratelimit-limit"), n("x-ratelimit-remaining"));
    assert!(remaining <= limit, "X-RateLimit-Remaining {remaining} above X-RateLimit-Limit {limit}");
    let policy = h["x-ratelimit-policy"].to_str().unwrap();
    assert!(policy.ends_with(&format!(";w=60;burst={limit}")), "policy {policy} against limit {limit}");
}

/// Parses a problem+json response and checks the envelope every error shares.
pub async fn problem(resp: reqwest::Response, status: u16, code: &str) -> serde_json::Value {
    assert_eq!(resp.status().as_u16(), status, "status for expected {code}");
    assert_eq!(resp.headers()["content-type"], "application/problem+json");
    for h in ["x-request-id", "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "x-ratelimit-policy"] {
        assert!(resp.headers().contains_key(h), "{code}: missing {h}");
    }
    assert_rate_headers_agree(resp.headers());
    let request_id = resp.headers()["x-request-id"].to_str().unwrap().to_owned();
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["code"], code, "{body}");
    assert_eq!(body["status"], status);
    assert_eq!(body["type"], format!("urn:sitebot:problem:{code}"));
    assert_eq!(body["requestId"], request_id);
    assert!(body["title"].is_string() && body["detail"].is_string());
    body
}

/// A loopback port held for as long as the returned socket lives: bound with `SO_REUSEADDR` but never
/// listening, so it refuses connections, and no other socket is given it, until a server that sets
/// `SO_REUSEADDR` too (sitebot's listener, Python's asyncio servers) binds and listens on it. A port freed
/// by dropping a listener can be given to another test's server meanwhile.
pub fn held_port() -> (tokio::net::TcpSocket, u16) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_reuseaddr(true).unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let port = socket.local_addr().unwrap().port();
    (socket, port)
}
