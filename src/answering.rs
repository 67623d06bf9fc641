//! Answering: the one path from a visitor's question to a recorded answer, under `POST /v1/query` and
//! `POST /v1/query/stream` alike (the two handlers differ only in how they send it).
//!
//! 1. **The language, once**: the request's, else the question's own when it is detected confidently,
//!    else the site's. The same detection tells retrieval which passages are in another language.
//! 2. **The conversation, once**: its last question is the context a short follow-up is searched with,
//!    and its last [`HISTORY_EXCHANGES`] exchanges are the prompt's history for a generative answer.
//! 3. **Retrieval, once** (`knowledge::Engine::passages`): a close curated answer, or the passages.
//! 4. **The answer**: generated sentence by sentence when the site allows it and a generator is
//!    configured, quoted otherwise (`knowledge::answer::reply`).
//! 5. **The record** ([`Pending::finish`]): the query log, the conversation's turns, the counters and
//!    `query.completed`, in one transaction. What becomes of the record never changes the answer: below
//!    the free-space watermark, over the site's daily cap or when the write fails, the visitor still gets
//!    the answer, and the cause is logged and counted.

use std::sync::Arc;
use std::time::Instant;

use crate::app::AppState;
use crate::domain::{AnswerMode, ConversationId, Lang};
use crate::insights::GROUP_SIMILARITY;
use crate::knowledge::answer::Answer;
use crate::knowledge::answer::generate::client::Exchange;
use crate::knowledge::answer::reply::{self, Generation, Reply};
use crate::knowledge::{KnowledgeError, Question, language};
use crate::metrics::{Because, Stage, Unstored};
use crate::store::conversations::{Role, Turn};
use crate::store::handoff::Holding;
use crate::store::queries::{Cited, Logged, QueryRecord};
use crate::store::review::ReviewVector;
use crate::store::{Site, StoreError};

/// Earlier exchanges a generative answer's prompt holds at most (the store keeps
/// `store::conversations::MAX_TURNS` turns of a conversation; this is how many of them a prompt reads).
pub const HISTORY_EXCHANGES: usize = 6;

/// A question as a client sent it, validated (`api::query::QueryRequest`).
#[derive(Debug, Clone)]
pub struct Request {
    pub question: String,
    /// Documents to cite at most.
    pub top_k: usize,
    /// The client's `scoreThreshold`, honoured exactly; `None` applies `knowledge.min_score`.
    pub threshold: Option<f32>,
    /// The answer's language, when the client chose one.
    pub lang: Option<Lang>,
    /// The conversation it continues, with the hash of the token the client gave for it; a new one
    /// starts without.
    pub conversation: Option<(ConversationId, [u8; 32])>,
}

/// Why a question got no answer.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    /// The conversation is not this site's (another site's id included).
    #[error("conversation not found")]
    ConversationNotFound,
    /// A person of the staff holds the conversation or is awaited: the assistant does not answer it.
    #[error("a person holds this conversation or is awaited")]
    WithPerson,
    #[error(transparent)]
    Knowledge(#[from] KnowledgeError),
    #[error(transparent)]
    Store(StoreError),
}

/// Who asked: the site, and whether the request came with the site's bearer token (no daily caps then).
#[derive(Debug, Clone)]
pub struct Asker {
    pub site: Site,
    pub via_token: bool,
}

/// An answer on its way: the text validated so far is `text()`; [`next_sentence`](Self::next_sentence)
/// gives the rest of a generative one as each sentence passes; [`finish`](Self::finish) records it.
#[derive(Debug)]
pub struct Pending {
    state: Arc<AppState>,
    asker: Asker,
    question: String,
    reply: Reply,
    /// The question's embedding, for its group in the review queue should it go unanswered.
    vector: Vec<f32>,
    /// A new conversation's token (given once, with this answer; stored as its hash).
    token: Option<String>,
}

/// Starts answering: language, conversation and retrieval, then the reply's first part.
pub async fn ask(state: &Arc<AppState>, asker: Asker, request: Request) -> Result<Pending, AskError> {
    let started = Instant::now();
    let site = &asker.site;
    let text = request.question.trim().to_owned();
    let detected = language::detect_confident(&text);
    let lang = request.lang.or_else(|| detected.and_then(|code| Lang::parse(code).ok())).unwrap_or_else(|| site.lang.clone());
    let (conversation_id, context, history, token) = match request.conversation {
        Some((id, token_hash)) => {
            let (site_id, cid) = (site.id, id.clone());
            // The token opens the conversation; a wrong one is the same `NotFound` as an unknown id.
            let (status, turns) = state
                .store
                .run(move |s| {
                    let status = s.site(site_id).handoff().check(&cid, &token_hash)?;
                    Ok((status, s.site(site_id).conversations().turns(&cid)?))
                })
                .await
                .map_err(|e| match e {
                    StoreError::NotFound => AskError::ConversationNotFound,
                    other => AskError::Store(other),
                })?;
            if status.holding != Holding::None {
                return Err(AskError::WithPerson);
            }
            let history = exchanges(&turns);
            (id, turns.into_iter().rev().find(|t| t.role == Role::User).map(|t| t.text), history, None)
        }
        None => (ConversationId::new(), None, Vec::new(), Some(crate::secrets::new_conversation_token())),
    };
    let question = Question { text, top_k: request.top_k, threshold: request.threshold, lang, detected, context };
    let mut found = state.knowledge.passages(&state.store, &site.id, &question).await?;
    let vector = std::mem::take(&mut found.vector);
    let generation = state.generator.as_deref().filter(|_| site.answers == AnswerMode::Generative).map(|generator| Generation { generator, history: &history });
    // The answer stage: composing the quoted answer, or the model's first supported sentence.
    let t = Instant::now();
    let reply = reply::reply(&question, found, conversation_id, generation, started).await;
    state.knowledge.stages.observe(Stage::Answer, t.elapsed());
    Ok(Pending { state: state.clone(), asker, question: question.text, reply, vector, token })
}

