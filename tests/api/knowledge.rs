//! Knowledge import through the real pipeline (parsers, chunker, the real MiniLM model, SQLite, the
//! usearch index), observed through the API: idempotent re-imports, replaced documents, bad files
//! skipped with a reason, CLI imports seen by a running server (the index synced in the
//! background meanwhile), the index file reloaded on restart.

use serde_json::{Value, json};
use sitebot::domain::{SiteId, Tier};
use sitebot::knowledge::import::{self, ImportReport};

use crate::helpers::{TestApp, spawn_app, spawn_app_in, test_config};

pub const HOURS_MD: &str = "---\ntitle: Opening hours\nurl: https://clinic.example/hours\n---\n# Opening hours\n\n\
The clinic is open Monday to Friday from 8:00 to 18:00. On Saturdays we are open from 9:00 to 13:00.\n\n\
## Holidays\n\nWe are closed on Sundays and public holidays.\n";
pub const PRICES_MD: &str = "---\ntitle: Prices\nurl: https://clinic.example/prices\n---\n# Prices\n\n\
A routine check-up costs 60 euros.\n\n## Whitening\n\nIn-office teeth whitening costs 350 euros per session. \
A take-home whitening kit costs 250 euros.\n";
pub const PARKING_HTML: &str = "<html><head><title>Getting here</title><link rel=\"canonical\" href=\"https://clinic.example/directions\">\
<script>var tracking = 'parking lot';</script></head><body><nav>Home Prices Contact</nav><h1>Getting here</h1>\
<p>Free parking for patients is available in the courtyard behind the building.</p></body></html>";
pub const FAQ_CSV: &str =
    "question,answer,url\n\"Do you treat children?\",\"Yes, children are welcome from their first tooth.\",https://clinic.example/faq#children\n";

/// A different site's knowledge: a bicycle shop.
pub const BIKES_MD: &str = "---\ntitle: Bike repairs\nurl: https://bikes.example/repairs\n---\n# Bike repairs\n\n\
A flat tyre repair costs 15 euros and takes about twenty minutes. We service e-bikes of every brand.\n";

/// Writes `files` into a fresh directory and imports it into `site` through the real pipeline.
pub async fn import_files(app: &TestApp, site: SiteId, files: &[(&str, &[u8])]) -> (ImportReport, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in files {
        std::fs::write(dir.path().join(name), body).unwrap();
    }
    let report = import_dir(app, site, dir.path()).await;
    (report, dir)
}

pub async fn import_dir(app: &TestApp, site: SiteId, dir: &std::path::Path) -> ImportReport {
    let (state, dir) = (app.state.clone(), dir.to_owned());
    tokio::task::spawn_blocking(move || {
        let mut failed = Vec::new();
        let inputs = import::read_paths(&[dir], &mut failed);
        let mut report = sitebot::cli::knowledge::import_inputs(&state.store, &state.knowledge, &site, &inputs, false, false).unwrap();
        report.failed.extend(failed);
        report
    })
    .await
    .unwrap()
}

/// The clinic corpus used by the query and stream tests.
pub fn clinic() -> Vec<(&'static str, &'static [u8])> {
    vec![("hours.md", HOURS_MD.as_bytes()), ("prices.md", PRICES_MD.as_bytes()), ("directions.html", PARKING_HTML.as_bytes()), ("faq.csv", FAQ_CSV.as_bytes())]
}

pub async fn ask(app: &TestApp, site: SiteId, body: Value) -> reqwest::Response {
    app.client.post(app.url("/v1/query")).header("X-Site-Id", site.to_string()).json(&body).send().await.unwrap()
}

/// `ask` with a conversation's token, as a question that continues it needs.
pub async fn ask_as(app: &TestApp, site: SiteId, body: Value, token: &str) -> reqwest::Response {
    app.client.post(app.url("/v1/query")).header("X-Site-Id", site.to_string()).header("X-Conversation-Token", token).json(&body).send().await.unwrap()
}

pub async fn ask_ok(app: &TestApp, site: SiteId, question: &str) -> Value {
    let resp = ask(app, site, json!({"question": question})).await;
    assert_eq!(resp.status(), 200);
    resp.json().await.unwrap()
}

fn chunk_count(app: &TestApp, site: SiteId) -> i64 {
    app.count("SELECT count(*) FROM kb_chunks WHERE site_id = ?1", [site.to_string()])
}

