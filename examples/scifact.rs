//! Retrieval benchmark on BEIR SciFact: imports `corpus.jsonl` into a site through the real import
//! path (JSONL document records keep their `_id`), then runs the test queries through the real
//! retrieval code and prints nDCG@10 and Recall@100 for BM25 alone, dense alone and hybrid.
//!
//! ```text
//! cargo run --release --example scifact                       # report on test (qrels/test.tsv)
//! cargo run --release --example scifact -- --fit              # also fit the fusion on train, report both
//! cargo run --release --example scifact -- --fts                # BM25 from FTS5, not the in-memory index
//! cargo run --release --example scifact -- --max-term-share 1  # with --fts: every question term
//! cargo run --release --example scifact -- --depth 80          # candidates per list (default 200)
//! cargo run --release --example scifact -- --heading-weight 1   # BM25 weight of headings (titles)
//! cargo run --release --example scifact -- --eval DIR --data-dir DIR
//! cargo run --release --example scifact -- --route            # through POST /v1/query of a server
//! cargo run --release --example scifact -- --sentences 0.5 [--fit]  # the sentence-vector experiment
//! cargo run --release --example scifact -- --dump FILE      # every candidate's features, for benches/scifact_features
//! cargo run --release --example scifact -- --no-english       # without the English model (`knowledge.english_model`)
//! cargo run --release --example scifact -- --english-below X  # in process: the English model where the best scores below X (2: always)
//! cargo run --release --example scifact -- --english-model-dir DIR  # another English model (its vectors embedded again)
//! cargo run --release --example scifact -- --fit --english-with-cos  # the English model with the main cosine too
//! cargo run --release --example scifact -- --fit --english-extra FILE [--extra-weight W]  # and XQuAD-R's English samples
//! ```
//! `--sentences A` (an experiment for #28, in-process only): every chunk of two sentences or more also has
//! a vector per sentence (`heading. sentence`, embedded as a passage, cached in the data directory), and a
//! candidate's cosine becomes A × its chunk's cosine + (1 − A) × its best sentence's before the fusion
//! scores it; `--fit` then fits the fusion on those cosines. The server does not do this (yet).
//! `--route` starts the real server (TLS, default configuration) on the data directory and asks each
//! test claim through `POST /v1/query` with `topK: 10`, once with `scoreThreshold: 0` and once without
//! (the operator's `knowledge.min_score` applies), scoring the documents of the returned sources in
//! order.
//! The data directory (default `target/scifact-data`) keeps the imported corpus between runs; the
//! import is skipped for unchanged documents, so later runs start in seconds.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::Instant;

use sitebot::config::Config;
use sitebot::domain::{Currency, Lang, SiteId, Tier};
use sitebot::knowledge::Engine;
use sitebot::knowledge::import;
use sitebot::knowledge::search::{self, Candidate, Fusion, Mode};
use sitebot::store::{NewSite, Store};

/// Chunks retrieved per list; enough for Recall@100 over documents.
const DEPTH: usize = 200;

#[path = "common/mod.rs"]
mod common;
use common::{Sentences, arg};

fn site(store: &Store) -> anyhow::Result<SiteId> {
    if let Some(id) = store.meta("scifact_site").get()? {
        return SiteId::parse(&id).map_err(|e| anyhow::anyhow!(e.0));
    }
    let (s, _) = store.sites().create(NewSite::new(
        "SciFact",
        sitebot::domain::Slug::vertical("science").expect("a valid slug"),
        Tier::Enterprise,
        Currency::parse("EUR").expect("EUR"),
        Lang::parse("en").expect("en"),
    ))?;
    store.meta("scifact_site").set(&s.id.to_string())?;
    Ok(s.id)
}

fn qrels(path: PathBuf) -> anyhow::Result<Qrels> {
    let mut out: HashMap<String, HashMap<String, f64>> = HashMap::new();
    for line in std::fs::read_to_string(path)?.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() >= 3 {
            out.entry(f[0].to_owned()).or_default().insert(f[1].to_owned(), f[2].parse()?);
        }
    }
    Ok(out)
}

