//! Embedded, versioned schema migrations. `PRAGMA user_version` records how many have run; each runs in
//! the same IMMEDIATE transaction as the version bump, so a server and a CLI starting together apply each
//! exactly once. Append new migrations; never edit one that has shipped.

use rusqlite::{Connection, TransactionBehavior};

use super::{Result, StoreError};

/// Each entry is one schema version.
pub const MIGRATIONS: &[&str] = &[
    // 1: sites and their allowed origins.
    r#"
    CREATE TABLE sites (
        id                 TEXT PRIMARY KEY,
        name               TEXT NOT NULL,
        vertical           TEXT NOT NULL,
        tier               TEXT NOT NULL CHECK (tier IN ('starter', 'pro', 'enterprise')),
        currency           TEXT NOT NULL,
        lang               TEXT NOT NULL,
        enabled            INTEGER NOT NULL DEFAULT 1,
        webhook_url        TEXT,
        webhook_events     TEXT NOT NULL DEFAULT 'lead.captured',
        webhook_disabled_at TEXT,
        token_hash         BLOB UNIQUE,
        secret_sealed      BLOB NOT NULL,
        prev_secret_sealed BLOB,
        prev_secret_until  TEXT,
        created_at         TEXT NOT NULL,
        updated_at         TEXT NOT NULL
    ) STRICT;
    CREATE TABLE site_origins (
        site_id TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
        origin  TEXT NOT NULL,
        PRIMARY KEY (site_id, origin)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX site_origins_by_origin ON site_origins(origin);
    CREATE TABLE meta (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
    ) STRICT;
    "#,
    // 2: leads, idempotency keys, the webhook outbox and per-site counters.
    r#"
    CREATE TABLE leads (
        id         TEXT PRIMARY KEY,
        site_id    TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
        name       TEXT,
        email      TEXT NOT NULL,
        message    TEXT,
        page_url   TEXT,
        created_at TEXT NOT NULL
    ) STRICT;
    CREATE INDEX leads_by_site ON leads(site_id, created_at);
    CREATE TABLE idempotency_keys (
        site_id    TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
        route      TEXT NOT NULL,
        key        TEXT NOT NULL,
        status     INTEGER NOT NULL,
        body       TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (site_id, route, key)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX idempotency_keys_by_age ON idempotency_keys(created_at);
    CREATE TABLE outbox (
        id              TEXT PRIMARY KEY,
        site_id         TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
        event_type      TEXT NOT NULL,
        payload         TEXT NOT NULL,
        status          TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'dead')),
        attempts        INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        lease_until     INTEGER,
        last_error      TEXT,
        created_at      TEXT NOT NULL,
        delivered_at    TEXT
    ) STRICT;
    CREATE INDEX outbox_due ON outbox(status, next_attempt_at);
    CREATE INDEX outbox_by_site ON outbox(site_id, status);
    CREATE TABLE outbox_attempts (
        message_id  TEXT NOT NULL REFERENCES outbox(id) ON DELETE CASCADE,
        attempt     INTEGER NOT NULL,
        at          TEXT NOT NULL,
        status_code INTEGER,
        error       TEXT,
        duration_ms INTEGER NOT NULL,
        PRIMARY KEY (message_id, attempt)
    ) STRICT;
    CREATE TABLE site_stats (
        site_id            TEXT PRIMARY KEY REFERENCES sites(id) ON DELETE CASCADE,
        questions          INTEGER NOT NULL DEFAULT 0,
        resolved_questions INTEGER NOT NULL DEFAULT 0,
        leads              INTEGER NOT NULL DEFAULT 0,
        active_since       TEXT
    ) STRICT;
    "#,
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
