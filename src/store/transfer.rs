//! Moving one site between nodes: [`Transfer::export`] writes the site and everything it owns into a new
//! SQLite file; [`Transfer::import`] puts that file into another node's database.
//!
//! **What moves.** Every table with a `site_id` column (read from the schema at run time, as erasure
//! does), the rows of the site's children that have none (`CHILDREN`: delivery attempts, conversation
//! turns) and the console users granted the site. The tables that are not per site are named in
//! `NOT_PER_SITE` with the reason; a table in neither list stops an export with an error (and fails a
//! test), so a table a later migration adds is never silently left behind. Embeddings travel with their
//! chunks, so the new node does not embed again; the full-text table and the vector index are derived
//! and rebuilt there from the chunks.
//!
//! **Secrets.** Webhook signing secrets are sealed with the node's master key; the export re-seals them
//! with an export key (32 random bytes, given by the operator or made by the export and printed once),
//! and the import re-seals them with the target's master key. No secret is ever on disk in clear.
//! Bearer tokens and console passwords are stored only as hashes and move as they are.
//!
//! **Integrity.** The export carries a SHA-256 over every exported value (table by table, row by row,
//! each value with its type), checked before the import writes anything; the export key is checked by
//! opening the sealed secrets, also before.
//!
//! **No acknowledged write lost.** `export` first marks the site as moving (`SiteStore::freeze`): every
//! write of the site checks that mark inside its own transaction and is refused (`StoreError::Moving`,
//! a 503 with `Retry-After` to a client) once the mark has committed, so the snapshot read after it holds
//! every write that was acknowledged. The outbox worker leaves a moving site's events alone: pending
//! events are delivered by the new node, under the same `webhook-id` (an event whose delivery was in
//! flight during the export may arrive twice, as at-least-once allows).

use std::path::{Path, PathBuf};

use rusqlite::types::ValueRef;
use rusqlite::{Connection, params};
use sha2::{Digest, Sha256};

use super::{OptionalRow, Result, Store, StoreError};
use crate::domain::{SiteId, Timestamp};
use crate::secrets::Keyring;

/// The `format` an export names in its manifest.
pub const FORMAT: &str = "sitebot-site-export/1";

/// Tables that are not per site, and why they do not move.
pub const NOT_PER_SITE: &[(&str, &str)] = &[
    ("meta", "facts of this installation (the demo site's id)"),
    ("verticals", "vertical content, shared by every site of the vertical: loaded on every node"),
    ("landing_pages", "vertical content: loaded on every node"),
    ("pricing_tiers", "vertical content: loaded on every node"),
    ("currency_rates", "exchange rates: loaded on every node"),
    ("console_setup_links", "one-time links of this node; a moved user keeps their password"),
    ("console_sessions", "sign-ins to this node's console: users sign in again on the new node"),
];

/// Litestream's own tables in a database it replicates (`_litestream_seq`, `_litestream_lock`): not ours.
const LITESTREAM_PREFIX: &str = "_litestream_";

/// Tables without a `site_id` column whose rows belong to a site, and which rows (SQL over `main`, `?1`
/// = the site).
const CHILDREN: &[(&str, &str)] = &[
    ("sites", "id = ?1"),
    ("outbox_attempts", "message_id IN (SELECT id FROM main.outbox WHERE site_id = ?1)"),
    ("conversation_turns", "conversation_id IN (SELECT id FROM main.conversations WHERE site_id = ?1)"),
    ("console_users", "id IN (SELECT user_id FROM main.console_grants WHERE site_id = ?1)"),
];

/// Integer keys made by the importing node (`AUTOINCREMENT`): the exported value is dropped and a new
/// one assigned, in the exported order. `review_groups.id` is referenced, so it is shifted instead.
const NEW_KEYS: &[(&str, &str)] = &[
    ("kb_chunks", "rowid"),
    ("audit_log", "id"),
    ("conversation_events", "id"),
    // #25 email
    ("email_queue", "id"),
];

const MANIFEST: &str = "export_manifest";