/// Chunk keys to document ids, in rank order, each document once (its best chunk).
fn documents(ranked: &[Candidate], doc_of: &HashMap<u64, String>) -> Vec<String> {
    let mut seen = HashSet::new();
    ranked.iter().filter_map(|c| doc_of.get(&c.key)).filter(|d| seen.insert((*d).clone())).cloned().collect()
}

fn ndcg_at(ranked: &[String], rel: &HashMap<String, f64>, k: usize) -> f64 {
    let dcg: f64 = ranked.iter().take(k).enumerate().map(|(i, d)| rel.get(d).copied().unwrap_or(0.0) / ((i + 2) as f64).log2()).sum();
    let mut ideal: Vec<f64> = rel.values().copied().collect();
    ideal.sort_by(|a, b| b.total_cmp(a));
    let idcg: f64 = ideal.iter().take(k).enumerate().map(|(i, r)| r / ((i + 2) as f64).log2()).sum();
    if idcg == 0.0 { 0.0 } else { dcg / idcg }
}

fn recall_at(ranked: &[String], rel: &HashMap<String, f64>, k: usize) -> f64 {
    let relevant: HashSet<&String> = rel.iter().filter(|(_, r)| **r > 0.0).map(|(d, _)| d).collect();
    if relevant.is_empty() {
        return 0.0;
    }
    ranked.iter().take(k).filter(|d| relevant.contains(d)).count() as f64 / relevant.len() as f64
}

struct Query {
    id: String,
    text: String,
    vector: Vec<f32>,
    /// The English model's vector (`knowledge.english_model`, unless `--no-english`), for a question the
    /// server would give it (`knowledge::is_english`).
    english: Option<Vec<f32>>,
}

/// Relevance judgements: query id -> document id -> grade.
type Qrels = HashMap<String, HashMap<String, f64>>;

/// Mean nDCG@10 and Recall@100 of `mode` over `queries`; with `samples`, also collects the hybrid
/// candidates' features and labels.
#[allow(clippy::too_many_arguments)] // a benchmark harness: every input is a knob
fn evaluate(
    store: &Store,
    k: &Engine,
    site: &SiteId,
    queries: &[Query],
    rels: &Qrels,
    doc_of: &HashMap<u64, String>,
    fusion: &Fusion,
    mode: Mode,
    mut samples: Option<&mut Vec<([f32; 3], f32)>>,
    mut english_samples: Option<&mut Vec<([f32; 5], f32)>>,
    sentences: Option<&Sentences>,
) -> anyhow::Result<(f64, f64)> {
    let (mut ndcg, mut recall) = (0.0, 0.0);
    for q in queries {
        let rel = &rels[&q.id];
        let depth = arg("--depth").and_then(|d| d.parse().ok()).unwrap_or(DEPTH);
        let query = search::LexicalQuery { text: &q.text, lang: "en", detected: sitebot::knowledge::language::detect_confident(&q.text), depth, soft: &[] };
        let mut ranked = search::rank(store, k, site, &query, &q.vector, q.english.as_deref(), fusion, mode)?;
        if let Some(sv) = sentences.filter(|_| mode != Mode::Bm25) {
            sv.rescore(&mut ranked, &q.vector, fusion, mode == Mode::Dense);
        }
        if let Some(s) = samples.as_deref_mut() {
            for c in &ranked {
                let label = doc_of.get(&c.key).is_some_and(|d| rel.get(d).copied().unwrap_or(0.0) > 0.0);
                s.push((c.features(), label as u8 as f32));
            }
        }
        if let Some(s) = english_samples.as_deref_mut() {
            for c in &ranked {
                let label = doc_of.get(&c.key).is_some_and(|d| rel.get(d).copied().unwrap_or(0.0) > 0.0);
                if let Some(f) = c.english_features() {
                    s.push((f, label as u8 as f32));
                }
            }
        }
        let docs = documents(&ranked, doc_of);
        ndcg += ndcg_at(&docs, rel, 10);
        recall += recall_at(&docs, rel, 100);
    }
    let n = queries.len() as f64;
    Ok((ndcg / n, recall / n))
}

