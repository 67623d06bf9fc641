//! Retrieval quality on held-out sets, through the server's own path, beside the shipped model alone.
//!
//! The sets are questions written natively in eight languages and one cross-lingual set, cut from public
//! data sets that no part of the pipeline was fitted on (`benches/heldout/README.md`); run
//! `python3 benches/heldout/prepare.py` once to write them to `HELDOUT_DIR` (default /work/heldout).
//!
//! For each set and language: a fresh data directory, `sitebot site create` in the passages' language,
//! `sitebot knowledge import` of `passages.jsonl` (one document a passage), `sitebot serve` on loopback
//! with the default configuration, and every question through `POST /v1/query` twice: with
//! `scoreThreshold: 0`, for the ranking (the right passage first, P@1, or among the first five documents,
//! R@5), and without one, for `resolved` at the operator's default threshold (`knowledge.min_score`).
//! Sets whose passages are the same (the cross-lingual questions on `mlqa/en`'s passages) share one import
//! and one server. Questions are asked once the server has built the site's BM25 index and, where
//! questions in another language than English knowledge meet it, embedded the site's English terms
//! (both read from its log), so every question meets the pipeline as a site's later visitors do.
//!
//! Beside it, the shipped model alone: the same multilingual-e5-small file through the library's
//! `Embedder` in this process, each passage embedded whole as the import embeds a chunk (`passage: `,
//! its title, then its text; cut at the model's 512 pieces) and each question as the server embeds one
//! (`query: `), ranked by cosine and nothing else.
//!
//! The model's passage vectors are kept beside each `passages.jsonl` (`passages.KEY.vectors`, keyed by the
//! model's fingerprint and the inputs), so only the first run embeds them.
//!
//! Run: `cargo bench --bench quality` (every set: the first run took 27-32 minutes on 2 cores busy with
//! other builds, later runs skip the model's passages), or with filters, each a set, a language or `set/lang`:
//! `cargo bench --bench quality -- korquad mlqa-xl/de`. `HELDOUT_DIR` names the sets' directory;
//! `QUALITY_DUMP=FILE` writes one JSON line a question (its text, the right passage, each side's first).

#[path = "../tests/common/mod.rs"]
mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use sitebot::config::KnowledgeConfig;
use sitebot::knowledge::embedding::model::Purpose;
use sitebot::knowledge::embedding::{DIMENSIONS, Embedder};
use sitebot::knowledge::import::chunk::embedding_input;
use sitebot::knowledge::search::TRANSLATED_LANGUAGES;
use sitebot::knowledge::text::squash;

/// Requests in flight at once: one per core of the machine the figures were taken on.
const CONCURRENCY: usize = 2;
/// How long the server may take to build a site's BM25 index, or embed its English terms, after start.
const READY_WITHIN: Duration = Duration::from_secs(600);

struct Passage {
    id: String,
    title: String,
    text: String,
}

struct Question {
    text: String,
    passage: String,
}

/// One set and language of the manifest.
struct Member {
    name: String,
    role: String,
    knowledge_lang: String,
    passages_file: PathBuf,
    questions: Vec<Question>,
}

/// What one member's questions scored on each side.
#[derive(Default)]
struct Scores {
    first: usize,
    top5: usize,
    answered: usize,
    answered_right: usize,
    model_first: usize,
    model_top5: usize,
}

fn read_jsonl(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}; run benches/heldout/prepare.py first", path.display()));
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).expect("a JSON line")).collect()
}

fn members(dir: &Path, filters: &[String]) -> Vec<Member> {
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("manifest.json")).unwrap_or_else(|e| panic!("{}/manifest.json: {e}; run benches/heldout/prepare.py", dir.display())),
    )
    .expect("manifest.json");
    let wanted = |set: &str, lang: &str| filters.is_empty() || filters.iter().any(|f| f == set || f == lang || *f == format!("{set}/{lang}"));
    let field = |s: &Value, k: &str| s[k].as_str().unwrap_or_default().to_owned();
    manifest["sets"]
        .as_array()
        .expect("manifest sets")
        .iter()
        .filter(|s| wanted(s["set"].as_str().unwrap_or_default(), s["lang"].as_str().unwrap_or_default()))
        .map(|s| {
            let home = dir.join(field(s, "set")).join(field(s, "lang"));
            let questions = read_jsonl(&home.join("questions.jsonl"))
                .iter()
                .map(|q| Question { text: q["question"].as_str().expect("question").to_owned(), passage: q["passage"].as_str().expect("passage").to_owned() })
                .collect();
            Member {
                name: format!("{}/{}", field(s, "set"), field(s, "lang")),
                role: field(s, "role"),
                knowledge_lang: field(s, "passages_lang"),
                passages_file: home.join("passages.jsonl"),
                questions,
            }
        })
        .collect()
}