/// What an export wrote, or an import read: the site, the rows of each table, and the digest.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Moved {
    pub site_id: SiteId,
    pub rows: Vec<(String, u64)>,
    pub sha256: String,
    /// When the site was marked as moving on the exporting node.
    pub moving_since: Timestamp,
}

impl Moved {
    pub fn rows_of(&self, table: &str) -> u64 {
        self.rows.iter().find(|(t, _)| t == table).map_or(0, |(_, n)| *n)
    }
}

/// Exports and imports of whole sites.
pub struct Transfer<'s> {
    store: &'s Store,
}

fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The tables an export holds, each with the rows of the site (SQL over `main`, `?1` = the site); an
/// error names a table that is neither per site nor in `NOT_PER_SITE`.
pub(super) fn exported_tables(conn: &Connection) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut unknown = Vec::new();
    for table in super::erase::ordinary_tables(conn)? {
        if table.starts_with(LITESTREAM_PREFIX) {
            continue;
        }
        if let Some((_, rows)) = CHILDREN.iter().find(|(t, _)| *t == table) {
            out.push((table, (*rows).to_owned()));
        } else if super::erase::has_column(conn, &table, "site_id")? {
            out.push((table, "site_id = ?1".to_owned()));
        } else if !NOT_PER_SITE.iter().any(|(t, _)| *t == table) {
            unknown.push(table);
        }
    }
    if !unknown.is_empty() {
        return Err(StoreError::Invalid(format!(
            "table(s) {} are neither per site nor known to be shared: this build cannot export a site completely",
            unknown.join(", ")
        )));
    }
    Ok(out)
}

fn columns(conn: &Connection, schema: &str, table: &str) -> Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT name FROM pragma_table_info(?1, ?2) ORDER BY cid")?;
    let names = stmt.query_map([table, schema], |r| r.get::<_, String>(0))?.collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(names)
}

/// The tables of an export (attached as `schema`), by name, without its manifest.
fn tables_of_export(conn: &Connection, schema: &str) -> Result<Vec<String>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT name FROM {schema}.sqlite_schema WHERE type = 'table' AND name <> ?1 AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
    ))?;
    Ok(stmt.query_map([MANIFEST], |r| r.get::<_, String>(0))?.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// SHA-256 over every table of the export but the manifest: its name, its columns, then each row in
/// stored order, each value tagged with its type and length.
fn digest(conn: &Connection, schema: &str) -> Result<String> {
    let tables = tables_of_export(conn, schema)?;
    let mut h = Sha256::new();
    for t in &tables {
        let cols = columns(conn, schema, t)?;
        h.update(format!("table {t} {}\n", cols.join(",")).as_bytes());
        let mut stmt = conn.prepare(&format!("SELECT * FROM {schema}.{} ORDER BY _rowid_", quote(t)))?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            for i in 0..cols.len() {
                match r.get_ref(i)? {
                    ValueRef::Null => h.update([0u8]),
                    ValueRef::Integer(v) => {
                        h.update([1u8]);
                        h.update(v.to_le_bytes());
                    }
                    ValueRef::Real(v) => {
                        h.update([2u8]);
                        h.update(v.to_le_bytes());
                    }
                    ValueRef::Text(b) | ValueRef::Blob(b) => {
                        h.update([3u8]);
                        h.update((b.len() as u64).to_le_bytes());
                        h.update(b);
                    }
                }
            }
        }
    }
    Ok(hex::encode(h.finalize()))
}

fn row_counts(conn: &Connection, schema: &str, tables: &[String]) -> Result<Vec<(String, u64)>> {
    let mut out = Vec::new();
    for t in tables {
        let n: i64 = conn.query_row(&format!("SELECT count(*) FROM {schema}.{}", quote(t)), [], |r| r.get(0))?;
        if n > 0 {
            out.push((t.clone(), n as u64));
        }
    }
    Ok(out)
}

fn manifest(conn: &Connection, key: &str) -> Result<String> {
    conn.query_row(&format!("SELECT value FROM x.{MANIFEST} WHERE key = ?1"), [key], |r| r.get(0))
        .optional_row()?
        .ok_or_else(|| StoreError::Invalid(format!("not a sitebot site export: its manifest has no {key}")))
}

