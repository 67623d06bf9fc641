//! Running it in production, over the real server: metrics scraped and parsed by a Prometheus text
//! parser with the counters moving as requests are made; trusted proxies (`Forwarded`,
//! `X-Forwarded-For`, PROXY protocol v2) deciding the rate limiter's key, and untrusted peers unable to
//! choose it.

use std::net::SocketAddr;

use serde_json::json;
use sitebot::domain::Tier;

use crate::helpers::{TestApp, new_site, spawn_app_with, test_config, with_webhook};
use crate::knowledge::{ask_ok, clinic, import_files};
use crate::receiver::Receiver;

/// Serves the app's metrics on a loopback port, as `serve` does with `server.metrics_listen` (set in the
/// config, which is what turns recording on; the address itself is `serve`'s to bind).
async fn metrics_url(app: &TestApp) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(sitebot::http::metrics::serve(listener, None, app.state.clone()));
    format!("http://{addr}/metrics")
}

struct Scrape(prometheus_parse::Scrape);

impl Scrape {
    async fn take(url: &str) -> Scrape {
        let resp = reqwest::get(url).await.unwrap();
        assert_eq!(resp.status(), 200);
        assert!(resp.headers()["content-type"].to_str().unwrap().starts_with("application/openmetrics-text"));
        let text = resp.text().await.unwrap();
        Scrape(prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).unwrap())
    }

    /// The value of the sample named `metric` whose labels include `labels` (0 when there is none).
    fn value(&self, metric: &str, labels: &[(&str, &str)]) -> f64 {
        let found: Vec<f64> = self
            .0
            .samples
            .iter()
            .filter(|s| s.metric == metric && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
            .map(|s| match &s.value {
                prometheus_parse::Value::Counter(v) | prometheus_parse::Value::Gauge(v) | prometheus_parse::Value::Untyped(v) => *v,
                other => panic!("{metric} is {other:?}"),
            })
            .collect();
        assert!(found.len() <= 1, "{metric} {labels:?} matches {} samples", found.len());
        found.first().copied().unwrap_or(0.0)
    }
}

