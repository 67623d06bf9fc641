//! `POST /v1/query/ask-multimodal`: planned, not built. It answers 501 with the shape it will accept
//! and answer, so integrators can code against it now and fall back to `/v1/query` meanwhile. A body
//! declared larger than the multipart limit is 413 first, as on every route (API.md: "larger is 413"):
//! the client learns the size rule it will meet once the route is built.

use std::sync::Arc;

use poem::Request;
use serde_json::json;

use crate::app::AppState;
use crate::http::error::ApiError;

pub fn expected() -> serde_json::Value {
    json!({
        "method": "POST",
        "contentType": "multipart/form-data",
        "parts": [
            {"name": "question", "kind": "text", "required": true, "maxLength": 2000},
            {"name": "image", "kind": "file", "required": true,
             "contentTypes": ["image/png", "image/jpeg", "image/webp"], "maxBytes": 10 * 1024 * 1024},
        ],
        "response": {"sameAs": "POST /v1/query", "schema": "#/components/schemas/QueryResponse"},
        "fallback": "/v1/query",
        "plannedFor": "2026-Q4",
    })
}

pub fn not_implemented() -> ApiError {
    ApiError::NotImplemented { expected: expected() }
}

/// 413 for a body declared over `limits.multipart_body_bytes`, else 501. The body is never read here.
pub fn answer(req: &Request) -> ApiError {
    let limit = req.data::<Arc<AppState>>().map_or(10 * 1024 * 1024, |s| s.config.limits.multipart_body_bytes);
    let declared = req.headers().get(poem::http::header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    match declared {
        Some(n) if n > limit as u64 => ApiError::PayloadTooLarge { limit },
        _ => not_implemented(),
    }
}
