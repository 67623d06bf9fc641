//! The generative-answer quality check: the demo knowledge (Bright Smile Dental) and 30 questions
//! written for it (`examples/answers-questions.tsv`: answered by one source, needing two, not in the
//! knowledge), asked through `POST /v1/query` of the real binary, which uses whatever `[answer]`
//! configuration the environment gives it.
//!
//! ```text
//! cargo build --release
//! # against a local model (Ollama, llama.cpp server, vLLM ...):
//! SITEBOT_ANSWER__GENERATOR=openai SITEBOT_ANSWER__OPENAI_BASE_URL=http://127.0.0.1:11434/v1 \
//!   SITEBOT_ANSWER__MODEL=llama3.1:8b SITEBOT_ANSWER__ALLOW_PRIVATE_NETWORKS=true \
//!   cargo run --release --example answers [-- --bin target/release/sitebot --verbose]
//! # the extractive baseline: the same command without the SITEBOT_ANSWER__ variables
//! ```
//! Prints, per kind of question, how many answers were generative, fell back to quoted sentences, or
//! were refused (the "not in my knowledge" answer), and with `--verbose` every answer.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

#[path = "common/mod.rs"]
mod common;
use common::arg;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let bin = arg("--bin").unwrap_or_else(|| "target/release/sitebot".into());
    let verbose = std::env::args().any(|a| a == "--verbose");
    let questions: Vec<(String, String)> = include_str!("answers-questions.tsv")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split_once('\t').map(|(k, q)| (k.to_owned(), q.to_owned())))
        .collect();
    let data = tempfile::tempdir()?;
    let dir = data.path().to_str().unwrap_or_default().to_owned();
    let mut server = Command::new(&bin)
        .args(["--data-dir", &dir, "demo", "--listen", "127.0.0.1:0"])
        .env("RUST_LOG", "warn")
        .env("SITEBOT_LIMITS__IP_PER_MINUTE", "100000")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    let mut lines = BufReader::new(server.stdout.take().ok_or_else(|| anyhow::anyhow!("no stdout"))?).lines();
    let (mut site, mut token, mut base) = (None, None, None);
    while base.is_none() {
        let line = lines.next().ok_or_else(|| anyhow::anyhow!("the server exited"))??;
        if let Some(rest) = line.strip_prefix("demo site ") {
            site = rest.split_whitespace().next().map(str::to_owned);
        } else if let Some(t) = line.trim().strip_prefix("bearer token (shown once): ") {
            token = Some(t.trim().to_owned());
        } else if let Some(addr) = line.strip_prefix("listening on ") {
            base = Some(addr.trim().to_owned());
        }
    }
    let (site, base) = (site.ok_or_else(|| anyhow::anyhow!("no demo site line"))?, base.unwrap_or_default());
    let pem = std::fs::read(data.path().join("tls/cert.pem"))?;
    let client =
        reqwest::Client::builder().use_rustls_tls().tls_built_in_root_certs(false).add_root_certificate(reqwest::Certificate::from_pem(&pem)?).build()?;

    // kind → (generative, quoted, refused)
    let mut counts: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    let mut first_sentence = Vec::new();
    for (kind, question) in &questions {
        let mut req = client.post(format!("{base}/v1/query")).header("X-Site-Id", &site).json(&json!({"question": question}));
        if let Some(t) = &token {
            req = req.bearer_auth(t);
        }
        let started = std::time::Instant::now();
        let a: Value = req.send().await?.error_for_status()?.json().await?;
        let c = counts.entry(kind.clone()).or_default();
        let outcome = match (a["mode"].as_str(), a["resolved"].as_bool()) {
            (Some("generative"), _) => {
                c.0 += 1;
                first_sentence.push(started.elapsed().as_millis());
                "generative"
            }
            (_, Some(true)) => {
                c.1 += 1;
                "quoted"
            }
            _ => {
                c.2 += 1;
                "refused"
            }
        };
        if verbose {
            println!("[{kind}] {question}\n  {outcome}: {}\n", a["answer"].as_str().unwrap_or(""));
        }
    }
    server.kill()?;
    server.wait()?;
    println!("{:<6} {:>10} {:>7} {:>8}", "kind", "generative", "quoted", "refused");
    let mut total = (0, 0, 0);
    for (kind, (g, q, r)) in &counts {
        println!("{kind:<6} {g:>10} {q:>7} {r:>8}");
        total = (total.0 + g, total.1 + q, total.2 + r);
    }
    println!("{:<6} {:>10} {:>7} {:>8}", "all", total.0, total.1, total.2);
    if !first_sentence.is_empty() {
        first_sentence.sort_unstable();
        println!("generative answers: median {} ms per whole answer", first_sentence[first_sentence.len() / 2]);
    }
    Ok(())
}
