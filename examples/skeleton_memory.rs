//! What the consonant skeletons of a site's English terms (`knowledge::search::skeleton`) cost in memory:
//! opens a site's BM25 index in-process as the server does, then builds its skeleton map, printing the
//! process's resident memory before and after, the map's entries and an estimate of its heap bytes.
//!
//! ```text
//! cargo run --release --example skeleton_memory -- --data-dir target/scifact-data --site ID
//! ```

#[path = "common/mod.rs"]
mod common;
use common::{arg, status_kib};

fn rss_kib() -> u64 {
    status_kib(std::process::id(), "VmRSS:")
}

fn main() -> anyhow::Result<()> {
    let data = std::path::PathBuf::from(arg("--data-dir").expect("--data-dir DIR"));
    let site = sitebot::domain::SiteId::parse(&arg("--site").expect("--site ID")).map_err(|e| anyhow::anyhow!(e.0))?;
    let config = sitebot::config::Config::load(None, std::env::vars(), &sitebot::config::Overrides::default())?;
    let store = sitebot::app::open_store(&config, &data)?;
    let knowledge = sitebot::knowledge::Engine::open(&config.knowledge, &data)?;
    knowledge.sync_index_blocking(&store, &site)?;
    let index = knowledge.bm25.build_now(&store, &site)?;
    let before = rss_kib();
    let t = std::time::Instant::now();
    let map = index.skeletons();
    let took = t.elapsed();
    let after = rss_kib();
    let terms: usize = map.values().map(Vec::len).sum();
    // Heap: each key's bytes, each Vec's slots and each term's bytes, and the table's slots (key String and
    // Vec, 48 bytes, plus a control byte) at its capacity.
    let heap: usize = map.iter().map(|(k, v)| k.capacity() + v.capacity() * 16 + v.iter().map(|t| t.len()).sum::<usize>()).sum::<usize>() + map.capacity() * 49;
    println!(
        "skeleton map: {} skeletons of {terms} terms (index of {} chunks), built in {:.0} ms; heap estimate {:.1} MB; RSS {:.1} -> {:.1} MiB (+{:.1})",
        map.len(),
        index.len(),
        took.as_secs_f64() * 1e3,
        heap as f64 / 1e6,
        before as f64 / 1024.0,
        after as f64 / 1024.0,
        (after as f64 - before as f64) / 1024.0
    );
    Ok(())
}
