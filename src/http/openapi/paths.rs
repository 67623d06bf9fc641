//! The paths of the tenant routes (query, stream, leads) and of operations and meta.

use serde_json::{Map, Value, json};

use super::*;

pub(super) fn paths() -> Map<String, Value> {
    let mut p = Map::new();
    p.insert(
        "/healthz".into(),
        json!({"get": operation("operations", "healthz", "Liveness", "200 while the process serves requests.",
            json!({"200": ok("Alive", "application/json", schema_ref("Health"))}), &[], json!({"security": []}))}),
    );
    p.insert(
        "/readyz".into(),
        json!({"get": operation("operations", "readyz", "Readiness", "200 when the database answers and the vector indexes a restored node lacked are built; 503 otherwise.",
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
             from the same site within 24 h with the same request returns the first response (with `Idempotent-Replayed: true`) and stores \
             nothing new; the same key with a different request is 422 `idempotency_key_reused`. A site takes a daily number of \
             leads from visitors (requests without a bearer token); beyond it, 429 `daily_quota_exceeded` with `Retry-After` \
             until midnight UTC. When the server is short of disk space, 503 `unavailable` with `Retry-After`. A lead that is \
             not answered 202 is not stored.",
            json!({"202": {
                "description": "Accepted: the lead is stored",
                "headers": {
                    "X-Request-Id": header_ref("XRequestId"),
                    "X-RateLimit-Limit": header_ref("XRateLimitLimit"),
                    "X-RateLimit-Remaining": header_ref("XRateLimitRemaining"),
                    "X-RateLimit-Reset": header_ref("XRateLimitReset"),
                    "X-RateLimit-Policy": header_ref("XRateLimitPolicy"),
                    "Idempotent-Replayed": {"description": "`true` when this is the stored first response to a repeated Idempotency-Key", "schema": {"type": "string", "enum": ["true"]}}
                },
                "content": {"application/json": {"schema": schema_ref("LeadAccepted")}}
            }}),
            &[400, 401, 403, 404, 413, 415, 422, 503],
            json!({
                "security": tenant_security(),
                "parameters": [
                    {"$ref": "#/components/parameters/XSiteId"},
                    {"name": "Idempotency-Key", "in": "header", "required": false, "schema": {"type": "string", "minLength": 1, "maxLength": 255}},
                    continue_token()
                ],
                "requestBody": json_body("LeadRequest")
            }))}),
    );
    p.insert(
        "/v1/widget.js".into(),
        json!({"get": operation("widget", "widgetScript", "The embeddable assistant",
            "One tag on any page: `<script src=\"https://HOST/v1/widget.js\" data-site-id=\"GUID\" async></script>`. Adds one \
             `<sitebot-widget>` element with an open shadow root whose `part` names are the theming interface (API.md). Works under a \
             strict page CSP. `ETag` and `Cache-Control: public, max-age=300`; `If-None-Match` answers 304. Rate limited per client IP.",
            json!({"200": ok("The script", "text/javascript; charset=utf-8", json!({"type": "string"})), "304": {"description": "Not modified"}}),
            &[], json!({"security": []}))}),
    );
    p.insert(
        "/v1/widget/config".into(),
        json!({"get": operation("widget", "widgetConfig", "The site's widget settings",
            "Colour, position, greetings, suggested questions and whether the contact form shows, as published by the console's \
             widget editor or set by `sitebot site update`. With `X-Widget-Preview` (a token the console's preview page makes, bound \
             to one site and valid for minutes), the site's unpublished draft instead; a token that is not this site's, was \
             altered or has expired is 403 `preview_token_invalid`.",
            json!({"200": ok("The settings", "application/json", schema_ref("WidgetConfig"))}),
            &[400, 401, 403, 404],
            json!({"security": tenant_security(), "parameters": [
                {"$ref": "#/components/parameters/XSiteId"},
                {"name": "lang", "in": "query", "required": false, "schema": lang_schema("The visitor's language, for `suggestedQuestions`; malformed: 400 `bad_request`")},
                {"name": "X-Widget-Preview", "in": "header", "required": false, "description": "A console preview token: the draft instead of the published settings", "schema": {"type": "string", "maxLength": 512}}
            ]}))}),
    );
    p.insert(
        "/v1/feedback".into(),
        json!({"post": operation("widget", "rateAnswer", "Rate an answer",
            "Thumbs up or down on one of the site's answers, with an optional comment; rating again replaces the earlier rating. \
             An answer of another site, or none, is 404 `query_not_found`. When the server is short of disk space, 503 \
             `unavailable` with `Retry-After`, and nothing is stored.",
            json!({"202": ok("Recorded", "application/json", schema_ref("Accepted"))}),
            &[400, 401, 403, 404, 413, 415, 422, 503],
            json!({"security": tenant_security(), "parameters": [{"$ref": "#/components/parameters/XSiteId"}], "requestBody": json_body("FeedbackRequest")}))}),
    );
    p.insert(
        "/v1/events".into(),
        json!({"post": operation("widget", "recordEvents", "Widget analytics",
            "1 to 50 widget events. Counted per site, day and type; kept raw for 30 days. An unknown type is 422 and nothing of the batch is stored. \
             When the server is short of disk space none is stored, and `accepted` is 0.",
            json!({"202": ok("Recorded", "application/json", schema_ref("EventsAccepted"))}),
            &[400, 401, 403, 404, 413, 415, 422, 503],
            json!({"security": tenant_security(), "parameters": [{"$ref": "#/components/parameters/XSiteId"}], "requestBody": json_body("EventsRequest")}))}),
    );
    let multimodal = operation(
        "query",
        "askMultimodal",
        "Ask with an image (planned)",
        "Answers 501 `not_implemented` with an `expected` member describing the future request and response, \
         whatever headers or body are sent, except a body declared larger than the multipart limit (10 MiB), which is 413 \
         `payload_too_large` as on every route. Use `fallback` (`/v1/query`) meanwhile. Rate limited per client IP.",
        json!({}),
        &[413, 501],
        json!({"security": []}),
    );
    p.insert("/v1/query/ask-multimodal".into(), json!({"post": multimodal}));
    query_paths(&mut p);
    super::handoff::paths(&mut p);
    super::content::paths(&mut p);
    p
}

