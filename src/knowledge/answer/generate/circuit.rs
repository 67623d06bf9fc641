//! A circuit breaker for the answer generator: an endpoint that keeps failing is skipped for a while,
//! so questions get the extractive answer at once instead of each waiting out the timeout.
//!
//! Closed: every call goes through; `threshold` consecutive failures open the circuit. Open: calls are
//! refused until `cool_down` has passed. Half-open: one probe goes through, the others are still
//! refused; its success closes the circuit, its failure opens it for another cool-down.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::ratelimit::Clock;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Closed {
        failures: u32,
    },
    Open {
        until: u64,
    },
    /// A probe is out; nothing else goes through until it reports.
    HalfOpen,
}

pub struct CircuitBreaker {
    clock: Arc<dyn Clock>,
    threshold: u32,
    cool_down: Duration,
    state: Mutex<State>,
}

impl std::fmt::Debug for CircuitBreaker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CircuitBreaker").field("threshold", &self.threshold).field("state", &self.state()).finish_non_exhaustive()
    }
}

impl CircuitBreaker {
    pub fn new(clock: Arc<dyn Clock>, threshold: u32, cool_down: Duration) -> Self {
        Self { clock, threshold: threshold.max(1), cool_down, state: Mutex::new(State::Closed { failures: 0 }) }
    }

    pub fn state(&self) -> State {
        *self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// True when a call may go to the endpoint now. In the open state past the cool-down, the first
    /// caller becomes the probe.
    pub fn allow(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match *state {
            State::Closed { .. } => true,
            State::Open { until } if self.clock.now_nanos() >= until => {
                *state = State::HalfOpen;
                true
            }
            State::Open { .. } | State::HalfOpen => false,
        }
    }

    pub fn record_success(&self) {
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = State::Closed { failures: 0 };
    }

    pub fn record_failure(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let open = State::Open { until: self.clock.now_nanos() + self.cool_down.as_nanos() as u64 };
        *state = match *state {
            State::Closed { failures } if failures + 1 < self.threshold => State::Closed { failures: failures + 1 },
            State::Closed { .. } | State::HalfOpen | State::Open { .. } => open,
        };
    }
}

#[cfg(test)]
mod tests {
    use crate::knowledge::answer::generate::circuit::*;
    use crate::ratelimit::ManualClock;

    fn breaker() -> (ManualClock, CircuitBreaker) {
        let clock = ManualClock::default();
        (clock.clone(), CircuitBreaker::new(Arc::new(clock), 3, Duration::from_secs(30)))
    }

    #[test]
    fn opens_after_consecutive_failures_only() {
        let (_, b) = breaker();
        b.record_failure();
        b.record_failure();
        b.record_success();
        b.record_failure();
        b.record_failure();
        assert!(b.allow(), "a success in between resets the count");
        b.record_failure();
        assert!(matches!(b.state(), State::Open { .. }));
        assert!(!b.allow());
    }

    #[test]
    fn lets_one_probe_through_after_the_cool_down() {
        let (clock, b) = breaker();
        (0..3).for_each(|_| b.record_failure());
        clock.advance(Duration::from_secs(29));
        assert!(!b.allow());
        clock.advance(Duration::from_secs(1));
        assert!(b.allow(), "the probe");
        assert_eq!(b.state(), State::HalfOpen);
        assert!(!b.allow(), "only one probe at a time");
        b.record_failure();
        assert!(!b.allow(), "a failed probe opens the circuit again");
        clock.advance(Duration::from_secs(30));
        assert!(b.allow());
    }

    #[test]
    fn a_successful_probe_closes_the_circuit() {
        let (clock, b) = breaker();
        (0..3).for_each(|_| b.record_failure());
        clock.advance(Duration::from_secs(30));
        assert!(b.allow());
        b.record_success();
        assert_eq!(b.state(), State::Closed { failures: 0 });
        assert!(b.allow() && b.allow());
    }
}
