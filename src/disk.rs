//! The data directory's free space against `storage.min_free_mb`: below it, what visitors leave behind
//! stops being written before answering stops (a full disk would otherwise fail every write, and SQLite
//! needs room for its journal to commit anything, leads included).
//!
//! One `statvfs` of the data directory (through `rustix`, no `unsafe` here) at most every
//! [`RECHECK`]: a few microseconds of system call, so handlers ask on the async runtime. A change
//! between low and enough is logged once, as a warning when space runs low.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a measurement is trusted.
pub const RECHECK: Duration = Duration::from_secs(5);

/// The free-space watch of one data directory.
#[derive(Debug)]
pub struct FreeSpace {
    dir: PathBuf,
    /// Bytes; 0: never low.
    min_free: u64,
    last: Mutex<Sample>,
}

/// The last measurement.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sample {
    measured: Option<Instant>,
    /// Bytes available to the server's user; `None` when the file system could not be asked.
    pub free_bytes: Option<u64>,
    pub low: bool,
}

/// Bytes available to unprivileged users on the file system holding `dir`.
pub fn available(dir: &Path) -> std::io::Result<u64> {
    let s = rustix::fs::statvfs(dir)?;
    Ok(s.f_bavail.saturating_mul(s.f_frsize))
}

impl FreeSpace {
    pub fn new(dir: &Path, min_free_mb: u64) -> FreeSpace {
        FreeSpace { dir: dir.to_owned(), min_free: min_free_mb.saturating_mul(1 << 20), last: Mutex::new(Sample::default()) }
    }

    /// Whether the data directory has less free space than `storage.min_free_mb`.
    pub fn low(&self) -> bool {
        self.sample().low
    }

    /// The current measurement, taken again when the last is older than [`RECHECK`].
    pub fn sample(&self) -> Sample {
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if last.measured.is_some_and(|t| t.elapsed() < RECHECK) {
            return *last;
        }
        let free = available(&self.dir);
        // A file system that cannot be asked is not taken as full: the writes themselves will say so.
        let low = self.min_free > 0 && free.as_ref().is_ok_and(|f| *f < self.min_free);
        let mb = |b: u64| b >> 20;
        match (&free, low, last.low) {
            (Ok(f), true, false) => tracing::warn!(
                dir = %self.dir.display(), free_mb = mb(*f), min_free_mb = mb(self.min_free),
                "free space below storage.min_free_mb: questions are answered but not logged, widget events and feedback are not stored, leads are refused with 503"
            ),
            (Ok(f), false, true) => tracing::info!(dir = %self.dir.display(), free_mb = mb(*f), "free space above storage.min_free_mb again: writes resume"),
            (Err(e), _, _) if last.measured.is_none() || last.free_bytes.is_some() => {
                tracing::warn!(dir = %self.dir.display(), error = %e, "cannot measure the data directory's free space")
            }
            _ => {}
        }
        *last = Sample { measured: Some(Instant::now()), free_bytes: free.ok(), low };
        *last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watermark_above_the_free_space_is_low_and_zero_never_is() {
        let dir = tempfile::tempdir().unwrap();
        let free = available(dir.path()).unwrap();
        assert!(free > 0);
        let above = FreeSpace::new(dir.path(), (free >> 20) + 1024);
        let s = above.sample();
        assert!(s.low && s.free_bytes.is_some(), "{s:?}");
        assert!(!FreeSpace::new(dir.path(), 0).low());
        assert!(!FreeSpace::new(dir.path(), 1).low() || free < 1 << 20);
        // A directory that cannot be asked is not taken as full.
        assert!(!FreeSpace::new(&dir.path().join("missing"), u64::MAX >> 20).low());
    }
}
