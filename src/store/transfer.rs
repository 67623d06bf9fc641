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
//! Bearer tokens are stored only as hashes and move as they are. Console users move with their roles on
//! the site but without their password hash (nor an administrator's role): one with an account on the
//! new node by the same e-mail keeps it, one new there sets a password through a setup link
//! (`Moved::new_users` names them).
//!
//! **Integrity and authenticity.** The export carries a SHA-256 over every exported value (table by
//! table, row by row, each value with its type) and an HMAC-SHA256 over the manifest's facts and that
//! digest, keyed by a key derived from the export key (`Keyring::tag`): a file edited by someone without
//! the key is refused as altered. An export file still comes from outside the node, and whoever holds
//! its key can rewrite it, so the import also checks what it holds (`check`): only rows of the one site
//! its manifest names, every child's parent in the file itself, console users without passwords or
//! other roles. Every check runs before the import writes anything, and any fault refuses the whole file.
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

mod check;

/// The `format` an export names in its manifest.
pub const FORMAT: &str = "sitebot-site-export/2";

/// The format of exports written before they carried a MAC: refused, with what to do instead.
const UNAUTHENTICATED_FORMAT: &str = "sitebot-site-export/1";

/// The purpose the export's MAC key is derived for (`Keyring::tag`).
const MAC_PURPOSE: &str = "sitebot-site-export/2 manifest";

/// The manifest's facts the MAC covers, in this order; the last is the digest of the contents.
const SIGNED_FACTS: &[&str] = &["format", "schema", "site_id", "moving_since", "sha256"];

