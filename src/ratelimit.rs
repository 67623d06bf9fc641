//! GCRA rate limiting (the token-bucket equivalent that keeps one timestamp per key).
//!
//! A key with limit `L` a minute refills one request every `T = 60 s / L` and holds at most
//! `capacity = burst × L` requests. The state is the theoretical arrival time (TAT); a request at `now`
//! is allowed when `TAT - now <= (capacity - 1) × T`, and then pushes TAT by `T`. A key whose TAT is in
//! the past holds a full bucket, which is the same as no entry at all, so such keys are pruned: memory
//! grows with the number of keys active in the last `capacity × T`, never with history.
//!
//! A request may count against several buckets at once ([`RateLimiter::check_all`]): a visitor's own
//! bucket inside its site's. It is allowed only when every one of them allows it, and then taken from
//! all; a refused request takes from none, so a visitor refused by its own bucket does not spend the
//! site's.
//!
//! Time comes from a [`Clock`] so tests advance it instead of sleeping.

use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::domain::SiteId;

/// Monotonic time in nanoseconds since an arbitrary origin.
pub trait Clock: Send + Sync + 'static {
    fn now_nanos(&self) -> u64;
}

/// The real clock.
#[derive(Debug)]
pub struct SystemClock(Instant);

impl Default for SystemClock {
    fn default() -> Self {
        Self(Instant::now())
    }
}

impl Clock for SystemClock {
    fn now_nanos(&self) -> u64 {
        self.0.elapsed().as_nanos() as u64
    }
}

/// A clock that moves only when told to; shared by clones.
#[derive(Debug, Clone, Default)]
pub struct ManualClock(Arc<AtomicU64>);

impl ManualClock {
    pub fn advance(&self, by: Duration) {
        self.0.fetch_add(by.as_nanos() as u64, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_nanos(&self) -> u64 {
        // Start far from zero so "TAT in the past" arithmetic never underflows at origin.
        self.0.load(Ordering::SeqCst) + 3_600_000_000_000
    }
}

/// A client as limits count it: an IPv4 address, or an IPv6 /64 (a single IPv6 host usually has a whole
/// /64 to pick source addresses from). An IPv4-mapped IPv6 address is its IPv4 address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Client {
    V4([u8; 4]),
    V6Prefix([u8; 8]),
}

impl Client {
    pub fn of(ip: IpAddr) -> Self {
        match ip {
            IpAddr::V4(v4) => Client::V4(v4.octets()),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => Client::V4(v4.octets()),
                None => {
                    let o = v6.octets();
                    Client::V6Prefix([o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7]])
                }
            },
        }
    }
}

/// What a key is limited by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    /// A site's budget for its visitors (requests that name it by `X-Site-Id`).
    Site(SiteId),
    /// A site's budget for calls with its bearer token (server to server), apart from its visitors'.
    SiteToken(SiteId),
    /// One visitor's share inside a site's budget.
    Visitor(SiteId, Client),
    /// A client on routes without a site.
    Ip(Client),
}

impl Key {
    pub fn ip(ip: IpAddr) -> Key {
        Key::Ip(Client::of(ip))
    }
}

/// The outcome of one check, with what the rate-limit headers report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    /// `X-RateLimit-Limit`: the bucket's capacity, the most requests it holds (the rate times the
    /// burst multiplier), so that `remaining` never exceeds it.
    pub limit: u32,
    /// The rate the bucket refills at, requests a minute (`X-RateLimit-Policy`).
    pub per_minute: u32,
    /// `X-RateLimit-Remaining`: whole requests left in the bucket after this one, 0..=`limit`.
    pub remaining: u32,
    /// `X-RateLimit-Reset`: whole seconds, rounded up, until the bucket is full again.
    pub reset_secs: u64,
    /// `Retry-After` for a refused request: whole seconds, rounded up, until one is allowed.
    pub retry_after_secs: u64,
}

pub struct RateLimiter {
    clock: Arc<dyn Clock>,
    burst: u32,
    max_keys: usize,
    state: Mutex<HashMap<Key, u64>>,
}

impl std::fmt::Debug for RateLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimiter").field("burst", &self.burst).field("max_keys", &self.max_keys).finish()
    }
}

const MINUTE_NANOS: u64 = 60_000_000_000;

fn ceil_secs(nanos: u64) -> u64 {
    nanos.div_ceil(1_000_000_000)
}

