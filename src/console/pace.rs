//! How fast one session's pages are served: `console.pages_per_minute` (300, five a second) with a
//! burst of `console.page_burst` (30) at once. A person never reaches it (opening a dozen tabs at once
//! is within the burst); a script looping over pages is slowed to the rate instead of taking the CPU the
//! public API answers with. A request over the budget waits for its turn, as a slow page would, up to
//! `MAX_WAIT`; beyond that (many at once) it is a readable 429 page with `Retry-After`.
//!
//! Keyed by the session cookie's hash, before the session is looked up: a request without a cookie is
//! not paced here (it can only reach the sign-in page, which the client-address limits and the sign-in
//! throttle guard), and one with a made-up cookie is paced like any other.
//!
//! The schedule is GCRA, as the API's rate limiter's: each key keeps the time its next request is due.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The longest a request waits for its turn before it is refused.
pub const MAX_WAIT: Duration = Duration::from_secs(5);

/// Keys kept at most; past it, keys whose turn has come are dropped, and if none is, the new key is not
/// paced (serving errs over refusing, as the rate limiter does).
const MAX_KEYS: usize = 100_000;

/// What a request must do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Turn {
    /// Go on, after waiting this long (zero within the burst).
    After(Duration),
    /// Too many at once: refuse, and say to come back after this long.
    Refused(Duration),
}

#[derive(Debug)]
pub struct Pacer {
    /// Between two requests of a key beyond the burst.
    interval: Duration,
    /// How far ahead of now a key's due time may run before its requests wait.
    tolerance: Duration,
    start: Instant,
    due: Mutex<HashMap<[u8; 32], Duration>>,
}

impl Pacer {
    pub fn new(per_minute: u32, burst: u32) -> Self {
        let interval = Duration::from_secs(60) / per_minute.max(1);
        Self { interval, tolerance: interval * burst.max(1).saturating_sub(1), start: Instant::now(), due: Mutex::new(HashMap::new()) }
    }

    /// Takes a turn for `key` now.
    pub fn turn(&self, key: [u8; 32]) -> Turn {
        self.turn_at(key, self.start.elapsed())
    }

    /// Takes a turn for `key` at `now` (time since the pacer started).
    fn turn_at(&self, key: [u8; 32], now: Duration) -> Turn {
        let mut due = self.due.lock().unwrap_or_else(|p| p.into_inner());
        if !due.contains_key(&key) && due.len() >= MAX_KEYS {
            due.retain(|_, d| *d > now);
            if due.len() >= MAX_KEYS {
                return Turn::After(Duration::ZERO);
            }
        }
        let next = due.get(&key).copied().unwrap_or(now).max(now);
        let wait = next.saturating_sub(now).saturating_sub(self.tolerance);
        if wait > MAX_WAIT {
            return Turn::Refused(wait - MAX_WAIT);
        }
        due.insert(key, next + self.interval);
        Turn::After(wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    #[test]
    fn a_burst_goes_at_once_then_the_rate_paces() {
        let pacer = Pacer::new(300, 30);
        let key = [1; 32];
        for i in 0..30 {
            assert_eq!(pacer.turn_at(key, Duration::ZERO), Turn::After(Duration::ZERO), "request {i} of the burst");
        }
        // Five a second: the 31st waits a fifth of a second, the 32nd two fifths.
        assert_eq!(pacer.turn_at(key, Duration::ZERO), Turn::After(SECOND / 5));
        assert_eq!(pacer.turn_at(key, Duration::ZERO), Turn::After(SECOND * 2 / 5));
        // Another session is not slowed by this one.
        assert_eq!(pacer.turn_at([2; 32], Duration::ZERO), Turn::After(Duration::ZERO));
    }

    #[test]
    fn a_loop_is_held_to_the_rate_and_a_flood_is_refused() {
        let pacer = Pacer::new(300, 30);
        let key = [3; 32];
        // A client that sends its next request as soon as the last is answered: after the burst, one
        // every fifth of a second.
        let mut now = Duration::ZERO;
        let mut served = 0;
        while now < SECOND * 10 {
            match pacer.turn_at(key, now) {
                Turn::After(wait) => now += wait + Duration::from_millis(1),
                Turn::Refused(_) => panic!("a loop one at a time is never refused"),
            }
            served += 1;
        }
        assert!((78..=82).contains(&served), "30 at once, then 5 a second for 10 s: {served}");
        // Many at once: those that would wait past MAX_WAIT are refused, with when to come back.
        let flood: Vec<Turn> = (0..100).map(|_| pacer.turn_at([4; 32], Duration::ZERO)).collect();
        let waited = flood.iter().filter(|t| matches!(t, Turn::After(_))).count();
        assert_eq!(waited, 30 + 25, "the burst and five seconds of turns");
        assert!(flood.iter().all(|t| match t {
            Turn::After(w) => *w <= MAX_WAIT,
            Turn::Refused(r) => *r > Duration::ZERO && *r <= SECOND * 10,
        }));
    }
}
