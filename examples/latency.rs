//! Latency benchmark: the real binary, over TLS, on a site holding the SciFact corpus (5,183 documents).
//!
//! 1. `sitebot knowledge import` of `corpus.jsonl` into a fresh data directory: import throughput.
//! 2. `sitebot serve` on a free port; `POST /v1/query` with SciFact's test questions at concurrency 1
//!    and 32: p50, p99 and requests a second.
//!    At concurrency 32 also with `wrk`, whose own CPU cost is negligible.
//! 3. The server's peak resident memory (`VmHWM` in /proc/<pid>/status), and at the end its anonymous and
//!    file-backed resident memory (`RssAnon`, `RssFile`).
//!
//! ```text
//! cargo build --release && cargo run --release --example latency [-- --eval DIR --bin target/release/sitebot] [--metrics] [--long-question]
//! ```
//!
//! `--translated DIR` (XQuAD-R's `xquad-r/` directory) asks questions in the translated languages instead,
//! with `knowledge.nearest_terms` on and off in turn (`translated`).
//!
//! `--metrics` serves with `server.metrics_listen` on (so every request is recorded) and scrapes once a
//! second while the load runs, as Prometheus would: compare with a run without it for the metrics' cost.
//!
//! `--long-question` measures what a stranger's longest question costs instead of the load runs: a
//! question of 500 distinct corpus words (the most frequent of two or three letters, which fit the
//! 2,000-character limit and have the longest posting lists) asked in turn with the test questions at
//! concurrency 1, printing both medians and their ratio. The search keeps at most
//! `knowledge::text::MAX_TERMS` of its terms. With `--metrics` too, it also prints the mean time of each
//! query stage for 50 of each.

use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[path = "common/mod.rs"]
mod common;
use common::{arg, status_kib};

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

/// Asks `total` questions at `concurrency`; prints and returns p50 and p99 (ms) and requests a second.
async fn run(
    client: &reqwest::Client,
    url: &str,
    site: &str,
    questions: Arc<Vec<String>>,
    concurrency: usize,
    total: usize,
) -> anyhow::Result<(f64, f64, f64)> {
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let (client, url, site, questions, next) = (client.clone(), url.to_owned(), site.to_owned(), questions.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= total {
                    break;
                }
                let q = &questions[i % questions.len()];
                let t = Instant::now();
                let resp = client.post(&url).header("X-Site-Id", &site).json(&serde_json::json!({"question": q})).send().await?;
                let status = resp.status();
                resp.bytes().await?;
                anyhow::ensure!(status == 200, "status {status}");
                lat.push(t.elapsed());
            }
            anyhow::Ok(lat)
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await??);
    }
    let elapsed = started.elapsed().as_secs_f64();
    all.sort();
    let (p50, p99, rate) = (percentile(&all, 0.5), percentile(&all, 0.99), total as f64 / elapsed);
    println!("c={concurrency:<3} {total} requests: p50 {p50:.2} ms, p99 {p99:.2} ms, {rate:.0} req/s");
    Ok((p50, p99, rate))
}

/// 500 distinct words of the corpus, the most frequent of two or three letters first, within the route's
/// 2,000 characters.
fn long_question(eval: &std::path::Path) -> anyhow::Result<String> {
    let mut docs_with: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for line in std::fs::read_to_string(eval.join("corpus.jsonl"))?.lines() {
        let v: serde_json::Value = serde_json::from_str(line)?;
        let text = format!("{} {}", v["title"].as_str().unwrap_or(""), v["text"].as_str().unwrap_or(""));
        for t in sitebot::knowledge::search::analysis::terms("en", &text) {
            if (2..=3).contains(&t.chars().count()) {
                *docs_with.entry(t).or_default() += 1;
            }
        }
    }
    let mut words: Vec<(String, usize)> = docs_with.into_iter().collect();
    words.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut question = String::new();
    for (w, _) in words.iter().take(500) {
        if question.chars().count() + w.chars().count() + 1 > 2000 {
            break;
        }
        if !question.is_empty() {
            question.push(' ');
        }
        question.push_str(w);
    }
    Ok(question)
}

