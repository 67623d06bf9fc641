//! The HTTPS server: the TLS-only listener, the connections (hyper, with their deadlines), the edge layer,
//! the extractors and route scopes the handlers use, and the OpenAPI document. The route table is the
//! API's (`api::routes`).
//!
//! `serve` takes an already-bound listener and a shutdown future, so tests bind port 0, read the
//! address, and never sleep or poll for readiness. At shutdown the server stops accepting, asks every
//! connection to close after its requests in flight, and cuts the rest after `server.shutdown_grace_secs`.

pub mod client;
pub mod conditional;
pub mod connection;
pub mod edge;
pub mod error;
pub mod json;
pub mod listener;
pub mod metrics;
pub mod openapi;
pub mod peers;
pub mod scope;
pub mod sse;
pub mod tls;
pub mod unread;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_util::task::TaskTracker;

use crate::app::AppState;
use crate::ratelimit::Key;
use error::ApiError;

/// The bytes sent to a plain-HTTP request: a complete HTTP/1.1 problem+json response that closes.
fn refusal(state: Arc<AppState>) -> listener::Refusal {
    Arc::new(move |peer: SocketAddr| {
        let request_id = edge::new_request_id();
        let d = state.limiter.check(Key::ip(peer.ip()), state.config.limits.ip_per_minute);
        let body = serde_json::to_string(&ApiError::HttpsRequired.problem(&request_id)).unwrap_or_default();
        format!(
            "HTTP/1.1 403 Forbidden\r\nContent-Type: application/problem+json\r\nContent-Length: {}\r\nConnection: close\r\n\
             X-Request-Id: {request_id}\r\nX-RateLimit-Limit: {}\r\nX-RateLimit-Remaining: {}\r\nX-RateLimit-Reset: {}\r\nX-RateLimit-Policy: {}\r\n\r\n{body}",
            body.len(),
            d.limit,
            d.remaining,
            d.reset_secs,
            edge::policy(&d),
        )
        .into_bytes()
    })
}

/// Serves `ep` (the route table, `api::routes`, behind the `Edge`; tests put handlers of their own there)
/// over HTTPS on `listener` (and refusals on `plain`) until `shutdown` resolves, then lets in-flight
/// requests finish for `server.shutdown_grace_secs`. It only serves: the composition root
/// (`server::Server::run`) runs every other task beside it.
pub async fn serve<E: poem::Endpoint<Output = poem::Response> + 'static>(
    listener: TcpListener,
    plain: Option<TcpListener>,
    identity: &tls::Identity,
    state: Arc<AppState>,
    ep: E,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let refusal = refusal(state.clone());
    let plain_task = plain.map(|p| tokio::spawn(listener::refuse_all(p, refusal.clone())));
    let limiter_state = state.clone();
    let pruner = tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(30));
        loop {
            tick.tick().await;
            limiter_state.limiter.prune();
        }
    });
    let server = &state.config.server;
    let peers = peers::Peers::new(server.max_connections_per_ip, server.max_handshakes_per_ip);
    let deadlines = listener::HandshakeDeadlines {
        start: Duration::from_secs(server.tls_start_timeout_secs),
        whole: Duration::from_secs(server.tls_handshake_timeout_secs),
    };
    let proxying = listener::Proxying { trusted: state.proxies.clone(), proxy_protocol: server.proxy_protocol };
    let mut acceptor = listener::TlsOnlyAcceptor::new(listener, identity.config.clone(), refusal, peers, deadlines, proxying)?;
    let local = acceptor.local_addr();
    let settings = connection::Settings::from_config(server);
    let ep = Arc::new(ep);
    let stop = connection::Stop::default();
    let connections = TaskTracker::new();
    tracing::info!(addr = %local, "server started");
    tokio::pin!(shutdown);
    let result = loop {
        tokio::select! {
            _ = &mut shutdown => break Ok(()),
            accepted = acceptor.accept() => match accepted {
                Some(a) => {
                    connections.spawn(connection::serve(a, local, ep.clone(), settings, stop.clone()));
                }
                None => break Err(std::io::Error::other("the TLS accept loop stopped")),
            },
        }
    };
    drop(acceptor);
    stop.stop.cancel();
    connections.close();
    let grace = Duration::from_secs(server.shutdown_grace_secs);
    if tokio::time::timeout(grace, connections.wait()).await.is_err() {
        tracing::warn!(open = connections.len(), "shutdown grace over; cutting the connections left");
        stop.cut.cancel();
        connections.wait().await;
    }
    tracing::info!("server stopped");
    pruner.abort();
    if let Some(t) = plain_task {
        t.abort();
    }
    result
}
