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
//! ONNX Runtime is loaded dynamically (`ort::init_from`) once per process, into one environment that
//! every session shares; the embedder is cached per (library, model) so that servers built in one
//! process (tests) share it. The sessions are driven through `ort` directly (tokenizer, then the graph,
//! then mean pooling over the attention mask and L2 normalization). Basic graph optimizations (level 1)
//! constant-fold the model's quantized weights once: without them a short query takes ~14 ms instead
//! of ~5 ms; the extended levels measured no faster and no smaller on this model. Each session holds
//! about 140 MiB resident (folded weights and its arena), which is why there is one per core and no
//! more.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::Tensor;
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

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

fn inference(e: impl std::fmt::Display) -> EmbedError {
    EmbedError::Inference(e.to_string())
}

pub struct Embedder {
    sessions: Vec<Mutex<Session>>,
    tokenizer: Tokenizer,
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

/// Loads ONNX Runtime (once per process) from `path` and returns the process's environment.
pub fn load_runtime(path: &Path) -> Result<ort::environment::Environment, RuntimeError> {
    static ENV: OnceLock<Result<ort::environment::Environment, String>> = OnceLock::new();
    let r = ENV.get_or_init(|| {
        let builder = ort::init_from(path).map_err(|e| e.to_string())?;
        builder.with_name("sitebot").build().map_err(|e| e.to_string())
    });
    r.clone().map_err(|e| RuntimeError::OrtCorrupt(path.to_owned(), e))
}

fn corrupt(dir: &Path, e: impl std::fmt::Display) -> RuntimeError {
    RuntimeError::ModelCorrupt(dir.to_owned(), e.to_string())
}

fn load_tokenizer(dir: &Path) -> Result<Tokenizer, RuntimeError> {
    let mut t = Tokenizer::from_file(dir.join("tokenizer.json")).map_err(|e| corrupt(dir, format!("tokenizer.json: {e}")))?;
    let pad_id = t.token_to_id("[PAD]").unwrap_or(0);
    t.with_padding(Some(PaddingParams { strategy: PaddingStrategy::BatchLongest, pad_id, pad_token: "[PAD]".into(), ..Default::default() }));
    t.with_truncation(Some(TruncationParams { max_length: MAX_TOKENS, ..Default::default() })).map_err(|e| corrupt(dir, e))?;
    Ok(t)
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
        let env = load_runtime(&lib)?;
        // Tokenizing on rayon's pool would compete with the sessions for the same cores.
        tokenizers::utils::parallelism::set_parallelism(false);
        let tokenizer = load_tokenizer(&dir)?;
        // Loaded from the file rather than from a copy in memory: ONNX Runtime then keeps no second copy
        // of the model bytes (measured: about 10 MiB less resident per session).
        let model = dir.join("model.onnx");
        if !model.is_file() {
            return Err(corrupt(&dir, "model.onnx is missing"));
        }
        let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        let mut sessions = Vec::with_capacity(threads);
        for _ in 0..threads {
            let session = Session::builder(&env)
                .and_then(|b| b.with_optimization_level(GraphOptimizationLevel::Level1).map_err(Into::into))
                .and_then(|b| b.with_intra_threads(1).map_err(Into::into))
                .and_then(|mut b| b.commit_from_file(&model))
                .map_err(|e| corrupt(&dir, e))?;
            sessions.push(Mutex::new(session));
        }
        let embedder =
            Arc::new(Embedder { permits: tokio::sync::Semaphore::new(sessions.len()), sessions, tokenizer, ort_library: lib.clone(), model_dir: dir.clone() });
        // A model that loads but does not produce 384-dimensional vectors is the wrong model.
        let probe = embedder.embed_blocking(&["probe"]).map_err(|e| corrupt(&dir, e))?;
        if probe.first().map(Vec::len) != Some(DIMENSIONS) {
            return Err(corrupt(&dir, format!("expected {DIMENSIONS}-dimensional embeddings")));
        }
        cache.insert((lib, dir), embedder.clone());
        Ok(embedder)
    }

    /// One inference call: tokenize, run, mean-pool over the attention mask, normalize.
    fn run(&self, session: &mut Session, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let enc = self.tokenizer.encode_batch(texts.to_vec(), true).map_err(inference)?;
        let (b, s) = (enc.len(), enc.first().map_or(0, |e| e.len()));
        let mut ids = Vec::with_capacity(b * s);
        let mut mask = Vec::with_capacity(b * s);
        let mut types = Vec::with_capacity(b * s);
        for e in &enc {
            ids.extend(e.get_ids().iter().map(|&x| x as i64));
            mask.extend(e.get_attention_mask().iter().map(|&x| x as i64));
            types.extend(e.get_type_ids().iter().map(|&x| x as i64));
        }
        let shape = [b as i64, s as i64];
        let outputs = session
            .run(ort::inputs![
                "input_ids" => Tensor::from_array((shape, ids)).map_err(inference)?,
                "attention_mask" => Tensor::from_array((shape, mask.clone())).map_err(inference)?,
                "token_type_ids" => Tensor::from_array((shape, types)).map_err(inference)?,
            ])
            .map_err(inference)?;
        let (out_shape, hidden) = outputs["last_hidden_state"].try_extract_tensor::<f32>().map_err(inference)?;
        let d = *out_shape.last().unwrap_or(&0) as usize;
        if d != DIMENSIONS || hidden.len() != b * s * d {
            return Err(EmbedError::Inference(format!("unexpected output shape {out_shape:?}")));
        }
        let mut out = Vec::with_capacity(b);
        for i in 0..b {
            let mut v = vec![0f32; d];
            let mut n = 0f32;
            for t in 0..s {
                if mask[i * s + t] == 0 {
                    continue;
                }
                n += 1.0;
                let row = &hidden[(i * s + t) * d..(i * s + t + 1) * d];
                for (acc, x) in v.iter_mut().zip(row) {
                    *acc += x;
                }
            }
            // The mean over n tokens, L2-normalized, is the sum normalized: n cancels out.
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            if n == 0.0 || norm == 0.0 {
                return Err(EmbedError::Inference("empty input".into()));
            }
            v.iter_mut().for_each(|x| *x /= norm);
            out.push(v);
        }
        Ok(out)
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
            let vectors = self.run(&mut session, &batch)?;
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
