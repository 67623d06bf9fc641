//! A data directory of the size issue #27 measures replication and restore at (README, "Scale out and
//! recover"): one site holding CHUNKS chunks (default 100,000) in documents of 10 chunks of about 600
//! characters, each with a random unit embedding stamped with the loaded model's fingerprint, so that the
//! vector index a restored node builds holds every one of them. Nothing is embedded (100,000 chunks take
//! hours on two cores): what a restore and an index build cost does not depend on what the vectors mean.
//!
//! ```text
//! cargo run --release --locked --example restore_size -- DATA_DIR [CHUNKS]
//! ```
//!
//! Prints the site id, the chunks written, the database's size and how long the writing took.

use std::path::PathBuf;
use std::time::Instant;

use rand::Rng;
use sitebot::config::{Config, Overrides};
use sitebot::domain::{Currency, Lang, Slug, Tier};
use sitebot::knowledge::embedding::{DIMENSIONS, Embedder};
use sitebot::knowledge::search::analysis::index_text;
use sitebot::store::NewSite;
use sitebot::store::knowledge::{NewChunk, NewDocument};

const PER_DOCUMENT: usize = 10;
/// Words the chunks are made of: a clinic's vocabulary, so the full-text index is of a realistic shape.
const WORDS: &[&str] = &[
    "appointment", "whitening", "implant", "insurance", "cleaning", "emergency", "crown", "filling", "braces", "aligner", "hygienist", "orthodontist",
    "anaesthesia", "root", "canal", "extraction", "check-up", "x-ray", "gum", "enamel", "sensitivity", "veneer", "bridge", "denture", "payment", "invoice",
    "monday", "friday", "evening", "parking", "children", "price", "euros", "session", "consultation",
];

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().ok_or_else(|| anyhow::anyhow!("usage: restore_size DATA_DIR [CHUNKS]"))?);
    let chunks: usize = args.next().map(|n| n.parse()).transpose()?.unwrap_or(100_000);
    let config = Config::load(None, std::env::vars(), &Overrides::default())?;
    let model = Embedder::load(&config.knowledge)?.fingerprint.clone();
    let store = sitebot::app::open_store(&config, &dir)?;
    let new = NewSite::new("Restore size", Slug::vertical("dental")?, Tier::Enterprise, Currency::parse("EUR")?, Lang::parse("en")?);
    let site = store.sites().create(new)?.0.id;
    let kb = store.site(site).knowledge();
    let mut rng = rand::thread_rng();
    let started = Instant::now();
    for d in 0..chunks.div_ceil(PER_DOCUMENT) {
        let chunks = (0..PER_DOCUMENT.min(chunks - d * PER_DOCUMENT))
            .map(|c| {
                let text: Vec<&str> = (0..80).map(|_| WORDS[rng.gen_range(0..WORDS.len())]).collect();
                let text = format!("Chunk {c} of document {d}: {}.", text.join(" "));
                let mut embedding: Vec<f32> = (0..DIMENSIONS).map(|_| rng.gen_range(-1.0..1.0)).collect();
                let norm = embedding.iter().map(|x| x * x).sum::<f32>().sqrt();
                embedding.iter_mut().for_each(|x| *x /= norm);
                let heading = format!("Section {c}");
                NewChunk { index_heading: index_text("en", &heading), index_text: index_text("en", &text), heading, text, embedding, english: None }
            })
            .collect();
        kb.replace_document(&NewDocument {
            source: format!("doc-{d}.md"),
            title: format!("Document {d}"),
            url: None,
            format: "md".into(),
            content_hash: format!("{d}"),
            model: model.clone(),
            english_model: String::new(),
            lang: Some(("en".into(), 1.0)),
            chunks,
        })?;
    }
    let size = std::fs::metadata(store.path())?.len() + std::fs::metadata(store.path().with_extension("db-wal")).map(|m| m.len()).unwrap_or(0);
    println!("site {site}: {chunks} chunks written in {:.1} s; database and WAL {:.1} MB", started.elapsed().as_secs_f64(), size as f64 / 1e6);
    Ok(())
}