/// Opens sealed secrets with one key and seals them with another (`None` stays `None`).
fn reseal(from: &Keyring, to: &Keyring, sealed: Option<Vec<u8>>) -> Result<Option<Vec<u8>>, crate::secrets::KeyringError> {
    sealed.map(|s| from.open(&s).map(|clear| to.seal(&clear))).transpose()
}

fn sync_dir_of(path: &Path) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::File::open(dir).and_then(|d| d.sync_all()).map_err(|e| StoreError::Invalid(format!("cannot sync {}: {e}", dir.display())))?;
    }
    Ok(())
}

fn path_text(path: &Path) -> Result<&str> {
    path.to_str().ok_or_else(|| StoreError::Invalid("the export's path must be UTF-8".into()))
}

impl<'s> Transfer<'s> {
    pub(super) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Marks the site as moving (see the module's header), then writes it into `dest` (which must not
    /// exist) with its secrets sealed by `key`. The site stays marked: `SiteStore::thaw` serves it here
    /// again if the move is abandoned.
    pub fn export(&self, id: SiteId, dest: &Path, key: &Keyring) -> Result<Moved> {
        if dest.exists() {
            return Err(StoreError::Conflict(format!("{} already exists; an export never overwrites", dest.display())));
        }
        let moving_since = self.store.site(id).freeze()?;
        let partial = PathBuf::from(format!("{}.partial", dest.display()));
        let _ = std::fs::remove_file(&partial);
        super::create_private(&partial)?;
        let written = self.write_export(id, &partial, key, moving_since);
        match written {
            Ok(moved) => {
                std::fs::rename(&partial, dest).map_err(|e| StoreError::Invalid(format!("cannot move the export into {}: {e}", dest.display())))?;
                sync_dir_of(dest)?;
                Ok(moved)
            }
            Err(e) => {
                let _ = std::fs::remove_file(&partial);
                Err(e)
            }
        }
    }

    fn write_export(&self, id: SiteId, file: &Path, key: &Keyring, moving_since: Timestamp) -> Result<Moved> {
        let conn = super::open_connection(self.store.path(), false)?;
        conn.execute("ATTACH DATABASE ?1 AS x", [path_text(file)?])?;
        // One read snapshot of `main`, taken after the freeze committed: every acknowledged write is in it.
        conn.execute_batch("BEGIN")?;
        let tables = exported_tables(&conn)?;
        for (t, rows) in &tables {
            // The columns as they are here (names and order), then the site's rows.
            conn.execute_batch(&format!("CREATE TABLE x.{q} AS SELECT * FROM main.{q} WHERE 0", q = quote(t)))?;
            conn.execute(&format!("INSERT INTO x.{q} SELECT * FROM main.{q} WHERE {rows}", q = quote(t)), [id])?;
        }
        let node = self.store.keyring();
        let sealed: Vec<(Vec<u8>, Option<Vec<u8>>)> = {
            let mut stmt = conn.prepare("SELECT secret_sealed, prev_secret_sealed FROM x.sites")?;
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<Vec<_>>>()?
        };
        let [(secret, prev)] = <[_; 1]>::try_from(sealed).map_err(|_| StoreError::NotFound)?;
        let secret = reseal(node, key, Some(secret))?;
        let prev = reseal(node, key, prev)?;
        conn.execute("UPDATE x.sites SET secret_sealed = ?1, prev_secret_sealed = ?2, moving_since = NULL", params![secret, prev])?;
        let sha256 = digest(&conn, "x")?;
        let names: Vec<String> = tables.iter().map(|(t, _)| t.clone()).collect();
        let rows = row_counts(&conn, "x", &names)?;
        let schema: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        conn.execute_batch(&format!("CREATE TABLE x.{MANIFEST} (key TEXT PRIMARY KEY, value TEXT NOT NULL)"))?;
        let facts = [
            ("format", FORMAT.to_owned()),
            ("schema", schema.to_string()),
            ("site_id", id.to_string()),
            ("moving_since", moving_since.as_millis().to_string()),
            ("sha256", sha256.clone()),
        ];
        for (k, v) in facts {
            conn.execute(&format!("INSERT INTO x.{MANIFEST} (key, value) VALUES (?1, ?2)"), params![k, v])?;
        }
        conn.execute_batch("COMMIT; DETACH DATABASE x")?;
        drop(conn);
        std::fs::File::open(file).and_then(|f| f.sync_all()).map_err(|e| StoreError::Invalid(format!("cannot sync {}: {e}", file.display())))?;
        Ok(Moved { site_id: id, rows, sha256, moving_since })
    }

    /// Checks the export at `src` (its format, schema, digest and key) and then adds its site to this
    /// node in one transaction, its secrets sealed with this node's master key. A site of the same id
    /// is a `Conflict` unless `replace`, which removes it in the same transaction. The caller rebuilds
    /// the site's full-text table afterwards (`knowledge::search::analysis::reindex`).
    pub fn import(&self, src: &Path, key: &Keyring, replace: bool) -> Result<Moved> {
        let mut conn = super::open_connection(self.store.path(), false)?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.execute("ATTACH DATABASE ?1 AS x", [path_text(src)?])?;
        let format = manifest(&conn, "format").map_err(|_| StoreError::Invalid(format!("{} is not a sitebot site export", src.display())))?;
        if format != FORMAT {
            return Err(StoreError::Invalid(format!("{} is a {format}, this build reads {FORMAT}", src.display())));
        }
        let schema: i64 = manifest(&conn, "schema")?.parse().map_err(|_| StoreError::Invalid("bad schema in the manifest".into()))?;
        let ours: i64 = conn.pragma_query_value(Some("main"), "user_version", |r| r.get(0))?;
        if schema != ours {
            return Err(StoreError::Conflict(format!(
                "the export was written at schema {schema} and this node is at {ours}: run the same sitebot version on both nodes"
            )));
        }
        let sha256 = manifest(&conn, "sha256")?;
        if digest(&conn, "x")? != sha256 {
            return Err(StoreError::Invalid(format!("{}: the checksum does not match its contents (damaged or altered)", src.display())));
        }
        let id: SiteId = manifest(&conn, "site_id")?.parse().map_err(|_| StoreError::Invalid("bad site id in the manifest".into()))?;
        let moving_since = Timestamp::from_millis(manifest(&conn, "moving_since")?.parse().unwrap_or(0));
        let (secret, prev): (Vec<u8>, Option<Vec<u8>>) =
            conn.query_row("SELECT secret_sealed, prev_secret_sealed FROM x.sites", [], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let wrong_key = |_| StoreError::Invalid("the export key does not open the export's secrets: give the key the export printed".into());
        let node = self.store.keyring();
        let secret = reseal(key, node, Some(secret)).map_err(wrong_key)?;
        let prev = reseal(key, node, prev).map_err(wrong_key)?;

        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let exists: bool = tx.query_row("SELECT EXISTS (SELECT 1 FROM main.sites WHERE id = ?1)", [id], |r| r.get(0))?;
        if exists && !replace {
            return Err(StoreError::Conflict(format!("site {id} is already on this node: import with --replace to overwrite it")));
        }
        if exists {
            super::erase::remove_site(&tx, id)?;
        }
        // Parents and children in any order: foreign keys are checked at the commit.
        tx.pragma_update(None, "defer_foreign_keys", "ON")?;
        let mut tables = tables_of_export(&tx, "x")?;
        // Users first: grants and held conversations find their user here by e-mail (a subquery, not a key
        // the deferred check could wait for), so a grant written before its user would have none.
        tables.sort_by_key(|t| t != "console_users");
        let ours = exported_tables(&tx)?;
        // review_groups ids are shifted past this node's, and the questions that name them with them.
        let shift: i64 = tx.query_row(
            "SELECT max(coalesce((SELECT max(id) FROM main.review_groups), 0), coalesce((SELECT seq FROM main.sqlite_sequence WHERE name = 'review_groups'), 0))",
            [],
            |r| r.get(0),
        )?;
        for t in &tables {
            if !ours.iter().any(|(o, _)| o == t) {
                return Err(StoreError::Invalid(format!("the export holds a table {t} this node does not move")));
            }
            let cols = columns(&tx, "x", t)?;
            if cols != columns(&tx, "main", t)? {
                return Err(StoreError::Conflict(format!("table {t} differs between the export and this node")));
            }
            let dropped = NEW_KEYS.iter().find(|(nt, _)| nt == t).map(|(_, c)| *c);
            let mut names = Vec::new();
            let mut values = Vec::new();
            for c in cols.iter().filter(|c| Some(c.as_str()) != dropped) {
                names.push(quote(c));
                values.push(match (t.as_str(), c.as_str()) {
                    ("review_groups", "id") | ("query_log", "review_group") => format!("{} + ?1", quote(c)),
                    ("outbox", "lease_until" | "lease_token") | ("crawl_sources", "lease_until" | "lease_owner") => "NULL".to_owned(),
                    ("console_users", "is_admin") => "0".to_owned(),
                    ("conversations", "holder") | ("console_grants", "user_id") => {
                        format!("(SELECT m.id FROM x.console_users u JOIN main.console_users m ON m.email = u.email WHERE u.id = s.{})", quote(c))
                    }
                    _ => format!("s.{}", quote(c)),
                });
            }
            // A console user who already has an account here (by e-mail) keeps it and gains the grants.
            let only = if t == "console_users" { "WHERE NOT EXISTS (SELECT 1 FROM main.console_users m WHERE m.email = s.email)" } else { "" };
            let sql = format!("INSERT INTO main.{q} ({}) SELECT {} FROM x.{q} s {only} ORDER BY s._rowid_", names.join(", "), values.join(", "), q = quote(t));
            let uses_shift = sql.contains("?1");
            let mut stmt = tx.prepare(&sql)?;
            if uses_shift {
                stmt.execute([shift])?
            } else {
                stmt.execute([])?
            };
        }
        tx.execute("UPDATE main.sites SET secret_sealed = ?2, prev_secret_sealed = ?3, moving_since = NULL WHERE id = ?1", params![id, secret, prev])?;
        let rows = row_counts(&tx, "x", &tables)?;
        tx.commit()?;
        conn.execute_batch("DETACH DATABASE x")?;
        Ok(Moved { site_id: id, rows, sha256, moving_since })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Email, Tier};
    use crate::store::leads::NewLead;
    use crate::store::usage::DailyCap;

    fn store(dir: &Path, name: &str, key: u8) -> Store {
        Store::open(&dir.join(name), Keyring::from_bytes(&[key; 32])).unwrap()
    }

    /// Every table of the schema is either moved with a site or named as shared, with a reason: a new
    /// table fails here until it is classified.
    #[test]
    fn every_table_is_moved_or_named_as_shared() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path(), "a.db", 1);
        let conn = crate::store::open_connection(s.path(), false).unwrap();
        let moved = exported_tables(&conn).unwrap();
        for t in [
            "sites", "leads", "outbox", "outbox_attempts", "kb_chunks", "curated_answers", "conversations", "conversation_turns", "query_log", "crawl_sources",
            "console_users", "console_grants",
        ] {
            assert!(moved.iter().any(|(m, _)| m == t), "{t} moves with its site");
        }
        // Litestream's tables in a replicated database are not ours to move.
        conn.execute_batch("CREATE TABLE _litestream_seq (id INTEGER PRIMARY KEY, seq INTEGER)").unwrap();
        assert!(exported_tables(&conn).unwrap().iter().all(|(t, _)| !t.starts_with("_litestream")));
        conn.execute_batch("CREATE TABLE gadgets (id TEXT PRIMARY KEY, owner TEXT)").unwrap();
        let e = exported_tables(&conn).unwrap_err();
        assert!(e.to_string().contains("gadgets"), "{e}");
    }

