//! Live hand-off: a conversation's way from the assistant to a person of the site's staff and back.
//!
//! A conversation is `none` (the assistant answers), `waiting` (for a person, until its deadline) or
//! `held` (by one staff member). Every change, and every message between visitor and staff, is a row of
//! `conversation_events` written in the transaction that makes the change, so what a stream told either
//! side is on disk before it was told. Event ids are never given again: a stream resumed after id `n`
//! reads exactly the events after `n`.
//!
//! The visitor's side is reached only with the conversation's token: its SHA-256 is looked up with the
//! id and the site, so a wrong token, an unknown id and another site's conversation are the same
//! `NotFound`. The staff side is bound to the site like every tenant repository; whether a user may act
//! on the site is the console's check, who holds the conversation is checked here, in the transaction.

use std::time::Duration;

use rusqlite::{Connection, Transaction, params};
use serde::Serialize;

use super::conversations::{self, Turn};
use super::outbox::{self, MessageId};
use super::{OptionalRow, Result, SiteStore, Store, StoreError};
use crate::domain::{ConversationId, EventType, SiteId, Timestamp, UserId};

/// The longest message a visitor or a staff member sends, in characters.
pub const MAX_MESSAGE_CHARS: usize = 2000;
/// A visitor's messages to a person per conversation in any minute.
pub const VISITOR_MESSAGES_PER_MINUTE: u32 = 20;
/// Events one read of a stream returns at most.
pub const EVENTS_PER_READ: usize = 200;

/// Where a conversation's hand-off is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Holding {
    /// The assistant answers.
    None,
    /// Waiting for a person.
    Waiting,
    /// A person holds it.
    Held,
}

impl Holding {
    fn parse(s: &str) -> Result<Holding> {
        match s {
            "none" => Ok(Holding::None),
            "waiting" => Ok(Holding::Waiting),
            "held" => Ok(Holding::Held),
            other => Err(StoreError::corrupt("conversations.handoff", other)),
        }
    }
}

/// What a `state` event says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StateChange {
    Waiting,
    Joined,
    HandedBack,
    Closed,
    Missed,
}

impl StateChange {
    pub fn as_str(self) -> &'static str {
        match self {
            StateChange::Waiting => "waiting",
            StateChange::Joined => "joined",
            StateChange::HandedBack => "handed_back",
            StateChange::Closed => "closed",
            StateChange::Missed => "missed",
        }
    }

    fn parse(s: &str) -> Result<StateChange> {
        [StateChange::Waiting, StateChange::Joined, StateChange::HandedBack, StateChange::Closed, StateChange::Missed]
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| StoreError::corrupt("conversation_events.state", s))
    }
}

/// Who wrote a message: the visitor (`user`) or a person of the staff.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Author {
    User,
    Staff,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventKind {
    /// A state change; `name` is the person's display name for `joined`.
    State { state: StateChange, name: Option<String> },
    /// A message; `name` is the person's display name for a staff message.
    Message { role: Author, name: Option<String>, text: String },
}

/// One event of a conversation's stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The stream's event id: increasing, never given again.
    pub id: i64,
    pub kind: EventKind,
    pub at: Timestamp,
}

/// A conversation as the hand-off sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub id: ConversationId,
    pub holding: Holding,
    pub holder: Option<UserId>,
    pub requested_at: Option<Timestamp>,
    pub deadline: Option<Timestamp>,
}

