//! `ApiError`: every error the public API can answer, mapped to RFC 9457 problem+json by one exhaustive
//! `match` (no `_` arm), so a new variant cannot reach a client unmapped.
//!
//! 5xx bodies carry generic text only; the cause is logged with the request id, never sent.

use poem::http::StatusCode;
use serde::Serialize;

/// `Retry-After` of a `503 unavailable`: a full line in front of shared work drains within a second or so.
pub const UNAVAILABLE_RETRY_AFTER_SECS: u64 = 1;

/// One field-level validation failure (422).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self { field: field.into(), message: message.into() }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("X-Site-Id header required")]
    SiteIdRequired,
    #[error("invalid site id: {0}")]
    InvalidSiteId(String),
    #[error("invalid JSON: {0}")]
    InvalidJson(String),
    #[error("invalid or revoked token")]
    InvalidToken,
    #[error("plain HTTP refused")]
    HttpsRequired,
    #[error("token belongs to another site")]
    TokenSiteMismatch,
    #[error("origin not allowed: {0}")]
    OriginNotAllowed(String),
    #[error("site disabled")]
    SiteDisabled,
    #[error("site not found")]
    SiteNotFound,
    #[error("not found")]
    NotFound,
    #[error("conversation not found")]
    ConversationNotFound,
    #[error("query not found")]
    QueryNotFound,
    /// No person can come (live hand-off): `reason` is `off`, `closed` or `nobody_online`.
    #[error("hand-off unavailable: {reason}")]
    HandoffUnavailable { reason: &'static str },
    /// A person holds the conversation or is awaited: the assistant does not answer it.
    #[error("a person holds this conversation or is awaited")]
    HandoffActive,
    /// No person holds the conversation or is awaited: a message goes to the assistant.
    #[error("no person is in this conversation")]
    HandoffInactive,
    #[error("idempotency key reused with another request")]
    IdempotencyKeyReused,
    #[error("method not allowed")]
    /// With the methods the route takes, for `Allow` (empty when the router could not say).
    MethodNotAllowed { allow: &'static str },
    #[error("bad request: {0}")]
    BadRequest(String),
    #[error("payload too large (limit {limit} bytes)")]
    PayloadTooLarge { limit: usize },
    #[error("unsupported media type: {0}")]
    UnsupportedMediaType(String),
    #[error("validation failed")]
    Validation(Vec<FieldError>),
    #[error("rate limited")]
    RateLimited { retry_after_secs: u64 },
    /// The site stored its daily cap of leads (`limits.leads_per_site_per_day`); `Retry-After` is the
    /// next midnight UTC.
    #[error("daily quota exceeded")]
    DailyQuotaExceeded { retry_after_secs: u64 },
    #[error("not implemented")]
    NotImplemented { expected: serde_json::Value },
    #[error("internal error: {0}")]
    Internal(String),
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// The data directory's free space is below `storage.min_free_mb`: nothing is accepted that would
    /// have to be stored. Answered as `unavailable`, with `Retry-After`.
    #[error("free space below storage.min_free_mb")]
    StorageLow { retry_after_secs: u64 },
    /// `/readyz` while the server builds the vector indexes it lacks (a node restored from its replica):
    /// answered as `unavailable`, with `Retry-After`, and not logged as a failure, since a load balancer
    /// asks every second or two for as long as the build takes.
    #[error("starting: vector indexes are being built")]
    Starting,
    /// A write to a site being moved to another node (`site export`): answered as `unavailable`, with
    /// `Retry-After`; by then the balancer sends the client to the new node. Expected, so not logged as
    /// a failure.
    #[error("the site is moving to another node")]
    SiteMoving,
    // #25 widget
    /// `X-Widget-Preview` is not a valid preview token of this site (altered, another site's, expired).
    #[error("invalid widget preview token")]
    PreviewTokenInvalid,
}

/// The problem document as sent.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    #[serde(rename = "type")]
    pub type_: String,
    pub title: &'static str,
    pub status: u16,
    pub detail: String,
    pub code: &'static str,
    pub request_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<FieldError>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<serde_json::Value>,
    /// Why, for `handoff_unavailable`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
}

