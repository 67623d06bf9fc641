//! What an import accepts. An export file comes from outside this node (a customer moving in, another
//! node), and whoever holds its export key can rewrite it and sign it again, so its contents are checked
//! before a row is written, and any fault refuses the whole file with the table and row it found:
//!
//! - **Shape**: every table is one this node moves, as an export writes it (the same `CREATE TABLE` text,
//!   so no collation, type or virtual table of the file's author changes how its values compare), and
//!   every table the node moves is there.
//! - **One site**: `sites` holds exactly the manifest's site, and every `site_id` of every table is its id.
//! - **Parents in the file**: every foreign key the schema declares (`pragma_foreign_key_list`), and the
//!   references in `IN_FILE` it does not declare, find their parent among the file's rows, never among
//!   this node's: a conversation turn, a delivery attempt or a grant cannot hang from another site's row.
//! - **Loose references**: the ids in `LOOSE` may name rows the source's retention or erasure removed, so
//!   they need not be in the file; one that is not must not name another site's row on this node.
//! - **Console users**: each has an e-mail address and a role on the site in the file, and none is an
//!   administrator or brings a password hash (an export writes neither): a moved user new to this node sets a password through a
//!   setup link, as any new user does.
//! - **Setup-link e-mails**: none; they belong to the node that made the link.

use rusqlite::Connection;

use super::super::{OptionalRow, Result, StoreError};
use super::{NOT_PER_SITE, quote};
use crate::domain::{Email, SiteId};

/// References the schema does not declare that must find their parent in the file: (table, column,
/// parent table, parent column). Review groups are renumbered by the import and never deleted without
/// their site; console users are matched by e-mail on this node, and an export keeps only references to
/// the users it holds.
const IN_FILE: &[(&str, &str, &str, &str)] = &[("query_log", "review_group", "review_groups", "id"), ("conversation_events", "user_id", "console_users", "id")];

/// The rows a loose reference may name: (table, column) pairs, each table with a `site_id`.
type Parents = &'static [(&'static str, &'static str)];

/// References the schema does not declare whose parent may be gone (retention, a visitor's erasure, a
/// deleted document): (table, column, the parents it may name).
const LOOSE: &[(&str, &str, Parents)] = &[
    ("leads", "conversation_id", &[("conversations", "id")]),
    ("leads", "message_id", &[("outbox", "id")]),
    ("query_log", "conversation_id", &[("conversations", "id")]),
    ("conversation_turns", "query_id", &[("query_log", "id")]),
    ("feedback", "query_id", &[("query_log", "id")]),
    ("widget_events", "query_id", &[("query_log", "id")]),
    ("query_sources", "query_id", &[("query_log", "id")]),
    ("query_sources", "document_id", &[("kb_documents", "id"), ("curated_answers", "id")]),
    ("site_day_sources", "document_id", &[("kb_documents", "id"), ("curated_answers", "id")]),
    ("site_week_sources", "document_id", &[("kb_documents", "id"), ("curated_answers", "id")]),
];

fn refused(what: String) -> StoreError {
    StoreError::Invalid(format!("the export is refused, nothing was imported: {what}"))
}

/// The first row `sql` finds (rowid and a description of its values), if any.
fn first(conn: &Connection, sql: &str, site: Option<&SiteId>) -> Result<Option<(i64, String)>> {
    let mut stmt = conn.prepare(sql)?;
    let row = match site {
        Some(s) => stmt.query_row([s], |r| Ok((r.get(0)?, r.get(1)?))),
        None => stmt.query_row([], |r| Ok((r.get(0)?, r.get(1)?))),
    };
    row.optional_row()
}