impl RateLimiter {
    pub fn new(clock: Arc<dyn Clock>, burst: u32, max_keys: usize) -> Self {
        Self { clock, burst: burst.max(1), max_keys: max_keys.max(1), state: Mutex::new(HashMap::new()) }
    }

    /// The clock the buckets run on, for other limits that should move with it (the console's sign-in
    /// throttle), so that a test advances one clock for all.
    pub fn clock(&self) -> Arc<dyn Clock> {
        self.clock.clone()
    }

    /// Takes one request from `key`'s bucket, which refills `per_minute` a minute.
    pub fn check(&self, key: Key, per_minute: u32) -> Decision {
        self.check_all(&[(key, per_minute)]).1
    }

    /// Takes one request from every bucket in `checks` (key, rate a minute), or from none: the first
    /// bucket, in order, that has no request left refuses it, and nothing is taken. Returns the index of
    /// the binding bucket and its decision, which the rate-limit headers report: the refusing one, else
    /// the one with fewest requests left.
    pub fn check_all(&self, checks: &[(Key, u32)]) -> (usize, Decision) {
        let now = self.clock.now_nanos();
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let new_keys = checks.iter().filter(|(k, _)| !state.contains_key(k)).count();
        if new_keys > 0 && state.len() + new_keys > self.max_keys {
            state.retain(|_, tat| *tat > now);
        }
        let mut room = self.max_keys.saturating_sub(state.len());
        let mut updates = Vec::with_capacity(checks.len());
        let mut binding: Option<(usize, Decision)> = None;
        for (i, &(key, per_minute)) in checks.iter().enumerate() {
            let per_minute = per_minute.max(1);
            let t = MINUTE_NANOS / per_minute as u64;
            let capacity = per_minute as u64 * self.burst as u64;
            let tolerance = t * (capacity - 1);
            let known = state.get(&key).copied();
            let d = if known.is_none() && room == 0 {
                // Every tracked key is active: refuse to grow. The new key is judged as if its bucket
                // were full, but not remembered, which errs towards serving rather than refusing.
                tracing::warn!(keys = state.len(), "rate limiter at max_tracked_keys; not tracking a new key");
                Decision { allowed: true, limit: capacity as u32, per_minute, remaining: (capacity - 1) as u32, reset_secs: ceil_secs(t), retry_after_secs: 0 }
            } else {
                let tat = known.unwrap_or(now).max(now);
                if tat - now > tolerance {
                    let retry = tat - now - tolerance;
                    let refused = Decision {
                        allowed: false,
                        limit: capacity as u32,
                        per_minute,
                        remaining: 0,
                        reset_secs: ceil_secs(tat - now),
                        retry_after_secs: ceil_secs(retry).max(1),
                    };
                    return (i, refused);
                }
                if known.is_none() {
                    room -= 1;
                }
                let new_tat = tat + t;
                updates.push((key, new_tat));
                let used = new_tat - now;
                let remaining = (capacity * t).saturating_sub(used) / t;
                Decision { allowed: true, limit: capacity as u32, per_minute, remaining: remaining as u32, reset_secs: ceil_secs(used), retry_after_secs: 0 }
            };
            let tighter = binding.is_none_or(|(_, b)| (d.remaining, std::cmp::Reverse(d.reset_secs)) < (b.remaining, std::cmp::Reverse(b.reset_secs)));
            if tighter {
                binding = Some((i, d));
            }
        }
        for (key, tat) in updates {
            state.insert(key, tat);
        }
        binding.unwrap_or((0, Decision { allowed: true, limit: 0, per_minute: 0, remaining: 0, reset_secs: 0, retry_after_secs: 0 }))
    }

    /// Drops keys whose bucket is full again. Called periodically by the server.
    pub fn prune(&self) -> usize {
        let now = self.clock.now_nanos();
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let before = state.len();
        state.retain(|_, tat| *tat > now);
        before - state.len()
    }

