//! Knowledge: a site's documents turned into grounded answers with citations.
//!
//! - [`import`]: parsers per format (Markdown, HTML, text, PDF, FAQ CSV/JSONL, JSONL documents) and
//!   the idempotent import pipeline (one transaction per document).
//! - [`chunk`]: structure-following chunks with a token bound and a little overlap.
//! - [`embed`]: sentence embeddings (multilingual-e5-small by default) on a bounded pool of ONNX sessions;
//!   [`model`]: the model's manifest (prefixes, pooling, limits) and fingerprint.
//! - [`refresh`]: re-embedding, in the background, the chunks an earlier model embedded.
//! - [`index`]: a usearch index per site, derived from SQLite, persisted and synced by generation.
//! - [`analysis`]: text to search terms per language (Snowball stems, character pairs for unspaced
//!   scripts), for the FTS5 index and the question alike; rebuilding a site's index made by another.
//! - [`retrieve`]: hybrid BM25 + dense retrieval fused into a calibrated score.
//! - [`answer`]: extractive answer composition with `[n]` markers, and the localized fallback.
//! - [`curated`]: operator-written answers, preferred when a question matches one closely.
//! - [`demo`]: the demo site's knowledge, embedded in the binary.
//!
//! Request path: the question is embedded (pool) while nothing else waits on the runtime; retrieval
//! (FTS5 query, index sync if the generation moved, vector search, fusion, chunk fetch) runs in one
//! blocking task, at most `index::SEARCH_THREADS` at a time, after the site's curated answers are
//! matched against the question ([`curated`]: a close one is the answer); the answer is composed from
//! the passages, one per document.

pub mod analysis;
pub mod answer;
pub mod bm25;
pub mod chunk;
pub mod curated;
pub mod demo;
pub mod document;
pub mod embed;
pub mod gate;
pub mod generate;
pub mod import;
pub mod index;
pub mod language;
pub mod model;
mod onnx_initializers;
pub mod refresh;
pub mod reply;
pub mod retrieve;
pub mod runtime;
pub mod text;
pub mod unigram;

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use crate::config::KnowledgeConfig;
use crate::domain::{AnswerMode, Lang, SiteId};
use crate::metrics::Stage;
use crate::store::Store;
use embed::{EmbedError, Embedder};
use index::{IndexError, Indexes};
use runtime::RuntimeError;

#[derive(Debug, thiserror::Error)]
pub enum KnowledgeError {
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error(transparent)]
    Index(#[from] IndexError),
    #[error("retrieval task failed: {0}")]
    Join(String),
    #[error("no search slot: {0}")]
    Shed(#[from] gate::Shed),
}

impl KnowledgeError {
    /// Whether the question was turned away by a full line or its deadline (a 503, not a failure).
    pub fn is_shed(&self) -> bool {
        matches!(self, KnowledgeError::Shed(_) | KnowledgeError::Embed(EmbedError::Shed(_)))
    }
}

/// The lines in front of a server's shared query work (`limits.embedding_queue`, `limits.search_queue`,
/// `limits.queue_wait`); the CLI's are unbounded.
#[derive(Debug, Clone, Copy)]
pub struct Queues {
    pub embedding: gate::Bound,
    pub search: gate::Bound,
}

impl Queues {
    pub const UNBOUNDED: Queues = Queues { embedding: gate::Bound::UNBOUNDED, search: gate::Bound::UNBOUNDED };

    /// `limits.embedding_queue`, `limits.search_queue` and `limits.queue_wait`.
    pub fn from_limits(limits: &crate::config::LimitsConfig) -> Result<Queues, crate::config::ConfigError> {
        let wait = limits.queue_wait()?;
        Ok(Queues {
            embedding: gate::Bound { max_waiting: limits.embedding_queue, wait },
            search: gate::Bound { max_waiting: limits.search_queue, wait },
        })
    }
}

/// A question as the API received it, validated.
#[derive(Debug, Clone)]
pub struct Question {
    pub text: String,
    /// Documents to cite at most.
    pub top_k: usize,
    /// The client's `scoreThreshold`, honoured exactly; `None` applies the operator's `min_score`.
    pub threshold: Option<f32>,
    pub lang: Lang,
    /// The conversation's previous question, when this one continues a conversation.
    pub context: Option<String>,
}

/// Questions of at most this many words are read as follow-ups of the conversation's previous question.
const FOLLOW_UP_WORDS: usize = 6;

impl Question {
    /// What retrieval searches for: a short question in a conversation ("and on Sundays?", "how much is
    /// it?") is searched together with the previous question; a longer one stands on its own.
    pub fn search_text(&self) -> String {
        match &self.context {
            Some(prev) if self.text.split_whitespace().count() <= FOLLOW_UP_WORDS => format!("{prev} {}", self.text),
            _ => self.text.clone(),
        }
    }
}

/// A cited source, as the API shows it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Source {
    pub id: String,
    pub document_id: String,
    pub title: String,
    pub url: Option<String>,
    pub snippet: String,
    pub score: f32,
}

