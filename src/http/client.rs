//! Who the client is: the one place that decides the address rate limits, the per-client caps and the
//! logs use.
//!
//! - A connection's address is its TCP peer, or, when the peer is a trusted proxy and
//!   `server.proxy_protocol` is on, the source a PROXY protocol v2 header names (read before the TLS
//!   handshake, see [`read_proxy_header`]).
//! - A request's address is its connection's, unless that is a trusted proxy (`server.trusted_proxies`):
//!   then `Forwarded` (RFC 7239, its `for=` parameters) or, without it, `X-Forwarded-For` is read from
//!   the right, and the first address that is not a trusted proxy is the client. An untrusted peer's
//!   headers are never read, so a client cannot choose its own rate-limit key.
//!
//! A hop that does not name an address (`unknown`, an obfuscated `_name`, garbage) ends the walk: the
//! client is the hop to its right, the last one a trusted proxy vouched for.

use std::net::{IpAddr, SocketAddr};

pub use crate::domain::TrustedProxies;
use crate::domain::canonical;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

/// The v2 header's fixed part: the 12-byte signature, version and command, family and protocol, length.
const FIXED: usize = 16;
/// Longest header read: the address block (216 bytes for UNIX sockets) and a bounded set of TLVs.
const MAX_HEADER: usize = 1024;

