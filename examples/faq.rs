//! FAQ matching on people's own rephrasings: StackFAQ (Karan and Šnajder 2018, "Paraphrase-focused
//! learning to rank for domain-specific FAQ retrieval"), 125 StackExchange questions with their best answer
//! as FAQ entries, and 1,249 rephrasings of them written by people, through the real binary: `sitebot
//! knowledge import` of the entries as a FAQ file, then every rephrasing through `POST /v1/query` over TLS.
//!
//! ```text
//! git clone https://github.com/ML-Recipes/BERT-FAQ target/eval/BERT-FAQ   # once: the data (not ours)
//! cargo build --release && cargo run --release --example faq [-- --data FILE --bin target/release/sitebot]
//! ```
//! `--data` defaults to `target/eval/BERT-FAQ/data/StackFAQ/stackExchange-FAQ.json`. Prints R@1 (the
//! first source is the rephrased entry), MRR@5 and the answered share at the default threshold, for the
//! rephrasings of even-numbered entries (to tune on), of odd-numbered ones (held out) and all; and the
//! misses of the held-out half (`--misses N`, 10 by default) to read; and how many of 20 questions no
//! entry answers (`OFF_TOPIC`, in 12 languages) are answered at the default threshold.
//!
//! `--fit` asks no server: it opens the imported site in-process, ranks every rephrasing as the route
//! does (`search::rank`) and fits `search::Faq`, the model of FAQ entries' chunks, on the rephrasings of
//! even-numbered entries, with `common::VISITOR_OFF_TOPIC`'s questions as negatives (about one question
//! in four); it prints the coefficients and R@1, the answered share and the off-topic questions answered
//! (`OFF_TOPIC`, not fitted on) for the shipped model and the fitted one, and what moving its bias trades.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use sitebot::knowledge::search::{self, Candidate, Faq, Fusion, Mode};

#[path = "common/mod.rs"]
mod common;
use common::arg;

/// One FAQ entry and the rephrasings of it.
struct Entry {
    question: String,
    answer: String,
    rephrasings: Vec<String>,
}

/// Questions a visitor might ask that no StackFAQ entry (web applications: Gmail, Trello, GitHub, ...)
/// answers, in several languages: the share answered of these should stay low.
const OFF_TOPIC: &[&str] = &[
    "How much does shipping to Austria cost?",
    "Are you open on Sundays?",
    "Can I cancel my order?",
    "How much is a dental cleaning?",
    "Do you treat children?",
    "Is there parking for customers?",
    "What is your refund policy for used shoes?",
    "Do you deliver to Belgium?",
    "Wie viel kostet eine Zahnreinigung?",
    "Haben Sie am Samstag geöffnet?",
    "¿Cuánto cuesta el envío a Portugal?",
    "¿Aceptan pagos con tarjeta de crédito?",
    "Quels sont vos horaires d'ouverture le samedi ?",
    "Quanto costa la spedizione in Italia?",
    "Hoe lang duurt de levering?",
    "Сколько стоит доставка в Москву?",
    "送料はいくらですか？",
    "营业时间是什么时候？",
    "كم تكلفة الشحن؟",
    "What is the capital of Australia?",
];

fn url(id: usize) -> String {
    format!("https://faq.example/e{id}")
}

/// A JSON value that is a string or a list of strings (the XML-to-JSON conversion makes a single
/// element a string and an empty one null).
fn strings(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a.iter().filter_map(|x| x.as_str().map(str::to_owned)).collect(),
        _ => Vec::new(),
    }
}

fn load(path: &Path) -> anyhow::Result<Vec<Entry>> {
    let doc: Value = serde_json::from_slice(&std::fs::read(path).map_err(|e| anyhow::anyhow!("{}: {e} (see the example's header)", path.display()))?)?;
    let pairs = doc["root"]["qapair"].as_array().ok_or_else(|| anyhow::anyhow!("no root.qapair list"))?;
    let clean = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    Ok(pairs
        .iter()
        .map(|p| Entry {
            question: clean(&strings(&p["question"]).join(" ")),
            answer: clean(strings(&p["answer"]).first().map(String::as_str).unwrap_or("")),
            rephrasings: strings(&p["rephr"]).iter().map(|r| clean(r)).filter(|r| !r.is_empty() && r != "*").collect(),
        })
        .filter(|e| !e.question.is_empty() && !e.answer.is_empty())
        .collect())
}

