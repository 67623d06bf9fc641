//! The review queue: each site's unanswered questions, grouped by meaning as they are logged, so the
//! console lists the groups with one indexed read whatever the size of the query log.
//!
//! A question the knowledge did not answer joins, in the transaction that logs it, the open group of its
//! site whose centroid (the normalized sum of its questions' embeddings) is closest, when at least
//! `similarity` close; otherwise it starts a group. A group is handled (a curated answer was written for
//! it, or someone marked it reviewed) and leaves the queue; a later question of the same meaning starts a
//! new group, so the queue shows what still fails. Embeddings of another model are never compared: a
//! group belongs to the model that embedded its questions.

use rusqlite::{Transaction, params};

use super::{OptionalRow, Result, SiteStore, StoreError};
use crate::domain::{QueryId, SiteId, Timestamp};

/// Open groups of one site compared with a new question at most (the largest and newest): the cost of
/// logging a question stays bounded however long the queue grows.
const MAX_COMPARED: usize = 2000;

/// What an unanswered question's place in the review queue is decided by.
#[derive(Debug, Clone)]
pub struct ReviewVector {
    pub vector: Vec<f32>,
    /// The fingerprint of the model that embedded it.
    pub model: String,
    /// The cosine to a group's centroid that joins the group.
    pub similarity: f32,
}

/// A group of questions that mean the same thing.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewGroup {
    pub id: i64,
    pub count: u64,
    /// The newest wording.
    pub example: String,
    pub first_at: Timestamp,
    pub last_at: Timestamp,
    /// When and how it left the queue: `curated` or `reviewed`.
    pub handled: Option<(Timestamp, String)>,
}

/// One of a group's questions, from the query log.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupQuestion {
    pub query_id: String,
    pub question: String,
    pub lang: String,
    pub at: Timestamp,
    pub conversation_id: Option<String>,
}

fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_blob(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn normalized(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

/// Puts an unanswered question into its group (in the caller's transaction, which logs it).
pub(super) fn assign(tx: &Transaction<'_>, site: &SiteId, query: &QueryId, question: &str, review: &ReviewVector, at: Timestamp) -> Result<i64> {
    let (vector, model, similarity) = (review.vector.as_slice(), review.model.as_str(), review.similarity);
    let mut stmt = tx.prepare_cached(
        "SELECT id, centroid, count FROM review_groups WHERE site_id = ?1 AND model = ?2 AND handled_at IS NULL
         ORDER BY count DESC, last_at DESC LIMIT ?3",
    )?;
    let groups = stmt.query_map(params![site, model, MAX_COMPARED as i64], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?, r.get::<_, i64>(2)?)))?;
    let mut best: Option<(i64, f32, Vec<f32>, i64)> = None;
    for g in groups {
        let (id, blob, count) = g?;
        let centroid = from_blob(&blob);
        if centroid.len() != vector.len() {
            continue;
        }
        let cos: f32 = centroid.iter().zip(vector).map(|(a, b)| a * b).sum();
        if cos >= similarity && best.as_ref().is_none_or(|b| cos > b.1) {
            best = Some((id, cos, centroid, count));
        }
    }
    let group = match best {
        Some((id, _, centroid, count)) => {
            // The centroid moves towards the new question by its weight in the group.
            let merged: Vec<f32> = centroid.iter().zip(vector).map(|(c, v)| c * count as f32 + v).collect();
            tx.execute(
                "UPDATE review_groups SET centroid = ?2, count = count + 1, example = ?3, last_at = ?4 WHERE id = ?1",
                params![id, to_blob(&normalized(merged)), question, at],
            )?;
            id
        }
        None => {
            tx.execute(
                "INSERT INTO review_groups (site_id, model, centroid, count, example, first_at, last_at) VALUES (?1, ?2, ?3, 1, ?4, ?5, ?5)",
                params![site, model, to_blob(&normalized(vector.to_vec())), question, at],
            )?;
            tx.last_insert_rowid()
        }
    };
    tx.execute("UPDATE query_log SET review_group = ?2 WHERE id = ?1", params![query, group])?;
    Ok(group)
}

/// One site's review queue.
pub struct Review<'s> {
    site: SiteStore<'s>,
}

