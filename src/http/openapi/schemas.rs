//! Components (schemas, shared headers, problem responses) and the webhooks a site's CRM receives.

use serde_json::{Map, Value, json};

use super::*;
use crate::domain::prefixed_ulid_pattern;
use crate::http::error::ApiError;

/// RFC 3339 date-times as `chrono::DateTime::parse_from_rfc3339` reads them (an impossible date such as
/// 02-30 still matches; the server answers it 422 like any other unreadable time).
const RFC3339: &str =
    "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[Tt ]([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$";

pub(super) fn components() -> Value {
    let int_header = |d: &str| json!({"description": d, "schema": {"type": "integer", "minimum": 0}});
    let problem_response = |status: u16, description: &str, schema: Value| {
        let mut headers = common_headers();
        if status == 429 || status == 503 {
            headers["Retry-After"] = header_ref("RetryAfter");
        }
        if status == 401 {
            headers["WWW-Authenticate"] = json!({"description": "`Bearer error=\"invalid_token\"`", "schema": {"type": "string"}});
        }
        json!({"description": description, "headers": headers, "content": {"application/problem+json": {"schema": schema}}})
    };
    let mut responses = Map::new();
    // The codes of each status come from `ApiError` itself, so the document lists exactly what is sent.
    for (status, note, schema) in [
        (400, "", "Problem"),
        (401, ": the bearer token is unknown or revoked", "Problem"),
        (403, "", "Problem"),
        (404, "", "Problem"),
        (405, ", with `Allow` naming the route's methods", "Problem"),
        (409, ": the conversation's hand-off is not in a state that allows this (`handoff_unavailable` carries a `reason`)", "Problem"),
        (
            413,
            ": JSON bodies are limited to 64 KiB, multipart to 10 MiB; nothing past the limit is parsed or kept. The \
            rest of the body is still read and discarded (up to `server.discard_body_bytes`, 32 MiB by default) before the answer \
            goes out, so a client that is still sending receives it",
            "Problem",
        ),
        (415, ": JSON routes need `Content-Type: application/json`", "Problem"),
        (422, ", with one entry per invalid field for `validation_failed`", "Problem"),
        (429, ": retry after `Retry-After` seconds (`daily_quota_exceeded`: at midnight UTC)", "Problem"),
        (500, ": generic text only; quote `requestId`", "Problem"),
        (501, ", with `expected`", "NotImplementedProblem"),
        (
            503,
            ": a line in front of shared work (the embedding session, the search slots, the database writer) was full or \
            too slow, the database is busy, or (leads and feedback) the disk is below its free-space watermark; retry after `Retry-After` seconds",
            "Problem",
        ),
    ] {
        let codes = ApiError::codes_for(status);
        let description = format!("{}{note}", codes.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(" or "));
        let mut schema = json!({"allOf": [schema_ref(schema), {"type": "object", "properties": {"code": {"enum": codes}}}]});
        if status == 422 {
            schema["allOf"][1]["if"] = json!({"properties": {"code": {"const": "validation_failed"}}});
            schema["allOf"][1]["then"] = schema_ref("ValidationProblem");
        }
        let mut response = problem_response(status, &description, schema);
        if status == 405 {
            response["headers"]["Allow"] = json!({"description": "The methods the route takes (`GET, HEAD` or `POST`)", "schema": {"type": "string"}});
        }
        responses.insert(format!("Problem{status}"), response);
    }
    let codes: Vec<&str> = ApiError::codes();
    json!({
        "securitySchemes": {
            "bearerAuth": {"type": "http", "scheme": "bearer",
                "description": "Pro and Enterprise: a server-to-server token that identifies the site by itself and skips the Origin check. Must agree with X-Site-Id when both are sent."}
        },
        "parameters": {
            "XSiteId": {"name": "X-Site-Id", "in": "header", "required": true,
                "description": "The site's GUID. Public (it sits in the website's HTML): it identifies, it does not authenticate; browser \
                    calls are checked against the site's allowed origins. May be left out when a bearer token is sent (the token names \
                    its site); with neither, 400 `site_id_required`.",
                "schema": {"type": "string", "format": "uuid"}}
        },
        "headers": {
            "XRequestId": {"description": "Echoes a sane client `X-Request-Id` (1-128 of `[A-Za-z0-9._:-]`), else a new `req_<ulid>`.", "schema": {"type": "string"}},
            "XRateLimitLimit": int_header("Capacity of the bucket that binds this request: the most requests it holds, its rate a \
                minute times `limits.burst_multiplier` (2 by default), so `X-RateLimit-Remaining` is never above it. Tenant routes \
                count a request twice: against the visitor's own bucket (client IP, IPv6 by /64: `limits.visitor_share` of the \
                tier's rate, by default 15, 150, 1500 a minute) and the site's (by tier: 60, 600, 6000 a minute); the headers \
                describe the one that refused, else the one with fewest requests left. Calls with the site's bearer token have a \
                bucket of their own at the tier's rate. Routes without a site count per client IP (default 600 a minute)."),
            "XRateLimitRemaining": int_header("Whole requests left in the binding bucket after this one, 0 to `X-RateLimit-Limit`."),
            "XRateLimitReset": int_header("Seconds, rounded up, until the binding bucket is full again (0 when full). Delta seconds, not an epoch."),
            "XRateLimitPolicy": {"description": "The binding bucket's policy in the IETF RateLimit draft's form: its refill rate as \
                a quota per 60-second window, and its capacity as `burst` (equal to `X-RateLimit-Limit`), e.g. `60;w=60;burst=120` \
                for a Starter site.", "schema": {"type": "string", "pattern": "^[0-9]+;w=60;burst=[0-9]+$"}},
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
                    "requestId": {"type": "string"},
                    "reason": {"type": "string", "enum": ["off", "closed", "nobody_online"],
                        "description": "`handoff_unavailable` only: hand-off is off for the site, the site is closed now (hours, closed dates), or none of its staff is online"}
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
            "Health": {"type": "object", "required": ["status"], "properties": {"status": {"type": "string"}, "version": {"type": "string"},
                "storage": {"type": "string", "enum": ["ok", "low"],
                    "description": "`/readyz` only: `low` when the data directory's free space is below `storage.min_free_mb` (questions are answered but not logged, leads refused with 503)"}}},
            "LeadRequest": {
                "type": "object", "required": ["email"],
                "properties": {
                    "name": {"type": ["string", "null"], "maxLength": 200},
                    "email": {"type": "string", "format": "email", "maxLength": 254},
                    "message": {"type": ["string", "null"], "maxLength": 5000},
                    "pageUrl": {"type": ["string", "null"], "format": "uri", "maxLength": 2048},
                    "conversationId": {"type": ["string", "null"], "pattern": prefixed_ulid_pattern("cnv_"),
                        "description": "The widget conversation before the visitor asked for a person: the `lead.captured` event then carries its `transcript`. Needs the conversation's token in `X-Conversation-Token`; without it, with a wrong one or for another site's conversation, 404 `conversation_not_found` and no lead is stored."}
                }
            },
            "LeadAccepted": {
                "type": "object", "required": ["id", "status"],
                "properties": {"id": {"type": "string", "pattern": "^lead_"}, "status": {"type": "string", "const": "accepted"}}
            },
            "QueryResponse": {
                "type": "object", "required": ["id", "answer", "sources", "resolved", "lang", "latencyMs", "conversationId", "mode"],
                "properties": {
                    "id": {"type": "string"},
                    "answer": {"type": "string"},
                    "conversationId": {"type": "string", "pattern": prefixed_ulid_pattern("cnv_"), "description": "The conversation this answer belongs to; send it back with the next question to continue it"},
                    "conversationToken": {"type": "string", "pattern": "^cvt_[A-Za-z0-9_-]{43}$", "description": "Only in the first answer of a new conversation: the secret its hand-off routes need in `X-Conversation-Token`. Given once, stored only as a hash; keep it with the conversation id."},
                    "mode": {"type": "string", "enum": ["extractive", "generative"], "description": "How the answer was made: `extractive`, sentences quoted from the sources; `generative`, sentences written by the operator's language model, each shown only because the sources it cites (`[n]` into `sources`) support it. A generative attempt that fails, times out or produces no supported sentence gives the extractive answer, still 200."},
                    "sources": {"type": "array", "description": "One per document, best first", "items": {"type": "object", "required": ["id", "documentId", "title", "snippet", "score"], "properties": {
                        "id": {"type": "string", "description": "The passage (`chk_...`), or the curated answer (`ans_...`)"},
                        "documentId": {"type": "string", "description": "The document (`doc_...`), or the curated answer (`ans_...`)"},
                        "title": {"type": "string"},
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
                    "question": {"type": "string", "pattern": "^\\s*\\S([\\s\\S]{0,1998}\\S)?\\s*$", "description": "1 to 2000 characters after trimming whitespace"},
                    "topK": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5, "description": "At most this many sources (documents)"},
                    "scoreThreshold": {"type": ["number", "null"], "minimum": 0, "maximum": 1, "description": "Drop sources scoring below this, exactly; when absent, the server's `knowledge.min_score` (0.25 by default) applies"},
                    "lang": {"anyOf": [lang_schema("BCP 47 tag for the answer's language; default: the question's language when detected confidently, else the site's"), {"type": "null"}]},
                    "conversationId": {"type": ["string", "null"], "pattern": prefixed_ulid_pattern("cnv_"),
                        "description": "Continue this conversation: a short question is understood with its previous one. Needs the conversation's token in `X-Conversation-Token`; without it, with a wrong one or for another site's conversation, 404 `conversation_not_found`. Without `conversationId` a new conversation starts."}
                }
            },
            "WidgetConfig": {
                "type": "object", "required": ["siteId", "name", "greeting", "primaryColor", "position", "leadForm", "handoff", "languages", "suggestedQuestions"],
                "properties": {
                    "siteId": {"type": "string", "format": "uuid"},
                    "name": {"type": "string"},
                    "greeting": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Greeting per BCP 47 tag; the widget's own default when its language has none"},
                    "primaryColor": {"type": "string", "pattern": "^#[0-9a-f]{6}$"},
                    "position": {"type": "string", "enum": ["bottom-right", "bottom-left"]},
                    "leadForm": {"type": "boolean", "description": "Whether the widget offers the contact form"},
                    "handoff": {"type": "boolean", "description": "Whether the site has live hand-off on: \"Talk to a person\" then asks for one (`POST /v1/conversations/{conversationId}/handoff`), and the contact form when none can come"},
                    "languages": {"type": "array", "items": {"type": "string"}, "description": "The site's language, then every language it has a greeting in"},
                    "suggestedQuestions": {
                        "type": "object", "required": ["lang", "questions"],
                        "description": "Questions the widget offers as buttons before the first question: those of `lang` (the query's), else of its primary language, else of the site's language",
                        "properties": {
                            "lang": {"type": ["string", "null"], "description": "The language the questions are in; null when there are none"},
                            "questions": {"type": "array", "maxItems": 5, "items": {"type": "string", "minLength": 1, "maxLength": 120}}
                        }
                    }
                }
            },
            "FeedbackRequest": {
                "type": "object", "required": ["queryId", "rating"],
                "properties": {
                    "queryId": {"type": "string", "pattern": prefixed_ulid_pattern("qry_")},
                    "rating": {"type": "string", "enum": ["up", "down"]},
                    "comment": {"type": ["string", "null"], "maxLength": 1000}
                }
            },
            "Accepted": {"type": "object", "required": ["status"], "properties": {"status": {"type": "string", "const": "accepted"}}},
            "EventsRequest": {
                "type": "object", "required": ["events"],
                "properties": {"events": {"type": "array", "minItems": 1, "maxItems": 50, "items": {
                    "type": "object", "required": ["type", "sessionId"],
                    "properties": {
                        "type": {"type": "string", "enum": ["widget_loaded", "widget_opened", "question_asked", "answer_shown", "source_clicked", "feedback_given", "lead_form_opened", "lead_submitted"]},
                        "sessionId": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$", "description": "Random per page session; nothing that identifies a person"},
                        "at": {"type": ["string", "null"], "format": "date-time", "pattern": RFC3339, "description": "When it happened; the server's time when absent or more than a day off"},
                        "queryId": {"type": ["string", "null"], "pattern": prefixed_ulid_pattern("qry_")},
                        "url": {"type": ["string", "null"], "format": "uri", "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#]+", "maxLength": 2048}
                    }
                }}}
            },
            "EventsAccepted": {"type": "object", "required": ["accepted"], "properties": {"accepted": {"type": "integer", "minimum": 1, "maximum": 50}}},
            "QueryDone": {
                "type": "object", "required": ["id", "sources", "resolved", "lang", "latencyMs", "conversationId", "mode"],
                "description": "The data of the stream's `done` event: the `/v1/query` response without `answer` (the tokens carry it).",
                "properties": {
                    "id": {"type": "string"},
                    "conversationId": {"type": "string", "pattern": prefixed_ulid_pattern("cnv_"), "description": "The conversation this answer belongs to; send it back with the next question to continue it"},
                    "conversationToken": {"type": "string", "pattern": "^cvt_[A-Za-z0-9_-]{43}$", "description": "Only in the first answer of a new conversation: the secret its hand-off routes need in `X-Conversation-Token`. Given once, stored only as a hash; keep it with the conversation id."},
                    "mode": {"type": "string", "enum": ["extractive", "generative"], "description": "How the answer was made: `extractive`, sentences quoted from the sources; `generative`, sentences written by the operator's language model, each shown only because the sources it cites (`[n]` into `sources`) support it. A generative attempt that fails, times out or produces no supported sentence gives the extractive answer, still 200."},
                    "sources": {"type": "array", "items": {"type": "object"}},
                    "resolved": {"type": "boolean"},
                    "lang": {"type": "string"},
                    "latencyMs": {"type": "integer", "minimum": 0}
                }
            }
        }
    })
}

/// What a site's CRM endpoint receives (OpenAPI 3.1 `webhooks`): Standard Webhooks v1 deliveries.
pub(super) fn webhooks() -> Value {
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
        "query.completed": event("query.completed", "A question was answered (sites that opted in)", "QueryCompletedData"),
        "conversation.handoff_requested": event("conversation.handoff_requested", "A visitor asked for a person and is waiting (sites that opted in)", "HandoffRequestedData")
    })
}