fn status(c: &Connection, site: &SiteId, id: &ConversationId) -> Result<Option<Status>> {
    let row = c
        .prepare_cached("SELECT handoff, holder, handoff_requested_at, handoff_deadline FROM conversations WHERE id = ?1 AND site_id = ?2")?
        .query_row(params![id, site], |r| Ok((r.get::<_, String>(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .optional_row()?;
    row.map(|(h, holder, requested_at, deadline)| Ok(Status { id: id.clone(), holding: Holding::parse(&h)?, holder, requested_at, deadline })).transpose()
}

/// The status of the site's conversation `id` whose token hashes to `token_hash`; `NotFound` otherwise.
fn by_token(c: &Connection, site: &SiteId, id: &ConversationId, token_hash: &[u8; 32]) -> Result<Status> {
    let known = c
        .prepare_cached("SELECT 1 FROM conversations WHERE id = ?1 AND site_id = ?2 AND token_hash = ?3")?
        .query_row(params![id, site, &token_hash[..]], |_| Ok(()))
        .optional_row()?;
    known.ok_or(StoreError::NotFound)?;
    status(c, site, id)?.ok_or(StoreError::NotFound)
}

fn push(tx: &Transaction<'_>, site: &SiteId, id: &ConversationId, kind: &EventKind, user: Option<&UserId>, at: Timestamp) -> Result<Event> {
    let (k, state, role, name, text) = match kind {
        EventKind::State { state, name } => ("state", Some(state.as_str()), None, name.as_deref(), None),
        EventKind::Message { role, name, text } => {
            ("message", None, Some(if *role == Author::User { "user" } else { "staff" }), name.as_deref(), Some(text.as_str()))
        }
    };
    tx.prepare_cached(
        "INSERT INTO conversation_events (site_id, conversation_id, kind, state, role, user_id, author, text, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![site, id, k, state, role, user, name, text, at])?;
    tx.prepare_cached("UPDATE conversations SET updated_at = ?2 WHERE id = ?1")?.execute(params![id, at])?;
    Ok(Event { id: tx.last_insert_rowid(), kind: kind.clone(), at })
}

/// A `conversation_events` row as read: id, kind, state, role, author, text, at.
type EventRow = (i64, String, Option<String>, Option<String>, Option<String>, Option<String>, Timestamp);

fn event_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<EventRow> {
    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?))
}

fn event_of((id, kind, state, role, name, text, at): EventRow) -> Result<Event> {
    let kind = match kind.as_str() {
        "state" => EventKind::State { state: StateChange::parse(state.as_deref().unwrap_or(""))?, name },
        "message" => EventKind::Message {
            role: match role.as_deref() {
                Some("user") => Author::User,
                Some("staff") => Author::Staff,
                other => return Err(StoreError::corrupt("conversation_events.role", other.unwrap_or(""))),
            },
            name,
            text: text.unwrap_or_default(),
        },
        other => return Err(StoreError::corrupt("conversation_events.kind", other)),
    };
    Ok(Event { id, kind, at })
}

/// The name visitors see for a user: the display name, else the site's name (never the e-mail address).
fn display_name(tx: &Connection, site: &SiteId, user: &UserId) -> Result<String> {
    let name: Option<Option<String>> = tx.query_row("SELECT display_name FROM console_users WHERE id = ?1", [user], |r| r.get(0)).optional_row()?;
    match name.flatten().filter(|n| !n.trim().is_empty()) {
        Some(n) => Ok(n),
        None => Ok(tx.query_row("SELECT name FROM sites WHERE id = ?1", [site], |r| r.get(0))?),
    }
}

/// `conversation.handoff_requested`'s data.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct RequestedEvent<'a> {
    site_id: &'a SiteId,
    conversation_id: &'a ConversationId,
    requested_at: Timestamp,
    wait_until: Timestamp,
    transcript: Vec<Turn>,
}

/// What a hand-off request did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requested {
    /// Now waiting: its `waiting` event, and the `conversation.handoff_requested` event when the site wants one.
    Waiting { status: Status, event: Event, message: Option<MessageId> },
    /// A person was already awaited or holds it: nothing changed.
    Already(Status),
}

/// What a visitor's message did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Posted {
    Sent(Event),
    /// No person holds or is awaited: ask the assistant.
    NoPerson,
    /// [`VISITOR_MESSAGES_PER_MINUTE`] were sent in the last minute; retry in this many seconds.
    TooMany {
        retry_after_secs: u64,
    },
}

/// What a staff member's action did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acted {
    Done {
        event: Event,
        status: Status,
        first_reply_after: Option<Duration>,
        waited: Option<Duration>,
    },
    /// Someone else holds it (their display name): take it over explicitly.
    HeldByOther(String),
    /// The action needs the user to hold the conversation.
    NotHolder,
    /// Nobody asked for a person: there is nothing to take, hand back or close.
    NotActive,
}

