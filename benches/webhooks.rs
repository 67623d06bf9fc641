//! Lead capture and webhook delivery throughput: 1,000 leads posted over TLS at concurrency 32 to an
//! in-process server, forwarded to a receiver on loopback. Prints leads accepted a second, the time from
//! a lead's 202 to its delivery (p50, p99, max) and how many were delivered (must be all); then the same
//! for 100 leads one at a time (latency with no queue). A delivery can reach the receiver before the
//! client has read its 202, so small latencies are floored at 0.
//!
//! Then one slow endpoint beside a healthy one: a second site's webhook is a black hole (accepts TCP, never
//! answers, so each attempt runs into `webhooks.timeout_secs`) with `SITEBOT_BENCH_BACKLOG` (200) leads
//! queued; for `SITEBOT_BENCH_WINDOW_SECS` (60) a lead is posted to the healthy site every 100 ms, and the
//! bench prints how many of them reached its receiver within the window: deliveries a minute to a healthy
//! endpoint while a black-holed one is present.
//!
//! Run: `cargo test --release --bench webhooks` (reuses the release build of the rest of the tree).
//! `SITEBOT_BENCH_LEADS`, `SITEBOT_BENCH_CONCURRENCY` and `SITEBOT_WEBHOOKS__WORKERS` change the shape;
//! `SITEBOT_BENCH_BLACKHOLE_ONLY=1` runs only the black-hole phase.

#[path = "../tests/api/receiver.rs"]
mod receiver;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use sitebot::app::AppState;
use sitebot::config::Config;
use sitebot::domain::{Currency, Lang, NetworkPolicy, Slug, Tier, WebhookUrl};
use sitebot::http::tls;
use sitebot::ratelimit::SystemClock;
use sitebot::server::Server;
use sitebot::store::NewSite;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument that is not ours means "not this bench".
    if std::env::args().skip(1).any(|a| !a.starts_with('-') && !"webhooks".contains(a.as_str())) {
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(bench());
}

async fn bench() {
    let leads = env_usize("SITEBOT_BENCH_LEADS", 1000);
    let concurrency = env_usize("SITEBOT_BENCH_CONCURRENCY", 32);
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.server.listen = "127.0.0.1:0".parse().unwrap();
    // One client address drives all the load: the per-client caps would refuse it.
    config.server.max_handshakes_per_ip = 4096;
    config.server.max_connections_per_ip = 4096;
    config.webhooks.allow_http = true;
    config.webhooks.allow_private_networks = true;
    config.webhooks.workers = env_usize("SITEBOT_WEBHOOKS__WORKERS", config.webhooks.workers);
    let workers = config.webhooks.workers;
    let timeout_secs = config.webhooks.timeout_secs;

    let rx = receiver::Receiver::start().await;
    let bound = Server::bind(config, dir.path().to_owned(), Arc::new(SystemClock::default())).await.unwrap();
    let base = format!("https://{}", bound.addr().unwrap());
    let state = bound.state().clone();
    let url = WebhookUrl::parse(&rx.url("/hook"), &NetworkPolicy::private()).unwrap();
    let mut new = NewSite::new("Bench", Slug::vertical("dental").unwrap(), Tier::Enterprise, Currency::parse("EUR").unwrap(), Lang::parse("en").unwrap());
    new.webhook_url = Some(url);
    let (site, _) = state.store.run(move |s| s.sites().create(new)).await.unwrap();
    let hole = receiver::BlackHole::start().await;
    let healthy_rx = receiver::Receiver::start().await;
    let hole_site = bench_site(&state, "Hole", &hole.url("/hook")).await;
    let healthy_site = bench_site(&state, "Healthy", &healthy_rx.url("/hook")).await;
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    // Every task of `sitebot serve`, the webhook worker included.
    let server = tokio::spawn(bound.run(async {
        let _ = stop_rx.await;
    }));

    let pem = std::fs::read(tls::self_signed_paths(dir.path()).0).unwrap();
    let client = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(&pem).unwrap())
        .pool_max_idle_per_host(concurrency)
        .build()
        .unwrap();
    println!("webhooks bench: webhooks.workers {workers}, receiver on loopback (plain HTTP), server over TLS in-process");
    let ctx = Phase { client, base, site_id: site.id.to_string(), rx: rx.clone() };
    if std::env::var("SITEBOT_BENCH_BLACKHOLE_ONLY").is_err() {
        let burst = ctx.run("burst", leads, concurrency).await;
        // One at a time: the latency of a delivery when nothing is queued ahead of it.
        let trickle = ctx.run("trickle", 100, 1).await;
        assert_eq!(burst, leads, "every lead must be delivered");
        assert_eq!(trickle, 100, "every lead must be delivered");
    }
    let backlog = env_usize("SITEBOT_BENCH_BACKLOG", 200);
    let window = Duration::from_secs(env_usize("SITEBOT_BENCH_WINDOW_SECS", 60) as u64);
    let hole_phase = Phase { site_id: hole_site, rx: healthy_rx.clone(), ..ctx };
    hole_phase.post_many(backlog, concurrency).await;
    let healthy = Phase { site_id: healthy_site, ..hole_phase };
    let started = Instant::now();
    let mut offered = 0;
    while started.elapsed() < window {
        healthy.post_many(1, 1).await;
        offered += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let end = started + window;
    let delivered: std::collections::HashSet<String> = healthy_rx.requests().iter().filter(|r| r.at <= end).map(|r| r.id()).collect();
    println!("black hole: {backlog} leads queued for a site whose endpoint never answers (timeout {timeout_secs} s), a lead every 100 ms to a healthy site");
    println!(
        "  healthy endpoint: {} of {offered} delivered within {:.0} s = {:.0} deliveries a minute; black hole: {} attempts",
        delivered.len(),
        window.as_secs_f64(),
        delivered.len() as f64 * 60.0 / window.as_secs_f64(),
        hole.connections()
    );
    let _ = stop_tx.send(());
    let _ = server.await;
}

