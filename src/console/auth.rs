//! Passwords and sign-in throttling.
//!
//! Passwords are hashed with Argon2id at OWASP's parameters (19 MiB, two passes, one lane); at least
//! [`MIN_PASSWORD_CHARS`] characters. An unknown e-mail address is verified against a hash of the
//! same parameters, so it costs the same time as a wrong password and gets the same answer.
//!
//! Every hash and every check the server computes goes through [`Hashing`]: at most
//! `console.password_checks` run at once on the blocking pool (by default half the cores, at least one),
//! each holding 19 MiB and a core for about 30 ms, and at most `console.password_checks_waiting` more wait
//! their turn. One beyond is refused at once ([`Busy`]), before any work, with a page asking to try again:
//! a burst of sign-ins never holds more memory than those few hashes, nor more threads of the blocking
//! pool that every database call shares, nor the cores the public API answers on.
//!
//! Sign-in attempts are counted per account (the address typed) and per client, an IPv4 address or an
//! IPv6 /64 ([`Client`], as the rate limits count it: one IPv6 host picks its source addresses from a
//! whole /64). An attempt is counted as a failure before its password is checked: one critical section
//! checks both counts and counts the attempt ([`Throttle::reserve`]), so of any number sent at once no
//! more are checked than the counts allow. After [`FREE_FAILURES`] in a row, each further attempt waits
//! twice as long as the one before (one second, then two, up to fifteen minutes) and is refused before
//! any password is checked until then. A success clears the account's count and takes back only its own
//! attempt from the client's, whose failures at other accounts stay; an attempt that was never checked
//! (refused as busy) is taken back from both. Time is the rate limiter's [`Clock`]. The counts live in
//! memory, bounded: a restart forgets them, which costs an attacker a restart per five guesses.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinError;

use crate::config::ConsoleConfig;
use crate::ratelimit::{Client, Clock};

/// The shortest password accepted, in characters.
pub const MIN_PASSWORD_CHARS: usize = 12;
/// The longest: Argon2 reads it whole, and nobody types more.
pub const MAX_PASSWORD_CHARS: usize = 256;
/// Failures in a row before attempts are spaced.
pub const FREE_FAILURES: u32 = 5;
const MAX_WAIT: Duration = Duration::from_secs(15 * 60);
/// Accounts and addresses tracked at most; beyond, the oldest half is forgotten.
const MAX_TRACKED: usize = 100_000;

fn argon2() -> Argon2<'static> {
    // OWASP Password Storage Cheat Sheet: m = 19 MiB, t = 2, p = 1.
    Argon2::new(Algorithm::Argon2id, Version::V0x13, Params::new(19 * 1024, 2, 1, None).expect("valid Argon2 parameters"))
}

/// Why a new password is refused, worded for the person typing it.
pub fn check_new_password(password: &str, repeat: &str) -> Result<(), &'static str> {
    let n = password.chars().count();
    if n < MIN_PASSWORD_CHARS {
        return Err("too_short");
    }
    if n > MAX_PASSWORD_CHARS {
        return Err("too_long");
    }
    if password != repeat {
        return Err("mismatch");
    }
    Ok(())
}

/// The PHC string of `password` (blocking: about 30 ms of one core; the server calls it through
/// [`Hashing`]).
pub fn hash_password(password: &str) -> String {
    let salt = SaltString::generate(&mut OsRng);
    argon2().hash_password(password.as_bytes(), &salt).expect("Argon2 hashes any password").to_string()
}

/// Whether `password` matches the stored hash; with no stored hash, a dummy of the same cost is checked
/// so that an unknown account takes as long as a known one (blocking; the server calls it through
/// [`Hashing`]).
pub fn verify_password(password: &str, stored: Option<&str>) -> bool {
    static DUMMY: OnceLock<String> = OnceLock::new();
    let dummy = DUMMY.get_or_init(|| hash_password("a password nobody has, to spend the same time"));
    let (hash, real) = match stored {
        Some(h) => (h, true),
        None => (dummy.as_str(), false),
    };
    let Ok(parsed) = PasswordHash::new(hash) else { return false };
    argon2().verify_password(password.as_bytes(), &parsed).is_ok() && real
}

/// Too many password checks running and waiting: refused before any work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Busy;

/// A hash or check that did not give its answer.
#[derive(Debug)]
pub enum HashError {
    /// Refused before any work: try again in a moment.
    Busy,
    /// The blocking task ended without an answer (a panic, or the runtime shutting down).
    Failed(JoinError),
}

impl std::fmt::Display for HashError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HashError::Busy => f.write_str("too many password checks at once"),
            HashError::Failed(e) => write!(f, "password hashing failed: {e}"),
        }
    }
}