fn passages(file: &Path) -> Vec<Passage> {
    read_jsonl(file)
        .iter()
        .map(|p| {
            let id = p["_id"].as_str().expect("_id").to_owned();
            // A record without a title is titled by its id, as the import does (`import::records`).
            let title = p["title"].as_str().map(squash).filter(|t| !t.is_empty()).unwrap_or_else(|| id.clone());
            Passage { title, text: squash(p["text"].as_str().expect("text")), id }
        })
        .collect()
}

/// A passage's id from the URL the import stored for it (`https://heldout.example/SET/LANG/ID`).
fn passage_of(url: &str) -> &str {
    url.rsplit('/').next().unwrap_or_default()
}

/// The passages' vectors by the shipped model, from a file beside `passages.jsonl` when one was made by
/// this model of these very inputs (the passages take as long to embed as the import; the model rarely
/// changes), else embedded and saved there: little-endian f32, `DIMENSIONS` a passage.
fn passage_vectors(embedder: &Embedder, passages: &[Passage], file: &Path) -> Vec<Vec<f32>> {
    let inputs: Vec<String> = passages.iter().map(|p| embedding_input(&p.title, &p.text)).collect();
    let mut key = Sha256::new();
    key.update(embedder.fingerprint.as_bytes());
    inputs.iter().for_each(|i| key.update([i.as_bytes(), b"\0"].concat()));
    let saved = file.with_file_name(format!("passages.{}.vectors", &hex::encode(key.finalize())[..16]));
    if let Ok(bytes) = std::fs::read(&saved)
        && bytes.len() == inputs.len() * DIMENSIONS * 4
    {
        let floats: Vec<f32> = bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        return floats.chunks_exact(DIMENSIONS).map(<[f32]>::to_vec).collect();
    }
    let vectors = embedder.embed_parallel_blocking(&inputs, Purpose::Passage).expect("embed passages");
    let bytes: Vec<u8> = vectors.iter().flatten().flat_map(|x| x.to_le_bytes()).collect();
    if let Err(e) = std::fs::write(&saved, bytes) {
        println!("  (cannot keep the model's passage vectors in {}: {e})", saved.display());
    }
    vectors
}

/// The first five passages of each question by cosine with the shipped model alone.
fn model_alone(embedder: &Embedder, passages: &[Passage], pv: &[Vec<f32>], questions: &[String]) -> Vec<Vec<(String, f32)>> {
    let qv = embedder.embed_parallel_blocking(questions, Purpose::Query).expect("embed questions");
    qv.iter()
        .map(|q| {
            let mut cos: Vec<(usize, f32)> = pv.iter().enumerate().map(|(i, p)| (i, p.iter().zip(q).map(|(a, b)| a * b).sum())).collect();
            cos.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            cos.iter().take(5).map(|&(i, c)| (passages[i].id.clone(), c)).collect()
        })
        .collect()
}

/// Creates a site in `lang` on a fresh data directory and imports `file` with the CLI; returns its id.
fn import(dir: &Path, lang: &str, file: &Path) -> String {
    let created = common::run_ok(
        common::sitebot(dir)
            .args(["site", "create", "--name", "Held-out", "--vertical", "science", "--tier", "enterprise", "--currency", "EUR", "--lang", lang, "--json"]),
    );
    let site = serde_json::from_str::<Value>(&created).expect("site create JSON")["siteId"].as_str().expect("siteId").to_owned();
    let started = Instant::now();
    let out = common::run_ok(common::sitebot(dir).args(["knowledge", "import", "--json", "--site", &site]).arg(file));
    let report: Value = serde_json::from_str(&out).expect("import JSON");
    println!("  import: {} documents, {} chunks in {:.0} s", report["documents"], report["chunks"], started.elapsed().as_secs_f64());
    site
}

/// `sitebot serve` on a free loopback port with the default configuration, its log at info read for the
/// lines that say background work is done; one address is every visitor (`limits.visitor_share` 1), so
/// the run is not turned away with 429.
fn serve(dir: &Path) -> (common::Server, Receiver<String>) {
    let mut child = common::sitebot(dir)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("SITEBOT_LIMITS__VISITOR_SHARE", "1")
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn serve");
    let (tx, rx) = channel();
    let stderr = child.stderr.take().expect("stderr");
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if (line.contains("BM25 index built") || line.contains("English terms embedded")) && tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("first line");
    let port = line.trim().strip_prefix("listening on https://127.0.0.1:").unwrap_or_else(|| panic!("unexpected first line: {line:?}")).parse().expect("port");
    (common::Server { child, port }, rx)
}