/// A conversation in the staff's inbox, with its transcript so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboxItem {
    pub status: Status,
    pub holder_name: Option<String>,
    pub transcript: Vec<Turn>,
}

/// A conversation of the inbox as its live stream tells of it: no transcript, only the id of its last
/// event, which changes with every message and state.
#[derive(Debug, Clone)]
pub struct InboxLine {
    pub status: Status,
    pub holder_name: Option<String>,
    pub last_event: Option<i64>,
}

/// Conversations one inbox event names at most: each costs a few index lookups, whatever its history.
pub const INBOX_EVENT_LINES: usize = 200;

/// One site's hand-offs.
pub struct Handoffs<'s> {
    site: SiteStore<'s>,
}

impl<'s> Handoffs<'s> {
    pub(super) fn new(site: SiteStore<'s>) -> Self {
        Self { site }
    }

    /// The conversation a visitor names with its token; `NotFound` for a wrong token or another site's id.
    pub fn check(&self, id: &ConversationId, token_hash: &[u8; 32]) -> Result<Status> {
        let site = self.site.id();
        self.site.store().read(|c| by_token(c, &site, id, token_hash))
    }

    /// The conversation's status, by id alone (the question routes and the staff).
    pub fn status(&self, id: &ConversationId) -> Result<Option<Status>> {
        let site = self.site.id();
        self.site.store().read(|c| status(c, &site, id))
    }

    /// Asks for a person: `waiting` until `now + wait`, its event and `conversation.handoff_requested`, in
    /// one transaction. Whether a person can come is the caller's decision, made just before.
    pub fn request(&self, id: &ConversationId, token_hash: &[u8; 32], wait: Duration, now: Timestamp) -> Result<Requested> {
        let site = self.site.id();
        self.site.write(|tx| {
            let before = by_token(tx, &site, id, token_hash)?;
            if before.holding != Holding::None {
                return Ok(Requested::Already(before));
            }
            let deadline = now + wait;
            tx.execute(
                "UPDATE conversations SET handoff = 'waiting', handoff_requested_at = ?2, handoff_deadline = ?3, handoff_replied = 0, holder = NULL WHERE id = ?1",
                params![id, now, deadline],
            )?;
            let event = push(tx, &site, id, &EventKind::State { state: StateChange::Waiting, name: None }, None, now)?;
            let transcript = conversations::transcript_turns(tx, &site, id)?;
            let data = RequestedEvent { site_id: &site, conversation_id: id, requested_at: now, wait_until: deadline, transcript };
            let message = outbox::enqueue(tx, &site, EventType::HandoffRequested, &data, now)?;
            let status = status(tx, &site, id)?.ok_or(StoreError::NotFound)?;
            Ok(Requested::Waiting { status, event, message })
        })
    }

    /// A visitor's message to the person who holds the conversation or is awaited.
    pub fn visitor_message(&self, id: &ConversationId, token_hash: &[u8; 32], text: &str, now: Timestamp) -> Result<Posted> {
        let site = self.site.id();
        self.site.write(|tx| {
            let s = by_token(tx, &site, id, token_hash)?;
            if s.holding == Holding::None {
                return Ok(Posted::NoPerson);
            }
            let minute_ago = now - Duration::from_secs(60);
            let (sent, oldest): (i64, Option<Timestamp>) = tx
                .prepare_cached(
                    "SELECT count(*), min(at) FROM conversation_events WHERE conversation_id = ?1 AND kind = 'message' AND role = 'user' AND at > ?2",
                )?
                .query_row(params![id, minute_ago], |r| Ok((r.get(0)?, r.get(1)?)))?;
            if sent >= i64::from(VISITOR_MESSAGES_PER_MINUTE) {
                let free_at = oldest.map_or(now, |o| o + Duration::from_secs(60));
                let secs = ((free_at.as_millis() - now.as_millis()).max(0) + 999) / 1000;
                let secs = secs.max(1) as u64;
                return Ok(Posted::TooMany { retry_after_secs: secs });
            }
            let text: String = text.chars().take(MAX_MESSAGE_CHARS).collect();
            Ok(Posted::Sent(push(tx, &site, id, &EventKind::Message { role: Author::User, name: None, text }, None, now)?))
        })
    }

