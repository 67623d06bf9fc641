//! Embedded, versioned schema migrations. `PRAGMA user_version` records how many have run; each runs in
//! the same IMMEDIATE transaction as the version bump, so a server and a CLI starting together apply each
//! exactly once. Append new migrations; never edit one that has shipped.

use rusqlite::{Connection, TransactionBehavior};

use super::{Result, StoreError};

/// Each entry is one schema version, in order. A file's number is its version.
pub const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0001_sites.sql"),
    include_str!("migrations/0002_leads_outbox.sql"),
    include_str!("migrations/0003_knowledge.sql"),
    include_str!("migrations/0004_content.sql"),
    include_str!("migrations/0005_timestamps.sql"),
];

pub fn run(conn: &mut Connection) -> Result<()> {
    let known = MIGRATIONS.len() as i64;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let current: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if current > known {
        return Err(StoreError::TooNew { found: current, known });
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
        tracing::info!(version = i + 1, "applied schema migration");
    }
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_run_from_empty_and_are_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("t.db")).unwrap();
        run(&mut conn).unwrap();
        run(&mut conn).unwrap();
        let v: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
        assert_eq!(v, MIGRATIONS.len() as i64);
        let n: i64 = conn.query_row("SELECT count(*) FROM sqlite_schema WHERE name = 'sites'", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 1);
    }

    #[test]
    fn a_newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("t.db")).unwrap();
        conn.pragma_update(None, "user_version", 999).unwrap();
        assert!(matches!(run(&mut conn), Err(StoreError::TooNew { found: 999, .. })));
    }
}
