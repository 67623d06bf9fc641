//! The OpenAPI 3.1 document served at `GET /v1/openapi.json`, written here rather than derived:
//! poem-openapi emits 3.0 (poem issue 914), and writing it keeps every decision API.md left open in one
//! readable place. A test checks that every routed path is documented and CI validates the document with
//! an independent 3.1 validator.
//!
//! Every operation gets the shared response headers (request id, rate limits) and the problem responses
//! that can reach it, so the error contract cannot drift per route.

use poem::handler;
use poem::web::Json;
use serde_json::{Map, Value, json};

fn header_ref(name: &str) -> Value {
    json!({"$ref": format!("#/components/headers/{name}")})
}

/// The headers every response carries.
fn common_headers() -> Value {
    json!({
        "X-Request-Id": header_ref("XRequestId"),
        "X-RateLimit-Limit": header_ref("XRateLimitLimit"),
        "X-RateLimit-Remaining": header_ref("XRateLimitRemaining"),
        "X-RateLimit-Reset": header_ref("XRateLimitReset"),
    })
}

/// A success response with a JSON body.
fn ok(description: &str, content_type: &str, schema: Value) -> Value {
    json!({"description": description, "headers": common_headers(), "content": {content_type: {"schema": schema}}})
}

fn schema_ref(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

/// An operation with its success responses plus the problem responses for `errors` (status codes) and
/// the ones every route can answer (429, 500).
fn operation(tag: &str, id: &str, summary: &str, description: &str, success: Value, errors: &[u16], extra: Value) -> Value {
    let mut responses = success.as_object().cloned().unwrap_or_default();
    for status in errors.iter().chain([429u16, 500].iter()) {
        responses.insert(status.to_string(), json!({"$ref": format!("#/components/responses/Problem{status}")}));
    }
    let mut op = json!({
        "tags": [tag],
        "operationId": id,
        "summary": summary,
        "description": description,
        "responses": responses,
    });
    if let (Some(op), Some(extra)) = (op.as_object_mut(), extra.as_object()) {
        for (k, v) in extra {
            op.insert(k.clone(), v.clone());
        }
    }
    op
}

/// Tenant routes: identified by `X-Site-Id` or a bearer token.
fn tenant_security() -> Value {
    json!([{"siteId": []}, {"bearerAuth": []}])
}

fn json_body(schema: &str) -> Value {
    json!({"required": true, "content": {"application/json": {"schema": schema_ref(schema)}}})
}

fn paths() -> Map<String, Value> {
    let mut p = Map::new();
    p.insert(
        "/healthz".into(),
        json!({"get": operation("operations", "healthz", "Liveness", "200 while the process serves requests.",
            json!({"200": ok("Alive", "application/json", schema_ref("Health"))}), &[], json!({"security": []}))}),
    );
    p.insert(
        "/readyz".into(),
        json!({"get": operation("operations", "readyz", "Readiness", "200 when the database answers; 503 otherwise.",
            json!({"200": ok("Ready", "application/json", schema_ref("Health"))}), &[503], json!({"security": []}))}),
    );
    p.insert(
        "/v1/openapi.json".into(),
        json!({"get": operation("meta", "openapi", "This document", "The OpenAPI 3.1 description of the routes this server has.",
            json!({"200": ok("The document", "application/json", json!({"type": "object"}))}), &[], json!({"security": []}))}),
    );
    p.insert(
        "/v1/leads".into(),
        json!({"post": operation("leads", "captureLead", "Capture a lead",
            "Stores the lead and, in the same transaction, a `lead.captured` event in the webhook outbox when the site has a webhook \
             and opted in. Forwarding to the CRM is asynchronous, durable and at least once. With `Idempotency-Key`, a repeated key \
             from the same site within 24 h returns the first response (with `Idempotent-Replayed: true`) and stores nothing new.",
            json!({"202": {
                "description": "Accepted: the lead is stored",
                "headers": {
                    "X-Request-Id": header_ref("XRequestId"),
                    "X-RateLimit-Limit": header_ref("XRateLimitLimit"),
                    "X-RateLimit-Remaining": header_ref("XRateLimitRemaining"),
                    "X-RateLimit-Reset": header_ref("XRateLimitReset"),
                    "Idempotent-Replayed": {"description": "`true` when this is the stored first response to a repeated Idempotency-Key", "schema": {"type": "string", "enum": ["true"]}}
                },
                "content": {"application/json": {"schema": schema_ref("LeadAccepted")}}
            }}),
            &[400, 401, 403, 404, 413, 415, 422],
            json!({
                "security": tenant_security(),
                "parameters": [
                    {"$ref": "#/components/parameters/XSiteId"},
                    {"name": "Idempotency-Key", "in": "header", "required": false, "schema": {"type": "string", "minLength": 1, "maxLength": 255}}
                ],
                "requestBody": json_body("LeadRequest")
            }))}),
    );
    let multimodal = operation("query", "askMultimodal", "Ask with an image (planned)",
        "Always answers 501 `not_implemented` with an `expected` member describing the future request and response, \
         whatever method, headers or body are sent. Use `fallback` (`/v1/query`) meanwhile. Rate limited per client IP.",
        json!({}), &[501], json!({"security": []}));
    p.insert("/v1/query/ask-multimodal".into(), json!({"post": multimodal}));
    p
}

fn components() -> Value {
    let int_header = |d: &str| json!({"description": d, "schema": {"type": "integer", "minimum": 0}});
    let problem_response = |status: u16, description: &str, schema: &str| {
        let mut headers = common_headers();
        if status == 429 {
            headers["Retry-After"] = header_ref("RetryAfter");
        }
        if status == 401 {
            headers["WWW-Authenticate"] = json!({"description": "`Bearer error=\"invalid_token\"`", "schema": {"type": "string"}});
        }
        json!({"description": description, "headers": headers, "content": {"application/problem+json": {"schema": schema_ref(schema)}}})
    };
    let mut responses = Map::new();
    for (status, description, schema) in [
        (400, "`site_id_required`, `invalid_site_id`, `invalid_json` or `bad_request`", "Problem"),
        (401, "`invalid_token`: the bearer token is unknown or revoked", "Problem"),
        (403, "`https_required`, `token_site_mismatch`, `origin_not_allowed` or `site_disabled`", "Problem"),
        (404, "`site_not_found` or `not_found`", "Problem"),
        (405, "`method_not_allowed`", "Problem"),
        (413, "`payload_too_large`: JSON bodies are limited to 64 KiB, multipart to 10 MiB; reading stops at the limit", "Problem"),
        (415, "`unsupported_media_type`: JSON routes need `Content-Type: application/json`", "Problem"),
        (422, "`validation_failed`, with one entry per invalid field", "ValidationProblem"),
        (429, "`rate_limited`: retry after `Retry-After` seconds", "Problem"),
        (500, "`internal`: generic text only; quote `requestId`", "Problem"),
        (501, "`not_implemented`, with `expected`", "NotImplementedProblem"),
        (503, "`unavailable`: retry shortly", "Problem"),
    ] {
        responses.insert(format!("Problem{status}"), problem_response(status, description, schema));
    }
    let codes = [
        "site_id_required", "invalid_site_id", "invalid_json", "bad_request", "invalid_token", "https_required", "token_site_mismatch",
        "origin_not_allowed", "site_disabled", "site_not_found", "not_found", "method_not_allowed", "payload_too_large",
        "unsupported_media_type", "validation_failed", "rate_limited", "not_implemented", "internal", "unavailable",
    ];
    json!({
        "securitySchemes": {
            "siteId": {"type": "apiKey", "in": "header", "name": "X-Site-Id",
                "description": "The site's GUID. Public (it sits in the website's HTML): it identifies, it does not authenticate. Browser calls are checked against the site's allowed origins."},
            "bearerAuth": {"type": "http", "scheme": "bearer",
                "description": "Pro and Enterprise: a server-to-server token that identifies the site by itself and skips the Origin check. Must agree with X-Site-Id when both are sent."}
        },
        "parameters": {
            "XSiteId": {"name": "X-Site-Id", "in": "header", "required": false,
                "description": "Required unless a bearer token is sent.", "schema": {"type": "string", "format": "uuid"}}
        },
        "headers": {
            "XRequestId": {"description": "Echoes a sane client `X-Request-Id` (1-128 of `[A-Za-z0-9._:-]`), else a new `req_<ulid>`.", "schema": {"type": "string"}},
            "XRateLimitLimit": int_header("Requests a minute for this site (by tier: 60, 600, 6000) or client IP (default 600)."),
            "XRateLimitRemaining": int_header("Whole requests left in the bucket after this one (0 to 2x the limit)."),
            "XRateLimitReset": int_header("Seconds, rounded up, until the bucket is full again (0 when full). Delta seconds, not an epoch."),
            "RetryAfter": int_header("Seconds until a request will be accepted again.")
        },
        "responses": responses,
        "schemas": {
            "Problem": {
                "type": "object",
                "description": "RFC 9457 problem details.",
                "required": ["type", "title", "status", "detail", "code", "requestId"],
                "properties": {
                    "type": {"type": "string", "description": "`urn:sitebot:problem:<code>`"},
                    "title": {"type": "string"},
                    "status": {"type": "integer"},
                    "detail": {"type": "string"},
                    "code": {"type": "string", "enum": codes},
                    "requestId": {"type": "string"}
                }
            },
            "FieldError": {
                "type": "object", "required": ["field", "message"],
                "properties": {"field": {"type": "string", "description": "camelCase JSON path, or a header name"}, "message": {"type": "string"}}
            },
            "ValidationProblem": {
                "allOf": [schema_ref("Problem"), {"type": "object", "required": ["errors"], "properties": {"errors": {"type": "array", "items": schema_ref("FieldError")}}}]
            },
            "NotImplementedProblem": {
                "allOf": [schema_ref("Problem"), {"type": "object", "required": ["expected"], "properties": {"expected": {
                    "type": "object",
                    "required": ["parts", "response", "fallback", "plannedFor"],
                    "properties": {
                        "method": {"type": "string"},
                        "contentType": {"type": "string"},
                        "parts": {"type": "array", "items": {"type": "object"}},
                        "response": {"type": "object"},
                        "fallback": {"type": "string", "const": "/v1/query"},
                        "plannedFor": {"type": "string", "const": "2026-Q4"}
                    }
                }}}]
            },
            "Health": {"type": "object", "required": ["status"], "properties": {"status": {"type": "string"}, "version": {"type": "string"}}},
            "LeadRequest": {
                "type": "object", "required": ["email"],
                "properties": {
                    "name": {"type": "string", "maxLength": 200},
                    "email": {"type": "string", "format": "email", "maxLength": 254},
                    "message": {"type": "string", "maxLength": 5000},
                    "pageUrl": {"type": "string", "format": "uri", "maxLength": 2048}
                }
            },
            "LeadAccepted": {
                "type": "object", "required": ["id", "status"],
                "properties": {"id": {"type": "string", "pattern": "^lead_"}, "status": {"type": "string", "const": "accepted"}}
            },
            "QueryResponse": {
                "type": "object", "required": ["id", "answer", "sources", "resolved", "lang", "latencyMs"],
                "properties": {
                    "id": {"type": "string"},
                    "answer": {"type": "string"},
                    "sources": {"type": "array", "items": {"type": "object", "required": ["id", "documentId", "title", "snippet", "score"], "properties": {
                        "id": {"type": "string"}, "documentId": {"type": "string"}, "title": {"type": "string"},
                        "url": {"type": ["string", "null"]}, "snippet": {"type": "string"}, "score": {"type": "number", "minimum": 0, "maximum": 1}
                    }}},
                    "resolved": {"type": "boolean"},
                    "lang": {"type": "string"},
                    "latencyMs": {"type": "integer", "minimum": 0}
                }
            }
        }
    })
}

/// The whole document.
pub fn document() -> Value {
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "sitebot public API",
            "version": env!("CARGO_PKG_VERSION"),
            "summary": "Grounded answers with citations, lead capture, landing pages, pricing and stats for many sites.",
            "description": "Errors are RFC 9457 problem+json with a stable `code`. Every response carries `X-Request-Id` and the \
                            `X-RateLimit-*` headers. Plain HTTP is refused with 403 `https_required`. CORS preflights are answered \
                            for `/v1` routes when an enabled site allows the origin; the request itself is checked against its own site.",
            "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"}
        },
        "servers": [{"url": "/"}],
        "tags": [
            {"name": "query", "description": "Questions and answers"},
            {"name": "leads", "description": "Lead capture"},
            {"name": "operations", "description": "Health"},
            {"name": "meta", "description": "This document"}
        ],
        "paths": paths(),
        "components": components()
    })
}

#[handler]
pub async fn serve() -> Json<Value> {
    Json(document())
}