impl ApiError {
    /// One error of every kind, for the OpenAPI document's `code` lists. The match below has no wildcard,
    /// so a new kind does not compile until it is considered here.
    pub fn every() -> Vec<ApiError> {
        let all = vec![
            ApiError::SiteIdRequired,
            ApiError::InvalidSiteId(String::new()),
            ApiError::InvalidJson(String::new()),
            ApiError::BadRequest(String::new()),
            ApiError::InvalidToken,
            ApiError::HttpsRequired,
            ApiError::TokenSiteMismatch,
            ApiError::OriginNotAllowed(String::new()),
            ApiError::SiteDisabled,
            ApiError::SiteNotFound,
            ApiError::NotFound,
            ApiError::ConversationNotFound,
            ApiError::QueryNotFound,
            ApiError::HandoffUnavailable { reason: "" },
            ApiError::HandoffActive,
            ApiError::HandoffInactive,
            ApiError::MethodNotAllowed { allow: "" },
            ApiError::PayloadTooLarge { limit: 0 },
            ApiError::UnsupportedMediaType(String::new()),
            ApiError::Validation(Vec::new()),
            ApiError::IdempotencyKeyReused,
            ApiError::RateLimited { retry_after_secs: 0 },
            ApiError::DailyQuotaExceeded { retry_after_secs: 0 },
            ApiError::NotImplemented { expected: serde_json::Value::Null },
            ApiError::Internal(String::new()),
            ApiError::Unavailable(String::new()),
            ApiError::StorageLow { retry_after_secs: 0 },
            ApiError::Starting,
            ApiError::SiteMoving,
            ApiError::PreviewTokenInvalid,
        ];
        for e in &all {
            match e {
                ApiError::SiteIdRequired
                | ApiError::InvalidSiteId(_)
                | ApiError::InvalidJson(_)
                | ApiError::BadRequest(_)
                | ApiError::InvalidToken
                | ApiError::HttpsRequired
                | ApiError::TokenSiteMismatch
                | ApiError::OriginNotAllowed(_)
                | ApiError::SiteDisabled
                | ApiError::SiteNotFound
                | ApiError::NotFound
                | ApiError::ConversationNotFound
                | ApiError::QueryNotFound
                | ApiError::HandoffUnavailable { .. }
                | ApiError::HandoffActive
                | ApiError::HandoffInactive
                | ApiError::MethodNotAllowed { .. }
                | ApiError::PayloadTooLarge { .. }
                | ApiError::UnsupportedMediaType(_)
                | ApiError::Validation(_)
                | ApiError::IdempotencyKeyReused
                | ApiError::RateLimited { .. }
                | ApiError::DailyQuotaExceeded { .. }
                | ApiError::NotImplemented { .. }
                | ApiError::Internal(_)
                | ApiError::Unavailable(_)
                | ApiError::StorageLow { .. }
                | ApiError::Starting
                | ApiError::SiteMoving
                | ApiError::PreviewTokenInvalid => {}
            }
        }
        all
    }

