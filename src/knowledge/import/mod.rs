//! Importing a site's documents: parse (one parser per format), chunk, embed, store.
//!
//! Guarantees: each document is written in its own transaction (its old chunks replaced, the site's
//! generation bumped), so a failure never leaves half a document and never stops the others; a
//! document whose content hash (over its parsed content and the chunker version) is unchanged is
//! skipped without embedding; a record file (FAQ, JSONL) that no longer lists a record removes that
//! record's document. Embedding is batched across documents and spread over the embedder's pool.

pub mod chunk;
pub mod demo;
pub mod document;
pub mod english;
pub mod html;
pub mod markdown;
mod pdf;
pub mod records;
pub mod refresh;

use std::collections::HashSet;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::domain::SiteId;
use crate::knowledge::embedding::Embedder;
pub use crate::knowledge::import::document::{Parsed, Section};
use crate::store::knowledge::{NewChunk, NewDocument};
use crate::store::{Store, StoreError};
use chunk::Chunk;

/// The file formats, by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Html,
    Text,
    Pdf,
    Csv,
    Jsonl,
}

impl Format {
    pub fn from_path(p: &Path) -> Option<Format> {
        let ext = p.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "md" | "markdown" => Format::Markdown,
            "html" | "htm" => Format::Html,
            "txt" | "text" => Format::Text,
            "pdf" => Format::Pdf,
            "csv" => Format::Csv,
            "jsonl" | "ndjson" => Format::Jsonl,
            _ => return None,
        })
    }
}