#[tokio::test]
async fn reimport_skips_unchanged_documents_and_replaces_changed_ones() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in clinic() {
        std::fs::write(dir.path().join(name), body).unwrap();
    }
    let first = import_dir(&app, site.id, dir.path()).await;
    assert_eq!((first.documents, first.skipped, first.failed.len()), (4, 0, 0), "{first:?}");
    let chunks = chunk_count(&app, site.id);
    assert_eq!(chunks as usize, first.chunks);

    let again = import_dir(&app, site.id, dir.path()).await;
    assert_eq!((again.documents, again.chunks, again.skipped), (0, 0, 4), "{again:?}");
    assert_eq!(chunk_count(&app, site.id), chunks, "nothing duplicated");

    // A changed price replaces the old chunks: the old figure is no longer cited.
    std::fs::write(dir.path().join("prices.md"), PRICES_MD.replace("350 euros", "390 euros")).unwrap();
    let changed = import_dir(&app, site.id, dir.path()).await;
    assert_eq!((changed.documents, changed.skipped), (1, 3), "{changed:?}");
    assert_eq!(chunk_count(&app, site.id), chunks);
    let a = ask_ok(&app, site.id, "How much does in-office whitening cost?").await;
    assert!(a["answer"].as_str().unwrap().contains("390 euros"), "{a}");
    assert!(!a.to_string().contains("350 euros"), "{a}");

    // A FAQ row removed from the file removes its document.
    std::fs::write(dir.path().join("faq.csv"), "question,answer\n\"Is there parking?\",\"Yes, in the courtyard.\"\n").unwrap();
    let faq = import_dir(&app, site.id, dir.path()).await;
    assert_eq!((faq.documents, faq.deleted), (1, 1), "{faq:?}");
}

#[tokio::test]
async fn a_corrupt_pdf_is_skipped_with_a_reason_and_the_rest_imported() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let files: Vec<(&str, &[u8])> =
        vec![("broken.pdf", b"%PDF-1.7\n1 0 obj garbage"), ("prices.md", PRICES_MD.as_bytes()), ("notes.txt", b"\xff\xfe not utf8")];
    let (report, _dir) = import_files(&app, site.id, &files).await;
    assert_eq!(report.documents, 1, "{report:?}");
    let reasons: Vec<(String, String)> = report.failed.iter().map(|f| (f.path.clone(), f.reason.clone())).collect();
    assert!(reasons.iter().any(|(p, r)| p.ends_with("broken.pdf") && r.contains("PDF")), "{reasons:?}");
    assert!(reasons.iter().any(|(p, r)| p.ends_with("notes.txt") && r.contains("UTF-8")), "{reasons:?}");
    let docs = app.state.store.site(site.id).knowledge().list_documents().unwrap();
    assert_eq!(docs.len(), 1);
    assert_eq!(docs[0].title, "Prices");
}

#[tokio::test]
async fn html_is_imported_as_text_with_its_canonical_url_and_without_scripts() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;
    let a = ask_ok(&app, site.id, "Where can I park my car?").await;
    assert_eq!(a["resolved"], true, "{a}");
    assert_eq!(a["sources"][0]["url"], "https://clinic.example/directions");
    assert!(a["answer"].as_str().unwrap().contains("courtyard"), "{a}");
    assert!(!a.to_string().contains("tracking"), "script text must not be imported: {a}");
    assert!(!a.to_string().contains("Home Prices Contact"), "navigation must not be imported: {a}");
}

#[tokio::test]
async fn an_import_by_the_cli_becomes_visible_to_a_running_server() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let before = ask_ok(&app, site.id, "How much is a flat tyre repair?").await;
    assert_eq!(before["resolved"], false, "{before}");

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bikes.md"), BIKES_MD).unwrap();
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_sitebot"))
        .args(["--data-dir", app.data_dir.path().to_str().unwrap(), "knowledge", "import", "--json", "--site", &site.id.to_string()])
        .arg(dir.path())
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["documents"], 1, "{summary}");
    assert_eq!(summary["failed"], json!([]));

    // The next question starts syncing the server's vector index in the background; once it is swapped
    // in, the new page is found by both halves of retrieval.
    ask_ok(&app, site.id, "How much is a flat tyre repair?").await;
    wait_for_background_sync(&app, site.id).await;
    let after = ask_ok(&app, site.id, "How much is a flat tyre repair?").await;
    assert_eq!(after["resolved"], true, "{after}");
    assert_eq!(after["sources"][0]["url"], "https://bikes.example/repairs");
    assert!(after["answer"].as_str().unwrap().contains("15 euros"), "{after}");
}