    /// The stable codes answered with `status`, in the order of [`every`](Self::every), each once.
    pub fn codes_for(status: u16) -> Vec<&'static str> {
        let mut codes: Vec<&'static str> = Vec::new();
        for (s, code, ..) in Self::every().iter().map(|e| e.parts()) {
            if s.as_u16() == status && !codes.contains(&code) {
                codes.push(code);
            }
        }
        codes
    }

    /// Every stable code, each once.
    pub fn codes() -> Vec<&'static str> {
        let mut codes: Vec<&'static str> = Vec::new();
        for code in Self::every().iter().map(|e| e.parts().1) {
            if !codes.contains(&code) {
                codes.push(code);
            }
        }
        codes
    }

    /// `Retry-After` seconds, for the errors that carry one.
    pub fn retry_after_secs(&self) -> Option<u64> {
        match self {
            ApiError::RateLimited { retry_after_secs } | ApiError::DailyQuotaExceeded { retry_after_secs } | ApiError::StorageLow { retry_after_secs } => {
                Some(*retry_after_secs)
            }
            // A full line in front of shared work (or a busy database) drains within a second or so.
            ApiError::Unavailable(_) | ApiError::Starting | ApiError::SiteMoving => Some(UNAVAILABLE_RETRY_AFTER_SECS),
            _ => None,
        }
    }

    pub fn validation(field: impl Into<String>, message: impl Into<String>) -> Self {
        ApiError::Validation(vec![FieldError::new(field, message)])
    }

    /// Status, stable code, title and the detail a client may read.
    pub fn parts(&self) -> (StatusCode, &'static str, &'static str, String) {
        use ApiError::*;
        match self {
            SiteIdRequired => {
                (StatusCode::BAD_REQUEST, "site_id_required", "Site id required", "Send the site's id in the X-Site-Id header, or a bearer token.".into())
            }
            InvalidSiteId(why) => (StatusCode::BAD_REQUEST, "invalid_site_id", "Invalid site id", why.clone()),
            InvalidJson(why) => (StatusCode::BAD_REQUEST, "invalid_json", "Invalid JSON", format!("The body is not valid JSON: {why}")),
            InvalidToken => (StatusCode::UNAUTHORIZED, "invalid_token", "Invalid token", "The bearer token is unknown or has been revoked.".into()),
            HttpsRequired => (StatusCode::FORBIDDEN, "https_required", "HTTPS required", "This service only answers over HTTPS.".into()),
            TokenSiteMismatch => {
                (StatusCode::FORBIDDEN, "token_site_mismatch", "Token and site disagree", "The bearer token belongs to another site than X-Site-Id.".into())
            }
            OriginNotAllowed(origin) => {
                (StatusCode::FORBIDDEN, "origin_not_allowed", "Origin not allowed", format!("The origin {origin} is not in this site's allowed origins."))
            }
            SiteDisabled => (StatusCode::FORBIDDEN, "site_disabled", "Site disabled", "This site is disabled.".into()),
            SiteNotFound => (StatusCode::NOT_FOUND, "site_not_found", "Site not found", "No site has this id.".into()),
            NotFound => (StatusCode::NOT_FOUND, "not_found", "Not found", "Nothing is published at this address.".into()),
            ConversationNotFound => (
                StatusCode::NOT_FOUND,
                "conversation_not_found",
                "Conversation not found",
                "This site has no conversation with this id; send the question without conversationId to start one.".into(),
            ),
            QueryNotFound => (StatusCode::NOT_FOUND, "query_not_found", "Query not found", "This site answered no question with this id.".into()),
            HandoffUnavailable { reason } => (
                StatusCode::CONFLICT,
                "handoff_unavailable",
                "No person available",
                format!("No person can join this conversation now ({reason}); offer the contact form (POST /v1/leads with the conversationId)."),
            ),
            HandoffActive => (
                StatusCode::CONFLICT,
                "handoff_active",
                "A person has this conversation",
                "A person holds this conversation or is awaited, so the assistant does not answer it; send the visitor's message to POST /v1/conversations/{conversationId}/messages.".into(),
            ),
            HandoffInactive => (
                StatusCode::CONFLICT,
                "handoff_inactive",
                "No person in this conversation",
                "No person holds this conversation or is awaited; ask the assistant through POST /v1/query with the conversationId.".into(),
            ),
            IdempotencyKeyReused => (
                StatusCode::UNPROCESSABLE_ENTITY,
                "idempotency_key_reused",
                "Idempotency key reused",
                "This Idempotency-Key was used in the last 24 hours with a different request; use a new key for a new request.".into(),
            ),
            MethodNotAllowed { .. } => (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed", "Method not allowed", "This route does not accept this method.".into()),
            BadRequest(why) => (StatusCode::BAD_REQUEST, "bad_request", "Bad request", why.clone()),
            PayloadTooLarge { limit } => {
                (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", "Payload too large", format!("The body is larger than {limit} bytes."))
            }
            UnsupportedMediaType(why) => (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type", "Unsupported media type", why.clone()),
            Validation(_) => {
                (StatusCode::UNPROCESSABLE_ENTITY, "validation_failed", "Validation failed", "Some fields are missing or invalid; see errors.".into())
            }
            RateLimited { retry_after_secs } => {
                (StatusCode::TOO_MANY_REQUESTS, "rate_limited", "Too many requests", format!("Rate limit exceeded; retry in {retry_after_secs} s."))
            }
            DailyQuotaExceeded { retry_after_secs } => (
                StatusCode::TOO_MANY_REQUESTS,
                "daily_quota_exceeded",
                "Daily quota exceeded",
                format!("This site has received as many leads today as it accepts from visitors in a day; retry after midnight UTC, in {retry_after_secs} s."),
            ),
            NotImplemented { .. } => (
                StatusCode::NOT_IMPLEMENTED,
                "not_implemented",
                "Not implemented",
                "Multimodal questions are not available yet; see expected, or ask through the fallback route.".into(),
            ),
            Internal(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "Internal error",
                "Something went wrong on our side. Quote the request id when reporting it.".into(),
            ),
            Unavailable(_) => {
                (StatusCode::SERVICE_UNAVAILABLE, "unavailable", "Service unavailable", "The service is temporarily unavailable; retry shortly.".into())
            }
            Starting => (
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                "Service unavailable",
                "The server is starting: its indexes are being built. Retry shortly.".into(),
            ),
            SiteMoving => (
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                "Service unavailable",
                "This site is moving to another server; nothing was kept. Retry shortly.".into(),
            ),
            StorageLow { retry_after_secs } => (
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                "Service unavailable",
                format!("The service cannot store anything right now; nothing was kept. Retry in {retry_after_secs} s."),
            ),
            // #25 widget
            PreviewTokenInvalid => (
                StatusCode::FORBIDDEN,
                "preview_token_invalid",
                "Preview token invalid",
                "The widget preview token is not this site's, was altered, or has expired. Reload the preview in the console.".into(),
            ),
        }
    }

    pub fn problem(&self, request_id: &str) -> Problem {
        let (status, code, title, detail) = self.parts();
        Problem {
            type_: format!("urn:sitebot:problem:{code}"),
            title,
            status: status.as_u16(),
            detail,
            code,
            request_id: request_id.to_owned(),
            errors: match self {
                ApiError::Validation(errors) => Some(errors.clone()),
                _ => None,
            },
            expected: match self {
                ApiError::NotImplemented { expected } => Some(expected.clone()),
                _ => None,
            },
            reason: match self {
                ApiError::HandoffUnavailable { reason } => Some(reason),
                _ => None,
            },
        }
    }
}

/// Handlers return `poem::Result`; this carries an `ApiError` through it for the edge to render.
impl poem::error::ResponseError for ApiError {
    fn status(&self) -> StatusCode {
        self.parts().0
    }
}

/// The store's errors as a client sees them. Only the caller's own mistakes are shown as such; corrupt
/// or unexpected stored data and database failures are a generic 5xx (the cause goes to the log).
impl From<crate::store::StoreError> for ApiError {
    fn from(e: crate::store::StoreError) -> Self {
        use crate::store::StoreError;
        match e {
            StoreError::NotFound => ApiError::NotFound,
            StoreError::Invalid(msg) => ApiError::validation("body", msg),
            StoreError::Busy => ApiError::Unavailable("database busy".into()),
            StoreError::Moving => ApiError::SiteMoving,
            e @ (StoreError::Conflict(_)
            | StoreError::Corrupt(_)
            | StoreError::Database(_)
            | StoreError::TooNew { .. }
            | StoreError::Keyring(_)
            | StoreError::Join(_)) => ApiError::Internal(e.to_string()),
        }
    }
}

/// A question's retrieval failing, as a client sees it: turned away by a full line or its deadline is a
/// 503 with `Retry-After` (the client may ask again at once); anything else is ours, a generic 500.
impl From<crate::knowledge::KnowledgeError> for ApiError {
    fn from(e: crate::knowledge::KnowledgeError) -> Self {
        use crate::knowledge::KnowledgeError;
        use crate::knowledge::embedding::EmbedError;
        match e {
            e @ (KnowledgeError::Shed(_) | KnowledgeError::Embed(EmbedError::Shed(_))) => ApiError::Unavailable(e.to_string()),
            e @ (KnowledgeError::Embed(EmbedError::Inference(_) | EmbedError::Join(_)) | KnowledgeError::Index(_) | KnowledgeError::Join(_)) => {
                ApiError::Internal(e.to_string())
            }
        }
    }
}
