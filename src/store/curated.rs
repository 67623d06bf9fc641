//! Curated answers: an operator's own answer to a question (an FAQ entry with priority), matched against
//! visitors' questions by the similarity of their embeddings (`knowledge::curated`). Each keeps the
//! fingerprint of the model that embedded its question; only the loaded model's are ever compared, and
//! `stale` / `set_embedding` let a server re-embed the others after a model change.

use rusqlite::params;
use serde::Serialize;

use super::knowledge::{blob_to_vector, vector_to_blob};
use super::{Result, SiteStore, StoreError};
use crate::domain::Timestamp;

/// A curated answer to store: the question it answers, embedded by `model`.
#[derive(Debug, Clone)]
pub struct NewCurated {
    pub question: String,
    pub answer: String,
    pub url: Option<String>,
    pub embedding: Vec<f32>,
    pub model: String,
}

/// A curated answer as the operator sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CuratedAnswer {
    /// `ans_<ulid>`
    pub id: String,
    pub question: String,
    pub answer: String,
    pub url: Option<String>,
    pub created_at: Timestamp,
}

/// One site's curated answers.
pub struct Curated<'s> {
    site: SiteStore<'s>,
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<CuratedAnswer> {
    Ok(CuratedAnswer { id: r.get(0)?, question: r.get(1)?, answer: r.get(2)?, url: r.get(3)?, created_at: r.get(4)? })
}

impl<'s> Curated<'s> {
    pub(super) fn new(site: SiteStore<'s>) -> Self {
        Self { site }
    }

    pub fn add(&self, new: &NewCurated) -> Result<CuratedAnswer> {
        let site = self.site.id();
        let answer = CuratedAnswer {
            id: format!("ans_{}", ulid::Ulid::new()),
            question: new.question.clone(),
            answer: new.answer.clone(),
            url: new.url.clone(),
            created_at: Timestamp::now(),
        };
        self.site.write(|tx| {
            tx.execute(
                "INSERT INTO curated_answers (id, site_id, question, answer, url, embedding, model, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![answer.id, site, answer.question, answer.answer, answer.url, vector_to_blob(&new.embedding), new.model, answer.created_at],
            )?;
            Ok(())
        })?;
        Ok(answer)
    }

    /// The site's curated answers, oldest first.
    pub fn list(&self) -> Result<Vec<CuratedAnswer>> {
        let site = self.site.id();
        self.site.store().read(|c| {
            let mut stmt = c.prepare("SELECT id, question, answer, url, created_at FROM curated_answers WHERE site_id = ?1 ORDER BY created_at, id")?;
            Ok(stmt.query_map([site], row)?.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// One of the site's curated answers; `None` for any other id.
    pub fn get(&self, id: &str) -> Result<Option<CuratedAnswer>> {
        use super::OptionalRow;
        let site = self.site.id();
        self.site.store().read(|c| {
            c.query_row("SELECT id, question, answer, url, created_at FROM curated_answers WHERE id = ?1 AND site_id = ?2", params![id, site], row)
                .optional_row()
        })
    }

    /// Replaces the question, answer and link of one of the site's curated answers (the question embedded
    /// again by `model`); `NotFound` for any other id.
    pub fn update(&self, id: &str, new: &NewCurated) -> Result<CuratedAnswer> {
        let site = self.site.id();
        self.site.write(|tx| {
            let n = tx.execute(
                "UPDATE curated_answers SET question = ?3, answer = ?4, url = ?5, embedding = ?6, model = ?7 WHERE id = ?1 AND site_id = ?2",
                params![id, site, new.question, new.answer, new.url, vector_to_blob(&new.embedding), new.model],
            )?;
            if n == 0 {
                return Err(StoreError::NotFound);
            }
            Ok(tx.query_row("SELECT id, question, answer, url, created_at FROM curated_answers WHERE id = ?1 AND site_id = ?2", params![id, site], row)?)
        })
    }

    /// Deletes one of the site's curated answers; `NotFound` for any other id.
    pub fn delete(&self, id: &str) -> Result<()> {
        let site = self.site.id();
        self.site.write(|tx| match tx.execute("DELETE FROM curated_answers WHERE id = ?1 AND site_id = ?2", params![id, site])? {
            0 => Err(StoreError::NotFound),
            _ => Ok(()),
        })
    }

    /// The answers whose question `model` embedded, with that embedding: what a question is matched
    /// against. A site has tens to hundreds of them, read per question (one indexed range).
    pub fn embedded_by(&self, model: &str) -> Result<Vec<(CuratedAnswer, Vec<f32>)>> {
        let site = self.site.id();
        self.site.store().read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT id, question, answer, url, created_at, embedding FROM curated_answers WHERE site_id = ?1 AND model = ?2 ORDER BY created_at, id",
            )?;
            let rows = stmt.query_map(params![site, model], |r| Ok((row(r)?, blob_to_vector(&r.get::<_, Vec<u8>>(5)?))))?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// Answers whose question another model embedded: `(id, question)`.
    pub fn stale(&self, model: &str) -> Result<Vec<(String, String)>> {
        let site = self.site.id();
        self.site.store().read(|c| {
            let mut stmt = c.prepare("SELECT id, question FROM curated_answers WHERE site_id = ?1 AND model != ?2")?;
            Ok(stmt.query_map(params![site, model], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// Replaces the embedding of a curated answer's question (after a model change).
    pub fn set_embedding(&self, id: &str, model: &str, embedding: &[f32]) -> Result<()> {
        let site = self.site.id();
        self.site.write(|tx| {
            tx.execute(
                "UPDATE curated_answers SET embedding = ?3, model = ?4 WHERE id = ?1 AND site_id = ?2",
                params![id, site, vector_to_blob(embedding), model],
            )?;
            Ok(())
        })
    }
}