#[tokio::test]
async fn metrics_are_parsed_and_move_as_requests_are_made() {
    let mut config = test_config();
    config.server.metrics_listen = Some("127.0.0.1:0".parse().unwrap());
    config.limits.ip_per_minute = 3;
    config.limits.burst_multiplier = 1;
    config.webhooks.allow_http = true;
    config.webhooks.allow_private_networks = true;
    // Its own embedding session and line (the process shares one embedder per setting), so the queue depth
    // it reads is its own, not other tests' questions'.
    config.knowledge.embedding_sessions = 1;
    let app = spawn_app_with(config).await;
    let receiver = Receiver::start().await;
    let (site, _) = app.create_site_with(with_webhook(new_site(Tier::Pro), &receiver.url("/hook"))).await;
    import_files(&app, site.id, &clinic()).await;
    let url = metrics_url(&app).await;
    let before = Scrape::take(&url).await;
    assert_eq!(before.value("sitebot_build_info", &[("version", env!("CARGO_PKG_VERSION"))]), 1.0);

    for _ in 0..4 {
        app.client.get(app.url("/healthz")).send().await.unwrap();
    }
    ask_ok(&app, site.id, "When is the clinic open?").await;
    let lead = app.client.post(app.url("/v1/leads")).header("X-Site-Id", site.id.to_string()).json(&json!({"email": "ada@example.com"})).send().await;
    assert_eq!(lead.unwrap().status(), 202);
    let queued = Scrape::take(&url).await;
    assert_eq!(queued.value("sitebot_outbox_events", &[("state", "pending")]), 1.0, "a lead's event waits");
    app.deliver_until(|| receiver.count() == 1).await;

    let after = Scrape::take(&url).await;
    let moved = |metric: &str, labels: &[(&str, &str)]| after.value(metric, labels) - before.value(metric, labels);
    assert_eq!(moved("sitebot_http_requests_total", &[("route", "/healthz"), ("status", "200")]), 3.0);
    assert_eq!(moved("sitebot_http_requests_total", &[("route", "/healthz"), ("status", "429")]), 1.0);
    assert_eq!(moved("sitebot_rate_limited_total", &[("scope", "ip")]), 1.0);
    assert_eq!(moved("sitebot_http_requests_total", &[("route", "/v1/query"), ("status", "200")]), 1.0);
    assert_eq!(moved("sitebot_http_requests_total", &[("route", "/v1/leads"), ("status", "202")]), 1.0);
    assert_eq!(moved("sitebot_http_request_duration_seconds_count", &[("route", "/v1/query")]), 1.0);
    for stage in ["embedding", "lexical", "vector", "answer"] {
        assert!(moved("sitebot_query_stage_duration_seconds_count", &[("stage", stage)]) >= 1.0, "stage {stage} timed");
    }
    assert_eq!(moved("sitebot_webhook_delivery_attempts_total", &[("outcome", "delivered")]), 1.0);
    assert_eq!(after.value("sitebot_outbox_events", &[("state", "pending")]), 0.0);
    assert_eq!(after.value("sitebot_outbox_events", &[("state", "delivered")]), 1.0);
    assert_eq!(after.value("sitebot_embedding_queue_depth", &[]), 0.0);
    assert!(after.0.samples.iter().all(|s| s.labels.get("site").is_none()), "no site label by default");

    let unknown = app.client.get(app.url("/v1/nope")).send().await.unwrap();
    assert_eq!(unknown.status(), 429, "still over the IP budget");
    let last = Scrape::take(&url).await;
    assert_eq!(last.value("sitebot_http_requests_total", &[("route", "(unmatched)"), ("status", "429")]), 1.0, "paths are never labels");
    let other = reqwest::get(url.replace("/metrics", "/other")).await.unwrap();
    assert_eq!(other.status(), 404);
}

#[tokio::test]
async fn the_site_label_is_an_option() {
    let mut config = test_config();
    config.server.metrics_listen = Some("127.0.0.1:0".parse().unwrap());
    config.server.metrics_per_site = true;
    let app = spawn_app_with(config).await;
    let (site, _) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;
    let url = metrics_url(&app).await;
    ask_ok(&app, site.id, "When is the clinic open?").await;
    let s = Scrape::take(&url).await;
    assert_eq!(s.value("sitebot_http_requests_total", &[("route", "/v1/query"), ("site", &site.id.to_string())]), 1.0);
}

async fn remaining(app: &TestApp, base: &str, headers: &[(&str, &str)]) -> u64 {
    let mut req = app.client.get(format!("{base}/healthz"));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = req.send().await.unwrap();
    assert_eq!(resp.status(), 200);
    resp.headers()["x-ratelimit-remaining"].to_str().unwrap().parse().unwrap()
}

fn proxied(trusted: &[&str], proxy_protocol: bool) -> sitebot::config::Config {
    let mut c = test_config();
    c.server.trusted_proxies = trusted.iter().map(|s| s.to_string()).collect();
    c.server.proxy_protocol = proxy_protocol;
    c
}

#[tokio::test]
async fn a_trusted_proxys_headers_decide_the_limiter_key() {
    let app = spawn_app_with(proxied(&["127.0.0.0/8"], false)).await;
    let full = remaining(&app, &app.base, &[]).await + 1;
    let xff = |v: &'static str| [("x-forwarded-for", v)];
    assert_eq!(remaining(&app, &app.base, &xff("203.0.113.1")).await, full - 1);
    assert_eq!(remaining(&app, &app.base, &xff("203.0.113.1")).await, full - 2, "the same client again");
    assert_eq!(remaining(&app, &app.base, &xff("203.0.113.2")).await, full - 1, "another client has its own budget");
    assert_eq!(remaining(&app, &app.base, &xff("198.51.100.9, 203.0.113.1, 127.0.0.5")).await, full - 3, "rightmost untrusted address");
    assert_eq!(remaining(&app, &app.base, &[("forwarded", "for=\"[2001:db8::7]:4711\";proto=https")]).await, full - 1);
    assert_eq!(remaining(&app, &app.base, &[("forwarded", "for=203.0.113.9"), ("x-forwarded-for", "203.0.113.2")]).await, full - 1, "Forwarded wins");
    assert_eq!(remaining(&app, &app.base, &[("forwarded", "for=unknown")]).await, full - 2, "an unknown hop: the proxy itself");
    assert_eq!(remaining(&app, &app.base, &[]).await, full - 3, "no header: the proxy itself");
}

