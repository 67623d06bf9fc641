//! Abuse, black-box over loopback: slow clients and a burst of connections from single addresses while
//! another client keeps asking and leaving leads. Bounded: fixed counts (about 1,200 connections), every wait under a
//! timeout, and everything stops by itself within about 15 s.
//!
//! Each attacker is one loopback address (127.0.0.0/8 is all loopback), so the per-client caps apply to
//! it as to a real host; the client that must still be served comes from 127.0.0.2.

use std::time::{Duration, Instant};

use futures_util::future::join_all;

use crate::helpers::{spawn_app_with, test_config};
use crate::wire::{client_from, closed_while_trickling, closed_within, tcp_from, tls_from, write};

const TRICKLE: Duration = Duration::from_millis(300);

/// How many of the connections were closed within their bound, and the slowest close.
fn tally(name: &str, closed: &[Option<Duration>]) -> usize {
    let n = closed.iter().flatten().count();
    let slowest = closed.iter().flatten().max().copied().unwrap_or_default();
    println!("{name}: {n}/{} closed by the server, slowest after {slowest:?}", closed.len());
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_and_bursts_leave_other_clients_served() {
    let mut config = test_config();
    config.server.header_timeout_secs = 1;
    config.server.tls_start_timeout_secs = 1;
    config.server.tls_handshake_timeout_secs = 2;
    // The per-client caps keep their defaults: 64 connections, 16 handshakes.
    let app = spawn_app_with(config).await;
    let addr = app.addr;
    // Closed "by the deadline" means within five times it, for a busy machine.
    let (head_bound, start_bound, handshake_bound) = (Duration::from_secs(5), Duration::from_secs(5), Duration::from_secs(10));

    // 30 request heads from one client, each sent in part and then a byte every 300 ms. Handshakes one
    // after another, so the handshake cap does not refuse them.
    let mut heads = Vec::new();
    for _ in 0..30 {
        let mut s = tls_from(&app, "127.0.0.3", b"http/1.1").await;
        write(&mut s, b"POST /v1/leads HTTP/1.1\r\nHost: localhost\r\nX-Slow: ").await;
        heads.push(tokio::spawn(async move {
            let t = Instant::now();
            closed_while_trickling(&mut s, b'a', TRICKLE, head_bound).await.then(|| t.elapsed())
        }));
    }
    // 30 handshakes that start with a byte and trickle the rest.
    let trickled = (0..30).map(|_| {
        tokio::spawn(async move {
            let mut s = tcp_from("127.0.0.4", addr).await;
            let t = Instant::now();
            write(&mut s, &[0x16, 0x03, 0x01, 0x02, 0x00]).await;
            closed_while_trickling(&mut s, 0x01, TRICKLE, handshake_bound).await.then(|| t.elapsed())
        })
    });
    let trickled: Vec<_> = trickled.collect();
    // A burst of 1,100 silent connections from one client, more than the server's 1,024 global handshake
    // slots, in waves of 100.
    let (connected, all_connected) = tokio::sync::oneshot::channel();
    let burst = tokio::spawn(async move {
        let started = Instant::now();
        let mut waiting = Vec::new();
        for _ in 0..11 {
            let wave = join_all((0..100).map(|_| tcp_from("127.0.0.5", addr))).await;
            waiting.extend(wave.into_iter().map(|mut s| {
                tokio::spawn(async move {
                    let t = Instant::now();
                    closed_within(&mut s, start_bound).await.then(|| t.elapsed())
                })
            }));
        }
        println!("burst: 1,100 connections made in {:?}", started.elapsed());
        let _ = connected.send(());
        join_all(waiting).await.into_iter().map(Result::unwrap).collect::<Vec<_>>()
    });

    // Meanwhile another client makes 20 requests, each over a new connection and handshake: ten while the
    // burst builds up, ten once all of it is connected; every other one leaves a lead, which must be stored.
    let (site, _) = app.create_site(sitebot::domain::Tier::Pro).await;
    let client = client_from(&app, "127.0.0.2");
    let mut slowest = Duration::ZERO;
    let mut all_connected = Some(all_connected);
    for i in 0..20 {
        if i == 10 {
            all_connected.take().unwrap().await.unwrap();
        }
        let t = Instant::now();
        let request = if i % 2 == 0 {
            client.get(app.url("/healthz"))
        } else {
            client.post(app.url("/v1/leads")).header("X-Site-Id", site.id.to_string()).json(&serde_json::json!({"email": format!("v{i}@example.com")}))
        };
        let resp = tokio::time::timeout(Duration::from_secs(3), request.send()).await;
        let status = resp.unwrap_or_else(|_| panic!("request {i} not answered within 3 s")).unwrap_or_else(|e| panic!("request {i}: {e}")).status();
        assert_eq!(status, if i % 2 == 0 { 200 } else { 202 }, "request {i}");
        slowest = slowest.max(t.elapsed());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    println!("another client: 20/20 answered, slowest in {slowest:?}");
    assert_eq!(app.count("SELECT count(*) FROM leads WHERE site_id = ?1", [site.id.to_string()]), 10, "every 202 is a stored lead");

    let heads: Vec<_> = join_all(heads).await.into_iter().map(Result::unwrap).collect();
    let trickled: Vec<_> = join_all(trickled).await.into_iter().map(Result::unwrap).collect();
    let burst = burst.await.unwrap();
    assert_eq!(tally("half-sent request heads", &heads), heads.len());
    assert_eq!(tally("trickled TLS handshakes", &trickled), trickled.len());
    assert_eq!(tally("silent connections in a burst", &burst), burst.len());
    // And the server is as good as new.
    assert_eq!(app.client.get(app.url("/healthz")).send().await.unwrap().status(), 200);
}
