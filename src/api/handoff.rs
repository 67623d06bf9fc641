//! The visitor's side of live hand-off (`crate::handoff`):
//!
//! - `POST /v1/conversations/{conversationId}/handoff`: ask for a person (202 `waiting`, or 409
//!   `handoff_unavailable` with its `reason`, so the widget offers the contact form);
//! - `POST /v1/conversations/{conversationId}/handoff/cancel`: the visitor cancels the wait or ends the
//!   chat with the person (202, `closed`), 409 `handoff_inactive` when no person is involved;
//! - `POST /v1/conversations/{conversationId}/messages`: a message to the person (202), 409
//!   `handoff_inactive` when no person is involved;
//! - `GET /v1/conversations/{conversationId}/events`: the conversation's events as Server-Sent Events,
//!   each with its `id`; `Last-Event-ID` (or `?lastEventId=`) resumes after it, missing and repeating
//!   nothing, since events are read from the store by id.
//!
//! Every route needs the conversation's token in `X-Conversation-Token`; without it, with a wrong one,
//! for an unknown id or another site's conversation the answer is the same 404 `conversation_not_found`.
//! A client holds at most [`MAX_STREAMS_PER_CLIENT`] event streams at once (429 beyond).

use std::sync::Arc;
use std::time::Duration;

use poem::http::StatusCode;
use poem::web::sse::Event as SseEvent;
use poem::web::{Data, Path};
use poem::{Request, Response, handler};
use serde::{Deserialize, Serialize};

use super::token::token_of;
use crate::app::AppState;
use crate::domain::{ConversationId, Timestamp};
use crate::handoff::{self, VisitorError};
use crate::http::edge::client_ip;
use crate::http::error::{ApiError, FieldError};
use crate::http::json::{Json, Validate};
use crate::http::scope::Tenant;
use crate::live::{StreamSlot, conversation_key};
use crate::ratelimit::Client;
use crate::store::handoff::{Author, Event, EventKind, Holding, MAX_MESSAGE_CHARS, Status};

/// Event streams one client (an IPv4 address or an IPv6 /64) holds open at most.
pub const MAX_STREAMS_PER_CLIENT: usize = 8;
/// A comment on an idle event stream this often. Longer than the query stream's 15 s (API.md), since
/// these streams stay open for a whole visit: 10,000 idle streams write 400 comments a second, not 667
/// (#26); still within the 30 s idle timeouts common in proxies.
pub const KEEP_ALIVE: Duration = Duration::from_secs(25);

/// The conversation and the hash of its token, from the path and `X-Conversation-Token`; any flaw is
/// the same 404 as a wrong token.
fn conversation(req: &Request, raw: &str) -> Result<(ConversationId, [u8; 32]), ApiError> {
    let id = ConversationId::parse(raw).map_err(|_| ApiError::ConversationNotFound)?;
    Ok((id, token_of(req)?))
}

impl From<VisitorError> for ApiError {
    fn from(e: VisitorError) -> Self {
        match e {
            VisitorError::NotFound => ApiError::ConversationNotFound,
            VisitorError::Unavailable(why) => ApiError::HandoffUnavailable { reason: why.as_str() },
            VisitorError::NoPerson => ApiError::HandoffInactive,
            VisitorError::TooMany { retry_after_secs } => ApiError::RateLimited { retry_after_secs },
            VisitorError::Store(s) => s.into(),
        }
    }
}

/// The body of a 202 to a hand-off request.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct HandoffBody {
    conversation_id: ConversationId,
    /// `waiting` or `held`.
    state: Holding,
    /// Until when a person is awaited (`waiting` only); past it the stream says `missed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    wait_until: Option<Timestamp>,
    /// Where the conversation's events stream.
    events: String,
}

fn accepted(body: &impl Serialize) -> poem::Result<Response> {
    let json = serde_json::to_string(body).map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(Response::builder().status(StatusCode::ACCEPTED).content_type("application/json").body(json))
}

#[handler]
pub async fn ask_person(req: &Request, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>, Data(tenant): Data<&Tenant>) -> poem::Result<Response> {
    let (id, hash) = conversation(req, &raw)?;
    let status: Status = handoff::request(state, &tenant.site, id, hash).await.map_err(ApiError::from)?;
    let events = format!("/v1/conversations/{}/events", status.id);
    accepted(&HandoffBody {
        state: status.holding,
        wait_until: status.deadline.filter(|_| status.holding == Holding::Waiting),
        conversation_id: status.id,
        events,
    })
}

/// The visitor cancels the wait, or ends the chat with the person: 202 `{"state": "closed"}`; 409
/// `handoff_inactive` when no person was involved.
#[handler]
pub async fn cancel(req: &Request, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>, Data(tenant): Data<&Tenant>) -> poem::Result<Response> {
    let (id, hash) = conversation(req, &raw)?;
    let event = handoff::visitor_cancel(state, tenant.site.id, id.clone(), hash).await.map_err(ApiError::from)?;
    accepted(&serde_json::json!({"conversationId": id, "state": "closed", "eventId": event.id.to_string()}))
}

#[derive(Debug, Deserialize)]
pub struct MessageRequest {
    pub text: String,
}