/// Tables that are not per site, and why they do not move.
pub const NOT_PER_SITE: &[(&str, &str)] = &[
    ("meta", "facts of this installation (the demo site's id)"),
    ("verticals", "vertical content, shared by every site of the vertical: loaded on every node"),
    ("landing_pages", "vertical content: loaded on every node"),
    ("pricing_tiers", "vertical content: loaded on every node"),
    ("currency_rates", "exchange rates: loaded on every node"),
    ("console_setup_links", "one-time links of this node; a moved user new to the node gets one with `sitebot user reset`"),
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
    /// Of an import: the e-mail addresses of the site's console users who had no account on this node.
    /// They arrive without a password and sign in once given a setup link (`sitebot user reset`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub new_users: Vec<String>,
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

fn manifest_in(conn: &Connection, schema: &str, key: &str) -> Result<String> {
    conn.query_row(&format!("SELECT value FROM {schema}.{MANIFEST} WHERE key = ?1"), [key], |r| r.get(0))
        .optional_row()?
        .ok_or_else(|| StoreError::Invalid(format!("not a sitebot site export: its manifest has no {key}")))
}

fn manifest(conn: &Connection, key: &str) -> Result<String> {
    manifest_in(conn, "x", key)
}

/// What the MAC covers: each of `SIGNED_FACTS` as the manifest of `schema` says it, name and value, each
/// value length-prefixed so no two manifests encode alike.
fn signed_message(conn: &Connection, schema: &str) -> Result<Vec<u8>> {
    let mut m = Vec::new();
    for k in SIGNED_FACTS {
        let v = manifest_in(conn, schema, k)?;
        m.extend_from_slice(k.as_bytes());
        m.extend_from_slice(&(v.len() as u64).to_le_bytes());
        m.extend_from_slice(v.as_bytes());
    }
    Ok(m)
}

/// Writes the digest of the export attached as `schema` and the MAC of its manifest's facts (which must
/// hold all of `SIGNED_FACTS` but the digest) into its manifest; returns the digest.
fn sign(conn: &Connection, schema: &str, key: &Keyring) -> Result<String> {
    let sha256 = digest(conn, schema)?;
    let set = format!("INSERT OR REPLACE INTO {schema}.{MANIFEST} (key, value) VALUES (?1, ?2)");
    conn.execute(&set, params!["sha256", sha256])?;
    let mac = hex::encode(key.tag(MAC_PURPOSE, &signed_message(conn, schema)?));
    conn.execute(&set, params!["mac", mac])?;
    Ok(sha256)
}

/// Writes the digest and the MAC of the export at `file` from what it now holds, as `Transfer::export`
/// does last. An export is signed by the export that writes it; this is for tests that alter an export
/// as someone holding its key could, to show what the import's checks of its contents refuse.
pub fn sign_export(file: &Path, key: &Keyring) -> Result<String> {
    let conn = Connection::open(file)?;
    sign(&conn, "main", key)
}

/// Whether `key` opens the sealed secret of the export's (first) site: tells a wrong key from an altered
/// file when the MAC does not verify.
fn key_opens(conn: &Connection, key: &Keyring) -> bool {
    let sealed: Option<Vec<u8>> = conn.query_row("SELECT secret_sealed FROM x.sites", [], |r| r.get(0)).ok();
    sealed.is_some_and(|s| key.open(&s).is_ok())
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
        // Passwords and the administrator's role stay on this node; references to users the export does
        // not hold (a holder or a staff member who no longer has a role on the site) name nobody there.
        conn.execute_batch(
            "UPDATE x.console_users SET password_hash = NULL, password_at = NULL, is_admin = 0;
             UPDATE x.conversations SET holder = NULL WHERE holder NOT IN (SELECT id FROM x.console_users);
             UPDATE x.conversation_events SET user_id = NULL WHERE user_id NOT IN (SELECT id FROM x.console_users);",
        )?;
        let names: Vec<String> = tables.iter().map(|(t, _)| t.clone()).collect();
        let rows = row_counts(&conn, "x", &names)?;
        let schema: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        conn.execute_batch(&format!("CREATE TABLE x.{MANIFEST} (key TEXT PRIMARY KEY, value TEXT NOT NULL)"))?;
        let facts = [
            ("format", FORMAT.to_owned()),
            ("schema", schema.to_string()),
            ("site_id", id.to_string()),
            ("moving_since", moving_since.as_millis().to_string()),
        ];
        for (k, v) in facts {
            conn.execute(&format!("INSERT INTO x.{MANIFEST} (key, value) VALUES (?1, ?2)"), params![k, v])?;
        }
        let sha256 = sign(&conn, "x", key)?;
        conn.execute_batch("COMMIT; DETACH DATABASE x")?;
        drop(conn);
        std::fs::File::open(file).and_then(|f| f.sync_all()).map_err(|e| StoreError::Invalid(format!("cannot sync {}: {e}", file.display())))?;
        Ok(Moved { site_id: id, rows, sha256, moving_since, new_users: Vec::new() })
    }

    /// Checks the export at `src` (its format, schema, MAC, digest and key, then what it holds: see
    /// `check`) and then adds its site to this node in one transaction, its secrets sealed with this
    /// node's master key. A site of the same id is a `Conflict` unless `replace`, which removes it in the
    /// same transaction. Any fault refuses the whole file before a row is written. The caller rebuilds the
    /// site's full-text table afterwards (`knowledge::search::analysis::reindex`).
    pub fn import(&self, src: &Path, key: &Keyring, replace: bool) -> Result<Moved> {
        let mut conn = super::open_connection(self.store.path(), false)?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.execute("ATTACH DATABASE ?1 AS x", [path_text(src)?])?;
        let format = manifest(&conn, "format").map_err(|_| StoreError::Invalid(format!("{} is not a sitebot site export", src.display())))?;
        if format == UNAUTHENTICATED_FORMAT {
            return Err(StoreError::Invalid(format!(
                "{} was written by an earlier sitebot ({format}) without a MAC, so nothing shows it was not altered: \
                 export the site again with this version (`sitebot site export ID --to FILE` on its node) and import that file",
                src.display()
            )));
        }
        if format != FORMAT {
            return Err(StoreError::Invalid(format!("{} is a {format}, this build reads {FORMAT}", src.display())));
        }
        let mac = hex::decode(manifest(&conn, "mac")?).unwrap_or_default();
        if !key.verify_tag(MAC_PURPOSE, &signed_message(&conn, "x")?, &mac) {
            return Err(StoreError::Invalid(if key_opens(&conn, key) {
                format!("{}: its MAC does not verify with the export key: the file was altered after the export", src.display())
            } else {
                format!("{}: the export key does not authenticate it: give the key the export printed (or the file was altered)", src.display())
            }));
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
        let mut tables = tables_of_export(&conn, "x")?;
        let exported: Vec<String> = exported_tables(&conn)?.into_iter().map(|(t, _)| t).collect();
        check::shapes(&conn, &exported, &tables)?;
        check::contents(&conn, &id, &tables)?;
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
        check::loose_references(&tx, &id)?;
        if exists {
            super::erase::remove_site(&tx, id)?;
        }
        let new_users: Vec<String> = tx
            .prepare("SELECT u.email FROM x.console_users u WHERE NOT EXISTS (SELECT 1 FROM main.console_users m WHERE m.email = u.email) ORDER BY u._rowid_")?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        // Parents and children in any order: foreign keys are checked at the commit.
        tx.pragma_update(None, "defer_foreign_keys", "ON")?;
        // Users first: grants, held conversations and staff messages find their user here by e-mail (a
        // subquery, not a key the deferred check could wait for), so a grant written before its user
        // would have none.
        tables.sort_by_key(|t| t != "console_users");
        // review_groups ids are shifted past this node's, and the questions that name them with them.
        let shift: i64 = tx.query_row(
            "SELECT max(coalesce((SELECT max(id) FROM main.review_groups), 0), coalesce((SELECT seq FROM main.sqlite_sequence WHERE name = 'review_groups'), 0))",
            [],
            |r| r.get(0),
        )?;
        for t in &tables {
            let cols = columns(&tx, "x", t)?;
            let dropped = NEW_KEYS.iter().find(|(nt, _)| nt == t).map(|(_, c)| *c);
            let mut names = Vec::new();
            let mut values = Vec::new();
            for c in cols.iter().filter(|c| Some(c.as_str()) != dropped) {
                names.push(quote(c));
                values.push(match (t.as_str(), c.as_str()) {
                    ("review_groups", "id") | ("query_log", "review_group") => format!("{} + ?1", quote(c)),
                    ("outbox", "lease_until" | "lease_token") | ("crawl_sources", "lease_until" | "lease_owner") => "NULL".to_owned(),
                    // Checked absent by `check`, and never written whatever the file says.
                    ("console_users", "password_hash" | "password_at") => "NULL".to_owned(),
                    ("console_users", "is_admin") => "0".to_owned(),
                    ("conversations", "holder") | ("conversation_events", "user_id") | ("console_grants", "user_id") => {
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
        Ok(Moved { site_id: id, rows, sha256, moving_since, new_users })
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
    fn an_export_altered_without_its_key_or_written_without_a_mac_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (store(dir.path(), "a.db", 1), store(dir.path(), "b.db", 2));
        let (site, _) = a.sites().create(crate::store::sites::tests::new_site("Moved", Tier::Pro, &[])).unwrap();
        let new = NewLead { name: None, email: Email::parse("a@example.com").unwrap(), message: None, page_url: None, conversation_id: None };
        a.site(site.id).leads().capture(new, None, DailyCap::default(), |_| unreachable!()).unwrap();
        let key = Keyring::from_bytes(&[9; 32]);
        let file = dir.path().join("site.export");
        a.transfer().export(site.id, &file, &key).unwrap();
        let edited = |name: &str, sql: &str| {
            let copy = dir.path().join(name);
            std::fs::copy(&file, &copy).unwrap();
            let conn = Connection::open(&copy).unwrap();
            conn.execute_batch(sql).unwrap();
            copy
        };
        let refused = |f: &Path, k: &Keyring| {
            let e = b.transfer().import(f, k, false).unwrap_err().to_string();
            assert!(b.site(site.id).get().unwrap().is_none(), "nothing imported: {e}");
            e
        };

        // A lead's address changed and the checksum made again, but not the MAC: whoever did it had no key.
        let f = edited("resummed.export", "UPDATE leads SET email = 'b@example.com'");
        let conn = Connection::open(&f).unwrap();
        let sum = digest(&conn, "main").unwrap();
        conn.execute("UPDATE export_manifest SET value = ?1 WHERE key = 'sha256'", [sum]).unwrap();
        drop(conn);
        let e = refused(&f, &key);
        assert!(e.contains("MAC does not verify") && e.contains("altered"), "{e}");
        // The same, signed with a key of the editor's own.
        let f = edited("other-key.export", "UPDATE leads SET email = 'b@example.com'");
        sign_export(&f, &Keyring::from_bytes(&[7; 32])).unwrap();
        assert!(refused(&f, &key).contains("altered"));
        // The manifest's facts are covered too: another site id, another schema.
        for (i, fact) in [
            "UPDATE export_manifest SET value = 'site_01J00000000000000000000000' WHERE key = 'site_id'",
            "UPDATE export_manifest SET value = '1' WHERE key = 'schema'",
        ]
        .iter()
        .enumerate()
        {
            let e = refused(&edited(&format!("fact-{i}.export"), fact), &key);
            assert!(e.contains("altered"), "{fact}: {e}");
        }
        // An unedited export with a wrong key: the message says which.
        assert!(refused(&file, &Keyring::from_bytes(&[8; 32])).contains("give the key the export printed"));
        // An export of the previous format carries no MAC: refused, with what to do instead.
        let f = edited(
            "v1.export",
            "UPDATE export_manifest SET value = 'sitebot-site-export/1' WHERE key = 'format'; DELETE FROM export_manifest WHERE key = 'mac'",
        );
        let e = refused(&f, &key);
        assert!(e.contains("sitebot-site-export/1") && e.contains("export the site again"), "{e}");

        b.transfer().import(&file, &key, false).unwrap();
        assert_eq!(b.site(site.id).leads().list(None).unwrap().len(), 1);
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
        let imported = b.transfer().import(&file, &key, false).unwrap();
        assert_eq!(imported.new_users, vec!["owner@example.com".to_owned()], "the editor has an account here");
        let moved: Vec<(String, Option<SiteRole>)> = b.users().of_site(&site.id).unwrap().into_iter().map(|(u, r)| (u.email.to_lowercase(), r)).collect();
        assert!(moved.contains(&("owner@example.com".into(), Some(SiteRole::Owner))), "{moved:?}");
        assert!(moved.contains(&("editor@example.com".into(), Some(SiteRole::Editor))), "{moved:?}");
        let mut roles = b.users().grants(&here.id).unwrap();
        roles.sort_by_key(|g| g.role != SiteRole::Editor);
        assert_eq!(roles, vec![Grant { site_id: site.id, role: SiteRole::Editor }, Grant { site_id: other.id, role: SiteRole::Viewer }]);
    }
}
