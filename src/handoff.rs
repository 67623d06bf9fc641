//! Live hand-off from the assistant to a person of the site's staff: the one place its rules live, used
//! by the visitor's routes (`api::handoff`) and the console's inbox (`console::inbox`) alike.
//!
//! - **A person can come** when the site has hand-off on, is open now (its hours and closed dates, in its
//!   time zone) and at least one of its owners or editors has the console's inbox open
//!   ([`crate::live`]); otherwise the request is refused with the reason (`off`, `closed`,
//!   `nobody_online`) so the widget offers the contact form.
//! - **The store is the truth**: every state change and message is an event row written with the change
//!   (`store::handoff`); after the commit the conversation's and the site's bells ring, so open streams
//!   read it at once. A stream reads events by id, so a resumed one misses and repeats nothing.
//! - **Waits end**: [`run_expiry`] gives every conversation still waiting at its deadline a `missed`
//!   event (the widget then offers the contact form, with the conversation attached to the lead).

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::app::AppState;
use crate::domain::{ConversationId, SiteId, Timestamp, UserId};
use crate::live::{conversation_key, inbox_key};
use crate::metrics::Handoff as Step;
use crate::store::handoff::{Acted, Posted, Requested, StateChange, Status};
use crate::store::{Site, StoreError};

/// Why no person can come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unavailable {
    /// The site has hand-off off.
    Off,
    /// Outside the site's opening hours, or on a closed date.
    Closed,
    /// Nobody of the site's staff has the console's inbox open.
    NobodyOnline,
}

impl Unavailable {
    pub fn as_str(self) -> &'static str {
        match self {
            Unavailable::Off => "off",
            Unavailable::Closed => "closed",
            Unavailable::NobodyOnline => "nobody_online",
        }
    }
}

/// Why a visitor's hand-off request or message was not taken.
#[derive(Debug, thiserror::Error)]
pub enum VisitorError {
    /// A wrong or missing token, an unknown id or another site's conversation: all the same.
    #[error("conversation not found")]
    NotFound,
    #[error("no person can come: {}", .0.as_str())]
    Unavailable(Unavailable),
    /// A message while no person holds or is awaited.
    #[error("no person is in this conversation")]
    NoPerson,
    #[error("too many messages")]
    TooMany { retry_after_secs: u64 },
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for VisitorError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound => VisitorError::NotFound,
            other => VisitorError::Store(other),
        }
    }
}

/// Whether a person can come to `site` now.
pub fn availability(state: &AppState, site: &Site, now: Timestamp) -> Result<(), Unavailable> {
    if !site.handoff.enabled {
        return Err(Unavailable::Off);
    }
    if !site.handoff.hours.is_open(now) {
        return Err(Unavailable::Closed);
    }
    if !state.live.online(&site.id) {
        return Err(Unavailable::NobodyOnline);
    }
    Ok(())
}

fn rang(state: &AppState, site: &SiteId, id: &ConversationId) {
    state.live.ring(&conversation_key(id));
    state.live.ring(&inbox_key(site));
}

/// The visitor asks for a person. Already waiting or held: the status as it is (asking twice is
/// harmless). Otherwise, when a person can come: waiting, with its event and webhook.
pub async fn request(state: &Arc<AppState>, site: &Site, id: ConversationId, token_hash: [u8; 32]) -> Result<Status, VisitorError> {
    let site_id = site.id;
    let cid = id.clone();
    let before = state.store.run(move |s| s.site(site_id).handoff().check(&cid, &token_hash)).await?;
    if before.holding != crate::store::handoff::Holding::None {
        return Ok(before);
    }
    let now = Timestamp::now();
    if let Err(why) = availability(state, site, now) {
        state.metrics.handoff(Step::Unavailable(why.as_str()));
        return Err(VisitorError::Unavailable(why));
    }
    let wait = Duration::from_secs(u64::from(site.handoff.wait_secs));
    let cid = id.clone();
    let done = state.store.run(move |s| s.site(site_id).handoff().request(&cid, &token_hash, wait, now)).await?;
    match done {
        Requested::Waiting { status, message, .. } => {
            state.metrics.handoff(Step::Requested);
            if message.is_some() {
                state.outbox_wake.notify_one();
            }
            rang(state, &site_id, &id);
            // The expiry task sleeps until the earliest deadline it knows; this one may be earlier.
            state.live.ring(EXPIRY_KEY);
            tracing::info!(site = %site_id, conversation = %id, "hand-off requested");
            Ok(status)
        }
        Requested::Already(status) => Ok(status),
    }
}

/// The visitor's message to the person who holds the conversation or is awaited.
pub async fn visitor_message(
    state: &Arc<AppState>,
    site: SiteId,
    id: ConversationId,
    token_hash: [u8; 32],
    text: String,
) -> Result<crate::store::handoff::Event, VisitorError> {
    let cid = id.clone();
    let posted = state.store.run(move |s| s.site(site).handoff().visitor_message(&cid, &token_hash, &text, Timestamp::now())).await?;
    match posted {
        Posted::Sent(event) => {
            rang(state, &site, &id);
            Ok(event)
        }
        Posted::NoPerson => Err(VisitorError::NoPerson),
        Posted::TooMany { retry_after_secs } => Err(VisitorError::TooMany { retry_after_secs }),
    }
}

