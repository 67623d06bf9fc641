//! The live hand-off routes (a person of the site's staff takes over a conversation), their schemas and
//! the `conversation.handoff_requested` webhook.

use serde_json::{Map, Value, json};

use super::*;
use crate::domain::prefixed_ulid_pattern;
use crate::store::handoff::{MAX_MESSAGE_CHARS, VISITOR_MESSAGES_PER_MINUTE};

fn parameters() -> Value {
    json!([
        {"$ref": "#/components/parameters/XSiteId"},
        {"name": "conversationId", "in": "path", "required": true, "schema": {"type": "string", "pattern": prefixed_ulid_pattern("cnv_")},
         "description": "The conversation, as the answer that started it gave it."},
        {"$ref": "#/components/parameters/XConversationToken"}
    ])
}

pub(super) fn paths(p: &mut Map<String, Value>) {
    let security = tenant_security();
    p.insert(
        "/v1/conversations/{conversationId}/handoff".into(),
        json!({"post": operation("handoff", "requestHandoff", "Ask for a person",
            "The visitor asks for a person of the site's staff. 202 `waiting` when one can come: the site has hand-off on, is \
             open now (its weekly hours and closed dates, in its time zone) and at least one of its owners or editors has the \
             console's inbox open. Asking again while waiting or while a person holds the conversation is harmless: 202 with the \
             state as it is. Otherwise 409 `handoff_unavailable` with a `reason` (`off`, `closed`, `nobody_online`): offer the \
             contact form (`POST /v1/leads` with the `conversationId`, whose `lead.captured` carries the whole transcript). If \
             nobody takes the conversation before `waitUntil` (the site's wait, 120 s unless set), the event stream says \
             `missed`: offer the contact form then too. Sites that opted in get `conversation.handoff_requested`. No body is \
             read.",
            json!({"202": ok("A person is awaited (or already holds the conversation)", "application/json", schema_ref("HandoffAccepted"))}),
            &[400, 401, 403, 404, 409, 503],
            json!({"security": security, "parameters": parameters()}))}),
    );
    p.insert(
        "/v1/conversations/{conversationId}/handoff/cancel".into(),
        json!({"post": operation("handoff", "cancelHandoff", "No longer wait, or end the chat with the person",
            "The visitor cancels the wait for a person, or ends the chat with the person who holds the conversation: back to \
             the assistant, with a `closed` state event on the stream. 409 `handoff_inactive` when no person was involved. No \
             body is read.",
            json!({"202": ok("Back to the assistant", "application/json", schema_ref("HandoffCancelled"))}),
            &[400, 401, 403, 404, 409, 503],
            json!({"security": security, "parameters": parameters()}))}),
    );
    p.insert(
        "/v1/conversations/{conversationId}/messages".into(),
        json!({"post": operation("handoff", "sendMessage", "Write to the person",
            &format!("The visitor's message while a person holds the conversation or is awaited: stored, then on the event stream \
             (as a `message` with `role: user`) for the visitor's other tabs and for the staff. 409 `handoff_inactive` when no \
             person is involved: ask the assistant through `/v1/query`. At most {VISITOR_MESSAGES_PER_MINUTE} messages a minute \
             per conversation (429 `rate_limited` with `Retry-After` beyond); {MAX_MESSAGE_CHARS} characters each. When the \
             server is short of disk space, 503 `unavailable` and nothing is stored."),
            json!({"202": ok("Stored and sent", "application/json", schema_ref("MessageAccepted"))}),
            &[400, 401, 403, 404, 409, 413, 415, 422, 503],
            json!({"security": security, "parameters": parameters(), "requestBody": json_body("MessageRequest")}))}),
    );
    p.insert(
        "/v1/conversations/{conversationId}/events".into(),
        json!({"get": operation("handoff", "conversationEvents", "What happens in the conversation",
            "Server-Sent Events of the conversation's hand-off, oldest first: `state` (`waiting`, `joined` with the person's \
             `displayName`, `handed_back`, `closed`, `missed`) and `message` (`role` `user` or `staff`, with the person's \
             `displayName`). Each event has an `id`; a client that reconnects with `Last-Event-ID` (or `?lastEventId=`) gets \
             exactly the events after it, none missed and none repeated. Events are stored with the change they tell before \
             any stream sends them, so a server restart loses none. After `joined` the visitor's messages go to \
             `/messages`, and `/v1/query` answers 409 `handoff_active` until `handed_back`, `closed` or `missed`. A `:` comment \
             after every 25 s without an event keeps idle connections open (a proxy in front needs an idle timeout above 25 s). A client (an IPv4 address or an IPv6 /64) holds at most 8 streams at once: \
             429 `rate_limited` beyond.",
            json!({"200": {
                "description": "The event stream",
                "headers": common_headers(),
                "content": {"text/event-stream": {
                    "schema": {
                        "description": "One event: `state` (HandoffState JSON) or `message` (HandoffMessage JSON), each with its `id`.",
                        "oneOf": [
                            {"type": "object", "required": ["event", "data", "id"], "properties": {
                                "event": {"const": "state"}, "id": {"type": "string", "pattern": "^[0-9]+$"},
                                "data": {"type": "string", "contentMediaType": "application/json", "contentSchema": schema_ref("HandoffState")}}},
                            {"type": "object", "required": ["event", "data", "id"], "properties": {
                                "event": {"const": "message"}, "id": {"type": "string", "pattern": "^[0-9]+$"},
                                "data": {"type": "string", "contentMediaType": "application/json", "contentSchema": schema_ref("HandoffMessage")}}}
                        ]
                    },
                    "example": "id: 7\nevent: state\ndata: {\"state\":\"joined\",\"displayName\":\"Ada\",\"at\":\"2026-11-26T10:00:05Z\"}\n\nid: 8\nevent: message\ndata: {\"role\":\"staff\",\"displayName\":\"Ada\",\"text\":\"Hello! How can I help?\",\"at\":\"2026-11-26T10:00:09Z\"}\n\n"
                }}
            }}),
            &[400, 401, 403, 404, 422, 503],
            json!({"security": security, "parameters": [
                {"$ref": "#/components/parameters/XSiteId"},
                {"name": "conversationId", "in": "path", "required": true, "schema": {"type": "string", "pattern": prefixed_ulid_pattern("cnv_")}},
                {"$ref": "#/components/parameters/XConversationToken"},
                {"name": "Last-Event-ID", "in": "header", "required": false, "schema": {"type": "string", "pattern": "^[0-9]{1,18}$"},
                 "description": "Resume after this event (the `id` of the last event the client saw)."},
                {"name": "lastEventId", "in": "query", "required": false, "schema": {"type": "string", "pattern": "^[0-9]{1,18}$"},
                 "description": "The same, for clients that cannot set headers (a browser's EventSource); the header wins when both are sent."}
            ]}))}),
    );
}

