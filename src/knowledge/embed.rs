//! Sentence embeddings (all-MiniLM-L6-v2, int8, 384 dimensions, mean pooling, L2-normalized) on a
//! bounded pool, off the async runtime.
//!
//! Concurrency: the pool holds one ONNX session per core (`available_parallelism`), each single-threaded
//! (`intra_threads = 1`), so N requests embed in parallel on N cores and never oversubscribe them. Async
//! callers take a permit of a semaphore with as many permits as sessions, then run the inference in
//! `spawn_blocking` on a free session; a request beyond that waits for a permit instead of piling work
//! onto the blocking pool. Batches (imports) are sorted by length so that padding stays small, and are
//! cut into pieces of `BATCH` texts.
//!
//! ONNX Runtime is loaded dynamically (`ort::init_from`) once per process before the first session;
//! the embedder is cached per (library, model) so that servers built in one process (tests) share it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use fastembed::{InitOptionsUserDefined, Pooling, QuantizationMode, TextEmbedding, TokenizerFiles, UserDefinedEmbeddingModel};

use super::runtime::{self, RuntimeError};
use crate::config::KnowledgeConfig;

/// Embedding dimensions of the model.
pub const DIMENSIONS: usize = 384;
/// The model's maximum sequence length in word pieces; longer input is truncated.
pub const MAX_TOKENS: usize = 256;
/// Texts per inference call.
const BATCH: usize = 8;

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("embedding failed: {0}")]
    Inference(String),
    #[error("embedding task failed: {0}")]
    Join(String),
}

pub struct Embedder {
    sessions: Vec<Mutex<TextEmbedding>>,
    permits: tokio::sync::Semaphore,
    pub ort_library: PathBuf,
    pub model_dir: PathBuf,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder").field("sessions", &self.sessions.len()).field("model_dir", &self.model_dir).finish()
    }
}

type Cache = Mutex<HashMap<(PathBuf, PathBuf), Arc<Embedder>>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// Loads ONNX Runtime (once per process) from `path`.
pub fn load_runtime(path: &Path) -> Result<(), RuntimeError> {
    static LOADED: OnceLock<Result<(), String>> = OnceLock::new();
    let r = LOADED.get_or_init(|| {
        // Loads the library and checks its version; sessions then use ort's default environment.
        ort::init_from(path).map(drop).map_err(|e| e.to_string())
    });
    r.clone().map_err(|e| RuntimeError::OrtCorrupt(path.to_owned(), e))
}

fn read(dir: &Path, file: &str) -> Result<Vec<u8>, RuntimeError> {
    std::fs::read(dir.join(file)).map_err(|e| RuntimeError::ModelCorrupt(dir.to_owned(), format!("{file}: {e}")))
}

impl Embedder {
    /// The process-wide embedder for this configuration, loading the runtime and model on first use.
    pub fn load(config: &KnowledgeConfig) -> Result<Arc<Embedder>, RuntimeError> {
        let lib = runtime::ort_library(config)?;
        let dir = runtime::model_dir(config)?;
        let mut cache = cache().lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = cache.get(&(lib.clone(), dir.clone())) {
            return Ok(e.clone());
        }
        load_runtime(&lib)?;
        let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        let onnx = read(&dir, "model.onnx")?;
        let files = TokenizerFiles {
            tokenizer_file: read(&dir, "tokenizer.json")?,
            config_file: read(&dir, "config.json")?,
            special_tokens_map_file: read(&dir, "special_tokens_map.json")?,
            tokenizer_config_file: read(&dir, "tokenizer_config.json")?,
        };
        let mut sessions = Vec::with_capacity(threads);
        for _ in 0..threads {
            let model = UserDefinedEmbeddingModel::new(onnx.clone(), files.clone()).with_pooling(Pooling::Mean).with_quantization(QuantizationMode::None);
            let options = InitOptionsUserDefined::new().with_max_length(MAX_TOKENS).with_intra_threads(1);
            let session = TextEmbedding::try_new_from_user_defined(model, options).map_err(|e| RuntimeError::ModelCorrupt(dir.clone(), e.to_string()))?;
            sessions.push(Mutex::new(session));
        }
        let embedder = Arc::new(Embedder { permits: tokio::sync::Semaphore::new(sessions.len()), sessions, ort_library: lib.clone(), model_dir: dir.clone() });
        // A model that loads but does not produce 384-dimensional vectors is the wrong model.
        let probe = embedder.embed_blocking(&["probe"]).map_err(|e| RuntimeError::ModelCorrupt(dir.clone(), e.to_string()))?;
        if probe.first().map(Vec::len) != Some(DIMENSIONS) {
            return Err(RuntimeError::ModelCorrupt(dir, format!("expected {DIMENSIONS}-dimensional embeddings")));
        }
        cache.insert((lib, dir), embedder.clone());
        Ok(embedder)
    }

    pub fn pool_size(&self) -> usize {
        self.sessions.len()
    }

    /// Embeds on the calling thread (CLI, blocking tasks): takes a free session, or waits for one.
    pub fn embed_blocking<S: AsRef<str> + Send + Sync>(&self, texts: &[S]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let mut guard = self.sessions.iter().find_map(|s| s.try_lock().ok());
        if guard.is_none() {
            guard = Some(self.sessions[0].lock().unwrap_or_else(|p| p.into_inner()));
        }
        let mut session = guard.expect("a session");
        // Sorting by length keeps padding small within a batch; the output goes back in input order.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].as_ref().len());
        let mut out = vec![Vec::new(); texts.len()];
        for piece in order.chunks(BATCH) {
            let batch: Vec<&str> = piece.iter().map(|&i| texts[i].as_ref()).collect();
            let vectors = session.embed(&batch, Some(BATCH)).map_err(|e| EmbedError::Inference(e.to_string()))?;
            for (&i, v) in piece.iter().zip(vectors) {
                out[i] = v;
            }
        }
        Ok(out)
    }

    /// Embeds a large batch on every session of the pool at once (imports), from a blocking context.
    pub fn embed_parallel_blocking(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let n = self.sessions.len().min(texts.len().div_ceil(BATCH)).max(1);
        if n == 1 {
            return self.embed_blocking(texts);
        }
        let part = texts.len().div_ceil(n);
        std::thread::scope(|scope| {
            let handles: Vec<_> = texts.chunks(part).map(|piece| scope.spawn(move || self.embed_blocking(piece))).collect();
            let mut out = Vec::with_capacity(texts.len());
            for h in handles {
                out.extend(h.join().map_err(|_| EmbedError::Join("an embedding thread panicked".into()))??);
            }
            Ok(out)
        })
    }

    /// Embeds from async code: waits for a permit, then runs on the blocking pool.
    pub async fn embed(self: &Arc<Self>, texts: Vec<String>) -> Result<Vec<Vec<f32>>, EmbedError> {
        let _permit = self.permits.acquire().await.map_err(|e| EmbedError::Join(e.to_string()))?;
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.embed_blocking(&texts)).await.map_err(|e| EmbedError::Join(e.to_string()))?
    }
}
