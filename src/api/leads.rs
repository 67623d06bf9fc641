//! `POST /v1/leads`: capture a visitor's contact. Once this answers 202 the lead is on disk with its
//! `lead.captured` outbox event (same transaction); forwarding to the CRM is the outbox worker's job.
//!
//! A lead is never acknowledged and then dropped: over the site's daily cap of visitors' leads it is
//! refused with 429 `daily_quota_exceeded` (`Retry-After`: the next midnight UTC), and below the
//! free-space watermark with 503 `unavailable` (`Retry-After`: [`LOW_DISK_RETRY_SECS`]).

use std::sync::Arc;

use poem::http::{HeaderValue, StatusCode};
use poem::web::Data;
use poem::{Request, Response, handler};
use serde::Deserialize;

use crate::app::AppState;
use crate::domain::{ConversationId, Email, Timestamp};
use crate::http::error::{ApiError, FieldError};
use crate::http::json::{Json, Validate};
use crate::http::scope::Tenant;
use crate::metrics::{Because, Unstored};
use crate::store::StoreError;
use crate::store::leads::{Capture, Idempotency, NewLead, StoredResponse};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LeadRequest {
    #[serde(default)]
    pub name: Option<String>,
    pub email: String,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub page_url: Option<String>,
    /// The widget conversation before the visitor asked for a person, with its token in
    /// `X-Conversation-Token`; the event then carries its turns.
    #[serde(default)]
    pub conversation_id: Option<String>,
}

impl Validate for LeadRequest {
    fn validate(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        if self.name.as_deref().is_some_and(|n| n.chars().count() > 200) {
            errors.push(FieldError::new("name", "must be at most 200 characters"));
        }
        if let Err(e) = Email::parse(&self.email) {
            errors.push(FieldError::new("email", e.0));
        }
        if self.message.as_deref().is_some_and(|m| m.chars().count() > 5000) {
            errors.push(FieldError::new("message", "must be at most 5000 characters"));
        }
        if let Some(url) = &self.page_url {
            let ok = url.len() <= 2048 && url::Url::parse(url).is_ok_and(|u| matches!(u.scheme(), "http" | "https"));
            if !ok {
                errors.push(FieldError::new("pageUrl", "must be an http(s) URL of at most 2048 characters"));
            }
        }
        if self.conversation_id.as_deref().is_some_and(|c| ConversationId::parse(c).is_err()) {
            errors.push(FieldError::new("conversationId", "must be a conversation id as an answer gave it (cnv_...)"));
        }
        errors
    }
}

/// `Retry-After` of a lead refused for want of free space: the operator has to act, so not seconds.
pub const LOW_DISK_RETRY_SECS: u64 = 300;

fn idempotency_key(req: &Request) -> Result<Option<String>, ApiError> {
    let Some(v) = req.headers().get("idempotency-key") else { return Ok(None) };
    let v = v.to_str().map_err(|_| ApiError::validation("Idempotency-Key", "must be printable ASCII"))?.trim();
    if v.is_empty() || v.len() > 255 || !v.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return Err(ApiError::validation("Idempotency-Key", "must be 1 to 255 printable ASCII characters"));
    }
    Ok(Some(v.to_owned()))
}

/// The 202 body, stored as is for an `Idempotency-Key` replay.
fn accepted_body(lead_id: &str) -> String {
    serde_json::json!({"id": lead_id, "status": "accepted"}).to_string()
}

fn non_empty(s: Option<String>) -> Option<String> {
    s.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty())
}

#[handler]
pub async fn create(req: &Request, Data(state): Data<&Arc<AppState>>, Data(tenant): Data<&Tenant>, Json(body): Json<LeadRequest>) -> poem::Result<Response> {
    let key = idempotency_key(req)?;
    if state.free_space.low() {
        state.metrics.not_stored(Unstored::Lead, Because::LowDisk);
        return Err(ApiError::StorageLow { retry_after_secs: LOW_DISK_RETRY_SECS }.into());
    }
    let new = NewLead {
        name: non_empty(body.name),
        email: Email::parse(&body.email).map_err(|e| ApiError::validation("email", e.0))?,
        message: non_empty(body.message),
        page_url: non_empty(body.page_url),
        conversation_id: body.conversation_id.as_deref().and_then(|c| ConversationId::parse(c).ok()),
    };
    // A transcript is attached only for the holder of the conversation's token: an id alone (it is in
    // webhooks, logs and the console) opens nothing.
    if let Some((cid, hash)) = super::token::token_for(req, new.conversation_id.clone())? {
        let site = tenant.site.id;
        state.store.run(move |s| s.site(site).handoff().check(&cid, &hash)).await.map_err(|e| match e {
            StoreError::NotFound => ApiError::ConversationNotFound,
            other => other.into(),
        })?;
    }
    let (site, cap) = (tenant.site.id, state.config.limits.lead_cap(tenant.via_token));
    // What the key promises to repeat: the lead as accepted (after trimming), hashed.
    let request_hash = {
        use sha2::Digest;
        let canonical = serde_json::json!([new.name, new.email.as_str(), new.message, new.page_url, new.conversation_id]).to_string();
        hex::encode(sha2::Sha256::digest(canonical.as_bytes()))
    };
    let outcome = state
        .store
        .run(move |s| {
            let idempotency = key.as_deref().map(|key| Idempotency { key, request_hash: &request_hash });
            s.site(site).leads().capture(new, idempotency, cap, |lead| StoredResponse { status: 202, body: accepted_body(&lead.lead_id) })
        })
        .await
        .map_err(ApiError::from)?;
    let (body, replayed) = match outcome {
        Capture::Stored { lead, message_id } => {
            tracing::info!(site = %lead.site_id, lead = %lead.lead_id, event = ?message_id, "lead captured");
            if message_id.is_some() {
                state.outbox_wake.notify_one();
            }
            (accepted_body(&lead.lead_id), false)
        }
        Capture::Replayed(StoredResponse { body, .. }) => (body, true),
        Capture::KeyReused => return Err(ApiError::IdempotencyKeyReused.into()),
        Capture::OverDailyCap { resets_at } => {
            state.metrics.not_stored(Unstored::Lead, Because::DailyCap);
            let retry_after_secs = u64::try_from((resets_at.as_millis() - Timestamp::now().as_millis() + 999) / 1000).unwrap_or(0).max(1);
            return Err(ApiError::DailyQuotaExceeded { retry_after_secs }.into());
        }
    };
    let mut resp = Response::builder().status(StatusCode::ACCEPTED).content_type("application/json").body(body);
    if replayed {
        resp.headers_mut().insert("idempotent-replayed", HeaderValue::from_static("true"));
    }
    Ok(resp)
}
