//! `sitebot doctor`: checks every prerequisite of `serve` and says what to do about a failure.
//! Each check prints `ok` or `FAIL` with what it found; the exit status is non-zero if any failed.
//! With `[replication]` naming Litestream's metrics, it also measures the replica's lag (`replica`),
//! committing one probe row to do so.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::config::Config;
use crate::knowledge::embedding::model::Purpose;
use crate::knowledge::embedding::runtime;
use crate::knowledge::embedding::{DIMENSIONS, Embedder};
use crate::knowledge::import::refresh;

struct Checks {
    failed: usize,
}

impl Checks {
    fn report(&mut self, what: &str, outcome: Result<String, String>) {
        match outcome {
            Ok(detail) => println!("ok    {what}: {detail}"),
            Err(why) => {
                self.failed += 1;
                println!("FAIL  {what}: {why}");
            }
        }
    }
}

fn data_dir_check(dir: &Path) -> Result<String, String> {
    crate::app::ensure_data_dir(dir).map_err(|e| format!("{e:#}"))?;
    let mode = std::fs::metadata(dir).map_err(|e| e.to_string())?.permissions().mode() & 0o777;
    let probe = dir.join(".doctor-probe");
    std::fs::write(&probe, b"ok").map_err(|e| format!("{} is not writable: {e}", dir.display()))?;
    let _ = std::fs::remove_file(&probe);
    if mode & 0o077 != 0 {
        return Err(format!("{} has mode {mode:o}; run chmod 700 {}", dir.display(), dir.display()));
    }
    Ok(format!("{} (mode {mode:o}, writable)", dir.display()))
}

/// The data directory's free space against `storage.min_free_mb`.
fn free_space_check(config: &Config, dir: &Path) -> Result<String, String> {
    let free = crate::disk::available(dir).map_err(|e| format!("cannot measure the free space of {}: {e}", dir.display()))? >> 20;
    let min = config.storage.min_free_mb;
    if free < min {
        return Err(format!(
            "{free} MiB free, below storage.min_free_mb ({min} MiB): questions are not logged, widget events and feedback are not stored, leads are refused; free some space"
        ));
    }
    Ok(format!("{free} MiB free (storage.min_free_mb {min})"))
}

fn certificate_check(config: &Config, data_dir: &Path) -> Result<String, String> {
    let (cert, key) = match (&config.server.tls_cert, &config.server.tls_key) {
        (Some(c), Some(k)) => (c.clone(), k.clone()),
        _ => crate::http::tls::self_signed_paths(data_dir),
    };
    if !cert.exists() && config.server.tls_cert.is_none() {
        return Ok(format!("no certificate yet; serve creates a self-signed one in {}", cert.display()));
    }
    for p in [&cert, &key] {
        std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
    }
    Ok(format!("{} readable", cert.display()))
}

/// A real streamed completion from the configured endpoint, through the same client and address checks
/// the server uses.
fn answer_generator_check(config: &Config) -> Result<String, String> {
    let client = crate::knowledge::answer::generate::client::ChatClient::new(&config.answer).map_err(|e| e.to_string())?;
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    rt.block_on(client.probe()).map_err(|e| format!("{e}; questions get the quoted answer until it works"))
}

