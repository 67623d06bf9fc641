//! Knowledge: a site's documents turned into grounded answers with citations, in four wings.
//!
//! - [`embedding`]: text to vectors: the model and its manifest, ONNX Runtime and its sessions, the
//!   tokenizer.
//! - [`search`]: a question to ranked passages: analysis (text to search terms per language), each
//!   site's BM25 index in memory, each site's vector index, and their fusion into one calibrated score.
//! - [`import`]: documents to chunks: parsers per format, the documents they make, chunking, the
//!   idempotent import pipeline, the demo site's knowledge, and the refresh that re-embeds what another
//!   model embedded.
//! - [`answer`]: passages to an answer: quoted sentences with `[n]` markers, the operator's curated
//!   answers, generated sentences each checked against what they cite, and the reply that chooses.
//!
//! Shared by the wings: [`gate`] (the bounded lines in front of shared work), [`language`] (what
//! language a text is in) and [`text`] (sentences, whitespace).
//!
//! [`Engine`] holds what one process loads once (the embedder, both kinds of index, the fusion model) and
//! finds what answers a question ([`Engine::passages`]): BM25 runs on the blocking pool while the question
//! is embedded (after it, for a question whose words are embedded too: `search::nearest`); then, in one
//! blocking task (at most `search::vector::SEARCH_THREADS` at a time), the site's curated answers are
//! matched against the question (a close one is the answer), else the vector search, the fusion and the
//! chunk fetch give the passages, one per document. The one path from a
//! request to a recorded answer is `crate::answering`'s.

pub mod answer;
pub mod embedding;
pub mod gate;
pub mod import;
pub mod language;
pub mod search;
pub mod text;

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use crate::config::KnowledgeConfig;
use crate::domain::{Lang, SiteId};
use crate::metrics::Stage;
use crate::store::{Store, StoreError};
use embedding::runtime::RuntimeError;
use embedding::{EmbedError, Embedder};
use search::bm25::Bm25Indexes;
use search::vector::{IndexError, VectorIndexes};
use search::{Fusion, Mode, Passage};

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
        Ok(Queues { embedding: gate::Bound { max_waiting: limits.embedding_queue, wait }, search: gate::Bound { max_waiting: limits.search_queue, wait } })
    }
}

/// A question ready to search for and answer.
#[derive(Debug, Clone)]
pub struct Question {
    pub text: String,
    /// Documents to cite at most.
    pub top_k: usize,
    /// The client's `scoreThreshold`, honoured exactly; `None` applies the operator's `min_score`.
    pub threshold: Option<f32>,
    /// The answer's language: the request's, else the question's own, else the site's.
    pub lang: Lang,
    /// The question's own language when detected confidently (ISO 639-1): a passage in another
    /// language is scored by the cross-lingual model (`search::CrossLingual`).
    pub detected: Option<&'static str>,
    /// The conversation's previous question, when this one continues a conversation.
    pub context: Option<String>,
}

