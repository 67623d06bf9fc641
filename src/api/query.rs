//! `POST /v1/query`: a grounded answer with citations from the site's knowledge.
//!
//! A thin handler over `answering`, the one path from a question to a recorded answer (the stream route
//! is the other): it validates the request, waits for the whole answer and sends `api::answer`'s body.
//! What becomes of the record never changes the answer: below the free-space watermark, over the site's
//! daily cap or when the write fails, the visitor still gets the 200.

use std::sync::Arc;

use poem::web::Data;
use poem::{Response, handler};
use serde::Deserialize;

use super::answer::AnswerBody;
use crate::answering::{self, Asker, Request};
use crate::app::AppState;
use crate::domain::{ConversationId, Lang};
use crate::http::error::{ApiError, FieldError};
use crate::http::json::{Json, Validate};
use crate::http::scope::Tenant;

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
    /// Continues this conversation (`cnv_...`), with its token in `X-Conversation-Token`; a new one
    /// starts without it.
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
        if let Some(Err(why)) = self.conversation_id.as_deref().map(ConversationId::parse) {
            errors.push(FieldError::new("conversationId", why.0));
        }
        errors
    }
}

impl QueryRequest {
    /// The validated request as `answering` takes it (the fields were checked by `validate`). A
    /// conversation is continued only with its token: without `X-Conversation-Token` the request is
    /// refused as a wrong token is (404 `conversation_not_found`), never appended to.
    pub fn into_request(self, req: &poem::Request) -> Result<Request, ApiError> {
        let conversation = super::token::token_for(req, self.conversation_id.as_deref().and_then(|c| ConversationId::parse(c).ok()))?;
        Ok(Request {
            question: self.question,
            top_k: self.top_k as usize,
            threshold: self.score_threshold.map(|t| t as f32),
            lang: self.lang.as_deref().and_then(|l| Lang::parse(l).ok()),
            conversation,
        })
    }
}

#[handler]
pub async fn ask(
    req: &poem::Request,
    Data(state): Data<&Arc<AppState>>,
    Data(tenant): Data<&Tenant>,
    Json(body): Json<QueryRequest>,
) -> poem::Result<Response> {
    let asker = Asker { site: tenant.site.clone(), via_token: tenant.via_token };
    let pending = answering::ask(state, asker, body.into_request(req)?).await.map_err(ApiError::from)?;
    let token = pending.conversation_token().map(str::to_owned);
    let answer = pending.finish().await;
    let body = serde_json::to_string(&AnswerBody::whole(&answer, token.as_deref())).map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(Response::builder().content_type("application/json").body(body))
}
