//! Connections: the deadlines for a TLS handshake, a request head and an idle connection; the cap on a
//! request head's size; the per-client caps on handshakes and connections; graceful shutdown.
//!
//! Deadlines are configured to 1-2 s so the tests stay short; a connection counts as closed "by the
//! deadline" when it is closed within five times it, which a busy machine still meets.

use std::time::Duration;

use sitebot::config::Config;
use tokio::io::AsyncReadExt;

use crate::helpers::{TestApp, spawn_app_serving, spawn_app_with, test_config};
use crate::wire::{H2_PREFACE, client_from, closed_while_trickling, closed_within, h2_frame, tcp_from, tls_from, try_tls_from, write};

const SLOW: Duration = Duration::from_millis(300);

fn short_deadlines() -> Config {
    let mut c = test_config();
    c.server.header_timeout_secs = 1;
    c.server.tls_start_timeout_secs = 1;
    c.server.tls_handshake_timeout_secs = 2;
    c
}

async fn healthz_from(app: &TestApp, from: &str) -> u16 {
    let resp = client_from(app, from).get(app.url("/healthz")).send().await.expect("served");
    resp.status().as_u16()
}

#[tokio::test]
async fn a_half_sent_request_head_is_closed_by_the_header_deadline() {
    let app = spawn_app_with(short_deadlines()).await;
    let within = Duration::from_secs(5);
    // HTTP/1.1, trickling one header byte at a time: bytes do not buy time.
    let mut h1 = tls_from(&app, "127.0.0.1", b"http/1.1").await;
    write(&mut h1, b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: ").await;
    assert!(closed_while_trickling(&mut h1, b'a', SLOW, within).await, "HTTP/1.1 head still open after {within:?}");
    // HTTP/2, a header block that never ends (HEADERS without END_HEADERS, no CONTINUATION).
    let mut h2 = tls_from(&app, "127.0.0.1", b"h2").await;
    write(&mut h2, H2_PREFACE).await;
    write(&mut h2, &h2_frame(0x1, 0x1, 1, &[0x82, 0x87])).await;
    assert!(closed_within(&mut h2, within).await, "HTTP/2 half-sent header block still open after {within:?}");
    // HTTP/2 that never asks anything but keeps the connection busy with pings.
    let mut pinger = tls_from(&app, "127.0.0.1", b"h2").await;
    write(&mut pinger, H2_PREFACE).await;
    let ping = h2_frame(0x6, 0, 0, &[0; 8]);
    let closed = tokio::time::timeout(within, async {
        let mut buf = [0u8; 4096];
        let mut tick = tokio::time::interval(SLOW);
        loop {
            tokio::select! {
                r = pinger.read(&mut buf) => if matches!(r, Ok(0) | Err(_)) { return },
                _ = tick.tick() => if tokio::io::AsyncWriteExt::write_all(&mut pinger, &ping).await.is_err() { return },
            }
        }
    })
    .await
    .is_ok();
    assert!(closed, "an HTTP/2 connection with no request was kept open by pings");
    // A client that keeps to the deadline is served.
    assert_eq!(app.client.get(app.url("/healthz")).send().await.unwrap().status(), 200);
}

#[tokio::test]
async fn a_tls_handshake_must_start_and_finish_in_time() {
    let app = spawn_app_with(short_deadlines()).await;
    // Nothing at all: closed by the 1 s start deadline, long before the 2 s handshake deadline would.
    let mut silent = tcp_from("127.0.0.1", app.addr).await;
    let started = std::time::Instant::now();
    assert!(closed_within(&mut silent, Duration::from_secs(5)).await, "a silent connection stayed open");
    assert!(started.elapsed() < Duration::from_secs(2) + Duration::from_millis(900), "closed by the start deadline, not a later one");
    // A ClientHello trickled a byte at a time: closed by the 2 s handshake deadline.
    let mut trickle = tcp_from("127.0.0.1", app.addr).await;
    write(&mut trickle, &[0x16, 0x03, 0x01, 0x02, 0x00]).await;
    assert!(closed_while_trickling(&mut trickle, 0x01, SLOW, Duration::from_secs(10)).await, "a trickled handshake stayed open");
}

#[tokio::test]
async fn a_request_head_over_the_cap_is_refused_with_431() {
    let app = spawn_app_with(test_config()).await;
    let big = "a".repeat(20 * 1024);
    // A complete head over 16 KiB.
    let mut h1 = tls_from(&app, "127.0.0.1", b"http/1.1").await;
    write(&mut h1, format!("GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: {big}\r\n\r\n").as_bytes()).await;
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), h1.read_to_end(&mut answer)).await.expect("closed after the answer");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
    // A head that never ends is refused once it passes the cap, not buffered up to hyper's 400 KB.
    let mut endless = tls_from(&app, "127.0.0.1", b"http/1.1").await;
    write(&mut endless, format!("GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: {big}").as_bytes()).await;
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), endless.read_to_end(&mut answer)).await.expect("closed at the cap");
    assert!(String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 431"));
    // HTTP/2: the header list is capped too.
    let resp = app.client.get(app.url("/healthz")).header("X-Big", &big).send().await.unwrap();
    assert_eq!(resp.status(), 431);
    // A head under the cap is served.
    let resp = app.client.get(app.url("/healthz")).header("X-Big", "a".repeat(8 * 1024)).send().await.unwrap();
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn one_client_cannot_take_every_handshake_or_connection_slot() {
    let mut config = test_config();
    // Long deadlines, so a connection closed here was refused by a cap, not timed out.
    config.server.tls_start_timeout_secs = 30;
    config.server.header_timeout_secs = 30;
    config.server.max_handshakes_per_ip = 4;
    config.server.max_connections_per_ip = 8;
    let app = spawn_app_with(config).await;
    let at_once = Duration::from_secs(3);

    let mut silent = Vec::new();
    for _ in 0..4 {
        silent.push(tcp_from("127.0.0.3", app.addr).await);
    }
    // Let the accept loop admit the four before the fifth arrives.
    assert_eq!(healthz_from(&app, "127.0.0.2").await, 200);
    for i in 0..6 {
        let mut extra = tcp_from("127.0.0.3", app.addr).await;
        assert!(closed_within(&mut extra, at_once).await, "handshake {} over the cap was kept", 5 + i);
    }
    for s in &mut silent {
        assert!(!closed_within(s, Duration::from_millis(50)).await, "an admitted handshake was closed");
    }
    assert_eq!(healthz_from(&app, "127.0.0.2").await, 200, "another client is served");

    // Eight finished connections from one client; the ninth is closed before its handshake ends.
    let mut open = Vec::new();
    for _ in 0..8 {
        open.push(tls_from(&app, "127.0.0.4", b"http/1.1").await);
    }
    let ninth = try_tls_from(&app, "127.0.0.4", b"http/1.1").await;
    assert!(ninth.is_err(), "a ninth connection got through");
    assert_eq!(healthz_from(&app, "127.0.0.2").await, 200, "another client is served");
    // A closed connection gives its place back.
    drop(open.pop());
    let again = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            if try_tls_from(&app, "127.0.0.4", b"http/1.1").await.is_ok() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    again.await.expect("a place freed by a closed connection is given again");
}

#[tokio::test]
async fn shutdown_lets_requests_in_flight_finish_within_the_grace() {
    let (arrived_tx, mut arrived) = tokio::sync::mpsc::unbounded_channel::<()>();
    // Handlers behind the real edge that take as long as `?ms=` says.
    let app = spawn_app_serving(test_config(), move |state| {
        let slow = poem::endpoint::make(move |req: poem::Request| {
            let arrived = arrived_tx.clone();
            async move {
                let ms: u64 = req.uri().query().and_then(|q| q.strip_prefix("ms=")).and_then(|v| v.parse().ok()).unwrap_or(0);
                let _ = arrived.send(());
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Ok::<_, poem::Error>("done")
            }
        });
        sitebot::http::edge::Edge::new(poem::Route::new().at("/slow", slow), state)
    })
    .await;
    let (client, url) = (app.client.clone(), app.url("/slow"));
    let short = tokio::spawn(client.get(format!("{url}?ms=500")).send());
    let long = tokio::spawn(client.get(format!("{url}?ms=30000")).send());
    for _ in 0..2 {
        arrived.recv().await.unwrap();
    }
    let started = std::time::Instant::now();
    app.stop().await;
    let took = started.elapsed();
    let short = short.await.unwrap().expect("the short request finished");
    assert_eq!(short.status(), 200);
    assert_eq!(short.text().await.unwrap(), "done");
    assert!(long.await.unwrap().is_err(), "the long request was cut");
    // The grace is 2 s: the server waited for it, and (generously) not much longer.
    assert!(took >= Duration::from_millis(1900) && took < Duration::from_secs(10), "{took:?}");
    assert!(client.get(format!("{url}?ms=0")).send().await.is_err(), "nothing is accepted after shutdown");
}

/// An HPACK integer with an `n`-bit prefix starting at `b[*i]` (RFC 7541 §5.1).
fn hpack_int(b: &[u8], i: &mut usize, n: u32) -> usize {
    let mask = (1usize << n) - 1;
    let mut v = usize::from(b[*i]) & mask;
    *i += 1;
    if v == mask {
        let mut shift = 0;
        loop {
            let byte = b[*i];
            *i += 1;
            v += usize::from(byte & 0x7f) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                break;
            }
        }
    }
    v
}

