//! Importing a site's documents: parse (one parser per format), chunk, embed, store.
//!
//! Guarantees: each document is written in its own transaction (its old chunks replaced, the site's
//! generation bumped), so a failure never leaves half a document and never stops the others; a
//! document whose content hash (over its parsed content and the chunker version) is unchanged is
//! skipped without embedding; a record file (FAQ, JSONL) that no longer lists a record removes that
//! record's document. Embedding is batched across documents and spread over the embedder's pool.

pub mod html;
pub mod markdown;
pub mod records;

use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::chunk::{self, Chunk};
pub use super::document::{Parsed, Section};
use super::embed::Embedder;
use super::model::Role;
use crate::domain::SiteId;
use crate::store::knowledge::{NewChunk, NewDocument};
use crate::store::{Store, StoreError};

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
pub struct Report {
    pub documents: usize,
    pub chunks: usize,
    pub skipped: usize,
    pub deleted: usize,
    pub failed: Vec<Failure>,
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Embed(#[from] super::embed::EmbedError),
}

fn stem(name: &str) -> String {
    let base = name.rsplit('/').next().unwrap_or(name);
    let stem = base.rsplit_once('.').map_or(base, |(s, _)| s);
    stem.replace(['-', '_'], " ")
}

fn text_document(source: String, name: &str, text: &str, format: &'static str) -> Parsed {
    let paragraphs: Vec<String> = text.split("\n\n").map(super::text::squash).filter(|p| !p.is_empty()).collect();
    let first = paragraphs.first().filter(|p| p.chars().count() <= 100 && !p.ends_with('.')).cloned();
    let (title, paragraphs) = match first {
        Some(t) if paragraphs.len() > 1 => (t, paragraphs[1..].to_vec()),
        _ => (stem(name), paragraphs),
    };
    Parsed { source, title, url: None, format, sections: vec![Section { path: vec![], paragraphs }] }
}

fn pdf_text(bytes: &[u8]) -> Result<String, String> {
    let doc = lopdf::Document::load_mem(bytes).map_err(|e| format!("not a readable PDF: {e}"))?;
    let pages: Vec<u32> = doc.get_pages().keys().copied().collect();
    let text = doc.extract_text(&pages).map_err(|e| format!("cannot extract the PDF's text: {e}"))?;
    if text.trim().is_empty() {
        return Err("the PDF has no text layer (scanned images are not read)".into());
    }
    Ok(text)
}

/// Parses one input into documents (several for record files). `Err` fails the whole file.
pub fn parse(input: &Input) -> Result<Vec<Result<Parsed, String>>, String> {
    if input.format == Format::Pdf {
        let text = pdf_text(&input.bytes)?;
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

/// Walks `paths` (files and directories, recursively) into inputs. Files in directories with an
/// unknown extension are passed over; a named file with one is a failure.
pub fn read_paths(paths: &[PathBuf], failed: &mut Vec<Failure>) -> Vec<Input> {
    fn walk(p: &Path, named: bool, out: &mut Vec<Input>, failed: &mut Vec<Failure>) {
        let shown = p.display().to_string();
        if p.is_dir() {
            let mut entries: Vec<PathBuf> = match std::fs::read_dir(p) {
                Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).collect(),
                Err(e) => return failed.push(Failure { path: shown, reason: e.to_string() }),
            };
            entries.sort();
            for e in entries {
                walk(&e, false, out, failed);
            }
            return;
        }
        let Some(format) = Format::from_path(p) else {
            if named {
                failed.push(Failure { path: shown, reason: "unsupported file type (use .md, .html, .txt, .pdf, .csv or .jsonl)".into() });
            }
            return;
        };
        let name = std::fs::canonicalize(p).map(|c| c.display().to_string()).unwrap_or(shown.clone());
        match std::fs::read(p) {
            Ok(bytes) => out.push(Input { name, format, bytes }),
            Err(e) => failed.push(Failure { path: shown, reason: e.to_string() }),
        }
    }
    let mut out = Vec::new();
    for p in paths {
        walk(p, true, &mut out, failed);
    }
    out
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
    super::language::detect(&sample[..cut]).map(|d| (d.code.to_owned(), d.confidence))
}

/// Embeds this many chunks at a time, across documents.
const EMBED_BATCH: usize = 64;

fn flush(store: &Store, embedder: &Embedder, site: &SiteId, pending: &mut Vec<Pending>, report: &mut Report) -> Result<(), ImportError> {
    let inputs: Vec<String> = pending.iter().flat_map(|p| p.chunks.iter().map(Chunk::embedding_input)).collect();
    let mut vectors = embedder.embed_parallel_blocking(&inputs, Role::Passage)?.into_iter();
    for p in pending.drain(..) {
        let chunks: Vec<NewChunk> =
            p.chunks.into_iter().map(|c| NewChunk { heading: c.heading, text: c.text, embedding: vectors.next().expect("one vector per chunk") }).collect();
        let n = chunks.len();
        let doc = NewDocument { source: p.doc.source, title: p.doc.title, url: p.doc.url, format: p.doc.format.to_owned(), content_hash: p.hash, model: embedder.fingerprint.clone(), lang: p.lang, chunks };
        store.site(*site).knowledge().replace_document(&doc)?;
        report.documents += 1;
        report.chunks += n;
    }
    Ok(())
}

/// Imports `inputs` into the site. `force` re-embeds unchanged documents (after a model change).
/// `progress` is called after each input with (inputs done, inputs total).
pub fn import(
    store: &Store,
    embedder: &Embedder,
    site: &SiteId,
    inputs: &[Input],
    force: bool,
    progress: &dyn Fn(usize, usize),
) -> Result<Report, ImportError> {
    let mut report = Report::default();
    let mut pending: Vec<Pending> = Vec::new();
    let mut pending_chunks = 0;
    for (i, input) in inputs.iter().enumerate() {
        let docs = match parse(input) {
            Ok(d) => d,
            Err(reason) => {
                report.failed.push(Failure { path: input.name.clone(), reason });
                progress(i + 1, inputs.len());
                continue;
            }
        };
        let mut seen = Vec::new();
        for doc in docs {
            let doc = match doc {
                Ok(d) => d,
                Err(reason) => {
                    report.failed.push(Failure { path: input.name.clone(), reason });
                    continue;
                }
            };
            seen.push(doc.source.clone());
            let hash = content_hash(&doc, &embedder.fingerprint);
            if !force && store.site(*site).knowledge().content_hash(&doc.source)?.as_deref() == Some(hash.as_str()) {
                report.skipped += 1;
                continue;
            }
            let chunks = chunk::chunk(&doc);
            if chunks.is_empty() {
                report.failed.push(Failure { path: doc.source.clone(), reason: "no text found".into() });
                continue;
            }
            pending_chunks += chunks.len();
            let lang = document_language(&doc);
            pending.push(Pending { doc, hash, lang, chunks });
            if pending_chunks >= EMBED_BATCH {
                flush(store, embedder, site, &mut pending, &mut report)?;
                pending_chunks = 0;
            }
        }
        if matches!(input.format, Format::Csv | Format::Jsonl) {
            report.deleted += store.site(*site).knowledge().delete_missing_records(&format!("{}#", input.name), &seen)?;
        }
        progress(i + 1, inputs.len());
    }
    flush(store, embedder, site, &mut pending, &mut report)?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_corrupt_pdf_is_a_reasoned_failure() {
        let input = Input { name: "broken.pdf".into(), format: Format::Pdf, bytes: b"%PDF-1.4 this is not really a pdf".to_vec() };
        let err = parse(&input).unwrap_err();
        assert!(err.contains("PDF"), "{err}");
    }

    /// A one-page PDF whose text layer says `text` (lopdf's own writer).
    fn pdf_with_text(text: &str) -> Vec<u8> {
        use lopdf::content::{Content, Operation};
        use lopdf::{Document, Object, Stream, dictionary};
        let mut doc = Document::with_version("1.5");
        let pages_id = doc.new_object_id();
        let font_id = doc.add_object(dictionary! {"Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica"});
        let resources_id = doc.add_object(dictionary! {"Font" => dictionary! {"F1" => font_id}});
        let content = Content {
            operations: vec![
                Operation::new("BT", vec![]),
                Operation::new("Tf", vec!["F1".into(), 12.into()]),
                Operation::new("Td", vec![72.into(), 700.into()]),
                Operation::new("Tj", vec![Object::string_literal(text)]),
                Operation::new("ET", vec![]),
            ],
        };
        let content_id = doc.add_object(Stream::new(dictionary! {}, content.encode().unwrap()));
        let page_id = doc.add_object(dictionary! {"Type" => "Page", "Parent" => pages_id, "Contents" => content_id, "Resources" => resources_id, "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()]});
        doc.objects.insert(pages_id, Object::Dictionary(dictionary! {"Type" => "Pages", "Kids" => vec![page_id.into()], "Count" => 1}));
        let catalog_id = doc.add_object(dictionary! {"Type" => "Catalog", "Pages" => pages_id});
        doc.trailer.set("Root", catalog_id);
        let mut out = Vec::new();
        doc.save_to(&mut out).unwrap();
        out
    }

    #[test]
    fn a_pdf_text_layer_is_imported() {
        let input = Input { name: "leaflet.pdf".into(), format: Format::Pdf, bytes: pdf_with_text("Root canal treatment takes about ninety minutes.") };
        let docs = parse(&input).unwrap();
        let doc = docs[0].as_ref().unwrap();
        assert_eq!(doc.format, "pdf");
        let text: String = doc.sections.iter().flat_map(|s| s.paragraphs.clone()).collect();
        assert!(text.contains("Root canal treatment takes about ninety minutes."), "{text}");
    }

    #[test]
    fn hashes_change_with_content_only() {
        let a = markdown::parse("a.md".into(), "a", "# T\n\nOne.");
        let b = markdown::parse("a.md".into(), "a", "# T\n\nOne.");
        let c = markdown::parse("a.md".into(), "a", "# T\n\nTwo.");
        assert_eq!(content_hash(&a, "m"), content_hash(&b, "m"));
        assert_ne!(content_hash(&a, "m"), content_hash(&c, "m"));
        assert_ne!(content_hash(&a, "m"), content_hash(&a, "other model"));
    }
}
