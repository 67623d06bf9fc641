//! One HTTPS connection, driven by hyper directly. poem's `Server` gives hyper no timer, so hyper's
//! header-read deadline never ran (its idle timeout restarts on every byte, so a client trickling a
//! header kept its connection for good), and it does not expose the HTTP/1.1 buffer cap.
//!
//! - ALPN picks the protocol: `h2`, else HTTP/1.1. Nothing is guessed from the first bytes, a wait that
//!   would have no deadline of its own.
//! - HTTP/1.1: a request head must arrive within `server.header_timeout_secs` (hyper's timer, which also
//!   runs between keep-alive requests), and the read buffer is capped at `server.max_header_bytes`, so an
//!   unfinished head costs no more than that; a longer head is answered 431 and the connection closed.
//! - HTTP/2: the header list is capped at `server.max_header_bytes`.
//! - Both: a connection with no request in flight is closed after `server.header_timeout_secs` before its
//!   first request and `server.idle_timeout_secs` after. The clock counts requests, not bytes: a half-sent
//!   HTTP/2 header block or a trickle of pings does not keep a connection open.
//! - Closing, when idle or at shutdown, is graceful (HTTP/2 GOAWAY; HTTP/1.1 after the answer in flight).
//!   An idle close gets `header_timeout` to finish; at shutdown the server cuts what is left after
//!   `server.shutdown_grace_secs`.

use std::convert::Infallible;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use http_body_util::combinators::BoxBody;
use hyper::body::Incoming;
use hyper::server::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulConnection;
use poem::http::uri::Scheme;
use poem::web::{LocalAddr, RemoteAddr};
use poem::{Endpoint, Response};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::listener::Accepted;
use crate::config::ServerConfig;

/// The per-connection limits, from `[server]`.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_header_bytes: usize,
}

impl Settings {
    pub fn from_config(c: &ServerConfig) -> Self {
        Settings {
            header_timeout: Duration::from_secs(c.header_timeout_secs),
            idle_timeout: Duration::from_secs(c.idle_timeout_secs),
            max_header_bytes: c.max_header_bytes,
        }
    }
}

/// How the server ends connections: `stop` asks them to close gracefully, `cut` drops them.
#[derive(Debug, Clone, Default)]
pub struct Stop {
    pub stop: CancellationToken,
    pub cut: CancellationToken,
}

/// Requests in flight on one connection, counted from the head until hyper drops the response body.
struct InFlight(Arc<watch::Sender<usize>>);

impl InFlight {
    fn start(count: &Arc<watch::Sender<usize>>) -> Self {
        count.send_modify(|n| *n += 1);
        InFlight(count.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n -= 1);
    }
}

/// HTTP/2: every response header is sent without entering HPACK's dynamic table, as nginx sends them. The
/// encoder's table lives as long as the connection and may hold what the client allows (Chromium: 64 KiB);
/// filled with response headers it cost every open connection 1 to 6 KB (#26: an idle hand-off stream's
/// connection about 1.2 KB, one with a dozen answers on it about 6 KB, from values that never come again such
/// as `X-Request-Id` and `Date`). Names still come from the static table, values are Huffman-coded: about
/// 150 bytes more a response. `Date` is set here, where it can be marked; hyper keeps a `Date` it is given.
fn never_indexed(h: &mut hyper::HeaderMap) {
    if let Ok(date) = hyper::header::HeaderValue::from_str(&httpdate::fmt_http_date(std::time::SystemTime::now())) {
        h.entry(hyper::header::DATE).or_insert(date);
    }
    for v in h.values_mut() {
        v.set_sensitive(true);
    }
}

/// Serves one connection until it closes, goes idle, or the server stops.
pub async fn serve<E>(accepted: Accepted, local: std::net::SocketAddr, ep: Arc<E>, settings: Settings, stop: Stop)
where
    E: Endpoint<Output = Response> + 'static,
{
    let Accepted { stream, peer, slot } = accepted;
    let _slot = slot;
    let h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
    let (count, in_flight) = watch::channel(0usize);
    let count = Arc::new(count);
    let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
        let (ep, count) = (ep.clone(), count.clone());
        async move {
            let guard = InFlight::start(&count);
            let req = poem::Request::from((req, LocalAddr(local.into()), RemoteAddr(peer.into()), Scheme::HTTPS));
            // Boxed, and so freed once the response is made: hyper keeps this future's place for as long
            // as the connection (HTTP/1.1) or the stream's task (HTTP/2) lives, an event stream's whole
            // life, and the endpoint's future inline made that place several KiB.
            let mut resp: hyper::Response<BoxBody<Bytes, io::Error>> = Box::pin(ep.get_response(req)).await.into();
            if h2 {
                never_indexed(resp.headers_mut());
            }
            // The closure owns the guard, so the request stays in flight until hyper drops the body
            // (a Server-Sent Events stream counts as long as it runs).
            Ok::<_, Infallible>(resp.map(|body| {
                body.map_frame(move |frame| {
                    let _in_flight = &guard;
                    frame
                })
            }))
        }
    });
    let io = TokioIo::new(stream);
    // Each protocol's connection is boxed, so the task holds only the one this connection speaks: inline,
    // both would size every connection's task (HTTP/2's state is about 6 KiB), an idle event stream's
    // included (#26, docs/performance.md "Idle hand-off streams").
    if h2 {
        let mut b = http2::Builder::new(TokioExecutor::new());
        b.timer(TokioTimer::new()).max_header_list_size(u32::try_from(settings.max_header_bytes).unwrap_or(u32::MAX));
        Box::pin(drive(b.serve_connection(io, service), in_flight, settings, stop, peer)).await;
    } else {
        let mut b = http1::Builder::new();
        b.timer(TokioTimer::new())
            .header_read_timeout(settings.header_timeout)
            // The read buffer holds an unfinished head: its cap is what bounds a slow client's memory.
            .max_buf_size(settings.max_header_bytes.max(8192))
            .max_header_size(settings.max_header_bytes);
        Box::pin(drive(b.serve_connection(io, service), in_flight, settings, stop, peer)).await;
    }
}

async fn drive<C>(conn: C, mut in_flight: watch::Receiver<usize>, settings: Settings, stop: Stop, peer: std::net::SocketAddr)
where
    C: GracefulConnection,
    C::Error: std::fmt::Display,
{
    tokio::pin!(conn);
    let idle = tokio::select! {
        r = conn.as_mut() => {
            if let Err(e) = r {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
            return;
        }
        _ = idle(&mut in_flight, settings) => true,
        _ = stop.stop.cancelled() => false,
        _ = stop.cut.cancelled() => return,
    };
    if idle {
        tracing::debug!(%peer, "closing an idle connection");
    }
    conn.as_mut().graceful_shutdown();
    let limit = async {
        match idle {
            true => tokio::time::sleep(settings.header_timeout).await,
            false => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = conn => {}
        _ = limit => tracing::debug!(%peer, "connection did not close in time; dropped"),
        _ = stop.cut.cancelled() => {}
    }
}

/// Resolves once no request has been in flight, and nothing has started or ended, for the idle time.
async fn idle(in_flight: &mut watch::Receiver<usize>, settings: Settings) {
    let mut wait = settings.header_timeout;
    loop {
        if *in_flight.borrow_and_update() > 0 {
            if in_flight.changed().await.is_err() {
                return std::future::pending().await;
            }
            continue;
        }
        match tokio::time::timeout(wait, in_flight.changed()).await {
            Err(_) => return,
            Ok(Err(_)) => return std::future::pending().await,
            Ok(Ok(())) => wait = settings.idle_timeout,
        }
    }
}
