//! The OpenAPI 3.1 document served at `GET /v1/openapi.json`, written here rather than derived:
//! poem-openapi emits 3.0 (poem issue 914), and writing it keeps every decision API.md left open in one
//! readable place. A test checks that every routed path is documented and CI validates the document with
//! an independent 3.1 validator.
//!
//! Every operation gets the shared response headers (request id, rate limits) and the problem responses
//! that can reach it, so the error contract cannot drift per route. The document is split by what it
//! describes: `paths` (the tenant and operations routes), `content` (the public content routes),
//! `handoff` (live hand-off to a person), `schemas` (components and the webhooks a CRM receives).

mod content;
mod handoff;
mod paths;
mod schemas;

use poem::handler;
use serde_json::{Value, json};

pub(super) fn header_ref(name: &str) -> Value {
    json!({"$ref": format!("#/components/headers/{name}")})
}

/// The headers every response carries.
pub(super) fn common_headers() -> Value {
    json!({
        "X-Request-Id": header_ref("XRequestId"),
        "X-RateLimit-Limit": header_ref("XRateLimitLimit"),
        "X-RateLimit-Remaining": header_ref("XRateLimitRemaining"),
        "X-RateLimit-Reset": header_ref("XRateLimitReset"),
        "X-RateLimit-Policy": header_ref("XRateLimitPolicy"),
    })
}

/// A success response with a JSON body.
pub(super) fn ok(description: &str, content_type: &str, schema: Value) -> Value {
    json!({"description": description, "headers": common_headers(), "content": {content_type: {"schema": schema}}})
}

pub(super) fn schema_ref(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

/// An operation with its success responses plus the problem responses for `errors` (status codes) and
/// the ones every route can answer (429, 500).
pub(super) fn operation(tag: &str, id: &str, summary: &str, description: &str, success: Value, errors: &[u16], extra: Value) -> Value {
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
///
/// `X-Site-Id` identifies and does not authenticate (it sits in the website's HTML), so it is a header
/// parameter, not a security scheme; the bearer token is optional authentication for server-to-server
/// calls. A request with neither is 400 `site_id_required`, not 401.
pub(super) fn tenant_security() -> Value {
    json!([{}, {"bearerAuth": []}])
}

/// What `Lang::parse` accepts: a primary subtag of 2-3 letters, then subtags of 1-8 letters or digits,
/// separated by `-` (or `_`), at most 35 characters.
pub(super) fn lang_schema(description: &str) -> Value {
    json!({"type": "string", "pattern": "^[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*$", "maxLength": 35, "description": description})
}

/// What `Currency::parse` accepts: a supported ISO 4217 code, upper or lower case.
pub(super) fn currency_schema(description: &str) -> Value {
    let codes = crate::domain::Currency::all().flat_map(|c| [c.to_owned(), c.to_ascii_lowercase()]).collect::<Vec<_>>();
    json!({"type": "string", "enum": codes, "description": description})
}

pub(super) fn json_body(schema: &str) -> Value {
    json!({"required": true, "content": {"application/json": {"schema": schema_ref(schema)}}})
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
            {"name": "handoff", "description": "Live hand-off: a person of the site's staff takes over a conversation from the assistant"},
            {"name": "widget", "description": "The embeddable assistant: its script, settings, answer ratings and analytics"},
            {"name": "operations", "description": "Health"},
            {"name": "meta", "description": "This document"},
            {"name": "content", "description": "Landing-page payloads and sitemap slugs (public, cacheable)"},
            {"name": "pricing", "description": "Live prices per vertical (public)"},
            {"name": "stats", "description": "Public site statistics (public, cacheable)"}
        ],
        "paths": paths::paths(),
        "webhooks": schemas::webhooks(),
        "components": schemas::webhook_schemas(handoff::components(content::components(schemas::components())))
    })
}

/// The document never changes while the process runs: built once, served as bytes.
#[handler]
pub async fn serve() -> poem::Response {
    static DOCUMENT: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    let body = DOCUMENT.get_or_init(|| serde_json::to_vec(&document()).unwrap_or_default());
    poem::Response::builder().content_type("application/json").body(body.clone())
}