/// `--english-extra FILE`: more samples for the English model's fit, as `examples/xquad --fit --english
/// --english-samples FILE` writes them (XQuAD-R's English questions on English paragraphs, and off-topic
/// visitors' questions), those of even articles and the off-topic ones of the fit (article -1) only, each weighing
/// `--extra-weight W` (1 by default) against a SciFact sample: SciFact's claims alone fit a model that costs
/// everyday English questions (docs/performance.md).
fn english_extra() -> anyhow::Result<Vec<([f32; 5], f32, f64)>> {
    let Some(file) = arg("--english-extra") else { return Ok(Vec::new()) };
    let weight: f64 = arg("--extra-weight").map_or(Ok(1.0), |w| w.parse())?;
    let mut out = Vec::new();
    for line in std::fs::read_to_string(&file)?.lines() {
        let v: Vec<&str> = line.split('\t').collect();
        anyhow::ensure!(v.len() == 7, "{file}: want article, label and five features a line");
        let article: i64 = v[0].parse()?;
        if (article >= 0 && article % 2 == 1) || article == -2 {
            continue;
        }
        let f: Vec<f32> = v[2..].iter().map(|x| x.parse()).collect::<Result<_, _>>()?;
        out.push(([f[0], f[1], f[2], f[3], f[4]], v[1].parse()?, weight));
    }
    println!("English model: {} more samples from {file}, each weighing {weight}", out.len());
    Ok(out)
}

/// Logistic regression by full-batch gradient descent (three features and a bias).
fn fit(samples: &[([f32; 3], f32)], start: &Fusion) -> Fusion {
    let mut w = [start.w_cos as f64, start.w_bm25_rank as f64, start.w_dense_rank as f64, start.bias as f64];
    let n = samples.len() as f64;
    for _ in 0..20_000 {
        let mut g = [0f64; 4];
        for (x, y) in samples {
            let z = w[0] * x[0] as f64 + w[1] * x[1] as f64 + w[2] * x[2] as f64 + w[3];
            let e = 1.0 / (1.0 + (-z).exp()) - *y as f64;
            for i in 0..3 {
                g[i] += e * x[i] as f64;
            }
            g[3] += e;
        }
        for i in 0..4 {
            w[i] -= 2.0 * g[i] / n;
        }
    }
    Fusion { w_cos: w[0] as f32, w_bm25_rank: w[1] as f32, w_dense_rank: w[2] as f32, bias: w[3] as f32, ..*start }
}

