//! `POST /v1/feedback`: a visitor rates an answer; rating again replaces the earlier rating. Below the
//! free-space watermark nothing is stored and the rating is refused with 503 (never a 202 for a rating
//! that was not kept).

use std::sync::Arc;

use poem::http::StatusCode;
use poem::web::Data;
use poem::{Response, handler};
use serde::Deserialize;

use crate::app::AppState;
use crate::domain::QueryId;
use crate::http::error::{ApiError, FieldError};
use crate::http::json::{Json, Validate};
use crate::http::scope::Tenant;
use crate::metrics::{Because, Unstored};
use crate::store::StoreError;
use crate::store::analytics::Rating;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeedbackRequest {
    pub query_id: String,
    pub rating: Rating,
    #[serde(default)]
    pub comment: Option<String>,
}

impl Validate for FeedbackRequest {
    fn validate(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        if let Err(why) = QueryId::parse(&self.query_id) {
            errors.push(FieldError::new("queryId", why.0));
        }
        if self.comment.as_deref().is_some_and(|c| c.chars().count() > 1000) {
            errors.push(FieldError::new("comment", "must be at most 1000 characters"));
        }
        errors
    }
}

#[handler]
pub async fn create(Data(state): Data<&Arc<AppState>>, Data(tenant): Data<&Tenant>, Json(body): Json<FeedbackRequest>) -> poem::Result<Response> {
    if state.free_space.low() {
        state.metrics.not_stored(Unstored::Feedback, Because::LowDisk);
        return Err(ApiError::StorageLow { retry_after_secs: super::leads::LOW_DISK_RETRY_SECS }.into());
    }
    let site = tenant.site.id;
    let comment = body.comment.map(|c| c.trim().to_owned()).filter(|c| !c.is_empty());
    let query = QueryId::parse(&body.query_id).map_err(|e| ApiError::validation("queryId", e.0))?;
    state.store.run(move |s| s.site(site).analytics().rate(&query, body.rating, comment.as_deref())).await.map_err(|e| match e {
        StoreError::NotFound => ApiError::QueryNotFound,
        other => other.into(),
    })?;
    Ok(Response::builder().status(StatusCode::ACCEPTED).content_type("application/json").body(r#"{"status":"accepted"}"#))
}
