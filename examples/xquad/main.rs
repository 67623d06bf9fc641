//! Retrieval in and across languages on XQuAD-R (240 Wikipedia paragraphs, the same 1,190 questions in
//! English, German and Spanish), through the real binary: `sitebot knowledge import` of each language's
//! paragraphs into a site of its own, then every question through `POST /v1/query` over TLS.
//!
//! ```text
//! cargo build --release && cargo run --release --example xquad [-- --eval DIR --bin target/release/sitebot]
//! cargo run --release --example xquad -- --fit [--unanswerable-weight W]   # fit `search::Translated`
//! ```
//! `--fit` with `--more DIR` adds those languages' questions on the English knowledge to the report, and
//! those named in `--fit-langs ar,ru,...` to the fit.
//! `--sentences A` with `--fit`: the sentence-vector experiment (`common::Sentences`) before the fit.
//! `--threshold T` sends `scoreThreshold: T` (0: what retrieval finds, whatever its score).
//! `--shift FILE` with `--fit` (the language-shift experiment of session 18, not built): a JSON object of
//! per-language vectors, `mean(English questions) - mean(the language's)`, added to a question's vector on
//! knowledge in another language. `--sweep-shipped` with `--fit`: the per-language table of what moving the
//! bias trades is for the shipped translated questions' model instead of the fitted one. `--sweep-lang ar,vi`
//! with `--fit`: the shipped model with one language's own bias moved, that language's questions right and
//! answered, answered with their article removed, and its off-topic questions answered. `--sweep-both` with
//! `--fit`: both shipped cross-lingual models' biases moved together, every article (with `--sentences A`: what
//! sentence vectors answer at the off-topic count of before). `--show-features` with `--fit`: the three best
//! candidates' features of each off-topic question the shipped models answer, and the nearest English terms
//! (`search::nearest`) of every question the knowledge cannot answer (`SITEBOT_KNOWLEDGE__NEAREST_TERMS=false`:
//! the ranking without them).
//! `--english` with `--fit` (`SITEBOT_KNOWLEDGE__ENGLISH_MODEL=true`): the English model on the English
//! questions alone, and nothing else (`fit::english_report`; `--english-samples FILE`, `XQUAD_ENGLISH`).
//! `--only-more`: with `--more`, only those languages' questions (the English, German and Spanish runs skipped).
//! `--dump FILE`: one JSON line a question asked through the route (its set, text, paragraph, first source, score
//! and `resolved`), to read which questions miss.
//! `--more DIR [--langs ar,el,...]` also asks XQuAD-R's other languages (the `xquad-r/` directory of
//! google-research-datasets/lareqa, cloned by hand: not ours) of the English knowledge, and every run ends
//! with `fit::OFF_TOPIC`'s questions asked of it (how many are answered), then
//! `fit::HELD_OUT_OFF_TOPIC`'s, which no fit has seen. `--nearest-langs vi[,pairs]` with `--fit` (an
//! experiment of session 26, not built): the nearest English terms for these languages' questions too, and
//! with `pairs` for each two adjacent words as well. `SITEBOT_*` settings apply to the in-process `--fit` as to
//! the server (`SITEBOT_KNOWLEDGE__DICTIONARIES_DIR` set to an empty directory: the ranking without translations).
//!
//! Prints, for en, de and es questions on knowledge in the same language, and for de and es questions on
//! English knowledge: R@1 (the first source is the question's paragraph), MRR@5 (over the sources, each
//! paragraph counted once), and the share answered (`resolved`) at the default threshold. The API never
//! returns sources below `knowledge.min_score`, so R@1 and MRR@5 count an unanswered question as a miss.
//!
//! `--fit` asks no server: it opens the imported sites in-process, ranks every question as the route does
//! and fits the cross-lingual model on half the articles (see `fit.rs`), printing the coefficients and
//! R@1 and answered shares on the held-out half and on all, before and after, and for each language without
//! a dictionary what moving `CrossLingual`'s bias for its questions alone would trade.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use serde_json::{Value, json};

