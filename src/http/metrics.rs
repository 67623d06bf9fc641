//! The metrics listener (`server.metrics_listen`): `GET /metrics` in the Prometheus text format, every
//! other path 404. Plain HTTP only on a loopback address; on any other address it speaks TLS with the
//! server's certificate (HTTP/1.1 only), so metrics never cross a network in clear.
//!
//! It is separate from the API port so that scrapes never count against a client's rate limit and the
//! port can be firewalled on its own. Each connection's request head must arrive within
//! `server.header_timeout_secs`, and the TLS handshake within `server.tls_handshake_timeout_secs`.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use rustls::ServerConfig;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;

use crate::app::AppState;

/// Connections served at once; a scraper needs one.
const MAX_CONNECTIONS: usize = 64;
/// prometheus-client writes the OpenMetrics text format, which Prometheus asks for first.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Whether metrics on `addr` go in clear: only on loopback.
pub fn plain_on(addr: SocketAddr) -> bool {
    addr.ip().is_loopback()
}

/// The server's TLS configuration, restricted to HTTP/1.1.
pub fn tls_config(server: &ServerConfig) -> Arc<ServerConfig> {
    let mut c = server.clone();
    c.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(c)
}

/// Serves metrics on `listener` until aborted. `tls` is `None` only for a loopback listener.
pub async fn serve(listener: TcpListener, tls: Option<Arc<ServerConfig>>, state: Arc<AppState>) {
    let permits = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let acceptor = tls.map(TlsAcceptor::from);
    let header_timeout = Duration::from_secs(state.config.server.header_timeout_secs);
    let handshake_timeout = Duration::from_secs(state.config.server.tls_handshake_timeout_secs);
    loop {
        let Ok((stream, peer)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else { continue };
        let (state, acceptor) = (state.clone(), acceptor.clone());
        tokio::spawn(async move {
            let _permit = permit;
            let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
                let state = state.clone();
                async move { Ok::<_, Infallible>(answer(&state, &req).await) }
            });
            let mut b = http1::Builder::new();
            b.timer(TokioTimer::new()).header_read_timeout(header_timeout).keep_alive(true);
            let result = match acceptor {
                None => b.serve_connection(TokioIo::new(stream), service).await,
                Some(a) => match tokio::time::timeout(handshake_timeout, a.accept(stream)).await {
                    Ok(Ok(tls)) => b.serve_connection(TokioIo::new(tls), service).await,
                    _ => return tracing::debug!(%peer, "metrics: TLS handshake failed"),
                },
            };
            if let Err(e) = result {
                tracing::debug!(%peer, error = %e, "metrics connection ended with an error");
            }
        });
    }
}

async fn answer(state: &Arc<AppState>, req: &hyper::Request<Incoming>) -> hyper::Response<Full<Bytes>> {
    let reply = |status: u16, ct: &str, body: String| {
        hyper::Response::builder().status(status).header("content-type", ct).body(Full::new(Bytes::from(body))).expect("valid response")
    };
    if req.uri().path() != "/metrics" {
        return reply(404, "text/plain", "not found: metrics are at /metrics\n".into());
    }
    if req.method() != hyper::Method::GET && req.method() != hyper::Method::HEAD {
        return reply(405, "text/plain", "GET /metrics\n".into());
    }
    let outbox = match state.store.run(|s| s.outbox().counts_by_status()).await {
        Ok(c) => c.into_iter().map(|(s, n)| (s.as_str(), n)).collect(),
        Err(e) => {
            tracing::warn!(error = %e, "metrics: cannot count the outbox");
            Vec::new()
        }
    };
    let (embedding, search) = state.knowledge.shed();
    let shed = crate::metrics::Shed { embedding, search, writer: state.store.writes_shed() };
    reply(200, CONTENT_TYPE, state.metrics.encode(&outbox, state.knowledge.embedder.queue_depth(), shed, state.free_space.sample().free_bytes))
}