/// Whether the English model scores a question's passages, given its confident language and the text
/// searched for: the question is English, detected confidently or, when no language is, as the detector's
/// best guess. The English model reads only English: German questions on English knowledge lost 2.6
/// points of R@1 on XQuAD-R when every question not detected confidently was given it, while a fifth of
/// SciFact's English claims are not detected confidently. Public for the benchmarks.
pub fn is_english(detected: Option<&str>, text: &str) -> bool {
    match detected {
        Some(lang) => lang == "en",
        None => language::detect(text).is_some_and(|d| d.code == "en"),
    }
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

/// What retrieval found for a question.
#[derive(Debug)]
pub struct Found {
    /// Empty when a curated answer matched.
    pub passages: Vec<Passage>,
    pub curated: Option<answer::curated::Match>,
    /// The question's embedding (empty while the site is searched by BM25 alone).
    pub vector: Vec<f32>,
}

/// The first pass of a question's ranking (`Engine::passages`): its passages, or, for an English question
/// the main model is unsure of, the ranking to rank again with the English model.
enum First {
    Found(search::Retrieved),
    Unsure(Vec<search::Candidate>, i64),
}

/// What a question searches with once its lexical hits are found (`Engine::settle`).
struct Ask {
    threshold: f32,
    text: String,
    lang: String,
    detected: Option<&'static str>,
    top_k: usize,
    soft: Vec<(String, f64)>,
    mode: Mode,
}

/// Runs blocking index work off the caller: on the runtime's blocking pool inside a server, on a thread
/// of its own in a CLI command or a benchmark without one (vector index syncs, BM25 builds).
fn in_background(work: impl FnOnce() + Send + 'static) {
    match tokio::runtime::Handle::try_current() {
        Ok(rt) => drop(rt.spawn_blocking(work)),
        Err(_) => drop(std::thread::spawn(work)),
    }
}

/// The directory under the data directory that holds the vector index files.
pub const INDEX_DIR: &str = "indexes";

/// What one process loads once to find the passages that answer questions, for every site.
pub struct Engine {
    pub embedder: Arc<Embedder>,
    /// The English model (`knowledge.english_model`), when loaded: an English question the main model is
    /// unsure of is ranked again on English passages with its cosine (`search::English`).
    pub english: Option<Arc<Embedder>>,
    /// Each site's vector index, derived from the stored embeddings.
    pub vectors: VectorIndexes,
    /// Each site's BM25 index in memory, used instead of FTS5 once it holds the site's generation.
    pub bm25: Arc<Bm25Indexes>,
    /// Document frequencies of question terms, for the FTS5 query while a site's BM25 index builds.
    pub term_stats: search::TermStats,
    /// Bilingual dictionaries: a question's words in English, for BM25 on English knowledge.
    pub dictionaries: search::dictionary::Dictionaries,
    /// Each site's English terms embedded, for the words of questions in the translated languages
    /// (`knowledge.nearest_terms`; `None` when off).
    pub nearest: Option<search::nearest::NearestTerms>,
    /// The fusion model every question is ranked with.
    pub fusion: Fusion,
    /// Bounds concurrent retrievals (index searches need a reserved usearch context each).
    searches: gate::Gate,
    queues: Queues,
    /// The threshold of a question that sends none (`knowledge.min_score`).
    pub min_score: f32,
    /// How close a question must be to a curated answer's question to get it.
    pub curated_min_similarity: f32,
    /// Sites whose chunks are (partly) embedded by another model and being re-embedded: they are
    /// searched by BM25 alone until `import::refresh` is done, so the dense side never sees half a site.
    stale: std::sync::Mutex<std::collections::HashSet<SiteId>>,
    /// How long each stage of a question takes (Prometheus histograms, registered by `metrics::Metrics`).
    pub stages: crate::metrics::Stages,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").field("embedder", &self.embedder).finish_non_exhaustive()
    }
}

impl Engine {
    /// Loads the runtime and model (or says exactly what is missing) and prepares the index directory.
    /// Questions wait as long as they need (the CLI); a server bounds the lines with [`open_with`](Self::open_with).
    pub fn open(config: &KnowledgeConfig, data_dir: &Path) -> Result<Arc<Engine>, RuntimeError> {
        Self::open_with(config, data_dir, Queues::UNBOUNDED)
    }

    /// As `open`, with the lines in front of the embedding sessions and the search slots bounded.
    pub fn open_with(config: &KnowledgeConfig, data_dir: &Path, queues: Queues) -> Result<Arc<Engine>, RuntimeError> {
        let embedder = Embedder::load(config)?;
        let english = Embedder::load_english(config)?;
        if english.is_none() && config.english_model {
            tracing::warn!(
                "English model ({}) not found next to the binary or in the installer's cache: English questions are ranked without it; run ./install.sh, or set knowledge.english_model_dir",
                embedding::runtime::ENGLISH_MODEL_NAME
            );
        }
        Ok(Arc::new(Engine {
            english,
            stale: Default::default(),
            stages: Default::default(),
            vectors: VectorIndexes::new(data_dir.join(INDEX_DIR), embedder.fingerprint.clone()),
            bm25: Default::default(),
            embedder,
            term_stats: search::TermStats::default(),
            dictionaries: search::dictionary::Dictionaries::new(search::dictionary::dir(config)),
            nearest: config.nearest_terms.then(|| search::nearest::NearestTerms::saved_in(data_dir.join(INDEX_DIR))),
            fusion: Fusion::default(),
            searches: gate::Gate::new(search::vector::SEARCH_THREADS),
            queues,
            min_score: config.min_score,
            curated_min_similarity: config.curated_min_similarity,
        }))
    }