/// Every table of the file is one this node moves, shaped as an export writes it, and every table the
/// node moves is in the file. `exported` is this node's list; `in_file` the file's (attached as `x`).
/// Must run outside a transaction (it attaches a scratch database).
pub(super) fn shapes(conn: &Connection, exported: &[String], in_file: &[String]) -> Result<()> {
    for t in in_file {
        if !exported.contains(t) {
            let why = NOT_PER_SITE.iter().find(|(n, _)| n == t).map_or(String::new(), |(_, why)| format!(" ({why})"));
            return Err(refused(format!("it holds a table {t} that does not move with a site{why}")));
        }
    }
    if let Some(t) = exported.iter().find(|t| !in_file.contains(t)) {
        return Err(refused(format!("it has no table {t}, which every export of this schema holds")));
    }
    // What an export writes (`CREATE TABLE AS`), made here from this node's tables, compared as text.
    conn.execute_batch("ATTACH DATABASE ':memory:' AS expected")?;
    let compared = (|| -> Result<()> {
        for t in in_file {
            conn.execute_batch(&format!("CREATE TABLE expected.{q} AS SELECT * FROM main.{q} WHERE 0", q = quote(t)))?;
            let sql = |schema: &str| -> Result<Option<String>> {
                conn.query_row(&format!("SELECT sql FROM {schema}.sqlite_schema WHERE type = 'table' AND name = ?1"), [t], |r| r.get(0)).optional_row()
            };
            if sql("x")? != sql("expected")? {
                return Err(refused(format!("its table {t} is not shaped as an export writes it (columns, types or collations differ)")));
            }
        }
        Ok(())
    })();
    conn.execute_batch("DETACH DATABASE expected")?;
    compared
}

/// A reference from `table(cols)` to `parent(parent_cols)`.
struct Reference {
    table: String,
    cols: Vec<String>,
    parent: String,
    parent_cols: Vec<String>,
}

/// The foreign keys the schema declares on `table`, as `main` has them.
fn declared(conn: &Connection, table: &str) -> Result<Vec<Reference>> {
    let mut stmt = conn.prepare("SELECT id, \"table\", \"from\", \"to\" FROM pragma_foreign_key_list(?1, 'main') ORDER BY id, seq")?;
    let rows = stmt
        .query_map([table], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, Option<String>>(3)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut out: Vec<(i64, Reference)> = Vec::new();
    for (id, parent, from, to) in rows {
        let Some(to) = to else {
            // Every key of this schema names its parent's columns; one that does not is a schema this
            // check was not written for, and it refuses rather than guess.
            return Err(StoreError::Invalid(format!("{table}'s foreign key to {parent} names no columns: this build cannot check it")));
        };
        match out.last_mut() {
            Some((last, r)) if *last == id => {
                r.cols.push(from);
                r.parent_cols.push(to);
            }
            _ => out.push((id, Reference { table: table.to_owned(), cols: vec![from], parent, parent_cols: vec![to] })),
        }
    }
    Ok(out.into_iter().map(|(_, r)| r).collect())
}

/// The first row of `r.table` in the file whose reference (all columns non-NULL, as SQLite checks a
/// key) finds no parent row in the file.
fn orphan(conn: &Connection, r: &Reference) -> Result<Option<(i64, String)>> {
    let cols: Vec<String> = r.cols.iter().map(|c| quote(c)).collect();
    let parent_cols: Vec<String> = r.parent_cols.iter().map(|c| quote(c)).collect();
    let not_null = |cs: &[String]| cs.iter().map(|c| format!("{c} IS NOT NULL")).collect::<Vec<_>>().join(" AND ");
    let sql = format!(
        "SELECT _rowid_, {shown} FROM x.{t} WHERE {child_set} AND ({cols}) NOT IN (SELECT {pcols} FROM x.{p} WHERE {parent_set}) ORDER BY _rowid_ LIMIT 1",
        shown = cols.iter().map(|c| format!("quote({c})")).collect::<Vec<_>>().join(" || ', ' || "),
        t = quote(&r.table),
        child_set = not_null(&cols),
        cols = cols.join(", "),
        pcols = parent_cols.join(", "),
        p = quote(&r.parent),
        parent_set = not_null(&parent_cols),
    );
    first(conn, &sql, None)
}

/// Everything the file says about its rows, before a transaction is opened: one site, parents in the
/// file, console users without passwords or other roles. `tables` are the file's (checked by `shapes`).
pub(super) fn contents(conn: &Connection, site: &SiteId, tables: &[String]) -> Result<()> {
    let n: i64 = conn.query_row("SELECT count(*) FROM x.sites", [], |r| r.get(0))?;
    if n != 1 {
        return Err(refused(format!("table sites holds {n} rows, and an export holds exactly its site")));
    }
    if let Some((row, id)) = first(conn, "SELECT _rowid_, quote(id) FROM x.sites WHERE id IS NOT ?1", Some(site))? {
        return Err(refused(format!("table sites, rowid {row}: the site is {id}, and the manifest names {site}")));
    }
    for t in tables {
        if super::super::erase::has_column(conn, t, "site_id")? {
            let sql = format!("SELECT _rowid_, quote(site_id) FROM x.{} WHERE site_id IS NOT ?1 ORDER BY _rowid_ LIMIT 1", quote(t));
            if let Some((row, other)) = first(conn, &sql, Some(site))? {
                return Err(refused(format!("table {t}, rowid {row}: site_id is {other}, not the site the manifest names ({site})")));
            }
        }
    }
    let mut references = Vec::new();
    for t in tables {
        references.extend(declared(conn, t)?);
    }
    for (t, c, p, pc) in IN_FILE {
        references.push(Reference { table: (*t).into(), cols: vec![(*c).into()], parent: (*p).into(), parent_cols: vec![(*pc).into()] });
    }
    for r in &references {
        if !tables.contains(&r.parent) {
            return Err(StoreError::Invalid(format!("{} refers to {}, which does not move with a site: this build cannot check it", r.table, r.parent)));
        }
        if let Some((row, value)) = orphan(conn, r)? {
            return Err(refused(format!(
                "table {}, rowid {row}: {} = {value} names a row of {} that is not in the export",
                r.table,
                r.cols.join(", "),
                r.parent
            )));
        }
    }
    let users = [
        ("password_hash IS NOT NULL", "brings a password hash (an export never does: a user new to this node sets a password with a setup link)"),
        ("password_at IS NOT NULL", "says when a password was set (an export never does)"),
        ("is_admin IS NOT 0", "is an administrator (an export never moves that role)"),
        ("id NOT IN (SELECT user_id FROM x.console_grants WHERE user_id IS NOT NULL)", "has no role on the site"),
    ];
    for (cond, what) in users {
        let sql = format!("SELECT _rowid_, quote(email) FROM x.console_users WHERE {cond} ORDER BY _rowid_ LIMIT 1");
        if let Some((row, email)) = first(conn, &sql, None)? {
            return Err(refused(format!("table console_users, rowid {row}: the user {email} {what}")));
        }
    }
    let mut stmt = conn.prepare("SELECT _rowid_, email FROM x.console_users ORDER BY _rowid_")?;
    let emails = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, rusqlite::types::Value>(1)?)))?.collect::<rusqlite::Result<Vec<_>>>()?;
    for (row, email) in emails {
        let parsed = match &email {
            rusqlite::types::Value::Text(e) => Email::parse(e).ok().filter(|p| p.as_str() == e),
            _ => None,
        };
        if parsed.is_none() {
            return Err(refused(format!("table console_users, rowid {row}: {email:?} is not an e-mail address")));
        }
    }
    let links = "SELECT _rowid_, quote(recipient) FROM x.email_queue WHERE kind IS 'setup_link' ORDER BY _rowid_ LIMIT 1";
    if let Some((row, to)) = first(conn, links, None)? {
        return Err(refused(format!("table email_queue, rowid {row}: a setup-link e-mail to {to}, which belongs to the node that made the link")));
    }
    Ok(())
}

