//! GCRA rate limiting (the token-bucket equivalent that keeps one timestamp per key).
//!
//! A key with limit `L` a minute refills one request every `T = 60 s / L` and holds at most
//! `capacity = burst × L` requests. The state is the theoretical arrival time (TAT); a request at `now`
//! is allowed when `TAT - now <= (capacity - 1) × T`, and then pushes TAT by `T`. A key whose TAT is in
//! the past holds a full bucket, which is the same as no entry at all, so such keys are pruned: memory
//! grows with the number of keys active in the last `capacity × T`, never with history.
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

/// What a key is limited by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    Site(SiteId),
    Ip(IpAddr),
}

/// The outcome of one check, with what the rate-limit headers report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    /// `X-RateLimit-Limit`: requests a minute.
    pub limit: u32,
    /// `X-RateLimit-Remaining`: whole requests left after this one.
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

    /// Takes one request from `key`'s bucket, which refills `per_minute` a minute.
    pub fn check(&self, key: Key, per_minute: u32) -> Decision {
        let per_minute = per_minute.max(1);
        let now = self.clock.now_nanos();
        let t = MINUTE_NANOS / per_minute as u64;
        let capacity = per_minute as u64 * self.burst as u64;
        let tolerance = t * (capacity - 1);
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.len() >= self.max_keys && !state.contains_key(&key) {
            state.retain(|_, tat| *tat > now);
            if state.len() >= self.max_keys {
                // Every tracked key is active: refuse to grow. The new key is judged as if its bucket
                // were full, but not remembered, which errs towards serving rather than refusing.
                tracing::warn!(keys = state.len(), "rate limiter at max_tracked_keys; not tracking a new key");
                return Decision { allowed: true, limit: per_minute, remaining: (capacity - 1) as u32, reset_secs: ceil_secs(t), retry_after_secs: 0 };
            }
        }
        let tat = state.get(&key).copied().unwrap_or(now).max(now);
        if tat - now > tolerance {
            let retry = tat - now - tolerance;
            return Decision { allowed: false, limit: per_minute, remaining: 0, reset_secs: ceil_secs(tat - now), retry_after_secs: ceil_secs(retry).max(1) };
        }
        let new_tat = tat + t;
        state.insert(key, new_tat);
        let used = new_tat - now;
        let remaining = (capacity * t).saturating_sub(used) / t;
        Decision { allowed: true, limit: per_minute, remaining: remaining as u32, reset_secs: ceil_secs(used), retry_after_secs: 0 }
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
        Key::Ip(IpAddr::from([10, 0, 0, n]))
    }

    #[test]
    fn burst_of_twice_the_limit_then_one_a_second() {
        let (clock, l) = limiter(100);
        let first = l.check(ip(1), 60);
        assert_eq!((first.allowed, first.limit, first.remaining, first.reset_secs), (true, 60, 119, 1));
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
}