/// Counts over a set of questions.
#[derive(Default, Clone, Copy)]
struct Score {
    n: f64,
    r1: f64,
    rr: f64,
    answered: f64,
}

impl std::ops::AddAssign for Score {
    fn add_assign(&mut self, o: Score) {
        (self.n, self.r1, self.rr, self.answered) = (self.n + o.n, self.r1 + o.r1, self.rr + o.rr, self.answered + o.answered);
    }
}

/// Asks every (entry, rephrasing) of `site`, four at a time; the scores of even and odd entries, and
/// the held-out misses as (rephrasing, expected question, first source's title).
async fn measure(
    client: &reqwest::Client,
    url_q: &str,
    site: &str,
    asked: Vec<(usize, String)>,
    entries: &Arc<Vec<Entry>>,
) -> anyhow::Result<([Score; 2], Vec<(String, String, String)>)> {
    let asked = Arc::new(asked);
    let next = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let (client, url_q, site, asked, next, entries) = (client.clone(), url_q.to_owned(), site.to_owned(), asked.clone(), next.clone(), entries.clone());
        tasks.push(tokio::spawn(async move {
            let mut scores = [Score::default(); 2];
            let mut misses = Vec::new();
            while let Some((id, q)) = asked.get(next.fetch_add(1, Ordering::Relaxed)) {
                let resp = client.post(&url_q).header("X-Site-Id", &site).json(&json!({"question": q, "topK": 5})).send().await?;
                anyhow::ensure!(resp.status() == 200, "status {}", resp.status());
                let a: Value = resp.json().await?;
                let s = &mut scores[id % 2];
                s.n += 1.0;
                s.answered += (a["resolved"] == true) as u8 as f64;
                let sources = a["sources"].as_array().cloned().unwrap_or_default();
                let rank = sources.iter().position(|s| s["url"] == url(*id));
                if let Some(rank) = rank {
                    s.rr += 1.0 / (rank + 1) as f64;
                    s.r1 += (rank == 0) as u8 as f64;
                }
                if rank != Some(0) && id % 2 == 1 {
                    let got = sources.first().and_then(|s| s["title"].as_str()).unwrap_or("(no source)").to_owned();
                    misses.push((q.clone(), entries[*id].question.clone(), got));
                }
            }
            anyhow::Ok((scores, misses))
        }));
    }
    let (mut scores, mut misses) = ([Score::default(); 2], Vec::new());
    for t in tasks {
        let (s, m) = t.await??;
        scores[0] += s[0];
        scores[1] += s[1];
        misses.extend(m);
    }
    Ok((scores, misses))
}