async fn bench_site(state: &Arc<AppState>, name: &str, url: &str) -> String {
    let url = WebhookUrl::parse(url, &NetworkPolicy::private()).unwrap();
    let mut new = NewSite::new(name, Slug::vertical("dental").unwrap(), Tier::Enterprise, Currency::parse("EUR").unwrap(), Lang::parse("en").unwrap());
    new.webhook_url = Some(url);
    let (site, _) = state.store.run(move |s| s.sites().create(new)).await.unwrap();
    site.id.to_string()
}

struct Phase {
    client: reqwest::Client,
    base: String,
    site_id: String,
    rx: receiver::Receiver,
}

impl Phase {
    /// Posts `leads` leads at `concurrency`; returns when every one was accepted.
    async fn post_many(&self, leads: usize, concurrency: usize) {
        let posts = (0..leads).map(|i| {
            let (client, base, site_id) = (self.client.clone(), self.base.clone(), self.site_id.clone());
            async move {
                let resp = client
                    .post(format!("{base}/v1/leads"))
                    .header("X-Site-Id", site_id)
                    .json(&serde_json::json!({"name": format!("Lead {i}"), "email": format!("lead{i}@example.com")}))
                    .send()
                    .await
                    .expect("post lead");
                assert_eq!(resp.status(), 202);
            }
        });
        futures_util::stream::iter(posts).buffer_unordered(concurrency).collect::<Vec<()>>().await;
    }

    /// Posts `leads` leads at `concurrency`, waits for every delivery, prints figures, returns how many
    /// distinct leads were delivered.
    async fn run(&self, name: &str, leads: usize, concurrency: usize) -> usize {
        let before = self.rx.count();
        let accepted_at: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();
        let started = Instant::now();
        let posts = (0..leads).map(|i| {
            let (client, base, accepted_at, site_id) = (self.client.clone(), self.base.clone(), accepted_at.clone(), self.site_id.clone());
            async move {
                let resp = client
                    .post(format!("{base}/v1/leads"))
                    .header("X-Site-Id", site_id)
                    .json(&serde_json::json!({"name": format!("Lead {i}"), "email": format!("lead{i}@example.com"), "message": "Please call me back"}))
                    .send()
                    .await
                    .expect("post lead");
                assert_eq!(resp.status(), 202);
                let id = resp.json::<serde_json::Value>().await.unwrap()["id"].as_str().unwrap().to_owned();
                accepted_at.lock().unwrap().insert(id, Instant::now());
            }
        });
        futures_util::stream::iter(posts).buffer_unordered(concurrency).collect::<Vec<()>>().await;
        let posting = started.elapsed();
        let got = self
            .rx
            .wait_until(Duration::from_secs(120), "every delivery", |r| {
                r[before..].iter().map(|x| x.id()).collect::<std::collections::HashSet<_>>().len() >= leads
            })
            .await;
        let all_delivered = started.elapsed();
        let accepted_at = accepted_at.lock().unwrap().clone();
        let mut first_seen: HashMap<String, Instant> = HashMap::new();
        for r in &got[before..] {
            let lead = r.json()["data"]["leadId"].as_str().unwrap().to_owned();
            first_seen.entry(lead).or_insert(r.at);
        }
        let mut latencies: Vec<Duration> = first_seen.iter().map(|(lead, at)| at.saturating_duration_since(accepted_at[lead])).collect();
        latencies.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!("{name}: {leads} leads at concurrency {concurrency}");
        println!(
            "  leads accepted:   {} in {:.2} s = {:.0} leads/s",
            accepted_at.len(),
            posting.as_secs_f64(),
            accepted_at.len() as f64 / posting.as_secs_f64()
        );
        println!(
            "  delivered:        {} of {leads} (distinct webhook-ids, {} requests), all within {:.2} s of the first post",
            first_seen.len(),
            got.len() - before,
            all_delivered.as_secs_f64()
        );
        println!(
            "  202 -> delivery:  p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            ms(percentile(&latencies, 0.50)),
            ms(percentile(&latencies, 0.99)),
            ms(*latencies.last().unwrap())
        );
        first_seen.len()
    }
}