/// The outcome of a question.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    pub id: String,
    pub answer: String,
    pub sources: Vec<Source>,
    pub resolved: bool,
    pub lang: String,
    pub latency_ms: u64,
    /// `cnv_...`: send it back with the next question to continue the conversation.
    pub conversation_id: String,
    /// How the answer was made: `extractive` (sentences quoted from the sources) or `generative`
    /// (sentences written by the operator's model, each supported by the sources it cites).
    pub mode: AnswerMode,
    /// The model's part, for the query log; never in the response.
    #[serde(skip)]
    pub generation: Option<crate::store::queries::GenerationLog>,
}

/// The passages as the API cites them: `[i + 1]` in the answer is `sources[i]`.
pub fn sources(passages: Vec<retrieve::Passage>) -> Vec<Source> {
    passages
        .into_iter()
        .map(|p| Source {
            id: p.chunk.id,
            document_id: p.chunk.document_id,
            title: p.chunk.heading,
            url: p.chunk.url,
            snippet: p.chunk.text,
            score: (p.score * 10_000.0).round() / 10_000.0,
        })
        .collect()
}

/// What retrieval found for a question.
#[derive(Debug)]
pub struct Found {
    /// Empty when a curated answer matched.
    pub passages: Vec<retrieve::Passage>,
    pub curated: Option<curated::Match>,
}

/// The curated answer, else the quoted answer from the passages, else the localized fallback with no
/// sources.
pub fn extractive(q: &Question, found: Found, started: Instant, conversation_id: String) -> Answer {
    let (text, sources) = match found.curated {
        Some(m) => (m.text(), vec![m.source()]),
        None => match answer::compose(&q.search_text(), q.lang.primary(), &found.passages) {
            Some(text) => (text, sources(found.passages)),
            None => (answer::fallback(q.lang.as_str()).to_owned(), Vec::new()),
        },
    };
    Answer {
        id: format!("qry_{}", ulid::Ulid::new()),
        answer: text,
        resolved: !sources.is_empty(),
        sources,
        lang: q.lang.as_str().to_owned(),
        latency_ms: started.elapsed().as_millis() as u64,
        conversation_id,
        mode: AnswerMode::Extractive,
        generation: None,
    }
}

/// Runs blocking index work off the caller: on the runtime's blocking pool inside a server, on a thread
/// of its own in a CLI command or a benchmark without one (`index` syncs, `bm25` builds).
fn in_background(work: impl FnOnce() + Send + 'static) {
    match tokio::runtime::Handle::try_current() {
        Ok(rt) => drop(rt.spawn_blocking(work)),
        Err(_) => drop(std::thread::spawn(work)),
    }
}

/// The directory under the data directory that holds the vector index files.
pub const INDEX_DIR: &str = "indexes";

pub struct Knowledge {
    pub embedder: Arc<Embedder>,
    pub indexes: Indexes,
    pub term_stats: retrieve::TermStats,
    /// Bounds concurrent retrievals (index searches need a reserved usearch context each).
    searches: gate::Gate,
    queues: Queues,
    /// The threshold of a question that sends none (`knowledge.min_score`).
    pub min_score: f32,
    /// How close a question must be to a curated answer's question to get it.
    pub curated_min_similarity: f32,
    /// Sites whose chunks are (partly) embedded by another model and being re-embedded: they are
    /// searched by BM25 alone until `refresh` is done, so the dense side never sees half a site.
    stale: std::sync::Mutex<std::collections::HashSet<SiteId>>,
    /// How long each stage of `ask` takes (Prometheus histograms, registered by `metrics::Metrics`).
    pub stages: crate::metrics::Stages,
}

impl std::fmt::Debug for Knowledge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Knowledge").field("embedder", &self.embedder).finish_non_exhaustive()
    }
}

impl Knowledge {
    /// Loads the runtime and model (or says exactly what is missing) and prepares the index directory.
    /// Questions wait as long as they need (the CLI); a server bounds the lines with [`open_with`](Self::open_with).
    pub fn open(config: &KnowledgeConfig, data_dir: &Path) -> Result<Arc<Knowledge>, RuntimeError> {
        Self::open_with(config, data_dir, Queues::UNBOUNDED)
    }

