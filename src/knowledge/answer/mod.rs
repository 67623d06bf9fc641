//! The answer wing: what retrieval found, turned into the answer a visitor reads.
//!
//! - [`compose`]: the quoted answer: sentences taken from the passages, each run followed by its `[n]`
//!   marker, and the localized "not in my knowledge" fallback.
//! - [`curated`]: the operator's own answers, preferred when a question matches one closely.
//! - [`generate`]: sentences written by the operator's model, each shown only once the support test has
//!   found it in the passages it cites.
//! - [`reply`]: the answer on its way: generated when the site allows it and the model's first sentence
//!   holds, quoted otherwise.

pub mod compose;
pub mod curated;
pub mod generate;
pub mod reply;

use std::time::Instant;

use crate::domain::{AnswerMode, ConversationId, Lang, QueryId};
use crate::knowledge::search::Passage;
use crate::knowledge::{Found, Question};
use crate::store::queries::GenerationLog;

/// A cited source: `[i + 1]` in the answer is `sources[i]`.
#[derive(Debug, Clone)]
pub struct Source {
    pub id: String,
    pub document_id: String,
    pub title: String,
    pub url: Option<String>,
    pub snippet: String,
    /// Rounded to four decimals, as every client sees it.
    pub score: f32,
}

/// An answer to a question (the API's wire type is `api::answer`).
#[derive(Debug, Clone)]
pub struct Answer {
    pub id: QueryId,
    pub text: String,
    pub sources: Vec<Source>,
    pub resolved: bool,
    pub lang: Lang,
    pub latency_ms: u64,
    pub conversation_id: ConversationId,
    /// How the answer was made: quoted from the sources, or written by the operator's model.
    pub mode: AnswerMode,
    /// The model's part, for the query log.
    pub generation: Option<GenerationLog>,
}

/// The passages as the answer cites them: `[i + 1]` is `sources[i]`.
pub fn sources(passages: Vec<Passage>) -> Vec<Source> {
    passages
        .into_iter()
        .map(|p| Source {
            id: p.chunk.id,
            document_id: p.chunk.document_id,
            title: p.chunk.heading,
            url: p.chunk.url,
            snippet: p.chunk.text,
            score: (p.score * 10_000.0).round() / 10_000.0,
        })
        .collect()
}

/// The curated answer, else the quoted answer from the passages, else the localized fallback with no
/// sources.
pub fn extractive(q: &Question, found: Found, started: Instant, conversation_id: ConversationId) -> Answer {
    let (text, sources) = match found.curated {
        Some(m) => (m.text(), vec![m.source()]),
        None => match compose::compose(&q.search_text(), q.lang.primary(), &found.passages) {
            Some(text) => (text, sources(found.passages)),
            None => (compose::fallback(q.lang.as_str()).to_owned(), Vec::new()),
        },
    };
    Answer {
        id: QueryId::new(),
        text,
        resolved: !sources.is_empty(),
        sources,
        lang: q.lang.clone(),
        latency_ms: started.elapsed().as_millis() as u64,
        conversation_id,
        mode: AnswerMode::Extractive,
        generation: None,
    }
}
