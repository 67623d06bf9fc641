//! Signed webhook delivery against a real local receiver: signatures checked with the official
//! `standardwebhooks` crate, retries with a stable `webhook-id`, 410, dead-letter and replay, secret
//! rotation, redirects and the private-address policy.

use std::time::Duration;

use serde_json::json;
use sitebot::config::Config;
use sitebot::domain::{SiteId, Tier};
use sitebot::store::outbox::{self, EndpointState, OutboxStatus};
use standardwebhooks::Webhook;

use crate::helpers::{TestApp, new_site, spawn_app_with, spawn_app_with_worker, test_config, with_webhook};
use crate::leads::accepted;
use crate::receiver::{BlackHole, Received, Receiver, Reply};

const WAIT: Duration = Duration::from_secs(15);

/// Loopback over plain HTTP allowed, a millisecond retry schedule (3 retries) and endpoint backoff,
/// short timeout.
pub fn webhook_config() -> Config {
    let mut c = test_config();
    c.webhooks.allow_http = true;
    c.webhooks.allow_private_networks = true;
    c.webhooks.retry_schedule = vec!["10ms".into(), "10ms".into(), "10ms".into()];
    c.webhooks.min_backoff_after_throttle = "10ms".into();
    c.webhooks.endpoint_backoff_initial = "10ms".into();
    c.webhooks.endpoint_backoff_max = "10ms".into();
    c.webhooks.timeout_secs = 5;
    c
}

fn verify(secret: &str, r: &Received) {
    Webhook::new(secret).unwrap().verify(&r.body, &r.headers).unwrap_or_else(|e| panic!("{} does not verify: {e:?}", r.id()));
}

async fn event(app: &TestApp, id: &str) -> (outbox::Message, Vec<outbox::Attempt>) {
    let id = id.to_owned();
    let (m, _, a) = app.state.store.run(move |s| s.outbox().get(&id)).await.unwrap().expect("event exists");
    (m, a)
}

/// Drives delivery until `pred` holds for the event.
async fn wait_event(
    app: &TestApp,
    id: &str,
    what: &str,
    pred: impl Fn(&outbox::Message, &[outbox::Attempt]) -> bool,
) -> (outbox::Message, Vec<outbox::Attempt>) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let (m, a) = event(app, id).await;
        if pred(&m, &a) {
            return (m, a);
        }
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting for {what}: {m:?} {a:?}");
        app.deliver_due().await;
    }
}

/// Drives delivery until the receiver has `n` requests, and returns them.
async fn deliveries(app: &TestApp, rx: &Receiver, n: usize) -> Vec<Received> {
    app.deliver_until(|| rx.count() >= n).await;
    rx.wait_for(n, WAIT).await
}

async fn only_event(app: &TestApp, site: SiteId) -> String {
    let list = app.state.store.run(move |s| s.outbox().list(Some(site), None, 10)).await.unwrap();
    assert_eq!(list.len(), 1, "{list:?}");
    list[0].id.clone()
}

async fn endpoint(app: &TestApp, site: SiteId) -> outbox::Endpoint {
    let now = sitebot::domain::Timestamp::now();
    app.state.store.run(move |s| s.outbox().endpoints(Some(site), now)).await.unwrap().remove(0)
}

async fn site_for(app: &TestApp, url: &str) -> (sitebot::store::Site, String) {
    let (site, creds) = app.create_site_with(with_webhook(new_site(Tier::Pro), url)).await;
    (site, creds.webhook_secret.unwrap())
}

#[tokio::test]
async fn every_delivery_verifies_with_the_official_library() {
    let rx = Receiver::start().await;
    let app = spawn_app_with(webhook_config()).await;
    let (site, secret) = site_for(&app, &rx.url("/hook")).await;
    let lead_id = accepted(&app, &site.id, &json!({"name": "Ada", "email": "ada@example.com"})).await;
    let got = deliveries(&app, &rx, 1).await;
    let r = &got[0];
    assert_eq!(r.path, "/hook");
    verify(&secret, r);
    assert!(Webhook::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap().verify(&r.body, &r.headers).is_err(), "another secret must not verify");
    assert!(r.id().starts_with("msg_"));
    assert_eq!(r.header("content-type"), "application/json");
    let ts: i64 = r.header("webhook-timestamp").parse().unwrap();
    assert!((ts - chrono::Utc::now().timestamp()).abs() < 60);
    let body = r.json();
    assert_eq!(body["type"], "lead.captured");
    assert_eq!(body["data"]["leadId"], lead_id);
    assert_eq!(body["data"]["siteId"], site.id.to_string());
    assert_eq!(body["data"]["email"], "ada@example.com");
    assert!(chrono::DateTime::parse_from_rfc3339(body["timestamp"].as_str().unwrap()).is_ok());
    let (m, attempts) = wait_event(&app, &r.id(), "delivered", |m, _| m.status == OutboxStatus::Delivered).await;
    assert!(m.delivered_at.is_some());
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].status_code, Some(200));
    assert_eq!(rx.count(), 1, "delivered once");
}

