//! The TLS-only acceptor: every accepted TCP connection is classified by its first byte. A TLS
//! ClientHello starts with 0x16; anything else is a plain-HTTP (or garbage) request, which gets one
//! `403 https_required` problem+json response and is closed. No redirect: it would invite clients to
//! send their bodies in clear first.
//!
//! A connection is first admitted against its client's caps ([`Peers`]); a client at a cap is closed at
//! once. Classification and handshakes run in their own tasks (bounded per client and globally), so one
//! slow client never holds up the accept loop. Two deadlines bound a handshake: its first byte must come
//! within `server.tls_start_timeout_secs` (a silent connection costs a slot for seconds, not for the whole
//! handshake deadline), the whole handshake within `server.tls_handshake_timeout_secs`.
//!
//! Behind a load balancer ([`Proxying`]): a connection from a trusted proxy is not counted against the
//! proxy's own caps (it carries many clients). With `server.proxy_protocol` on, such a connection may
//! start with a PROXY protocol v2 header, read within the handshake-start deadline; the client it names
//! is admitted against its caps and becomes the connection's peer. A PROXY header from any other peer is
//! refused: the connection is closed without an answer.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rustls::ServerConfig;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc};
use tokio::time::Instant;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

use super::client::{self, TrustedProxies};
use super::peers::{Peers, Slot};

/// Builds the complete HTTP/1.1 refusal for a plain request from this peer.
pub type Refusal = Arc<dyn Fn(SocketAddr) -> Vec<u8> + Send + Sync>;

/// A global backstop beside the per-client cap.
const MAX_PENDING_HANDSHAKES: usize = 1024;
const TLS_HANDSHAKE_RECORD: u8 = 0x16;

/// How long a handshake may take to start, and to finish (counted from the TCP accept).
#[derive(Debug, Clone, Copy)]
pub struct HandshakeDeadlines {
    pub start: Duration,
    pub whole: Duration,
}

/// A finished TLS handshake, with the client's connection slot (held for the connection's life).
pub struct Accepted {
    /// Boxed: the TLS state is over a KiB, and inline it would be held twice by the connection's task
    /// (as its argument and inside hyper's connection), an idle event stream's included (#26).
    pub stream: Box<TlsStream<TcpStream>>,
    /// The client: the TCP peer, or the source a trusted proxy's PROXY header named.
    pub peer: SocketAddr,
    /// `None` for a trusted proxy's connection that named no client: it is not capped per client.
    pub slot: Option<Slot>,
}

/// Which peers are proxies, and whether they send a PROXY protocol v2 header.
#[derive(Debug, Clone, Default)]
pub struct Proxying {
    pub trusted: TrustedProxies,
    pub proxy_protocol: bool,
}