/// The earlier exchanges of a conversation as question/answer pairs, the last `HISTORY_EXCHANGES`.
fn exchanges(turns: &[Turn]) -> Vec<Exchange> {
    let mut out: Vec<Exchange> = Vec::new();
    let mut question: Option<&str> = None;
    for t in turns {
        match t.role {
            Role::User => question = Some(&t.text),
            Role::Assistant => {
                if let Some(q) = question.take() {
                    out.push(Exchange { question: q.to_owned(), answer: t.text.clone() });
                }
            }
            // The assistant's memory holds its own exchanges only (`turns`, not the hand-off's messages).
            Role::Staff => {}
        }
    }
    let skip = out.len().saturating_sub(HISTORY_EXCHANGES);
    out.split_off(skip)
}

impl Pending {
    /// The answer so far: the whole of a quoted one, the first sentence of a generated one.
    pub fn answer(&self) -> &Answer {
        &self.reply.answer
    }

    /// The token of the conversation this answer starts (`None` when it continues one): the key to its
    /// hand-off routes, given once.
    pub fn conversation_token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// The next validated sentence of a generative answer; `None` once the answer is complete.
    pub async fn next_sentence(&mut self) -> Option<String> {
        self.reply.next_sentence().await
    }

    /// Waits for the rest of the answer, records it, and returns it.
    pub async fn finish(self) -> Answer {
        let Pending { state, asker, question, reply, vector, token } = self;
        let answer = reply.finish().await;
        let logged = record(&state, &asker, &question, &answer, vector, token.as_deref().map(crate::secrets::token_hash)).await;
        tracing::info!(
            site = %asker.site.id, query = %answer.id, resolved = answer.resolved, sources = answer.sources.len(),
            latency_ms = answer.latency_ms, mode = %answer.mode, logged, "query answered"
        );
        answer
    }
}

/// Logs the query, bumps the counters and enqueues `query.completed` (one transaction); wakes the
/// webhook worker when an event was enqueued. Never fails; returns whether the question was logged.
async fn record(state: &AppState, asker: &Asker, question: &str, answer: &Answer, vector: Vec<f32>, token_hash: Option<[u8; 32]>) -> bool {
    let site = &asker.site;
    if state.config.log.questions {
        tracing::info!(target: "sitebot::questions", site = %site.id, query = %answer.id, question, "question");
    }
    if state.free_space.low() {
        state.metrics.not_stored(Unstored::Question, Because::LowDisk);
        return false;
    }
    let rec = QueryRecord {
        query_id: answer.id.clone(),
        site_id: site.id,
        question: question.to_owned(),
        resolved: answer.resolved,
        source_count: answer.sources.len(),
        latency_ms: answer.latency_ms,
        mode: answer.mode,
        generation: answer.generation.clone(),
        lang: answer.lang.as_str().to_owned(),
        conversation: Some((answer.conversation_id.clone(), answer.text.clone())),
        conversation_token: token_hash,
        cited: answer
            .sources
            .iter()
            .map(|s| Cited { document_id: s.document_id.clone(), title: s.title.clone(), url: s.url.clone(), score: s.score })
            .collect(),
        review: (!answer.resolved).then(|| ReviewVector { vector, model: state.knowledge.embedder.fingerprint.clone(), similarity: GROUP_SIMILARITY }),
    };
    let cap = state.config.limits.logged_question_cap(asker.via_token);
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
        Err(StoreError::Moving) => {
            state.metrics.not_stored(Unstored::Question, Because::Moving);
            false
        }
        Err(e) => {
            tracing::error!(site = %site.id, query = %answer.id, error = %e, "a question was answered but could not be logged");
            state.metrics.not_stored(Unstored::Question, Because::Failed);
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Timestamp;

    fn turn(role: Role, text: &str) -> Turn {
        Turn { role, text: text.into(), at: Timestamp::from_millis(0), author: None }
    }

    #[test]
    fn the_prompt_reads_the_last_exchanges_and_skips_a_question_without_answer() {
        let mut turns = Vec::new();
        for i in 0..8 {
            turns.push(turn(Role::User, &format!("q{i}")));
            turns.push(turn(Role::Assistant, &format!("a{i}")));
        }
        turns.push(turn(Role::User, "unanswered"));
        let history = exchanges(&turns);
        assert_eq!(history.len(), HISTORY_EXCHANGES);
        assert_eq!((history[0].question.as_str(), history[5].answer.as_str()), ("q2", "a7"));
    }
}
