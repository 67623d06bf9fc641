//! When to try again: the configured schedule with ±20 % jitter, a floor after 429s and timeouts, and
//! the receiver's `Retry-After` honoured up to a cap but never below the schedule.

use std::time::Duration;

use super::deliver::Verdict;
use crate::domain::Timestamp;
use crate::store::outbox::Next;

/// `Retry-After` values above this are cut to it, so a receiver cannot park an event for days.
pub const RETRY_AFTER_CAP: Duration = Duration::from_secs(3600);

/// The retry policy, read from `[webhooks]`.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Delays after the 1st, 2nd, ... failed attempt of a round; when used up, the event is dead.
    pub schedule: Vec<Duration>,
    /// Floor after a 429 or a timeout.
    pub min_after_throttle: Duration,
}

impl Policy {
    /// What follows an attempt that was the `attempts_before + 1`-th of its round. `jitter` is a factor
    /// in [0.8, 1.2] (random in production, fixed in tests).
    pub fn next(&self, verdict: Verdict, attempts_before: u32, retry_after: Option<Duration>, now: Timestamp, jitter: f64) -> Next {
        match verdict {
            Verdict::Delivered => return Next::Delivered,
            Verdict::Gone => return Next::Gone,
            Verdict::Throttled | Verdict::Failed => {}
        }
        let Some(base) = self.schedule.get(attempts_before as usize) else {
            return Next::Dead;
        };
        let mut delay = base.mul_f64(jitter.clamp(0.8, 1.2));
        if verdict == Verdict::Throttled {
            delay = delay.max(self.min_after_throttle);
        }
        if let Some(asked) = retry_after {
            delay = delay.max(asked.min(RETRY_AFTER_CAP));
        }
        Next::Retry(now + delay)
    }
}

/// A random jitter factor in [0.8, 1.2].
pub fn jitter() -> f64 {
    use rand::Rng;
    rand::thread_rng().gen_range(0.8..=1.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(t: i64) -> Timestamp {
        Timestamp::from_millis(t)
    }

    fn policy() -> Policy {
        let s = |n| Duration::from_secs(n);
        Policy { schedule: vec![s(5), s(300), s(1800), s(7200), s(18000), s(36000)], min_after_throttle: s(60) }
    }

    #[test]
    fn follows_the_schedule_then_dies() {
        let p = policy();
        assert_eq!(p.next(Verdict::Failed, 0, None, ms(0), 1.0), Next::Retry(ms(5_000)));
        assert_eq!(p.next(Verdict::Failed, 1, None, ms(1_000), 1.0), Next::Retry(ms(301_000)));
        assert_eq!(p.next(Verdict::Failed, 5, None, ms(0), 1.0), Next::Retry(ms(36_000_000)));
        assert_eq!(p.next(Verdict::Failed, 6, None, ms(0), 1.0), Next::Dead);
        assert_eq!(p.next(Verdict::Delivered, 6, None, ms(0), 1.0), Next::Delivered);
        assert_eq!(p.next(Verdict::Gone, 0, None, ms(0), 1.0), Next::Gone);
    }

    #[test]
    fn jitter_stays_within_twenty_percent() {
        let p = policy();
        assert_eq!(p.next(Verdict::Failed, 1, None, ms(0), 0.8), Next::Retry(ms(240_000)));
        assert_eq!(p.next(Verdict::Failed, 1, None, ms(0), 1.2), Next::Retry(ms(360_000)));
        assert_eq!(p.next(Verdict::Failed, 1, None, ms(0), 3.0), Next::Retry(ms(360_000)));
        for _ in 0..1000 {
            let j = jitter();
            assert!((0.8..=1.2).contains(&j), "{j}");
        }
    }

    #[test]
    fn throttling_waits_at_least_the_floor() {
        let p = policy();
        assert_eq!(p.next(Verdict::Throttled, 0, None, ms(0), 1.0), Next::Retry(ms(60_000)));
        // Later steps are already longer than the floor.
        assert_eq!(p.next(Verdict::Throttled, 1, None, ms(0), 1.0), Next::Retry(ms(300_000)));
    }

    #[test]
    fn retry_after_is_honoured_within_bounds() {
        let p = policy();
        // Longer than the schedule: honoured.
        assert_eq!(p.next(Verdict::Throttled, 0, Some(Duration::from_secs(120)), ms(0), 1.0), Next::Retry(ms(120_000)));
        // Shorter than the schedule: the schedule wins.
        assert_eq!(p.next(Verdict::Failed, 1, Some(Duration::from_secs(1)), ms(0), 1.0), Next::Retry(ms(300_000)));
        // Absurd: capped at an hour.
        assert_eq!(p.next(Verdict::Throttled, 0, Some(Duration::from_secs(86_400 * 30)), ms(0), 1.0), Next::Retry(ms(3_600_000)));
    }
}