fn main() -> anyhow::Result<()> {
    let eval = PathBuf::from(arg("--eval").unwrap_or_else(|| "../shared/eval/scifact".into()));
    let data_dir = PathBuf::from(arg("--data-dir").unwrap_or_else(|| "target/scifact-data".into()));
    let fitting = std::env::args().any(|a| a == "--fit");
    let mut config = Config::default();
    // The English model (`knowledge.english_model`, on by default) unless `--no-english`.
    config.knowledge.english_model = !std::env::args().any(|a| a == "--no-english");
    // `--english-model-dir DIR`: another English model (or the same with another `sitebot-model.json`); the
    // site's English vectors are embedded again with it when its fingerprint differs.
    config.knowledge.english_model_dir = arg("--english-model-dir").map(PathBuf::from);
    let store = sitebot::app::open_store(&config, &data_dir)?;
    let knowledge = Engine::open(&config.knowledge, &data_dir)?;
    let site = site(&store)?;

    if store.site(site).knowledge().fts_analyzer()? != Some(sitebot::knowledge::search::analysis::VERSION) {
        let t = Instant::now();
        let rows = sitebot::knowledge::search::analysis::reindex(&store, &site)?;
        println!("full-text index rebuilt with the current analysis: {rows} chunks in {:.2}s", t.elapsed().as_secs_f64());
    }
    let started = Instant::now();
    let mut failed = Vec::new();
    let inputs = import::read_paths(&[eval.join("corpus.jsonl")], &mut failed);
    let report = import::import(&store, knowledge.models(), &site, &inputs, false, &|_, _| {})?;
    let imported = started.elapsed().as_secs_f64();
    knowledge.sync_index_blocking(&store, &site)?;
    // The English model's vectors of chunks imported without them, as a server's worker fills them.
    if let Some(english) = knowledge.english.as_ref() {
        let t = Instant::now();
        let n = import::english::fill_blocking(english, &store, &site)?;
        if n > 0 {
            println!("English vectors: {n} chunks embedded in {:.1}s", t.elapsed().as_secs_f64());
        }
    }
    println!(
        "import: {} documents written ({} chunks), {} unchanged, {} failed, in {imported:.1}s{}",
        report.documents,
        report.chunks,
        report.skipped,
        report.failed.len() + failed.len(),
        if report.documents > 0 { format!(" = {:.1} documents/s", report.documents as f64 / imported) } else { String::new() }
    );

    let doc_of: HashMap<u64, String> =
        store.site(site).knowledge().chunk_sources()?.into_iter().map(|(k, src)| (k, src.rsplit('#').next().unwrap_or("").to_owned())).collect();

    let texts: HashMap<String, String> = std::fs::read_to_string(eval.join("queries.jsonl"))?
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .map(|v| (v["_id"].as_str().unwrap_or("").to_owned(), v["text"].as_str().unwrap_or("").to_owned()))
        .collect();
    let load = |split: &str| -> anyhow::Result<(Vec<Query>, Qrels)> {
        let rels = qrels(eval.join("qrels").join(format!("{split}.tsv")))?;
        let mut ids: Vec<&String> = rels.keys().collect();
        ids.sort();
        let text: Vec<String> = ids.iter().map(|id| texts[*id].clone()).collect();
        let vectors = knowledge.embedder.embed_parallel_blocking(&text, sitebot::knowledge::embedding::model::Purpose::Query)?;
        // As the server: the English model's vector for a question it would give it.
        let english: Vec<Option<Vec<f32>>> = match knowledge.english.as_ref() {
            Some(e) => e
                .embed_parallel_blocking(&text, sitebot::knowledge::embedding::model::Purpose::Query)?
                .into_iter()
                .zip(&text)
                .map(|(v, t)| sitebot::knowledge::is_english(sitebot::knowledge::language::detect_confident(t), t).then_some(v))
                .collect(),
            None => vec![None; text.len()],
        };
        let queries = ids
            .into_iter()
            .zip(text)
            .zip(vectors)
            .zip(english)
            .map(|(((id, text), vector), english)| Query { id: id.clone(), text, vector, english })
            .collect();
        Ok((queries, rels))
    };

    // BM25 from the in-memory index (`knowledge::bm25`, as the server once it is built), or from FTS5
    // with `--fts` (as the server while it builds).
    if std::env::args().any(|a| a == "--fts") {
        knowledge.bm25.set_enabled(false);
    } else {
        let t = Instant::now();
        let idx = knowledge.bm25.build_now(&store, &site)?;
        println!("in-memory BM25 index: {} chunks, {:.1} MiB, built in {:.2}s", idx.len(), idx.bytes() as f64 / (1 << 20) as f64, t.elapsed().as_secs_f64());
    }
    let sentences = match arg("--sentences") {
        Some(a) => Some(Sentences::load_or_embed(&store, &knowledge, &site, &data_dir.join("sentences.bin"), a.parse()?)?),
        None => None,
    };
    let mut fusion = Fusion::default();
    // `--max-term-share X`: measure another BM25 term-pruning share (1 keeps every term).
    if let Some(share) = arg("--max-term-share") {
        fusion.max_term_share = share.parse()?;
    }
    // `--heading-weight W`: BM25 weight of the heading column relative to the text.
    if let Some(w) = arg("--heading-weight") {
        fusion.heading_weight = w.parse()?;
    }
    // `--english-below X`: the English model reranks the questions whose best candidate scores below X (2: every
    // English question, 0: none); the fit's English samples come from those questions.
    if let Some(below) = arg("--english-below") {
        fusion.english.below = below.parse()?;
    }
    if fitting {
        let (train, train_rels) = load("train")?;
        let (mut samples, mut english_samples) = (Vec::new(), Vec::new());
        evaluate(
            &store,
            &knowledge,
            &site,
            &train,
            &train_rels,
            &doc_of,
            &fusion,
            Mode::Hybrid,
            Some(&mut samples),
            Some(&mut english_samples),
            sentences.as_ref(),
        )?;
        let mut fitted = fit(&samples, &fusion);
        if !english_samples.is_empty() {
            // The main model's cosine is left out of the English model (its weight held at 0; the dense rank
            // stays): with it (`--english-with-cos`) its weight comes out negative, the English cosine
            // standing in for it, and test nDCG@10 lower (docs/performance.md).
            let w = if !std::env::args().any(|a| a == "--english-with-cos") {
                let mut four: Vec<([f32; 4], f32, f64)> = english_samples.iter().map(|(f, y)| ([f[1], f[2], f[3], f[4]], *y, 1.0)).collect();
                four.extend(english_extra()?.into_iter().map(|(f, y, w)| ([f[1], f[2], f[3], f[4]], y, w)));
                [&[0.0][..], &common::logistic(&four)[..]].concat()
            } else {
                let mut five: Vec<([f32; 5], f32, f64)> = english_samples.iter().map(|(f, y)| (*f, *y, 1.0)).collect();
                five.extend(english_extra()?);
                common::logistic(&five)
            };
            fitted.english = search::English {
                below: fusion.english.below,
                w_cos: w[0] as f32,
                w_bm25_rank: w[1] as f32,
                w_dense_rank: w[2] as f32,
                w_en_cos: w[3] as f32,
                w_en_rank: w[4] as f32,
                bias: w[5] as f32,
            };
        }
        let (before, _) = evaluate(&store, &knowledge, &site, &train, &train_rels, &doc_of, &fusion, Mode::Hybrid, None, None, sentences.as_ref())?;
        let (after, _) = evaluate(&store, &knowledge, &site, &train, &train_rels, &doc_of, &fitted, Mode::Hybrid, None, None, sentences.as_ref())?;
        println!(
            "fit on {} train queries ({} candidates, {} with English vectors): train nDCG@10 {before:.4} -> {after:.4}",
            train.len(),
            samples.len(),
            english_samples.len()
        );
        println!("fitted: {fitted:?}");
        fusion = fitted;
    }

    let (test, rels) = load("test")?;
    // `--dump FILE`: every hybrid candidate of the train and test claims with its features and grade, as
    // TSV, for trying other fusion features outside Rust.
    if let Some(path) = arg("--dump") {
        let (train, train_rels) = load("train")?;
        // lift, margin and the rank features last: every candidate related (`search::relate`), as the route
        // relates a confidently detected question's.
        let mut out = String::from("split\tquery\tdoc\tkey\tcos\tbm25\tbm25_rank\tdense_rank\tgrade\tlift\tmargin\tb\td\n");
        for (split, queries, rels) in [("train", &train, &train_rels), ("test", &test, &rels)] {
            for q in queries {
                let depth = arg("--depth").and_then(|d| d.parse().ok()).unwrap_or(DEPTH);
                let query =
                    search::LexicalQuery { text: &q.text, lang: "en", detected: sitebot::knowledge::language::detect_confident(&q.text), depth, soft: &[] };
                let mut ranked = search::rank(&store, &knowledge, &site, &query, &q.vector, q.english.as_deref(), &fusion, Mode::Hybrid)?;
                search::relate(&mut ranked);
                for c in ranked {
                    let doc = doc_of.get(&c.key).cloned().unwrap_or_default();
                    let [_, b, d] = c.features();
                    let grade = rels[&q.id].get(&doc).copied().unwrap_or(0.0);
                    let rank = |r: Option<usize>| r.map_or(String::from("0"), |r| r.to_string());
                    out.push_str(&format!(
                        "{split}\t{}\t{doc}\t{}\t{}\t{}\t{}\t{}\t{grade}\t{}\t{}\t{b}\t{d}\n",
                        q.id,
                        c.key,
                        c.cos,
                        c.bm25.unwrap_or(0.0),
                        rank(c.bm25_rank),
                        rank(c.dense_rank),
                        c.lift,
                        c.margin
                    ));
                }
            }
        }
        std::fs::write(&path, out)?;
        println!("candidates written to {path}");
        return Ok(());
    }
    if std::env::args().any(|a| a == "--route") {
        return tokio::runtime::Runtime::new()?.block_on(through_route(&config, &data_dir, &store, &site, &test, &rels));
    }
    println!("{} test queries, {} documents", test.len(), doc_of.values().collect::<HashSet<_>>().len());
    println!("{:<8} {:>9} {:>11}", "method", "nDCG@10", "Recall@100");
    for (name, mode) in [("bm25", Mode::Bm25), ("dense", Mode::Dense), ("hybrid", Mode::Hybrid)] {
        let t = Instant::now();
        let (ndcg, recall) = evaluate(&store, &knowledge, &site, &test, &rels, &doc_of, &fusion, mode, None, None, sentences.as_ref())?;
        println!("{name:<8} {ndcg:>9.4} {recall:>11.4}   ({:.2} ms/query)", t.elapsed().as_secs_f64() * 1000.0 / test.len() as f64);
    }
    Ok(())
}