/// Waits for a log line holding `marker`; says so when it does not come.
fn wait_for(log: &Receiver<String>, marker: &str) {
    let deadline = Instant::now() + READY_WITHIN;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match log.recv_timeout(left) {
            Ok(line) if line.contains(marker) => return,
            Ok(_) => continue,
            Err(_) => break,
        }
    }
    println!("  (no \"{marker}\" in the server's log within {} s: measured without it)", READY_WITHIN.as_secs());
}

fn ask(client: &reqwest::blocking::Client, url: &str, site: &str, body: Value) -> Value {
    let resp = client.post(url).header("X-Site-Id", site).json(&body).send().expect("POST /v1/query");
    assert_eq!(resp.status(), 200, "POST /v1/query {body}");
    resp.json().expect("query JSON")
}

/// What the route gave one question.
struct Asked {
    /// The documents ranked with `scoreThreshold: 0` (passage id, score), best first.
    docs: Vec<(String, f64)>,
    /// Answered (`resolved`) at the default threshold.
    resolved: bool,
}

/// Asks every question of `member` twice (see the header), `CONCURRENCY` at a time; returns what the
/// route gave each, in the questions' order.
fn through_route(client: &reqwest::blocking::Client, port: u16, site: &str, member: &Member) -> Vec<Asked> {
    let url = format!("https://127.0.0.1:{port}/v1/query");
    let next = AtomicUsize::new(0);
    let done: Vec<Vec<(usize, Asked)>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..CONCURRENCY)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(q) = member.questions.get(i) else { return mine };
                        let ranked = ask(client, &url, site, json!({"question": q.text, "topK": 5, "scoreThreshold": 0}));
                        let default = ask(client, &url, site, json!({"question": q.text, "topK": 5}));
                        let docs = ranked["sources"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|s| (passage_of(s["url"].as_str().unwrap_or_default()).to_owned(), s["score"].as_f64().unwrap_or(0.0)))
                            .collect();
                        mine.push((i, Asked { docs, resolved: default["resolved"] == true }));
                    }
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("asking thread")).collect()
    });
    let mut all: Vec<(usize, Asked)> = done.into_iter().flatten().collect();
    all.sort_by_key(|(i, _)| *i);
    assert_eq!(all.len(), member.questions.len(), "every question asked");
    all.into_iter().map(|(_, a)| a).collect()
}