const GROUP_COLUMNS: &str = "id, count, example, first_at, last_at, handled_at, handled_how";

fn group_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ReviewGroup> {
    let handled_at: Option<Timestamp> = r.get(5)?;
    let how: Option<String> = r.get(6)?;
    Ok(ReviewGroup {
        id: r.get(0)?,
        count: r.get::<_, i64>(1)? as u64,
        example: r.get(2)?,
        first_at: r.get(3)?,
        last_at: r.get(4)?,
        handled: handled_at.zip(how),
    })
}

impl<'s> Review<'s> {
    pub(super) fn new(site: SiteStore<'s>) -> Self {
        Self { site }
    }

    /// Open groups, largest first, then newest; at most `limit`, after `(count, last_at, id)` when given
    /// (keyset pagination).
    pub fn open(&self, after: Option<(u64, Timestamp, i64)>, limit: usize) -> Result<Vec<ReviewGroup>> {
        let site = self.site.id();
        self.site.store().read(|c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {GROUP_COLUMNS} FROM review_groups WHERE site_id = ?1 AND handled_at IS NULL
                 AND (?2 IS NULL OR (count, last_at, id) < (?2, ?3, ?4))
                 ORDER BY count DESC, last_at DESC, id DESC LIMIT ?5"
            ))?;
            let (count, last, id) = after.map_or((None, None, None), |(c, l, i)| (Some(c as i64), Some(l), Some(i)));
            let rows = stmt.query_map(params![site, count, last, id, limit as i64], group_row)?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// Groups handled with `how` (`curated` or `reviewed`), the latest first, at most `limit`.
    pub fn handled(&self, how: &str, limit: usize) -> Result<Vec<ReviewGroup>> {
        let site = self.site.id();
        self.site.store().read(|c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {GROUP_COLUMNS} FROM review_groups WHERE site_id = ?1 AND handled_at IS NOT NULL AND handled_how = ?2 ORDER BY handled_at DESC LIMIT ?3"
            ))?;
            let rows = stmt.query_map(params![site, how, limit as i64], group_row)?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// One of the site's groups; `NotFound` for another site's.
    pub fn group(&self, id: i64) -> Result<ReviewGroup> {
        let site = self.site.id();
        self.site
            .store()
            .read(|c| {
                c.query_row(&format!("SELECT {GROUP_COLUMNS} FROM review_groups WHERE id = ?1 AND site_id = ?2"), params![id, site], group_row).optional_row()
            })?
            .ok_or(StoreError::NotFound)
    }

    /// The group's questions still in the query log, newest first, at most `limit`.
    pub fn questions(&self, group: i64, limit: usize) -> Result<Vec<GroupQuestion>> {
        let site = self.site.id();
        self.site.store().read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT id, question, lang, created_at, conversation_id FROM query_log WHERE site_id = ?1 AND review_group = ?2
                 ORDER BY created_at DESC, id LIMIT ?3",
            )?;
            let rows = stmt.query_map(params![site, group, limit as i64], |r| {
                Ok(GroupQuestion { query_id: r.get(0)?, question: r.get(1)?, lang: r.get(2)?, at: r.get(3)?, conversation_id: r.get(4)? })
            })?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// Takes the group out of the queue (`how`: `curated` or `reviewed`); `NotFound` for another site's
    /// group, `Conflict` when it was handled already.
    pub fn handle(&self, group: i64, how: &str, by: &str) -> Result<ReviewGroup> {
        let site = self.site.id();
        self.site.write(|tx| {
            let n = tx.execute(
                "UPDATE review_groups SET handled_at = ?3, handled_how = ?4, handled_by = ?5 WHERE id = ?1 AND site_id = ?2 AND handled_at IS NULL",
                params![group, site, Timestamp::now(), how, by],
            )?;
            let g = tx
                .query_row(&format!("SELECT {GROUP_COLUMNS} FROM review_groups WHERE id = ?1 AND site_id = ?2"), params![group, site], group_row)
                .optional_row()?;
            match (n, g) {
                (_, None) => Err(StoreError::NotFound),
                (0, Some(_)) => Err(StoreError::Conflict("this group was handled already".into())),
                (_, Some(g)) => Ok(g),
            }
        })
    }
}
