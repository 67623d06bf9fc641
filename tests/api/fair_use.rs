//! Fair use of shared capacity: a visitor's share of its site's budget, bearer-token calls apart from
//! visitors, and bounded queues in front of shared work (503 with Retry-After, never a hang).
//!
//! Clients are chosen through a trusted proxy's `X-Forwarded-For` (the test client connects from
//! 127.0.0.1, made a trusted proxy here), as a load balancer in front of sitebot would name them.

use reqwest::StatusCode;
use serde_json::json;
use sitebot::domain::Tier;

use crate::helpers::{TestApp, problem, spawn_app_with, test_config};

fn behind_a_proxy() -> sitebot::config::Config {
    let mut c = test_config();
    c.server.trusted_proxies = vec!["127.0.0.0/8".into()];
    c
}

/// A lead with an invalid body (422: counted, nothing stored) from `client` to `site`.
async fn lead_from(app: &TestApp, site: &str, client: &str) -> reqwest::Response {
    app.client.post(app.url("/v1/leads")).header("X-Site-Id", site).header("X-Forwarded-For", client).json(&json!({})).send().await.unwrap()
}

fn limit_and_remaining(resp: &reqwest::Response) -> (u64, u64) {
    let h = |n: &str| resp.headers()[n].to_str().unwrap().parse::<u64>().unwrap();
    (h("x-ratelimit-limit"), h("x-ratelimit-remaining"))
}

#[tokio::test]
async fn one_visitor_cannot_spend_a_starter_sites_budget() {
    let app = spawn_app_with(behind_a_proxy()).await;
    let (site, _) = app.create_site(Tier::Starter).await;
    let id = site.id.to_string();
    // Starter: 60 a minute, 120 in the bucket; a visitor's share (0.25 by default) is 15, 30 in the bucket.
    for i in 0..30 {
        let resp = lead_from(&app, &id, "203.0.113.1").await;
        assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY, "request {i}");
        assert_eq!(limit_and_remaining(&resp), (30, 29 - i), "the visitor's bucket binds: request {i}");
    }
    // 92 more from the same address (122 in all): each refused, none spending the site's budget.
    for _ in 0..92 {
        let refused = lead_from(&app, &id, "203.0.113.1").await;
        assert_eq!(refused.headers()["retry-after"], "4", "one request every 4 s at 15 a minute");
        problem(refused, 429, "rate_limited").await;
    }
    // The next visitor is served from a fresh share.
    let resp = lead_from(&app, &id, "203.0.113.2").await;
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(limit_and_remaining(&resp), (30, 29));
    // Only allowed requests took from the site: 120 - 30 - 1 are left for three more visitors, then the
    // site's own bucket refuses.
    for n in 2..=4 {
        for _ in 0..if n == 2 { 29 } else { 30 } {
            assert_eq!(lead_from(&app, &id, &format!("203.0.113.{n}")).await.status(), StatusCode::UNPROCESSABLE_ENTITY);
        }
    }
    let refused = lead_from(&app, &id, "203.0.113.5").await;
    assert_eq!(limit_and_remaining(&refused), (120, 0), "the site's bucket binds once it is empty");
    problem(refused, 429, "rate_limited").await;
}

#[tokio::test]
async fn an_ipv6_visitor_is_its_64() {
    let app = spawn_app_with(behind_a_proxy()).await;
    let (site, _) = app.create_site(Tier::Starter).await;
    let id = site.id.to_string();
    for i in 0..30 {
        // Addresses of one /64, each different: still one visitor.
        let resp = lead_from(&app, &id, &format!("2001:db8:1:2::{:x}", i + 1)).await;
        assert_eq!(limit_and_remaining(&resp), (30, 29 - i as u64), "request {i}");
    }
    problem(lead_from(&app, &id, "2001:db8:1:2:ffff:ffff:ffff:ffff").await, 429, "rate_limited").await;
    let other = lead_from(&app, &id, "2001:db8:1:3::1").await;
    assert_eq!(other.status(), StatusCode::UNPROCESSABLE_ENTITY, "another /64 is another visitor");
    assert_eq!(limit_and_remaining(&other), (30, 29));
}

#[tokio::test]
async fn bearer_token_calls_neither_drain_nor_are_drained_by_visitors() {
    let mut config = behind_a_proxy();
    config.limits.burst_multiplier = 1;
    let app = spawn_app_with(config).await;
    let (site, creds) = app.create_site(Tier::Pro).await;
    let (id, token) = (site.id.to_string(), creds.bearer_token.unwrap());
    let with_token = || app.client.post(app.url("/v1/leads")).bearer_auth(&token).header("X-Forwarded-For", "198.51.100.7").json(&json!({}));
    // Pro: 600 a minute, 600 in the bucket (burst 1). Four visitors of 150 each empty the site's budget.
    for n in 1..=4 {
        for _ in 0..150 {
            assert_eq!(lead_from(&app, &id, &format!("203.0.113.{n}")).await.status(), StatusCode::UNPROCESSABLE_ENTITY);
        }
    }
    let refused = lead_from(&app, &id, "203.0.113.5").await;
    assert_eq!(limit_and_remaining(&refused), (600, 0), "the site's bucket binds once it is empty");
    problem(refused, 429, "rate_limited").await;
    // The server-to-server call has its own full budget.
    let resp = with_token().send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(limit_and_remaining(&resp), (600, 599));
    // And a burst of token calls leaves the visitors' budget as it was.
    for _ in 0..10 {
        with_token().send().await.unwrap();
    }
    app.clock.advance(std::time::Duration::from_millis(100));
    let resp = lead_from(&app, &id, "203.0.113.6").await;
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY, "one request refilled in 100 ms, none taken by tokens");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_beyond_the_lines_is_turned_away_with_503_and_retry_after() {
    let mut config = test_config();
    // One question may wait for the embedding session and one for a search slot, 200 ms at most.
    config.limits.embedding_queue = 1;
    config.limits.search_queue = 1;
    config.limits.queue_wait = "200ms".into();
    let app = spawn_app_with(config).await;
    let (site, _) = app.create_site(Tier::Enterprise).await;
    crate::knowledge::import_files(&app, site.id, &crate::knowledge::clinic()).await;
    // A long question takes the embedding session for tens of milliseconds.
    let question = "How much does a ceramic crown cost, and how long does the treatment take? ".repeat(25);
    let burst = (0..40).map(|_| crate::knowledge::ask(&app, site.id, json!({ "question": question })));
    let answers = futures_util::future::join_all(burst).await;
    let (mut served, mut shed) = (0, 0);
    for resp in answers {
        match resp.status().as_u16() {
            200 => served += 1,
            503 => {
                assert_eq!(resp.headers()["retry-after"], "1");
                problem(resp, 503, "unavailable").await;
                shed += 1;
            }
            other => panic!("a question got {other}: {}", resp.text().await.unwrap()),
        }
    }
    println!("burst of 40: {served} answered, {shed} turned away");
    assert!(served > 0 && shed > 0, "{served} answered, {shed} turned away");
    // The lines drained: the next question is answered.
    crate::knowledge::ask_ok(&app, site.id, "How much is a crown?").await;
}
