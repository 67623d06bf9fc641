//! Raw clients for the connection tests: TCP from a chosen loopback address (127.0.0.0/8 is all
//! loopback on Linux, so each address is another client to the server's per-client caps), TLS that
//! trusts the test server's certificate with a chosen ALPN protocol, and a probe for "the server closed
//! this connection".

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

use crate::helpers::TestApp;

/// A TCP connection to the server from `from` (e.g. `127.0.0.2`).
pub async fn tcp_from(from: &str, to: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::new(from.parse().unwrap(), 0)).unwrap();
    socket.connect(to).await.expect("connect")
}

fn connector(app: &TestApp, alpn: &[u8]) -> TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(CertificateDer::from_pem_slice(&app.cert_pem).unwrap()).unwrap();
    // The server's provider (ring, deprecated by rustls only for lacking post-quantum key exchange).
    #[allow(deprecated)]
    let provider = rustls::crypto::ring::default_provider();
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(provider))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![alpn.to_vec()];
    TlsConnector::from(Arc::new(config))
}

/// A finished TLS handshake from `from`, speaking `alpn` (`b"http/1.1"` or `b"h2"`).
pub async fn tls_from(app: &TestApp, from: &str, alpn: &[u8]) -> TlsStream<TcpStream> {
    try_tls_from(app, from, alpn).await.expect("TLS handshake")
}

pub async fn try_tls_from(app: &TestApp, from: &str, alpn: &[u8]) -> std::io::Result<TlsStream<TcpStream>> {
    let tcp = tcp_from(from, app.addr).await;
    connector(app, alpn).connect(ServerName::try_from("localhost").unwrap(), tcp).await
}

/// Reads (and drops) whatever comes until the server closes the connection, or `within` passes.
/// True when it closed.
pub async fn closed_within(stream: &mut (impl AsyncRead + Unpin), within: Duration) -> bool {
    let mut buf = [0u8; 4096];
    tokio::time::timeout(within, async {
        while let Ok(n) = stream.read(&mut buf).await {
            if n == 0 {
                break;
            }
        }
    })
    .await
    .is_ok()
}

/// As `closed_within`, writing `byte` every `every` meanwhile, as a client trickling a request does.
/// A write that fails also means closed.
pub async fn closed_while_trickling(stream: &mut (impl AsyncRead + AsyncWrite + Unpin), byte: u8, every: Duration, within: Duration) -> bool {
    let mut buf = [0u8; 4096];
    let mut tick = tokio::time::interval(every);
    tokio::time::timeout(within, async {
        loop {
            tokio::select! {
                r = stream.read(&mut buf) => if matches!(r, Ok(0) | Err(_)) { return },
                _ = tick.tick() => if stream.write_all(&[byte]).await.is_err() || stream.flush().await.is_err() { return },
            }
        }
    })
    .await
    .is_ok()
}

/// An HTTPS client whose connections come from `from`, one new connection (and handshake) per request.
pub fn client_from(app: &TestApp, from: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(&app.cert_pem).unwrap())
        .local_address(from.parse::<IpAddr>().unwrap())
        .pool_max_idle_per_host(0)
        .build()
        .unwrap()
}

/// The HTTP/2 client preface and an empty SETTINGS frame.
pub const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00";

/// An HTTP/2 frame: 9-byte header, then the payload.
pub fn h2_frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() as u32;
    let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

pub async fn write(stream: &mut (impl AsyncWrite + Unpin), bytes: &[u8]) {
    stream.write_all(bytes).await.unwrap();
    stream.flush().await.unwrap();
}