/// One file to import: `name` is its stable source key (an absolute path, or a name for built-in sets).
#[derive(Debug, Clone)]
pub struct Input {
    pub name: String,
    pub format: Format,
    pub bytes: Vec<u8>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Failure {
    pub path: String,
    pub reason: String,
}

/// What an import did. `documents` counts documents written (new or changed).
#[derive(Debug, Clone, Default, Serialize)]
pub struct ImportReport {
    pub documents: usize,
    pub chunks: usize,
    pub skipped: usize,
    pub deleted: usize,
    pub failed: Vec<Failure>,
}

impl ImportReport {
    /// Adds the report of a later import (of other files) to this one.
    pub fn add(&mut self, other: ImportReport) {
        self.documents += other.documents;
        self.chunks += other.chunks;
        self.skipped += other.skipped;
        self.deleted += other.deleted;
        self.failed.extend(other.failed);
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Embed(#[from] crate::knowledge::embedding::EmbedError),
}

fn stem(name: &str) -> String {
    let base = name.rsplit('/').next().unwrap_or(name);
    let stem = base.rsplit_once('.').map_or(base, |(s, _)| s);
    stem.replace(['-', '_'], " ")
}

fn text_document(source: String, name: &str, text: &str, format: &'static str) -> Parsed {
    let paragraphs: Vec<String> = text.split("\n\n").map(crate::knowledge::text::squash).filter(|p| !p.is_empty()).collect();
    let first = paragraphs.first().filter(|p| p.chars().count() <= 100 && !p.ends_with('.')).cloned();
    let (title, paragraphs) = match first {
        Some(t) if paragraphs.len() > 1 => (t, paragraphs[1..].to_vec()),
        _ => (stem(name), paragraphs),
    };
    Parsed { source, title, url: None, format, sections: vec![Section { path: vec![], paragraphs }] }
}

/// Parses one input into documents (several for record files). `Err` fails the whole file.
pub fn parse(input: &Input) -> Result<Vec<Result<Parsed, String>>, String> {
    if input.format == Format::Pdf {
        let text = pdf::text(&input.bytes)?;
        return Ok(vec![Ok(text_document(input.name.clone(), &input.name, &text, "pdf"))]);
    }
    let src = std::str::from_utf8(&input.bytes).map_err(|_| "not UTF-8 text".to_owned())?;
    let name = input.name.clone();
    let title = stem(&input.name);
    let one = |p: Parsed| if p.sections.is_empty() { Err("no text found".to_owned()) } else { Ok(p) };
    Ok(match input.format {
        Format::Markdown => vec![one(markdown::parse(name, &title, src))],
        Format::Html => vec![one(html::parse(name, &title, src))],
        Format::Text => vec![one(text_document(name, &input.name, src, "text"))],
        Format::Csv => records::csv(&input.name, src)?,
        Format::Jsonl => records::jsonl(&input.name, src),
        Format::Pdf => unreachable!("handled above"),
    })
}

/// The content hash: changes when anything that ends up in the chunks would, the embedding model
/// included (so importing again after a model change re-embeds every document).
fn content_hash(p: &Parsed, model: &str) -> String {
    let mut h = Sha256::new();
    h.update(chunk::VERSION.to_le_bytes());
    h.update(model.as_bytes());
    h.update([0]);
    for part in [p.title.as_str(), p.url.as_deref().unwrap_or(""), p.format] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    for s in &p.sections {
        for x in s.path.iter().chain(&s.paragraphs) {
            h.update(x.as_bytes());
            h.update([0]);
        }
        h.update([1]);
    }
    hex::encode(h.finalize())
}

/// The default of `knowledge.max_file_bytes`: 20 MiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = crate::config::DEFAULT_MAX_FILE_BYTES;

/// `read_paths_within` with the default size bound.
pub fn read_paths(paths: &[PathBuf], failed: &mut Vec<Failure>) -> Vec<Input> {
    read_paths_within(paths, DEFAULT_MAX_FILE_BYTES, failed)
}

/// Reads one file of at most `max` bytes: the size is checked before reading, and the read stops
/// past `max` in case the file grew in between.
fn read_bounded(p: &Path, len: u64, max: u64) -> Result<Vec<u8>, String> {
    let too_large = |n: u64| format!("the file has {n} bytes, more than knowledge.max_file_bytes ({max})");
    if len > max {
        return Err(too_large(len));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    std::fs::File::open(p).and_then(|f| f.take(max + 1).read_to_end(&mut bytes)).map_err(|e| e.to_string())?;
    if bytes.len() as u64 > max {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Walks `paths` (files and directories, recursively) into inputs. Files in directories with an
/// unknown extension are passed over; a named file with one is a failure, and so is a file larger
/// than `max_file_bytes`. Symbolic links are followed, but no directory or file is read twice (they
/// are known by device and inode), so a link that loops ends the walk there.
pub fn read_paths_within(paths: &[PathBuf], max_file_bytes: u64, failed: &mut Vec<Failure>) -> Vec<Input> {
    struct Walk<'a> {
        max: u64,
        seen: HashSet<(u64, u64)>,
        out: Vec<Input>,
        failed: &'a mut Vec<Failure>,
    }
    impl Walk<'_> {
        fn fail(&mut self, p: &Path, reason: String) {
            self.failed.push(Failure { path: p.display().to_string(), reason });
        }

        fn walk(&mut self, p: &Path, named: bool) {
            let format = Format::from_path(p);
            // Follows a link: the identity is the target's.
            let meta = match std::fs::metadata(p) {
                Ok(m) => m,
                Err(e) if named || format.is_some() => return self.fail(p, e.to_string()),
                Err(_) => return,
            };
            if !meta.is_dir() && format.is_none() {
                if named {
                    self.fail(p, "unsupported file type (use .md, .html, .txt, .pdf, .csv or .jsonl)".into());
                }
                return;
            }
            if !self.seen.insert((meta.dev(), meta.ino())) {
                return;
            }
            if meta.is_dir() {
                let mut entries: Vec<PathBuf> = match std::fs::read_dir(p) {
                    Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).collect(),
                    Err(e) => return self.fail(p, e.to_string()),
                };
                entries.sort();
                for e in entries {
                    self.walk(&e, false);
                }
                return;
            }
            let name = std::fs::canonicalize(p).map_or_else(|_| p.display().to_string(), |c| c.display().to_string());
            match read_bounded(p, meta.len(), self.max) {
                Ok(bytes) => self.out.push(Input { name, format: format.expect("checked above"), bytes }),
                Err(reason) => self.fail(p, reason),
            }
        }
    }
    let mut walk = Walk { max: max_file_bytes, seen: HashSet::new(), out: Vec::new(), failed };
    for p in paths {
        walk.walk(p, true);
    }
    walk.out
}

/// Chunks waiting for their embeddings.
struct Pending {
    doc: Parsed,
    hash: String,
    lang: Option<(String, f32)>,
    chunks: Vec<Chunk>,
}

/// Characters of a document the language detector reads: enough for a confident answer, and bounded.
const DETECT_CHARS: usize = 2000;

/// The document's language, detected on its title and first paragraphs.
fn document_language(doc: &Parsed) -> Option<(String, f32)> {
    let mut sample = doc.title.clone();
    for p in doc.sections.iter().flat_map(|s| &s.paragraphs) {
        if sample.len() >= DETECT_CHARS {
            break;
        }
        sample.push('\n');
        sample.push_str(p);
    }
    let cut = sample.char_indices().nth(DETECT_CHARS).map_or(sample.len(), |(i, _)| i);
    crate::knowledge::language::detect(&sample[..cut]).map(|d| (d.code.to_owned(), d.confidence))
}

/// The `format` of a document made from a FAQ entry (its title is the entry's question).
pub const FAQ_FORMAT: &str = "faq";

/// Embeds this many chunks at a time, across documents.
const EMBED_BATCH: usize = 64;

fn flush(store: &Store, models: Models<'_>, site: &SiteId, pending: &mut Vec<Pending>, report: &mut ImportReport) -> Result<(), ImportError> {
    if pending.is_empty() {
        return Ok(());
    }
    let inputs: Vec<(String, Option<String>)> =
        pending.iter().flat_map(|p| p.chunks.iter().map(|c| (c.embedding_input(), (p.doc.format == FAQ_FORMAT).then(|| p.doc.title.clone())))).collect();
    let mut vectors = chunk::embed(models.main, &inputs)?.into_iter();
    // An index another analysis built is rebuilt before new terms join it.
    let site_lang = crate::knowledge::search::analysis::reindex_if_stale(store, site)?;
    let langs: Vec<String> =
        pending.iter().map(|p| crate::knowledge::search::analysis::language_of(p.lang.as_ref().map(|(l, c)| (l.as_str(), *c)), &site_lang)).collect();
    // The English model's vectors of English documents' chunks (FAQ entries are scored without them).
    let english_of = |p: &Pending, lang: &str| lang == "en" && p.doc.format != FAQ_FORMAT;
    let mut english = match models.english {
        Some(e) => {
            let texts: Vec<String> =
                pending.iter().zip(&langs).filter(|(p, lang)| english_of(p, lang)).flat_map(|(p, _)| p.chunks.iter().map(Chunk::embedding_input)).collect();
            e.embed_parallel_blocking(&texts, crate::knowledge::embedding::model::Purpose::Passage)?.into_iter()
        }
        None => Vec::new().into_iter(),
    };
    for (p, lang) in pending.drain(..).zip(langs) {
        let with_english = models.english.is_some() && english_of(&p, &lang);
        let chunks: Vec<NewChunk> = p
            .chunks
            .into_iter()
            .map(|c| NewChunk {
                index_heading: crate::knowledge::search::analysis::index_text(&lang, &c.heading),
                index_text: crate::knowledge::search::analysis::index_text(&lang, &c.text),
                heading: c.heading,
                text: c.text,
                embedding: vectors.next().expect("one vector per chunk"),
                english: if with_english { english.next() } else { None },
            })
            .collect();
        let n = chunks.len();
        let doc = NewDocument {
            source: p.doc.source,
            title: p.doc.title,
            url: p.doc.url,
            format: p.doc.format.to_owned(),
            content_hash: p.hash,
            model: models.main.fingerprint.clone(),
            english_model: models.english.filter(|_| with_english).map(|e| e.fingerprint.clone()).unwrap_or_default(),
            lang: p.lang,
            chunks,
        };
        store.site(*site).knowledge().replace_document(&doc)?;
        report.documents += 1;
        report.chunks += n;
    }
    Ok(())
}

/// What importing one parsed document did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A new source: written (once the batch is flushed).
    New,
    /// A known source whose content changed: its chunks are replaced.
    Changed,
    /// The same content hash: nothing embedded, nothing written.
    Unchanged,
    /// Nothing to import (no text).
    Failed(String),
}

/// The models an import embeds with: the main one, and the English one (`knowledge.english_model`) for the
/// chunks of English documents, so that they are ranked with it from the moment they are searchable
/// (`english` fills those imported before it).
#[derive(Debug, Clone, Copy)]
pub struct Models<'a> {
    pub main: &'a Embedder,
    pub english: Option<&'a Embedder>,
}

impl<'a> Models<'a> {
    /// The main model alone.
    pub fn main(main: &'a Embedder) -> Self {
        Models { main, english: None }
    }
}

/// Documents on their way into the store: each is checked against its stored content hash, chunked,
/// and embedded with others in batches of `EMBED_BATCH` chunks; each is written in its own
/// transaction once its batch is embedded. Call `finish` to write the last batch.
pub struct Batch<'a> {
    store: &'a Store,
    models: Models<'a>,
    site: &'a SiteId,
    force: bool,
    pending: Vec<Pending>,
    pending_chunks: usize,
    report: ImportReport,
}