/// `X-Conversation-Token` where a body may name a conversation: needed only with `conversationId`.
fn continue_token() -> Value {
    json!({"name": "X-Conversation-Token", "in": "header", "required": false, "schema": {"type": "string", "maxLength": 100},
        "description": "The conversation's secret (`cvt_...`), given once as `conversationToken` with its first answer. Required with \
            `conversationId`: without it or with a wrong one the answer is 404 `conversation_not_found` and nothing is added to the \
            conversation; the conversation id alone is not a credential."})
}

/// `/v1/query` and `/v1/query/stream`.
fn query_paths(p: &mut Map<String, Value>) {
    let extra = || json!({"security": tenant_security(), "parameters": [{"$ref": "#/components/parameters/XSiteId"}, continue_token()], "requestBody": json_body("QueryRequest")});
    p.insert(
        "/v1/query".into(),
        json!({"post": operation("query", "query", "Ask a question",
            "A grounded answer composed only of sentences from the site's own documents, each run followed by an `[n]` marker \
             into `sources` (1-based). Sources are documents, one per document (its best passage as `snippet`), hybrid-ranked \
             (BM25 and embeddings), each with a calibrated `score` in [0, 1] that is comparable across queries; those below \
             `scoreThreshold` are dropped (exactly as sent; when it is absent, the server's `knowledge.min_score`) and at most \
             `topK` documents are returned. A question that closely matches one of the site's curated answers (written by its \
             operator) gets that answer's text, citing it as the one source (`ans_...`). When none remains, `answer` is a localized fallback that offers contact, \
             `sources` is empty and `resolved` is false. Every query is logged for the site's public stats and, for sites that \
             opted in, announced as a `query.completed` webhook; beyond the site's daily cap of logged questions from visitors, \
             below the server's free-space watermark or when the write fails, the answer is the same 200 and the query is \
             not logged. The first answer of a new conversation also carries `conversationToken`, the secret of its hand-off \
             routes (given once). While a person of the staff holds the conversation or is awaited (live hand-off), the \
             assistant does not answer it: 409 `handoff_active`; send the visitor's words to \
             `/v1/conversations/{conversationId}/messages` instead.",
            json!({"200": ok("The answer", "application/json", schema_ref("QueryResponse"))}),
            &[400, 401, 403, 404, 409, 413, 415, 422, 503], extra())}),
    );
    p.insert(
        "/v1/query/stream".into(),
        json!({"post": operation("query", "queryStream", "Ask a question, streamed",
            "The same request and answer as `/v1/query`, as Server-Sent Events: `event: token` with a word-sized fragment of the \
             answer as `data` (raw UTF-8; a newline would be split over several `data:` lines), then one `event: done` whose data \
             is a `QueryDone` JSON object. Concatenating the token data gives exactly the `/v1/query` answer. Errors before the \
             stream starts are ordinary problem+json responses; an error after the 200 is one `event: error` with the problem JSON \
             as data, and the stream ends without `done` (a query that cannot be logged still ends with `done`). A `:` comment line every 15 s keeps idle connections open. Never \
             compressed; sent with `Cache-Control: no-cache` and `X-Accel-Buffering: no`. While a person holds the conversation \
             or is awaited, 409 `handoff_active` before the stream starts.",
            json!({"200": {
                "description": "An event stream: `token`* then `done` (or `error`)",
                "headers": {
                    "X-Request-Id": header_ref("XRequestId"),
                    "X-RateLimit-Limit": header_ref("XRateLimitLimit"),
                    "X-RateLimit-Remaining": header_ref("XRateLimitRemaining"),
                    "X-RateLimit-Reset": header_ref("XRateLimitReset"),
                    "X-RateLimit-Policy": header_ref("XRateLimitPolicy"),
                    "Cache-Control": {"description": "`no-cache`", "schema": {"type": "string", "const": "no-cache"}},
                    "X-Accel-Buffering": {"description": "`no`: proxies must not buffer the stream", "schema": {"type": "string", "const": "no"}}
                },
                "content": {"text/event-stream": {
                    // OpenAPI 3.1 has an event stream's `schema` describe each event, as parsed from its fields.
                    "schema": {
                        "description": "One event: `token` (a fragment of the answer), then `done` (QueryDone JSON) or `error` (Problem JSON).",
                        "oneOf": [
                            {"type": "object", "required": ["event", "data"], "properties": {
                                "event": {"const": "token"}, "data": {"type": "string", "description": "A word of the answer with the whitespace before the next"}}},
                            {"type": "object", "required": ["event", "data"], "properties": {
                                "event": {"const": "done"},
                                "data": {"type": "string", "contentMediaType": "application/json", "contentSchema": schema_ref("QueryDone")}}},
                            {"type": "object", "required": ["event", "data"], "properties": {
                                "event": {"const": "error"},
                                "data": {"type": "string", "contentMediaType": "application/json", "contentSchema": schema_ref("Problem")}}}
                        ]
                    },
                    "example": "event: token\ndata: We \n\nevent: token\ndata: open \n\nevent: done\ndata: {\"id\":\"qry_01J...\",\"sources\":[],\"resolved\":true,\"lang\":\"en\",\"latencyMs\":6}\n\n"
                }}
            }}),
            &[400, 401, 403, 404, 409, 413, 415, 422, 503], extra())}),
    );
}
