//! `POST /v1/query`: a grounded answer with citations from the site's knowledge.
//!
//! Every answered question is logged, counted in the site's public stats and, for sites that opted
//! in, announced as `query.completed` through the webhook outbox: one transaction (`record`). What
//! becomes of the record never changes the answer: below the free-space watermark, over the site's
//! daily cap or when the write fails, the visitor still gets the 200.

use std::sync::Arc;

use poem::web::Data;
use poem::{Response, handler};
use serde::Deserialize;

use crate::app::AppState;
use crate::domain::{AnswerMode, Lang};
use crate::http::error::{ApiError, FieldError};
use crate::http::json::{Json, Validate};
use crate::http::scope::Tenant;
use crate::knowledge::generate::client::Turn;
use crate::knowledge::reply::Generation;
use crate::knowledge::{Answer, KnowledgeError, Question};
use crate::metrics::{Because, Unstored};
use crate::store::conversations::{self, Role};
use crate::store::queries::{Cited, Logged, QueryRecord};
use crate::store::{Site, StoreError};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueryRequest {
    pub question: String,
    #[serde(default = "default_top_k", deserialize_with = "crate::http::json::integer")]
    pub top_k: i64,
    /// Honoured exactly when sent; the operator's `knowledge.min_score` applies when it is not.
    #[serde(default)]
    pub score_threshold: Option<f64>,
    #[serde(default)]
    pub lang: Option<String>,
    /// Continues this conversation (`cnv_...`); a new one starts without it.
    #[serde(default)]
    pub conversation_id: Option<String>,
}

fn default_top_k() -> i64 {
    5
}

impl Validate for QueryRequest {
    fn validate(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        // Trimmed of whitespace as the OpenAPI document's pattern reads it (ECMA-262 `\s`).
        let n = self.question.trim_matches(crate::http::json::is_ecma_whitespace).chars().count();
        if n == 0 || n > 2000 {
            errors.push(FieldError::new("question", "must be 1 to 2000 characters (after trimming)"));
        }
        if !(1..=20).contains(&self.top_k) {
            errors.push(FieldError::new("topK", "must be an integer from 1 to 20"));
        }
        if self.score_threshold.is_some_and(|t| !(0.0..=1.0).contains(&t)) {
            errors.push(FieldError::new("scoreThreshold", "must be a number from 0 to 1"));
        }
        if let Some(Err(e)) = self.lang.as_deref().map(Lang::parse) {
            errors.push(FieldError::new("lang", e.0));
        }
        if self.conversation_id.as_deref().is_some_and(|c| conversations::parse_id(c).is_none()) {
            errors.push(FieldError::new("conversationId", "must be a conversation id as a previous answer gave it (cnv_...)"));
        }
        errors
    }
}

/// A question ready to answer, with the conversation it belongs to.
pub struct Asked {
    pub question: Question,
    /// The conversation to record the turn in: the one sent, or a new id.
    pub conversation_id: String,
    /// The conversation's earlier exchanges, oldest first, for a generative answer's prompt.
    pub history: Vec<Turn>,
}

/// Earlier exchanges a generative answer's prompt holds at most.
const HISTORY_EXCHANGES: usize = 6;

/// The earlier exchanges of a conversation as question/answer pairs, the last `HISTORY_EXCHANGES`.
fn exchanges(turns: &[conversations::Turn]) -> Vec<Turn> {
    let mut out: Vec<Turn> = Vec::new();
    let mut question: Option<&str> = None;
    for t in turns {
        match t.role {
            Role::User => question = Some(&t.text),
            Role::Assistant => {
                if let Some(q) = question.take() {
                    out.push(Turn { question: q.to_owned(), answer: t.text.clone() });
                }
            }
        }
    }
    let skip = out.len().saturating_sub(HISTORY_EXCHANGES);
    out.split_off(skip)
}

impl Asked {
    /// What a generative answer needs, when the site's answers may be generative and the operator has
    /// configured a generator.
    pub fn generation<'a>(&'a self, state: &'a AppState, site: &Site) -> Option<Generation<'a>> {
        let generator = state.generator.as_deref().filter(|_| site.answers == AnswerMode::Generative)?;
        Some(Generation { generator, history: &self.history })
    }
}

