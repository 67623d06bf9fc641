//! The OpenAPI 3.1 document served at `GET /v1/openapi.json`, written here rather than derived:
//! poem-openapi emits 3.0 (poem issue 914), and writing it keeps every decision API.md left open in one
//! readable place. A test checks that every routed path is documented and CI validates the document with
//! an independent 3.1 validator.
//!
//! Every operation gets the shared response headers (request id, rate limits) and the problem responses
//! that can reach it, so the error contract cannot drift per route.

use poem::handler;
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
    let multimodal = operation(
        "query",
        "askMultimodal",
        "Ask with an image (planned)",
        "Always answers 501 `not_implemented` with an `expected` member describing the future request and response, \
         whatever method, headers or body are sent. Use `fallback` (`/v1/query`) meanwhile. Rate limited per client IP.",
        json!({}),
        &[501],
        json!({"security": []}),
    );
    p.insert("/v1/query/ask-multimodal".into(), json!({"post": multimodal}));
    query_paths(&mut p);
    content_paths(&mut p);
    p
}

/// `/v1/query` and `/v1/query/stream`.
fn query_paths(p: &mut Map<String, Value>) {
    let extra =
        || json!({"security": tenant_security(), "parameters": [{"$ref": "#/components/parameters/XSiteId"}], "requestBody": json_body("QueryRequest")});
    p.insert(
        "/v1/query".into(),
        json!({"post": operation("query", "query", "Ask a question",
            "A grounded answer composed only of sentences from the site's own documents, each run followed by an `[n]` marker \
             into `sources` (1-based). Sources are hybrid-ranked (BM25 and MiniLM embeddings), each with a calibrated `score` in \
             [0, 1] that is comparable across queries; those below `scoreThreshold` (or the server's `knowledge.min_score`) are \
             dropped and at most `topK` are returned. When none remains, `answer` is a localized fallback that offers contact, \
             `sources` is empty and `resolved` is false. Every query is logged for the site's public stats and, for sites that \
             opted in, announced as a `query.completed` webhook.",
            json!({"200": ok("The answer", "application/json", schema_ref("QueryResponse"))}),
            &[400, 401, 403, 404, 413, 415, 422], extra())}),
    );
    p.insert(
        "/v1/query/stream".into(),
        json!({"post": operation("query", "queryStream", "Ask a question, streamed",
            "The same request and answer as `/v1/query`, as Server-Sent Events: `event: token` with a word-sized fragment of the \
             answer as `data` (raw UTF-8; a newline would be split over several `data:` lines), then one `event: done` whose data \
             is a `QueryDone` JSON object. Concatenating the token data gives exactly the `/v1/query` answer. Errors before the \
             stream starts are ordinary problem+json responses; an error after the 200 is one `event: error` with the problem JSON \
             as data, and the stream ends without `done`. A `:` comment line every 15 s keeps idle connections open. Never \
             compressed; sent with `Cache-Control: no-cache` and `X-Accel-Buffering: no`.",
            json!({"200": {
                "description": "An event stream: `token`* then `done` (or `error`)",
                "headers": {
                    "X-Request-Id": header_ref("XRequestId"),
                    "X-RateLimit-Limit": header_ref("XRateLimitLimit"),
                    "X-RateLimit-Remaining": header_ref("XRateLimitRemaining"),
                    "X-RateLimit-Reset": header_ref("XRateLimitReset"),
                    "Cache-Control": {"description": "`no-cache`", "schema": {"type": "string", "const": "no-cache"}},
                    "X-Accel-Buffering": {"description": "`no`: proxies must not buffer the stream", "schema": {"type": "string", "const": "no"}}
                },
                "content": {"text/event-stream": {
                    "schema": {"type": "string", "description": "SSE events `token` (answer fragment), `done` (QueryDone JSON), `error` (Problem JSON)"},
                    "example": "event: token\ndata: We \n\nevent: token\ndata: open \n\nevent: done\ndata: {\"id\":\"qry_01J...\",\"sources\":[],\"resolved\":true,\"lang\":\"en\",\"latencyMs\":6}\n\n"
                }}
            }}),
            &[400, 401, 403, 404, 413, 415, 422], extra())}),
    );
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
        "site_id_required",
        "invalid_site_id",
        "invalid_json",
        "bad_request",
        "invalid_token",
        "https_required",
        "token_site_mismatch",
        "origin_not_allowed",
        "site_disabled",
        "site_not_found",
        "not_found",
        "method_not_allowed",
        "payload_too_large",
        "unsupported_media_type",
        "validation_failed",
        "rate_limited",
        "not_implemented",
        "internal",
        "unavailable",
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
            },
            "QueryRequest": {
                "type": "object", "required": ["question"],
                "properties": {
                    "question": {"type": "string", "minLength": 1, "maxLength": 2000, "description": "1 to 2000 characters after trimming"},
                    "topK": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5, "description": "At most this many sources"},
                    "scoreThreshold": {"type": "number", "minimum": 0, "maximum": 1, "default": 0, "description": "Drop sources scoring below this"},
                    "lang": {"type": "string", "description": "BCP 47 tag for the answer's language (the fallback text); default: the site's language"}
                }
            },
            "QueryDone": {
                "type": "object", "required": ["id", "sources", "resolved", "lang", "latencyMs"],
                "description": "The data of the stream's `done` event: the `/v1/query` response without `answer` (the tokens carry it).",
                "properties": {
                    "id": {"type": "string"},
                    "sources": {"type": "array", "items": {"type": "object"}},
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
            {"name": "meta", "description": "This document"},
            {"name": "content", "description": "Landing-page payloads and sitemap slugs (public, cacheable)"},
            {"name": "pricing", "description": "Live prices per vertical (public)"},
            {"name": "stats", "description": "Public site statistics (public, cacheable)"}
        ],
        "paths": paths(),
        "webhooks": webhooks(),
        "components": webhook_schemas(content_components(components()))
    })
}

