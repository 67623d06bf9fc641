//! Hybrid retrieval: BM25 from FTS5 and cosine similarity from the site's usearch index, fused into one
//! relevance score in [0, 1].
//!
//! Candidates are the union of the `depth` best chunks of each list. Each gets three features: its
//! cosine similarity with the question (absolute: the same value means the same closeness in every
//! query), and its rank in each list mapped to (0, 1] (`1 / (1 + (rank - 1) / RANK_SCALE)`, 0 when
//! absent). The score is a logistic model over them, `sigmoid(w·features + bias)`, fitted on SciFact's
//! train queries (`cargo run --release --example scifact -- --fit`): an estimate of the probability
//! that the chunk is relevant. Being a calibrated probability it means the same thing from query to
//! query, so `scoreThreshold` is useful; and ordering by it is the fused ranking (the benchmark reports
//! its nDCG against BM25 and dense alone).
//!
//! The BM25 query is an OR of the question's content terms, each quoted (so FTS5 syntax in a question is
//! inert) and stemmed by FTS5's Porter tokenizer; the heading column weighs more than the text.

use serde::Serialize;

use super::index::{IndexError, Indexes};
use super::text::terms;
use crate::domain::SiteId;
use crate::store::Store;
use crate::store::knowledge::{self as kb, ChunkRow};

/// Rank at which the rank feature halves, minus one.
const RANK_SCALE: f32 = 5.0;

/// The fusion model. `Default` holds the coefficients fitted on SciFact train.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Fusion {
    pub w_cos: f32,
    pub w_bm25_rank: f32,
    pub w_dense_rank: f32,
    pub bias: f32,
    /// BM25 weight of the heading column relative to the text.
    pub heading_weight: f64,
}

impl Default for Fusion {
    fn default() -> Self {
        Fusion { w_cos: 8.0, w_bm25_rank: 3.9, w_dense_rank: 2.28, bias: -9.45, heading_weight: 2.0 }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Bm25,
    Dense,
    Hybrid,
}

/// A candidate with its features and fused score.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub key: u64,
    pub cos: f32,
    pub bm25: Option<f64>,
    pub bm25_rank: Option<usize>,
    pub dense_rank: Option<usize>,
    pub score: f32,
}

