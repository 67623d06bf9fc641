//! `TrustedProxies`: the peers whose `Forwarded` / `X-Forwarded-For` headers and PROXY headers may name
//! the client (`server.trusted_proxies`), parsed once. `http::client` decides the client with it.
//!
//! A request's address is its connection's, unless that is a trusted proxy: then `Forwarded` (RFC 7239,
//! its `for=` parameters) or, without it, `X-Forwarded-For` is read from the right, and the first address
//! that is not a trusted proxy is the client. An untrusted peer's headers are never read, so a client
//! cannot choose its own rate-limit key. A hop that does not name an address (`unknown`, an obfuscated
//! `_name`, garbage) ends the walk: the client is the hop to its right, the last one a trusted proxy
//! vouched for.

use std::net::{IpAddr, SocketAddr};

use ipnet::IpNet;
use poem::http::HeaderMap;

/// The CIDR ranges whose connections may name the client (`server.trusted_proxies`).
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    /// Parses CIDR ranges (`10.0.0.0/8`, `2001:db8::/32`) or single addresses.
    pub fn parse(list: &[String]) -> Result<Self, String> {
        list.iter()
            .map(|s| {
                let s = s.trim();
                s.parse::<IpNet>()
                    .or_else(|_| s.parse::<IpAddr>().map(IpNet::from))
                    .map_err(|_| format!("server.trusted_proxies: `{s}` is not an address or a CIDR range such as 10.0.0.0/8"))
            })
            .collect::<Result<_, _>>()
            .map(TrustedProxies)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.0.iter().any(|net| net.contains(&ip))
    }

    /// The client of a request that came over a connection from `peer`.
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let peer = canonical(peer);
        if !self.contains(peer) {
            return peer;
        }
        let forwarded: Vec<&str> = headers.get_all("forwarded").iter().filter_map(|v| v.to_str().ok()).collect();
        let hops: Vec<Option<IpAddr>> = if !forwarded.is_empty() {
            forwarded.iter().flat_map(|v| v.split(',')).map(forwarded_for).collect()
        } else {
            headers.get_all("x-forwarded-for").iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(',')).map(|h| node(h.trim())).collect()
        };
        let mut client = peer;
        for hop in hops.into_iter().rev() {
            match hop {
                Some(ip) if self.contains(ip) => client = ip,
                Some(ip) => return ip,
                None => return client,
            }
        }
        client
    }
}

/// An IPv4-mapped IPv6 address is the IPv4 address (dual-stack sockets report them).
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// The `for=` node of one `Forwarded` element (`for=192.0.2.60;proto=https;by=203.0.113.43`).
fn forwarded_for(element: &str) -> Option<IpAddr> {
    element
        .split(';')
        .find_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            k.trim().eq_ignore_ascii_case("for").then(|| v.trim())
        })
        .and_then(|v| node(v.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(v)))
}

/// A node as RFC 7239 and X-Forwarded-For write it: `192.0.2.1`, `192.0.2.1:4711`, `[2001:db8::1]`,
/// `[2001:db8::1]:4711`, or a bare IPv6 address (X-Forwarded-For). `unknown` and `_obfuscated` are `None`.
fn node(v: &str) -> Option<IpAddr> {
    if let Ok(ip) = v.parse::<IpAddr>() {
        return Some(canonical(ip));
    }
    if let Ok(sa) = v.parse::<SocketAddr>() {
        return Some(canonical(sa.ip()));
    }
    let inner = v.strip_prefix('[')?.strip_suffix(']')?;
    inner.parse::<std::net::Ipv6Addr>().ok().map(|ip| canonical(IpAddr::V6(ip)))
}
