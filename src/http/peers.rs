//! Per-client caps on open connections and on TLS handshakes in progress, so one host cannot take the
//! slots every other client needs (before these caps, one host opening about 50 connections a second
//! held all global handshake slots).
//!
//! A client is its IPv4 address, or its IPv6 /64: a single IPv6 host usually has a whole /64 to pick
//! source addresses from. The counts live in one map behind a mutex, touched twice per connection;
//! entries leave the map when their last connection closes, so it holds open connections only.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::ratelimit::Client;

#[derive(Debug, Default)]
struct Count {
    connections: usize,
    handshakes: usize,
}

#[derive(Debug)]
struct Inner {
    counts: Mutex<HashMap<Client, Count>>,
    max_connections: usize,
    max_handshakes: usize,
}

impl Inner {
    fn counts(&self) -> MutexGuard<'_, HashMap<Client, Count>> {
        self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The caps, shared by the accept loop and every connection's [`Slot`].
#[derive(Debug, Clone)]
pub struct Peers(Arc<Inner>);

impl Peers {
    pub fn new(max_connections: usize, max_handshakes: usize) -> Self {
        Peers(Arc::new(Inner { counts: Mutex::new(HashMap::new()), max_connections, max_handshakes }))
    }

    /// A slot for a new connection from `ip`, counted as handshaking, or `None` when the client is at
    /// either cap.
    pub fn admit(&self, ip: IpAddr) -> Option<Slot> {
        let client = Client::of(ip);
        let mut counts = self.0.counts();
        let c = counts.entry(client).or_default();
        // A refused client already has connections (both caps are at least 1), so its entry stays.
        if c.connections >= self.0.max_connections || c.handshakes >= self.0.max_handshakes {
            return None;
        }
        c.connections += 1;
        c.handshakes += 1;
        Some(Slot { peers: self.0.clone(), client, handshaking: true })
    }

    /// Clients with at least one open connection.
    pub fn tracked(&self) -> usize {
        self.0.counts().len()
    }
}

/// One admitted connection; dropping it gives its place back.
#[derive(Debug)]
pub struct Slot {
    peers: Arc<Inner>,
    client: Client,
    handshaking: bool,
}

impl Slot {
    /// The handshake is over (done or failed): the connection stops counting against the handshake cap.
    pub fn handshake_done(&mut self) {
        if std::mem::take(&mut self.handshaking)
            && let Some(c) = self.peers.counts().get_mut(&self.client)
        {
            c.handshakes -= 1;
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = self.peers.counts();
        if let Some(c) = counts.get_mut(&self.client) {
            c.connections -= 1;
            if self.handshaking {
                c.handshakes -= 1;
            }
            if c.connections == 0 {
                counts.remove(&self.client);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn handshakes_and_connections_are_capped_per_client() {
        let peers = Peers::new(3, 2);
        let mut a = peers.admit(ip("192.0.2.1")).unwrap();
        let b = peers.admit(ip("192.0.2.1")).unwrap();
        assert!(peers.admit(ip("192.0.2.1")).is_none(), "two handshakes in progress");
        assert!(peers.admit(ip("192.0.2.2")).is_some(), "another client is not affected");
        a.handshake_done();
        let mut c = peers.admit(ip("192.0.2.1")).unwrap();
        c.handshake_done();
        assert!(peers.admit(ip("192.0.2.1")).is_none(), "three connections open");
        drop(b);
        assert!(peers.admit(ip("192.0.2.1")).is_some());
        drop((a, c));
        assert_eq!(peers.tracked(), 0, "closed clients leave the map");
    }

    #[test]
    fn an_ipv6_host_is_its_64_and_mapped_ipv4_is_ipv4() {
        let peers = Peers::new(1, 1);
        let _a = peers.admit(ip("2001:db8:1:2::1")).unwrap();
        assert!(peers.admit(ip("2001:db8:1:2:ffff::9")).is_none());
        assert!(peers.admit(ip("2001:db8:1:3::1")).is_some());
        let _b = peers.admit(ip("198.51.100.7")).unwrap();
        assert!(peers.admit(ip("::ffff:198.51.100.7")).is_none());
    }
}
