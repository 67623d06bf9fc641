//! Passwords and sign-in throttling.
//!
//! Passwords are hashed with Argon2id at OWASP's parameters (19 MiB, two passes, one lane), on the
//! blocking pool; at least [`MIN_PASSWORD_CHARS`] characters. An unknown e-mail address is verified
//! against a hash of the same parameters, so it costs the same time as a wrong password and gets the
//! same answer.
//!
//! Failed sign-ins are counted per account (the address typed) and per client address: after
//! [`FREE_FAILURES`] in a row, each further attempt waits twice as long as the one before (one second,
//! then two, up to fifteen minutes) and is refused before any password is checked until then. A
//! success clears the account's count. The counts live in memory, bounded: a restart forgets them, which
//! costs an attacker a restart per five guesses.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};

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

/// The PHC string of `password` (blocking: about 30 ms of one core).
pub fn hash_password(password: &str) -> String {
    let salt = SaltString::generate(&mut OsRng);
    argon2().hash_password(password.as_bytes(), &salt).expect("Argon2 hashes any password").to_string()
}

/// Whether `password` matches the stored hash; with no stored hash, a dummy of the same cost is checked
/// so that an unknown account takes as long as a known one (blocking).
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

#[derive(Debug, Clone, Copy)]
struct Failures {
    count: u32,
    last: Instant,
}

impl Failures {
    /// When the next attempt may be made.
    fn next_allowed(&self) -> Instant {
        if self.count < FREE_FAILURES {
            return self.last;
        }
        let doublings = (self.count - FREE_FAILURES).min(20);
        self.last + Duration::from_secs(1u64 << doublings).min(MAX_WAIT)
    }
}

/// Failed sign-ins per account and per client address.
#[derive(Debug, Default)]
pub struct Throttle {
    accounts: Mutex<HashMap<String, Failures>>,
    addresses: Mutex<HashMap<IpAddr, Failures>>,
}

fn bounded<K: Eq + std::hash::Hash + Clone>(map: &mut HashMap<K, Failures>) {
    if map.len() >= MAX_TRACKED {
        let mut ages: Vec<(K, Instant)> = map.iter().map(|(k, f)| (k.clone(), f.last)).collect();
        ages.sort_by_key(|(_, t)| *t);
        for (k, _) in ages.into_iter().take(MAX_TRACKED / 2) {
            map.remove(&k);
        }
    }
}

impl Throttle {
    /// How long the account or the address must still wait before an attempt is checked, if at all.
    pub fn wait(&self, account: &str, address: IpAddr, now: Instant) -> Option<Duration> {
        let account = account.trim().to_lowercase();
        let a = self.accounts.lock().unwrap_or_else(|p| p.into_inner()).get(&account).map(Failures::next_allowed);
        let b = self.addresses.lock().unwrap_or_else(|p| p.into_inner()).get(&address).map(Failures::next_allowed);
        let until = a.into_iter().chain(b).max()?;
        (until > now).then(|| until - now)
    }

    pub fn failed(&self, account: &str, address: IpAddr, now: Instant) {
        let account = account.trim().to_lowercase();
        let mut accounts = self.accounts.lock().unwrap_or_else(|p| p.into_inner());
        bounded(&mut accounts);
        let f = accounts.entry(account).or_insert(Failures { count: 0, last: now });
        *f = Failures { count: f.count + 1, last: now };
        drop(accounts);
        let mut addresses = self.addresses.lock().unwrap_or_else(|p| p.into_inner());
        bounded(&mut addresses);
        let f = addresses.entry(address).or_insert(Failures { count: 0, last: now });
        *f = Failures { count: f.count + 1, last: now };
    }

    pub fn succeeded(&self, account: &str, address: IpAddr) {
        self.accounts.lock().unwrap_or_else(|p| p.into_inner()).remove(&account.trim().to_lowercase());
        self.addresses.lock().unwrap_or_else(|p| p.into_inner()).remove(&address);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn five_failures_are_free_then_attempts_are_spaced_per_account_and_per_address() {
        let t = Throttle::default();
        let (ip, other_ip) = ("192.0.2.1".parse().unwrap(), "192.0.2.2".parse().unwrap());
        let now = Instant::now();
        for _ in 0..FREE_FAILURES {
            assert_eq!(t.wait("ada@example.com", ip, now), None);
            t.failed("ada@example.com", ip, now);
        }
        assert_eq!(t.wait("Ada@Example.com ", ip, now), Some(Duration::from_secs(1)));
        // The account is spaced from any address, and the address for any account.
        assert!(t.wait("ada@example.com", other_ip, now).is_some());
        assert!(t.wait("bob@example.com", ip, now).is_some());
        assert_eq!(t.wait("bob@example.com", other_ip, now), None);
        t.failed("ada@example.com", ip, now);
        assert_eq!(t.wait("ada@example.com", other_ip, now), Some(Duration::from_secs(2)));
        assert_eq!(t.wait("ada@example.com", other_ip, now + Duration::from_secs(2)), None);
        t.succeeded("ada@example.com", ip);
        assert_eq!(t.wait("ada@example.com", ip, now), None);
    }
}