/// One question's latency through the route.
async fn time_one(client: &reqwest::Client, url: &str, site: &str, question: &str) -> anyhow::Result<Duration> {
    let t = Instant::now();
    let resp = client.post(url).header("X-Site-Id", site).json(&serde_json::json!({"question": question})).send().await?;
    let status = resp.status();
    resp.bytes().await?;
    anyhow::ensure!(status == 200, "status {status}");
    Ok(t.elapsed())
}

/// `sitebot_query_stage_duration_seconds` sums and counts by stage, from the metrics page.
async fn stage_sums(metrics: &str) -> anyhow::Result<std::collections::BTreeMap<String, (f64, f64)>> {
    let text = reqwest::get(metrics).await?.text().await?;
    let mut out: std::collections::BTreeMap<String, (f64, f64)> = std::collections::BTreeMap::new();
    for line in text.lines() {
        for (suffix, sum) in [("_sum{stage=\"", true), ("_count{stage=\"", false)] {
            if let Some(rest) = line.strip_prefix(&format!("sitebot_query_stage_duration_seconds{suffix}")) {
                let (stage, value) = rest.split_once("\"} ").unwrap_or_default();
                let v: f64 = value.trim().parse().unwrap_or(0.0);
                let e = out.entry(stage.to_owned()).or_default();
                if sum { e.0 = v } else { e.1 = v }
            }
        }
    }
    Ok(out)
}

