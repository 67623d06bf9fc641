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

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

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
