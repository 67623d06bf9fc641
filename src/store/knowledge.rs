//! Knowledge tables: documents, chunks (text, heading path, embedding), the per-site FTS5 index (kept
//! in step by this module in the same transaction as each chunk change) and the per-site generation
//! counter. [`Knowledge`] is bound to one site: every query filters by its id. Full-text search uses one contentless FTS5
//! table per site (`kb_fts_<uuid hex>`, `contentless_delete`), created on the site's
//! first import: a query reads only that site's postings (no join to filter by site, BM25 statistics of
//! the site's own corpus), and no other tenant's text can ever match. The table indexes analyzed terms
//! that the caller makes (stems, character pairs: `knowledge::analysis`), so its tokenizer only splits at
//! spaces and folds diacritics; `fts_analyzer` tells which analysis built it.
//!
//! Each chunk records the fingerprint of the model that embedded it; the vector side of retrieval reads
//! only chunks of the current model (`chunk_keys_of`), and `stale_chunks`/`set_embeddings` let a server
//! re-embed the others after a model change.
//!
//! The generation counter is bumped in the same transaction as any change to a site's chunks; a
//! server compares it with the generation its in-memory index was built at, which is how an import made
//! by the CLI becomes visible without a restart.

use rusqlite::{Connection, Transaction, params};
use serde::Serialize;

use super::{OptionalRow, Result, SiteStore, StoreError};
use crate::domain::{SiteId, Timestamp};

/// A chunk ready to be stored.
#[derive(Debug, Clone)]
pub struct NewChunk {
    pub heading: String,
    pub text: String,
    pub embedding: Vec<f32>,
    /// The English model's vector, for a chunk of an English document (`NewDocument::english_model`).
    pub english: Option<Vec<f32>>,
    /// What the full-text index holds for the heading and the text: their analyzed terms, joined by
    /// spaces (`knowledge::analysis::index_text`).
    pub index_heading: String,
    pub index_text: String,
}

/// A parsed, chunked and embedded document.
#[derive(Debug, Clone)]
pub struct NewDocument {
    /// Identifies the document within the site across imports (its path, or an id from the file).
    pub source: String,
    pub title: String,
    pub url: Option<String>,
    pub format: String,
    pub content_hash: String,
    /// The fingerprint of the model that made the chunks' embeddings.
    pub model: String,
    /// The fingerprint of the English model that made the chunks' `english` vectors ('' for none).
    pub english_model: String,
    /// The detected language (ISO 639-1) and the detector's confidence.
    pub lang: Option<(String, f32)>,
    pub chunks: Vec<NewChunk>,
}

/// A chunk whose embedding another model made: what re-embedding needs.
#[derive(Debug, Clone)]
pub struct StaleChunk {
    pub key: u64,
    pub heading: String,
    pub text: String,
    /// The entry's question, when the chunk is a FAQ entry's (its document's title).
    pub faq_question: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DocumentRow {
    pub id: String,
    pub source: String,
    pub title: String,
    pub url: Option<String>,
    pub format: String,
    pub lang: Option<String>,
    pub chunks: i64,
    pub updated_at: Timestamp,
}

/// The columns [`document_row`] reads, in its order.
const DOCUMENT_COLUMNS: &str = "id, source, title, url, format, chunk_count, updated_at, lang";

fn document_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<DocumentRow> {
    Ok(DocumentRow {
        id: r.get(0)?,
        source: r.get(1)?,
        title: r.get(2)?,
        url: r.get(3)?,
        format: r.get(4)?,
        chunks: r.get(5)?,
        updated_at: r.get(6)?,
        lang: r.get(7)?,
    })
}

/// A chunk as retrieval shows it.
#[derive(Debug, Clone)]
pub struct ChunkRow {
    pub key: u64,
    pub id: String,
    pub document_id: String,
    pub source: String,
    pub title: String,
    pub heading: String,
    pub url: Option<String>,
    pub text: String,
}

/// One site's knowledge.
pub struct Knowledge<'s> {
    site: SiteStore<'s>,
}