    /// The visitor no longer wants a person (while waiting, or ends the chat with the one who holds it):
    /// back to the assistant with a `closed` event. `None` when no person was involved.
    pub fn visitor_cancel(&self, id: &ConversationId, token_hash: &[u8; 32], now: Timestamp) -> Result<Option<Event>> {
        let site = self.site.id();
        self.site.store().write(|tx| {
            let s = by_token(tx, &site, id, token_hash)?;
            if s.holding == Holding::None {
                return Ok(None);
            }
            tx.execute("UPDATE conversations SET handoff = 'none', holder = NULL, handoff_deadline = NULL WHERE id = ?1", [id])?;
            Ok(Some(push(tx, &site, id, &EventKind::State { state: StateChange::Closed, name: None }, None, now)?))
        })
    }

    /// The conversation's events after `after`, at most [`EVENTS_PER_READ`], oldest first. The caller
    /// checked the token first ([`check`](Self::check)).
    pub fn events_after(&self, id: &ConversationId, after: i64) -> Result<Vec<Event>> {
        let site = self.site.id();
        self.site.store().read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT id, kind, state, role, author, text, at FROM conversation_events WHERE site_id = ?1 AND conversation_id = ?2 AND id > ?3 ORDER BY id LIMIT ?4",
            )?;
            let rows = stmt.query_map(params![site, id, after, EVENTS_PER_READ as i64], event_row)?.collect::<rusqlite::Result<Vec<_>>>()?;
            rows.into_iter().map(event_of).collect()
        })
    }

    /// A staff member takes the conversation: a waiting one, or, with `over`, one someone else holds.
    pub fn take(&self, id: &ConversationId, user: &UserId, over: bool, now: Timestamp) -> Result<Acted> {
        let site = self.site.id();
        self.site.write(|tx| {
            let s = status(tx, &site, id)?.ok_or(StoreError::NotFound)?;
            match (s.holding, &s.holder) {
                (Holding::None, _) => return Ok(Acted::NotActive),
                (Holding::Held, Some(h)) if h == user => return already(tx, &site, &s),
                (Holding::Held, Some(h)) if !over => return Ok(Acted::HeldByOther(display_name(tx, &site, h)?)),
                _ => {}
            }
            let waited = (s.holding == Holding::Waiting).then(|| s.requested_at.map(|r| elapsed(r, now))).flatten();
            tx.execute("UPDATE conversations SET handoff = 'held', holder = ?2, handoff_deadline = NULL WHERE id = ?1", params![id, user])?;
            let name = display_name(tx, &site, user)?;
            let event = push(tx, &site, id, &EventKind::State { state: StateChange::Joined, name: Some(name) }, Some(user), now)?;
            let status = status(tx, &site, id)?.ok_or(StoreError::NotFound)?;
            Ok(Acted::Done { event, status, first_reply_after: None, waited })
        })
    }

    /// The holder writes to the visitor.
    pub fn reply(&self, id: &ConversationId, user: &UserId, text: &str, now: Timestamp) -> Result<Acted> {
        let site = self.site.id();
        self.site.write(|tx| {
            let s = status(tx, &site, id)?.ok_or(StoreError::NotFound)?;
            if let Some(refused) = holder_only(tx, &site, &s, user)? {
                return Ok(refused);
            }
            let replied: bool = tx.query_row("SELECT handoff_replied FROM conversations WHERE id = ?1", [id], |r| r.get(0))?;
            let first_reply_after = (!replied).then(|| s.requested_at.map(|r| elapsed(r, now))).flatten();
            tx.execute("UPDATE conversations SET handoff_replied = 1 WHERE id = ?1", [id])?;
            let name = display_name(tx, &site, user)?;
            let text: String = text.chars().take(MAX_MESSAGE_CHARS).collect();
            let event = push(tx, &site, id, &EventKind::Message { role: Author::Staff, name: Some(name), text }, Some(user), now)?;
            Ok(Acted::Done { event, status: s, first_reply_after, waited: None })
        })
    }

    /// The holder gives the conversation back to the assistant (`handed_back`), or ends the person's part
    /// of it (`closed`); a waiting conversation may be closed by anyone who could take it.
    pub fn release(&self, id: &ConversationId, user: &UserId, change: StateChange, now: Timestamp) -> Result<Acted> {
        let site = self.site.id();
        self.site.write(|tx| {
            let s = status(tx, &site, id)?.ok_or(StoreError::NotFound)?;
            let waiting_close = change == StateChange::Closed && s.holding == Holding::Waiting;
            if !waiting_close && let Some(refused) = holder_only(tx, &site, &s, user)? {
                return Ok(refused);
            }
            tx.execute("UPDATE conversations SET handoff = 'none', holder = NULL, handoff_deadline = NULL WHERE id = ?1", [id])?;
            let event = push(tx, &site, id, &EventKind::State { state: change, name: None }, Some(user), now)?;
            let status = status(tx, &site, id)?.ok_or(StoreError::NotFound)?;
            Ok(Acted::Done { event, status, first_reply_after: None, waited: None })
        })
    }

    /// The inbox as its live stream carries it: the first [`INBOX_EVENT_LINES`] conversations in
    /// [`inbox`](Self::inbox)'s order, each with the id of its last event and no transcript, so the cost
    /// of one event is bounded whatever the conversations' histories.
    pub fn inbox_lines(&self) -> Result<Vec<InboxLine>> {
        let site = self.site.id();
        self.site.store().read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT id, (SELECT max(e.id) FROM conversation_events e WHERE e.conversation_id = c.id) FROM conversations c
                 WHERE site_id = ?1 AND handoff <> 'none' ORDER BY handoff = 'held', handoff_requested_at, id LIMIT ?2",
            )?;
            let rows = stmt
                .query_map(params![site, INBOX_EVENT_LINES as i64], |r| Ok((r.get::<_, ConversationId>(0)?, r.get::<_, Option<i64>>(1)?)))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            let mut out = Vec::with_capacity(rows.len());
            for (id, last_event) in rows {
                let Some(status) = status(c, &site, &id)? else { continue };
                let holder_name = status.holder.as_ref().map(|h| display_name(c, &site, h)).transpose()?;
                out.push(InboxLine { status, holder_name, last_event });
            }
            Ok(out)
        })
    }

    /// The conversations waiting for a person (oldest request first), then those a person holds, each
    /// with its transcript so far.
    pub fn inbox(&self) -> Result<Vec<InboxItem>> {
        let site = self.site.id();
        self.site.store().read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT id FROM conversations WHERE site_id = ?1 AND handoff <> 'none' ORDER BY handoff = 'held', handoff_requested_at, id LIMIT 500",
            )?;
            let ids = stmt.query_map([site], |r| r.get::<_, ConversationId>(0))?.collect::<rusqlite::Result<Vec<_>>>()?;
            let mut out = Vec::with_capacity(ids.len());
            for id in ids {
                let Some(status) = status(c, &site, &id)? else { continue };
                let holder_name = status.holder.as_ref().map(|h| display_name(c, &site, h)).transpose()?;
                out.push(InboxItem { transcript: conversations::transcript_turns(c, &site, &id)?, status, holder_name });
            }
            Ok(out)
        })
    }
}