/// What a site's CRM endpoint receives (OpenAPI 3.1 `webhooks`): Standard Webhooks v1 deliveries.
fn webhooks() -> Value {
    let headers = json!([
        {"name": "webhook-id", "in": "header", "required": true, "description": "`msg_<ulid>`: the same on every retry and replay of one event; deduplicate on it.", "schema": {"type": "string", "pattern": "^msg_"}},
        {"name": "webhook-timestamp", "in": "header", "required": true, "description": "Unix seconds of this attempt.", "schema": {"type": "string", "pattern": "^[0-9]+$"}},
        {"name": "webhook-signature", "in": "header", "required": true,
         "description": "`v1,<base64 HMAC-SHA256 of {webhook-id}.{webhook-timestamp}.{body}>` with the site's `whsec_` secret; two space-separated signatures for 24 h after a rotation.",
         "schema": {"type": "string", "pattern": "^v1,"}}
    ]);
    let responses = json!({
        "2XX": {"description": "Delivered."},
        "410": {"description": "Gone: the site's endpoint is disabled until its URL is set again; events wait."},
        "default": {"description": "Any other answer, a redirect or a timeout: retried on the schedule, then dead-lettered."}
    });
    let event = |type_: &str, summary: &str, data: &str| {
        json!({"post": {
            "summary": summary,
            "parameters": headers,
            "requestBody": {"required": true, "content": {"application/json": {"schema": {
                "type": "object", "required": ["type", "timestamp", "data"],
                "properties": {
                    "type": {"type": "string", "const": type_},
                    "timestamp": {"type": "string", "format": "date-time"},
                    "data": schema_ref(data)
                }
            }}}},
            "responses": responses
        }})
    };
    json!({
        "lead.captured": event("lead.captured", "A lead was captured", "LeadCapturedData"),
        "query.completed": event("query.completed", "A question was answered (sites that opted in)", "QueryCompletedData")
    })
}

