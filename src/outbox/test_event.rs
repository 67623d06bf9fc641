//! A `webhook.test` event sent now, outside the outbox: what `sitebot webhooks test` and the console's
//! "send a test event" button both do (#25 settings). It is signed with every secret that signs the
//! site's deliveries now and goes through the same [`Sender`] (URL policy, checked resolver, timeout, no
//! redirects) as a real event; it is never stored and never retried.

use super::deliver::{Sender, Sent};
use crate::domain::{EventType, SiteId, WebhookUrl};
use crate::store::outbox::{event_body, new_message_id};

/// One test event's id (its `webhook-id`) and the receiver's answer.
#[derive(Debug, Clone)]
pub struct Tested {
    pub id: String,
    pub sent: Sent,
}

/// Sends a `webhook.test` event for `site` to `url`, signed with `secrets`; `from` says who sent it
/// (in the event's message, for whoever reads the receiver's log).
pub async fn send(sender: &Sender, site: SiteId, url: &WebhookUrl, secrets: &[String], from: &str) -> Result<Tested, crate::store::StoreError> {
    let id = new_message_id();
    let data = serde_json::json!({"siteId": site, "message": format!("This is a test event sent by {from}.")});
    let payload = event_body(EventType::WebhookTest, &data)?;
    let sent = sender.send(url.as_str(), &id, &payload, secrets).await;
    Ok(Tested { id, sent })
}