#[tokio::test]
async fn an_untrusted_peer_cannot_choose_its_key() {
    for trusted in [vec![], vec!["10.0.0.0/8"]] {
        let app = spawn_app_with(proxied(&trusted, false)).await;
        let full = remaining(&app, &app.base, &[]).await + 1;
        assert_eq!(remaining(&app, &app.base, &[("x-forwarded-for", "203.0.113.1")]).await, full - 2);
        assert_eq!(remaining(&app, &app.base, &[("forwarded", "for=203.0.113.2")]).await, full - 3);
        assert_eq!(remaining(&app, &app.base, &[("x-forwarded-for", "203.0.113.3")]).await, full - 4, "{trusted:?}");
    }
}

/// A TCP load balancer in `mode tcp`: forwards connections to the server, each prefixed with a PROXY v2
/// header naming `client` as the source.
async fn balancer(server: SocketAddr, client: &str) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let client: SocketAddr = client.parse().unwrap();
    tokio::spawn(async move {
        loop {
            let (mut inbound, _) = listener.accept().await.unwrap();
            tokio::spawn(async move {
                use tokio::io::AsyncWriteExt;
                let mut outbound = tokio::net::TcpStream::connect(server).await.unwrap();
                // The destination in the client's family, as a dual-stack balancer reports it.
                let dst: SocketAddr = if client.is_ipv6() { "[::1]:443".parse().unwrap() } else { server };
                let header = ppp::v2::Builder::with_addresses(0x21, ppp::v2::Protocol::Stream, (client, dst)).build().unwrap();
                outbound.write_all(&header).await.unwrap();
                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
            });
        }
    });
    format!("https://127.0.0.1:{port}")
}

#[tokio::test]
async fn a_proxy_protocol_header_from_a_trusted_peer_decides_the_key() {
    let app = spawn_app_with(proxied(&["127.0.0.0/8"], true)).await;
    let full = remaining(&app, &app.base, &[]).await + 1;
    assert_eq!(remaining(&app, &app.base, &[]).await, full - 2, "a direct connection from the proxy's address");
    let lb1 = balancer(app.addr, "203.0.113.7:5000").await;
    let lb2 = balancer(app.addr, "[2001:db8::9]:5000").await;
    assert_eq!(remaining(&app, &lb1, &[]).await, full - 1, "the client the header names");
    assert_eq!(remaining(&app, &lb1, &[]).await, full - 2);
    assert_eq!(remaining(&app, &lb2, &[]).await, full - 1, "another client");
    assert_eq!(remaining(&app, &lb1, &[("x-forwarded-for", "198.51.100.1")]).await, full - 3, "the named client is not a trusted proxy");
}

#[tokio::test]
async fn a_proxy_protocol_header_from_an_untrusted_peer_is_refused() {
    for config in [proxied(&["10.0.0.0/8"], true), proxied(&["127.0.0.0/8"], false)] {
        let app = spawn_app_with(config).await;
        let lb = balancer(app.addr, "203.0.113.7:5000").await;
        let err = app.client.get(format!("{lb}/healthz")).send().await;
        assert!(err.is_err(), "the connection is closed without an answer");
        assert_eq!(app.client.get(app.url("/healthz")).send().await.unwrap().status(), 200, "direct clients are served");
    }
}
