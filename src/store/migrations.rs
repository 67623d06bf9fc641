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
    include_str!("migrations/0006_conversations.sql"),
    include_str!("migrations/0007_idempotency_body.sql"),
    include_str!("migrations/0008_multilingual.sql"),
    include_str!("migrations/0009_generative_answers.sql"),
    include_str!("migrations/0010_insights.sql"),
    include_str!("migrations/0011_crawl.sql"),
    include_str!("migrations/0012_webhook_endpoints.sql"),
    include_str!("migrations/0013_storage_limits.sql"),
    include_str!("migrations/0014_lexical_analysis.sql"),
    include_str!("migrations/0015_chunk_keys_never_reused.sql"),
    include_str!("migrations/0016_console.sql"),
    include_str!("migrations/0017_site_days.sql"),
    include_str!("migrations/0018_conversation_lookups.sql"),
    include_str!("migrations/0019_console_scale.sql"),
    include_str!("migrations/0020_handoff.sql"),
    include_str!("migrations/0021_moving.sql"),
    // #25 widget
    include_str!("migrations/0022_widget_editor.sql"),
    // #25 email
    include_str!("migrations/0023_email.sql"),
    // #25 knowledge
    include_str!("migrations/0024_crawl_progress.sql"),
    // #28 exactness
    include_str!("migrations/0025_english_vectors.sql"),
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
    fn chunk_keys_survive_the_rebuild_and_are_never_reused() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("t.db")).unwrap();
        conn.pragma_update(None, "foreign_keys", "ON").unwrap();
        for sql in &MIGRATIONS[..14] {
            conn.execute_batch(sql).unwrap();
        }
        conn.pragma_update(None, "user_version", 14).unwrap();
        let site = "3f2b6c1e-8d4a-4f7e-9b1a-2c3d4e5f6a7b";
        conn.execute(
            "INSERT INTO sites (id, name, vertical, tier, currency, lang, secret_sealed, created_at, updated_at) VALUES (?1, 'A', 'dental', 'pro', 'EUR', 'en', x'00', 0, 0)",
            [site],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO kb_documents (id, site_id, source, title, format, content_hash, chunk_count, created_at, updated_at) VALUES ('doc_1', ?1, 'a.md', 'A', 'md', 'h', 2, 0, 0)",
            [site],
        )
        .unwrap();
        for (rowid, id) in [(7, "chk_a"), (9, "chk_b")] {
            conn.execute(
                "INSERT INTO kb_chunks (rowid, id, site_id, document_id, ord, heading, text, embedding, model) VALUES (?1, ?2, ?3, 'doc_1', 0, 'h', 't', x'00', 'm')",
                rusqlite::params![rowid, id, site],
            )
            .unwrap();
        }
        run(&mut conn).unwrap();
        let keys: Vec<(i64, String)> = conn
            .prepare("SELECT rowid, id FROM kb_chunks ORDER BY rowid")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(keys, vec![(7, "chk_a".to_owned()), (9, "chk_b".to_owned())]);
        conn.execute("DELETE FROM kb_chunks WHERE rowid = 9", []).unwrap();
        conn.execute(
            "INSERT INTO kb_chunks (id, site_id, document_id, ord, heading, text, embedding) VALUES ('chk_c', ?1, 'doc_1', 1, 'h', 't', x'00')",
            [site],
        )
        .unwrap();
        let key: i64 = conn.query_row("SELECT rowid FROM kb_chunks WHERE id = 'chk_c'", [], |r| r.get(0)).unwrap();
        assert_eq!(key, 10, "the deleted chunk's key 9 is not given again");
    }

    #[test]
    fn text_times_become_unix_milliseconds() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("t.db")).unwrap();
        // A database as the build before the timestamp migration left it.
        for sql in &MIGRATIONS[..4] {
            conn.execute_batch(sql).unwrap();
        }
        conn.pragma_update(None, "user_version", 4).unwrap();
        conn.execute_batch(
            "INSERT INTO sites (id, name, vertical, tier, currency, lang, secret_sealed, created_at, updated_at, webhook_disabled_at)
               VALUES ('3f2b6c1e-8d4a-4f7e-9b1a-2c3d4e5f6a7b', 'A', 'dental', 'pro', 'EUR', 'en', x'00', '2026-11-21T10:00:00Z', '2026-11-22T10:00:00Z', NULL);
             INSERT INTO leads (id, site_id, email, created_at) VALUES ('lead_1', '3f2b6c1e-8d4a-4f7e-9b1a-2c3d4e5f6a7b', 'a@example.com', '2026-11-21T10:00:01Z');
             INSERT INTO idempotency_keys VALUES ('3f2b6c1e-8d4a-4f7e-9b1a-2c3d4e5f6a7b', 'leads', 'k', 202, '{}', 1795255200);
             INSERT INTO site_stats (site_id, questions, active_since) VALUES ('3f2b6c1e-8d4a-4f7e-9b1a-2c3d4e5f6a7b', 1, '2026-11-21');",
        )
        .unwrap();
        run(&mut conn).unwrap();
        let t = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, Option<i64>>(0)).unwrap();
        assert_eq!(t("SELECT created_at FROM sites"), Some(1_795_255_200_000));
        assert_eq!(t("SELECT updated_at FROM sites"), Some(1_795_341_600_000));
        assert_eq!(t("SELECT webhook_disabled_at FROM sites"), None);
        assert_eq!(t("SELECT created_at FROM leads"), Some(1_795_255_201_000));
        assert_eq!(t("SELECT created_at FROM idempotency_keys"), Some(1_795_255_200_000));
        assert_eq!(t("SELECT active_since FROM site_stats"), Some(1_795_219_200_000));
        let typ: String = conn.query_row("SELECT typeof(created_at) FROM leads", [], |r| r.get(0)).unwrap();
        assert_eq!(typ, "integer");
        let indexed: i64 = conn.query_row("SELECT count(*) FROM sqlite_schema WHERE name IN ('leads_by_site', 'query_log_by_site')", [], |r| r.get(0)).unwrap();
        assert_eq!(indexed, 2);
    }

    #[test]
    fn a_newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("t.db")).unwrap();
        conn.pragma_update(None, "user_version", 999).unwrap();
        assert!(matches!(run(&mut conn), Err(StoreError::TooNew { found: 999, .. })));
    }
}