impl QueryRequest {
    /// The validated question; the answer's language is the request's, else the question's own when it
    /// is detected confidently, else the site's. With a
    /// `conversationId`, the conversation must be the site's (else 404 `conversation_not_found`), and its
    /// last question is the context a short follow-up is understood with.
    pub async fn into_question(self, state: &AppState, site: &Site) -> Result<Asked, ApiError> {
        // The answer's language: the request's, else the question's own when it is detected confidently,
        // else the site's.
        let detected = || crate::knowledge::language::detect_confident(&self.question).and_then(|code| Lang::parse(code).ok());
        let lang = self.lang.as_deref().and_then(|l| Lang::parse(l).ok()).or_else(detected).unwrap_or_else(|| site.lang.clone());
        let (conversation_id, context, history) = match self.conversation_id.as_deref().and_then(conversations::parse_id) {
            Some(id) => {
                let (site_id, cid) = (site.id, id.clone());
                let turns = state.store.run(move |s| s.site(site_id).conversations().turns(&cid)).await.map_err(|e| match e {
                    StoreError::NotFound => ApiError::ConversationNotFound,
                    other => other.into(),
                })?;
                let history = exchanges(&turns);
                (id, turns.into_iter().rev().find(|t| t.role == Role::User).map(|t| t.text), history)
            }
            None => (conversations::new_id(), None, Vec::new()),
        };
        let question =
            Question { text: self.question.trim().to_owned(), top_k: self.top_k as usize, threshold: self.score_threshold.map(|t| t as f32), lang, context };
        Ok(Asked { question, conversation_id, history })
    }
}

/// A question turned away by a full line in front of shared work is a 503 with `Retry-After`; any
/// other failure is ours.
pub fn knowledge_error(e: KnowledgeError) -> ApiError {
    if e.is_shed() { ApiError::Unavailable(e.to_string()) } else { ApiError::Internal(e.to_string()) }
}

/// Logs the query, bumps the counters and enqueues `query.completed` (one transaction); wakes the
/// webhook worker when an event was enqueued.
///
/// Never fails: the answer is already computed, and what becomes of its record must not turn it into
/// an error. Below the free-space watermark nothing is written; over the site's daily cap of logged
/// questions only the counters are (`QueryLog::record`); a failed write is logged and counted
/// (`sitebot_writes_not_stored_total{what="question"}`). Returns whether the question was logged.
pub async fn record(state: &AppState, tenant: &Tenant, question: &str, answer: &Answer) -> bool {
    let site = &tenant.site;
    if state.config.log.questions {
        tracing::info!(target: "sitebot::questions", site = %site.id, query = %answer.id, question, "question");
    }
    if state.free_space.low() {
        state.metrics.not_stored(Unstored::Question, Because::LowDisk);
        return false;
    }
    let conversation = Some((answer.conversation_id.clone(), answer.answer.clone()));
    let rec = QueryRecord {
        query_id: answer.id.clone(),
        site_id: site.id,
        question: question.to_owned(),
        resolved: answer.resolved,
        source_count: answer.sources.len(),
        latency_ms: answer.latency_ms,
        mode: answer.mode,
        generation: answer.generation.clone(),
        lang: answer.lang.clone(),
        conversation,
        cited: answer
            .sources
            .iter()
            .map(|s| Cited { document_id: s.document_id.clone(), title: s.title.clone(), url: s.url.clone(), score: s.score })
            .collect(),
    };
    let cap = state.config.limits.logged_question_cap(tenant.via_token);
    match state.store.run(move |s| s.site(rec.site_id).queries().record(&rec, cap)).await {
        Ok(Logged::Logged { message }) => {
            if message.is_some() {
                state.outbox_wake.notify_one();
            }
            true
        }
        Ok(Logged::OverDailyCap) => {
            state.metrics.not_stored(Unstored::Question, Because::DailyCap);
            false
        }
        Err(e) => {
            tracing::error!(site = %site.id, query = %answer.id, error = %e, "a question was answered but could not be logged");
            state.metrics.not_stored(Unstored::Question, Because::Failed);
            false
        }
    }
}

#[handler]
pub async fn ask(Data(state): Data<&Arc<AppState>>, Data(tenant): Data<&Tenant>, Json(body): Json<QueryRequest>) -> poem::Result<Response> {
    let asked = body.into_question(state, &tenant.site).await?;
    let generation = asked.generation(state, &tenant.site);
    let q = &asked.question;
    let reply = state.knowledge.reply(&state.store, &tenant.site.id, q, asked.conversation_id.clone(), generation).await.map_err(knowledge_error)?;
    let answer = reply.finish().await;
    let logged = record(state, tenant, &q.text, &answer).await;
    tracing::info!(
        site = %tenant.site.id, query = %answer.id, resolved = answer.resolved, sources = answer.sources.len(),
        latency_ms = answer.latency_ms, mode = %answer.mode, logged, "query answered"
    );
    let body = serde_json::to_string(&answer).map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(Response::builder().content_type("application/json").body(body))
}
