//! What one server process knows only in memory, for live hand-off (`handoff`): who of each site's staff
//! has the console's inbox open (presence), whom to wake when a conversation or a site's inbox changes
//! (bells), and how many event streams each client holds open (a cap).
//!
//! - **Presence**: a staff member is online for a site while a presence guard of theirs lives (the
//!   console's inbox stream holds one while it is open, so a closed tab or a dropped connection ends it),
//!   and for [`PRESENCE_GRACE`] after the last one goes: the inbox reloads itself when something changes,
//!   and a visitor asking in that second must not hear "nobody is online". Signing out ends it at once
//!   ([`Present::leave`]). The console decides who may be counted: owners and editors, who may reply;
//!   never viewers.
//! - **Bells**: a waiter takes a [`Bell`] for a key before it reads the store, then waits for it to ring;
//!   a writer rings the key after its transaction commits. A ring between the read and the wait is not
//!   lost (a `watch` channel keeps it). Keys nobody waits on cost nothing: a bell's entry is dropped with
//!   its last waiter.
//! - Nothing here is durable or shared between processes; the store is the truth. A change made by
//!   another process rings no bell here: the server's watch (`handoff::run_watch`) reads new events every
//!   few seconds and rings their conversations, so every stream still reads everything.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::domain::{SiteId, UserId};

/// How long a staff member stays online after their last inbox stream ends: long enough for the inbox's
/// own reload (or a dropped connection's reconnect) on a slow machine, short enough that a closed tab
/// soon stops promising a person.
pub const PRESENCE_GRACE: Duration = Duration::from_secs(10);

#[derive(Debug)]
pub struct Live {
    presence: Mutex<Presence>,
    bells: Mutex<HashMap<String, watch::Sender<u64>>>,
    streams: Mutex<HashMap<String, usize>>,
}

impl Default for Live {
    fn default() -> Self {
        Live::with_grace(PRESENCE_GRACE)
    }
}

/// Each site's staff with an inbox open (how many streams each), and those who left within the grace.
#[derive(Debug)]
struct Presence {
    open: HashMap<SiteId, HashMap<UserId, usize>>,
    left: HashMap<SiteId, HashMap<UserId, Instant>>,
    grace: Duration,
}

impl Presence {
    /// The users counted on `site` now: those with a stream open and those within the grace.
    fn users(&mut self, site: &SiteId) -> usize {
        let grace = self.grace;
        if let Some(left) = self.left.get_mut(site) {
            left.retain(|_, at| at.elapsed() < grace);
            if left.is_empty() {
                self.left.remove(site);
            }
        }
        // A user is never in both maps: opening a stream takes them out of `left`.
        self.open.get(site).map_or(0, HashMap::len) + self.left.get(site).map_or(0, HashMap::len)
    }
}

/// A staff member's presence on a site, for as long as it lives (and [`PRESENCE_GRACE`] after).
#[derive(Debug)]
pub struct Present {
    live: Arc<Live>,
    site: SiteId,
    user: UserId,
    linger: bool,
}

impl Present {
    /// Ends the presence without the grace (the user signed out, or may no longer reply).
    pub fn leave(mut self) {
        self.linger = false;
    }
}

impl Drop for Present {
    fn drop(&mut self) {
        let mut p = self.live.presence.lock().unwrap_or_else(|e| e.into_inner());
        let grace = p.grace;
        let Some(users) = p.open.get_mut(&self.site) else { return };
        let Some(n) = users.get_mut(&self.user) else { return };
        *n -= 1;
        if *n > 0 {
            return;
        }
        users.remove(&self.user);
        if users.is_empty() {
            p.open.remove(&self.site);
        }
        // Forget who left long ago on every site (a few entries per staff member at most), then note this one.
        p.left.retain(|_, users| {
            users.retain(|_, at| at.elapsed() < grace);
            !users.is_empty()
        });
        if self.linger {
            p.left.entry(self.site).or_default().insert(self.user.clone(), Instant::now());
        } else if let Some(users) = p.left.get_mut(&self.site) {
            users.remove(&self.user);
        }
    }
}

/// Waits for a key to ring.
#[derive(Debug)]
pub struct Bell {
    live: Arc<Live>,
    key: String,
    rx: watch::Receiver<u64>,
}

impl Bell {
    /// Marks every ring so far as heard: call before reading what the rings announce.
    pub fn heard(&mut self) {
        self.rx.borrow_and_update();
    }

    /// Resolves at the next ring not yet heard.
    pub async fn rung(&mut self) {
        // The sender lives in the map while this receiver does, so this never ends with an error.
        let _ = self.rx.changed().await;
    }
}

impl Drop for Bell {
    fn drop(&mut self) {
        let mut bells = self.live.bells.lock().unwrap_or_else(|e| e.into_inner());
        if bells.get(&self.key).is_some_and(|tx| tx.receiver_count() <= 1) {
            bells.remove(&self.key);
        }
    }
}

/// One open stream of a client, counted until dropped.
#[derive(Debug)]
pub struct StreamSlot {
    live: Arc<Live>,
    client: String,
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut s = self.live.streams.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = s.get_mut(&self.client) {
            *n -= 1;
            if *n == 0 {
                s.remove(&self.client);
            }
        }
    }
}