mod fit;

#[path = "../common/mod.rs"]
mod common;
use common::arg;

/// (paragraph id, title, context) and (paragraph id, question) of one language's file.
type Set = (Vec<(usize, String, String)>, Vec<(usize, String)>);

fn load(eval: &Path, lang: &str) -> anyhow::Result<Set> {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(eval.join(format!("{lang}.json")))?)?;
    let (mut paragraphs, mut questions) = (Vec::new(), Vec::new());
    for article in v["data"].as_array().into_iter().flatten() {
        let title = article["title"].as_str().unwrap_or("").to_owned();
        for p in article["paragraphs"].as_array().into_iter().flatten() {
            let id = paragraphs.len();
            paragraphs.push((id, title.clone(), p["context"].as_str().unwrap_or("").to_owned()));
            for qa in p["qas"].as_array().into_iter().flatten() {
                questions.push((id, qa["question"].as_str().unwrap_or("").to_owned()));
            }
        }
    }
    Ok((paragraphs, questions))
}

fn url(id: usize) -> String {
    format!("https://xquad.example/p{id}")
}

/// Creates a site in `lang` and imports the paragraphs with the CLI; returns the site id.
fn import(bin: &str, dir: &str, lang: &str, name: &str, paragraphs: &[(usize, String, String)], work: &Path) -> anyhow::Result<String> {
    let site = common::create_site(bin, dir, name, lang)?;
    let file = work.join(format!("xquad-{name}.jsonl"));
    let lines: Vec<String> =
        paragraphs.iter().map(|(id, title, text)| json!({"_id": format!("p{id}"), "title": title, "text": text, "url": url(*id)}).to_string()).collect();
    std::fs::write(&file, lines.join("\n"))?;
    let t = std::time::Instant::now();
    let out = Command::new(bin).args(["--data-dir", dir, "knowledge", "import", "--json", "--site", &site]).arg(&file).output()?;
    anyhow::ensure!(out.status.success(), "import: {}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout)?;
    println!("import {name}: {} documents, {} chunks in {:.1}s", report["documents"], report["chunks"], t.elapsed().as_secs_f64());
    Ok(site)
}

/// The `--dump` file's lines, shared by the asking tasks.
static DUMP: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Keeps `line` for the `--dump` file, when one is asked for.
fn dump(line: Value) {
    if arg("--dump").is_some() {
        DUMP.lock().expect("dump").push(line.to_string());
    }
}

/// R@1, MRR@5 and the answered share of `questions` asked of `site`, four at a time.
async fn measure(client: &reqwest::Client, url_q: &str, site: &str, set: &str, questions: &[(usize, String)]) -> anyhow::Result<(f64, f64, f64)> {
    let questions = Arc::new(questions.to_vec());
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let (client, url_q, site, questions, next, set) = (client.clone(), url_q.to_owned(), site.to_owned(), questions.clone(), next.clone(), set.to_owned());
        tasks.push(tokio::spawn(async move {
            let (mut r1, mut rr, mut answered) = (0.0, 0.0, 0.0);
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((id, q)) = questions.get(i) else { break };
                let mut body = json!({"question": q, "topK": 5});
                if let Some(t) = arg("--threshold") {
                    body["scoreThreshold"] = json!(t.parse::<f64>()?);
                }
                let resp = client.post(&url_q).header("X-Site-Id", &site).json(&body).send().await?;
                anyhow::ensure!(resp.status() == 200, "status {}", resp.status());
                let a: Value = resp.json().await?;
                answered += (a["resolved"] == true) as u8 as f64;
                let mut seen = Vec::new();
                for s in a["sources"].as_array().into_iter().flatten() {
                    let u = s["url"].as_str().unwrap_or("").to_owned();
                    if !seen.contains(&u) {
                        seen.push(u);
                    }
                }
                if let Some(rank) = seen.iter().position(|u| *u == url(*id)) {
                    rr += 1.0 / (rank + 1) as f64;
                    r1 += (rank == 0) as u8 as f64;
                }
                dump(json!({"set": set, "question": q, "paragraph": url(*id), "first": seen.first(), "score": a["sources"][0]["score"], "resolved": a["resolved"]}));
            }
            anyhow::Ok((r1, rr, answered))
        }));
    }
    let (mut r1, mut rr, mut answered) = (0.0, 0.0, 0.0);
    for t in tasks {
        let (a, b, c) = t.await??;
        (r1, rr, answered) = (r1 + a, rr + b, answered + c);
    }
    let n = questions.len() as f64;
    Ok((r1 / n, rr / n, answered / n))
}