#[derive(Debug, thiserror::Error)]
pub enum ProxyHeaderError {
    #[error("no PROXY header in time")]
    Timeout,
    #[error("reading the PROXY header: {0}")]
    Io(#[from] std::io::Error),
    #[error("PROXY header of {0} bytes is longer than {MAX_HEADER}")]
    TooLong(usize),
    #[error("malformed PROXY header: {0}")]
    Malformed(#[from] ppp::v2::ParseError),
}

/// True when `first` (what a connection sent first) starts like a PROXY v2 header (`\r`: neither a TLS
/// record nor an HTTP method starts so). A v1 header (`PROXY ...`) reads as plain HTTP and is refused as such.
pub fn looks_like_proxy_header(first: u8) -> bool {
    first == ppp::v2::PROTOCOL_PREFIX[0]
}

/// Reads one PROXY protocol v2 header off `stream` within `deadline` and returns the client it names:
/// the source address for a proxied TCP connection, `None` for a `LOCAL` command (the proxy's own
/// health check) or an address family without an IP. Exactly the header's bytes are consumed, so the
/// TLS handshake reads on from where it ends.
pub async fn read_proxy_header(stream: &mut TcpStream, deadline: Duration) -> Result<Option<SocketAddr>, ProxyHeaderError> {
    tokio::time::timeout(deadline, async {
        let mut buf = vec![0u8; FIXED];
        stream.read_exact(&mut buf).await?;
        if !buf.starts_with(ppp::v2::PROTOCOL_PREFIX) {
            return Err(ProxyHeaderError::Malformed(ppp::v2::ParseError::Prefix));
        }
        let total = FIXED + usize::from(u16::from_be_bytes([buf[14], buf[15]]));
        if total > MAX_HEADER {
            return Err(ProxyHeaderError::TooLong(total));
        }
        buf.resize(total, 0);
        stream.read_exact(&mut buf[FIXED..]).await?;
        parse_proxy_header(&buf)
    })
    .await
    .unwrap_or(Err(ProxyHeaderError::Timeout))
}

fn parse_proxy_header(buf: &[u8]) -> Result<Option<SocketAddr>, ProxyHeaderError> {
    use ppp::v2::{Addresses, Command, Header};
    let header = Header::try_from(buf)?;
    if header.command == Command::Local {
        return Ok(None);
    }
    Ok(match header.addresses {
        Addresses::IPv4(a) => Some(SocketAddr::new(IpAddr::V4(a.source_address), a.source_port)),
        Addresses::IPv6(a) => Some(SocketAddr::new(canonical(IpAddr::V6(a.source_address)), a.source_port)),
        Addresses::Unspecified | Addresses::Unix(_) => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use poem::http::{HeaderMap, HeaderValue};

    fn trusted() -> TrustedProxies {
        TrustedProxies::parse(&["10.0.0.0/8".into(), "2001:db8::/32".into(), "192.0.2.7".into()]).unwrap()
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn parses_ranges_and_single_addresses() {
        let t = trusted();
        assert!(t.contains(ip("10.1.2.3")) && t.contains(ip("192.0.2.7")) && t.contains(ip("2001:db8:5::1")));
        assert!(t.contains(ip("::ffff:10.0.0.1")), "mapped IPv4 is IPv4");
        assert!(!t.contains(ip("192.0.2.8")) && !t.contains(ip("11.0.0.1")));
        assert!(TrustedProxies::parse(&["10.0.0.0/33".into()]).is_err());
        assert!(TrustedProxies::parse(&["proxy.example".into()]).is_err());
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_sends() {
        let h = headers(&[("x-forwarded-for", "203.0.113.9"), ("forwarded", "for=203.0.113.9")]);
        assert_eq!(trusted().client(ip("198.51.100.1"), &h), ip("198.51.100.1"));
        assert_eq!(TrustedProxies::default().client(ip("10.0.0.1"), &h), ip("10.0.0.1"), "no proxies configured");
    }

    #[test]
    fn x_forwarded_for_is_read_from_the_right() {
        let t = trusted();
        let h = headers(&[("x-forwarded-for", "1.1.1.1, 203.0.113.9, 10.0.0.2")]);
        assert_eq!(t.client(ip("10.0.0.1"), &h), ip("203.0.113.9"), "the spoofed leftmost entry is ignored");
        let h = headers(&[("x-forwarded-for", "1.1.1.1"), ("x-forwarded-for", "203.0.113.9")]);
        assert_eq!(t.client(ip("10.0.0.1"), &h), ip("203.0.113.9"), "several lines are one list");
        let h = headers(&[("x-forwarded-for", "10.0.0.3, 10.0.0.2")]);
        assert_eq!(t.client(ip("10.0.0.1"), &h), ip("10.0.0.3"), "all trusted: the farthest");
        assert_eq!(t.client(ip("10.0.0.1"), &HeaderMap::new()), ip("10.0.0.1"), "no header: the proxy itself");
        let h = headers(&[("x-forwarded-for", "203.0.113.9, garbage")]);
        assert_eq!(t.client(ip("10.0.0.1"), &h), ip("10.0.0.1"), "an unreadable hop stops the walk");
        let h = headers(&[("x-forwarded-for", "2001:db9::1, [2001:db8::2]:80, 198.51.100.4:5000")]);
        assert_eq!(t.client(ip("10.0.0.1"), &h), ip("198.51.100.4"));
    }

    #[test]
    fn forwarded_wins_over_x_forwarded_for() {
        let t = trusted();
        let h = headers(&[("forwarded", "for=1.1.1.1, for=\"[2001:db9::7]:4711\";proto=https, For=10.0.0.9;by=10.0.0.1"), ("x-forwarded-for", "198.51.100.1")]);
        assert_eq!(t.client(ip("10.0.0.1"), &h), ip("2001:db9::7"));
        let h = headers(&[("forwarded", "for=unknown, for=10.0.0.9")]);
        assert_eq!(t.client(ip("10.0.0.1"), &h), ip("10.0.0.9"), "unknown hop: the last trusted one");
        let h = headers(&[("forwarded", "for=_hidden;proto=https")]);
        assert_eq!(t.client(ip("10.0.0.1"), &h), ip("10.0.0.1"));
        let h = headers(&[("forwarded", "proto=https;for=192.0.2.60:80")]);
        assert_eq!(t.client(ip("10.0.0.1"), &h), ip("192.0.2.60"));
    }

    fn v2(command: u8, addresses: ppp::v2::Addresses) -> Vec<u8> {
        ppp::v2::Builder::with_addresses(0x20 | command, ppp::v2::Protocol::Stream, addresses).build().unwrap()
    }

    #[test]
    fn proxy_headers_name_the_source_or_nothing() {
        let v4: SocketAddr = "203.0.113.9:5000".parse().unwrap();
        let dst: SocketAddr = "10.0.0.5:443".parse().unwrap();
        assert_eq!(parse_proxy_header(&v2(1, (v4, dst).into())).unwrap(), Some(v4));
        let v6: SocketAddr = "[2001:db9::1]:5000".parse().unwrap();
        let dst6: SocketAddr = "[2001:db8::5]:443".parse().unwrap();
        assert_eq!(parse_proxy_header(&v2(1, (v6, dst6).into())).unwrap(), Some(v6));
        assert_eq!(parse_proxy_header(&v2(0, (v4, dst).into())).unwrap(), None, "LOCAL: the proxy's own check");
        assert_eq!(parse_proxy_header(&v2(1, ppp::v2::Addresses::Unspecified)).unwrap(), None);
        let mut bad = v2(1, (v4, dst).into());
        bad[12] = 0x31; // version 3
        assert!(parse_proxy_header(&bad).is_err());
        assert!(parse_proxy_header(b"PROXY TCP4 203.0.113.9 10.0.0.5 5000 443\r\n").is_err(), "v1 is not accepted");
        assert!(looks_like_proxy_header(b'\r') && !looks_like_proxy_header(b'P') && !looks_like_proxy_header(0x16));
    }

    #[tokio::test]
    async fn a_header_is_read_exactly_and_within_its_deadline() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let src: SocketAddr = "203.0.113.9:5000".parse().unwrap();
        let mut bytes = v2(1, (src, addr).into());
        bytes.extend_from_slice(b"\x16rest");
        let client = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            let mut s = TcpStream::connect(addr).await.unwrap();
            s.write_all(&bytes).await.unwrap();
            let mut silent = TcpStream::connect(addr).await.unwrap();
            silent.write_all(&ppp::v2::PROTOCOL_PREFIX[..4]).await.unwrap();
            let mut long = TcpStream::connect(addr).await.unwrap();
            let mut h = ppp::v2::PROTOCOL_PREFIX.to_vec();
            h.extend_from_slice(&[0x21, 0x11, 0xff, 0xff]);
            long.write_all(&h).await.unwrap();
            tokio::time::sleep(Duration::from_secs(1)).await;
            (s, silent, long)
        });
        let (mut s, _) = listener.accept().await.unwrap();
        assert_eq!(read_proxy_header(&mut s, Duration::from_secs(1)).await.unwrap(), Some(src));
        let mut rest = [0u8; 5];
        s.read_exact(&mut rest).await.unwrap();
        assert_eq!(&rest, b"\x16rest", "the bytes after the header are left for TLS");
        let (mut silent, _) = listener.accept().await.unwrap();
        assert!(matches!(read_proxy_header(&mut silent, Duration::from_millis(100)).await, Err(ProxyHeaderError::Timeout)));
        let (mut long, _) = listener.accept().await.unwrap();
        assert!(matches!(read_proxy_header(&mut long, Duration::from_secs(1)).await, Err(ProxyHeaderError::TooLong(_))));
        drop(client);
    }
}