    #[test]
    fn a_frozen_site_refuses_writes_and_moves_with_its_leads_and_secret() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (store(dir.path(), "a.db", 1), store(dir.path(), "b.db", 2));
        let (site, creds) = a.sites().create(crate::store::sites::tests::new_site("Moved", Tier::Pro, &[])).unwrap();
        let lead = |s: &Store| {
            s.site(site.id).leads().capture(
                NewLead { name: None, email: Email::parse("a@example.com").unwrap(), message: None, page_url: None, conversation_id: None },
                None,
                DailyCap::default(),
                |_| unreachable!(),
            )
        };
        lead(&a).unwrap();
        let key = Keyring::from_bytes(&[9; 32]);
        let file = dir.path().join("site.export");
        let out = a.transfer().export(site.id, &file, &key).unwrap();
        assert_eq!(out.rows_of("leads"), 1);
        assert!(matches!(lead(&a), Err(StoreError::Moving)), "no write of a moving site commits");
        assert!(a.transfer().export(site.id, &file, &key).is_err(), "never overwrites");

        assert!(b.transfer().import(&file, &Keyring::from_bytes(&[8; 32]), false).is_err(), "a wrong key is refused");
        let got = b.transfer().import(&file, &key, false).unwrap();
        assert_eq!((got.sha256.as_str(), got.rows_of("leads")), (out.sha256.as_str(), 1));
        assert_eq!(b.site(site.id).signing_secrets().unwrap(), vec![creds.webhook_secret.clone().unwrap()], "the secret opens with b's key");
        lead(&b).unwrap();
        assert!(matches!(b.transfer().import(&file, &key, false), Err(StoreError::Conflict(_))));
        b.transfer().import(&file, &key, true).unwrap();
        assert_eq!(b.site(site.id).leads().list(None).unwrap().len(), 1, "replaced by the export");