    /// As `open`, with the lines in front of the embedding sessions and the search slots bounded.
    pub fn open_with(config: &KnowledgeConfig, data_dir: &Path, queues: Queues) -> Result<Arc<Knowledge>, RuntimeError> {
        let embedder = Embedder::load(config)?;
        Ok(Arc::new(Knowledge {
            stale: Default::default(),
            stages: Default::default(),
            indexes: Indexes::new(data_dir.join(INDEX_DIR), embedder.fingerprint.clone()),
            embedder,
            term_stats: retrieve::TermStats::default(),
            searches: gate::Gate::new(index::SEARCH_THREADS),
            queues,
            min_score: config.min_score,
            curated_min_similarity: config.curated_min_similarity,
        }))
    }

    /// Answers a question from the site's knowledge with quoted sentences.
    pub async fn ask(self: &Arc<Self>, store: &Store, site: &SiteId, q: &Question, conversation_id: String) -> Result<Answer, KnowledgeError> {
        let started = Instant::now();
        let found = self.passages(store, site, q).await?;
        let t = Instant::now();
        let answer = extractive(q, found, started, conversation_id);
        self.stages.observe(Stage::Answer, t.elapsed());
        Ok(answer)
    }

    /// What answers a question: the operator's curated answer when one matches it closely, else the site's
    /// passages, best first, at most `top_k`, none below the threshold.
    pub async fn passages(self: &Arc<Self>, store: &Store, site: &SiteId, q: &Question) -> Result<Found, KnowledgeError> {
        let _permit = self.searches.enter(self.queues.search).await?;
        // BM25 needs no embedding: it runs while the question is embedded.
        let search = q.search_text();
        let (this, lstore, site_id, text, top_k, lang) = (self.clone(), store.clone(), *site, search.clone(), q.top_k, q.lang.primary().to_owned());
        let mode = if self.is_stale(site) { retrieve::Mode::Bm25 } else { retrieve::Mode::Hybrid };
        let lexical = tokio::task::spawn_blocking(move || {
            let (fusion, t) = (retrieve::Fusion::default(), Instant::now());
            let lex = retrieve::lexical(&lstore, &this.term_stats, &site_id, &text, &lang, retrieve::depth(top_k), &fusion, retrieve::Mode::Hybrid);
            this.stages.observe(Stage::Lexical, t.elapsed());
            lex
        });
        let t = Instant::now();
        let vector = match mode {
            retrieve::Mode::Bm25 => Vec::new(),
            _ => self.embedder.embed(vec![search], model::Role::Query, self.queues.embedding).await?.pop().unwrap_or_default(),
        };
        self.stages.observe(Stage::Embedding, t.elapsed());
        let lex = lexical.await.map_err(|e| KnowledgeError::Join(e.to_string()))??;
        let threshold = q.threshold.unwrap_or(self.min_score);
        let (this, store) = (self.clone(), store.clone());
        // A curated answer close enough to the question is preferred over the passages.
        let t = Instant::now();
        let (passages, curated) = tokio::task::spawn_blocking(move || -> Result<_, KnowledgeError> {
            let min = this.curated_min_similarity.max(threshold);
            let curated = curated::best_match(&store, &site_id, &this.embedder.fingerprint, &vector, min).map_err(IndexError::from)?;
            let passages = match curated {
                Some(_) => Vec::new(),
                None => retrieve::retrieve(&store, &this.indexes, &site_id, lex, &vector, top_k, threshold, mode)?,
            };
            Ok((passages, curated))
        })
        .await
        .map_err(|e| KnowledgeError::Join(e.to_string()))??;
        self.stages.observe(Stage::Vector, t.elapsed());
        Ok(Found { passages, curated })
    }

    /// Questions turned away since start: (embedding session, search slots), for the metrics.
    pub fn shed(&self) -> (u64, u64) {
        (self.embedder.shed(), self.searches.shed())
    }

    /// Whether the site is searched by BM25 alone while its chunks are re-embedded.
    pub fn is_stale(&self, site: &SiteId) -> bool {
        self.stale.lock().unwrap_or_else(|p| p.into_inner()).contains(site)
    }

    fn set_stale(&self, site: &SiteId, stale: bool) {
        let mut set = self.stale.lock().unwrap_or_else(|p| p.into_inner());
        if stale {
            set.insert(*site);
        } else {
            set.remove(site);
        }
    }

    /// Brings the site's vector index up to date with the store and saves it (after a CLI import).
    pub fn sync_index_blocking(&self, store: &Store, site: &SiteId) -> Result<usize, KnowledgeError> {
        let generation = store.site(*site).knowledge().generation().map_err(IndexError::from)?;
        Ok(self.indexes.sync(store, site, generation)?)
    }
}