    /// What answers a question: the operator's curated answer when one matches it closely, else the site's
    /// passages, best first, at most `top_k`, none below the threshold.
    pub async fn passages(self: &Arc<Self>, store: &Store, site: &SiteId, q: &Question) -> Result<Found, KnowledgeError> {
        let _permit = self.searches.enter(self.queues.search).await?;
        let search = q.search_text();
        let mode = if self.is_stale(site) { Mode::Bm25 } else { Mode::Hybrid };
        // A question in a translated language on a site whose English terms are embedded: its words are
        // embedded with it, and the terms nearest them searched too (`search::nearest`), so BM25 waits
        // for the embedding. Otherwise BM25 needs no embedding: it runs while the question is embedded.
        let translated = q.detected.filter(|l| search::TRANSLATED_LANGUAGES.contains(l));
        let terms = self.nearest.as_ref().filter(|_| mode == Mode::Hybrid && translated.is_some()).and_then(|n| n.get(site));
        let words = terms.as_ref().map(|_| search::nearest::words(&search)).unwrap_or_default();
        let known = terms.as_ref().map(|t| t.lookup(&words)).unwrap_or_default();
        // On the blocking pool: the nearest terms of the words (`unseen` holds the vectors of those the
        // site had not met), then BM25.
        let lexical = |unseen: Vec<Vec<f32>>| {
            let (this, lstore, site_id, text, top_k, lang, detected) =
                (self.clone(), store.clone(), *site, search.clone(), q.top_k, q.lang.primary().to_owned(), q.detected);
            let (terms, known) = (terms.clone(), known.clone());
            tokio::task::spawn_blocking(move || {
                let t = Instant::now();
                let soft = terms.map(|t| t.nearest(&known, &unseen)).unwrap_or_default();
                let query = search::LexicalQuery { text: &text, lang: &lang, detected, depth: search::depth(top_k), soft: &soft };
                let lex = search::lexical(&lstore, &this.bm25, &this.term_stats, &this.dictionaries, &site_id, &query, &this.fusion, mode);
                this.stages.observe(Stage::Lexical, t.elapsed());
                lex.map(|lex| (lex, soft))
            })
        };
        let early = terms.is_none().then(|| lexical(Vec::new()));
        let t = Instant::now();
        let vectors = match mode {
            Mode::Bm25 => Vec::new(),
            _ => {
                let texts = std::iter::once(search.clone()).chain(known.unseen().map(String::from)).collect();
                self.embedder.embed(texts, embedding::model::Purpose::Query, self.queues.embedding).await?
            }
        };
        let mut vectors = vectors.into_iter();
        let vector = vectors.next().unwrap_or_default();
        let mut embedding = t.elapsed();
        let lexical = match early {
            Some(task) => task,
            None => lexical(vectors.collect()),
        };
        let (lex, soft) = lexical.await.map_err(|e| KnowledgeError::Join(e.to_string()))??;
        // The site's English terms are embedded (again) when a question in a translated language finds
        // them missing or older than the knowledge it searched, once its in-memory index holds it.
        if let (Some(nearest), Some(_), true) = (&self.nearest, translated, lex.on_english) {
            nearest.refresh(&self.embedder, store, &self.bm25, site, lex.generation);
        }
        let ask = Ask {
            threshold: q.threshold.unwrap_or(self.min_score),
            text: q.search_text(),
            lang: q.lang.primary().to_owned(),
            detected: q.detected,
            top_k: q.top_k,
            soft,
            mode,
        };
        // An English question the main model is unsure of is ranked again with the English model
        // (`search::English`); a question that model's line turns away keeps the first ranking.
        let english = self.english.clone().filter(|_| mode == Mode::Hybrid && is_english(q.detected, &search));
        // A curated answer close enough to the question is preferred over the passages.
        let t = Instant::now();
        let (this, owned, site_id, may_rerank) = (self.clone(), store.clone(), *site, english.is_some());
        let (first, curated, vector, ask) = tokio::task::spawn_blocking(move || -> Result<_, KnowledgeError> {
            let min = this.curated_min_similarity.max(ask.threshold);
            let curated = answer::curated::best_match(&owned, &site_id, &this.embedder.fingerprint, &vector, min).map_err(IndexError::from)?;
            if curated.is_some() {
                return Ok((None, curated, vector, ask));
            }
            let generation = lex.generation;
            let ranked = search::fuse(&owned, &this.vectors, &site_id, lex, &vector, search::depth(ask.top_k), &this.fusion, ask.mode)?;
            if may_rerank && this.fusion.english.wanted(&ranked) {
                return Ok((Some(First::Unsure(ranked, generation)), None, vector, ask));
            }
            let found = this.settle(&owned, &site_id, ranked, generation, &vector, None, &ask)?;
            Ok((Some(First::Found(found)), None, vector, ask))
        })
        .await
        .map_err(|e| KnowledgeError::Join(e.to_string()))??;
        let mut vector_stage = t.elapsed();
        let found = match first {
            None => None,
            Some(First::Found(found)) => Some(found),
            Some(First::Unsure(ranked, generation)) => {
                let e = english.expect("reranked only with the English model");
                let t = Instant::now();
                let english_vector = match e.embed(vec![search.clone()], embedding::model::Purpose::Query, self.queues.embedding).await {
                    Ok(mut v) => v.pop(),
                    Err(err) => {
                        tracing::debug!(error = %err, "English embedding skipped");
                        None
                    }
                };
                embedding += t.elapsed();
                let t = Instant::now();
                let (this, owned, site_id, vector) = (self.clone(), store.clone(), *site, vector.clone());
                let found = tokio::task::spawn_blocking(move || -> Result<_, KnowledgeError> {
                    let english = english_vector.as_deref().map(|v| search::EnglishQuery { model: &e.fingerprint, vector: v });
                    this.settle(&owned, &site_id, ranked, generation, &vector, english, &ask)
                })
                .await
                .map_err(|e| KnowledgeError::Join(e.to_string()))??;
                vector_stage += t.elapsed();
                Some(found)
            }
        };
        self.stages.observe(Stage::Embedding, embedding);
        self.stages.observe(Stage::Vector, vector_stage);
        Ok(Found { passages: found.map(|f| f.passages).unwrap_or_default(), curated, vector })
    }