/// Schemas of the webhook payloads.
pub(super) fn webhook_schemas(mut c: Value) -> Value {
    let schemas = &mut c["schemas"];
    schemas["LeadCapturedData"] = json!({
        "type": "object", "required": ["leadId", "siteId", "email", "createdAt"],
        "properties": {
            "leadId": {"type": "string", "pattern": "^lead_"}, "siteId": {"type": "string", "format": "uuid"},
            "name": {"type": ["string", "null"]}, "email": {"type": "string"}, "message": {"type": ["string", "null"]},
            "pageUrl": {"type": ["string", "null"]}, "createdAt": {"type": "string", "format": "date-time"},
            "conversationId": {"type": "string", "pattern": prefixed_ulid_pattern("cnv_"), "description": "When the lead came from a widget conversation"},
            "transcript": {"type": "array", "items": schema_ref("TranscriptTurn"),
                "description": "That conversation, oldest first: questions, answers and everything said with a person of the staff (`staff` turns carry the person's `author` name)"}
        }
    });
    schemas["QueryCompletedData"] = json!({
        "type": "object", "required": ["queryId", "siteId", "question", "resolved", "sourceCount", "latencyMs", "mode"],
        "properties": {
            "queryId": {"type": "string"}, "siteId": {"type": "string", "format": "uuid"}, "question": {"type": "string"},
            "resolved": {"type": "boolean"}, "sourceCount": {"type": "integer", "minimum": 0}, "latencyMs": {"type": "integer", "minimum": 0},
            "mode": {"type": "string", "enum": ["extractive", "generative"], "description": "How the answer was made"}
        }
    });
    c
}