/// A chunk's document language (ISO 639-1) and the tables it is read from (`c` chunks, `d` documents, `s`
/// sites; `?2` the least confidence): the detected language when the detector was that sure, else the
/// site's own.
const CHUNK_LANGUAGE: &str = "CASE WHEN d.lang IS NOT NULL AND d.lang_confidence >= ?2 THEN d.lang
         ELSE lower(substr(s.lang, 1, instr(s.lang || '-', '-') - 1)) END
     FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id JOIN sites s ON s.id = c.site_id";

/// Calls `f` with every chunk of the site: its key, its document's detected language and confidence (if
/// any), its heading and its text. What the full-text indexes are built from (`rebuild_fts`,
/// `each_chunk_text`).
fn chunk_texts(conn: &Connection, site: &SiteId, mut f: impl FnMut(u64, Option<(&str, f32)>, &str, &str) -> Result<()>) -> Result<()> {
    let mut stmt = conn.prepare(
        "SELECT c.rowid, c.heading, c.text, d.lang, d.lang_confidence FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id
         WHERE c.site_id = ?1 AND d.site_id = ?1",
    )?;
    let mut rows = stmt.query([site])?;
    while let Some(r) = rows.next()? {
        let (key, heading, text): (i64, String, String) = (r.get(0)?, r.get(1)?, r.get(2)?);
        let lang: Option<String> = r.get(3)?;
        let confidence: Option<f64> = r.get(4)?;
        f(key as u64, lang.as_deref().map(|l| (l, confidence.unwrap_or(0.0) as f32)), &heading, &text)?;
    }
    Ok(())
}

impl<'s> Knowledge<'s> {
    pub(super) fn new(site: SiteStore<'s>) -> Self {
        Self { site }
    }

    fn read<T>(&self, f: impl FnOnce(&Connection, &SiteId) -> Result<T>) -> Result<T> {
        let site = self.site.id();
        self.site.store().read(|c| f(c, &site))
    }

