//! Erasure on request, through the real binary on the data directory of a running server:
//! `site delete` leaves no row of the site in any table, no full-text table and no index file, and
//! leaves the other site and the public content as they were; `leads erase` removes a visitor's leads,
//! their pending webhook events and the conversation they came from.

use std::process::Command;

use serde_json::{Value, json};
use sitebot::domain::{SiteId, Tier};

use crate::helpers::{TestApp, new_site, spawn_app, with_webhook};
use crate::knowledge::{BIKES_MD, ask_ok, clinic, import_files};

fn sitebot(app: &TestApp) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sitebot"));
    c.arg("--data-dir").arg(app.data_dir.path());
    for (k, _) in std::env::vars() {
        if k.starts_with("SITEBOT_") {
            c.env_remove(k);
        }
    }
    c
}

fn run(cmd: &mut Command) -> (bool, String, String) {
    let out = cmd.output().expect("run sitebot");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

async fn post(app: &TestApp, site: SiteId, path: &str, body: Value) -> reqwest::Response {
    app.client.post(app.url(path)).header("X-Site-Id", site.to_string()).json(&body).send().await.unwrap()
}

/// Gives a site something in every table a visitor or the operator fills: knowledge, questions in a
/// conversation, a rating, widget events, a lead from that conversation with its pending event.
async fn fill(app: &TestApp, site: SiteId, email: &str) -> String {
    let answer = ask_ok(app, site, "When is the clinic open?").await;
    let conversation = answer["conversationId"].as_str().unwrap().to_owned();
    let token = answer["conversationToken"].as_str().unwrap().to_owned();
    let qid = answer["id"].as_str().unwrap().to_owned();
    assert_eq!(post(app, site, "/v1/feedback", json!({"queryId": qid, "rating": "down", "comment": "too short"})).await.status(), 202);
    let ev = json!({"type": "widget_opened", "sessionId": "s-1", "url": "https://clinic.example/"});
    assert_eq!(post(app, site, "/v1/events", json!({"events": [ev]})).await.status(), 202);
    let lead = app
        .client
        .post(app.url("/v1/leads"))
        .header("X-Site-Id", site.to_string())
        .header("Idempotency-Key", format!("k-{site}-{email}"))
        .header("X-Conversation-Token", token)
        .json(&json!({"email": email, "name": "Ada", "conversationId": conversation}))
        .send()
        .await
        .unwrap();
    assert_eq!(lead.status(), 202);
    conversation
}

/// Rows mentioning `site` in any column of any table, by table (FTS shadow tables included).
fn rows_naming(app: &TestApp, needle: &str) -> Vec<(String, i64)> {
    let db = app.db();
    let tables: Vec<String> = db
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut found = Vec::new();
    for t in tables {
        let cols: Vec<String> =
            db.prepare(&format!("SELECT name FROM pragma_table_info('{t}')")).unwrap().query_map([], |r| r.get(0)).unwrap().collect::<Result<_, _>>().unwrap();
        let cond = cols.iter().map(|c| format!("instr(CAST(\"{c}\" AS TEXT), ?1) > 0")).collect::<Vec<_>>().join(" OR ");
        let n: i64 = db.query_row(&format!("SELECT count(*) FROM \"{t}\" WHERE {cond}"), [needle], |r| r.get(0)).unwrap();
        if n > 0 {
            found.push((t, n));
        }
    }
    found
}

fn table_exists(app: &TestApp, name: &str) -> bool {
    app.count("SELECT count(*) FROM sqlite_schema WHERE name = ?1", [name]) > 0
}

fn index_files(app: &TestApp, site: SiteId) -> usize {
    std::fs::read_dir(app.data_dir.path().join("indexes"))
        .map(|d| d.filter_map(Result::ok).filter(|e| e.file_name().to_string_lossy().starts_with(&site.to_string())).count())
        .unwrap_or(0)
}

#[tokio::test]
async fn site_delete_leaves_nothing_of_the_site_and_the_rest_intact() {
    let app = spawn_app().await;
    let (gone, _) = app.create_site_with(with_webhook(new_site(Tier::Pro), "http://127.0.0.1:9/hook")).await;
    let (kept, _) = app.create_site_with(with_webhook(new_site(Tier::Pro), "http://127.0.0.1:9/hook")).await;
    import_files(&app, gone.id, &clinic()).await;
    import_files(&app, kept.id, &[("bikes.md", BIKES_MD.as_bytes())]).await;
    fill(&app, gone.id, "ada@example.com").await;
    fill(&app, kept.id, "ada@example.com").await;
    let store = app.state.store.clone();
    tokio::task::spawn_blocking(move || sitebot::content::demo::load(&store, sitebot::domain::Currency::parse("EUR").unwrap()).unwrap()).await.unwrap();
    let fts = format!("kb_fts_{}", gone.id.as_uuid().simple());
    assert!(table_exists(&app, &fts));
    assert!(index_files(&app, gone.id) > 0, "the site's vector index was saved");
    let before_kept = rows_naming(&app, &kept.id.to_string());
    let public = app.count("SELECT (SELECT count(*) FROM verticals) + (SELECT count(*) FROM landing_pages) + (SELECT count(*) FROM pricing_tiers)", []);
    assert!(!rows_naming(&app, &gone.id.to_string()).is_empty());

    let (ok, _, err) = run(sitebot(&app).args(["site", "delete", &gone.id.to_string()]));
    assert!(!ok && err.contains("--yes"), "without --yes nothing is deleted: {err}");
    assert!(table_exists(&app, &fts));

    let (ok, out, err) = run(sitebot(&app).args(["site", "delete", &gone.id.to_string(), "--yes", "--json"]));
    assert!(ok, "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    for table in [
        "sites", "kb_documents", "kb_chunks", "query_log", "conversations", "conversation_turns", "feedback", "widget_events", "leads", "outbox", "site_stats",
        "idempotency_keys",
    ] {
        assert!(report["rows"][table].as_u64().unwrap_or(0) > 0, "the report counts {table}: {report}");
    }
    assert_eq!(report["ftsTableDropped"], true);
    assert!(report["indexFiles"].as_u64().unwrap() > 0, "{report}");

    assert_eq!(rows_naming(&app, &gone.id.to_string()), vec![], "no row of any table names the deleted site");
    assert!(!table_exists(&app, &fts), "its full-text table is gone");
    assert_eq!(index_files(&app, gone.id), 0, "its index files are gone");
    assert_eq!(rows_naming(&app, &kept.id.to_string()), before_kept, "the other site is untouched");
    let public_after = app.count("SELECT (SELECT count(*) FROM verticals) + (SELECT count(*) FROM landing_pages) + (SELECT count(*) FROM pricing_tiers)", []);
    assert_eq!(public_after, public, "public vertical content is untouched");

    // The server refuses the deleted site and still answers the other from its knowledge.
    let resp = post(&app, gone.id, "/v1/query", json!({"question": "When is the clinic open?"})).await;
    assert_eq!(resp.status(), 404);
    let bikes = ask_ok(&app, kept.id, "How much is a flat tyre repair?").await;
    assert_eq!(bikes["sources"][0]["url"], "https://bikes.example/repairs", "{bikes}");

    let (ok, _, err) = run(sitebot(&app).args(["site", "delete", &gone.id.to_string(), "--yes"]));
    assert!(!ok && err.contains("no site"), "{err}");

    // What the running server holds of the deleted site in memory goes at its next housekeeping round.
    let held = app.state.knowledge.held_sites();
    assert!(held.contains(&gone.id) && held.contains(&kept.id), "both sites were asked: {held:?}");
    sitebot::server::housekeeping::run_once(&app.state).await;
    let held = app.state.knowledge.held_sites();
    assert!(!held.contains(&gone.id), "the deleted site's indexes are forgotten: {held:?}");
    assert!(held.contains(&kept.id), "the other site's are kept: {held:?}");
    let bikes = ask_ok(&app, kept.id, "How much is a flat tyre repair?").await;
    assert_eq!(bikes["sources"][0]["url"], "https://bikes.example/repairs", "{bikes}");
    assert!(index_files(&app, kept.id) > 0, "the other site's index files are kept");
}

#[tokio::test]
async fn leads_erase_removes_a_visitors_leads_events_and_conversation() {
    let app = spawn_app().await;
    let (a, _) = app.create_site_with(with_webhook(new_site(Tier::Pro), "http://127.0.0.1:9/hook")).await;
    let (b, _) = app.create_site_with(with_webhook(new_site(Tier::Pro), "http://127.0.0.1:9/hook")).await;
    import_files(&app, a.id, &clinic()).await;
    import_files(&app, b.id, &clinic()).await;
    let conv_a = fill(&app, a.id, "Ada@Example.com").await;
    let conv_b = fill(&app, b.id, "ada@example.com").await;
    fill(&app, a.id, "bob@example.com").await;
    assert_eq!(app.count("SELECT count(*) FROM outbox WHERE status = 'pending'", []), 3);

    // One site only: the other site's lead of the same visitor stays.
    let (ok, out, err) = run(sitebot(&app).args(["leads", "erase", "--email", "ADA@example.com", "--site", &a.id.to_string()]));
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "erased 1 lead(s), 1 webhook event(s), 1 conversation(s), 1 question(s), 1 idempotency key(s)");
    assert_eq!(app.count("SELECT count(*) FROM leads WHERE lower(email) = 'ada@example.com'", []), 1);
    assert_eq!(app.count("SELECT count(*) FROM conversations WHERE id = ?1", [&conv_a]), 0);
    assert_eq!(app.count("SELECT count(*) FROM conversation_turns WHERE conversation_id = ?1", [&conv_a]), 0);
    assert_eq!(app.count("SELECT count(*) FROM query_log WHERE conversation_id = ?1", [&conv_a]), 0);
    assert_eq!(app.count("SELECT count(*) FROM outbox WHERE instr(payload, 'Ada@Example.com') > 0", []), 0);
    assert_eq!(app.count("SELECT count(*) FROM leads WHERE email = 'bob@example.com'", []), 1, "another visitor keeps their lead");
    assert_eq!(app.count("SELECT count(*) FROM outbox WHERE status = 'pending'", []), 2);

    // Every site.
    let (ok, out, err) = run(sitebot(&app).args(["leads", "erase", "--email", "ada@example.com", "--json"]));
    assert!(ok, "{err}");
    let erased: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(erased["leads"], 1, "{erased}");
    assert_eq!(erased["events"], 1);
    assert_eq!(app.count("SELECT count(*) FROM conversations WHERE id = ?1", [&conv_b]), 0);
    assert_eq!(rows_naming(&app, "ada@example.com").len() + rows_naming(&app, "Ada@Example.com").len(), 0, "the address is nowhere");
    assert_eq!(app.count("SELECT count(*) FROM leads", []), 1);

    let (ok, out, _) = run(sitebot(&app).args(["leads", "erase", "--email", "nobody@example.com"]));
    assert!(ok);
    assert!(out.starts_with("erased 0 lead(s)"), "{out}");
}