/// The representations in one HPACK header block, by kind (RFC 7541 §6): how many fields were sent
/// "never indexed", how many "with incremental indexing" (entering the dynamic table), and the highest
/// table index referred to (above 61 is the dynamic table).
fn hpack_kinds(block: &[u8]) -> (usize, usize, usize) {
    let (mut never, mut indexing, mut highest) = (0, 0, 0);
    let mut i = 0;
    let skip_string = |i: &mut usize| {
        let len = hpack_int(block, i, 7);
        *i += len;
    };
    while i < block.len() {
        let first = block[i];
        if first & 0x80 != 0 {
            highest = highest.max(hpack_int(block, &mut i, 7));
            continue;
        }
        if first & 0xe0 == 0x20 {
            hpack_int(block, &mut i, 5); // a table size update
            continue;
        }
        // A literal: with incremental indexing (01, a 6-bit name index), without indexing (0000) or never
        // indexed (0001, both a 4-bit name index); name index 0 means the name follows as a string.
        let prefix = if first & 0xc0 == 0x40 {
            indexing += 1;
            6
        } else {
            never += usize::from(first & 0xf0 == 0x10);
            4
        };
        let name = hpack_int(block, &mut i, prefix);
        if name == 0 {
            skip_string(&mut i);
        }
        highest = highest.max(name);
        skip_string(&mut i);
    }
    (never, indexing, highest)
}