pub fn run(config: &Config, data_dir: &Path) -> anyhow::Result<()> {
    let mut checks = Checks { failed: 0 };
    let lib = runtime::ort_library(&config.knowledge);
    checks.report(
        "ONNX Runtime",
        lib.as_ref().map_err(|e| e.to_string()).and_then(|p| {
            crate::knowledge::embedding::load_runtime(p).map_err(|e| e.to_string())?;
            Ok(format!("{} loads", p.display()))
        }),
    );
    let model = runtime::model_dir(&config.knowledge).map_err(|e| e.to_string());
    checks.report(
        "embedding model",
        model.and_then(|dir| {
            let e = Embedder::load(&config.knowledge).map_err(|e| e.to_string())?;
            let v = e.embed_blocking(&["Where is the practice?"], Purpose::Query).map_err(|e| e.to_string())?;
            match v.first() {
                Some(v) if v.len() == DIMENSIONS => {
                    Ok(format!("{} ({}) embeds a sentence ({DIMENSIONS} dimensions, {} sessions)", dir.display(), e.manifest.name, e.pool_size()))
                }
                _ => Err("the model did not return a 384-dimensional vector; run ./install.sh --deps-only".into()),
            }
        }),
    );
    // What the server loads (`Engine::open`), the same way.
    match Embedder::load_english(&config.knowledge) {
        Ok(Some(e)) => checks.report(
            "English model",
            e.embed_blocking(&["Where is the practice?"], Purpose::Query)
                .map_err(|err| err.to_string())
                .map(|_| format!("{} embeds a sentence; English questions the main model is unsure of are ranked again with it", e.model_dir.display())),
        ),
        // Not a failure: English questions are ranked by the main model alone, as before it existed.
        Ok(None) if config.knowledge.english_model => println!(
            "note  English model: {} not found next to the binary or in the install cache; English questions are ranked without it (run ./install.sh)",
            runtime::ENGLISH_MODEL_NAME
        ),
        Ok(None) => println!("ok    English model: off (knowledge.english_model = false)"),
        Err(e) => checks.report("English model", Err(e.to_string())),
    }
    // Not a failure either: without dictionaries a question in another language is searched as it is.
    let dictionaries = crate::knowledge::search::dictionary::Dictionaries::new(crate::knowledge::search::dictionary::dir(&config.knowledge));
    match dictionaries.dir() {
        Some(dir) => {
            use crate::knowledge::search::dictionary::{is_packed, languages};
            let read: Vec<String> =
                languages().filter_map(|l| dictionaries.get(l).map(|d| format!("{l} {}{}", d.len(), if is_packed(dir, l) { " packed" } else { "" }))).collect();
            checks.report(
                "dictionaries",
                if read.is_empty() {
                    Err(format!("none readable in {}; run ./install.sh --deps-only to fetch them again", dir.display()))
                } else {
                    Ok(format!("{}: words of {} translated into English for questions on English knowledge", dir.display(), read.join(", ")))
                },
            );
            let (_, missing) = crate::knowledge::search::dictionary::vietnamese_catalogs_in(dir);
            if missing > 0 {
                println!(
                    "note  dictionaries: {missing} of Vietnamese's {} localization files are not in {} (install.sh skips one whose pinned file Debian no longer serves); Vietnamese is read from the others",
                    crate::knowledge::search::dictionary::vietnamese_catalogs().len(),
                    dir.display()
                );
            }
            if languages().any(|l| !is_packed(dir, l)) {
                println!(
                    "note  dictionaries: not all packed; the server reads those from their sources, slower and with more memory (run `sitebot pack-dictionaries --dir {}`)",
                    dir.display()
                );
            }
        }
        None => println!(
            "note  dictionaries: not found next to the binary or in the install cache; questions in another language than the knowledge's are searched untranslated (run ./install.sh)"
        ),
    }
    checks.report("data directory", data_dir_check(data_dir));
    checks.report("free space", free_space_check(config, data_dir));
    checks.report("TLS certificate", certificate_check(config, data_dir));
    let db = crate::app::open_store(config, data_dir).map_err(|e| format!("{e:#}")).and_then(|store| {
        let integrity = store.integrity().map_err(|e| e.to_string())?;
        let version = store.schema_version().map_err(|e| e.to_string())?;
        if integrity == "ok" { Ok(format!("{} integrity ok, schema {version}", store.path().display())) } else { Err(format!("integrity check: {integrity}")) }
    });
    checks.report("database", db);
    if config.replication.litestream {
        match config.replication.metrics_addr {
            Some(addr) => {
                let lag = crate::app::open_store(config, data_dir).map_err(|e| format!("{e:#}")).and_then(|store| super::replica::lag_check(addr, &store));
                checks.report("replica lag", lag);
            }
            None => {
                println!("ok    replication: Litestream replicates, checkpoints are left to it; set replication.metrics_addr to have the replica's lag checked")
            }
        }
    }
    if let Ok(e) = Embedder::load(&config.knowledge) {
        let stale = crate::app::open_store(config, data_dir).map_err(|e| format!("{e:#}")).and_then(|store| {
            let stale = refresh::stale_sites(&store, &e.fingerprint).map_err(|e| e.to_string())?;
            Ok(stale.iter().map(|(site, n)| format!("{site} ({n} chunks)")).collect::<Vec<_>>())
        });
        // Not a failure: `serve` re-embeds them in the background, answering by BM25 meanwhile.
        match stale {
            Ok(s) if s.is_empty() => println!("ok    embeddings: every site's chunks are the loaded model's"),
            Ok(s) => println!("stale embeddings: {} site(s) embedded by another model; serve re-embeds them at start: {}", s.len(), s.join(", ")),
            Err(e) => println!("stale embeddings: cannot tell ({e})"),
        }
    }
    // Not a failure either: `serve` rebuilds them before it answers.
    match crate::app::open_store(config, data_dir)
        .map_err(|e| format!("{e:#}"))
        .and_then(|store| crate::knowledge::search::analysis::stale_sites(&store).map_err(|e| e.to_string()))
    {
        Ok(s) if s.is_empty() => println!("ok    full-text indexes: every site's is built with the current analysis"),
        Ok(s) => println!(
            "stale full-text indexes: {} site(s) indexed by an earlier build; serve (or knowledge reindex) rebuilds them: {}",
            s.len(),
            s.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
        ),
        Err(e) => println!("stale full-text indexes: cannot tell ({e})"),
    }
    if config.answer.generator == crate::config::GeneratorKind::Openai {
        checks.report("answer generator", answer_generator_check(config));
    }
    if checks.failed > 0 {
        anyhow::bail!("{} check(s) failed", checks.failed);
    }
    println!("all checks passed");
    Ok(())
}

/// `sitebot pack-dictionaries`: writes each language's dictionary packed beside its sources
/// (`dictionary::pack`).
pub fn pack_dictionaries(config: &Config, dir: Option<std::path::PathBuf>) -> anyhow::Result<()> {
    use crate::knowledge::search::dictionary;
    let dir = dir
        .or_else(|| dictionary::dir(&config.knowledge))
        .ok_or_else(|| anyhow::anyhow!("no dictionaries found next to the binary or in the install cache (run ./install.sh, or give --dir)"))?;
    let packed = dictionary::pack(&dir)?;
    anyhow::ensure!(!packed.is_empty(), "no dictionary's files are all in {} (expected {})", dir.display(), dictionary::files().join(", "));
    for (lang, words, bytes) in packed {
        println!("packed {lang}: {words} words, {:.1} MB", bytes as f64 / 1e6);
    }
    println!("in {}", dir.display());
    Ok(())
}
