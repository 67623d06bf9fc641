//! The demo site asked in nine languages: a small site of alike sections (five price sections, hours,
//! emergencies, booking, insurance, FAQ entries), the kind of knowledge a business website has, where
//! XQuAD-R's Wikipedia paragraphs are each about something else. Runs `sitebot demo` (its knowledge as
//! the binary embeds it) on a fresh data directory and asks every question of `examples/demo-questions.tsv`
//! through `POST /v1/query` (`topK: 3`, the default threshold) over TLS.
//!
//! ```text
//! cargo build --release && cargo run --release --example demo_languages [-- --bin target/release/sitebot]
//! cargo run --release --example demo_languages -- --questions FILE --show all|misses
//! ```
//! Prints, for each language and in all: how many questions cite the right source first, how many are
//! answered from another one (`resolved: true` on the wrong source: a confident miss, worse than no answer),
//! and how many are not answered; then how many of the questions nothing on the site answers are answered.
//! `--show misses` (the default) lists every question not answered right with what it got; `--show all`
//! every question.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

#[path = "common/mod.rs"]
mod common;
use common::arg;

/// A question of the file: the title of the source that answers it (`None`: nothing on the site does),
/// its language and its text.
struct Asked {
    expected: Option<String>,
    lang: String,
    text: String,
}

fn questions(path: &str) -> anyhow::Result<Vec<Asked>> {
    let mut out = Vec::new();
    for (n, line) in std::fs::read_to_string(path)?.lines().enumerate() {
        if line.starts_with('#') || line.starts_with("expected\t") || line.trim().is_empty() {
            continue;
        }
        let [expected, lang, text] = line.split('\t').collect::<Vec<_>>()[..] else {
            anyhow::bail!("{path}:{}: want three tab-separated fields", n + 1);
        };
        out.push(Asked { expected: (expected != "-").then(|| expected.to_owned()), lang: lang.to_owned(), text: text.to_owned() });
    }
    Ok(out)
}

/// What one answer was: cited the right source first, answered from another, or not answered.
#[derive(Default, Clone, Copy)]
struct Tally {
    right: usize,
    wrong: usize,
    unanswered: usize,
}

fn main() -> anyhow::Result<()> {
    let bin = arg("--bin").unwrap_or_else(|| "target/release/sitebot".into());
    let file = arg("--questions").unwrap_or_else(|| "examples/demo-questions.tsv".into());
    let show_all = arg("--show").as_deref() == Some("all");
    let asked = questions(&file)?;
    let data = tempfile::tempdir()?;
    // `sitebot demo` prints the demo site's id in its banner, then "listening on" with the address.
    let mut server = common::Server(
        Command::new(&bin)
            .arg("--data-dir")
            .arg(data.path())
            .args(["demo", "--listen", "127.0.0.1:0"])
            .env("SITEBOT_LIMITS__VISITOR_SHARE", "1")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?,
    );
    let stdout = server.stdout.take().ok_or_else(|| anyhow::anyhow!("no stdout"))?;
    let (mut site, mut base) = (None, None);
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line?;
        if let Some(rest) = line.split("X-Site-Id: ").nth(1) {
            site.get_or_insert_with(|| rest.split('\'').next().unwrap_or_default().to_owned());
        }
        if let Some(addr) = line.strip_prefix("listening on ") {
            base = Some(addr.trim().to_owned());
            break;
        }
    }
    let (site, base) = (site.ok_or_else(|| anyhow::anyhow!("the demo printed no site id"))?, base.ok_or_else(|| anyhow::anyhow!("the demo exited"))?);
    let pem = std::fs::read(data.path().join("tls/cert.pem"))?;
    let client = reqwest::blocking::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(&pem)?)
        .build()?;
    let url = format!("{base}/v1/query");
    let (mut by_lang, mut off_topic): (BTreeMap<String, Tally>, BTreeMap<String, (usize, usize)>) = Default::default();
    let mut lines = Vec::new();
    for q in &asked {
        let a: Value = client.post(&url).header("X-Site-Id", &site).json(&json!({"question": q.text, "topK": 3})).send()?.error_for_status()?.json()?;
        let resolved = a["resolved"] == true;
        let first = &a["sources"][0];
        let title = first["title"].as_str().unwrap_or("");
        let score = first["score"].as_f64().unwrap_or(0.0);
        let Some(expected) = &q.expected else {
            let o = off_topic.entry(q.lang.clone()).or_default();
            (o.0, o.1) = (o.0 + resolved as usize, o.1 + 1);
            if resolved || show_all {
                lines.push(format!("  {:<3} {:<8} {score:.3} {title:<44} {}", q.lang, if resolved { "answered" } else { "no" }, q.text));
            }
            continue;
        };
        let t = by_lang.entry(q.lang.clone()).or_default();
        let verdict = match (resolved, title == expected) {
            (true, true) => {
                t.right += 1;
                "right"
            }
            (true, false) => {
                t.wrong += 1;
                "WRONG"
            }
            (false, _) => {
                t.unanswered += 1;
                "none"
            }
        };
        if verdict != "right" || show_all {
            lines.push(format!("  {:<3} {verdict:<8} {score:.3} {title:<44} {} (wants {expected})", q.lang, q.text));
        }
    }
    server.kill()?;
    server.wait()?;
    println!("{:<5} {:>6} {:>6} {:>6} {:>6}", "lang", "right", "wrong", "none", "of");
    let mut all = Tally::default();
    for (lang, t) in &by_lang {
        println!("{lang:<5} {:>6} {:>6} {:>6} {:>6}", t.right, t.wrong, t.unanswered, t.right + t.wrong + t.unanswered);
        (all.right, all.wrong, all.unanswered) = (all.right + t.right, all.wrong + t.wrong, all.unanswered + t.unanswered);
    }
    println!("{:<5} {:>6} {:>6} {:>6} {:>6}", "all", all.right, all.wrong, all.unanswered, all.right + all.wrong + all.unanswered);
    let (answered, of) = off_topic.values().fold((0, 0), |(a, n), (x, y)| (a + x, n + y));
    println!("questions nothing on the site answers: {answered} of {of} answered");
    println!("{}", if show_all { "every question:" } else { "not answered right:" });
    for l in lines {
        println!("{l}");
    }
    Ok(())
}
