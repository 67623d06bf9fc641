//! The staff's side of live hand-off (`crate::handoff`) in the console.
//!
//! - `GET /console/sites/{site}/inbox/events`: Server-Sent Events of the site's inbox (an `inbox` event
//!   at once and after every change: the conversations waiting, oldest first, and those held). While an
//!   owner's or editor's stream is open they are **online** for the site, so visitors can ask for a
//!   person; a viewer's stream shows the inbox without making anyone online (viewers cannot reply).
//! - `POST /console/sites/{site}/inbox/{conversation}/take` (`over=1` to take one someone else holds),
//!   `.../reply` (`text`), `.../hand-back`, `.../close`: form posts with the session's CSRF token, like
//! - `GET /console/sites/{site}/inbox`: the page (server-rendered; `inbox.js` keeps the stream open,
//!   tells of a new waiting visitor and shows the page again when it changes).
//!   every console change; they answer `303` to the inbox, or a page saying why not
//!   (`409` when someone else holds it or it is not waiting, `403` for viewers).

use std::sync::Arc;
use std::time::Duration;

use poem::http::StatusCode;
use poem::web::sse::Event as SseEvent;
use poem::web::{Data, Path};
use poem::{Body, Request, Response, handler};
use serde_json::json;

use super::pages;
use super::texts;
use super::views::{self, checked_post, field, message, role_refused, see_other, site_for};
use crate::app::AppState;
use crate::domain::{ConversationId, SiteId};
use crate::handoff::{self, StaffAction};
use crate::live::inbox_key;
use crate::store::handoff::{Acted, InboxItem, InboxLine, MAX_MESSAGE_CHARS};

/// Live inbox streams one session holds open at once (tabs, across its sites); beyond, a 429 page.
pub const MAX_STREAMS_PER_SESSION: usize = 4;

/// The inbox as the `inbox` event carries it: no transcript (the page reads it), only each
/// conversation's last event id, so an event costs the same whatever the histories' length.
fn summary(items: &[InboxLine], online: usize) -> serde_json::Value {
    let rows: Vec<serde_json::Value> = items
        .iter()
        .map(|i| {
            json!({"conversationId": i.status.id, "state": i.status.holding, "requestedAt": i.status.requested_at,
                   "waitUntil": i.status.deadline, "holder": i.holder_name, "lastEvent": i.last_event})
        })
        .collect();
    json!({"online": online, "conversations": rows})
}

struct Watcher {
    state: Arc<AppState>,
    site: SiteId,
    /// The session behind the stream, checked at every event (at least every 30 s): signed out, expired,
    /// removed or no longer on the site (or no longer an editor, for a present one) ends the stream and
    /// with it the presence. While the stream is open it keeps the session's idle clock going.
    session: [u8; 32],
    bell: crate::live::Bell,
    first: bool,
    present: Option<crate::live::Present>,
    /// The session's share of [`MAX_STREAMS_PER_SESSION`], given back when the stream ends.
    _slot: crate::live::StreamSlot,
}

impl Watcher {
    async fn next(mut self) -> Option<(SseEvent, Watcher)> {
        if !self.first {
            tokio::select! {
                _ = self.bell.rung() => {}
                _ = tokio::time::sleep(Duration::from_secs(30)) => {}
            }
        }
        self.first = false;
        self.bell.heard();
        let (site, hash, editing) = (self.site, self.session, self.present.is_some());
        let read = self
            .state
            .store
            .run(move |s| {
                let Some(session) = s.users().session(&hash)? else { return Ok(None) };
                let now = crate::domain::Timestamp::now();
                if super::session::lapsed(&session, now) {
                    return Ok(None);
                }
                // The open inbox is the staff's activity: it keeps the session from idling out.
                if super::session::touch_due(&session, now) {
                    s.users().touch_session(&hash, now)?;
                }
                let role = if session.user.is_admin {
                    Some(crate::domain::SiteRole::Owner)
                } else {
                    s.users().grants(&session.user.id)?.into_iter().find(|g| g.site_id == site).map(|g| g.role)
                };
                if !role.is_some_and(|r| !editing || r.may_edit()) {
                    return Ok(None);
                }
                Ok(Some(s.site(site).handoff().inbox_lines()?))
            })
            .await;
        let items = match read {
            Ok(Some(i)) => i,
            Ok(None) => {
                // Signed out, lapsed or no longer staff here: no longer online, without the grace.
                if let Some(present) = self.present.take() {
                    present.leave();
                }
                return None;
            }
            Err(e) => {
                tracing::warn!(site = %site, error = %e, "cannot read the hand-off inbox");
                return None;
            }
        };
        let data = summary(&items, self.state.live.online_count(&site));
        Some((SseEvent::message(data.to_string()).event_type("inbox"), self))
    }
}

