//! Re-embedding after a model change: chunks that another model embedded (their stored fingerprint is
//! not the loaded model's) are embedded again in the background while the server serves. Full-text
//! indexes another analysis built are rebuilt before that, at start.
//!
//! Guarantees: a stale site is marked before the server accepts a query (`start` marks, then spawns),
//! and a marked site is searched by BM25 alone, so no query ever sees vectors of two models, nor a dense
//! side that covers half the site. Work is bounded: one site at a time, `BATCH` chunks per blocking
//! task (on the embedder's pool, so a question waits at most one batch's share of a core for its
//! session); each batch is one transaction that bumps the site's generation, so a crash loses at most
//! a batch and the next start resumes where this one stopped. A site's mark is lifted once it has no
//! stale chunk left; its index then syncs the re-embedded chunks like any new ones. Curated answers'
//! questions another model embedded are re-embedded first (they are few); until then they only go
//! unmatched.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::domain::SiteId;
use crate::knowledge::Engine;
use crate::knowledge::embedding::model::Purpose;
use crate::store::{Store, StoreError};

/// Chunks embedded per blocking task: about a second of both cores with e5 on this machine.
const BATCH: usize = 32;

/// What a refresh did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Reembedded {
    pub sites: usize,
    pub chunks: usize,
}

/// Sites with chunks another model embedded, and how many (blocking; `sitebot doctor` reports them).
pub fn stale_sites(store: &Store, model: &str) -> Result<Vec<(SiteId, u64)>, StoreError> {
    let mut out = Vec::new();
    for site in store.sites().list()? {
        let n = store.site(site.id).knowledge().stale_count(model)?;
        if n > 0 {
            out.push((site.id, n));
        }
    }
    Ok(out)
}

/// Marks the stale sites now, then re-embeds them in a background task until done or `stop`.
///
/// First, before any question: full-text indexes another analysis built are rebuilt
/// (`analysis::reindex_stale`; 12k chunks take a few seconds, so it is not worth a BM25-less window);
/// then every site's in-memory BM25 index starts building in the background (`bm25::Bm25Indexes::warm`).
pub async fn start(knowledge: Arc<Engine>, store: Store, stop: CancellationToken) -> Result<tokio::task::JoinHandle<Reembedded>, StoreError> {
    let t = std::time::Instant::now();
    for (site, rows) in store.run(crate::knowledge::search::analysis::reindex_stale).await? {
        tracing::info!(site = %site, chunks = rows, ms = t.elapsed().as_millis() as u64, "full-text index rebuilt with the current analysis");
    }
    // Each site's in-memory BM25 index, in the background: FTS5 answers until it is in.
    let sites = store.run(|s| s.sites().list()).await?.into_iter().map(|s| s.id).collect();
    knowledge.bm25.warm(&store, sites);
    let model = knowledge.embedder.fingerprint.clone();
    let stale = store.run(move |s| stale_sites(s, &model)).await?;
    for (site, n) in &stale {
        tracing::info!(site = %site, chunks = n, "chunks embedded by another model; re-embedding them, BM25 alone meanwhile");
        knowledge.set_stale(site, true);
    }
    Ok(tokio::spawn(run(knowledge, store, stale.into_iter().map(|(s, _)| s).collect(), stop)))
}

async fn run(knowledge: Arc<Engine>, store: Store, sites: Vec<SiteId>, stop: CancellationToken) -> Reembedded {
    let mut report = Reembedded::default();
    let (k, s) = (knowledge.clone(), store.clone());
    match tokio::task::spawn_blocking(move || curated(&k, &s)).await {
        Ok(Ok(0)) => {}
        Ok(Ok(n)) => tracing::info!(answers = n, "curated answers re-embedded"),
        Ok(Err(e)) => tracing::error!(error = %e, "re-embedding curated answers failed"),
        Err(e) => tracing::error!(error = %e, "re-embedding curated answers failed"),
    }
    for site in sites {
        loop {
            if stop.is_cancelled() {
                return report;
            }
            let (k, s) = (knowledge.clone(), store.clone());
            match tokio::task::spawn_blocking(move || batch(&k, &s, &site)).await {
                Ok(Ok(0)) => break,
                Ok(Ok(n)) => report.chunks += n,
                Ok(Err(e)) => {
                    // The site stays marked (BM25 alone) until a later start succeeds.
                    tracing::error!(site = %site, error = %e, "re-embedding failed");
                    break;
                }
                Err(e) => {
                    tracing::error!(site = %site, error = %e, "re-embedding task failed");
                    break;
                }
            }
        }
        let (k, s) = (knowledge.clone(), store.clone());
        let done = tokio::task::spawn_blocking(move || -> Result<bool, String> {
            let left = s.site(site).knowledge().stale_count(&k.embedder.fingerprint).map_err(|e| e.to_string())?;
            if left == 0 {
                // The index takes the re-embedded chunks before the site leaves BM25-only mode.
                k.sync_index_blocking(&s, &site).map_err(|e| e.to_string())?;
            }
            Ok(left == 0)
        })
        .await;
        if let Ok(Ok(true)) = done {
            knowledge.set_stale(&site, false);
            report.sites += 1;
            tracing::info!(site = %site, "re-embedding done");
        }
    }
    report
}

/// Re-embeds the questions of curated answers another model embedded, every site's (blocking). They
/// are few (tens per site) and until then they only go unmatched (`knowledge::curated`), so there is
/// no mark to lift.
fn curated(knowledge: &Engine, store: &Store) -> Result<usize, String> {
    let model = &knowledge.embedder.fingerprint;
    let mut n = 0;
    for site in store.sites().list().map_err(|e| e.to_string())? {
        let answers = store.site(site.id).curated();
        let stale = answers.stale(model).map_err(|e| e.to_string())?;
        if stale.is_empty() {
            continue;
        }
        let questions: Vec<String> = stale.iter().map(|(_, q)| q.clone()).collect();
        let vectors = knowledge.embedder.embed_parallel_blocking(&questions, Purpose::Query).map_err(|e| e.to_string())?;
        for ((id, _), v) in stale.iter().zip(vectors) {
            answers.set_embedding(id, model, &v).map_err(|e| e.to_string())?;
        }
        n += stale.len();
    }
    Ok(n)
}

/// Re-embeds one batch of the site's stale chunks (blocking); returns how many were stored.
fn batch(knowledge: &Engine, store: &Store, site: &SiteId) -> Result<usize, String> {
    let kb = store.site(*site).knowledge();
    let model = &knowledge.embedder.fingerprint;
    let chunks = kb.stale_chunks(model, BATCH).map_err(|e| e.to_string())?;
    if chunks.is_empty() {
        return Ok(0);
    }
    // The same inputs an import gives the model (`chunk::embed`).
    let inputs: Vec<(String, Option<String>)> =
        chunks.iter().map(|c| (crate::knowledge::import::chunk::embedding_input(&c.heading, &c.text), c.faq_question.clone())).collect();
    let vectors = crate::knowledge::import::chunk::embed(&knowledge.embedder, &inputs).map_err(|e| e.to_string())?;
    let pairs: Vec<(u64, Vec<f32>)> = chunks.iter().map(|c| c.key).zip(vectors).collect();
    kb.set_embeddings(model, &pairs).map_err(|e| e.to_string())?;
    // Never zero for a non-empty batch, so a chunk deleted meanwhile cannot end the loop early.
    Ok(pairs.len())
}