#[tokio::test]
async fn the_vector_index_is_persisted_and_serves_after_a_restart() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;
    let before = ask_ok(&app, site.id, "How much does whitening cost?").await;
    let index_file = app.data_dir.path().join("indexes").join(format!("{}.usearch", site.id));
    assert!(index_file.is_file(), "index saved beside the database");

    let dir = app.stop().await;
    // A stale or missing file is rebuilt from SQLite: remove it to prove it.
    std::fs::remove_file(dir.path().join("indexes").join(format!("{}.usearch", site.id))).unwrap();
    let app = spawn_app_in(test_config(), dir).await;
    let after = ask_ok(&app, site.id, "How much does whitening cost?").await;
    assert_eq!(after["answer"], before["answer"]);
    assert_eq!(after["sources"][0]["id"], before["sources"][0]["id"]);
    assert!(app.data_dir.path().join("indexes").join(format!("{}.usearch", site.id)).is_file(), "rebuilt and saved again");
}

#[tokio::test]
async fn a_corrupted_index_file_is_not_loaded_but_rebuilt() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;
    let before = ask_ok(&app, site.id, "How much does whitening cost?").await;
    let dir = app.stop().await;
    let file = dir.path().join("indexes").join(format!("{}.usearch", site.id));
    let gen_file = dir.path().join("indexes").join(format!("{}.usearch.gen", site.id));
    let recorded = std::fs::read_to_string(&gen_file).unwrap();
    let fields: Vec<&str> = recorded.split_whitespace().collect();
    assert_eq!(fields.len(), 5, "generation, model, size, checksum and format: {recorded}");
    assert_eq!(fields[4], "bf16", "vectors are held as bfloat16");
    // One flipped byte near the end (in the vectors): same size, other checksum.
    let mut bytes = std::fs::read(&file).unwrap();
    assert_eq!(fields[2], bytes.len().to_string());
    let at = bytes.len() - 7;
    bytes[at] ^= 0x5a;
    std::fs::write(&file, &bytes).unwrap();

    let app = spawn_app_in(test_config(), dir).await;
    let after = ask_ok(&app, site.id, "How much does whitening cost?").await;
    assert_eq!(after["answer"], before["answer"]);
    assert_eq!(after["sources"][0]["id"], before["sources"][0]["id"]);
    let rebuilt = std::fs::read(&file).unwrap();
    assert_ne!(rebuilt, bytes, "the corrupted file was replaced by a rebuilt one");
    let recorded = std::fs::read_to_string(&gen_file).unwrap();
    use sha2::Digest;
    assert_eq!(recorded.split_whitespace().nth(3), Some(hex::encode(sha2::Sha256::digest(&rebuilt)).as_str()), "{recorded}");

    // A file an earlier build saved (f32 vectors, four fields) is not loaded but rebuilt in this format.
    let dir = app.stop().await;
    let fields: Vec<&str> = recorded.split_whitespace().collect();
    std::fs::write(&gen_file, fields[..4].join(" ")).unwrap();
    let app = spawn_app_in(test_config(), dir).await;
    let again = ask_ok(&app, site.id, "How much does whitening cost?").await;
    assert_eq!(again["sources"][0]["id"], before["sources"][0]["id"]);
    let recorded = std::fs::read_to_string(&gen_file).unwrap();
    assert!(recorded.ends_with(" bf16"), "saved again with its format: {recorded}");
}

/// Runs the binary with a config file naming `knowledge` paths that do not hold what they should.
async fn run_with_knowledge(section: &str, args: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("sitebot.toml");
    std::fs::write(&config, format!("[knowledge]\n{section}\n")).unwrap();
    tokio::process::Command::new(env!("CARGO_BIN_EXE_sitebot"))
        .arg("--config")
        .arg(&config)
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .args(args)
        .output()
        .await
        .unwrap()
}