/// `sitebot site export SITE --to DATA_DIR/NAME`: the file and the export key it printed.
fn export(app: &TestApp, site: SiteId, name: &str) -> (std::path::PathBuf, String) {
    let file = app.data_dir.path().join(name);
    let (ok, out, err) = run(sitebot(app).args(["site", "export", &site.to_string(), "--json", "--to"]).arg(&file));
    assert!(ok, "{err}");
    let key = serde_json::from_str::<Value>(&out).unwrap()["exportKey"].as_str().unwrap().to_owned();
    (file, key)
}

/// A site deleted by the CLI while the server runs and imported again from its export (a tenant moved away
/// and back, or a deletion undone) is answered from the imported knowledge at once: the server's indexes of
/// the deleted site, held in memory, are never taken for the new one's, though the export keeps its
/// generation and the import numbers its chunks anew. The same for an import over the site (`--replace`).
#[tokio::test]
async fn a_site_deleted_and_imported_again_is_answered_from_its_imported_knowledge() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;
    let before = ask_ok(&app, site.id, "Is there parking at the clinic?").await;
    assert_eq!(before["resolved"], true, "{before}");
    let cited = before["sources"][0]["url"].clone();
    assert!(cited.is_string(), "{before}");

    let (file, key) = export(&app, site.id, "moved.site");
    let (ok, _, err) = run(sitebot(&app).args(["site", "delete", &site.id.to_string(), "--yes"]));
    assert!(ok, "{err}");
    let (ok, _, err) = run(sitebot(&app).args(["site", "import", "--key", &key]).arg(&file));
    assert!(ok, "{err}");
    let back = ask_ok(&app, site.id, "Is there parking at the clinic?").await;
    assert_eq!(back["resolved"], true, "answered again after the site came back: {back}");
    assert_eq!(back["sources"][0]["url"], cited, "{back}");

    let (file, key) = export(&app, site.id, "again.site");
    let (ok, _, err) = run(sitebot(&app).args(["site", "unfreeze", &site.id.to_string()]));
    assert!(ok, "{err}");
    let (ok, _, err) = run(sitebot(&app).args(["site", "import", "--replace", "--key", &key]).arg(&file));
    assert!(ok, "{err}");
    let replaced = ask_ok(&app, site.id, "Is there parking at the clinic?").await;
    assert_eq!(replaced["resolved"], true, "answered after an import over the site: {replaced}");
    assert_eq!(replaced["sources"][0]["url"], cited, "{replaced}");
}
