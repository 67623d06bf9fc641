//! `POST /v1/query/ask-multimodal`: planned, not built. It answers 501 with the shape it will accept
//! and answer, so integrators can code against it now and fall back to `/v1/query` meanwhile.

use serde_json::json;

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