    /// The passages of a ranking of the knowledge at `generation` (blocking), reranked first by the English
    /// model when `english` is given (`search::rerank_english`). When an import committed during the search,
    /// the knowledge is searched again as it is now (twice at most, so a site being imported without pause
    /// still gets an answer), reranked as its own ranking wants.
    #[allow(clippy::too_many_arguments)] // the two passes of `passages` differ in each
    fn settle(
        &self,
        store: &Store,
        site: &SiteId,
        mut ranked: Vec<search::Candidate>,
        generation: i64,
        vector: &[f32],
        english: Option<search::EnglishQuery<'_>>,
        ask: &Ask,
    ) -> Result<search::Retrieved, KnowledgeError> {
        if let Some(e) = english {
            search::rerank_english(store, &self.vectors, site, generation, &mut ranked, e, &self.fusion)?;
        }
        let mut found = search::settle(store, site, ranked, generation, ask.top_k, ask.threshold)?;
        for _ in 0..2 {
            if !found.moved {
                break;
            }
            let query = search::LexicalQuery { text: &ask.text, lang: &ask.lang, detected: ask.detected, depth: search::depth(ask.top_k), soft: &ask.soft };
            let lex = search::lexical(store, &self.bm25, &self.term_stats, &self.dictionaries, site, &query, &self.fusion, ask.mode)?;
            let generation = lex.generation;
            let mut ranked = search::fuse(store, &self.vectors, site, lex, vector, search::depth(ask.top_k), &self.fusion, ask.mode)?;
            if let Some(e) = english.filter(|_| self.fusion.english.wanted(&ranked)) {
                search::rerank_english(store, &self.vectors, site, generation, &mut ranked, e, &self.fusion)?;
            }
            found = search::settle(store, site, ranked, generation, ask.top_k, ask.threshold)?;
        }
        Ok(found)
    }

