//! The answer on the wire: the body of `POST /v1/query`, and of the stream's `done` event, which is the
//! same object without `answer` (the text went out as `token` events). Both routes serialize this one
//! type, so the two can never disagree.

use serde::Serialize;

use crate::answering::AskError;
use crate::domain::{AnswerMode, ConversationId, QueryId};
use crate::http::error::ApiError;
use crate::knowledge::answer::{Answer, Source};

/// A cited source as clients read it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceBody<'a> {
    pub id: &'a str,
    pub document_id: &'a str,
    pub title: &'a str,
    pub url: Option<&'a str>,
    pub snippet: &'a str,
    pub score: f32,
}

impl<'a> From<&'a Source> for SourceBody<'a> {
    fn from(s: &'a Source) -> Self {
        SourceBody { id: &s.id, document_id: &s.document_id, title: &s.title, url: s.url.as_deref(), snippet: &s.snippet, score: s.score }
    }
}

/// An answer as clients read it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AnswerBody<'a> {
    pub id: &'a QueryId,
    /// The text; absent from the stream's `done` event.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<&'a str>,
    pub sources: Vec<SourceBody<'a>>,
    pub resolved: bool,
    pub lang: &'a str,
    pub latency_ms: u64,
    /// `cnv_...`: send it back with the next question to continue the conversation.
    pub conversation_id: &'a ConversationId,
    /// With the first answer of a new conversation only: the secret its hand-off routes need in
    /// `X-Conversation-Token`. Given once; keep it with the conversation id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conversation_token: Option<&'a str>,
    /// `extractive` (sentences quoted from the sources) or `generative` (sentences written by the
    /// operator's model, each supported by the sources it cites).
    pub mode: AnswerMode,
}

impl<'a> AnswerBody<'a> {
    /// The whole answer, `POST /v1/query`'s body.
    pub fn whole(a: &'a Answer, token: Option<&'a str>) -> Self {
        AnswerBody { answer: Some(&a.text), ..Self::done(a, token) }
    }

    /// The stream's `done` event: everything but the text.
    pub fn done(a: &'a Answer, token: Option<&'a str>) -> Self {
        AnswerBody {
            id: &a.id,
            answer: None,
            sources: a.sources.iter().map(SourceBody::from).collect(),
            resolved: a.resolved,
            lang: a.lang.as_str(),
            latency_ms: a.latency_ms,
            conversation_id: &a.conversation_id,
            conversation_token: token,
            mode: a.mode,
        }
    }
}

impl From<AskError> for ApiError {
    fn from(e: AskError) -> Self {
        match e {
            AskError::ConversationNotFound => ApiError::ConversationNotFound,
            AskError::WithPerson => ApiError::HandoffActive,
            AskError::Knowledge(k) => k.into(),
            AskError::Store(s) => s.into(),
        }
    }
}