/// Schemas of the webhook payloads.
fn webhook_schemas(mut c: Value) -> Value {
    let schemas = &mut c["schemas"];
    schemas["LeadCapturedData"] = json!({
        "type": "object", "required": ["leadId", "siteId", "email", "createdAt"],
        "properties": {
            "leadId": {"type": "string", "pattern": "^lead_"}, "siteId": {"type": "string", "format": "uuid"},
            "name": {"type": ["string", "null"]}, "email": {"type": "string"}, "message": {"type": ["string", "null"]},
            "pageUrl": {"type": ["string", "null"]}, "createdAt": {"type": "string", "format": "date-time"}
        }
    });
    schemas["QueryCompletedData"] = json!({
        "type": "object", "required": ["queryId", "siteId", "question", "resolved", "sourceCount", "latencyMs"],
        "properties": {
            "queryId": {"type": "string"}, "siteId": {"type": "string", "format": "uuid"}, "question": {"type": "string"},
            "resolved": {"type": "boolean"}, "sourceCount": {"type": "integer", "minimum": 0}, "latencyMs": {"type": "integer", "minimum": 0}
        }
    });
    c
}

/// The document never changes while the process runs: built once, served as bytes.
#[handler]
pub async fn serve() -> poem::Response {
    static DOCUMENT: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    let body = DOCUMENT.get_or_init(|| serde_json::to_vec(&document()).unwrap_or_default());
    poem::Response::builder().content_type("application/json").body(body.clone())
}

// Public content routes (landing, sitemap, pricing, public stats): no header needed, rate limited per
// client IP, cacheable. Kept together so their headers and schemas are documented in one place.

/// A success response of a cacheable route: the common headers plus `extra` header refs.
fn cached_ok(description: &str, schema: Value, extra: &[(&str, &str)]) -> Value {
    let mut headers = common_headers();
    for (name, component) in extra {
        headers[*name] = header_ref(component);
    }
    json!({"description": description, "headers": headers, "content": {"application/json": {"schema": schema}}})
}

fn not_modified(extra: &[(&str, &str)]) -> Value {
    let mut headers = common_headers();
    for (name, component) in extra {
        headers[*name] = header_ref(component);
    }
    json!({"description": "Not modified: the `If-None-Match` tag (or `*`) matches the current `ETag`; no body.", "headers": headers})
}

fn path_param(name: &str, description: &str, pattern: &str) -> Value {
    json!({"name": name, "in": "path", "required": true, "description": description, "schema": {"type": "string", "pattern": pattern}})
}