    fn write<T>(&self, f: impl FnOnce(&Transaction<'_>, &SiteId) -> Result<T>) -> Result<T> {
        let site = self.site.id();
        self.site.write(|tx| f(tx, &site))
    }

    /// Bumped by every change to the site's chunks.
    pub fn generation(&self) -> Result<i64> {
        self.read(|conn, site| {
            Ok(conn.query_row("SELECT generation FROM kb_generations WHERE site_id = ?1", [site], |r| r.get(0)).optional_row()?.unwrap_or(0))
        })
    }

    /// The content hash stored for `source`, if the document exists.
    pub fn content_hash(&self, source: &str) -> Result<Option<String>> {
        self.read(|conn, site| {
            conn.query_row("SELECT content_hash FROM kb_documents WHERE site_id = ?1 AND source = ?2", params![site, source], |r| r.get(0)).optional_row()
        })
    }

    /// Stores `doc`, replacing the document with the same source (and its chunks) if there is one.
    /// Returns the new document id.
    pub fn replace_document(&self, doc: &NewDocument) -> Result<String> {
        self.write(|tx, site| {
            unindex(tx, site, "d.source = ?2", &doc.source)?;
            tx.execute("DELETE FROM kb_documents WHERE site_id = ?1 AND source = ?2", params![site, doc.source])?;
            let fts = fts_table(site);
            let id = format!("doc_{}", ulid::Ulid::new());
            let now = Timestamp::now();
            tx.execute(
                "INSERT INTO kb_documents (id, site_id, source, title, url, format, content_hash, chunk_count, created_at, updated_at, lang, lang_confidence)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9, ?10, ?11)",
                params![
                    id,
                    site,
                    doc.source,
                    doc.title,
                    doc.url,
                    doc.format,
                    doc.content_hash,
                    doc.chunks.len() as i64,
                    now,
                    doc.lang.as_ref().map(|l| &l.0),
                    doc.lang.as_ref().map(|l| l.1 as f64)
                ],
            )?;
            let mut stmt = tx.prepare_cached(
                "INSERT INTO kb_chunks (id, site_id, document_id, ord, heading, text, embedding, model, en_embedding, en_model) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?;
            let mut fts_insert = tx.prepare_cached(&format!("INSERT INTO {fts} (rowid, heading, text) VALUES (?1, ?2, ?3)"))?;
            for (i, c) in doc.chunks.iter().enumerate() {
                let english = c.english.as_deref().map(vector_to_blob);
                let english_model = if english.is_some() { doc.english_model.as_str() } else { "" };
                stmt.execute(params![
                    format!("chk_{}", ulid::Ulid::new()),
                    site,
                    id,
                    i as i64,
                    c.heading,
                    c.text,
                    vector_to_blob(&c.embedding),
                    doc.model,
                    english,
                    english_model
                ])?;
                fts_insert.execute(params![tx.last_insert_rowid(), c.index_heading, c.index_text])?;
            }
            bump_generation(tx, site)?;
            Ok(id)
        })
    }

    pub fn list_documents(&self) -> Result<Vec<DocumentRow>> {
        self.read(|conn, site| {
            let mut stmt = conn.prepare(&format!("SELECT {DOCUMENT_COLUMNS} FROM kb_documents WHERE site_id = ?1 ORDER BY source"))?;
            let rows = stmt.query_map([site], document_row)?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// A page of the site's documents whose title contains `title` (any case; all when empty), by title,
    /// skipping `offset`: at most `limit` rows and how many match in all (the console's list).
    pub fn page_documents(&self, title: &str, offset: usize, limit: usize) -> Result<(Vec<DocumentRow>, u64)> {
        self.read(|conn, site| {
            let mut stmt = conn.prepare(&format!(
                "SELECT {DOCUMENT_COLUMNS} FROM kb_documents
                 WHERE site_id = ?1 AND (?2 = '' OR instr(lower(title), lower(?2)) > 0) ORDER BY title, id LIMIT ?3 OFFSET ?4"
            ))?;
            let rows = stmt.query_map(params![site, title, limit as i64, offset as i64], document_row)?;
            let rows = rows.collect::<rusqlite::Result<Vec<_>>>()?;
            let total: i64 = conn.query_row(
                "SELECT count(*) FROM kb_documents WHERE site_id = ?1 AND (?2 = '' OR instr(lower(title), lower(?2)) > 0)",
                params![site, title],
                |r| r.get(0),
            )?;
            Ok((rows, total as u64))
        })
    }

    /// One of the site's documents by id; `None` for any other.
    pub fn document(&self, id: &str) -> Result<Option<DocumentRow>> {
        self.read(|conn, site| {
            conn.query_row(&format!("SELECT {DOCUMENT_COLUMNS} FROM kb_documents WHERE site_id = ?1 AND id = ?2"), params![site, id], document_row)
                .optional_row()
        })
    }

    /// Deletes one document (by id or source) with its chunks.
    pub fn delete_document(&self, id_or_source: &str) -> Result<()> {
        self.write(|tx, site| {
            unindex(tx, site, "d.id = ?2 OR d.source = ?2", id_or_source)?;
            let n = tx.execute("DELETE FROM kb_documents WHERE site_id = ?1 AND (id = ?2 OR source = ?2)", params![site, id_or_source])?;
            if n == 0 {
                return Err(StoreError::NotFound);
            }
            bump_generation(tx, site)
        })
    }

    /// Deletes every document of the site; returns how many there were.
    pub fn delete_all(&self) -> Result<usize> {
        self.write(|tx, site| {
            unindex(tx, site, "?2 = ?2", "")?;
            let n = tx.execute("DELETE FROM kb_documents WHERE site_id = ?1", [site])?;
            bump_generation(tx, site)?;
            Ok(n)
        })
    }

    /// Deletes the record documents of one file (sources starting with `prefix`) that are not in `keep`;
    /// returns how many went.
    pub fn delete_missing_records(&self, prefix: &str, keep: &[String]) -> Result<usize> {
        self.write(|tx, site| {
            let mut stmt = tx.prepare("SELECT source FROM kb_documents WHERE site_id = ?1 AND substr(source, 1, length(?2)) = ?2")?;
            let stored: Vec<String> = stmt.query_map(params![site, prefix], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
            let keep: std::collections::HashSet<&str> = keep.iter().map(String::as_str).collect();
            let mut n = 0;
            for source in stored.iter().filter(|s| !keep.contains(s.as_str())) {
                unindex(tx, site, "d.source = ?2", source)?;
                n += tx.execute("DELETE FROM kb_documents WHERE site_id = ?1 AND source = ?2", params![site, source])?;
            }
            if n > 0 {
                bump_generation(tx, site)?;
            }
            Ok(n)
        })
    }

    /// The analysis version the site's full-text index was built with; `None` before its first import.
    pub fn fts_analyzer(&self) -> Result<Option<i64>> {
        self.read(|conn, site| conn.query_row("SELECT fts_analyzer FROM kb_generations WHERE site_id = ?1", [site], |r| r.get(0)).optional_row())
    }

    /// Rebuilds the site's full-text index from its chunks, in one transaction, with `analyze` (given the
    /// chunk's document language and its confidence, and a text) making the indexed terms, and records
    /// `version` as the analysis it was built with. Returns the row count.
    pub fn rebuild_fts(&self, version: i64, analyze: impl Fn(Option<(&str, f32)>, &str) -> String) -> Result<usize> {
        self.write(|tx, site| {
            let table = fts_table(site);
            tx.execute_batch(&format!("DROP TABLE IF EXISTS {table}"))?;
            ensure_fts(tx, site)?;
            let mut insert = tx.prepare(&format!("INSERT INTO {table} (rowid, heading, text) VALUES (?1, ?2, ?3)"))?;
            let mut n = 0;
            chunk_texts(tx, site, |key, detected, heading, text| {
                insert.execute(params![key as i64, analyze(detected, heading), analyze(detected, text)])?;
                n += 1;
                Ok(())
            })?;
            bump_generation(tx, site)?;
            tx.execute("UPDATE kb_generations SET fts_analyzer = ?2 WHERE site_id = ?1", params![site, version])?;
            Ok(n)
        })
    }

    /// Calls `f` with every chunk of the site: its key, its document's detected language and confidence
    /// (if any), its heading and its text (blocking; builds `knowledge::bm25`). Returns the site's
    /// generation, read before the chunks: the chunks are at least that recent.
    pub fn each_chunk_text(&self, mut f: impl FnMut(u64, Option<(&str, f32)>, &str, &str)) -> Result<i64> {
        let generation = self.generation()?;
        self.read(|conn, site| {
            chunk_texts(conn, site, |key, detected, heading, text| {
                f(key, detected, heading, text);
                Ok(())
            })?;
            Ok(generation)
        })
    }

    /// The languages of the site's documents detected with at least `min_confidence`, with how many
    /// documents each, most first.
    pub fn document_languages(&self, min_confidence: f32) -> Result<Vec<(String, u64)>> {
        self.read(|conn, site| {
            let mut stmt = conn.prepare_cached(
                "SELECT lang, count(*) AS n FROM kb_documents WHERE site_id = ?1 AND lang IS NOT NULL AND lang_confidence >= ?2
                 GROUP BY lang ORDER BY n DESC, lang",
            )?;
            let rows = stmt.query_map(params![site, min_confidence as f64], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64)))?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// How many documents the site has.
    pub fn document_count(&self) -> Result<u64> {
        self.read(|conn, site| Ok(conn.query_row("SELECT count(*) FROM kb_documents WHERE site_id = ?1", [site], |r| r.get::<_, i64>(0))? as u64))
    }

    /// Every chunk key of the site whose embedding `model` made.
    pub fn chunk_keys_of(&self, model: &str) -> Result<Vec<u64>> {
        self.read(|conn, site| {
            let mut stmt = conn.prepare_cached("SELECT rowid FROM kb_chunks WHERE site_id = ?1 AND model = ?2")?;
            let rows = stmt.query_map(params![site, model], |r| r.get::<_, i64>(0).map(|k| k as u64))?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// How many of the site's chunks another model than `model` embedded.
    pub fn stale_count(&self, model: &str) -> Result<u64> {
        self.read(|conn, site| {
            let n: i64 = conn.query_row("SELECT count(*) FROM kb_chunks WHERE site_id = ?1 AND model <> ?2", params![site, model], |r| r.get(0))?;
            Ok(n as u64)
        })
    }

    /// Up to `limit` chunks that another model than `model` embedded, in key order.
    pub fn stale_chunks(&self, model: &str, limit: usize) -> Result<Vec<StaleChunk>> {
        self.read(|conn, site| {
            let mut stmt = conn.prepare_cached(
                "SELECT c.rowid, c.heading, c.text, CASE WHEN d.format = 'faq' THEN d.title END FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id \
                 WHERE c.site_id = ?1 AND c.model <> ?2 ORDER BY c.rowid LIMIT ?3",
            )?;
            let rows = stmt.query_map(params![site, model, limit as i64], |r| {
                Ok(StaleChunk { key: r.get::<_, i64>(0)? as u64, heading: r.get(1)?, text: r.get(2)?, faq_question: r.get(3)? })
            })?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// Replaces the embeddings of these chunks with `model`'s, in one transaction that bumps the
    /// generation. Chunks deleted meanwhile are passed over; returns how many were updated.
    pub fn set_embeddings(&self, model: &str, vectors: &[(u64, Vec<f32>)]) -> Result<usize> {
        self.write(|tx, site| {
            let mut stmt = tx.prepare_cached("UPDATE kb_chunks SET embedding = ?3, model = ?4 WHERE site_id = ?1 AND rowid = ?2")?;
            let mut n = 0;
            for (key, v) in vectors {
                n += stmt.execute(params![site, *key as i64, vector_to_blob(v), model])?;
            }
            if n > 0 {
                bump_generation(tx, site)?;
            }
            Ok(n)
        })
    }

    /// Up to `limit` chunks of the site's English documents (their language as `chunk_languages` reads it,
    /// FAQ entries left out) with a key above `after` and no English vector of `model`, in key order: what
    /// `knowledge::import::english` fills. Also returns the last key scanned: when no chunk is returned,
    /// every chunk up to it has been looked at (chunk keys are never reused, so a caller resumes there).
    pub fn english_pending(&self, model: &str, min_confidence: f32, after: u64, limit: usize) -> Result<(Vec<StaleChunk>, u64)> {
        self.read(|conn, site| {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT c.rowid, c.heading, c.text, {CHUNK_LANGUAGE} \
                 WHERE c.site_id = ?1 AND d.site_id = ?1 AND c.en_model <> ?3 AND d.format <> 'faq' AND c.rowid > ?4 ORDER BY c.rowid LIMIT 512"
            ))?;
            let mut out = Vec::new();
            let mut scanned = after as i64;
            // Scanned in pages so that a site of many chunks in other languages ends the loop.
            loop {
                let mut seen = 0;
                let mut rows = stmt.query(params![site, min_confidence as f64, model, scanned])?;
                while let Some(r) = rows.next()? {
                    seen += 1;
                    scanned = r.get(0)?;
                    if r.get::<_, String>(3)? == "en" {
                        out.push(StaleChunk { key: scanned as u64, heading: r.get(1)?, text: r.get(2)?, faq_question: None });
                        if out.len() >= limit {
                            return Ok((out, scanned as u64));
                        }
                    }
                }
                if seen == 0 {
                    return Ok((out, scanned as u64));
                }
            }
        })
    }

    /// Stores English vectors of `model` for these chunks (chunks deleted meanwhile are passed over);
    /// returns how many were stored. The generation does not move: no index is built from them.
    pub fn set_english_embeddings(&self, model: &str, vectors: &[(u64, Vec<f32>)]) -> Result<usize> {
        self.write(|tx, site| {
            let mut stmt = tx.prepare_cached("UPDATE kb_chunks SET en_embedding = ?3, en_model = ?4 WHERE site_id = ?1 AND rowid = ?2")?;
            let mut n = 0;
            for (key, v) in vectors {
                n += stmt.execute(params![site, *key as i64, vector_to_blob(v), model])?;
            }
            Ok(n)
        })
    }

    /// The English vectors of `model` of these chunks of the site, where they have one.
    pub fn english_embeddings(&self, model: &str, keys: &[u64]) -> Result<std::collections::HashMap<u64, Vec<f32>>> {
        self.read(|conn, site| {
            let mut stmt =
                conn.prepare_cached("SELECT en_embedding FROM kb_chunks WHERE site_id = ?1 AND rowid = ?2 AND en_model = ?3 AND en_embedding IS NOT NULL")?;
            let mut out = std::collections::HashMap::with_capacity(keys.len());
            for &k in keys {
                if let Some(blob) = stmt.query_row(params![site, k as i64, model], |r| r.get::<_, Vec<u8>>(0)).optional_row()? {
                    out.insert(k, blob_to_vector(&blob));
                }
            }
            Ok(out)
        })
    }

    /// Every chunk key of the site with its document's source (evaluation maps hits to documents).
    pub fn chunk_sources(&self) -> Result<Vec<(u64, String)>> {
        self.read(|conn, site| {
            let mut stmt = conn.prepare("SELECT c.rowid, d.source FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id WHERE c.site_id = ?1")?;
            let rows = stmt.query_map([site], |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, String>(1)?)))?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// The embeddings of some chunks of the site, those that `model` made.
    pub fn embeddings_of(&self, model: &str, keys: &[u64]) -> Result<Vec<(u64, Vec<f32>)>> {
        self.read(|conn, site| {
            let mut stmt = conn.prepare_cached("SELECT embedding FROM kb_chunks WHERE site_id = ?1 AND rowid = ?2 AND model = ?3")?;
            let mut out = Vec::with_capacity(keys.len());
            for &k in keys {
                if let Some(blob) = stmt.query_row(params![site, k as i64, model], |r| r.get::<_, Vec<u8>>(0)).optional_row()? {
                    out.push((k, blob_to_vector(&blob)));
                }
            }
            Ok(out)
        })
    }

    /// Up to `limit` stored vectors of `model` of the site's chunks with a key above `after`, in key
    /// order: what an index synced when `after` was the largest key does not hold yet.
    pub fn embeddings_after(&self, model: &str, after: u64, limit: usize) -> Result<Vec<(u64, Vec<f32>)>> {
        self.read(|conn, site| {
            let mut stmt =
                conn.prepare_cached("SELECT rowid, embedding FROM kb_chunks WHERE site_id = ?1 AND model = ?2 AND rowid > ?3 ORDER BY rowid LIMIT ?4")?;
            let rows = stmt
                .query_map(params![site, model, after as i64, limit as i64], |r| Ok((r.get::<_, i64>(0)? as u64, blob_to_vector(&r.get::<_, Vec<u8>>(1)?))))?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// BM25 over the site's chunks for an FTS5 `MATCH` expression: (key, score), best first. Scores are
    /// positive (FTS5's `bm25()` is negated); `heading_weight` weighs the heading column against the text.
    pub fn fts_search(&self, expr: &str, heading_weight: f64, limit: usize) -> Result<Vec<(u64, f64)>> {
        self.read(|conn, site| {
            let table = fts_table(site);
            let sql = format!("SELECT rowid, -bm25({table}, ?2, 1.0) AS score FROM {table} WHERE {table} MATCH ?1 ORDER BY score DESC LIMIT ?3");
            let Some(mut stmt) = fts_statement(conn, &sql)? else { return Ok(Vec::new()) };
            let rows = stmt.query_map(params![expr, heading_weight, limit as i64], |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, f64>(1)?)))?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// How many of the site's chunks match the FTS5 expression (no ranking).
    pub fn fts_count(&self, expr: &str) -> Result<u64> {
        self.read(|conn, site| {
            let table = fts_table(site);
            let Some(mut stmt) = fts_statement(conn, &format!("SELECT count(*) FROM {table} WHERE {table} MATCH ?1"))? else { return Ok(0) };
            Ok(stmt.query_row([expr], |r| r.get::<_, i64>(0))? as u64)
        })
    }

    /// How many chunks the site's full-text index holds.
    pub fn fts_rows(&self) -> Result<u64> {
        self.read(|conn, site| {
            let table = fts_table(site);
            let Some(mut stmt) = fts_statement(conn, &format!("SELECT count(*) FROM {table}_docsize"))? else { return Ok(0) };
            Ok(stmt.query_row([], |r| r.get::<_, i64>(0))? as u64)
        })
    }

    /// The document of each of these chunks that belongs to the site.
    pub fn document_ids(&self, keys: &[u64]) -> Result<std::collections::HashMap<u64, String>> {
        self.read(|conn, site| {
            let mut stmt = conn.prepare_cached("SELECT document_id FROM kb_chunks WHERE site_id = ?1 AND rowid = ?2")?;
            let mut out = std::collections::HashMap::with_capacity(keys.len());
            for &key in keys {
                if let Some(doc) = stmt.query_row(params![site, key as i64], |r| r.get::<_, String>(0)).optional_row()? {
                    out.insert(key, doc);
                }
            }
            Ok(out)
        })
    }

    /// Every chunk's document language (see `chunk_languages`), for the vector index to hold for a
    /// generation.
    pub fn all_chunk_languages(&self, min_confidence: f32) -> Result<Vec<(u64, String)>> {
        self.read(|conn, site| {
            let mut stmt = conn.prepare_cached(&format!("SELECT c.rowid, {CHUNK_LANGUAGE} WHERE c.site_id = ?1 AND d.site_id = ?1"))?;
            let rows = stmt.query_map(params![site, min_confidence as f64], |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, String>(1)?)))?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
    }

    /// The keys of the site's chunks that are FAQ entries (their document's format is `faq`), for the
    /// vector index to hold for a generation (`search::Fusion::faq` scores them).
    pub fn all_faq_chunks(&self) -> Result<Vec<u64>> {
        self.read(|conn, site| {
            let mut stmt = conn.prepare_cached(
                "SELECT c.rowid FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id WHERE c.site_id = ?1 AND d.site_id = ?1 AND d.format = 'faq'",
            )?;
            let rows = stmt.query_map([site], |r| r.get::<_, i64>(0).map(|k| k as u64))?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// Which of these chunks are FAQ entries (see `all_faq_chunks`).
    pub fn faq_chunks(&self, keys: &[u64]) -> Result<Vec<u64>> {
        self.read(|conn, site| {
            let mut stmt = conn.prepare_cached(
                "SELECT 1 FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id WHERE c.site_id = ?1 AND c.rowid = ?2 AND d.site_id = ?1 AND d.format = 'faq'",
            )?;
            let mut out = Vec::new();
            for &key in keys {
                if stmt.query_row(params![site, key as i64], |_| Ok(())).optional_row()?.is_some() {
                    out.push(key);
                }
            }
            Ok(out)
        })
    }

    /// The language (ISO 639-1) of each of these chunks' documents: as detected at import when the detector
    /// was at least `min_confidence` sure, else the site's own language (short pages are hard to detect).
    pub fn chunk_languages(&self, keys: &[u64], min_confidence: f32) -> Result<std::collections::HashMap<u64, String>> {
        self.read(|conn, site| {
            let mut stmt = conn.prepare_cached(&format!("SELECT {CHUNK_LANGUAGE} WHERE c.site_id = ?1 AND c.rowid = ?3 AND d.site_id = ?1"))?;
            let mut out = std::collections::HashMap::with_capacity(keys.len());
            for &key in keys {
                if let Some(lang) = stmt.query_row(params![site, min_confidence as f64, key as i64], |r| r.get::<_, String>(0)).optional_row()? {
                    out.insert(key, lang);
                }
            }
            Ok(out)
        })
    }

    /// The chunks with these keys that belong to the site, in the order of `keys`.
    pub fn chunks(&self, keys: &[u64]) -> Result<Vec<ChunkRow>> {
        self.read(|conn, site| {
            let mut stmt = conn.prepare_cached(
                "SELECT c.id, c.document_id, d.source, d.title, c.heading, d.url, c.text FROM kb_chunks c
                 JOIN kb_documents d ON d.id = c.document_id WHERE c.site_id = ?1 AND c.rowid = ?2",
            )?;
            let mut out = Vec::with_capacity(keys.len());
            for &key in keys {
                let row = stmt
                    .query_row(params![site, key as i64], |r| {
                        Ok(ChunkRow {
                            key,
                            id: r.get(0)?,
                            document_id: r.get(1)?,
                            source: r.get(2)?,
                            title: r.get(3)?,
                            heading: r.get(4)?,
                            url: r.get(5)?,
                            text: r.get(6)?,
                        })
                    })
                    .optional_row()?;
                out.extend(row);
            }
            Ok(out)
        })
    }
}

/// The name of the site's FTS5 table (a UUID in hex: safe to splice into SQL).
pub(super) fn fts_table(site: &SiteId) -> String {
    format!("kb_fts_{}", site.as_uuid().simple())
}

fn ensure_fts(tx: &Transaction<'_>, site: &SiteId) -> Result<String> {
    let table = fts_table(site);
    tx.execute_batch(&format!(
        "CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING fts5(heading, text, content = '', contentless_delete = 1, \
         tokenize = \"unicode61 remove_diacritics 2 categories 'L* N* Co M*'\")"
    ))?;
    Ok(table)
}

/// Removes from the FTS index the chunks of the site's documents matched by `condition` (SQL over
/// `kb_documents` with `?1` = site and `?2` = the argument), before those documents are deleted.
fn unindex(tx: &Transaction<'_>, site: &SiteId, condition: &str, arg: &str) -> Result<()> {
    let table = ensure_fts(tx, site)?;
    tx.execute(
        &format!(
            "DELETE FROM {table} WHERE rowid IN (SELECT c.rowid FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id \
             WHERE d.site_id = ?1 AND c.site_id = ?1 AND ({condition}))"
        ),
        params![site, arg],
    )?;
    Ok(())
}

fn bump_generation(tx: &Transaction<'_>, site: &SiteId) -> Result<()> {
    tx.execute(
        "INSERT INTO kb_generations (site_id, generation) VALUES (?1, 1)
         ON CONFLICT(site_id) DO UPDATE SET generation = generation + 1",
        [site],
    )?;
    Ok(())
}

/// A prepared statement over a site's FTS tables, or `None` when the site has no table yet (it has
/// never imported anything).
fn fts_statement<'c>(conn: &'c Connection, sql: &str) -> Result<Option<rusqlite::CachedStatement<'c>>> {
    match conn.prepare_cached(sql) {
        Ok(stmt) => Ok(Some(stmt)),
        Err(rusqlite::Error::SqliteFailure(_, Some(m))) if m.starts_with("no such table") => Ok(None),
        Err(e) => Err(e.into()),
    }
}

pub(super) fn vector_to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub(super) fn blob_to_vector(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}
