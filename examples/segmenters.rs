//! Lexical search for scripts written without spaces (Chinese, Japanese, Thai): character pairs (what
//! `knowledge::analysis` does) against ICU4X's word segmenter, and against the words FTS5's tokenizer
//! found before (a whole run of such a script is one token).
//!
//! ```text
//! cargo run --release --example segmenters [-- --corpus examples/segmenters.tsv]
//! ```
//! Each language's hand-written passages (`examples/segmenters.tsv`: 20 business-site passages and 20
//! visitors' questions each) go into a site of their own through the real store (FTS5 BM25, the same
//! table and query as the server's), once per analysis; every question is searched by BM25 alone and
//! R@1 (its passage first) and MRR@5 are printed with the analysis time per passage.

use std::collections::HashMap;
use std::time::Instant;

use icu_segmenter::WordSegmenter;
use icu_segmenter::options::WordBreakInvariantOptions;
use sitebot::domain::{Currency, Lang, Slug, Tier};
use sitebot::knowledge::search::analysis;
use sitebot::knowledge::search::match_expression;
use sitebot::store::knowledge::{NewChunk, NewDocument};
use sitebot::store::{NewSite, Store};

#[derive(Clone, Copy)]
enum Analysis {
    /// Before: words split at anything not a letter or digit (a run of Han or Thai is one token).
    Raw,
    /// Overlapping character pairs (`knowledge::analysis`).
    Bigrams,
    /// ICU4X word segmentation with its dictionaries (Chinese and Japanese, Thai).
    IcuDictionary,
    /// ICU4X word segmentation, LSTM models for Thai (dictionaries for Chinese and Japanese).
    IcuAuto,
}

impl Analysis {
    fn name(self) -> &'static str {
        match self {
            Analysis::Raw => "whole runs (before)",
            Analysis::Bigrams => "character pairs",
            Analysis::IcuDictionary => "ICU4X dictionary",
            Analysis::IcuAuto => "ICU4X auto (LSTM)",
        }
    }

    /// The terms of `text`, in order.
    fn terms(self, lang: &str, text: &str) -> Vec<String> {
        match self {
            Analysis::Raw => text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect(),
            Analysis::Bigrams => analysis::index_text(lang, text).split(' ').filter(|w| !w.is_empty()).map(str::to_owned).collect(),
            Analysis::IcuDictionary => icu(WordSegmenter::new_dictionary(WordBreakInvariantOptions::default()), text),
            Analysis::IcuAuto => icu(WordSegmenter::new_auto(WordBreakInvariantOptions::default()), text),
        }
    }

    fn question_terms(self, lang: &str, question: &str) -> Vec<String> {
        match self {
            Analysis::Bigrams => analysis::question_terms(question, &[lang]),
            _ => {
                let mut out: Vec<String> = Vec::new();
                for t in self.terms(lang, question) {
                    if !out.contains(&t) {
                        out.push(t);
                    }
                }
                out
            }
        }
    }
}

/// ICU4X's word-like segments of `text`, lower-cased; a segment holding punctuation is split there as
/// FTS5 would.
fn icu(segmenter: icu_segmenter::WordSegmenterBorrowed<'static>, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut last = 0;
    for (end, kind) in segmenter.segment_str(text).iter_with_word_type() {
        if kind.is_word_like() {
            out.extend(text[last..end].split(|c: char| !c.is_alphanumeric() && !is_mark(c)).filter(|w| !w.is_empty()).map(str::to_lowercase));
        }
        last = end;
    }
    out
}

/// Thai vowel and tone marks (not alphanumeric to `char`, but part of a word).
fn is_mark(c: char) -> bool {
    matches!(c as u32, 0x0E31 | 0x0E34..=0x0E3A | 0x0E47..=0x0E4E)
}

type Corpus = HashMap<String, (Vec<(String, String)>, Vec<(String, String)>)>;

fn load(path: &str) -> anyhow::Result<Corpus> {
    let mut out: Corpus = HashMap::new();
    for line in std::fs::read_to_string(path)?.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let f: Vec<&str> = line.splitn(4, '\t').collect();
        anyhow::ensure!(f.len() == 4, "bad line: {line}");
        let entry = out.entry(f[1].to_owned()).or_default();
        let pair = (f[2].to_owned(), f[3].to_owned());
        if f[0] == "p" { entry.0.push(pair) } else { entry.1.push(pair) }
    }
    Ok(out)
}

fn main() -> anyhow::Result<()> {
    let path = std::env::args().skip_while(|a| a != "--corpus").nth(1).unwrap_or_else(|| "examples/segmenters.tsv".into());
    let corpus = load(&path)?;
    let dir = tempfile::tempdir()?;
    let store = Store::open(&dir.path().join("t.db"), sitebot::secrets::Keyring::from_bytes(&[7u8; 32]))?;
    println!("{:<4} {:<22} {:>5} {:>6} {:>12}", "lang", "analysis", "R@1", "MRR@5", "µs/passage");
    for lang in ["zh", "ja", "th"] {
        let Some((passages, questions)) = corpus.get(lang) else { continue };
        for a in [Analysis::Raw, Analysis::Bigrams, Analysis::IcuDictionary, Analysis::IcuAuto] {
            let new = NewSite::new(lang, Slug::vertical("dental")?, Tier::Pro, Currency::parse("EUR")?, Lang::parse(lang)?);
            let site = store.sites().create(new)?.0.id;
            let kb = store.site(site).knowledge();
            let t = Instant::now();
            let analyzed: Vec<String> = passages.iter().map(|(_, text)| a.terms(lang, text).join(" ")).collect();
            let micros = t.elapsed().as_secs_f64() * 1e6 / passages.len() as f64;
            for ((topic, text), index_text) in passages.iter().zip(analyzed) {
                let chunk =
                    NewChunk { heading: String::new(), text: text.clone(), embedding: vec![0.0; 4], english: None, index_heading: String::new(), index_text };
                let doc = NewDocument {
                    source: topic.clone(),
                    title: topic.clone(),
                    url: None,
                    format: "txt".into(),
                    content_hash: topic.clone(),
                    model: "none".into(),
                    english_model: String::new(),
                    lang: Some((lang.to_owned(), 1.0)),
                    chunks: vec![chunk],
                };
                kb.replace_document(&doc)?;
            }
            let source: HashMap<u64, String> = kb.chunk_sources()?.into_iter().collect();
            let (mut r1, mut mrr) = (0.0, 0.0);
            for (topic, q) in questions {
                let hits = match match_expression(&a.question_terms(lang, q)) {
                    Some(e) => kb.fts_search(&e, 2.0, 5)?,
                    None => Vec::new(),
                };
                if let Some(rank) = hits.iter().position(|(k, _)| source.get(k) == Some(topic)) {
                    mrr += 1.0 / (rank + 1) as f64;
                    r1 += (rank == 0) as u8 as f64;
                }
            }
            let n = questions.len() as f64;
            println!("{lang:<4} {:<22} {:>5.2} {:>6.3} {:>12.1}", a.name(), r1 / n, mrr / n, micros);
        }
    }
    Ok(())
}