fn content_paths(p: &mut Map<String, Value>) {
    let landing_headers = [("ETag", "ETag"), ("Last-Modified", "LastModified"), ("Cache-Control", "CacheControl")];
    let if_none_match = json!({"$ref": "#/components/parameters/IfNoneMatch"});
    let site = path_param("site", "The vertical's slug (`dental`).", "^[a-z0-9-]{1,64}$");
    p.insert(
        "/v1/landing/{site}/{lang}/{slug}".into(),
        json!({"get": operation("content", "getLandingPage", "A published landing page",
        "The payload of one published page. Drafts, unknown pages and malformed addresses all answer 404 `not_found`, \
         so a draft's existence never shows. `alternates` lists only published pages. Cacheable for 5 minutes; \
         revalidate with `If-None-Match` (lists, `W/` tags and `*` are understood) to get 304.",
        json!({
            "200": cached_ok("The page", schema_ref("LandingPage"), &landing_headers),
            "304": not_modified(&landing_headers)
        }),
        &[404],
        json!({"security": [], "parameters": [
            site,
            path_param("lang", "BCP 47 language tag (`en`, `de-CH`).", "^[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*$"),
            path_param("slug", "The page's slug.", "^[a-z0-9-]{1,128}$"),
            if_none_match
        ]}))}),
    );
    p.insert(
        "/v1/landing/{site}/sitemap-slugs".into(),
        json!({"get": operation("content", "getSitemapSlugs", "Published pages of a vertical, for sitemaps",
            "Every published page of the vertical, sorted by (lang, type, slug); an empty array when none is published. \
             Unknown vertical: 404 `not_found`. Same caching as the page route.",
            json!({
                "200": cached_ok("The pages", json!({"type": "array", "items": schema_ref("SitemapEntry")}), &landing_headers),
                "304": not_modified(&landing_headers)
            }),
            &[404],
            json!({"security": [], "parameters": [site, if_none_match]}))}),
    );
    let pricing_headers = [("ETag", "ETag"), ("Cache-Control", "CacheControl"), ("Content-Language", "ContentLanguage"), ("Vary", "Vary")];
    p.insert(
        "/v1/pricing/{vertical}".into(),
        json!({"get": operation("pricing", "getPricing", "Live prices of a vertical",
            "Tiers with localized names, descriptions and features, priced at request time from the stored base prices and \
             currency rates (base -> reference -> target, exact decimal arithmetic, rounded half up to the currency's minor unit). \
             Language: `lang`, else the best `Accept-Language` match (q-values honoured), else the vertical's default. \
             Currency: the site's when `X-Site-Id` is sent, else `currency`, else the vertical's default. \
             `Cache-Control: public, no-cache`: caches revalidate every time (304 on `If-None-Match`), so a price change shows at once. \
             422 `validation_failed` names `lang` (malformed or not offered) or `currency` (unknown, or no rate to convert by).",
            json!({
                "200": cached_ok("The priced tiers", schema_ref("Pricing"), &pricing_headers),
                "304": not_modified(&pricing_headers)
            }),
            &[400, 404, 422],
            json!({"security": [], "parameters": [
                path_param("vertical", "The vertical's slug.", "^[a-z0-9-]{1,64}$"),
                {"name": "lang", "in": "query", "required": false, "description": "BCP 47 tag; must be offered by the vertical (or share its primary language with an offered one).", "schema": {"type": "string"}},
                {"name": "currency", "in": "query", "required": false, "description": "ISO 4217 code; ignored when `X-Site-Id` is sent.", "schema": {"type": "string", "pattern": "^[A-Za-z]{3}$"}},
                {"name": "Accept-Language", "in": "header", "required": false, "schema": {"type": "string"}},
                {"name": "X-Site-Id", "in": "header", "required": false, "description": "Prices in this site's currency. Malformed: 400 `invalid_site_id`; unknown: 404 `site_not_found`.", "schema": {"type": "string", "format": "uuid"}},
                if_none_match
            ]}))}),
    );
    p.insert(
        "/v1/public-stats/{siteId}".into(),
        json!({"get": operation("stats", "getPublicStats", "Public statistics of a site",
        "Totals kept as counters in the transactions that record queries and leads, so this is one lookup whatever the \
         traffic. `activeSince` is the UTC date of the site's first question or lead, or its creation date before any; \
         `daysActive` counts calendar days from it to today, both included. Cacheable for 60 s.",
        json!({"200": cached_ok("The statistics", schema_ref("PublicStats"), &[("Cache-Control", "CacheControl")])}),
        &[400, 403, 404],
        json!({"security": [], "parameters": [
            {"name": "siteId", "in": "path", "required": true, "description": "The site's GUID.", "schema": {"type": "string", "format": "uuid"}}
        ]}))}),
    );
}