#[tokio::test]
async fn a_failing_receiver_gets_the_same_id_on_every_retry_until_it_recovers() {
    let rx = Receiver::start().await;
    rx.script([Reply::Status(500), Reply::Status(503), Reply::RetryAfter(429, 0)]);
    let app = spawn_app_with(webhook_config()).await;
    let (site, secret) = site_for(&app, &rx.url("/hook")).await;
    accepted(&app, &site.id, &json!({"email": "ada@example.com"})).await;
    let got = deliveries(&app, &rx, 4).await;
    let ids: Vec<String> = got.iter().map(Received::id).collect();
    assert!(ids.iter().all(|i| *i == ids[0]), "{ids:?}");
    assert!(got.iter().all(|r| r.body == got[0].body), "the body is the same byte for byte");
    got.iter().for_each(|r| verify(&secret, r));
    let (_, attempts) = wait_event(&app, &ids[0], "delivery after retries", |m, _| m.status == OutboxStatus::Delivered).await;
    let codes: Vec<Option<u16>> = attempts.iter().map(|a| a.status_code).collect();
    assert_eq!(codes, vec![Some(500), Some(503), Some(429), Some(200)]);
    assert!(attempts[0].error.as_deref().unwrap().contains("500"));
    assert_eq!(rx.count(), 4);
}

#[tokio::test]
async fn retry_after_and_the_throttle_floor_are_honoured() {
    let rx = Receiver::start().await;
    rx.script([Reply::RetryAfter(429, 1)]);
    let mut config = webhook_config();
    config.webhooks.min_backoff_after_throttle = "300ms".into();
    let app = spawn_app_with(config).await;
    let (site, _) = site_for(&app, &rx.url("/hook")).await;
    accepted(&app, &site.id, &json!({"email": "ada@example.com"})).await;
    let got = deliveries(&app, &rx, 2).await;
    // The schedule says 10 ms; the receiver asked for 1 s.
    assert!(got[1].at - got[0].at >= Duration::from_millis(950), "{:?}", got[1].at - got[0].at);

    rx.script([Reply::Status(429)]);
    accepted(&app, &site.id, &json!({"email": "bob@example.com"})).await;
    let got = deliveries(&app, &rx, 4).await;
    assert!(got[3].at - got[2].at >= Duration::from_millis(290), "a 429 waits at least the floor: {:?}", got[3].at - got[2].at);
}

#[tokio::test]
async fn gone_disables_the_endpoint_and_events_wait_until_it_is_set_again() {
    let rx = Receiver::start().await;
    rx.set_default(Reply::Status(410));
    let app = spawn_app_with(webhook_config()).await;
    let (site, _) = site_for(&app, &rx.url("/hook")).await;
    accepted(&app, &site.id, &json!({"email": "ada@example.com"})).await;
    let first = deliveries(&app, &rx, 1).await[0].id();
    wait_event(&app, &first, "the 410 to be recorded", |_, a| a.len() == 1).await;
    let id = site.id;
    let disabled = app.state.store.run(move |s| s.site(id).get()).await.unwrap().unwrap();
    assert!(disabled.webhook_disabled_at.is_some(), "a 410 disables the endpoint");
    accepted(&app, &site.id, &json!({"email": "bob@example.com"})).await;
    // The worker runs past the retry schedule: nothing more is sent...
    for _ in 0..3 {
        app.deliver_due().await;
    }
    assert_eq!(rx.count(), 1);
    // ...and nothing is lost: both events wait.
    let pending = app.state.store.run(move |s| s.outbox().list(Some(id), Some(OutboxStatus::Pending), 10)).await.unwrap();
    assert_eq!(pending.len(), 2);
    // The operator sets the URL again (`site update --webhook-url`): both go out.
    rx.set_default(Reply::Status(200));
    let url = sitebot::domain::WebhookUrl::parse(&rx.url("/hook"), &sitebot::domain::NetworkPolicy::webhooks(&app.state.config.webhooks)).unwrap();
    let up = sitebot::store::SiteUpdate { webhook_url: Some(Some(url)), ..Default::default() };
    app.state.store.run(move |s| s.site(id).update(up)).await.unwrap();
    let got = deliveries(&app, &rx, 3).await;
    let after: std::collections::BTreeSet<String> = got[1..].iter().map(Received::id).collect();
    assert_eq!(after.len(), 2, "both waiting events go out: {after:?}");
    assert!(after.contains(&first), "the first event keeps its webhook-id");
}