fn main() -> anyhow::Result<()> {
    let path = PathBuf::from(arg("--data").unwrap_or_else(|| "target/eval/BERT-FAQ/data/StackFAQ/stackExchange-FAQ.json".into()));
    let bin = arg("--bin").unwrap_or_else(|| "target/release/sitebot".into());
    let show: usize = arg("--misses").map_or(Ok(10), |n| n.parse())?;
    let entries = Arc::new(load(&path)?);
    let data = tempfile::tempdir()?;
    let dir = data.path().to_str().unwrap_or_default().to_owned();
    let site = common::create_site(&bin, &dir, "stackfaq", "en")?;
    let file = data.path().join("faq.jsonl");
    let lines: Vec<String> = entries.iter().enumerate().map(|(i, e)| json!({"question": e.question, "answer": e.answer, "url": url(i)}).to_string()).collect();
    std::fs::write(&file, lines.join("\n"))?;
    let out = Command::new(&bin).args(["--data-dir", &dir, "knowledge", "import", "--json", "--site", &site]).arg(&file).output()?;
    anyhow::ensure!(out.status.success(), "import: {}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout)?;
    println!("import: {} entries as {} documents, {} chunks", entries.len(), report["documents"], report["chunks"]);
    let asked: Vec<(usize, String)> = entries.iter().enumerate().flat_map(|(i, e)| e.rephrasings.iter().map(move |r| (i, r.clone()))).collect();
    if std::env::args().any(|a| a == "--fit") {
        return fit(data.path(), &site, &asked);
    }

    tokio::runtime::Runtime::new()?.block_on(async {
        let (mut server, client, base) = common::serve(&bin, data.path())?;
        let (scores, mut misses) = measure(&client, &format!("{base}/v1/query"), &site, asked, &entries).await?;
        println!("{:<26} {:>6} {:>6} {:>7} {:>9}", "rephrasings", "n", "R@1", "MRR@5", "answered");
        let mut all = scores[0];
        all += scores[1];
        for (name, s) in [("of even entries (tune)", scores[0]), ("of odd entries (held out)", scores[1]), ("all", all)] {
            println!("{name:<26} {:>6} {:>6.3} {:>7.3} {:>9.3}", s.n, s.r1 / s.n, s.rr / s.n, s.answered / s.n);
        }
        let mut off = 0;
        for q in OFF_TOPIC {
            let a: Value = client.post(format!("{base}/v1/query")).header("X-Site-Id", &site).json(&json!({"question": q})).send().await?.json().await?;
            off += (a["resolved"] == true) as usize;
        }
        println!("off-topic questions answered: {off} of {}", OFF_TOPIC.len());
        misses.sort();
        for (q, want, got) in misses.iter().take(show) {
            println!("  miss: {q:?}\n        wanted {want:?}\n        got    {got:?}");
        }
        server.kill()?;
        server.wait()?;
        anyhow::Ok(())
    })
}

/// The default `knowledge.min_score`: a question whose best passage scores below it is not answered.
const THRESHOLD: f32 = 0.25;

/// One question's candidates as the route ranks them, each with its entry; the entry asked about
/// (`None`: no entry answers it).
struct Ranked {
    entry: Option<usize>,
    candidates: Vec<(Candidate, Option<usize>)>,
}

/// The entry of the best candidate under `fusion`, when it scores at least `THRESHOLD` (else `None`
/// for the entry, as the route answers nothing).
fn first(r: &Ranked, fusion: &Fusion) -> (Option<usize>, bool) {
    let best = r.candidates.iter().map(|(c, e)| (*e, fusion.score(c))).max_by(|a, b| a.1.total_cmp(&b.1));
    match best {
        Some((e, s)) if s >= THRESHOLD => (e, true),
        _ => (None, false),
    }
}

/// `--fit` (see the header).
fn fit(data: &Path, site: &str, asked: &[(usize, String)]) -> anyhow::Result<()> {
    use sitebot::knowledge::embedding::model::Purpose;
    let config = sitebot::config::Config::default();
    let store = sitebot::app::open_store(&config, data)?;
    let knowledge = sitebot::knowledge::Engine::open(&config.knowledge, data)?;
    let id = sitebot::domain::SiteId::parse(site).map_err(|e| anyhow::anyhow!(e.0))?;
    knowledge.sync_index_blocking(&store, &id)?;
    let kb = store.site(id).knowledge();
    let keys: Vec<u64> = kb.chunk_sources()?.into_iter().map(|(k, _)| k).collect();
    let entry_of: std::collections::HashMap<u64, usize> =
        kb.chunks(&keys)?.into_iter().filter_map(|c| Some((c.key, c.url?.strip_prefix("https://faq.example/e")?.parse().ok()?))).collect();
    let rank = |questions: Vec<(Option<usize>, String)>| -> anyhow::Result<Vec<Ranked>> {
        let texts: Vec<String> = questions.iter().map(|(_, q)| q.clone()).collect();
        let vectors = knowledge.embedder.embed_parallel_blocking(&texts, Purpose::Query)?;
        let mut out = Vec::with_capacity(questions.len());
        for ((entry, text), vector) in questions.into_iter().zip(vectors) {
            let detected = sitebot::knowledge::language::detect_confident(&text);
            let query = search::LexicalQuery { text: &text, lang: detected.unwrap_or("en"), detected, depth: search::depth(5), soft: &[] };
            let ranked = search::rank(&store, &knowledge, &id, &query, &vector, None, &Fusion::default(), Mode::Hybrid)?;
            out.push(Ranked { entry, candidates: ranked.into_iter().map(|c| (c.clone(), entry_of.get(&c.key).copied())).collect() });
        }
        Ok(out)
    };
    let rephrasings = rank(asked.iter().map(|(e, q)| (Some(*e), q.clone())).collect())?;
    let fit_off = rank(common::VISITOR_OFF_TOPIC.iter().map(|q| (None, q.to_string())).collect())?;
    let held_off = rank(OFF_TOPIC.iter().map(|q| (None, q.to_string())).collect())?;

    let train: Vec<&Ranked> = rephrasings.iter().filter(|r| r.entry.is_some_and(|e| e % 2 == 0)).collect();
    // About one question in four answered by no entry.
    let off_weight = train.len() as f64 / 3.0 / fit_off.len() as f64;
    let mut samples = Vec::new();
    for (r, weight) in train.iter().map(|r| (*r, 1.0)).chain(fit_off.iter().map(|r| (r, off_weight))) {
        for (c, e) in r.candidates.iter().filter(|(c, _)| c.faq && !c.cross_lingual) {
            samples.push((c.features(), (r.entry.is_some() && *e == r.entry) as u8 as f32, weight));
        }
    }
    let w = common::logistic(&samples);
    let fitted = Faq { w_cos: w[0] as f32, w_bm25_rank: w[1] as f32, w_dense_rank: w[2] as f32, bias: w[3] as f32 };
    println!("fit on {} candidates of {} rephrasings and {} off-topic questions", samples.len(), train.len(), fit_off.len());
    println!("shipped: {:?}", Fusion::default().faq);
    println!("fitted:  {fitted:?}");
    println!("{:<28} {:>9} {:>9} {:>9} {:>9} {:>9}", "model", "R@1 odd", "R@1 all", "answered", "off (fit)", "off (20)");
    let shipped = Fusion::default();
    let main = Faq { w_cos: shipped.w_cos, w_bm25_rank: shipped.w_bm25_rank, w_dense_rank: shipped.w_dense_rank, bias: shipped.bias };
    let mut rows = vec![("the main model".to_owned(), main), ("shipped".to_owned(), shipped.faq), ("fitted".to_owned(), fitted)];
    rows.extend([-1.0f32, -0.5, 0.5, 1.0, 2.0].map(|d| (format!("fitted, bias {d:+}"), Faq { bias: fitted.bias + d, ..fitted })));
    for (name, faq) in rows {
        let fusion = Fusion { faq, ..shipped };
        let (mut odd, mut n_odd, mut all, mut answered) = (0usize, 0usize, 0usize, 0usize);
        for r in &rephrasings {
            let (got, said) = first(r, &fusion);
            let right = got.is_some() && got == r.entry;
            all += right as usize;
            answered += said as usize;
            if r.entry.is_some_and(|e| e % 2 == 1) {
                n_odd += 1;
                odd += right as usize;
            }
        }
        let off = |set: &[Ranked]| set.iter().filter(|r| first(r, &fusion).1).count();
        let n = rephrasings.len() as f64;
        println!(
            "{name:<28} {:>9.3} {:>9.3} {:>9.3} {:>9} {:>9}",
            odd as f64 / n_odd as f64,
            all as f64 / n,
            answered as f64 / n,
            format!("{}/{}", off(&fit_off), fit_off.len()),
            format!("{}/{}", off(&held_off), held_off.len())
        );
    }
    Ok(())
}