    pub fn tracked_keys(&self) -> usize {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limiter(max_keys: usize) -> (ManualClock, RateLimiter) {
        let clock = ManualClock::default();
        let l = RateLimiter::new(Arc::new(clock.clone()), 2, max_keys);
        (clock, l)
    }

    fn ip(n: u8) -> Key {
        Key::ip(IpAddr::from([10, 0, 0, n]))
    }

    #[test]
    fn burst_of_twice_the_limit_then_one_a_second() {
        let (clock, l) = limiter(100);
        let first = l.check(ip(1), 60);
        assert_eq!((first.allowed, first.limit, first.per_minute, first.remaining, first.reset_secs), (true, 120, 60, 119, 1));
        for i in 1..120 {
            let d = l.check(ip(1), 60);
            assert!(d.allowed, "request {i}");
            assert_eq!(d.remaining, 119 - i);
        }
        let refused = l.check(ip(1), 60);
        assert!(!refused.allowed);
        assert_eq!(refused.remaining, 0);
        assert_eq!(refused.retry_after_secs, 1);
        assert_eq!(refused.reset_secs, 120);
        clock.advance(Duration::from_secs(1));
        assert!(l.check(ip(1), 60).allowed);
        assert!(!l.check(ip(1), 60).allowed);
        clock.advance(Duration::from_millis(500));
        assert!(!l.check(ip(1), 60).allowed);
        clock.advance(Duration::from_millis(500));
        assert!(l.check(ip(1), 60).allowed);
    }

    #[test]
    fn keys_are_independent() {
        let (_c, l) = limiter(100);
        for _ in 0..120 {
            assert!(l.check(ip(1), 60).allowed);
        }
        assert!(!l.check(ip(1), 60).allowed);
        assert!(l.check(ip(2), 60).allowed);
    }

    #[test]
    fn idle_keys_are_pruned() {
        let (clock, l) = limiter(100);
        for n in 0..50 {
            l.check(ip(n), 60);
        }
        assert_eq!(l.tracked_keys(), 50);
        clock.advance(Duration::from_secs(2));
        assert_eq!(l.prune(), 50);
        assert_eq!(l.tracked_keys(), 0);
    }

    #[test]
    fn memory_is_bounded_by_max_keys() {
        let (clock, l) = limiter(10);
        for n in 0..10 {
            l.check(ip(n), 60);
        }
        l.check(ip(200), 60);
        assert_eq!(l.tracked_keys(), 10);
        clock.advance(Duration::from_secs(5));
        l.check(ip(201), 60);
        assert_eq!(l.tracked_keys(), 1);
    }

    #[test]
    fn reset_counts_down_to_a_full_bucket() {
        let (clock, l) = limiter(10);
        for _ in 0..10 {
            l.check(ip(1), 600);
        }
        // 10 requests at 0.1 s each: full again in 1 s.
        let d = l.check(ip(1), 600);
        assert_eq!(d.reset_secs, 2);
        clock.advance(Duration::from_secs(2));
        assert_eq!(l.check(ip(1), 600).reset_secs, 1);
    }

    #[test]
    fn a_request_is_taken_from_every_bucket_or_from_none() {
        let (_c, l) = limiter(100);
        let site = SiteId::parse("6f1c2a8e-2b6a-4c1e-9a51-0d6c7a1e2f3b").unwrap();
        let visitor = |n: u8| Key::Visitor(site, Client::of(IpAddr::from([10, 0, 0, n])));
        // Visitor share 15 a minute (30 in the bucket) inside a site's 60 (120).
        for i in 0..30u32 {
            let (binding, d) = l.check_all(&[(visitor(1), 15), (Key::Site(site), 60)]);
            assert!(d.allowed);
            assert_eq!((binding, d.limit, d.per_minute, d.remaining), (0, 30, 15, 29 - i), "the visitor's bucket binds");
        }
        let (binding, refused) = l.check_all(&[(visitor(1), 15), (Key::Site(site), 60)]);
        assert_eq!((binding, refused.allowed, refused.limit, refused.retry_after_secs), (0, false, 30, 4));
        // The refused requests took nothing from the site: 120 - 30 left.
        for _ in 0..10 {
            l.check_all(&[(visitor(1), 15), (Key::Site(site), 60)]);
        }
        assert_eq!(l.check(Key::Site(site), 60).remaining, 120 - 30 - 1);
        // Another visitor still gets in, and the bearer-token bucket is apart.
        assert!(l.check_all(&[(visitor(2), 15), (Key::Site(site), 60)]).1.allowed);
        assert_eq!(l.check(Key::SiteToken(site), 60).remaining, 119);
    }

    #[test]
    fn an_ipv6_client_is_its_64() {
        let ip = |s: &str| Client::of(s.parse().unwrap());
        assert_eq!(ip("2001:db8:1:2::1"), ip("2001:db8:1:2:ffff::9"));
        assert_ne!(ip("2001:db8:1:2::1"), ip("2001:db8:1:3::1"));
        assert_eq!(ip("::ffff:192.0.2.1"), ip("192.0.2.1"));
        assert_ne!(ip("192.0.2.1"), ip("192.0.2.2"));
    }
}
