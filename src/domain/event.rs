//! The event types the webhook outbox carries.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use super::{Invalid, invalid};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum EventType {
    #[serde(rename = "lead.captured")]
    LeadCaptured,
    #[serde(rename = "query.completed")]
    QueryCompleted,
    /// A visitor asked for a person (live hand-off).
    #[serde(rename = "conversation.handoff_requested")]
    HandoffRequested,
    /// Sent by `webhooks test`; never stored, never subscribed to.
    #[serde(rename = "webhook.test")]
    WebhookTest,
}

impl EventType {
    /// The types a site can opt in to.
    pub const SUBSCRIBABLE: [EventType; 3] = [EventType::LeadCaptured, EventType::QueryCompleted, EventType::HandoffRequested];

    pub fn as_str(self) -> &'static str {
        match self {
            EventType::LeadCaptured => "lead.captured",
            EventType::QueryCompleted => "query.completed",
            EventType::HandoffRequested => "conversation.handoff_requested",
            EventType::WebhookTest => "webhook.test",
        }
    }

    /// A type a site can subscribe to (`webhook.test` is not one).
    pub fn subscribable(s: &str) -> Result<Self, Invalid> {
        let names = || Self::SUBSCRIBABLE.map(Self::as_str).join(", ");
        Self::SUBSCRIBABLE.into_iter().find(|e| e.as_str() == s.trim()).ok_or_else(|| invalid(format!("unknown event type `{}`; known: {}", s.trim(), names())))
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for EventType {
    type Err = Invalid;
    fn from_str(s: &str) -> Result<Self, Invalid> {
        [EventType::LeadCaptured, EventType::QueryCompleted, EventType::HandoffRequested, EventType::WebhookTest]
            .into_iter()
            .find(|e| e.as_str() == s)
            .ok_or_else(|| invalid(format!("unknown event type `{s}`")))
    }
}