#[tokio::test]
async fn serve_refuses_to_start_without_the_runtime_and_says_how_to_fix_it() {
    let out = run_with_knowledge("ort_library = \"/nonexistent/libonnxruntime.so.1.31.1\"", &["serve", "--listen", "127.0.0.1:0"]).await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr.lines().find(|l| l.starts_with("error:")).unwrap_or_else(|| panic!("no error line in {stderr}"));
    assert!(line.contains("ONNX Runtime library not found") && line.contains("install.sh --deps-only"), "{line}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("listening on"));

    let doctor = run_with_knowledge("ort_library = \"/nonexistent/libonnxruntime.so.1.31.1\"", &["doctor"]).await;
    assert!(!doctor.status.success());
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert!(report.lines().any(|l| l.starts_with("FAIL  ONNX Runtime")), "{report}");
    assert!(report.lines().any(|l| l.starts_with("ok    database")), "{report}");
}

#[tokio::test]
async fn serve_refuses_a_corrupt_model_and_doctor_passes_on_a_good_setup() {
    let models = tempfile::tempdir().unwrap();
    for f in sitebot::knowledge::embedding::runtime::MODEL_FILES {
        std::fs::write(models.path().join(f), b"not a model").unwrap();
    }
    let section = format!("model_dir = {:?}", models.path().to_str().unwrap());
    let out = run_with_knowledge(&section, &["serve", "--listen", "127.0.0.1:0"]).await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot be loaded") && stderr.contains("install.sh --deps-only"), "{stderr}");

    let good = run_with_knowledge("", &["doctor"]).await;
    let report = String::from_utf8_lossy(&good.stdout);
    assert!(good.status.success(), "{report}");
    assert!(report.lines().any(|l| l.starts_with("ok    embedding model") && l.contains("embeds a sentence")), "{report}");
}

/// What another process's import leaves: many chunks of the loaded model, and a page on a topic the site
/// had no word for, written to the database without touching this server's vector index.
async fn import_elsewhere(app: &TestApp, site: SiteId, chunks: usize) {
    use sitebot::store::knowledge::{NewChunk, NewDocument};
    let (store, knowledge) = (app.state.store.clone(), app.state.knowledge.clone());
    tokio::task::spawn_blocking(move || {
        let model = knowledge.embedder.fingerprint.clone();
        // Pseudo-random directions (xorshift), far from any question and from each other.
        let vector = |i: usize| {
            let mut x = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let v: Vec<f32> = (0..384)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x >> 40) as f32 / (1u64 << 24) as f32 - 0.5
                })
                .collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.into_iter().map(|x| x / norm).collect::<Vec<f32>>()
        };
        let doc = NewDocument {
            source: "archive.jsonl".into(),
            title: "Archive".into(),
            url: None,
            format: "jsonl".into(),
            content_hash: "archive".into(),
            model,
            english_model: String::new(),
            lang: None,
            chunks: (0..chunks)
                .map(|i| NewChunk {
                    heading: "Archive".into(),
                    text: format!("Archived note number {i}."),
                    embedding: vector(i),
                    english: None,
                    index_heading: sitebot::knowledge::search::analysis::index_text("en", "Archive"),
                    index_text: sitebot::knowledge::search::analysis::index_text("en", &format!("Archived note number {i}.")),
                })
                .collect(),
        };
        store.site(site).knowledge().replace_document(&doc).unwrap();
        let input = sitebot::knowledge::import::Input {
            name: "languages.md".into(),
            format: sitebot::knowledge::import::Format::Markdown,
            bytes: b"# Languages\n\nOur dentists speak Japanese and Korean with their patients.\n".to_vec(),
        };
        sitebot::knowledge::import::import(&store, knowledge.models(), &site, &[input], false, &|_, _| {}).unwrap();
    })
    .await
    .unwrap();
}

