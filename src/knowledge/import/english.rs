//! The English model's vectors of English chunks that lack them (`knowledge.english_model`).
//!
//! An import embeds English documents' chunks with the English model as it stores them (`import::flush`),
//! so they are ranked with it from the moment they are searchable. What is left for this worker: sites
//! imported before the English model existed or while it was turned off, and all of them again after it
//! changes (vectors record its fingerprint). It embeds a site's English chunks (their document's language
//! as the cross-lingual side reads it, FAQ entries left out: `Fusion::faq` scores those) `BATCH` at a
//! time on one session (one core, so questions keep the other) and stores them without moving the
//! site's generation (no index is built from them). A question uses them only when every English
//! candidate it found has one (`search::add_english`), so until a site is filled its questions are
//! ranked as before, never by two models at once.
//!
//! Work is found by the site's generation: a site whose scan found nothing at generation `g` is not
//! scanned again until an import or a deletion moves it past `g`, and then only from the last chunk key
//! it scanned (keys are never reused, so a new chunk always has a higher one). The positions are kept in
//! memory: a restart, as after a change of the English model, scans every site once from the start.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::domain::SiteId;
use crate::knowledge::Engine;
use crate::knowledge::embedding::Embedder;
use crate::knowledge::embedding::model::Purpose;
use crate::knowledge::import::chunk::embedding_input;
use crate::store::{Store, StoreError};

/// Chunks embedded per blocking task: about a second of one core with MiniLM.
const BATCH: usize = 32;
/// How often an idle worker looks for sites whose generation moved.
const IDLE: Duration = Duration::from_secs(2);

/// Fills the English vectors of every site until `stop` (a server's worker); returns at once when no
/// English model is loaded.
pub async fn run_until_stopped(knowledge: Arc<Engine>, store: Store, stop: CancellationToken) {
    let Some(english) = knowledge.english.clone() else { return };
    // Sites found with nothing to fill, at the generation they were found at.
    let mut filled: HashMap<SiteId, i64> = HashMap::new();
    // Per site, the chunk key up to which every English chunk has its vector.
    let mut position: HashMap<SiteId, u64> = HashMap::new();
    loop {
        let mut worked = false;
        let sites = match store.run(|s| s.sites().list()).await {
            Ok(sites) => sites,
            Err(e) => {
                tracing::error!(error = %e, "English vectors: cannot list the sites");
                Vec::new()
            }
        };
        for site in sites.into_iter().map(|s| s.id) {
            if stop.is_cancelled() {
                return;
            }
            let (e, s) = (english.clone(), store.clone());
            let (seen, after) = (filled.get(&site).copied(), position.get(&site).copied().unwrap_or(0));
            let done = tokio::task::spawn_blocking(move || -> Result<(Option<i64>, u64), String> {
                let generation = s.site(site).knowledge().generation().map_err(|e| e.to_string())?;
                if seen == Some(generation) {
                    return Ok((Some(generation), after));
                }
                let (n, at) = batch(&e, &s, &site, after, false).map_err(|e| e.to_string())?;
                Ok(((n == 0).then_some(generation), at))
            })
            .await;
            match done {
                Ok(Ok((Some(generation), at))) => {
                    if seen != Some(generation) {
                        tracing::debug!(site = %site, generation, "English vectors filled");
                    }
                    filled.insert(site, generation);
                    position.insert(site, at);
                }
                Ok(Ok((None, at))) => {
                    position.insert(site, at);
                    worked = true;
                }
                Ok(Err(e)) => {
                    // Tried again once the site's knowledge changes (or at the next start).
                    tracing::error!(site = %site, error = %e, "English vectors: filling failed");
                    if let Ok(g) = store.run(move |s| s.site(site).knowledge().generation()).await {
                        filled.insert(site, g);
                    }
                }
                Err(e) => tracing::error!(site = %site, error = %e, "English vectors: the task failed"),
            }
        }
        if !worked {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(IDLE) => {}
            }
        }
    }
}

/// Embeds and stores one batch of the site's English chunks with a key above `after` that lack a vector
/// of this model (blocking), on one session or, `parallel`, on all. Returns how many were stored and the
/// key up to which every English chunk now has its vector.
pub fn batch(english: &Embedder, store: &Store, site: &SiteId, after: u64, parallel: bool) -> Result<(usize, u64), FillError> {
    let kb = store.site(*site).knowledge();
    let limit = if parallel { 8 * BATCH } else { BATCH };
    let (chunks, scanned) = kb.english_pending(&english.fingerprint, crate::knowledge::language::CONFIDENT, after, limit)?;
    let Some(last) = chunks.last().map(|c| c.key) else { return Ok((0, scanned)) };
    // The text the main model embeds (`Chunk::embedding_input`); the English model takes no prefix.
    let inputs: Vec<String> = chunks.iter().map(|c| embedding_input(&c.heading, &c.text)).collect();
    let vectors = if parallel { english.embed_parallel_blocking(&inputs, Purpose::Passage)? } else { english.embed_blocking(&inputs, Purpose::Passage)? };
    let pairs: Vec<(u64, Vec<f32>)> = chunks.iter().map(|c| c.key).zip(vectors).collect();
    kb.set_english_embeddings(&english.fingerprint, &pairs)?;
    // Never zero for a non-empty batch, so chunks deleted meanwhile cannot end the filling early.
    Ok((pairs.len(), last))
}

/// Fills every English vector of the site now, on every session (blocking; benchmarks): returns how
/// many.
pub fn fill_blocking(english: &Embedder, store: &Store, site: &SiteId) -> Result<usize, FillError> {
    let (mut n, mut after) = (0, 0);
    loop {
        match batch(english, store, site, after, true)? {
            (0, _) => return Ok(n),
            (k, at) => (n, after) = (n + k, at),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum FillError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Embed(#[from] crate::knowledge::embedding::EmbedError),
}
