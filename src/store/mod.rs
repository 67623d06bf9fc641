//! The SQLite store: one file in the data directory, WAL mode, one writer and a small pool of readers.
//!
//! This is the only module that knows SQL exists. It hands out typed repositories: tenant data only
//! through a handle bound to one site (`store.site(id).leads().capture(..)`), operator data through
//! `sites()`, `content()`, `pricing()`, `outbox()`, `erasure()` and `meta()`. No rusqlite type leaves `store/`; values
//! go in and come out through their column types (`columns`), and errors are classified (`StoreError`).
//!
//! Every repository method is one unit of work on the calling thread: a read on a pooled reader, or one
//! `IMMEDIATE` transaction on the writer (a lead and its outbox event commit together or not at all).
//! Async code moves a unit of work to tokio's blocking pool with [`Store::run`], never running SQLite
//! on the async runtime. The CLI opens the same file while a server runs; WAL lets both read while one
//! writes, and `busy_timeout` makes the second writer wait instead of failing.
//!
//! The line for the writer can be bounded ([`Store::bound_writes`]: the server's `limits.write_queue`
//! and `limits.queue_wait`): a write that finds the line full, or does not get the writer within the
//! wait, fails with `StoreError::Busy` (503 to a client) instead of queueing without end.

pub mod analytics;
mod columns;
pub mod content;
pub mod conversations;
pub mod crawl;
pub mod curated;
pub mod days;
pub mod erase;
mod error;
pub mod handoff;
pub mod history;
pub mod insights;
pub mod knowledge;
pub mod leads;
mod migrations;
pub mod outbox;
pub mod pricing;
pub mod queries;
pub mod retention;
pub mod review;
pub mod sites;
pub mod stats;
mod tenant;
pub mod transfer;
pub mod usage;
pub mod users;
// #25 settings
pub mod members;

// #25 widget
pub mod widget;
// #25 email
pub mod email;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};

use crate::domain::SiteId;

pub use error::{Result, StoreError};
pub use sites::{NewSite, Site, SiteCredentials, SiteUpdate, Sites};
pub use tenant::SiteStore;

/// The database file inside the data directory.
pub const DB_FILE: &str = "sitebot.db";

/// Reader connections at most. A read beyond that waits for one to come back instead of opening
/// another: each connection costs its own page cache and schema (one FTS table per site), and opening
/// one under load costs more than the wait.
const MAX_READERS: usize = 8;

#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    writer: Mutex<Writer>,
    writer_returned: Condvar,
    /// Writes waiting for the writer at most, and how long each may wait (milliseconds; `u64::MAX`: no
    /// limit). Unbounded unless `bound_writes` says otherwise.
    write_queue: AtomicUsize,
    write_wait_ms: AtomicU64,
    /// Writes turned away since the store opened.
    writes_shed: AtomicU64,
    readers: Mutex<Readers>,
    reader_returned: Condvar,
    keyring: crate::secrets::Keyring,
    // #25 email: whether e-mail is configured (`[email]`), so a lead queues its owners' e-mails only then.
    email_on: std::sync::atomic::AtomicBool,
}

/// The writer connection when no write holds it, and the writes waiting for it.
struct Writer {
    conn: Option<Connection>,
    waiting: usize,
}

struct WriterLease<'a> {
    store: &'a Store,
    conn: Option<Connection>,
}

impl Drop for WriterLease<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.store.inner.writer.lock().unwrap_or_else(|p| p.into_inner()).conn = Some(conn);
            self.store.inner.writer_returned.notify_one();
        }
    }
}

/// The reader pool: connections not in use, and how many are open in all.
#[derive(Default)]
struct Readers {
    idle: Vec<Connection>,
    open: usize,
}

struct ReaderLease<'a> {
    store: &'a Store,
    conn: Option<Connection>,
}

impl Drop for ReaderLease<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.store.inner.readers.lock().unwrap_or_else(|p| p.into_inner()).idle.push(conn);
            self.store.inner.reader_returned.notify_one();
        }
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.inner.path).finish()
    }
}

/// Creates `path` empty with mode 0600 unless it exists.
fn create_private(path: &Path) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(StoreError::Invalid(format!("cannot create {}: {e}", path.display()))),
    }
}

