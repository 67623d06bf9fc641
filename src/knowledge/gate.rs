//! A semaphore with a bounded line in front of it, for shared work a request waits for (the embedding
//! session, the search slots): past the line's length or the wait's deadline, the caller is turned
//! away at once ([`Shed`]) and the API answers `503 unavailable` with `Retry-After`, instead of letting
//! a burst queue without end while every waiter's client times out anyway.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::{Semaphore, SemaphorePermit};

/// How long a line may grow and how long one may wait in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    /// Callers waiting at most (besides those holding a permit); 0 turns away whoever finds none free.
    pub max_waiting: usize,
    pub wait: Duration,
}

impl Bound {
    /// No bound: the CLI's imports and reports wait as long as they need.
    pub const UNBOUNDED: Bound = Bound { max_waiting: usize::MAX, wait: Duration::MAX };
}

/// Why a caller was turned away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Shed {
    #[error("the line is full")]
    Full,
    #[error("no turn within the wait")]
    Timeout,
}

#[derive(Debug)]
pub struct Gate {
    permits: Semaphore,
    waiting: AtomicUsize,
    shed: AtomicU64,
}

/// Counts a waiter until it gets a permit or gives up (its future dropped included).
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Gate {
    pub fn new(permits: usize) -> Gate {
        Gate { permits: Semaphore::new(permits), waiting: AtomicUsize::new(0), shed: AtomicU64::new(0) }
    }

    /// A permit, now or after waiting in line within `bound`.
    pub async fn enter(&self, bound: Bound) -> Result<SemaphorePermit<'_>, Shed> {
        if let Ok(p) = self.permits.try_acquire() {
            return Ok(p);
        }
        if self.waiting.fetch_add(1, Ordering::Relaxed) >= bound.max_waiting {
            self.waiting.fetch_sub(1, Ordering::Relaxed);
            return Err(self.turned_away(Shed::Full));
        }
        let _waiting = Waiting(&self.waiting);
        let acquire = self.permits.acquire();
        let permit = if bound.wait == Duration::MAX { Ok(acquire.await) } else { tokio::time::timeout(bound.wait, acquire).await };
        match permit {
            // The semaphore is never closed.
            Ok(p) => p.map_err(|_| self.turned_away(Shed::Timeout)),
            Err(_) => Err(self.turned_away(Shed::Timeout)),
        }
    }

    fn turned_away(&self, why: Shed) -> Shed {
        self.shed.fetch_add(1, Ordering::Relaxed);
        why
    }

    /// Callers waiting now.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Relaxed)
    }

    /// Callers turned away since start.
    pub fn shed(&self) -> u64 {
        self.shed.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use crate::knowledge::gate::*;

    #[tokio::test]
    async fn a_full_line_and_a_long_wait_are_turned_away() {
        let gate = Gate::new(1);
        let bound = Bound { max_waiting: 1, wait: Duration::from_millis(100) };
        let held = gate.enter(bound).await.unwrap();
        let (first, second) = tokio::join!(gate.enter(bound), async {
            tokio::task::yield_now().await;
            gate.enter(bound).await.map(drop)
        });
        assert_eq!(second, Err(Shed::Full), "one waiter at most");
        assert_eq!(first.map(drop), Err(Shed::Timeout), "no permit within 100 ms");
        assert_eq!((gate.waiting(), gate.shed()), (0, 2));
        drop(held);
        assert!(gate.enter(bound).await.is_ok(), "a free permit is taken without waiting");
        let none = Bound { max_waiting: 0, wait: Duration::from_secs(1) };
        let _held = gate.enter(none).await.unwrap();
        assert_eq!(gate.enter(none).await.map(drop), Err(Shed::Full));
    }
}