        // A damaged export is refused before anything is written.
        let c = store(dir.path(), "c.db", 3);
        let conn = Connection::open(&file).unwrap();
        conn.execute("UPDATE leads SET email = 'b@example.com'", []).unwrap();
        drop(conn);
        let e = c.transfer().import(&file, &key, false).unwrap_err();
        assert!(e.to_string().contains("checksum"), "{e}");
        assert!(c.site(site.id).get().unwrap().is_none());
    }

    #[test]
    fn the_sites_console_users_move_with_their_roles_and_one_with_an_account_here_keeps_it() {
        use crate::domain::SiteRole;
        use crate::store::users::Grant;
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (store(dir.path(), "a.db", 1), store(dir.path(), "b.db", 2));
        let (site, _) = a.sites().create(crate::store::sites::tests::new_site("Moved", Tier::Pro, &[])).unwrap();
        let (other, _) = b.sites().create(crate::store::sites::tests::new_site("Stays", Tier::Pro, &[])).unwrap();
        let later = Timestamp::from_millis(Timestamp::now().as_millis() + 3_600_000);
        // Each user's setup link has its own token.
        let add =
            |s: &Store, email: &str, grant: Grant, link: u8| s.users().add(&Email::parse(email).unwrap(), false, Some(grant), &[link; 32], later).unwrap();
        add(&a, "owner@example.com", Grant { site_id: site.id, role: SiteRole::Owner }, 1);
        add(&a, "editor@example.com", Grant { site_id: site.id, role: SiteRole::Editor }, 2);
        // The editor already runs another site on b: one account there, with both roles after the move.
        let here = add(&b, "Editor@example.com", Grant { site_id: other.id, role: SiteRole::Viewer }, 3);
        let key = Keyring::from_bytes(&[9; 32]);
        let file = dir.path().join("site.export");
        assert_eq!(a.transfer().export(site.id, &file, &key).unwrap().rows_of("console_grants"), 2);
        b.transfer().import(&file, &key, false).unwrap();
        let moved: Vec<(String, Option<SiteRole>)> = b.users().of_site(&site.id).unwrap().into_iter().map(|(u, r)| (u.email.to_lowercase(), r)).collect();
        assert!(moved.contains(&("owner@example.com".into(), Some(SiteRole::Owner))), "{moved:?}");
        assert!(moved.contains(&("editor@example.com".into(), Some(SiteRole::Editor))), "{moved:?}");
        let mut roles = b.users().grants(&here.id).unwrap();
        roles.sort_by_key(|g| g.role != SiteRole::Editor);
        assert_eq!(roles, vec![Grant { site_id: site.id, role: SiteRole::Editor }, Grant { site_id: other.id, role: SiteRole::Viewer }]);
    }
}
