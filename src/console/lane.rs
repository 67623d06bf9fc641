//! The console's reads run on two threads of their own at the lowest CPU priority (nice 19), so the
//! console's SQL takes CPU that the public API leaves over: when the API is idle a page is as fast as on
//! any thread; when it saturates the CPU, pages wait. (The rest of a page, TLS, HTTP and rendering, runs
//! on the runtime at normal priority; `benches/console.rs` measures what browsing still costs the API.)
//! Writes never run here: a starved thread holding the writer would stall the API's own writes
//! (sessions, the audit log and curated answers use `Store::run`).
//!
//! One lane for the process, started on first use, like tokio's blocking pool.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Mutex, OnceLock};

use crate::store::{Result, Store, StoreError};

type Job = Box<dyn FnOnce() + Send>;

/// Threads of the lane: two pages load side by side; more would only queue for the same spare CPU.
const THREADS: usize = 2;

/// The lowest priority a thread can take without privileges.
const NICE: i32 = 19;

fn lane() -> &'static Mutex<Sender<Job>> {
    static LANE: OnceLock<Mutex<Sender<Job>>> = OnceLock::new();
    LANE.get_or_init(|| {
        let (tx, rx) = channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..THREADS {
            let rx = rx.clone();
            let spawned = std::thread::Builder::new().name(format!("console-read-{i}")).spawn(move || {
                // On Linux the nice value is a thread's own: `None` (this caller) lowers only this thread.
                if let Err(e) = rustix::process::setpriority_process(None, NICE) {
                    tracing::warn!(error = %e, "the console's read thread keeps the normal CPU priority");
                }
                loop {
                    let job = match rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    match job {
                        // A panicking read is the caller's error (its answer channel closes); the thread stays.
                        Ok(job) => drop(std::panic::catch_unwind(AssertUnwindSafe(job))),
                        Err(_) => return,
                    }
                }
            });
            if let Err(e) = spawned {
                tracing::error!(error = %e, "cannot start a console read thread");
            }
        }
        Mutex::new(tx)
    })
}

/// Runs a read-only unit of work on the lane: `Store::run` for the console's reads.
pub async fn read<T, F>(store: &Store, f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce(&Store) -> Result<T> + Send + 'static,
{
    let (tx, rx) = tokio::sync::oneshot::channel();
    let store = store.clone();
    let job: Job = Box::new(move || {
        let _ = tx.send(f(&store));
    });
    let sent = lane().lock().map_err(|_| ()).and_then(|lane| lane.send(job).map_err(|_| ()));
    if sent.is_err() {
        return Err(StoreError::Join("the console's read threads are gone".into()));
    }
    rx.await.map_err(|_| StoreError::Join("a console read ended without an answer".into()))?
}