/// The bell of a conversation's events.
pub fn conversation_key(id: &crate::domain::ConversationId) -> String {
    id.as_str().to_owned()
}

/// The bell of a site's inbox (a conversation starts or stops waiting, is taken, gets a message).
pub fn inbox_key(site: &SiteId) -> String {
    format!("inbox:{site}")
}

impl Live {
    /// A `Live` whose presence outlasts the last stream by `grace` (tests use a short one).
    pub fn with_grace(grace: Duration) -> Self {
        Live { presence: Mutex::new(Presence { open: HashMap::new(), left: HashMap::new(), grace }), bells: Mutex::default(), streams: Mutex::default() }
    }

    /// `user` is present on `site` until the guard is dropped, and for the grace after.
    pub fn present(self: &Arc<Self>, site: SiteId, user: UserId) -> Present {
        let mut p = self.presence.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(left) = p.left.get_mut(&site) {
            left.remove(&user);
        }
        *p.open.entry(site).or_default().entry(user.clone()).or_default() += 1;
        Present { live: self.clone(), site, user, linger: true }
    }

    /// Whether any staff member is present on `site`.
    pub fn online(&self, site: &SiteId) -> bool {
        self.online_count(site) > 0
    }

    /// The sites where `user` has an inbox stream open.
    pub fn sites_of(&self, user: &UserId) -> Vec<SiteId> {
        let p = self.presence.lock().unwrap_or_else(|e| e.into_inner());
        p.open.iter().filter(|(_, users)| users.contains_key(user)).map(|(site, _)| *site).collect()
    }

    /// How many staff members are present on `site`.
    pub fn online_count(&self, site: &SiteId) -> usize {
        self.presence.lock().unwrap_or_else(|e| e.into_inner()).users(site)
    }

    /// A bell for `key`, every earlier ring heard.
    pub fn bell(self: &Arc<Self>, key: String) -> Bell {
        let mut bells = self.bells.lock().unwrap_or_else(|e| e.into_inner());
        let rx = bells.entry(key.clone()).or_insert_with(|| watch::channel(0).0).subscribe();
        Bell { live: self.clone(), key, rx }
    }

    /// Wakes every waiter on `key` (none: nothing happens).
    pub fn ring(&self, key: &str) {
        if let Some(tx) = self.bells.lock().unwrap_or_else(|e| e.into_inner()).get(key) {
            tx.send_modify(|n| *n = n.wrapping_add(1));
        }
    }

    /// Keys with a waiter now (a test's and an operator's view of the bells' cost).
    pub fn bells(&self) -> usize {
        self.bells.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// A slot for one more open stream of `client`, unless it holds `max` already.
    pub fn open_stream(self: &Arc<Self>, client: String, max: usize) -> Option<StreamSlot> {
        let mut s = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        let n = s.entry(client.clone()).or_default();
        if *n >= max {
            return None;
        }
        *n += 1;
        Some(StreamSlot { live: self.clone(), client })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_site_is_online_while_a_presence_lives_and_for_the_grace_after() {
        let grace = Duration::from_millis(200);
        let live = Arc::new(Live::with_grace(grace));
        let (site, other) = (SiteId::new_random(), SiteId::new_random());
        let (ada, bob) = (UserId::new(), UserId::new());
        assert!(!live.online(&site));
        let tab1 = live.present(site, ada.clone());
        let tab2 = live.present(site, ada.clone());
        assert!(live.online(&site) && !live.online(&other));
        assert_eq!(live.online_count(&site), 1, "one person with two tabs");
        drop(tab1);
        assert!(live.online(&site), "the second tab is still open");
        drop(tab2);
        assert!(live.online(&site) && live.online_count(&site) == 1, "a reload is not leaving");
        let back = live.present(site, ada.clone());
        assert_eq!(live.online_count(&site), 1, "back within the grace: still one person");
        drop(back);
        std::thread::sleep(grace + Duration::from_millis(50));
        assert!(!live.online(&site), "gone after the grace");
        assert_eq!(live.online_count(&site), 0);

        let bobs = live.present(site, bob.clone());
        bobs.leave();
        assert!(!live.online(&site), "signing out ends presence at once");
        assert!(live.presence.lock().unwrap().left.is_empty(), "nothing is kept of who left");
    }

    #[tokio::test]
    async fn a_ring_between_reading_and_waiting_is_not_lost_and_bells_go_with_their_waiters() {
        let live = Arc::new(Live::default());
        let mut bell = live.bell("k".into());
        bell.heard();
        live.ring("k");
        tokio::time::timeout(std::time::Duration::from_secs(1), bell.rung()).await.expect("the ring before the wait is heard");
        assert_eq!(live.bells(), 1);
        drop(bell);
        assert_eq!(live.bells(), 0);
        live.ring("k");
    }

    #[test]
    fn streams_are_capped_per_client() {
        let live = Arc::new(Live::default());
        let a = live.open_stream("1.2.3.4".into(), 2).unwrap();
        let _b = live.open_stream("1.2.3.4".into(), 2).unwrap();
        assert!(live.open_stream("1.2.3.4".into(), 2).is_none());
        assert!(live.open_stream("5.6.7.8".into(), 2).is_some());
        drop(a);
        assert!(live.open_stream("1.2.3.4".into(), 2).is_some());
    }
}