/// The answer to a holder taking what they already hold: done, nothing new written.
fn already(tx: &Transaction<'_>, site: &SiteId, s: &Status) -> Result<Acted> {
    let last = tx.query_row(
        "SELECT id, kind, state, role, author, text, at FROM conversation_events WHERE site_id = ?1 AND conversation_id = ?2 AND kind = 'state' ORDER BY id DESC LIMIT 1",
        params![site, s.id],
        event_row,
    )?;
    Ok(Acted::Done { event: event_of(last)?, status: s.clone(), first_reply_after: None, waited: None })
}

/// `None` when `user` holds the conversation; otherwise why the action is refused.
fn holder_only(tx: &Transaction<'_>, site: &SiteId, s: &Status, user: &UserId) -> Result<Option<Acted>> {
    Ok(match (s.holding, &s.holder) {
        (Holding::Held, Some(h)) if h == user => None,
        (Holding::Held, Some(h)) => Some(Acted::HeldByOther(display_name(tx, site, h)?)),
        (Holding::Waiting, _) | (Holding::Held, None) => Some(Acted::NotHolder),
        (Holding::None, _) => Some(Acted::NotActive),
    })
}

fn elapsed(from: Timestamp, to: Timestamp) -> Duration {
    Duration::from_millis((to.as_millis() - from.as_millis()).max(0) as u64)
}