/// The references in `LOOSE` that are not in the file name no row of another site on this node. Runs in
/// the import's transaction, before it writes.
pub(super) fn loose_references(conn: &Connection, site: &SiteId) -> Result<()> {
    for (t, c, parents) in LOOSE {
        let mut sql = format!("SELECT _rowid_, quote({c}) FROM x.{t} s WHERE {c} IS NOT NULL", t = quote(t), c = quote(c));
        for (p, pc) in *parents {
            sql += &format!(" AND {c} NOT IN (SELECT {pc} FROM x.{p} WHERE {pc} IS NOT NULL)", c = quote(c), p = quote(p), pc = quote(pc));
        }
        let here: Vec<String> = parents
            .iter()
            .map(|(p, pc)| {
                format!("EXISTS (SELECT 1 FROM main.{p} o WHERE o.{pc} = s.{c} AND o.site_id IS NOT ?1)", p = quote(p), pc = quote(pc), c = quote(c))
            })
            .collect();
        sql += &format!(" AND ({}) ORDER BY _rowid_ LIMIT 1", here.join(" OR "));
        if let Some((row, value)) = first(conn, &sql, Some(site))? {
            let names = parents.iter().map(|(p, _)| *p).collect::<Vec<_>>().join(" or ");
            return Err(refused(format!("table {t}, rowid {row}: {c} = {value} names a row of {names} of another site on this node, and none in the export")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use rusqlite::Connection;

    use crate::domain::{Email, SiteId, SiteRole, Tier, Timestamp};
    use crate::secrets::Keyring;
    use crate::store::leads::NewLead;
    use crate::store::sites::tests::new_site;
    use crate::store::usage::DailyCap;
    use crate::store::users::Grant;
    use crate::store::{Store, StoreError};

    /// Site `site` on node `a`, with a lead and an owner who set a password there, exported to `file`
    /// with `key`; node `b` with a site `victim` of its own: an owner, a document and a conversation.
    struct Move {
        dir: tempfile::TempDir,
        b: Store,
        site: SiteId,
        victim: SiteId,
        file: PathBuf,
        key: Keyring,
    }

    fn setup() -> Move {
        let dir = tempfile::tempdir().unwrap();
        let a = Store::open(&dir.path().join("a.db"), Keyring::from_bytes(&[1; 32])).unwrap();
        let b = Store::open(&dir.path().join("b.db"), Keyring::from_bytes(&[2; 32])).unwrap();
        let (site, _) = a.sites().create(new_site("Moving", Tier::Pro, &[])).unwrap();
        let (victim, _) = b.sites().create(new_site("Stays", Tier::Pro, &[])).unwrap();
        let later = Timestamp::from_millis(Timestamp::now().as_millis() + 3_600_000);
        let owner = Email::parse("owner@example.com").unwrap();
        let user = a.users().add(&owner, false, Some(Grant { site_id: site.id, role: SiteRole::Owner }), &[1; 32], later).unwrap();
        a.users().set_password(&user.id, "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA", Timestamp::now()).unwrap();
        let new = NewLead { name: None, email: Email::parse("visitor@example.com").unwrap(), message: None, page_url: None, conversation_id: None };
        a.site(site.id).leads().capture(new, None, DailyCap::default(), |_| unreachable!()).unwrap();
        let victim_owner = Email::parse("victim-owner@example.com").unwrap();
        b.users().add(&victim_owner, false, Some(Grant { site_id: victim.id, role: SiteRole::Owner }), &[2; 32], later).unwrap();
        b.write(|tx| {
            tx.execute_batch(&format!(
                "INSERT INTO kb_documents (id, site_id, source, title, format, content_hash, chunk_count) VALUES ('doc_victim', '{v}', 'v.md', 'V', 'markdown', 'h', 0);
                 INSERT INTO conversations (id, site_id, created_at, updated_at) VALUES ('conv_victim', '{v}', 0, 0);",
                v = victim.id
            ))?;
            Ok(())
        })
        .unwrap();
        let key = Keyring::from_bytes(&[9; 32]);
        let file = dir.path().join("moving.site");
        a.transfer().export(site.id, &file, &key).unwrap();
        Move { dir, b, site: site.id, victim: victim.id, file, key }
    }

    /// Rows of every table of a database, by table: what an import that is refused must leave as it was.
    fn rows(store: &Store) -> Vec<(String, i64)> {
        store
            .read(|c| {
                let tables = crate::store::erase::ordinary_tables(c)?;
                tables.into_iter().map(|t| Ok((t.clone(), c.query_row(&format!("SELECT count(*) FROM \"{t}\""), [], |r| r.get(0))?))).collect()
            })
            .unwrap()
    }

    impl Move {
        /// A copy of the export edited by `sql`, its checksum and MAC made again with the export key.
        fn edited(&self, name: &str, sql: &str) -> PathBuf {
            let copy = self.dir.path().join(name);
            std::fs::copy(&self.file, &copy).unwrap();
            Connection::open(&copy).unwrap().execute_batch(&sql.replace("{victim}", &self.victim.to_string())).unwrap();
            super::super::sign_export(&copy, &self.key).unwrap();
            copy
        }

        /// Imports `file` into b, which must refuse it whole; the refusal's text.
        fn refused(&self, file: &Path) -> String {
            let before = rows(&self.b);
            let e = self.b.transfer().import(file, &self.key, false).unwrap_err();
            assert!(matches!(e, StoreError::Invalid(_)), "{e:?}");
            assert_eq!(rows(&self.b), before, "nothing of a refused export is written: {e}");
            assert!(self.b.site(self.site).get().unwrap().is_none());
            e.to_string()
        }
    }

    #[test]
    fn an_export_rewritten_with_its_key_cannot_reach_another_site() {
        let m = setup();
        let cases = [
            (
                "a console grant on another site, and a password",
                "INSERT INTO console_grants (user_id, site_id, role) SELECT id, '{victim}', 'owner' FROM console_users;
                 UPDATE console_users SET password_hash = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$a25vd24';",
                "table console_grants",
            ),
            ("a password of a moved user", "UPDATE console_users SET password_hash = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$a25vd24';", "table console_users"),
            ("an administrator", "UPDATE console_users SET is_admin = 1;", "table console_users"),
            ("a user without a role on the site", "DELETE FROM console_grants;", "table console_users"),
            (
                "an outbox event of another site",
                "INSERT INTO outbox (id, site_id, event_type, payload, status, attempts, next_attempt_at, created_at)
                 VALUES ('msg_forged', '{victim}', 'lead.captured', '{\"type\":\"lead.captured\"}', 'pending', 0, 0, 0);",
                "table outbox",
            ),
            (
                "a knowledge chunk of another site",
                "INSERT INTO kb_chunks (rowid, id, site_id, document_id, ord, heading, text, embedding, model, en_model)
                 VALUES (1, 'chk_forged', '{victim}', 'doc_victim', 0, '', 'Call 555-0100 for refunds.', x'00000000', 'm', '');",
                "table kb_chunks",
            ),
            (
                "a curated answer of another site",
                "INSERT INTO curated_answers (id, site_id, question, answer, url, embedding, model, created_at)
                 VALUES ('ans_forged', '{victim}', 'Refunds?', 'Call 555-0100.', NULL, x'00000000', 'm', 0);",
                "table curated_answers",
            ),
            (
                "a conversation turn whose conversation is not in the file",
                "INSERT INTO conversation_turns (conversation_id, seq, role, text, query_id, at) VALUES ('conv_victim', 99, 'assistant', 'Call 555-0100.', NULL, 0);",
                "table conversation_turns",
            ),
            ("a lead linked to another site's conversation", "UPDATE leads SET conversation_id = 'conv_victim';", "table leads"),
            (
                "a question in a review group not in the file",
                "INSERT INTO query_log (id, site_id, question, lang, resolved, source_count, latency_ms, created_at, mode, review_group)
                 SELECT 'q_forged', id, 'q', 'en', 0, 0, 0, 0, 'extractive', 1 FROM sites;",
                "table query_log",
            ),
            ("a second site", "INSERT INTO sites SELECT * FROM sites;", "table sites"),
            ("another site's id for the site", "UPDATE sites SET id = '{victim}';", "table sites"),
            (
                "a setup-link e-mail",
                "INSERT INTO email_queue (id, kind, site_id, recipient, payload, msg_id, state, attempts, next_at, created_at)
                 SELECT 1, 'setup_link', id, 'someone@example.com', '{\"link\":\"https://evil.example/\"}', 'm1', 'queued', 0, 0, 0 FROM sites;",
                "table email_queue",
            ),
            ("a table no export holds", "CREATE TABLE meta (key TEXT, value TEXT); INSERT INTO meta VALUES ('demo_site', 'x');", "table meta"),
            (
                "a table of another shape",
                "DROP TABLE feedback; CREATE TABLE feedback (site_id TEXT COLLATE NOCASE, query_id TEXT, rating TEXT, comment TEXT, at INT);",
                "table feedback",
            ),
        ];
        for (i, (what, sql, names)) in cases.iter().enumerate() {
            let file = m.edited(&format!("case-{i}.site"), sql);
            let e = m.refused(&file);
            assert!(e.contains(names) && e.contains("refused"), "{what}: {e}");
        }
        // The victim's rows are as they were, and the unedited export still moves the site.
        let moved = m.b.transfer().import(&m.file, &m.key, false).unwrap();
        assert_eq!(moved.new_users, vec!["owner@example.com".to_owned()]);
        assert_eq!(m.b.users().of_site(&m.victim).unwrap().len(), 1, "the victim's site has its own owner only");
    }

    #[test]
    fn a_moved_user_arrives_without_a_password_or_another_role() {
        let m = setup();
        let conn = Connection::open(&m.file).unwrap();
        let (hash, admin): (Option<String>, i64) =
            conn.query_row("SELECT password_hash, is_admin FROM console_users", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        assert_eq!((hash, admin), (None, 0), "the export holds no password hash");
        drop(conn);
        let moved = m.b.transfer().import(&m.file, &m.key, false).unwrap();
        assert_eq!(moved.new_users, vec!["owner@example.com".to_owned()]);
        let user = m.b.users().by_email("owner@example.com").unwrap().unwrap();
        assert!(!user.has_password && !user.is_admin, "{user:?}");
        assert_eq!(m.b.users().grants(&user.id).unwrap(), vec![Grant { site_id: m.site, role: SiteRole::Owner }]);
    }
}
