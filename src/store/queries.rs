//! The query log: one row per answered question, counted in the site's public stats and announced as
//! `query.completed` to sites that opted in, in one transaction.

use rusqlite::params;
use serde::Serialize;

use super::outbox::{self, MessageId};
use super::{Result, SiteStore};
use crate::domain::{AnswerMode, EventType, SiteId, Timestamp};

/// One answered question, for the log, the public counters and the `query.completed` webhook.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueryRecord {
    pub query_id: String,
    pub site_id: SiteId,
    pub question: String,
    pub resolved: bool,
    pub source_count: usize,
    pub latency_ms: u64,
    /// How the answer was made (also in `query.completed`).
    pub mode: AnswerMode,
    /// The model's part in a generative answer; `None` for an extractive one.
    #[serde(skip)]
    pub generation: Option<GenerationLog>,
    #[serde(skip)]
    pub lang: String,
    /// The conversation this question continues or starts (`cnv_...`), with the answer for its turns.
    #[serde(skip)]
    pub conversation: Option<(String, String)>,
    /// The documents the answer cited, best first (for the operator's insights).
    #[serde(skip)]
    pub cited: Vec<Cited>,
}

/// A document an answer cited.
#[derive(Debug, Clone)]
pub struct Cited {
    /// `doc_...`, or `ans_...` for a curated answer.
    pub document_id: String,
    pub title: String,
    pub url: Option<String>,
    pub score: f32,
}

/// What the query log keeps of a generation: which model, the tokens it reported, and how long the
/// first validated sentence took from the moment the question arrived.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GenerationLog {
    pub model: String,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub first_sentence_ms: u64,
}

/// One site's query log.
pub struct QueryLog<'s> {
    site: SiteStore<'s>,
}

impl<'s> QueryLog<'s> {
    pub(super) fn new(site: SiteStore<'s>) -> Self {
        Self { site }
    }

    /// Logs the query, appends it to its conversation, counts it in `site_stats` and enqueues
    /// `query.completed` for sites that opted in, in one transaction. Returns the outbox message id when an
    /// event was enqueued; `NotFound` when the conversation belongs to another site.
    pub fn record(&self, q: &QueryRecord) -> Result<Option<MessageId>> {
        let site = self.site.id();
        self.site.store().write(|tx| {
            let now = Timestamp::now();
            let conversation = q.conversation.as_ref().map(|(id, _)| id.as_str());
            let g = q.generation.as_ref();
            tx.prepare_cached(
                "INSERT INTO query_log (id, site_id, question, lang, resolved, source_count, latency_ms, created_at, conversation_id,
                                        mode, model, prompt_tokens, completion_tokens, first_sentence_ms, top_score)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
            )?
            .execute(params![
                q.query_id,
                site,
                q.question,
                q.lang,
                q.resolved,
                q.source_count as i64,
                q.latency_ms as i64,
                now,
                conversation,
                q.mode,
                g.map(|g| g.model.as_str()),
                g.and_then(|g| g.prompt_tokens).map(|n| n as i64),
                g.and_then(|g| g.completion_tokens).map(|n| n as i64),
                g.map(|g| g.first_sentence_ms as i64),
                q.cited.first().map(|c| c.score as f64),
            ])?;
            let mut cite = tx.prepare_cached(
                "INSERT INTO query_sources (site_id, query_id, rank, document_id, title, url, score, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?;
            for (i, c) in q.cited.iter().enumerate() {
                cite.execute(params![site, q.query_id, i as i64 + 1, c.document_id, c.title, c.url, c.score as f64, now])?;
            }
            if let Some((id, answer)) = &q.conversation {
                super::conversations::append(tx, &site, id, &q.question, answer, &q.query_id, now)?;
            }
            super::stats::record_query(tx, &site, q.resolved, now)?;
            outbox::enqueue(tx, &site, EventType::QueryCompleted, q)
        })
    }
}