#[tokio::test]
async fn a_dead_event_is_replayed_with_the_same_id() {
    let rx = Receiver::start().await;
    rx.set_default(Reply::Status(500));
    let app = spawn_app_with(webhook_config()).await;
    let (site, secret) = site_for(&app, &rx.url("/hook")).await;
    accepted(&app, &site.id, &json!({"email": "ada@example.com"})).await;
    let id = only_event(&app, site.id).await;
    // 1 try + 3 retries, then dead.
    let (m, attempts) = wait_event(&app, &id, "dead", |m, _| m.status == OutboxStatus::Dead).await;
    assert_eq!(attempts.len(), 4);
    assert_eq!(m.last_error.as_deref(), Some("receiver answered 500 Internal Server Error"));
    for _ in 0..3 {
        app.deliver_due().await;
    }
    assert_eq!(rx.count(), 4, "a dead event is not sent again by itself");

    rx.set_default(Reply::Status(200));
    let replayed = sitebot::cli::webhooks::replay(&app.state.store, &id).unwrap();
    assert_eq!(replayed.status, OutboxStatus::Pending);
    let got = deliveries(&app, &rx, 5).await;
    assert_eq!(got[4].id(), id, "same webhook-id on replay");
    verify(&secret, &got[4]);
    let (_, attempts) = wait_event(&app, &id, "delivered after replay", |m, _| m.status == OutboxStatus::Delivered).await;
    assert_eq!(attempts.len(), 5);
    assert!(sitebot::cli::webhooks::replay(&app.state.store, "msg_01NOPE").is_err());
}

#[tokio::test]
async fn during_a_rotation_both_secrets_sign() {
    let rx = Receiver::start().await;
    let app = spawn_app_with(webhook_config()).await;
    let (site, old) = site_for(&app, &rx.url("/hook")).await;
    let id = site.id;
    let new = app.state.store.run(move |s| s.site(id).rotate_secret()).await.unwrap();
    accepted(&app, &site.id, &json!({"email": "ada@example.com"})).await;
    let r = deliveries(&app, &rx, 1).await.remove(0);
    let sigs: Vec<&str> = r.header("webhook-signature").split(' ').collect();
    assert_eq!(sigs.len(), 2, "{sigs:?}");
    assert!(sigs.iter().all(|s| s.starts_with("v1,")));
    // Each secret verifies on its own, which needs its own signature in the header.
    for secret in [&old, &new] {
        let mut only = r.clone();
        for sig in &sigs {
            only.headers.insert("webhook-signature", sig.parse().unwrap());
            let ok = Webhook::new(secret).unwrap().verify(&only.body, &only.headers).is_ok();
            let is_current = *sig == sigs[0];
            assert_eq!(ok, is_current == (secret == &new), "secret {} / signature {sig}", if secret == &new { "new" } else { "old" });
        }
        verify(secret, &r);
    }
}

#[tokio::test]
async fn redirects_are_not_followed() {
    let target = Receiver::start().await;
    let rx = Receiver::start().await;
    rx.set_default(Reply::Redirect(target.url("/stolen")));
    let app = spawn_app_with(webhook_config()).await;
    let (site, _) = site_for(&app, &rx.url("/hook")).await;
    accepted(&app, &site.id, &json!({"email": "ada@example.com"})).await;
    let id = only_event(&app, site.id).await;
    let (_, attempts) = wait_event(&app, &id, "dead after redirects", |m, _| m.status == OutboxStatus::Dead).await;
    assert_eq!(attempts.len(), 4);
    assert!(attempts.iter().all(|a| a.status_code == Some(302)));
    assert!(attempts[0].error.as_deref().unwrap().contains("redirects are not followed"), "{attempts:?}");
    assert_eq!(rx.count(), 4);
    assert_eq!(target.count(), 0, "the redirect target gets nothing");
}

