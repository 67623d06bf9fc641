//! Curated answers in the request path: a question whose embedding is close to a curated answer's
//! question (cosine at least `knowledge.curated_min_similarity`) gets the operator's text, cited as its
//! one source, in place of an answer composed from passages. The threshold is high on purpose: a
//! curated answer must capture paraphrases of its question, never a merely related one (the tests pin
//! both sides with the default model).
//!
//! Matching is a scan of the site's curated answers (tens to hundreds; their embeddings are read from
//! the store per question, one indexed range), so an `answer add` or `delete` shows on the next
//! question without any cache to invalidate.

use crate::domain::SiteId;
use crate::knowledge::answer::Source;
use crate::store::Store;
use crate::store::curated::{CuratedAnswer, NewCurated};

/// Both vectors are unit length (the embedder normalizes), so the dot product is the cosine.
fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// A curated answer that matched a question, with the similarity of the two questions.
#[derive(Debug, Clone)]
pub struct Match {
    pub answer: CuratedAnswer,
    pub similarity: f32,
}

impl Match {
    /// The answer's text with the marker of its one source.
    pub fn text(&self) -> String {
        format!("{} [1]", self.answer.answer.trim_end())
    }

    /// The curated answer as the source it cites: its question is the title, its text the snippet.
    pub fn source(&self) -> Source {
        Source {
            id: self.answer.id.clone(),
            document_id: self.answer.id.clone(),
            title: self.answer.question.clone(),
            url: self.answer.url.clone(),
            snippet: self.answer.answer.clone(),
            score: (self.similarity.clamp(0.0, 1.0) * 10_000.0).round() / 10_000.0,
        }
    }
}

/// The site's curated answer closest to the question (embedded by `model` as `vector`), when it is at
/// least `min_similarity` close (blocking).
pub fn best_match(store: &Store, site: &SiteId, model: &str, vector: &[f32], min_similarity: f32) -> Result<Option<Match>, crate::store::StoreError> {
    if vector.is_empty() {
        return Ok(None);
    }
    let candidates = store.site(*site).curated().embedded_by(model)?;
    Ok(candidates
        .into_iter()
        .map(|(answer, v)| Match { similarity: cosine(vector, &v), answer })
        .filter(|m| m.similarity >= min_similarity)
        .max_by(|a, b| a.similarity.total_cmp(&b.similarity)))
}

/// A curated answer as typed, its question embedded by the loaded model (blocking): the new row `add` and
/// `update` store. Refuses an empty question or answer.
fn embedded(embedder: &crate::knowledge::embedding::Embedder, question: &str, answer: &str, url: Option<&str>) -> anyhow::Result<NewCurated> {
    let (question, answer) = (question.trim().to_owned(), answer.trim().to_owned());
    if question.is_empty() || answer.is_empty() {
        anyhow::bail!("the question and the answer must not be empty");
    }
    let embedding =
        embedder.embed_parallel_blocking(std::slice::from_ref(&question), crate::knowledge::embedding::model::Purpose::Query)?.pop().unwrap_or_default();
    Ok(NewCurated { question, answer, url: url.map(str::to_owned), embedding, model: embedder.fingerprint.clone() })
}

/// Adds a curated answer to the site, its question embedded by the loaded model (blocking; the CLI's
/// `knowledge answer add`).
pub fn add(
    store: &Store,
    embedder: &crate::knowledge::embedding::Embedder,
    site: &SiteId,
    question: &str,
    answer: &str,
    url: Option<&str>,
) -> anyhow::Result<CuratedAnswer> {
    let new = embedded(embedder, question, answer, url)?;
    Ok(store.site(*site).curated().add(&new)?)
}

/// Replaces a curated answer of the site, its question embedded again by the loaded model (blocking; the
/// console's edit). `NotFound` (as a store error inside) for an id that is not the site's.
pub fn update(
    store: &Store,
    embedder: &crate::knowledge::embedding::Embedder,
    site: &SiteId,
    id: &str,
    question: &str,
    answer: &str,
    url: Option<&str>,
) -> anyhow::Result<CuratedAnswer> {
    let new = embedded(embedder, question, answer, url)?;
    Ok(store.site(*site).curated().update(id, &new)?)
}
