//! The webhook outbox table: events written in the same transaction as the change they announce.
//! Delivery (claiming with a lease, retrying, dead-lettering) lives in `crate::outbox`.

use rusqlite::{Transaction, params};
use serde::Serialize;

use super::{Result, now_rfc3339};
use crate::domain::SiteId;
use crate::store::Site;

/// The body every delivery of an event carries, byte for byte on each retry.
#[derive(Debug, Serialize)]
pub struct EventBody<'a, T: Serialize> {
    #[serde(rename = "type")]
    pub type_: &'a str,
    pub timestamp: String,
    pub data: T,
}

/// Puts an event in the outbox when the site has a webhook and opted in to this event type; returns the
/// message id (`msg_<ulid>`, the `webhook-id` of every attempt) or `None` when the site does not want it.
/// Call inside the transaction that makes the change the event reports.
pub fn enqueue<T: Serialize>(tx: &Transaction<'_>, site: &Site, event_type: &str, data: &T) -> Result<Option<String>> {
    if site.webhook_url.is_none() || !site.wants_event(event_type) {
        return Ok(None);
    }
    enqueue_unchecked(tx, &site.id, event_type, data).map(Some)
}

/// Enqueues regardless of the site's choices (the `webhooks test` command).
pub fn enqueue_unchecked<T: Serialize>(tx: &Transaction<'_>, site_id: &SiteId, event_type: &str, data: &T) -> Result<String> {
    let id = format!("msg_{}", ulid::Ulid::new());
    let body = EventBody { type_: event_type, timestamp: now_rfc3339(), data };
    let payload = serde_json::to_string(&body).map_err(|e| super::StoreError::Invalid(e.to_string()))?;
    tx.execute(
        "INSERT INTO outbox (id, site_id, event_type, payload, next_attempt_at, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![id, site_id, event_type, payload, chrono::Utc::now().timestamp_millis(), now_rfc3339()],
    )?;
    Ok(id)
}