/// How long a connection waits for a lock another process holds (the CLI beside a server, Litestream's
/// checkpoint) before `SQLITE_BUSY`: 5 s, as Litestream advises for applications it replicates.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Who checkpoints the WAL into the database file. sitebot itself only ever lets SQLite run its automatic
/// PASSIVE checkpoint, which never waits for readers: a TRUNCATE or RESTART checkpoint would wait the
/// whole `busy_timeout` for Litestream's read lock and then fail, so none is issued anywhere.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Checkpoints {
    /// SQLite's automatic PASSIVE checkpoint once a commit leaves 1,000 pages in the WAL.
    #[default]
    Automatic,
    /// None at all (`wal_autocheckpoint = 0`): Litestream replicates the database and checkpoints
    /// itself, as its docs advise under write load (`[replication] litestream = true`).
    Litestream,
}

/// Pragmas set on every connection.
fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    Ok(())
}

fn open_connection(path: &Path, read_only: bool) -> rusqlite::Result<Connection> {
    let flags = if read_only {
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX
    } else {
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX
    };
    let conn = Connection::open_with_flags(path, flags)?;
    configure(&conn)?;
    Ok(conn)
}

impl Store {
    /// Opens (creating if needed) the database, switches a new one to WAL and runs pending migrations.
    /// SQLite checkpoints the WAL automatically; see [`open_with`](Self::open_with).
    pub fn open(path: &Path, keyring: crate::secrets::Keyring) -> Result<Store> {
        Self::open_with(path, keyring, Checkpoints::Automatic)
    }