#[tokio::test]
async fn private_addresses_are_refused_unless_allowed() {
    let rx = Receiver::start().await;
    let mut config = webhook_config();
    config.webhooks.allow_private_networks = false;
    let app = spawn_app_with(config).await;
    // URLs set while the operator allowed them (or a name that later resolves to a private address).
    let port = rx.base.rsplit(':').next().unwrap();
    for url in [rx.url("/hook"), format!("http://localhost:{port}/hook")] {
        let (site, _) = site_for(&app, &url).await;
        accepted(&app, &site.id, &json!({"email": "ada@example.com"})).await;
        let id = only_event(&app, site.id).await;
        let (_, attempts) = wait_event(&app, &id, "a refused attempt", |m, _| m.status == OutboxStatus::Dead).await;
        let err = attempts[0].error.as_deref().unwrap();
        assert!(err.contains("not a public address"), "{url}: {err}");
        assert_eq!(attempts[0].status_code, None);
    }
    assert_eq!(rx.count(), 0, "nothing reached the private address");

    // Allowed: the same receiver gets the event.
    let app = spawn_app_with(webhook_config()).await;
    let (site, _) = site_for(&app, &rx.url("/hook")).await;
    accepted(&app, &site.id, &json!({"email": "ada@example.com"})).await;
    deliveries(&app, &rx, 1).await;
}

#[tokio::test]
async fn shutdown_finishes_the_delivery_in_flight() {
    let rx = Receiver::start().await;
    rx.set_delay(Duration::from_millis(1500));
    let config = webhook_config();
    let app = spawn_app_with_worker(config.clone()).await;
    let (site, _) = site_for(&app, &rx.url("/hook")).await;
    accepted(&app, &site.id, &json!({"email": "ada@example.com"})).await;
    let deadline = tokio::time::Instant::now() + WAIT;
    while rx.started() == 0 {
        assert!(tokio::time::Instant::now() < deadline, "the delivery never started");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(rx.count(), 0, "still being answered when the server is told to stop");
    let dir = app.stop().await;
    // The server returned only after the worker finished and recorded its delivery.
    assert_eq!(rx.count(), 1);
    let store = sitebot::app::open_store(&config, dir.path()).unwrap();
    let done = store.outbox().list(Some(site.id), None, 10).unwrap();
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].status, OutboxStatus::Delivered, "{done:?}");
}

/// Issue #11: one global queue let a black-holed endpoint's backlog take every delivery slot. With a
/// per-endpoint limit and round-robin claiming, the healthy site's leads go out while the black hole still
/// has dozens of older events waiting.
#[tokio::test]
async fn a_black_holed_endpoint_does_not_starve_a_healthy_one() {
    let hole = BlackHole::start().await;
    let rx = Receiver::start().await;
    let mut config = webhook_config();
    config.webhooks.timeout_secs = 2;
    config.webhooks.workers = 4;
    let app = spawn_app_with_worker(config).await;
    let (slow, _) = site_for(&app, &hole.url("/hook")).await;
    let (healthy, _) = site_for(&app, &rx.url("/hook")).await;
    // 60 events ahead of the healthy site's: 4 slots of 2 s timeouts would take 30 s to reach them.
    for i in 0..60 {
        accepted(&app, &slow.id, &json!({"email": format!("slow{i}@example.com")})).await;
    }
    let mut leads = std::collections::BTreeSet::new();
    for i in 0..10 {
        leads.insert(accepted(&app, &healthy.id, &json!({"email": format!("ok{i}@example.com")})).await);
    }
    let got = rx.wait_until(WAIT, "the healthy site's 10 leads", |r| r.iter().map(Received::id).collect::<std::collections::BTreeSet<_>>().len() >= 10).await;
    let delivered: std::collections::BTreeSet<String> = got.iter().map(|r| r.json()["data"]["leadId"].as_str().unwrap().to_owned()).collect();
    assert_eq!(delivered, leads);
    assert!(hole.connections() >= 1, "the black hole was tried too");
    let id = slow.id;
    let waiting = app.state.store.run(move |s| s.outbox().list(Some(id), Some(OutboxStatus::Pending), 100)).await.unwrap();
    assert!(waiting.len() >= 50, "the black hole's events wait, none lost: {}", waiting.len());
}