impl Candidate {
    pub fn features(&self) -> [f32; 3] {
        let f = |r: Option<usize>| r.map_or(0.0, |r| 1.0 / (1.0 + (r as f32 - 1.0) / RANK_SCALE));
        [self.cos, f(self.bm25_rank), f(self.dense_rank)]
    }
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

impl Fusion {
    pub fn score(&self, c: &Candidate) -> f32 {
        let [cos, b, d] = c.features();
        sigmoid(self.w_cos * cos + self.w_bm25_rank * b + self.w_dense_rank * d + self.bias)
    }
}

/// The FTS5 expression for a question: its content terms, quoted, OR-ed. `None` when it has none.
pub fn match_expression(question: &str) -> Option<String> {
    let t = terms(question);
    if t.is_empty() {
        return None;
    }
    Some(t.iter().map(|w| format!("\"{}\"", w.replace('"', "\"\""))).collect::<Vec<_>>().join(" OR "))
}

/// The lexical half of retrieval, which needs no embedding (so it runs while the question is
/// embedded): the site's generation and its BM25 hits.
#[derive(Debug, Clone)]
pub struct Lexical {
    pub generation: i64,
    pub hits: Vec<(u64, f64)>,
}

/// BM25 hits for the question (blocking); none in `Mode::Dense`.
pub fn lexical(store: &Store, site: &SiteId, question: &str, depth: usize, fusion: &Fusion, mode: Mode) -> Result<Lexical, IndexError> {
    let s = *site;
    let expr = match_expression(question);
    let heading_weight = fusion.heading_weight;
    Ok(store.read_blocking(move |c| {
        let generation = kb::generation(c, &s)?;
        let hits = match (&expr, mode) {
            (Some(e), Mode::Bm25 | Mode::Hybrid) => kb::fts_search(c, &s, e, heading_weight, depth)?,
            _ => Vec::new(),
        };
        Ok(Lexical { generation, hits })
    })?)
}

/// Ranks the site's chunks for a question (blocking). Candidates come best first for `mode`.
#[allow(clippy::too_many_arguments)] // the benchmark varies each of them
pub fn rank(
    store: &Store,
    indexes: &Indexes,
    site: &SiteId,
    question: &str,
    query: &[f32],
    depth: usize,
    fusion: &Fusion,
    mode: Mode,
) -> Result<Vec<Candidate>, IndexError> {
    let lex = lexical(store, site, question, depth, fusion, mode)?;
    fuse(store, indexes, site, lex, query, depth, fusion, mode)
}

/// Adds the dense half to the lexical hits and scores the union (blocking).
#[allow(clippy::too_many_arguments)]
pub fn fuse(
    store: &Store,
    indexes: &Indexes,
    site: &SiteId,
    lex: Lexical,
    query: &[f32],
    depth: usize,
    fusion: &Fusion,
    mode: Mode,
) -> Result<Vec<Candidate>, IndexError> {
    let lexical = lex.hits;
    let mut out = indexes.with_index(store, site, lex.generation, |idx| -> Result<Vec<Candidate>, IndexError> {
        let dense = if mode == Mode::Bm25 { Vec::new() } else { idx.search(query, depth)? };
        let mut out: Vec<Candidate> = Vec::with_capacity(dense.len() + lexical.len());
        for (i, (key, cos)) in dense.into_iter().enumerate() {
            out.push(Candidate { key, cos, bm25: None, bm25_rank: None, dense_rank: Some(i + 1), score: 0.0 });
        }
        for (i, (key, bm25)) in lexical.iter().enumerate() {
            match out.iter_mut().find(|c| c.key == *key) {
                Some(c) => {
                    c.bm25 = Some(*bm25);
                    c.bm25_rank = Some(i + 1);
                }
                None => {
                    let cos = idx.similarity(query, *key).unwrap_or(0.0);
                    out.push(Candidate { key: *key, cos, bm25: Some(*bm25), bm25_rank: Some(i + 1), dense_rank: None, score: 0.0 });
                }
            }
        }
        Ok(out)
    })??;
    for c in &mut out {
        c.score = fusion.score(c);
    }
    let key = |c: &Candidate| -> f64 {
        match mode {
            Mode::Bm25 => c.bm25.unwrap_or(f64::MIN),
            Mode::Dense => c.cos as f64,
            Mode::Hybrid => c.score as f64,
        }
    };
    out.sort_by(|a, b| key(b).total_cmp(&key(a)).then(a.key.cmp(&b.key)));
    Ok(out)
}

/// A retrieved passage with its score.
#[derive(Debug, Clone)]
pub struct Passage {
    pub chunk: ChunkRow,
    pub score: f32,
}

/// Candidates per list for an answer of `top_k` sources.
pub fn depth(top_k: usize) -> usize {
    (top_k * 4).max(40)
}

/// The passages for an answer, given the question's lexical hits (from `lexical` with
/// `depth(top_k)`): hybrid-ranked, those scoring at least `threshold`, at most `top_k`.
pub fn retrieve(
    store: &Store,
    indexes: &Indexes,
    site: &SiteId,
    lex: Lexical,
    query: &[f32],
    top_k: usize,
    threshold: f32,
) -> Result<Vec<Passage>, IndexError> {
    let ranked = fuse(store, indexes, site, lex, query, depth(top_k), &Fusion::default(), Mode::Hybrid)?;
    let kept: Vec<Candidate> = ranked.into_iter().filter(|c| c.score >= threshold).take(top_k).collect();
    let keys: Vec<u64> = kept.iter().map(|c| c.key).collect();
    let s = *site;
    let rows = store.read_blocking(move |c| kb::chunks(c, &s, &keys))?;
    Ok(rows
        .into_iter()
        .filter_map(|chunk| {
            let score = kept.iter().find(|c| c.key == chunk.key)?.score;
            Some(Passage { chunk, score })
        })
        .collect())
}