#[handler]
pub async fn inbox_events(req: &Request, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let (me, site, role) = match site_for(state, req, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let Some(slot) = state.live.open_stream(format!("console:{}", hex::encode(me.cookie_hash())), MAX_STREAMS_PER_SESSION) else {
        let t = texts::for_request(req);
        return message(t, Some(&me), StatusCode::TOO_MANY_REQUESTS, t.streams_title, t.too_many_streams);
    };
    // Present while the stream is open, and for `live::PRESENCE_GRACE` after the tab closes or the
    // connection drops (the inbox reloads itself on every change).
    let present = role.may_edit().then(|| state.live.present(site.id, me.user.id.clone()));
    state.live.ring(&inbox_key(&site.id));
    let watcher = Watcher {
        state: state.clone(),
        site: site.id,
        session: *me.cookie_hash(),
        bell: state.live.bell(inbox_key(&site.id)),
        first: true,
        present,
        _slot: slot,
    };
    let mut resp = crate::http::sse::response(futures_util::stream::unfold(watcher, Watcher::next), Duration::from_secs(15));
    super::session::secure(&mut resp, false);
    resp
}

fn card(t: &texts::Texts, item: InboxItem, me: &crate::domain::UserId) -> pages::InboxCard {
    use crate::store::conversations::Role;
    let when = |at: crate::domain::Timestamp| at.rfc3339().replace('T', " ").trim_end_matches('Z').to_owned() + " UTC";
    pages::InboxCard {
        id: item.status.id.to_string(),
        requested: item.status.requested_at.map(when).unwrap_or_default(),
        wait_until: item.status.deadline.map(when).unwrap_or_default(),
        holder: item.holder_name.unwrap_or_default(),
        mine: item.status.holder.as_ref() == Some(me),
        turns: item
            .transcript
            .into_iter()
            .map(|turn| pages::InboxTurn {
                who: match turn.role {
                    Role::User => t.visitor.to_owned(),
                    Role::Assistant => t.assistant.to_owned(),
                    Role::Staff => turn.author.clone().unwrap_or_default(),
                },
                staff: turn.role == Role::Staff,
                text: turn.text,
                at: when(turn.at),
            })
            .collect(),
    }
}

/// The inbox page: the conversations waiting (oldest first) and those with a person, with their
/// transcripts and what the user may do.
#[handler]
pub async fn inbox_page(req: &Request, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, site, role) = match site_for(state, req, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let id = site.id;
    let items = match state.store.run(move |s| s.site(id).handoff().inbox()).await {
        Ok(i) => i,
        Err(e) => return views::failed(t, Some(&me), e),
    };
    let (mut waiting, mut active) = (Vec::new(), Vec::new());
    for item in items {
        let held = item.status.holding == crate::store::handoff::Holding::Held;
        let c = card(t, item, &me.user.id);
        if held { active.push(c) } else { waiting.push(c) }
    }
    let online = state.live.online_count(&site.id);
    views::render(
        StatusCode::OK,
        pages::Inbox {
            t,
            me: Some(views::header_of(&me)),
            nav: views::site_nav(site, role, "inbox"),
            csrf: &me.csrf,
            act: role.may_edit(),
            online,
            waiting,
            active,
        },
    )
}

async fn act(
    req: &Request,
    body: Body,
    state: &Arc<AppState>,
    raw: &str,
    conversation: &str,
    action: impl FnOnce(&[(String, String)]) -> Option<StaffAction>,
) -> Response {
    let t = texts::for_request(req);
    let (me, fields) = match checked_post(state, req, body).await {
        Ok(ok) => ok,
        Err(page) => return page,
    };
    let (_, site, role) = match site_for(state, req, raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    if !role.may_edit() {
        return role_refused(t, &me);
    }
    let Ok(id) = ConversationId::parse(conversation) else { return views::not_found(t, Some(&me)) };
    let Some(action) = action(&fields) else {
        return message(t, Some(&me), StatusCode::UNPROCESSABLE_ENTITY, t.error_title, t.handoff_empty_reply);
    };
    let name = action.name();
    match handoff::staff(state, site.id, me.user.id.clone(), id.clone(), action).await {
        Ok(Acted::Done { .. }) => {
            views::audit(state, &me.email, Some(site.id), "handoff", json!({"conversation": id, "action": name})).await;
            see_other(&format!("/console/sites/{}/inbox#{id}", site.id))
        }
        Ok(Acted::HeldByOther(holder)) => {
            message(t, Some(&me), StatusCode::CONFLICT, t.handoff_conflict_title, &format!("{} {holder}", t.handoff_held_by_other))
        }
        Ok(Acted::NotHolder) => message(t, Some(&me), StatusCode::CONFLICT, t.handoff_conflict_title, t.handoff_not_holder),
        Ok(Acted::NotActive) => message(t, Some(&me), StatusCode::CONFLICT, t.handoff_conflict_title, t.handoff_not_active),
        Err(crate::store::StoreError::NotFound) => views::not_found(t, Some(&me)),
        Err(e) => views::failed(t, Some(&me), e),
    }
}

#[handler]
pub async fn take(req: &Request, body: Body, Path((raw, conversation)): Path<(String, String)>, Data(state): Data<&Arc<AppState>>) -> Response {
    act(req, body, state, &raw, &conversation, |f| Some(StaffAction::Take { over: field(f, "over") == "1" })).await
}

#[handler]
pub async fn reply(req: &Request, body: Body, Path((raw, conversation)): Path<(String, String)>, Data(state): Data<&Arc<AppState>>) -> Response {
    act(req, body, state, &raw, &conversation, |f| {
        let text = field(f, "text").trim();
        (!text.is_empty() && text.chars().count() <= MAX_MESSAGE_CHARS).then(|| StaffAction::Reply(text.to_owned()))
    })
    .await
}

#[handler]
pub async fn hand_back(req: &Request, body: Body, Path((raw, conversation)): Path<(String, String)>, Data(state): Data<&Arc<AppState>>) -> Response {
    act(req, body, state, &raw, &conversation, |_| Some(StaffAction::HandBack)).await
}

#[handler]
pub async fn close(req: &Request, body: Body, Path((raw, conversation)): Path<(String, String)>, Data(state): Data<&Arc<AppState>>) -> Response {
    act(req, body, state, &raw, &conversation, |_| Some(StaffAction::Close)).await
}