fn main() -> anyhow::Result<()> {
    let eval = PathBuf::from(arg("--eval").unwrap_or_else(|| "../shared/eval/xquad-r".into()));
    let bin = arg("--bin").unwrap_or_else(|| "target/release/sitebot".into());
    let data = tempfile::tempdir()?;
    let dir = data.path().to_str().unwrap_or_default().to_owned();
    let mut sets = Vec::new();
    for lang in ["en", "de", "es"] {
        let (paragraphs, questions) = load(&eval, lang)?;
        let site = import(&bin, &dir, lang, lang, &paragraphs, data.path())?;
        sets.push((lang, site, questions, paragraphs));
    }
    // `--more DIR`: XQuAD-R's other languages (google-research-datasets/lareqa, `xquad-r/`), asked of the
    // English knowledge; paragraphs come in the same order in every language, so ids match.
    let mut more = Vec::new();
    if let Some(dir) = arg("--more") {
        let langs = arg("--langs").unwrap_or_else(|| "ar,el,hi,ru,th,tr,vi,zh".into());
        for lang in langs.split(',') {
            let (paragraphs, questions) = load(Path::new(&dir), lang)?;
            anyhow::ensure!(paragraphs.len() == sets[0].3.len(), "{lang}: {} paragraphs, English has {}", paragraphs.len(), sets[0].3.len());
            more.push((lang.to_owned(), questions));
        }
    }
    if let Some(file) = arg("--shift") {
        let _ = fit::SHIFT.set(serde_json::from_str(&std::fs::read_to_string(file)?)?);
    }
    if std::env::args().any(|a| a == "--fit") {
        return fit_cross_lingual(&bin, &dir, data.path(), &sets, &more);
    }
    tokio::runtime::Runtime::new()?.block_on(through_route(&bin, data.path(), &sets, &more))
}

