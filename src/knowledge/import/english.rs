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
//! scanned again until an import or a deletion moves it past `g`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::domain::SiteId;
use crate::knowledge::Engine;
use crate::knowledge::embedding::Embedder;
use crate::knowledge::embedding::model::Purpose;
use crate::knowledge::import::chunk::Chunk;
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
            let seen = filled.get(&site).copied();
            let done = tokio::task::spawn_blocking(move || -> Result<Option<i64>, String> {
                let generation = s.site(site).knowledge().generation().map_err(|e| e.to_string())?;
                if seen == Some(generation) {
                    return Ok(Some(generation));
                }
                Ok((batch(&e, &s, &site, false).map_err(|e| e.to_string())? == 0).then_some(generation))
            })
            .await;
            match done {
                Ok(Ok(Some(generation))) => {
                    if seen != Some(generation) {
                        tracing::debug!(site = %site, generation, "English vectors filled");
                    }
                    filled.insert(site, generation);
                }
                Ok(Ok(None)) => worked = true,
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

/// Embeds and stores one batch of the site's English chunks that lack a vector of this model
/// (blocking), on one session or, `parallel`, on all; returns how many were stored.
pub fn batch(english: &Embedder, store: &Store, site: &SiteId, parallel: bool) -> Result<usize, FillError> {
    let kb = store.site(*site).knowledge();
    let chunks = kb.english_pending(&english.fingerprint, crate::knowledge::language::CONFIDENT, if parallel { 8 * BATCH } else { BATCH })?;
    if chunks.is_empty() {
        return Ok(0);
    }
    // The text the main model embeds (`Chunk::embedding_input`); the English model takes no prefix.
    let inputs: Vec<String> = chunks.iter().map(|c| Chunk { heading: c.heading.clone(), text: c.text.clone() }.embedding_input()).collect();
    let vectors = if parallel { english.embed_parallel_blocking(&inputs, Purpose::Passage)? } else { english.embed_blocking(&inputs, Purpose::Passage)? };
    let pairs: Vec<(u64, Vec<f32>)> = chunks.iter().map(|c| c.key).zip(vectors).collect();
    kb.set_english_embeddings(&english.fingerprint, &pairs)?;
    // Never zero for a non-empty batch, so chunks deleted meanwhile cannot end the filling early.
    Ok(pairs.len())
}

/// Fills every English vector of the site now, on every session (blocking; benchmarks): returns how
/// many.
pub fn fill_blocking(english: &Embedder, store: &Store, site: &SiteId) -> Result<usize, FillError> {
    let mut n = 0;
    loop {
        match batch(english, store, site, true)? {
            0 => return Ok(n),
            k => n += k,
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