/// Issue #11: an endpoint that keeps failing is paused (its due events are not claimed), probed one event at
/// a time, and disabled after failing continuously for `disable_after`; its events stay pending, and
/// `webhooks enable` sends them all.
#[tokio::test]
async fn an_endpoint_that_keeps_failing_backs_off_then_is_disabled_and_enabling_resumes_delivery() {
    let rx = Receiver::start().await;
    rx.set_default(Reply::Status(500));
    let mut config = webhook_config();
    // The events' own schedule retries at once and never runs out here: what holds them is the endpoint.
    config.webhooks.retry_schedule = vec!["0ms".into(); 50];
    config.webhooks.endpoint_backoff_initial = "1s".into();
    config.webhooks.endpoint_backoff_max = "1s".into();
    config.webhooks.disable_after = "1500ms".into();
    let app = spawn_app_with(config).await;
    let (site, _) = site_for(&app, &rx.url("/hook")).await;
    for i in 0..3 {
        accepted(&app, &site.id, &json!({"email": format!("lead{i}@example.com")})).await;
    }
    let worker = sitebot::outbox::Worker::new(app.state.clone()).unwrap();
    let first = worker.run_once().await.unwrap();
    assert_eq!((first.claimed, first.retrying), (2, 2), "two at a time to a healthy endpoint");
    assert_eq!(worker.run_once().await.unwrap().claimed, 0, "all three events are due, but the endpoint backs off");
    let ep = endpoint(&app, site.id).await;
    assert_eq!((ep.state, ep.consecutive_failures, ep.pending, ep.in_flight), (EndpointState::BackingOff, 2, 3, 0));
    assert!(ep.retry_at.is_some() && ep.disabled_at.is_none());
    assert_eq!(ep.last_error.as_deref(), Some("receiver answered 500 Internal Server Error"));

    // Probes, one event at a time, until it has failed for 1.5 s.
    let deadline = tokio::time::Instant::now() + WAIT;
    while endpoint(&app, site.id).await.state != EndpointState::Disabled {
        assert!(tokio::time::Instant::now() < deadline, "never disabled: {:?}", endpoint(&app, site.id).await);
        assert!(worker.run_once().await.unwrap().claimed <= 1, "a failing endpoint gets one attempt at a time");
        // Nothing is due once the endpoint is disabled.
        let next = worker.next_due().await.unwrap();
        let wait = next.map_or(1, |t| (t.as_millis() - sitebot::domain::Timestamp::now().as_millis()).clamp(1, 1000));
        tokio::time::sleep(Duration::from_millis(wait as u64)).await;
    }
    let ep = endpoint(&app, site.id).await;
    assert!(ep.disabled_at.is_some() && ep.consecutive_failures >= 3, "{ep:?}");
    let sent = rx.count();
    assert_eq!(sent as u32, ep.consecutive_failures);
    for _ in 0..3 {
        app.deliver_due().await;
    }
    assert_eq!(rx.count(), sent, "nothing goes to a disabled endpoint");
    let id = site.id;
    let pending = app.state.store.run(move |s| s.outbox().list(Some(id), Some(OutboxStatus::Pending), 10)).await.unwrap();
    assert_eq!(pending.len(), 3, "no event is lost or dead");

    // The receiver is fixed; the operator enables the endpoint: every waiting event goes out.
    rx.set_default(Reply::Status(200));
    let enabled = sitebot::cli::webhooks::enable(&app.state.store, site.id).unwrap();
    assert_eq!((enabled.state, enabled.consecutive_failures, enabled.pending), (EndpointState::Healthy, 0, 3));
    let waiting: std::collections::BTreeSet<String> = pending.iter().map(|m| m.id.clone()).collect();
    app.deliver_until(|| rx.requests()[sent..].iter().map(Received::id).collect::<std::collections::BTreeSet<_>>() == waiting).await;
    for id in &waiting {
        wait_event(&app, id, "delivered after enabling", |m, _| m.status == OutboxStatus::Delivered).await;
    }
    let ep = endpoint(&app, site.id).await;
    assert_eq!((ep.state, ep.pending, ep.consecutive_failures), (EndpointState::Healthy, 0, 0));
    assert!(ep.last_success_at.is_some());
}