/// The parameter, schemas and webhook payload of hand-off, added to the components.
pub(super) fn components(mut c: Value) -> Value {
    c["parameters"]["XConversationToken"] = json!({"name": "X-Conversation-Token", "in": "header", "required": true,
        "description": "The conversation's secret (`cvt_...`), given once as `conversationToken` with the conversation's first answer. \
            Missing or wrong, the answer is 404 `conversation_not_found`, exactly as for an unknown id or another site's conversation.",
        "schema": {"type": "string", "maxLength": 100}});
    let schemas = &mut c["schemas"];
    schemas["HandoffAccepted"] = json!({
        "type": "object", "required": ["conversationId", "state", "events"],
        "properties": {
            "conversationId": {"type": "string", "pattern": prefixed_ulid_pattern("cnv_")},
            "state": {"type": "string", "enum": ["waiting", "held"], "description": "`waiting` for a person, or `held` by one already"},
            "waitUntil": {"type": "string", "format": "date-time", "description": "While `waiting`: when the wait ends (`missed`) unless a person joins"},
            "events": {"type": "string", "description": "The path of the conversation's event stream"}
        }
    });
    schemas["HandoffCancelled"] = json!({
        "type": "object", "required": ["conversationId", "state", "eventId"],
        "properties": {
            "conversationId": {"type": "string", "pattern": prefixed_ulid_pattern("cnv_")},
            "state": {"type": "string", "const": "closed"},
            "eventId": {"type": "string", "pattern": "^[0-9]+$", "description": "The id of the `closed` event on the stream"}
        }
    });
    schemas["MessageRequest"] = json!({
        "type": "object", "required": ["text"],
        "properties": {"text": {"type": "string", "pattern": "^\\s*\\S([\\s\\S]{0,1998}\\S)?\\s*$", "description": "1 to 2000 characters after trimming whitespace"}}
    });
    schemas["MessageAccepted"] = json!({
        "type": "object", "required": ["id", "status", "at"],
        "properties": {
            "id": {"type": "string", "pattern": "^[0-9]+$", "description": "The id of the message's event on the stream (the client shows it once)"},
            "status": {"type": "string", "const": "accepted"},
            "at": {"type": "string", "format": "date-time"}
        }
    });
    schemas["HandoffState"] = json!({
        "type": "object", "required": ["state", "at"],
        "properties": {
            "state": {"type": "string", "enum": ["waiting", "joined", "handed_back", "closed", "missed"],
                "description": "`waiting` for a person; `joined`: a person holds it (another joining takes it over); `handed_back` to the assistant; `closed` by the person, or by the visitor (`/handoff/cancel`); `missed`: nobody joined within the wait (offer the contact form)"},
            "displayName": {"type": "string", "description": "`joined`: the person's name as the site shows it to visitors"},
            "at": {"type": "string", "format": "date-time"}
        }
    });
    schemas["HandoffMessage"] = json!({
        "type": "object", "required": ["role", "text", "at"],
        "properties": {
            "role": {"type": "string", "enum": ["user", "staff"]},
            "displayName": {"type": "string", "description": "`staff`: the person's name"},
            "text": {"type": "string", "maxLength": MAX_MESSAGE_CHARS, "description": "As written; hostile text to whoever shows it"},
            "at": {"type": "string", "format": "date-time"}
        }
    });
    schemas["TranscriptTurn"] = json!({
        "type": "object", "required": ["role", "text", "at"],
        "properties": {
            "role": {"type": "string", "enum": ["user", "assistant", "staff"]},
            "text": {"type": "string"},
            "at": {"type": "string", "format": "date-time"},
            "author": {"type": "string", "description": "`staff`: the person's display name"}
        }
    });
    schemas["HandoffRequestedData"] = json!({
        "type": "object", "required": ["siteId", "conversationId", "requestedAt", "waitUntil", "transcript"],
        "properties": {
            "siteId": {"type": "string", "format": "uuid"},
            "conversationId": {"type": "string", "pattern": prefixed_ulid_pattern("cnv_")},
            "requestedAt": {"type": "string", "format": "date-time"},
            "waitUntil": {"type": "string", "format": "date-time", "description": "Take it in the console before then, or the visitor is offered the contact form"},
            "transcript": {"type": "array", "items": schema_ref("TranscriptTurn"), "description": "What was said so far"}
        }
    });
    c
}