    /// As `open`, with the WAL checkpointed as `checkpoints` says.
    pub fn open_with(path: &Path, keyring: crate::secrets::Keyring, checkpoints: Checkpoints) -> Result<Store> {
        // The file holds leads and token hashes: created 0600 (SQLite gives its -wal and -shm files the
        // database file's mode).
        create_private(path)?;
        let mut writer = open_connection(path, false)?;
        // A 202 promises the lead is on disk: the writer syncs every commit (WAL with NORMAL may lose the
        // last commits on power loss). Readers never write, so their setting does not matter.
        writer.pragma_update(None, "synchronous", "FULL")?;
        // The journal mode is set once, on a new (empty) file: WAL is persistent, and switching a live
        // database needs an exclusive lock that Litestream's read lock never lets go of.
        let mode: String = writer.pragma_query_value(None, "journal_mode", |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            let mode: String = writer.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))?;
            if !mode.eq_ignore_ascii_case("wal") {
                tracing::warn!(%mode, "SQLite did not switch to WAL; concurrent CLI use will block more");
            }
        }
        // Per connection, and only the writer commits (the readers are read-only).
        if checkpoints == Checkpoints::Litestream {
            writer.pragma_update(None, "wal_autocheckpoint", 0)?;
        }
        migrations::run(&mut writer)?;
        Ok(Store {
            inner: Arc::new(Inner {
                path: path.to_owned(),
                writer: Mutex::new(Writer { conn: Some(writer), waiting: 0 }),
                writer_returned: Condvar::new(),
                write_queue: AtomicUsize::new(usize::MAX),
                write_wait_ms: AtomicU64::new(u64::MAX),
                writes_shed: AtomicU64::new(0),
                readers: Mutex::new(Readers::default()),
                reader_returned: Condvar::new(),
                keyring,
                email_on: std::sync::atomic::AtomicBool::new(false),
            }),
        })
    }

    /// Bounds the line for the writer: at most `max_waiting` writes wait, each at most `wait`; others
    /// fail at once with `StoreError::Busy`. Applies to every handle of this store.
    pub fn bound_writes(&self, max_waiting: usize, wait: Duration) {
        self.inner.write_queue.store(max_waiting, Ordering::Relaxed);
        self.inner.write_wait_ms.store(u64::try_from(wait.as_millis()).unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// Writes turned away by the bound on the writer's line since the store opened.
    pub fn writes_shed(&self) -> u64 {
        self.inner.writes_shed.load(Ordering::Relaxed)
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    fn keyring(&self) -> &crate::secrets::Keyring {
        &self.inner.keyring
    }

    /// Runs a unit of work (any repository calls) on tokio's blocking pool: how async code uses the store.
    pub async fn run<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Store) -> Result<T> + Send + 'static,
    {
        let store = self.clone();
        tokio::task::spawn_blocking(move || f(&store)).await.map_err(|e| StoreError::Join(e.to_string()))?
    }

    /// The repository of one site's data: every query it runs is bound to `id`.
    pub fn site(&self, id: SiteId) -> SiteStore<'_> {
        SiteStore::new(self, id)
    }

    /// Sites as the operator manages them: create, list, find by token.
    pub fn sites(&self) -> Sites<'_> {
        Sites::new(self)
    }

    /// Verticals and their landing pages (operator content shared by a vertical's sites).
    pub fn content(&self) -> content::Content<'_> {
        content::Content::new(self)
    }

    /// Price lists and exchange rates.
    pub fn pricing(&self) -> pricing::Pricing<'_> {
        pricing::Pricing::new(self)
    }

    /// Erasure on request: a whole site, or one visitor's leads.
    pub fn erasure(&self) -> erase::Erasure<'_> {
        erase::Erasure::new(self)
    }

    /// What visitors leave behind and delivered events, deleted past their time (the housekeeping task).
    pub fn retention(&self) -> retention::Retention<'_> {
        retention::Retention::new(self)
    }

    /// Whole sites exported to another node and imported from one.
    pub fn transfer(&self) -> transfer::Transfer<'_> {
        transfer::Transfer::new(self)
    }

    /// The webhook outbox as the delivery worker and the admin CLI see it.
    pub fn outbox(&self) -> outbox::Outbox<'_> {
        outbox::Outbox::new(self)
    }

    /// Scheduled crawl sources across sites, for the server's scheduler.
    pub fn crawl_schedule(&self) -> crawl::CrawlSchedule<'_> {
        crawl::CrawlSchedule::new(self)
    }

    /// Hand-off waits that ran out, across sites (the server's expiry task).
    pub fn handoff_expiry(&self) -> handoff::Expiry<'_> {
        handoff::Expiry::new(self)
    }

    /// New hand-off events across sites (the server's watch for changes made by other processes).
    pub fn handoff_watch(&self) -> handoff::Watch<'_> {
        handoff::Watch::new(self)
    }

    /// The console's users, their grants, setup links and sessions.
    pub fn users(&self) -> users::Users<'_> {
        users::Users::new(self)
    }

    /// The audit log of console changes and account events.
    pub fn audit(&self) -> users::Audit<'_> {
        users::Audit::new(self)
    }

    // #25 email
    /// The e-mail queue and the preferences behind it.
    pub fn email(&self) -> email::EmailQueue<'_> {
        email::EmailQueue::new(self)
    }

    /// Says e-mail is configured: from now on a new lead queues its owners' e-mails (when its site asks
    /// for them). Off until called, so a server without `[email]` queues nothing.
    pub fn enable_email(&self) {
        self.inner.email_on.store(true, Ordering::Relaxed);
    }

    pub fn email_enabled(&self) -> bool {
        self.inner.email_on.load(Ordering::Relaxed)
    }

    /// Installation facts (the demo site's id, the demo content's load time).
    pub fn meta(&self, key: &'static str) -> Meta<'_> {
        Meta { store: self, key }
    }

    /// One trivial read: the database answers.
    pub fn ping(&self) -> Result<()> {
        self.read(|c| Ok(c.query_row("SELECT 1", [], |r| r.get::<_, i64>(0)).map(|_| ())?))
    }

    /// Runs `f` on a pooled reader connection, on the calling thread.
    fn read<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let conn = {
            let mut readers = self.inner.readers.lock().unwrap_or_else(|p| p.into_inner());
            loop {
                if let Some(c) = readers.idle.pop() {
                    break Some(c);
                }
                if readers.open < MAX_READERS {
                    readers.open += 1;
                    break None;
                }
                readers = self.inner.reader_returned.wait(readers).unwrap_or_else(|p| p.into_inner());
            }
        };
        let conn = match conn {
            Some(c) => c,
            None => open_connection(&self.inner.path, true).inspect_err(|_| self.reader_gone())?,
        };
        // Returned on drop, so a panicking read does not shrink the pool.
        let lease = ReaderLease { store: self, conn: Some(conn) };
        f(lease.conn.as_ref().expect("leased connection"))
    }

    /// A reader slot whose connection could not be opened is free again.
    fn reader_gone(&self) {
        self.inner.readers.lock().unwrap_or_else(|p| p.into_inner()).open -= 1;
        self.inner.reader_returned.notify_one();
    }

    /// Runs `f` inside one IMMEDIATE transaction on the writer, on the calling thread. Commits when `f`
    /// returns `Ok`, rolls back otherwise.
    fn write<T>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T>) -> Result<T> {
        let mut lease = self.writer()?;
        let conn = lease.conn.as_mut().expect("leased writer");
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let out = f(&tx)?;
        tx.commit()?;
        Ok(out)
    }

    /// The writer connection, once it is free, within the line's bound (see `bound_writes`).
    fn writer(&self) -> Result<WriterLease<'_>> {
        let inner = &self.inner;
        let mut w = inner.writer.lock().unwrap_or_else(|p| p.into_inner());
        if w.conn.is_none() {
            let shed = || {
                inner.writes_shed.fetch_add(1, Ordering::Relaxed);
                StoreError::Busy
            };
            if w.waiting >= inner.write_queue.load(Ordering::Relaxed) {
                return Err(shed());
            }
            let wait_ms = inner.write_wait_ms.load(Ordering::Relaxed);
            let deadline = (wait_ms != u64::MAX).then(|| Instant::now() + Duration::from_millis(wait_ms));
            w.waiting += 1;
            while w.conn.is_none() {
                w = match deadline {
                    None => inner.writer_returned.wait(w).unwrap_or_else(|p| p.into_inner()),
                    Some(d) => {
                        let left = d.saturating_duration_since(Instant::now());
                        if left.is_zero() {
                            w.waiting -= 1;
                            return Err(shed());
                        }
                        inner.writer_returned.wait_timeout(w, left).unwrap_or_else(|p| p.into_inner()).0
                    }
                };
            }
            w.waiting -= 1;
        }
        Ok(WriterLease { store: self, conn: w.conn.take() })
    }

    /// An online, consistent copy of the live database into `dest` (which must not exist yet).
    /// `VACUUM INTO` reads one snapshot, so writers carry on while it runs.
    pub fn backup_to(&self, dest: &Path) -> Result<()> {
        if dest.exists() {
            return Err(StoreError::Conflict(format!("{} already exists; backups never overwrite", dest.display())));
        }
        let dest_text = dest.to_str().ok_or_else(|| StoreError::Invalid("backup path must be UTF-8".into()))?.to_owned();
        // VACUUM INTO fills an empty file as it is, so the copy keeps the 0600 it is created with.
        create_private(dest)?;
        let copied = self.read(|conn| {
            conn.execute("VACUUM INTO ?1", [&dest_text])?;
            Ok(())
        });
        if copied.is_err() {
            let _ = std::fs::remove_file(dest);
        }
        copied
    }

    /// `PRAGMA quick_check`: `ok` or the first problems found.
    pub fn integrity(&self) -> Result<String> {
        self.read(|conn| {
            let mut stmt = conn.prepare("PRAGMA quick_check")?;
            let rows: Vec<String> = stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
            Ok(rows.join("; "))
        })
    }

    /// The schema version the file is at.
    pub fn schema_version(&self) -> Result<i64> {
        self.read(|conn| Ok(conn.pragma_query_value(None, "user_version", |r| r.get(0))?))
    }
}

