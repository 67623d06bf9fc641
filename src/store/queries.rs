//! The query log: one row per answered question, counted in the site's public stats and announced as
//! `query.completed` to sites that opted in, in one transaction.

use rusqlite::params;
use serde::Serialize;

use super::outbox::{self, MessageId};
use super::usage::{self, DailyCap, DayUsage};
use super::{Result, SiteStore};
use crate::domain::{AnswerMode, ConversationId, EventType, QueryId, SiteId, Timestamp};

/// One answered question, for the log, the public counters and the `query.completed` webhook.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueryRecord {
    pub query_id: QueryId,
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
    pub conversation: Option<(ConversationId, String)>,
    /// For a new conversation: the SHA-256 of the token its answer carries (`store::handoff`).
    #[serde(skip)]
    pub conversation_token: Option<[u8; 32]>,
    /// The documents the answer cited, best first (for the operator's insights).
    #[serde(skip)]
    pub cited: Vec<Cited>,
    /// For an unanswered question: its embedding, to join its group in the review queue.
    #[serde(skip)]
    pub review: Option<super::review::ReviewVector>,
}

#[cfg(test)]
impl QueryRecord {
    /// An extractive answer to `question` in English, for the store's tests.
    pub(crate) fn answered(site_id: SiteId, question: &str, conversation: Option<ConversationId>, cited: Vec<Cited>) -> QueryRecord {
        QueryRecord {
            query_id: QueryId::new(),
            site_id,
            question: question.to_owned(),
            resolved: true,
            source_count: cited.len(),
            latency_ms: 1,
            mode: AnswerMode::Extractive,
            generation: None,
            lang: "en".into(),
            conversation: conversation.map(|c| (c, "An answer.".to_owned())),
            conversation_token: None,
            cited,
            review: None,
        }
    }
}

impl QueryRecord {
    /// The cited documents as the day counters take them: (id, title, url).
    fn cited_triples(&self) -> Vec<(&str, &str, Option<&str>)> {
        self.cited.iter().map(|c| (c.document_id.as_str(), c.title.as_str(), c.url.as_deref())).collect()
    }
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

/// What became of a question's record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Logged {
    /// Logged, with the id of its `query.completed` event when the site wants one.
    Logged { message: Option<MessageId> },
    /// Counted in the public stats only: the site has logged its daily cap of questions.
    OverDailyCap,
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
    /// `query.completed` for sites that opted in, in one transaction. `NotFound` when the conversation
    /// belongs to another site.
    ///
    /// A site that has logged `cap` questions today (UTC) gets `Logged::OverDailyCap`: the question is
    /// counted in the public stats and as unlogged in the day's usage, and nothing else is written (no log
    /// row, no conversation turn, no `query.completed`).
    pub fn record(&self, q: &QueryRecord, cap: DailyCap) -> Result<Logged> {
        let site = self.site.id();
        self.site.write(|tx| log(tx, site, q, cap, Timestamp::now()))
    }
}

/// `QueryLog::record`'s unit of work at `now`, in the caller's transaction (also the history a benchmark
/// writes in bulk, `store::history`).
pub(super) fn log(tx: &rusqlite::Transaction<'_>, site: SiteId, q: &QueryRecord, cap: DailyCap, now: Timestamp) -> Result<Logged> {
    if !usage::has_room(usage::day(tx, &site, now)?.logged_questions, cap) {
        super::stats::record_query(tx, &site, q.resolved, now)?;
        usage::add(tx, &site, now, DayUsage { unlogged_questions: 1, ..DayUsage::default() })?;
        super::days::question(tx, &site, now, q.resolved, &q.lang, &q.cited_triples())?;
        return Ok(Logged::OverDailyCap);
    }
    let conversation = q.conversation.as_ref().map(|(id, _)| id);
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
    if let Some(r) = q.review.as_ref().filter(|r| !q.resolved && !r.vector.is_empty()) {
        super::review::assign(tx, &site, &q.query_id, &q.question, r, now)?;
    }
    if let Some((id, answer)) = &q.conversation {
        super::conversations::append(tx, &site, id, q.conversation_token.as_ref(), &q.question, answer, &q.query_id, now)?;
    }
    super::stats::record_query(tx, &site, q.resolved, now)?;
    usage::add(tx, &site, now, DayUsage { logged_questions: 1, ..DayUsage::default() })?;
    super::days::question(tx, &site, now, q.resolved, &q.lang, &q.cited_triples())?;
    Ok(Logged::Logged { message: outbox::enqueue(tx, &site, EventType::QueryCompleted, q, now)? })
}