/// The line in front of Argon2: how many hashes run at once, and how many may wait for a turn.
#[derive(Debug)]
pub struct Hashing {
    /// One permit a hash running on the blocking pool.
    running: Arc<Semaphore>,
    /// One permit a hash running or waiting; none left means [`Busy`].
    line: Arc<Semaphore>,
}

/// A place in the line, taken without waiting; its hash runs when a permit to run is free.
#[derive(Debug)]
pub struct Turn {
    line: OwnedSemaphorePermit,
    running: Arc<Semaphore>,
}

impl Hashing {
    /// `at_once` hashes running (at least one), `waiting` more in line.
    pub fn new(at_once: usize, waiting: usize) -> Self {
        let at_once = at_once.max(1);
        Self { running: Arc::new(Semaphore::new(at_once)), line: Arc::new(Semaphore::new(at_once + waiting)) }
    }

    /// `console.password_checks` (0: half the cores, at least one) and `console.password_checks_waiting`.
    pub fn from_config(console: &ConsoleConfig) -> Self {
        let at_once = match console.password_checks {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()) / 2,
            n => n as usize,
        };
        Self::new(at_once, console.password_checks_waiting as usize)
    }

    /// A place in the line, or [`Busy`] at once when the line is full. The sign-in takes its place before
    /// it reads the stored hash, so a refusal costs no database call, and checks it with [`Turn::run`].
    pub fn admit(&self) -> Result<Turn, Busy> {
        let line = self.line.clone().try_acquire_owned().map_err(|_| Busy)?;
        Ok(Turn { line, running: self.running.clone() })
    }

    /// [`hash_password`] in its turn.
    pub async fn hash(&self, password: String) -> Result<String, HashError> {
        let turn = self.admit().map_err(|Busy| HashError::Busy)?;
        turn.run(move || hash_password(&password)).await.map_err(HashError::Failed)
    }
}

impl Turn {
    /// Waits for a permit to run, then runs `work` on the blocking pool. Both permits go with the work, so
    /// a request dropped meanwhile (the client left) still counts until its hash has ended.
    pub async fn run<T: Send + 'static>(self, work: impl FnOnce() -> T + Send + 'static) -> Result<T, JoinError> {
        let running = self.running.acquire_owned().await.expect("the semaphore is never closed");
        let line = self.line;
        tokio::task::spawn_blocking(move || {
            let _held = (line, running);
            work()
        })
        .await
    }
}

/// Failures in a row of one key, and when the last was counted (on the throttle's clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Failures {
    count: u32,
    last: Duration,
}

impl Failures {
    /// When the next attempt may be made.
    fn next_allowed(&self) -> Duration {
        if self.count < FREE_FAILURES {
            return self.last;
        }
        let doublings = (self.count - FREE_FAILURES).min(20);
        self.last + Duration::from_secs(1u64 << doublings).min(MAX_WAIT)
    }
}

/// Failed sign-ins per account and per client, under one lock so that an attempt is checked against
/// both and counted in both at once. Time comes from the rate limiter's [`Clock`], which tests advance.
pub struct Throttle {
    clock: Arc<dyn Clock>,
    counts: Mutex<Counts>,
}

impl std::fmt::Debug for Throttle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Throttle").finish_non_exhaustive()
    }
}

#[derive(Debug, Default)]
struct Counts {
    accounts: HashMap<String, Failures>,
    clients: HashMap<Client, Failures>,
}

/// One key's count before and after an attempt was counted, to take the attempt back.
#[derive(Debug)]
struct Counted {
    before: Option<Failures>,
    after: Failures,
}

/// An attempt counted as a failure until [`Throttle::succeeded`] or [`Throttle::not_checked`] takes it
/// back; dropped, it stays counted (a wrong password, or a request that ended before its answer).
#[derive(Debug)]
pub struct Attempt {
    account: String,
    client: Client,
    in_account: Counted,
    in_client: Counted,
}

fn account_key(account: &str) -> String {
    account.trim().to_lowercase()
}

fn bounded<K: Eq + std::hash::Hash + Clone>(map: &mut HashMap<K, Failures>) {
    if map.len() >= MAX_TRACKED {
        let mut ages: Vec<(K, Duration)> = map.iter().map(|(k, f)| (k.clone(), f.last)).collect();
        ages.sort_by_key(|(_, t)| *t);
        for (k, _) in ages.into_iter().take(MAX_TRACKED / 2) {
            map.remove(&k);
        }
    }
}