impl Validate for MessageRequest {
    fn validate(&self) -> Vec<FieldError> {
        let n = self.text.trim_matches(crate::http::json::is_ecma_whitespace).chars().count();
        if n == 0 || n > MAX_MESSAGE_CHARS {
            return vec![FieldError::new("text", format!("must be 1 to {MAX_MESSAGE_CHARS} characters (after trimming)"))];
        }
        Vec::new()
    }
}

#[handler]
pub async fn send_message(
    req: &Request,
    Path(raw): Path<String>,
    Data(state): Data<&Arc<AppState>>,
    Data(tenant): Data<&Tenant>,
    Json(body): Json<MessageRequest>,
) -> poem::Result<Response> {
    let (id, hash) = conversation(req, &raw)?;
    if state.free_space.low() {
        return Err(ApiError::StorageLow { retry_after_secs: super::leads::LOW_DISK_RETRY_SECS }.into());
    }
    let text = body.text.trim_matches(crate::http::json::is_ecma_whitespace).to_owned();
    let event = handoff::visitor_message(state, tenant.site.id, id, hash, text).await.map_err(ApiError::from)?;
    accepted(&serde_json::json!({"id": event.id.to_string(), "status": "accepted", "at": event.at}))
}

/// A `state` event's data.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct StateData<'a> {
    state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    display_name: Option<&'a str>,
    at: Timestamp,
}

/// A `message` event's data.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct MessageData<'a> {
    role: Author,
    #[serde(skip_serializing_if = "Option::is_none")]
    display_name: Option<&'a str>,
    text: &'a str,
    at: Timestamp,
}

/// One stored event as an SSE event: `state` or `message`, its id the stored id.
pub fn sse(e: &Event) -> SseEvent {
    let (kind, data) = match &e.kind {
        EventKind::State { state, name } => ("state", serde_json::to_string(&StateData { state: state.as_str(), display_name: name.as_deref(), at: e.at })),
        EventKind::Message { role, name, text } => {
            ("message", serde_json::to_string(&MessageData { role: *role, display_name: name.as_deref(), text, at: e.at }))
        }
    };
    SseEvent::message(data.unwrap_or_default()).event_type(kind).id(e.id.to_string())
}

/// Where a resumed stream starts: `Last-Event-ID`, else `?lastEventId=`, else the beginning.
fn resume_after(req: &Request) -> Result<i64, ApiError> {
    let header = req.headers().get("last-event-id").map(|v| v.to_str().unwrap_or("x").to_owned());
    let query = || req.uri().query().and_then(|q| url::form_urlencoded::parse(q.as_bytes()).find(|(k, _)| k == "lastEventId").map(|(_, v)| v.into_owned()));
    match header.or_else(query) {
        None => Ok(0),
        Some(v) if v.trim().is_empty() => Ok(0),
        Some(v) => v
            .trim()
            .parse::<i64>()
            .ok()
            .filter(|n| *n >= 0)
            .ok_or_else(|| ApiError::validation("Last-Event-ID", "must be the id of an event this stream sent (a whole number)")),
    }
}

/// What the stream carries between reads. It reads the store when its conversation's bell rings: after
/// every change this server makes, and after the server's watch saw one made elsewhere
/// (`handoff::run_watch`); it has no timer of its own, so an idle stream costs no work.
struct Reader {
    state: Arc<AppState>,
    site: crate::domain::SiteId,
    id: ConversationId,
    after: i64,
    queued: std::collections::VecDeque<Event>,
    bell: crate::live::Bell,
    _slot: StreamSlot,
}

impl Reader {
    /// The next event: queued, or read from the store, or waited for (a ring).
    async fn next(mut self) -> Option<(SseEvent, Reader)> {
        loop {
            if let Some(e) = self.queued.pop_front() {
                self.after = e.id;
                return Some((sse(&e), self));
            }
            self.bell.heard();
            let (site, id, after) = (self.site, self.id.clone(), self.after);
            match self.state.store.run(move |s| s.site(site).handoff().events_after(&id, after)).await {
                Ok(events) if !events.is_empty() => {
                    self.queued.extend(events);
                    continue;
                }
                Ok(_) => {}
                Err(e) => {
                    // The stream ends; the client resumes from its last id.
                    tracing::warn!(conversation = %self.id, error = %e, "cannot read a conversation's events");
                    return None;
                }
            }
            self.bell.rung().await;
        }
    }
}

#[handler]
pub async fn event_stream(req: &Request, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>, Data(tenant): Data<&Tenant>) -> poem::Result<Response> {
    let (id, hash) = conversation(req, &raw)?;
    let after = resume_after(req)?;
    let site = tenant.site.id;
    let cid = id.clone();
    state.store.run(move |s| s.site(site).handoff().check(&cid, &hash)).await.map_err(|e| ApiError::from(VisitorError::from(e)))?;
    let client = format!("{:?}", Client::of(client_ip(req)));
    let slot = state.live.open_stream(client, MAX_STREAMS_PER_CLIENT).ok_or(ApiError::RateLimited { retry_after_secs: 5 })?;
    let bell = state.live.bell(conversation_key(&id));
    let reader = Reader { state: state.clone(), site, id, after, queued: Default::default(), bell, _slot: slot };
    let stream = futures_util::stream::unfold(reader, Reader::next);
    Ok(crate::http::sse::response(stream, KEEP_ALIVE))
}