/// Over HTTP/2 the server's HPACK encoder keeps no table of the headers it sent: each connection's table
/// would live as long as the connection (#26). Every response header is sent "never indexed", so the second
/// response on a connection refers to nothing the first one left behind, and `Date` is among them.
#[tokio::test]
async fn http2_response_headers_never_enter_the_hpack_table() {
    let app = spawn_app_with(test_config()).await;
    let mut h2 = tls_from(&app, "127.0.0.1", b"h2").await;
    write(&mut h2, H2_PREFACE).await;
    // GET /healthz on streams 1 and 3: :method GET, :scheme https (static), then :path and :authority as
    // literals without indexing, so the request adds nothing to the server's decoder table either.
    let mut block = vec![0x82, 0x87, 0x04, 8];
    block.extend_from_slice(b"/healthz");
    block.extend_from_slice(&[0x01, 9]);
    block.extend_from_slice(b"localhost");
    let mut buf = Vec::new();
    let mut settings_acked = false;
    for stream in [1, 3] {
        write(&mut h2, &h2_frame(0x1, 0x5, stream, &block)).await;
        // One at a time, so the second answer is encoded after the first.
        let mut headers = None;
        while headers.is_none() {
            let mut chunk = [0u8; 4096];
            let n = tokio::time::timeout(Duration::from_secs(10), h2.read(&mut chunk)).await.expect("an answer").unwrap();
            assert!(n > 0, "connection closed before the answer on stream {stream}");
            buf.extend_from_slice(&chunk[..n]);
            while buf.len() >= 9 {
                let len = (usize::from(buf[0]) << 16) | (usize::from(buf[1]) << 8) | usize::from(buf[2]);
                if buf.len() < 9 + len {
                    break;
                }
                let (kind, flags, id) = (buf[3], buf[4], u32::from_be_bytes([buf[5], buf[6], buf[7], buf[8]]) & 0x7fff_ffff);
                let payload = buf[9..9 + len].to_vec();
                buf.drain(..9 + len);
                if kind == 0x4 && flags & 0x1 == 0 && !settings_acked {
                    write(&mut h2, &h2_frame(0x4, 0x1, 0, &[])).await;
                    settings_acked = true;
                }
                if kind == 0x1 && id == stream {
                    assert!(flags & 0x4 != 0, "the answer's headers fit in one frame (END_HEADERS)");
                    assert!(flags & 0x8 == 0 && flags & 0x20 == 0, "no padding or priority expected");
                    headers = Some(payload);
                }
            }
        }
        let (never, indexing, highest) = hpack_kinds(&headers.unwrap());
        assert_eq!(indexing, 0, "stream {stream}: a response header entered the HPACK table");
        assert!(highest <= 61, "stream {stream}: refers to dynamic table entry {highest}");
        // :status is indexed from the static table; date, content-type, x-request-id and more are not.
        assert!(never >= 4, "stream {stream}: only {never} fields sent never-indexed");
    }
}