impl<'a> Batch<'a> {
    /// `force` re-embeds unchanged documents (after a model change).
    pub fn new(store: &'a Store, models: Models<'a>, site: &'a SiteId, force: bool) -> Self {
        Batch { store, models, site, force, pending: Vec::new(), pending_chunks: 0, report: ImportReport::default() }
    }

    /// Adds one document; embeds and writes the batch when it is full.
    pub fn add(&mut self, doc: Parsed) -> Result<Outcome, ImportError> {
        let hash = content_hash(&doc, &self.models.main.fingerprint);
        let stored = self.store.site(*self.site).knowledge().content_hash(&doc.source)?;
        if !self.force && stored.as_deref() == Some(hash.as_str()) {
            self.report.skipped += 1;
            return Ok(Outcome::Unchanged);
        }
        let chunks = chunk::chunk(&doc);
        if chunks.is_empty() {
            let reason = "no text found".to_owned();
            self.report.failed.push(Failure { path: doc.source.clone(), reason: reason.clone() });
            return Ok(Outcome::Failed(reason));
        }
        self.pending_chunks += chunks.len();
        let lang = document_language(&doc);
        self.pending.push(Pending { doc, hash, lang, chunks });
        if self.pending_chunks >= EMBED_BATCH {
            self.flush()?;
        }
        Ok(if stored.is_some() { Outcome::Changed } else { Outcome::New })
    }