/// The visitor cancels a wait or ends the chat with the person: `closed`, back to the assistant.
pub async fn visitor_cancel(
    state: &Arc<AppState>,
    site: SiteId,
    id: ConversationId,
    token_hash: [u8; 32],
) -> Result<crate::store::handoff::Event, VisitorError> {
    let cid = id.clone();
    let done = state.store.run(move |s| s.site(site).handoff().visitor_cancel(&cid, &token_hash, Timestamp::now())).await?;
    let event = done.ok_or(VisitorError::NoPerson)?;
    rang(state, &site, &id);
    tracing::info!(site = %site, conversation = %id, "hand-off cancelled by the visitor");
    Ok(event)
}

/// What a staff member does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StaffAction {
    /// Take a waiting conversation; with `over`, one someone else holds.
    Take {
        over: bool,
    },
    Reply(String),
    HandBack,
    Close,
}

impl StaffAction {
    pub fn name(&self) -> &'static str {
        match self {
            StaffAction::Take { over: false } => "take",
            StaffAction::Take { over: true } => "take_over",
            StaffAction::Reply(_) => "reply",
            StaffAction::HandBack => "hand_back",
            StaffAction::Close => "close",
        }
    }
}

/// A staff member acts on one of the site's conversations. Whether the user may act on the site at all
/// (an owner or editor; viewers may not) is the caller's check; who holds the conversation is the
/// store's, in the transaction.
pub async fn staff(state: &Arc<AppState>, site: SiteId, user: UserId, id: ConversationId, action: StaffAction) -> Result<Acted, StoreError> {
    let (cid, who, act) = (id.clone(), user.clone(), action.clone());
    let acted = state
        .store
        .run(move |s| {
            let h = s.site(site).handoff();
            let now = Timestamp::now();
            match act {
                StaffAction::Take { over } => h.take(&cid, &who, over, now),
                StaffAction::Reply(text) => h.reply(&cid, &who, &text, now),
                StaffAction::HandBack => h.release(&cid, &who, StateChange::HandedBack, now),
                StaffAction::Close => h.release(&cid, &who, StateChange::Closed, now),
            }
        })
        .await?;
    if let Acted::Done { first_reply_after, waited, .. } = &acted {
        if let Some(w) = waited {
            state.metrics.handoff(Step::Taken);
            state.metrics.handoff_wait("taken", *w);
        }
        if let Some(w) = first_reply_after {
            state.metrics.handoff_wait("first_reply", *w);
        }
        rang(state, &site, &id);
        tracing::info!(site = %site, conversation = %id, user = %user, action = action.name(), "hand-off changed by staff");
    }
    Ok(acted)
}

/// The bell the expiry task waits on besides its deadline.
const EXPIRY_KEY: &str = "handoff:expiry";
/// The expiry task looks at least this often, whatever it was told (a CLI or another process may have
/// started waits it never heard of).
const EXPIRY_EVERY: Duration = Duration::from_secs(5);

/// Once: every wait past its deadline ends with `missed`. Returns how many ended.
pub async fn expire_once(state: &AppState) -> usize {
    match state.store.run(|s| s.handoff_expiry().expire_due(Timestamp::now())).await {
        Ok(missed) => {
            for m in &missed {
                state.metrics.handoff(Step::Missed);
                rang(state, &m.site_id, &m.conversation_id);
                tracing::info!(site = %m.site_id, conversation = %m.conversation_id, "hand-off missed: nobody joined within the wait");
            }
            missed.len()
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot expire hand-off waits");
            0
        }
    }
}

/// Ends waits at their deadlines until `stop`: sleeps until the earliest deadline (at most
/// [`EXPIRY_EVERY`]) or until a new request rings.
pub async fn run_expiry(state: Arc<AppState>, stop: CancellationToken) {
    let mut bell = state.live.bell(EXPIRY_KEY.to_owned());
    loop {
        bell.heard();
        // A read first: the writer is taken only when a wait has run out.
        let mut next = state.store.run(|s| s.handoff_expiry().next_deadline()).await.ok().flatten();
        if next.is_some_and(|t| t <= Timestamp::now()) {
            expire_once(&state).await;
            next = state.store.run(|s| s.handoff_expiry().next_deadline()).await.ok().flatten();
        }
        let sleep = next
            .map_or(EXPIRY_EVERY, |t| Duration::from_millis((t.as_millis() - Timestamp::now().as_millis()).clamp(0, EXPIRY_EVERY.as_millis() as i64) as u64));
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = bell.rung() => {}
            _ = tokio::time::sleep(sleep) => {}
        }
    }
}

/// How often the watch reads the store for events no bell of this server announced.
pub const WATCH_EVERY: Duration = Duration::from_secs(5);

/// Rings the bells of conversations with new events until `stop`, every [`WATCH_EVERY`]: one read for the
/// whole server, where each open stream once read the store every 30 s on its own (333 reads a second
/// with 10,000 streams open, #26). Events this server writes ring at once ([`rang`]); the watch is for
/// those it did not write (another process), and it rings again for its own, which costs a stream one
/// read that finds nothing new.
pub async fn run_watch(state: Arc<AppState>, stop: CancellationToken) {
    let mut after = loop {
        match state.store.run(|s| s.handoff_watch().last_id()).await {
            Ok(id) => break id,
            Err(e) => tracing::warn!(error = %e, "cannot read the last hand-off event"),
        }
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(WATCH_EVERY) => {}
        }
    };
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(WATCH_EVERY) => {}
        }
        loop {
            match state.store.run(move |s| s.handoff_watch().changed_after(after)).await {
                Ok(changed) => {
                    after = changed.last_id;
                    for (site, id) in &changed.conversations {
                        rang(&state, site, id);
                    }
                    if !changed.more {
                        break;
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read new hand-off events");
                    break;
                }
            }
        }
    }
}