/// Each language's site id, questions and paragraphs.
type Sites = [(&'static str, String, Vec<(usize, String)>, Vec<(usize, String, String)>)];

/// `--fit` (see `fit`): also imports a one-article English site, then fits and reports in-process.
fn fit_cross_lingual(bin: &str, dir: &str, data: &Path, sets: &Sites, more: &[(String, Vec<(usize, String)>)]) -> anyhow::Result<()> {
    let paragraphs = &sets[0].3;
    // Article index of each paragraph (paragraphs of an article are consecutive, under its title).
    let mut article_of = Vec::with_capacity(paragraphs.len());
    for (i, (_, title, _)) in paragraphs.iter().enumerate() {
        let next = if i == 0 { 0 } else { article_of[i - 1] + (paragraphs[i - 1].1 != *title) as usize };
        article_of.push(next);
    }
    let tiny_paragraphs: Vec<_> = paragraphs.iter().filter(|(id, _, _)| article_of[*id] == 0).cloned().collect();
    let tiny = import(bin, dir, "en", "tiny", &tiny_paragraphs, data)?;
    let (store, knowledge) = fit::open(data)?;
    let sites: Vec<fit::Site> = sets
        .iter()
        .map(|(lang, id, _, _)| fit::open_site(&store, &knowledge, id, lang))
        .chain([fit::open_site(&store, &knowledge, &tiny, "en")])
        .collect::<Result<_, _>>()?;
    // `--sentences A`: the experiment of `common::Sentences`, on every site's chunks.
    if let Some(a) = arg("--sentences") {
        let weight: f32 = a.parse()?;
        let mut all: Option<common::Sentences> = None;
        for s in &sites {
            let one = common::Sentences::load_or_embed(&store, &knowledge, &s.id, &data.join(format!("sentences-{}.bin", s.id)), weight)?;
            match all.as_mut() {
                Some(a) => a.merge(one),
                None => all = Some(one),
            }
        }
        let _ = fit::SENTENCES.set(all.expect("sites"));
    }
    fit::embed_terms(&store, &knowledge, &[&sites[0], &sites[3]])?;
    let questions = |i: usize| -> anyhow::Result<Vec<fit::Question>> {
        let texts: Vec<String> = sets[i].2.iter().map(|(_, q)| q.clone()).collect();
        let vectors = fit::embed(&knowledge, &texts)?;
        Ok(sets[i]
            .2
            .iter()
            .zip(vectors)
            .map(|((p, text), vector)| fit::Question { paragraph: Some(*p), article: article_of[*p], text: text.clone(), vector })
            .collect())
    };
    let (en, de, es) = (questions(0)?, questions(1)?, questions(2)?);
    let off = fit::off_topic(&knowledge, fit::OFF_TOPIC.iter())?;
    // On the one-article site only that article's questions can be answered.
    let on_tiny = |qs: &[fit::Question]| -> Vec<fit::Question> {
        qs.iter()
            .map(|q| fit::Question { paragraph: q.paragraph.filter(|_| q.article == 0), article: q.article, text: q.text.clone(), vector: q.vector.clone() })
            .collect()
    };
    let (s, k) = (&store, &*knowledge);
    // `--english`: the English model on the English site's questions alone (see `fit::english_report`).
    if std::env::args().any(|a| a == "--english") {
        return fit::english_report(s, k, &sites[0], &en, &fit::off_topic(k, fit::ENGLISH_OFF_TOPIC.iter())?, &article_of);
    }
    // `--dump-same FILE`: the same-language candidates, for a fit of the main model (`fit::dump_same`).
    if let Some(file) = arg("--dump-same") {
        let all_off = fit::off_topic(k, fit::ENGLISH_OFF_TOPIC.iter().chain(fit::OFF_TOPIC).chain(fit::HELD_OUT_OFF_TOPIC))?;
        return fit::dump_same(s, k, &[(&sites[0], &en[..]), (&sites[1], &de[..]), (&sites[2], &es[..])], &all_off, &article_of, &file);
    }
    let mut pairs = vec![
        fit::pair(s, k, "de on en", true, true, &sites[0], &de, &article_of)?,
        fit::pair(s, k, "es on en", true, true, &sites[0], &es, &article_of)?,
        fit::pair(s, k, "en on de", true, true, &sites[1], &en, &article_of)?,
        fit::pair(s, k, "off-topic on en", true, true, &sites[0], &off, &article_of)?,
        fit::pair(s, k, "off-topic on de", true, true, &sites[1], &off, &article_of)?,
        fit::pair(s, k, "de on one article", true, false, &sites[3], &on_tiny(&de), &article_of)?,
        fit::pair(s, k, "es on one article", false, false, &sites[3], &on_tiny(&es), &article_of)?,
        fit::pair(s, k, "off-topic on one art.", true, false, &sites[3], &off, &article_of)?,
    ];
    // XQuAD-R's other languages on the English knowledge (`--more`): those in `--fit-langs` join the fit
    // (on their even articles, as de and es), the others are only reported, as languages it never saw.
    let fit_langs = arg("--fit-langs").unwrap_or_default();
    for (lang, asked) in more {
        let texts: Vec<String> = asked.iter().map(|(_, q)| q.clone()).collect();
        let qs: Vec<fit::Question> = asked
            .iter()
            .zip(fit::embed(k, &texts)?)
            .map(|((p, text), vector)| fit::Question { paragraph: Some(*p), article: article_of[*p], text: text.clone(), vector })
            .collect();
        let train = fit_langs.split(',').any(|l| l == lang);
        let name: &'static str = Box::leak(format!("{lang} on en{}", if train { "" } else { " (unseen)" }).into_boxed_str());
        pairs.push(fit::pair(s, k, name, train, true, &sites[0], &qs, &article_of)?);
    }
    // Never in the fit (`fit::HELD_OUT_OFF_TOPIC`): what the models answer of questions they never saw.
    let held = fit::off_topic(k, fit::HELD_OUT_OFF_TOPIC.iter())?;
    pairs.push(fit::pair(s, k, "held-out off-topic on en", false, true, &sites[0], &held, &article_of)?);
    if let Some(file) = arg("--dump-translated") {
        return fit::dump_translated(&pairs, &file);
    }
    let report = fit::run(&pairs, arg("--unanswerable-weight").map_or(Ok(fit::UNANSWERABLE_WEIGHT), |w| w.parse())?);
    fit::report_nearest();
    report
}

/// Serves the data directory and asks every question through `POST /v1/query`.
async fn through_route(bin: &str, data: &Path, sets: &Sites, more: &[(String, Vec<(usize, String)>)]) -> anyhow::Result<()> {
    let (mut server, client, base) = common::serve(bin, data)?;
    let url_q = format!("{base}/v1/query");
    println!("{:<14} {:>6} {:>7} {:>9}", "questions", "R@1", "MRR@5", "answered");
    let en_site = sets[0].1.clone();
    // The English site's terms are embedded in the background at its first question in a translated
    // language (`search::nearest`; about 8 s for XQuAD-R's 5,022 on two cores): asked and waited for here,
    // so every question is ranked as on a site that has had one. Once: asked just after start, while the
    // site's in-memory BM25 index builds, the question has them made from that index once it is in.
    client.post(&url_q).header("X-Site-Id", &en_site).json(&json!({"question": sets[1].2[0].1})).send().await?.error_for_status()?;
    tokio::time::sleep(std::time::Duration::from_secs(20)).await;
    let runs = [(0, 0, "en on en"), (1, 1, "de on de"), (2, 2, "es on es"), (1, 0, "de on en"), (2, 0, "es on en")];
    // `--only-more`: the `--more` languages' questions alone (their answers must not depend on what was
    // asked before them).
    let only_more = std::env::args().any(|a| a == "--only-more");
    for (q, k, name) in runs.into_iter().filter(|_| !only_more) {
        let site = if k == 0 { &en_site } else { &sets[k].1 };
        let (r1, mrr, answered) = measure(&client, &url_q, site, name, &sets[q].2).await?;
        println!("{name:<14} {r1:>6.3} {mrr:>7.3} {answered:>9.3}");
    }
    for (lang, questions) in more {
        let name = format!("{lang} on en");
        let (r1, mrr, answered) = measure(&client, &url_q, &en_site, &name, questions).await?;
        println!("{name:<14} {r1:>6.3} {mrr:>7.3} {answered:>9.3}");
    }
    // Questions no paragraph answers: the share answered should stay near zero.
    for (set, questions) in [("off-topic on en", fit::OFF_TOPIC), ("held-out off-topic on en", fit::HELD_OUT_OFF_TOPIC)] {
        let mut answered = 0;
        for q in questions {
            let a: Value = client.post(&url_q).header("X-Site-Id", &en_site).json(&json!({"question": q})).send().await?.json().await?;
            answered += (a["resolved"] == true) as usize;
            dump(json!({"set": set, "question": q, "first": a["sources"][0]["url"], "score": a["sources"][0]["score"], "resolved": a["resolved"]}));
        }
        println!("{set}: {answered} of {} answered", questions.len());
    }
    if let Some(file) = arg("--dump") {
        std::fs::write(file, DUMP.lock().expect("dump").join("\n") + "\n")?;
    }
    server.kill()?;
    server.wait()?;
    Ok(())
}