/// Mean milliseconds per stage of the questions asked between two readings.
fn stage_means(before: &std::collections::BTreeMap<String, (f64, f64)>, after: &std::collections::BTreeMap<String, (f64, f64)>) -> String {
    after
        .iter()
        .map(|(stage, (sum, n))| {
            let (s0, n0) = before.get(stage).copied().unwrap_or_default();
            format!("{stage} {:.2} ms", (sum - s0) / (n - n0).max(1.0) * 1000.0)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The test questions and the long one in turn (so both see the same machine), 300 of each; with the
/// metrics listener on, then 50 of each apart, to show where the time goes.
async fn compare_long(client: &reqwest::Client, url: &str, site: &str, questions: &[String], long: &str, metrics: Option<&str>) -> anyhow::Result<()> {
    let terms = sitebot::knowledge::search::analysis::terms("en", long).len();
    println!(
        "long question: {} characters, {terms} distinct terms; the search uses {}",
        long.chars().count(),
        sitebot::knowledge::search::analysis::question_terms(long, &["en"]).len()
    );
    let (mut normal, mut long_lat) = (Vec::new(), Vec::new());
    for i in 0..300 {
        normal.push(time_one(client, url, site, &questions[i % questions.len()]).await?);
        long_lat.push(time_one(client, url, site, long).await?);
    }
    normal.sort();
    long_lat.sort();
    let (n, l) = (percentile(&normal, 0.5), percentile(&long_lat, 0.5));
    println!(
        "c=1, 300 each: test questions p50 {n:.2} ms (p99 {:.2}), 500-term question p50 {l:.2} ms (p99 {:.2}): {:.2}x",
        percentile(&normal, 0.99),
        percentile(&long_lat, 0.99),
        l / n
    );
    if let Some(metrics) = metrics {
        let start = stage_sums(metrics).await?;
        for q in questions.iter().take(50) {
            time_one(client, url, site, q).await?;
        }
        let mid = stage_sums(metrics).await?;
        for _ in 0..50 {
            time_one(client, url, site, long).await?;
        }
        let end = stage_sums(metrics).await?;
        println!("stages, test questions: {}", stage_means(&start, &mid));
        println!("stages, 500-term question: {}", stage_means(&mid, &end));
    }
    Ok(())
}

fn import(bin: &str, dir: &str, eval: &std::path::Path) -> anyhow::Result<String> {
    let site = common::create_site(bin, dir, "bench", "en")?;

    let t = Instant::now();
    let out = Command::new(bin).args(["--data-dir", dir, "knowledge", "import", "--json", "--site", &site]).arg(eval.join("corpus.jsonl")).output()?;
    anyhow::ensure!(out.status.success(), "import: {}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let secs = t.elapsed().as_secs_f64();
    let docs = report["documents"].as_u64().unwrap_or(0);
    println!("import: {docs} documents, {} chunks in {secs:.1}s = {:.1} documents/s (CLI, including model load)", report["chunks"], docs as f64 / secs);

    Ok(site)
}

/// `wrk -t1 -c32 -d15s` over the same questions in turn (a Lua script), printing p50, p99 and req/s.
fn wrk(url: &str, site: &str, questions: &[String], dir: &std::path::Path) -> anyhow::Result<()> {
    let bodies: Vec<String> = questions.iter().map(|q| serde_json::json!({"question": q}).to_string()).collect();
    let script = dir.join("questions.lua");
    // JSON string literals are valid Lua string literals for this text.
    let table = format!("{{ {} }}", bodies.iter().map(|b| serde_json::to_string(b).unwrap()).collect::<Vec<_>>().join(", "));
    std::fs::write(
        &script,
        format!(
            "local qs = {}\nlocal i = 0\nwrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\nwrk.headers[\"X-Site-Id\"] = \"{site}\"\n\
             request = function()\n  i = i + 1\n  return wrk.format(nil, nil, nil, qs[(i % #qs) + 1])\nend\n",
            table
        ),
    )?;
    let out = Command::new("wrk").args(["-t1", "-c32", "-d15s", "--latency", "-s"]).arg(&script).arg(url).output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    anyhow::ensure!(out.status.success() && !text.contains("Non-2xx"), "wrk failed: {text}");
    let field = |prefix: &str| text.lines().find_map(|l| l.trim().strip_prefix(prefix).map(|v| v.trim().to_owned())).unwrap_or_default();
    println!("wrk c=32 15s: p50 {}, p99 {}, {} req/s", field("50%"), field("99%"), field("Requests/sec:"));
    Ok(())
}

/// XQuAD-R's questions in the translated languages that have them (`xquad-r/{lang}.json`), the first
/// `per_language` of each, interleaved.
fn translated_questions(xquad: &Path, per_language: usize) -> anyhow::Result<Vec<String>> {
    let mut by_lang = Vec::new();
    for lang in ["ar", "de", "el", "es", "ru", "tr", "zh"] {
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(xquad.join(format!("{lang}.json")))?)?;
        let qs: Vec<String> = v["data"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|a| a["paragraphs"].as_array().into_iter().flatten())
            .flat_map(|p| p["qas"].as_array().into_iter().flatten())
            .filter_map(|qa| qa["question"].as_str().map(str::to_owned))
            .take(per_language)
            .collect();
        by_lang.push(qs);
    }
    Ok((0..per_language).flat_map(|i| by_lang.iter().filter_map(move |qs| qs.get(i).cloned())).collect())
}

/// `common::start` with the per-client caps lifted: the load comes from one address, and they are not
/// what is measured.
fn serve(mut server: Command, dir: &str) -> anyhow::Result<(common::Server, std::io::Lines<BufReader<std::process::ChildStdout>>, String)> {
    server.env("SITEBOT_SERVER__MAX_HANDSHAKES_PER_IP", "4096").env("SITEBOT_SERVER__MAX_CONNECTIONS_PER_IP", "4096");
    common::start(server, Path::new(dir))
}

/// A log line without its colours.
fn strip_ansi(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            chars.by_ref().find(|c| c.is_ascii_alphabetic());
        } else {
            out.push(c);
        }
    }
    out
}

/// `--translated DIR`: questions in the translated languages on the (English) site, with the site's
/// nearest English terms (`knowledge.nearest_terms`) and without, two rounds alternated: each server
/// started afresh, its terms embedded at its first such question (the time is read from its log), then
/// concurrency 1 and 8; p50, p99, requests a second and peak memory, and the ratios of the medians.
async fn translated(bin: &str, dir: &str, site: &str, xquad: &Path) -> anyhow::Result<()> {
    let questions = Arc::new(translated_questions(xquad, 80)?);
    println!("{} questions in ar, de, el, es, ru, tr, zh", questions.len());
    let mut medians: Vec<(bool, f64, f64)> = Vec::new();
    for round in 0..2 {
        for on in [true, false] {
            let log = Path::new(dir).join(format!("nearest-{round}-{on}.log"));
            let mut server = Command::new(bin);
            server.env("RUST_LOG", "info").env("SITEBOT_KNOWLEDGE__NEAREST_TERMS", on.to_string()).stderr(std::fs::File::create(&log)?);
            let (mut server, _, base) = serve(server, dir)?;
            let pid = server.id();
            let pem = std::fs::read(Path::new(dir).join("tls/cert.pem"))?;
            let client = reqwest::Client::builder()
                .use_rustls_tls()
                .tls_built_in_root_certs(false)
                .add_root_certificate(reqwest::Certificate::from_pem(&pem)?)
                .build()?;
            let url = format!("{base}/v1/query");
            let before = status_kib(pid, "VmRSS:");
            time_one(&client, &url, site, &questions[0]).await?;
            if on {
                let started = Instant::now();
                // Asked again until they are: a question before the site's BM25 index is in memory (built
                // at start) starts nothing.
                let line = loop {
                    let text = std::fs::read_to_string(&log)?;
                    if let Some(l) = text.lines().find(|l| l.contains("English terms embedded")) {
                        break strip_ansi(l);
                    }
                    anyhow::ensure!(started.elapsed() < Duration::from_secs(300), "the site's terms were not embedded in 5 minutes");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    time_one(&client, &url, site, &questions[0]).await?;
                };
                let field = |name: &str| line.split_whitespace().find_map(|w| w.strip_prefix(name)).unwrap_or("?").to_owned();
                println!(
                    "round {round}, nearest on: {} terms embedded in {} ms, {} bytes; RSS {:.1} -> {:.1} MiB",
                    field("terms="),
                    field("took_ms="),
                    field("bytes="),
                    before as f64 / 1024.0,
                    status_kib(pid, "VmRSS:") as f64 / 1024.0
                );
            }
            run(&client, &url, site, questions.clone(), 4, 100).await?;
            let label = format!("round {round}, nearest {}:", if on { "on " } else { "off" });
            print!("{label} ");
            let (c1, _, _) = run(&client, &url, site, questions.clone(), 1, questions.len()).await?;
            print!("{label} ");
            let (_, _, rate) = run(&client, &url, site, questions.clone(), 8, questions.len() * 2).await?;
            println!("{label} peak memory (VmHWM) {:.1} MiB", status_kib(pid, "VmHWM:") as f64 / 1024.0);
            medians.push((on, c1, rate));
            server.kill()?;
            server.wait()?;
        }
    }
    for round in medians.chunks(2) {
        println!("on / off: c=1 p50 {:.2}, c=8 requests a second {:.2}", round[0].1 / round[1].1, round[0].2 / round[1].2);
    }
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let eval = PathBuf::from(arg("--eval").unwrap_or_else(|| "../shared/eval/scifact".into()));
    let bin = arg("--bin").unwrap_or_else(|| "target/release/sitebot".into());
    let data = tempfile::tempdir()?;
    // `--data-dir DIR --site ID`: serve an already imported site (skips the import measurement).
    let (dir, site) = match (arg("--data-dir"), arg("--site")) {
        (Some(d), Some(s)) => (d, s),
        _ => {
            let dir = data.path().to_str().unwrap().to_owned();
            let site = import(&bin, &dir, &eval)?;
            (dir, site)
        }
    };
    let data_path = PathBuf::from(&dir);
    if let Some(xquad) = arg("--translated") {
        return translated(&bin, &dir, &site, Path::new(&xquad)).await;
    }
    let metrics = std::env::args().any(|a| a == "--metrics");
    let mut server = Command::new(&bin);
    if metrics {
        server.env("SITEBOT_SERVER__METRICS_LISTEN", "127.0.0.1:0");
    }
    server.env("RUST_LOG", "warn").stderr(Stdio::null());
    let (mut server, mut lines, base) = serve(server, &dir)?;
    let pid = server.id();
    let mut metrics_url = None;
    if metrics {
        let line = lines.next().ok_or_else(|| anyhow::anyhow!("server exited"))??;
        let url = format!("{}/metrics", line.strip_prefix("metrics on ").ok_or_else(|| anyhow::anyhow!("no metrics line: {line}"))?);
        println!("metrics on: scraping {url} every second");
        metrics_url = Some(url.clone());
        tokio::spawn(async move {
            loop {
                let _ = reqwest::get(&url).await.and_then(|r| r.error_for_status());
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
    }
    let pem = std::fs::read(data_path.join("tls/cert.pem"))?;
    let client = reqwest::Client::builder()
        .use_rustls_tls()
        .http1_only()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(&pem)?)
        .build()?;
    let url = format!("{base}/v1/query");
    let questions: Vec<String> = std::fs::read_to_string(eval.join("queries.jsonl"))?
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["text"].as_str().map(str::to_owned))
        .collect();
    let questions = Arc::new(questions);
    println!("server pid {pid}, RSS after start {} MiB", status_kib(pid, "VmRSS:") / 1024);
    // Warm-up: loads the index, fills caches.
    run(&client, &url, &site, questions.clone(), 4, 100).await?;
    if std::env::args().any(|a| a == "--long-question") {
        compare_long(&client, &url, &site, &questions, &long_question(&eval)?, metrics_url.as_deref()).await?;
        server.kill()?;
        server.wait()?;
        return Ok(());
    }
    // With `--metrics`, the mean time of each query stage is printed after each load run.
    let stages = async || match &metrics_url {
        Some(url) => stage_sums(url).await.ok(),
        None => None,
    };
    let before = stages().await;
    run(&client, &url, &site, questions.clone(), 1, 500).await?;
    let after_c1 = stages().await;
    run(&client, &url, &site, questions.clone(), 32, 4000).await?;
    let after_c32 = stages().await;
    // The client above costs about as much CPU as the server on this 2-core machine; wrk costs almost
    // none, so its figure is the server's own.
    if let Err(e) = wrk(&url, &site, &questions, data_path.as_path()) {
        println!("wrk c=32: not measured ({e}); install wrk (./install.sh --deps-only)");
    }
    let after_wrk = stages().await;
    for (name, (from, to)) in [("c=1", (&before, &after_c1)), ("c=32", (&after_c1, &after_c32)), ("wrk", (&after_c32, &after_wrk))] {
        if let (Some(from), Some(to)) = (from, to) {
            println!("stages, {name}: {}", stage_means(from, to));
        }
    }
    println!(
        "server peak memory (VmHWM) {:.1} MiB, now (VmRSS) {:.1} MiB: anonymous {:.1}, file-backed {:.1}",
        status_kib(pid, "VmHWM:") as f64 / 1024.0,
        status_kib(pid, "VmRSS:") as f64 / 1024.0,
        status_kib(pid, "RssAnon:") as f64 / 1024.0,
        status_kib(pid, "RssFile:") as f64 / 1024.0
    );
    server.kill()?;
    server.wait()?;
    Ok(())
}