    /// Whether every document added so far is written.
    pub fn is_flushed(&self) -> bool {
        self.pending.is_empty()
    }

    pub fn flush(&mut self) -> Result<(), ImportError> {
        self.pending_chunks = 0;
        flush(self.store, self.models, self.site, &mut self.pending, &mut self.report)
    }

    /// Writes what is pending and returns the report.
    pub fn finish(mut self) -> Result<ImportReport, ImportError> {
        self.flush()?;
        Ok(self.report)
    }
}

/// Imports `inputs` into the site. `force` re-embeds unchanged documents (after a model change).
/// `progress` is called after each input with (inputs done, inputs total).
pub fn import(
    store: &Store,
    models: Models<'_>,
    site: &SiteId,
    inputs: &[Input],
    force: bool,
    progress: &dyn Fn(usize, usize),
) -> Result<ImportReport, ImportError> {
    // An index another analysis built is rebuilt even when every document is unchanged.
    crate::knowledge::search::analysis::reindex_if_stale(store, site)?;
    let mut batch = Batch::new(store, models, site, force);
    let mut deleted = 0;
    for (i, input) in inputs.iter().enumerate() {
        let docs = match parse(input) {
            Ok(d) => d,
            Err(reason) => {
                batch.report.failed.push(Failure { path: input.name.clone(), reason });
                progress(i + 1, inputs.len());
                continue;
            }
        };
        let mut seen = Vec::new();
        for doc in docs {
            match doc {
                Ok(doc) => {
                    seen.push(doc.source.clone());
                    batch.add(doc)?;
                }
                Err(reason) => batch.report.failed.push(Failure { path: input.name.clone(), reason }),
            }
        }
        if matches!(input.format, Format::Csv | Format::Jsonl) {
            deleted += store.site(*site).knowledge().delete_missing_records(&format!("{}#", input.name), &seen)?;
        }
        progress(i + 1, inputs.len());
    }
    let mut report = batch.finish()?;
    report.deleted += deleted;
    Ok(report)
}