pub struct TlsOnlyAcceptor {
    local: SocketAddr,
    rx: mpsc::Receiver<Accepted>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for TlsOnlyAcceptor {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl TlsOnlyAcceptor {
    pub fn new(
        listener: TcpListener,
        tls: Arc<ServerConfig>,
        refusal: Refusal,
        peers: Peers,
        deadlines: HandshakeDeadlines,
        proxying: Proxying,
    ) -> io::Result<Self> {
        let local = listener.local_addr()?;
        let (tx, rx) = mpsc::channel(64);
        let acceptor = TlsAcceptor::from(tls);
        let permits = Arc::new(Semaphore::new(MAX_PENDING_HANDSHAKES));
        let task = tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    _ = tx.closed() => return,
                    a = listener.accept() => a,
                };
                let (stream, peer) = match accepted {
                    Ok(x) => x,
                    Err(e) => {
                        // EMFILE and friends: back off instead of spinning.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let started = Instant::now();
                let trusted = proxying.trusted.contains(peer.ip());
                let slot = match trusted {
                    true => None,
                    false => match peers.admit(peer.ip()) {
                        Some(slot) => Some(slot),
                        None => {
                            tracing::debug!(%peer, "client at its connection or handshake cap; closing");
                            continue;
                        }
                    },
                };
                let Ok(permit) = permits.clone().try_acquire_owned() else {
                    tracing::warn!(%peer, "too many pending TLS handshakes; dropping connection");
                    continue;
                };
                let (tx, acceptor, refusal, peers) = (tx.clone(), acceptor.clone(), refusal.clone(), peers.clone());
                let proxy_protocol = trusted && proxying.proxy_protocol;
                tokio::spawn(async move {
                    let _permit = permit;
                    let _ = stream.set_nodelay(true);
                    let (mut stream, mut peer, mut slot) = (stream, peer, slot);
                    let mut first = [0u8; 1];
                    let mut peeked = tokio::time::timeout(deadlines.start, stream.peek(&mut first)).await;
                    if let Ok(Ok(1)) = peeked
                        && client::looks_like_proxy_header(first[0])
                    {
                        if !proxy_protocol {
                            tracing::debug!(%peer, "PROXY header from a peer not allowed to send one; closing");
                            return;
                        }
                        match client::read_proxy_header(&mut stream, deadlines.start).await {
                            Ok(Some(source)) => {
                                let Some(s) = peers.admit(source.ip()) else {
                                    tracing::debug!(%peer, client = %source, "client at its connection or handshake cap; closing");
                                    return;
                                };
                                (peer, slot) = (source, Some(s));
                            }
                            Ok(None) => {}
                            Err(e) => {
                                tracing::debug!(%peer, error = %e, "bad PROXY header; closing");
                                return;
                            }
                        }
                        peeked = tokio::time::timeout_at(started + deadlines.whole, stream.peek(&mut first)).await;
                    }
                    match peeked {
                        Ok(Ok(1)) if first[0] == TLS_HANDSHAKE_RECORD => {
                            match tokio::time::timeout_at(started + deadlines.whole, acceptor.accept(stream)).await {
                                Ok(Ok(stream)) => {
                                    if let Some(s) = slot.as_mut() {
                                        s.handshake_done();
                                    }
                                    let _ = tx.send(Accepted { stream: Box::new(stream), peer, slot }).await;
                                }
                                Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                                Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                            }
                        }
                        Ok(Ok(n)) if n > 0 => refuse_plain(stream, peer, &refusal).await,
                        Ok(_) => {}
                        Err(_) => tracing::debug!(%peer, "no TLS handshake started in time"),
                    }
                });
            }
        });
        Ok(Self { local, rx, task })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The next finished handshake; `None` once the accept loop has stopped.
    pub async fn accept(&mut self) -> Option<Accepted> {
        self.rx.recv().await
    }
}

/// Serves the optional plain-HTTP port: every connection gets the refusal. Runs until aborted.
pub async fn refuse_all(listener: TcpListener, refusal: Refusal) {
    let permits = Arc::new(Semaphore::new(MAX_PENDING_HANDSHAKES));
    loop {
        let Ok((stream, peer)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else { continue };
        let refusal = refusal.clone();
        tokio::spawn(async move {
            let _permit = permit;
            refuse_plain(stream, peer, &refusal).await;
        });
    }
}

/// Reads the request head (bounded in size and time) so closing does not reset the connection before the
/// client reads the answer, writes the refusal, and closes.
async fn refuse_plain(mut stream: TcpStream, peer: SocketAddr, refusal: &Refusal) {
    let mut buf = vec![0u8; 16 * 1024];
    let mut filled = 0;
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        while filled < buf.len() {
            match stream.read(&mut buf[filled..]).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    filled += n;
                    if buf[..filled].windows(4).any(|w| w == b"\r\n\r\n") {
                        break;
                    }
                }
            }
        }
    })
    .await;
    tracing::debug!(%peer, "refused a plain-HTTP request");
    let response = refusal(peer);
    if stream.write_all(&response).await.is_ok() {
        let _ = stream.shutdown().await;
        // Drain what the client still sends (a body) for a moment, so the close is orderly.
        let _ = tokio::time::timeout(Duration::from_secs(1), async {
            let mut sink = [0u8; 4096];
            while let Ok(n) = stream.read(&mut sink).await {
                if n == 0 {
                    break;
                }
            }
        })
        .await;
    }
}