/// nDCG@10 of the documents `POST /v1/query` cites, in order, asked of the real server.
async fn through_route(config: &Config, data_dir: &std::path::Path, store: &Store, site: &SiteId, queries: &[Query], rels: &Qrels) -> anyhow::Result<()> {
    let source_of: HashMap<String, String> =
        store.site(*site).knowledge().list_documents()?.into_iter().map(|d| (d.id, d.source.rsplit('#').next().unwrap_or("").to_owned())).collect();
    let min_score = config.knowledge.min_score;
    let mut config = config.clone();
    config.server.listen = "127.0.0.1:0".parse()?;
    let bound = sitebot::server::Server::bind(config, data_dir.to_owned(), std::sync::Arc::new(sitebot::ratelimit::SystemClock::default())).await?;
    let base = format!("https://127.0.0.1:{}", bound.addr()?.port());
    if !std::env::args().any(|a| a == "--fts") {
        bound.state().knowledge.bm25.build_now(store, site)?;
    }
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(bound.run(async {
        let _ = stopped.await;
    }));
    let cert = std::fs::read(sitebot::http::tls::self_signed_paths(data_dir).0)?;
    let client =
        reqwest::Client::builder().use_rustls_tls().tls_built_in_root_certs(false).add_root_certificate(reqwest::Certificate::from_pem(&cert)?).build()?;
    println!("{} test queries through POST /v1/query, topK 10", queries.len());
    println!("{:<26} {:>9} {:>9} {:>10}", "scoreThreshold", "nDCG@10", "sources", "documents");
    for threshold in [Some(0.0), None] {
        let (mut ndcg, mut sources, mut distinct) = (0.0, 0usize, 0usize);
        let started = Instant::now();
        for q in queries {
            let mut body = serde_json::json!({"question": q.text, "topK": 10});
            if let Some(t) = threshold {
                body["scoreThreshold"] = serde_json::json!(t);
            }
            let answer: serde_json::Value =
                client.post(format!("{base}/v1/query")).header("X-Site-Id", site.to_string()).json(&body).send().await?.error_for_status()?.json().await?;
            let docs: Vec<String> =
                answer["sources"].as_array().map(|a| a.iter().filter_map(|s| source_of.get(s["documentId"].as_str()?).cloned()).collect()).unwrap_or_default();
            sources += docs.len();
            distinct += docs.iter().collect::<HashSet<_>>().len();
            ndcg += ndcg_at(&docs, &rels[&q.id], 10);
        }
        let n = queries.len() as f64;
        let label = threshold.map_or(format!("none (min_score {min_score})"), |t| format!("{t}"));
        println!(
            "{label:<26} {:>9.4} {:>9.2} {:>10.2}   ({:.1} ms/query)",
            ndcg / n,
            sources as f64 / n,
            distinct as f64 / n,
            started.elapsed().as_secs_f64() * 1000.0 / n
        );
    }
    let _ = stop.send(());
    server.await??;
    Ok(())
}