async fn wait_for_background_sync(app: &TestApp, site: SiteId) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(180);
    while app.state.knowledge.vectors.syncing_in_background(&site) {
        assert!(std::time::Instant::now() < deadline, "the background sync did not end in 180 s");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

fn cites(answer: &Value, title: &str) -> bool {
    answer["sources"].as_array().unwrap().iter().any(|s| s["title"] == title)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_behind_the_database_is_synced_in_the_background_while_questions_are_answered() {
    // Without dictionaries: the German question's words would otherwise meet the new page in English.
    let empty = tempfile::tempdir().unwrap();
    let mut config = crate::helpers::test_config();
    config.knowledge.dictionaries_dir = Some(empty.path().to_owned());
    let app = crate::helpers::spawn_app_with(config).await;
    let (site, _) = app.create_site(Tier::Enterprise).await;
    import_files(&app, site.id, &clinic()).await;
    ask_ok(&app, site.id, "When are you open on Saturday?").await;
    import_elsewhere(&app, site.id, 20_000).await;
    // No word in common with the new page (untranslated): only the dense side can find it.
    let ask = || ask(&app, site.id, json!({"question": "Sprechen Ihre Zahnärzte Japanisch?", "scoreThreshold": 0.0, "topK": 3}));
    let resp = ask().await;
    assert_eq!(resp.status(), 200);
    assert!(app.state.knowledge.vectors.syncing_in_background(&site.id), "the answer came while the index of 20,000 new chunks was still being built");
    let during: Value = resp.json().await.unwrap();
    assert!(!cites(&during, "Languages"), "answered from the index as it was: {during}");
    wait_for_background_sync(&app, site.id).await;
    let after: Value = ask().await.json().await.unwrap();
    assert!(cites(&after, "Languages"), "the swapped-in index finds the new page: {after}");
}

/// `sitebot knowledge <args>` against the running server's data directory, as an operator runs it.
async fn cli_knowledge(app: &TestApp, args: &[&str]) -> String {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_sitebot"))
        .args(["--data-dir", app.data_dir.path().to_str().unwrap(), "knowledge"])
        .args(args)
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "sitebot knowledge {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The offer page in version `v`. It shares no word with the question below, so only the dense half
/// of retrieval finds it: the half whose index is behind the database right after an import.
fn offer(v: usize) -> String {
    format!(
        "---\ntitle: Winter offer\nurl: https://clinic.example/offer\n---\n# Winter offer\n\n\
         Book a dental cleaning before March and pay 10 % less with the code FROST-{v}{v}{v}. Version {v} of this page.\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_replaced_while_questions_come_is_found_in_one_version_or_the_other_and_deleted_at_once() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Enterprise).await;
    import_files(&app, site.id, &clinic()).await;
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("offer.md");
    std::fs::write(&page, offer(1)).unwrap();
    let id = site.id.to_string();
    cli_knowledge(&app, &["import", "--site", &id, page.to_str().unwrap()]).await;
    let question = json!({"question": "Gibt es im Moment einen Gutschein?", "topK": 3, "scoreThreshold": 0.0});
    let first: Value = ask(&app, site.id, question.clone()).await.json().await.unwrap();
    wait_for_background_sync(&app, site.id).await;
    let steady: Value = ask(&app, site.id, question.clone()).await.json().await.unwrap();
    assert!(cites(&first, "Winter offer") && cites(&steady, "Winter offer"), "found before any replacement: {first} {steady}");

    // A visitor asks every 100 ms while the operator replaces the page three times from the CLI.
    let done = Arc::new(AtomicBool::new(false));
    let asker = {
        let (client, url, done, question) = (app.client.clone(), app.url("/v1/query"), done.clone(), question.clone());
        tokio::spawn(async move {
            let mut answers = Vec::new();
            while !done.load(Ordering::SeqCst) {
                let resp = client.post(&url).header("X-Site-Id", id.clone()).json(&question).send().await.unwrap();
                assert_eq!(resp.status(), 200);
                answers.push(resp.json::<Value>().await.unwrap());
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            answers
        })
    };
    for v in 2..=4 {
        std::fs::write(&page, offer(v)).unwrap();
        cli_knowledge(&app, &["import", "--site", &site.id.to_string(), page.to_str().unwrap()]).await;
        tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    }
    done.store(true, Ordering::SeqCst);
    let answers = asker.await.unwrap();
    let missed: Vec<&Value> = answers.iter().filter(|a| !cites(a, "Winter offer")).collect();
    println!("asked {} times while the page was replaced 3 times; missed {}", answers.len(), missed.len());
    assert!(answers.len() >= 10, "asked only {} times", answers.len());
    assert!(missed.is_empty(), "the page was found in neither version: {missed:?}");
    let last: Value = ask(&app, site.id, question.clone()).await.json().await.unwrap();
    assert!(last.to_string().contains("FROST-444"), "the newest version answers: {last}");

    // Deleted from the CLI: the very next question no longer finds it, before any sync.
    cli_knowledge(&app, &["delete", "--site", &site.id.to_string(), page.to_str().unwrap()]).await;
    let gone: Value = ask(&app, site.id, question).await.json().await.unwrap();
    assert!(!cites(&gone, "Winter offer") && !gone.to_string().contains("FROST"), "gone at once: {gone}");
}