/// Adds the headers, parameters and schemas of the content routes to `components`.
fn content_components(mut c: Value) -> Value {
    let headers = json!({
        "ETag": {"description": "Strong validator of the body (a quoted hash); send it back in `If-None-Match`.", "schema": {"type": "string"}},
        "LastModified": {"description": "When the payload last changed, as an HTTP date.", "schema": {"type": "string"}},
        "CacheControl": {"description": "`public, max-age=300` (landing, sitemap), `public, max-age=60` (stats), `public, no-cache` (pricing).", "schema": {"type": "string"}},
        "ContentLanguage": {"description": "The language the texts and `formatted` prices are in.", "schema": {"type": "string"}},
        "Vary": {"description": "`Accept-Language, X-Site-Id` (and `Origin`).", "schema": {"type": "string"}}
    });
    let text = |max: u32| json!({"type": "string", "minLength": 1, "maxLength": max});
    let schemas = json!({
        "LandingPage": {
            "type": "object",
            "required": ["site", "lang", "slug", "type", "title", "description", "faq", "features", "stats", "alternates", "updatedAt"],
            "properties": {
                "site": {"type": "string", "description": "The vertical's slug."},
                "lang": {"type": "string"},
                "slug": {"type": "string"},
                "type": schema_ref("PageType"),
                "title": text(200),
                "description": text(2000),
                "faq": {"type": "array", "maxItems": 100, "items": {"type": "object", "required": ["question", "answer"], "properties": {"question": text(500), "answer": text(5000)}}},
                "features": {"type": "array", "maxItems": 50, "items": {"type": "object", "required": ["title", "description"], "properties": {"title": text(200), "description": {"type": "string", "maxLength": 2000}, "icon": text(64)}}},
                "stats": {"type": "array", "maxItems": 50, "items": {"type": "object", "required": ["label", "value"], "properties": {"label": text(100), "value": text(100)}}},
                "alternates": {"type": "array", "description": "The same page in other languages; published pages only.", "items": {"type": "object", "required": ["lang", "slug"], "properties": {"lang": {"type": "string"}, "slug": {"type": "string"}}}},
                "updatedAt": {"type": "string", "format": "date-time"}
            }
        },
        "PageType": {"type": "string", "enum": ["home", "feature", "use-case", "comparison", "faq", "pricing", "article"]},
        "SitemapEntry": {
            "type": "object", "required": ["slug", "lang", "type", "updatedAt"],
            "properties": {"slug": {"type": "string"}, "lang": {"type": "string"}, "type": schema_ref("PageType"), "updatedAt": {"type": "string", "format": "date-time"}}
        },
        "Pricing": {
            "type": "object", "required": ["vertical", "lang", "currency", "tiers"],
            "properties": {
                "vertical": {"type": "string"},
                "lang": {"type": "string"},
                "currency": {"type": "string", "description": "ISO 4217"},
                "tiers": {"type": "array", "items": schema_ref("PricingTier")}
            }
        },
        "PricingTier": {
            "type": "object", "required": ["id", "name", "description", "price", "requestsPerMinute", "features", "highlighted"],
            "properties": {
                "id": {"type": "string"},
                "name": {"type": "string"},
                "description": {"type": "string"},
                "price": {"type": "object", "required": ["amountMinor", "currency", "interval", "formatted"], "properties": {
                    "amountMinor": {"type": "integer", "minimum": 0, "description": "In the currency's minor unit (cents; yen have none)."},
                    "currency": {"type": "string"},
                    "interval": {"type": "string", "enum": ["month", "year"]},
                    "formatted": {"type": "string", "description": "Localized, e.g. `€29.00` (en) or `29,00 €` (de, with a no-break space)."}
                }},
                "requestsPerMinute": {"type": "integer", "minimum": 1},
                "features": {"type": "array", "items": {"type": "string"}},
                "highlighted": {"type": "boolean"}
            }
        },
        "PublicStats": {
            "type": "object", "required": ["siteId", "totalQuestions", "resolutionRate", "leadsCollected", "activeSince", "daysActive"],
            "properties": {
                "siteId": {"type": "string", "format": "uuid"},
                "totalQuestions": {"type": "integer", "minimum": 0},
                "resolutionRate": {"type": "number", "minimum": 0, "maximum": 1, "description": "Resolved / all questions, 4 decimals; 0 when none."},
                "leadsCollected": {"type": "integer", "minimum": 0},
                "activeSince": {"type": "string", "format": "date"},
                "daysActive": {"type": "integer", "minimum": 1}
            }
        }
    });
    let parameters = json!({
        "IfNoneMatch": {"name": "If-None-Match", "in": "header", "required": false,
            "description": "ETags from earlier responses (comma separated, `W/` accepted) or `*`; a match answers 304.", "schema": {"type": "string"}}
    });
    for (section, add) in [("headers", headers), ("schemas", schemas), ("parameters", parameters)] {
        if let (Some(target), Some(add)) = (c.get_mut(section).and_then(Value::as_object_mut), add.as_object()) {
            for (k, v) in add {
                target.insert(k.clone(), v.clone());
            }
        }
    }
    c
}
