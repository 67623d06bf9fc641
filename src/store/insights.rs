//! What the query log tells the operator (`sitebot insights`): questions that went unanswered,
//! answered ones whose best source scored low, thumbs-down ratings, the most cited sources and the
//! resolution rate by day. Grouping unanswered questions by meaning needs the embedder, so it happens
//! in `crate::insights`; this module only reads.

use rusqlite::params;
use serde::Serialize;

use super::{Result, SiteStore};
use crate::domain::Timestamp;

const DAY_MS: i64 = 86_400_000;

/// A logged question.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Asked {
    pub query_id: String,
    pub question: String,
    pub at: Timestamp,
    /// The score of the best source (none when unanswered, or logged before scores were kept).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_score: Option<f32>,
}

/// A thumbs-down rating, with the question it rated and the comment left with it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThumbsDown {
    pub query_id: String,
    pub question: Option<String>,
    pub comment: Option<String>,
    pub at: Timestamp,
}

/// A document (or curated answer) and how many answers cited it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CitedSource {
    pub document_id: String,
    pub title: String,
    pub url: Option<String>,
    pub citations: u64,
}

/// Questions and resolved questions of one UTC day.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DayResolution {
    pub day: String,
    pub questions: u64,
    pub resolved: u64,
    /// resolved / questions
    pub rate: f64,
}

/// One site's insights queries.
pub struct Insights<'s> {
    site: SiteStore<'s>,
}

fn asked(r: &rusqlite::Row<'_>) -> rusqlite::Result<Asked> {
    Ok(Asked { query_id: r.get(0)?, question: r.get(1)?, at: r.get(2)?, top_score: r.get::<_, Option<f64>>(3)?.map(|s| s as f32) })
}

impl<'s> Insights<'s> {
    pub(super) fn new(site: SiteStore<'s>) -> Self {
        Self { site }
    }

    /// Unanswered questions since `since`, newest first, at most `limit`.
    pub fn unanswered(&self, since: Timestamp, limit: usize) -> Result<Vec<Asked>> {
        let site = self.site.id();
        self.site.store().read(|c| {
            let mut stmt = c.prepare(
                "SELECT id, question, created_at, top_score FROM query_log WHERE site_id = ?1 AND created_at >= ?2 AND resolved = 0
                 ORDER BY created_at DESC, id LIMIT ?3",
            )?;
            Ok(stmt.query_map(params![site, since, limit as i64], asked)?.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// Answered questions whose best source scored below `below`, lowest first, at most `limit`.
    pub fn weak_answers(&self, since: Timestamp, below: f32, limit: usize) -> Result<Vec<Asked>> {
        let site = self.site.id();
        self.site.store().read(|c| {
            let mut stmt = c.prepare(
                "SELECT id, question, created_at, top_score FROM query_log
                 WHERE site_id = ?1 AND created_at >= ?2 AND resolved = 1 AND top_score < ?3
                 ORDER BY top_score, created_at DESC LIMIT ?4",
            )?;
            Ok(stmt.query_map(params![site, since, below as f64, limit as i64], asked)?.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// Thumbs-down ratings since `since`, newest first, at most `limit`.
    pub fn thumbs_down(&self, since: Timestamp, limit: usize) -> Result<Vec<ThumbsDown>> {
        let site = self.site.id();
        self.site.store().read(|c| {
            let mut stmt = c.prepare(
                "SELECT f.query_id, q.question, f.comment, f.at FROM feedback f LEFT JOIN query_log q ON q.id = f.query_id AND q.site_id = f.site_id
                 WHERE f.site_id = ?1 AND f.at >= ?2 AND f.rating = 'down' ORDER BY f.at DESC LIMIT ?3",
            )?;
            let rows = stmt.query_map(params![site, since, limit as i64], |r| {
                let comment: Option<String> = r.get(2)?;
                Ok(ThumbsDown { query_id: r.get(0)?, question: r.get(1)?, comment: comment.filter(|c| !c.trim().is_empty()), at: r.get(3)? })
            })?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// The documents answers cited most since `since`, at most `limit`.
    pub fn top_sources(&self, since: Timestamp, limit: usize) -> Result<Vec<CitedSource>> {
        let site = self.site.id();
        self.site.store().read(|c| {
            let mut stmt = c.prepare(
                "SELECT document_id, max(title), max(url), count(*) AS n FROM query_sources WHERE site_id = ?1 AND created_at >= ?2
                 GROUP BY document_id ORDER BY n DESC, document_id LIMIT ?3",
            )?;
            let rows = stmt.query_map(params![site, since, limit as i64], |r| {
                Ok(CitedSource { document_id: r.get(0)?, title: r.get(1)?, url: r.get(2)?, citations: r.get::<_, i64>(3)? as u64 })
            })?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// Questions and resolved questions per UTC day since `since`, oldest first (days without questions
    /// are left out).
    pub fn resolution_by_day(&self, since: Timestamp) -> Result<Vec<DayResolution>> {
        let site = self.site.id();
        self.site.store().read(|c| {
            let mut stmt = c.prepare(
                "SELECT (created_at / ?3) * ?3 AS day, count(*), sum(resolved) FROM query_log WHERE site_id = ?1 AND created_at >= ?2
                 GROUP BY day ORDER BY day",
            )?;
            let rows = stmt.query_map(params![site, since, DAY_MS], |r| {
                let (day, questions, resolved): (Timestamp, i64, i64) = (r.get(0)?, r.get(1)?, r.get(2)?);
                Ok(DayResolution {
                    day: day.date().to_string(),
                    questions: questions as u64,
                    resolved: resolved as u64,
                    rate: if questions == 0 { 0.0 } else { (resolved as f64 / questions as f64 * 10_000.0).round() / 10_000.0 },
                })
            })?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }
}
