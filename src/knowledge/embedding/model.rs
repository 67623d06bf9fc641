//! What sitebot needs to know about an embedding model beyond its ONNX graph: the manifest
//! (`sitebot-model.json`, written by the script that derived the model) and the fingerprint that tells
//! which model made a stored embedding.
//!
//! A model directory without a manifest is read as all-MiniLM-L6-v2 always was: no prefixes, mean
//! pooling, 384 dimensions, 256 word pieces. The fingerprint is the manifest's name and the SHA-256 of
//! `model.onnx`, computed once when the model loads: two files that embed differently never share a
//! fingerprint, so vectors of different models are never compared with each other.

use std::io::Read;
use std::path::Path;

use serde::Deserialize;
use sha2::{Digest, Sha256};

/// The manifest's file name inside a model directory.
pub const MANIFEST_FILE: &str = "sitebot-model.json";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pooling {
    /// The mean of the token vectors (over the attention mask: one text per run, so every token).
    Mean,
    /// The first token's vector.
    Cls,
}

/// What a text is embedded as; asymmetric models (e5) are trained with a prefix for each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    Query,
    Passage,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Manifest {
    pub name: String,
    pub dimensions: usize,
    /// The model's maximum sequence length in word pieces, the framing tokens included.
    pub max_tokens: usize,
    pub pooling: Pooling,
    pub normalize: bool,
    #[serde(default)]
    pub query_prefix: String,
    #[serde(default)]
    pub passage_prefix: String,
}

impl Manifest {
    /// What a directory without a manifest holds: MiniLM as installed before manifests existed.
    fn legacy(dir: &Path) -> Manifest {
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "model".into());
        Manifest { name, dimensions: 384, max_tokens: 256, pooling: Pooling::Mean, normalize: true, query_prefix: String::new(), passage_prefix: String::new() }
    }

    /// The directory's manifest, or the legacy defaults when it has none.
    pub fn load(dir: &Path) -> Result<Manifest, String> {
        let path = dir.join(MANIFEST_FILE);
        if !path.is_file() {
            return Ok(Manifest::legacy(dir));
        }
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{MANIFEST_FILE}: {e}"))?;
        let m: Manifest = serde_json::from_str(&text).map_err(|e| format!("{MANIFEST_FILE}: {e}"))?;
        if m.max_tokens < 8 || m.dimensions == 0 {
            return Err(format!("{MANIFEST_FILE}: implausible maxTokens {} or dimensions {}", m.max_tokens, m.dimensions));
        }
        Ok(m)
    }

    pub fn prefix(&self, role: Purpose) -> &str {
        match role {
            Purpose::Query => &self.query_prefix,
            Purpose::Passage => &self.passage_prefix,
        }
    }
}

/// `name:sha256(model.onnx)`, hashed in a streaming pass (the file is 80 MB; about 0.3 s once).
pub fn fingerprint(name: &str, model: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(model)?;
    let mut hash = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hash.update(&buf[..n]);
    }
    Ok(format!("{name}:{}", hex::encode(hash.finalize())))
}

#[cfg(test)]
mod tests {
    use crate::knowledge::embedding::model::*;

    #[test]
    fn a_directory_without_manifest_is_read_as_minilm() {
        let dir = tempfile::tempdir().unwrap();
        let m = Manifest::load(dir.path()).unwrap();
        assert_eq!((m.dimensions, m.max_tokens, m.pooling, m.prefix(Purpose::Query)), (384, 256, Pooling::Mean, ""));
    }

    #[test]
    fn the_manifest_gives_prefixes_and_limits() {
        let dir = tempfile::tempdir().unwrap();
        let json = r#"{"name":"e5","dimensions":384,"maxTokens":512,"pooling":"mean","normalize":true,"queryPrefix":"query: ","passagePrefix":"passage: "}"#;
        std::fs::write(dir.path().join(MANIFEST_FILE), json).unwrap();
        let m = Manifest::load(dir.path()).unwrap();
        assert_eq!((m.name.as_str(), m.max_tokens, m.prefix(Purpose::Query), m.prefix(Purpose::Passage)), ("e5", 512, "query: ", "passage: "));
        std::fs::write(dir.path().join(MANIFEST_FILE), "not json").unwrap();
        assert!(Manifest::load(dir.path()).unwrap_err().contains(MANIFEST_FILE));
    }

    #[test]
    fn fingerprints_differ_with_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.onnx"), dir.path().join("b.onnx"));
        std::fs::write(&a, b"one").unwrap();
        std::fs::write(&b, b"two").unwrap();
        assert_ne!(fingerprint("m", &a).unwrap(), fingerprint("m", &b).unwrap());
        assert!(fingerprint("m", &a).unwrap().starts_with("m:"));
    }
}