fn count<K: Eq + std::hash::Hash + Clone>(map: &mut HashMap<K, Failures>, key: &K, now: Duration) -> Counted {
    bounded(map);
    let before = map.get(key).copied();
    let after = Failures { count: before.map_or(0, |f| f.count) + 1, last: now };
    map.insert(key.clone(), after);
    Counted { before, after }
}

/// Takes one counted attempt back: the count as it was when nothing else changed it since, else one
/// failure fewer.
fn take_back<K: Eq + std::hash::Hash>(map: &mut HashMap<K, Failures>, key: &K, counted: &Counted) {
    let Some(now) = map.get_mut(key) else { return };
    if *now == counted.after {
        match counted.before {
            Some(before) => *now = before,
            None => {
                map.remove(key);
            }
        }
    } else if now.count > 1 {
        now.count -= 1;
    } else {
        map.remove(key);
    }
}

impl Throttle {
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        Self { clock, counts: Mutex::default() }
    }

    /// Checks the account and the client and, when both allow an attempt now, counts it as a failure in
    /// both, in one critical section; else how long the one that waits longer must still wait.
    pub fn reserve(&self, account: &str, address: IpAddr) -> Result<Attempt, Duration> {
        let (account, client) = (account_key(account), Client::of(address));
        let now = Duration::from_nanos(self.clock.now_nanos());
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let a = counts.accounts.get(&account).map(Failures::next_allowed);
        let b = counts.clients.get(&client).map(Failures::next_allowed);
        if let Some(until) = a.into_iter().chain(b).max().filter(|until| *until > now) {
            return Err(until - now);
        }
        let in_account = count(&mut counts.accounts, &account, now);
        let in_client = count(&mut counts.clients, &client, now);
        Ok(Attempt { account, client, in_account, in_client })
    }

    /// The password was right: the account's count is cleared, and the client's loses this attempt only.
    pub fn succeeded(&self, attempt: Attempt) {
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        counts.accounts.remove(&attempt.account);
        take_back(&mut counts.clients, &attempt.client, &attempt.in_client);
    }

    /// The password was never checked (the line was full): the attempt is taken back from both counts.
    pub fn not_checked(&self, attempt: Attempt) {
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        take_back(&mut counts.accounts, &attempt.account, &attempt.in_account);
        take_back(&mut counts.clients, &attempt.client, &attempt.in_client);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Barrier;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::ratelimit::ManualClock;

    fn throttle() -> (Throttle, ManualClock) {
        let clock = ManualClock::default();
        (Throttle::new(Arc::new(clock.clone())), clock)
    }

    #[test]
    fn a_password_verifies_and_an_unknown_account_never_does() {
        let h = hash_password("correct horse battery");
        assert!(h.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{h}");
        assert!(verify_password("correct horse battery", Some(&h)));
        assert!(!verify_password("correct horse batterY", Some(&h)));
        assert!(!verify_password("a password nobody has, to spend the same time", None));
        assert_eq!(check_new_password("short", "short"), Err("too_short"));
        assert_eq!(check_new_password("twelve chars", "twelve charz"), Err("mismatch"));
        assert_eq!(check_new_password("twelve chars", "twelve chars"), Ok(()));
    }

    fn addr(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn five_failures_are_free_then_attempts_are_spaced_per_account_and_per_address() {
        let (t, clock) = throttle();
        let (ip, other_ip) = (addr("192.0.2.1"), addr("192.0.2.2"));
        for _ in 0..FREE_FAILURES {
            drop(t.reserve("ada@example.com", ip).expect("a free attempt"));
        }
        assert_eq!(t.reserve("Ada@Example.com ", ip).err(), Some(Duration::from_secs(1)));
        // The account is spaced from any address, and the address for any account.
        assert!(t.reserve("ada@example.com", other_ip).is_err());
        assert!(t.reserve("bob@example.com", ip).is_err());
        drop(t.reserve("bob@example.com", other_ip).expect("neither has failed"));
        clock.advance(Duration::from_millis(400));
        assert_eq!(t.reserve("ada@example.com", addr("192.0.2.3")).err(), Some(Duration::from_millis(600)));
        clock.advance(Duration::from_millis(600));
        drop(t.reserve("ada@example.com", addr("192.0.2.3")).expect("its second has come"));
        assert_eq!(t.reserve("ada@example.com", addr("192.0.2.4")).err(), Some(Duration::from_secs(2)));
        clock.advance(Duration::from_secs(2));
        let attempt = t.reserve("ada@example.com", addr("192.0.2.4")).expect("after two seconds");
        t.succeeded(attempt);
        drop(t.reserve("ada@example.com", addr("192.0.2.5")).expect("a success clears the account"));
    }

    #[test]
    fn attempts_sent_at_once_are_reserved_atomically_so_no_more_than_the_free_ones_are_checked() {
        let (t, _) = throttle();
        let threads = 64;
        let start = Barrier::new(threads);
        let reserved = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for i in 0..threads {
                let (t, start, reserved) = (&t, &start, &reserved);
                s.spawn(move || {
                    start.wait();
                    // Half for one account from many addresses, half for many accounts from one address.
                    let got = if i % 2 == 0 {
                        t.reserve("ada@example.com", IpAddr::from([198, 51, 100, i as u8]))
                    } else {
                        t.reserve(&format!("user{i}@example.com"), addr("203.0.113.7"))
                    };
                    if got.is_ok() {
                        reserved.fetch_add(1, Ordering::SeqCst);
                    }
                });
            }
        });
        // Five for the account and five for the address: each count lets through its free failures only.
        assert_eq!(reserved.load(Ordering::SeqCst), 2 * FREE_FAILURES as usize);
    }

    #[test]
    fn an_ipv6_client_is_counted_by_its_64_and_an_ipv4_mapped_one_as_ipv4() {
        let (t, _) = throttle();
        for i in 0..FREE_FAILURES {
            // Each from another address of the same /64, for another account.
            let address = IpAddr::from([0x2001, 0xdb8, 0x1, 0x2, 0, 0, 0xbeef, i as u16]);
            drop(t.reserve(&format!("user{i}@example.com"), address).expect("a free attempt"));
        }
        assert!(t.reserve("fresh@example.com", addr("2001:db8:1:2:ffff:ffff:ffff:ffff")).is_err(), "the same /64");
        drop(t.reserve("fresh@example.com", addr("2001:db8:1:3::1")).expect("the next /64 is another client"));

        for i in 0..FREE_FAILURES {
            drop(t.reserve(&format!("v4user{i}@example.com"), addr("192.0.2.9")).expect("a free attempt"));
        }
        assert!(t.reserve("other@example.com", addr("::ffff:192.0.2.9")).is_err(), "the IPv4 address it maps");
    }

    #[test]
    fn a_success_clears_the_accounts_count_but_not_the_failures_the_address_made_at_other_accounts() {
        let (t, _) = throttle();
        let ip = addr("192.0.2.1");
        for i in 0..FREE_FAILURES - 1 {
            drop(t.reserve(&format!("guess{i}@example.com"), ip).expect("a free attempt"));
        }
        drop(t.reserve("ada@example.com", addr("192.0.2.200")).expect("ada's own failure elsewhere"));
        let attempt = t.reserve("ada@example.com", ip).expect("the address's fifth");
        t.succeeded(attempt);
        // The address keeps its four failures: one more is free, the next is spaced.
        drop(t.reserve("guess@example.com", ip).expect("the address's fifth failure"));
        assert_eq!(t.reserve("guess2@example.com", ip).err(), Some(Duration::from_secs(1)));
        // Ada's count is cleared, wherever it came from: five free again, from an address of her own.
        for _ in 0..FREE_FAILURES {
            drop(t.reserve("ada@example.com", addr("192.0.2.100")).expect("cleared"));
        }
        assert!(t.reserve("ada@example.com", addr("192.0.2.101")).is_err());
    }

    #[test]
    fn an_attempt_never_checked_is_taken_back_from_both_counts() {
        let (t, _) = throttle();
        let ip = addr("192.0.2.1");
        for _ in 0..3 * FREE_FAILURES {
            let attempt = t.reserve("ada@example.com", ip).expect("never counted");
            t.not_checked(attempt);
        }
    }

    #[test]
    fn the_line_admits_those_running_and_waiting_and_refuses_the_next_at_once() {
        let h = Hashing::new(1, 2);
        let turns: Vec<Turn> = (0..3).map(|_| h.admit().expect("a place in the line")).collect();
        assert_eq!(h.admit().err(), Some(Busy));
        drop(turns);
        assert!(h.admit().is_ok(), "places are given back");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn no_more_hashes_than_allowed_run_at_once() {
        let h = Arc::new(Hashing::new(2, 10));
        let (running, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let turns: Vec<Turn> = (0..8).map(|_| h.admit().expect("a place in the line")).collect();
        let jobs = turns.into_iter().map(|turn| {
            let (running, most) = (running.clone(), most.clone());
            turn.run(move || {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(20));
                running.fetch_sub(1, Ordering::SeqCst);
            })
        });
        let done = futures_util::future::join_all(jobs).await;
        assert!(done.iter().all(Result::is_ok));
        assert!(most.load(Ordering::SeqCst) <= 2, "at most two at once: {}", most.load(Ordering::SeqCst));
        assert_eq!(h.line.available_permits(), 12, "every place given back");
    }
}
