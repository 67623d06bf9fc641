//! `POST /v1/events`: widget analytics, 1 to 50 events a request. Events are counted per site, day and
//! type (cheap to read at millions of events) and kept raw for `retention.widget_events_days`. Below the
//! free-space watermark none is stored and the answer says so: `202 {"accepted": 0}`.

use std::sync::Arc;

use poem::http::StatusCode;
use poem::web::Data;
use poem::{Response, handler};
use serde::Deserialize;

use crate::app::AppState;
use crate::domain::{QueryId, Timestamp};
use crate::http::error::{ApiError, FieldError};
use crate::http::json::{Json, Validate};
use crate::http::scope::Tenant;
use crate::metrics::{Because, Unstored};
use crate::store::analytics::NewEvent;

/// The event types API.md names.
pub const EVENT_TYPES: [&str; 8] =
    ["widget_loaded", "widget_opened", "question_asked", "answer_shown", "source_clicked", "feedback_given", "lead_form_opened", "lead_submitted"];
pub const MAX_EVENTS: usize = 50;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventIn {
    #[serde(rename = "type")]
    pub event_type: String,
    pub session_id: String,
    #[serde(default)]
    pub at: Option<String>,
    #[serde(default)]
    pub query_id: Option<String>,
    #[serde(default)]
    pub url: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct EventsRequest {
    pub events: Vec<EventIn>,
}

impl Validate for EventsRequest {
    fn validate(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        if self.events.is_empty() || self.events.len() > MAX_EVENTS {
            errors.push(FieldError::new("events", format!("must hold 1 to {MAX_EVENTS} events")));
        }
        for (i, e) in self.events.iter().enumerate() {
            let field = |f: &str| format!("events[{i}].{f}");
            if !EVENT_TYPES.contains(&e.event_type.as_str()) {
                errors.push(FieldError::new(field("type"), format!("must be one of {}", EVENT_TYPES.join(", "))));
            }
            let sid_ok = (1..=64).contains(&e.session_id.len()) && e.session_id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
            if !sid_ok {
                errors.push(FieldError::new(field("sessionId"), "must be 1 to 64 letters, digits, - or _"));
            }
            if let Some(Err(why)) = e.at.as_deref().map(Timestamp::parse_date_time) {
                errors.push(FieldError::new(field("at"), why.0));
            }
            if let Some(Err(why)) = e.query_id.as_deref().map(QueryId::parse) {
                errors.push(FieldError::new(field("queryId"), why.0));
            }
            let url_ok = |u: &str| u.len() <= 2048 && url::Url::parse(u).is_ok_and(|u| matches!(u.scheme(), "http" | "https"));
            if e.url.as_deref().is_some_and(|u| !url_ok(u)) {
                errors.push(FieldError::new(field("url"), "must be an http(s) URL of at most 2048 characters"));
            }
        }
        errors
    }
}

#[handler]
pub async fn create(Data(state): Data<&Arc<AppState>>, Data(tenant): Data<&Tenant>, Json(body): Json<EventsRequest>) -> poem::Result<Response> {
    if state.free_space.low() {
        for _ in &body.events {
            state.metrics.not_stored(Unstored::Event, Because::LowDisk);
        }
        return Ok(accepted(0));
    }
    let now = Timestamp::now();
    // A visitor's clock may be wrong: a time more than a day off the server's is the server's time.
    let day = std::time::Duration::from_secs(86_400);
    let events: Vec<NewEvent> = body
        .events
        .into_iter()
        .map(|e| NewEvent {
            event_type: e.event_type,
            session_id: e.session_id,
            at: e.at.and_then(|a| Timestamp::parse_date_time(&a).ok()).filter(|t| *t > now - day && *t < now + day).unwrap_or(now),
            query_id: e.query_id.as_deref().and_then(|q| QueryId::parse(q).ok()),
            url: e.url,
        })
        .collect();
    let site = tenant.site.id;
    let n = state.store.run(move |s| s.site(site).analytics().record(&events)).await.map_err(ApiError::from)?;
    Ok(accepted(n))
}

fn accepted(n: usize) -> Response {
    Response::builder().status(StatusCode::ACCEPTED).content_type("application/json").body(format!(r#"{{"accepted":{n}}}"#))
}