/// A value in the `meta` table.
pub struct Meta<'s> {
    store: &'s Store,
    key: &'static str,
}

impl Meta<'_> {
    pub fn get(&self) -> Result<Option<String>> {
        let key = self.key;
        self.store.read(|c| c.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0)).optional_row())
    }

    pub fn set(&self, value: &str) -> Result<()> {
        let key = self.key;
        self.store.write(|tx| {
            tx.execute("INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))?;
            Ok(())
        })
    }
}

/// Extension for `Option` results of `query_row`.
trait OptionalRow<T> {
    fn optional_row(self) -> Result<Option<T>>;
}

impl<T> OptionalRow<T> for rusqlite::Result<T> {
    fn optional_row(self) -> Result<Option<T>> {
        match self {
            Ok(v) => Ok(Some(v)),
            Err(rusqlite::Error::QueryReturnedNoRows) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db"), crate::secrets::Keyring::from_bytes(&[7u8; 32])).unwrap();
        (dir, store)
    }

    #[test]
    fn concurrent_reads_never_open_more_than_the_bound() {
        let (_dir, store) = store();
        let (inside, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        std::thread::scope(|s| {
            for _ in 0..3 * MAX_READERS {
                s.spawn(|| {
                    store
                        .read(|c| {
                            let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                            most.fetch_max(now, Ordering::SeqCst);
                            std::thread::sleep(std::time::Duration::from_millis(50));
                            inside.fetch_sub(1, Ordering::SeqCst);
                            Ok(c.query_row("SELECT 1", [], |r| r.get::<_, i64>(0))?)
                        })
                        .unwrap()
                });
            }
        });
        assert_eq!(most.load(Ordering::SeqCst), MAX_READERS, "reads beyond the bound wait, and the bound is used");
        let readers = store.inner.readers.lock().unwrap();
        assert_eq!((readers.open, readers.idle.len()), (MAX_READERS, MAX_READERS));
    }

    #[test]
    fn the_database_and_its_backups_are_private_and_the_writer_syncs_fully() {
        use std::os::unix::fs::PermissionsExt;
        let (dir, store) = store();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(store.path()), 0o600);
        let backup = dir.path().join("copy.db");
        store.backup_to(&backup).unwrap();
        assert_eq!(mode(&backup), 0o600);
        let full: i64 = store.writer().unwrap().conn.as_ref().unwrap().pragma_query_value(None, "synchronous", |r| r.get(0)).unwrap();
        assert_eq!(full, 2, "synchronous=FULL on the writer");
    }

    /// Litestream holds a read transaction open on the database all the time. While one is open, writes
    /// go on without waiting: past 1,000 pages in the WAL SQLite's automatic checkpoint is PASSIVE, which
    /// skips what the reader still needs. A TRUNCATE or RESTART checkpoint (or a journal-mode change)
    /// would wait the whole busy timeout and fail, and this test with it.
    #[test]
    fn writes_never_wait_for_a_reader_that_holds_a_snapshot_as_litestream_does() {
        let (dir, store) = store();
        store.meta("demo_site").set("before").unwrap();
        let litestream = Connection::open(dir.path().join("t.db")).unwrap();
        litestream.execute_batch("BEGIN; SELECT count(*) FROM meta;").unwrap();
        let mut slowest = Duration::ZERO;
        // 16 pages a commit (each different: SQLite skips writing a page that does not change), 100
        // commits leave about 1,600 pages in the WAL.
        for i in 0..100u8 {
            let t = Instant::now();
            store.meta("demo_content").set(&char::from(b'a' + i % 26).to_string().repeat(64 * 1024)).unwrap();
            slowest = slowest.max(t.elapsed());
        }
        assert!(slowest < Duration::from_secs(1), "a write waited {slowest:?} for the reader");
        let wal = std::fs::metadata(dir.path().join("t.db-wal")).unwrap().len();
        assert!(wal > 1_000 * 4096, "the reader's snapshot kept the WAL ({wal} bytes) from being reset");
        // A new handle on the same file (a restart under Litestream) opens without a mode change.
        let again = Store::open(&dir.path().join("t.db"), crate::secrets::Keyring::from_bytes(&[7u8; 32])).unwrap();
        assert_eq!(again.meta("demo_site").get().unwrap().as_deref(), Some("before"));
        let busy: i64 = store.writer().unwrap().conn.as_ref().unwrap().pragma_query_value(None, "busy_timeout", |r| r.get(0)).unwrap();
        assert_eq!(busy, 5000, "busy_timeout as Litestream advises");
        litestream.execute_batch("COMMIT").unwrap();
    }

    /// Under Litestream the writer never checkpoints: the WAL keeps every frame until Litestream has
    /// shipped it and checkpoints. Without it, SQLite checkpoints and reuses the WAL from its start.
    #[test]
    fn with_litestream_the_writer_leaves_the_wal_to_it() {
        let wal_after_writes = |checkpoints: Checkpoints| {
            let dir = tempfile::tempdir().unwrap();
            let store = Store::open_with(&dir.path().join("t.db"), crate::secrets::Keyring::from_bytes(&[7u8; 32]), checkpoints).unwrap();
            let auto: i64 = store.writer().unwrap().conn.as_ref().unwrap().pragma_query_value(None, "wal_autocheckpoint", |r| r.get(0)).unwrap();
            // 16 different pages a commit, about 2,400 pages in all.
            for i in 0..150u8 {
                store.meta("demo_content").set(&char::from(b'a' + i % 26).to_string().repeat(64 * 1024)).unwrap();
            }
            (auto, std::fs::metadata(dir.path().join("t.db-wal")).unwrap().len() / 4096)
        };
        let (auto, automatic_pages) = wal_after_writes(Checkpoints::Automatic);
        assert_eq!(auto, 1000);
        assert!(automatic_pages < 1_200, "SQLite checkpointed and reused the WAL: {automatic_pages} pages");
        let (auto, litestream_pages) = wal_after_writes(Checkpoints::Litestream);
        assert_eq!(auto, 0);
        assert!(litestream_pages > 2_000, "nothing checkpointed: {litestream_pages} pages");
    }

    /// The source never asks for a blocking checkpoint, an in-place VACUUM or a journal-mode change
    /// (besides the one on a new file in `open_with`): each waits for Litestream's read lock, then fails.
    /// The test above shows what the code does at run time; this one names the statement if one comes.
    #[test]
    fn no_statement_in_the_source_waits_for_litestream() {
        fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, out);
                } else if path.extension().is_some_and(|e| e == "rs" || e == "sql") {
                    out.push(path);
                }
            }
        }
        let mut files = Vec::new();
        walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
        assert!(files.len() > 50, "the source was found");
        // Built here, so that this file does not match itself.
        let checkpoints: Vec<String> =
            ["truncate", "restart", "full"].iter().flat_map(|m| [format!("wal_checkpoint({m}"), format!("wal_checkpoint\",\"{m}")]).collect();
        let mut found = Vec::new();
        for file in &files {
            let text = std::fs::read_to_string(file).unwrap().to_ascii_lowercase();
            for (n, line) in text.lines().enumerate() {
                // Code and SQL only: comments may name what they avoid.
                let line = line.split("//").next().unwrap_or_default().split("--").next().unwrap_or_default().replace(' ', "");
                let bad = checkpoints.iter().any(|b| line.contains(b.as_str()))
                    || (line.contains("vacuum") && !line.contains("vacuuminto") && line.contains('\"'))
                    || line.contains(concat!("journal", "_mode="))
                    || (line.contains("\"journal_mode\",\"") && !line.contains("\"journal_mode\",\"wal\""));
                if bad {
                    found.push(format!("{}:{}", file.display(), n + 1));
                }
            }
        }
        assert!(found.is_empty(), "statements that block under Litestream: {found:?}");
    }

    #[test]
    fn a_panicking_read_gives_its_connection_back() {
        let (_dir, store) = store();
        for _ in 0..2 * MAX_READERS {
            let s = store.clone();
            let r = std::thread::spawn(move || s.read(|_| -> Result<()> { panic!("boom") })).join();
            assert!(r.is_err());
        }
        assert_eq!(store.read(|c| Ok(c.query_row("SELECT 2", [], |r| r.get::<_, i64>(0))?)).unwrap(), 2);
        assert_eq!(store.inner.readers.lock().unwrap().open, 1);
    }

    #[test]
    fn writes_beyond_the_line_or_its_wait_are_busy_and_the_writer_comes_back() {
        let (_dir, store) = store();
        store.bound_writes(1, Duration::from_millis(100));
        let (held, release) = (std::sync::Barrier::new(2), std::sync::Barrier::new(2));
        std::thread::scope(|s| {
            s.spawn(|| {
                store
                    .write(|_| {
                        held.wait();
                        release.wait();
                        Ok(())
                    })
                    .unwrap()
            });
            held.wait();
            // The writer is held: one write may wait (and times out), a second finds the line full.
            let waiter = s.spawn(|| store.meta("demo_site").set("a"));
            while store.inner.writer.lock().unwrap().waiting == 0 {
                std::thread::yield_now();
            }
            assert!(matches!(store.meta("demo_site").set("b"), Err(StoreError::Busy)), "the line is full");
            assert!(matches!(waiter.join().unwrap(), Err(StoreError::Busy)), "no turn within 100 ms");
            release.wait();
        });
        assert_eq!(store.writes_shed(), 2);
        store.meta("demo_site").set("c").unwrap();
        assert_eq!(store.meta("demo_site").get().unwrap().as_deref(), Some("c"));
        assert_eq!(store.inner.writer.lock().unwrap().waiting, 0);
    }
}