/// A conversation whose wait ran out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missed {
    pub site_id: SiteId,
    pub conversation_id: ConversationId,
    pub event: Event,
}

/// Waits that ran out, across sites: the server's expiry task only (like the outbox's claim).
pub struct Expiry<'s> {
    store: &'s Store,
}

impl<'s> Expiry<'s> {
    pub(super) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Every conversation still waiting at its deadline goes back to the assistant with a `missed`
    /// event, in one transaction; at most 500 a call.
    pub fn expire_due(&self, now: Timestamp) -> Result<Vec<Missed>> {
        self.store.write(|tx| {
            let due: Vec<(ConversationId, SiteId)> = tx
                .prepare_cached(
                    "SELECT id, site_id FROM conversations WHERE handoff = 'waiting' AND handoff_deadline <= ?1 ORDER BY handoff_deadline LIMIT 500",
                )?
                .query_map([now], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?;
            let mut out = Vec::with_capacity(due.len());
            for (id, site) in due {
                tx.execute("UPDATE conversations SET handoff = 'none', holder = NULL, handoff_deadline = NULL WHERE id = ?1", [&id])?;
                let event = push(tx, &site, &id, &EventKind::State { state: StateChange::Missed, name: None }, None, now)?;
                out.push(Missed { site_id: site, conversation_id: id, event });
            }
            Ok(out)
        })
    }

    /// When the next wait runs out, if any conversation is waiting.
    pub fn next_deadline(&self) -> Result<Option<Timestamp>> {
        self.store.read(|c| Ok(c.query_row("SELECT min(handoff_deadline) FROM conversations WHERE handoff = 'waiting'", [], |r| r.get(0))?))
    }
}

/// New events, across sites: the server's watch (`handoff::run_watch`), which rings the bells of the
/// conversations they belong to, so a change no bell of the server announced (one made by another
/// process) still reaches the streams open on it. Event ids are given in commit order (one writer), so
/// "after the last id read" misses nothing.
pub struct Watch<'s> {
    store: &'s Store,
}

/// What one watch read found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    /// The last event id read (the `after` given when there was none): the next read starts there.
    pub last_id: i64,
    /// The conversations with new events, each once with its site, in the order of their first one.
    pub conversations: Vec<(SiteId, ConversationId)>,
    /// The read was a full batch: read again from `last_id` at once.
    pub more: bool,
}

/// Events one watch read covers at most.
const WATCH_BATCH: i64 = 1000;

impl<'s> Watch<'s> {
    pub(super) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// The newest event's id (0 when there is none): where a watch starts.
    pub fn last_id(&self) -> Result<i64> {
        self.store.read(|c| Ok(c.query_row("SELECT coalesce(max(id), 0) FROM conversation_events", [], |r| r.get(0))?))
    }

    /// The conversations with events after `after`, at most [`WATCH_BATCH`] events a call.
    pub fn changed_after(&self, after: i64) -> Result<Changed> {
        self.store.read(|c| {
            let mut stmt = c.prepare_cached("SELECT id, site_id, conversation_id FROM conversation_events WHERE id > ?1 ORDER BY id LIMIT ?2")?;
            let rows = stmt
                .query_map(params![after, WATCH_BATCH], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, SiteId>(1)?, r.get::<_, ConversationId>(2)?)))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            let more = rows.len() as i64 == WATCH_BATCH;
            let last_id = rows.last().map_or(after, |r| r.0);
            let mut seen = std::collections::HashSet::new();
            let conversations = rows.into_iter().filter(|(_, _, id)| seen.insert(id.clone())).map(|(_, site, id)| (site, id)).collect();
            Ok(Changed { last_id, conversations, more })
        })
    }
}