fn main() {
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-') && a != "quality").collect();
    let heldout = PathBuf::from(std::env::var("HELDOUT_DIR").unwrap_or_else(|_| "/work/heldout".into()));
    let all = members(&heldout, &filters);
    if all.is_empty() {
        // `cargo bench NAME` passes NAME to every bench: one that names none of these sets is another's.
        return;
    }
    let started = Instant::now();
    let embedder = Embedder::load(&KnowledgeConfig::default()).expect("the shipped model (./install.sh --deps-only)");
    println!("model: {}", embedder.fingerprint);
    let mut dump = Vec::new();
    let mut rows: Vec<(&Member, usize, Scores)> = Vec::new();
    // Members whose passages are the same file's bytes share one import and one server.
    let mut groups: Vec<(Vec<u8>, Vec<&Member>)> = Vec::new();
    for m in &all {
        let bytes = std::fs::read(&m.passages_file).expect("passages.jsonl");
        match groups.iter_mut().find(|(b, _)| *b == bytes) {
            Some((_, ms)) => ms.push(m),
            None => groups.push((bytes, vec![m])),
        }
    }
    for (_, group) in &groups {
        let names: Vec<&str> = group.iter().map(|m| m.name.as_str()).collect();
        println!("{} ({} knowledge)", names.join(", "), group[0].knowledge_lang);
        let passages = passages(&group[0].passages_file);
        let data = tempfile::tempdir().expect("temp dir");
        let site = import(data.path(), &group[0].knowledge_lang, &group[0].passages_file);
        let t = Instant::now();
        let vectors = passage_vectors(&embedder, &passages, &group[0].passages_file);
        let alone: Vec<_> =
            group.iter().map(|m| model_alone(&embedder, &passages, &vectors, &m.questions.iter().map(|q| q.text.clone()).collect::<Vec<_>>())).collect();
        println!(
            "  model alone: {} passages and {} questions embedded in {:.0} s",
            passages.len(),
            group.iter().map(|m| m.questions.len()).sum::<usize>(),
            t.elapsed().as_secs_f64()
        );
        let (server, log) = serve(data.path());
        let client = common::client(data.path());
        wait_for(&log, "BM25 index built");
        // An English site's terms are embedded at its first question in a translated language (detected as
        // such: a few of each are asked, in case one is not), searched by the English terms nearest its words.
        let translated: Vec<&&Member> =
            group.iter().filter(|m| m.knowledge_lang == "en" && TRANSLATED_LANGUAGES.iter().any(|l| m.name.ends_with(&format!("/{l}")))).collect();
        for m in &translated {
            for q in m.questions.iter().take(3) {
                ask(&client, &format!("https://127.0.0.1:{}/v1/query", server.port), &site, json!({"question": q.text}));
            }
        }
        if !translated.is_empty() {
            wait_for(&log, "English terms embedded");
        }
        for (m, alone) in group.iter().zip(alone) {
            let t = Instant::now();
            let routed = through_route(&client, server.port, &site, m);
            let mut s = Scores::default();
            for ((q, Asked { docs, resolved }), model) in m.questions.iter().zip(&routed).zip(&alone) {
                let right = docs.first().is_some_and(|(d, _)| *d == q.passage);
                s.first += right as usize;
                s.top5 += docs.iter().take(5).any(|(d, _)| *d == q.passage) as usize;
                s.answered += *resolved as usize;
                s.answered_right += (right && *resolved) as usize;
                s.model_first += (model[0].0 == q.passage) as usize;
                s.model_top5 += model.iter().any(|(d, _)| *d == q.passage) as usize;
                dump.push(json!({
                    "set": m.name, "question": q.text, "passage": q.passage, "first": docs.first().map(|d| &d.0), "score": docs.first().map(|d| d.1),
                    "resolved": resolved, "model_first": model[0].0, "model_cosine": model[0].1,
                }));
            }
            println!("  {}: {} questions asked twice in {:.0} s", m.name, m.questions.len(), t.elapsed().as_secs_f64());
            rows.push((m, passages.len(), s));
        }
        drop(server);
    }
    if let Ok(file) = std::env::var("QUALITY_DUMP") {
        std::fs::write(&file, dump.iter().map(|l| format!("{l}\n")).collect::<String>()).expect("QUALITY_DUMP");
    }
    print_table(&rows);
    println!("({:.1} min in all)", started.elapsed().as_secs_f64() / 60.0);
}

fn print_table(rows: &[(&Member, usize, Scores)]) {
    println!();
    println!("P@1: the right passage first; R@5: among the first five documents; answered: `resolved` at the default");
    println!("threshold; answered|right: answered among the questions whose right passage came first. Model alone:");
    println!("multilingual-e5-small's cosine over the same passages, nothing else.");
    println!();
    println!(
        "{:<14} {:<5} {:>4} {:>5} {:>5} | {:>6} {:>6} {:>8} {:>14} | {:>6} {:>6} | {:>6}",
        "set", "role", "kb", "docs", "qs", "P@1", "R@5", "answered", "answered|right", "P@1", "R@5", "lead"
    );
    println!("{:<36} | {:^38} | {:^13} |", "", "pipeline (POST /v1/query)", "model alone");
    let share = |n: usize, d: usize| if d == 0 { 0.0 } else { n as f64 / d as f64 };
    let mut ahead = Vec::new();
    for (m, docs, s) in rows {
        let n = m.questions.len();
        let (p1, model_p1) = (share(s.first, n), share(s.model_first, n));
        if model_p1 > p1 {
            ahead.push(m.name.as_str());
        }
        println!(
            "{:<14} {:<5} {:>4} {:>5} {:>5} | {:>6.3} {:>6.3} {:>8.3} {:>14.3} | {:>6.3} {:>6.3} | {:>+6.3}",
            m.name,
            m.role,
            m.knowledge_lang,
            docs,
            n,
            p1,
            share(s.top5, n),
            share(s.answered, n),
            share(s.answered_right, s.first),
            model_p1,
            share(s.model_top5, n),
            p1 - model_p1
        );
    }
    println!();
    println!("lead: the pipeline's P@1 less the model's alone. The model alone is ahead on {} of {}: {}", ahead.len(), rows.len(), ahead.join(", "));
    for role in ["fit", "check"] {
        let names: Vec<&str> = rows.iter().filter(|(m, ..)| m.role == role).map(|(m, ..)| m.name.as_str()).collect();
        if !names.is_empty() {
            println!("marked {role}: {}", names.join(", "));
        }
    }
}