    /// The models an import embeds with (`import::Models`).
    pub fn models(&self) -> import::Models<'_> {
        import::Models { main: &self.embedder, english: self.english.as_deref() }
    }

    /// Questions turned away since start: (embedding session, search slots), for the metrics.
    pub fn shed(&self) -> (u64, u64) {
        (self.embedder.shed(), self.searches.shed())
    }

    /// Forgets everything held of a deleted site (blocking): its vector index in memory and on disk, its
    /// BM25 index, its embedded terms and its questions' words.
    pub fn forget_site(&self, site: &SiteId) {
        self.vectors.drop_site(site);
        self.forget_in_memory(site);
    }

    /// Forgets what memory holds of a site: its vector and BM25 indexes, its embedded terms and its questions'
    /// words.
    fn forget_in_memory(&self, site: &SiteId) {
        self.vectors.forget(site);
        self.bm25.drop_site(site);
        if let Some(nearest) = &self.nearest {
            nearest.drop_site(site);
        }
        self.set_stale(site, false);
    }

    /// The sites of which something is held in memory: a vector or BM25 index, embedded terms.
    pub fn held_sites(&self) -> std::collections::BTreeSet<SiteId> {
        let mut held: std::collections::BTreeSet<SiteId> = self.vectors.held().into_iter().collect();
        held.extend(self.bm25.held());
        held.extend(self.nearest.iter().flat_map(|n| n.held()));
        held
    }

    /// Forgets what memory holds of sites no longer in the store (blocking): those another process deleted
    /// (`sitebot site delete`, which removes their files), whose requests are refused since. Their files are
    /// left alone: they are gone, or belong to the same site imported again meanwhile. Returns the sites.
    pub fn forget_deleted(&self, store: &Store) -> Result<Vec<SiteId>, StoreError> {
        let mut gone = Vec::new();
        for site in self.held_sites() {
            if store.site(site).get()?.is_none() {
                self.forget_in_memory(&site);
                gone.push(site);
            }
        }
        Ok(gone)
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

    /// Sites whose saved vector index is missing or behind the database (blocking): every site with
    /// knowledge after a restore, whose data directory had none.
    pub fn missing_indexes_blocking(&self, store: &Store) -> Result<Vec<SiteId>, KnowledgeError> {
        let mut missing = Vec::new();
        for site in store.sites().list().map_err(IndexError::from)? {
            let generation = store.site(site.id).knowledge().generation().map_err(IndexError::from)?;
            if !self.vectors.saved_is_current(&site.id, generation) {
                missing.push(site.id);
            }
        }
        Ok(missing)
    }

    /// Builds, saves and keeps in memory the vector index of each of these sites (blocking), one after
    /// the other until `stop`; returns the vectors indexed.
    pub fn build_indexes_blocking(&self, store: &Store, sites: &[SiteId], stop: &tokio_util::sync::CancellationToken) -> Result<usize, KnowledgeError> {
        let mut vectors = 0;
        for site in sites {
            if stop.is_cancelled() {
                break;
            }
            vectors += self.sync_index_blocking(store, site)?;
        }
        Ok(vectors)
    }

    /// Brings the site's vector index up to date with the store and saves it (after a CLI import).
    pub fn sync_index_blocking(&self, store: &Store, site: &SiteId) -> Result<usize, KnowledgeError> {
        let generation = store.site(*site).knowledge().generation().map_err(IndexError::from)?;
        Ok(self.vectors.sync(store, site, generation)?)
    }
}