/// A readable rendering of a parsed document, for the parsers' tests to compare against.
#[cfg(test)]
pub(crate) fn outline(p: &Parsed) -> String {
    let mut out = format!("title: {}\nurl: {}\n", p.title, p.url.as_deref().unwrap_or("-"));
    for s in &p.sections {
        out.push_str(&format!("[{}]\n", s.path.join(" › ")));
        for para in &s.paragraphs {
            out.push_str(&format!("  {para}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::knowledge::import::*;

    #[test]
    fn hashes_change_with_content_only() {
        let a = markdown::parse("a.md".into(), "a", "# T\n\nOne.");
        let b = markdown::parse("a.md".into(), "a", "# T\n\nOne.");
        let c = markdown::parse("a.md".into(), "a", "# T\n\nTwo.");
        assert_eq!(content_hash(&a, "m"), content_hash(&b, "m"));
        assert_ne!(content_hash(&a, "m"), content_hash(&c, "m"));
        assert_ne!(content_hash(&a, "m"), content_hash(&a, "other model"));
    }

    fn names(inputs: &[Input]) -> Vec<String> {
        inputs.iter().map(|i| i.name.rsplit('/').next().unwrap_or("").to_owned()).collect()
    }

    #[test]
    fn a_symlink_loop_ends_the_walk_and_nothing_is_read_twice() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("a.md"), "# A\n\nText.").unwrap();
        std::fs::write(root.join("sub/b.md"), "# B\n\nText.").unwrap();
        // A loop back to the root, a second way into `sub`, a second name for a file, a broken link.
        std::os::unix::fs::symlink(root, root.join("sub/loop")).unwrap();
        std::os::unix::fs::symlink(root.join("sub"), root.join("again")).unwrap();
        std::os::unix::fs::symlink(root.join("a.md"), root.join("sub/alias.md")).unwrap();
        std::os::unix::fs::symlink(root.join("missing"), root.join("sub/dangling")).unwrap();
        let mut failed = vec![];
        let inputs = read_paths(&[root.to_owned()], &mut failed);
        assert_eq!(names(&inputs), ["a.md", "b.md"]);
        assert_eq!(failed, []);
    }

    #[test]
    fn a_file_over_the_size_bound_is_a_failure_that_says_so() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("big.md"), "x".repeat(101)).unwrap();
        std::fs::write(dir.path().join("small.md"), "x".repeat(100)).unwrap();
        let mut failed = vec![];
        let inputs = read_paths_within(&[dir.path().to_owned()], 100, &mut failed);
        assert_eq!(names(&inputs), ["small.md"]);
        assert_eq!(failed.len(), 1);
        assert!(failed[0].path.ends_with("big.md"));
        assert_eq!(failed[0].reason, "the file has 101 bytes, more than knowledge.max_file_bytes (100)");
    }
}
