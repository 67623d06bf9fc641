//! [`SiteStore`]: one site's repository. Its settings and credentials are here; its leads, knowledge
//! and query log are reached through it, so every tenant query is bound to the site's id.

use rusqlite::params;

use super::sites::{ROTATION_OVERLAP, Site, SiteCredentials, SiteUpdate, events_column, get, set_origins, set_token, validate_name};
use super::{OptionalRow, Result, Store, StoreError};
use crate::domain::{SiteId, Timestamp};
use crate::secrets::{self, Keyring};

/// One site's data. Every query behind it is bound to this site's id; there is no other way for code
/// outside the store to reach tenant rows.
#[derive(Clone, Copy)]
pub struct SiteStore<'s> {
    store: &'s Store,
    id: SiteId,
}

impl<'s> SiteStore<'s> {
    pub(super) fn new(store: &'s Store, id: SiteId) -> Self {
        Self { store, id }
    }

    pub fn id(&self) -> SiteId {
        self.id
    }

    pub(super) fn store(&self) -> &'s Store {
        self.store
    }

    /// One transaction on the writer over this site's data, refused with `StoreError::Moving` while the
    /// site is being moved. The check runs inside the transaction: once `freeze` has committed, no write
    /// of the site commits here, so an export taken after it holds every write that was acknowledged.
    pub(super) fn write<T>(&self, f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T>) -> Result<T> {
        let id = self.id;
        self.store.write(|tx| {
            let moving: Option<Option<Timestamp>> = tx.query_row("SELECT moving_since FROM sites WHERE id = ?1", [id], |r| r.get(0)).optional_row()?;
            if matches!(moving, Some(Some(_))) {
                return Err(StoreError::Moving);
            }
            f(tx)
        })
    }

    /// Marks the site as moving to another node (`site export`): from the commit on, its writes are
    /// refused and its webhook events are left for the node it moves to. Returns when it started moving
    /// (the earlier instant when it already was); `NotFound` without such a site.
    pub fn freeze(&self) -> Result<Timestamp> {
        let id = &self.id;
        self.store.write(|tx| {
            let n = tx.execute("UPDATE sites SET moving_since = coalesce(moving_since, ?2) WHERE id = ?1", params![id, Timestamp::now()])?;
            if n == 0 {
                return Err(StoreError::NotFound);
            }
            Ok(tx.query_row("SELECT moving_since FROM sites WHERE id = ?1", [id], |r| r.get(0))?)
        })
    }

    /// Serves the site here again (a move abandoned, or finished by `site import`).
    pub fn thaw(&self) -> Result<()> {
        let id = &self.id;
        self.store.write(|tx| match tx.execute("UPDATE sites SET moving_since = NULL WHERE id = ?1", [id])? {
            0 => Err(StoreError::NotFound),
            _ => Ok(()),
        })
    }

    /// When the site started moving away, if it is.
    pub fn moving_since(&self) -> Result<Option<Timestamp>> {
        let id = &self.id;
        self.store.read(|c| c.query_row("SELECT moving_since FROM sites WHERE id = ?1", [id], |r| r.get(0)).optional_row()).map(Option::flatten)
    }

    pub fn get(&self) -> Result<Option<Site>> {
        self.store.read(|conn| get(conn, &self.id))
    }

    /// Applies an update. Returns new credentials when a tier change created a bearer token.
    pub fn update(&self, up: SiteUpdate) -> Result<(Site, Option<SiteCredentials>)> {
        let id = &self.id;
        self.write(|tx| {
            let before = get(tx, id)?.ok_or(StoreError::NotFound)?;
            if let Some(name) = &up.name {
                tx.execute("UPDATE sites SET name = ?2 WHERE id = ?1", params![id, validate_name(name)?])?;
            }
            if let Some(v) = &up.vertical {
                tx.execute("UPDATE sites SET vertical = ?2 WHERE id = ?1", params![id, v])?;
            }
            if let Some(c) = &up.currency {
                tx.execute("UPDATE sites SET currency = ?2 WHERE id = ?1", params![id, c])?;
            }
            if let Some(l) = &up.lang {
                tx.execute("UPDATE sites SET lang = ?2 WHERE id = ?1", params![id, l])?;
            }
            if let Some(origins) = &up.allowed_origins {
                set_origins(tx, id, origins)?;
            }
            if let Some(url) = &up.webhook_url {
                // Setting the URL (again) is a new endpoint: enabled, healthy, its waiting events due now.
                tx.execute("UPDATE sites SET webhook_url = ?2 WHERE id = ?1", params![id, url])?;
                super::outbox::reset_endpoint(tx, id, Timestamp::now())?;
            }
            if let Some(events) = &up.webhook_events {
                tx.execute("UPDATE sites SET webhook_events = ?2 WHERE id = ?1", params![id, events_column(events)])?;
            }
            if let Some(c) = &up.widget_color {
                tx.execute("UPDATE sites SET widget_color = ?2 WHERE id = ?1", params![id, c])?;
            }
            if let Some(p) = up.widget_position {
                tx.execute("UPDATE sites SET widget_position = ?2 WHERE id = ?1", params![id, p])?;
            }
            if let Some(greetings) = &up.widget_greetings {
                let mut all = before.widget.greeting.clone();
                for (lang, text) in greetings {
                    let text = text.trim();
                    if text.chars().count() > 500 {
                        return Err(StoreError::Invalid(format!("the {lang} greeting is longer than 500 characters")));
                    }
                    if text.is_empty() {
                        all.remove(lang.as_str());
                    } else {
                        all.insert(lang.as_str().to_owned(), text.to_owned());
                    }
                }
                let json = serde_json::to_string(&all).map_err(|e| StoreError::Invalid(e.to_string()))?;
                tx.execute("UPDATE sites SET widget_greetings = ?2 WHERE id = ?1", params![id, json])?;
            }
            if let Some(on) = up.lead_form {
                tx.execute("UPDATE sites SET lead_form = ?2 WHERE id = ?1", params![id, on])?;
            }
            if let Some(mode) = up.answers {
                tx.execute("UPDATE sites SET answers = ?2 WHERE id = ?1", params![id, mode])?;
            }
            let handoff: [(&str, Option<&dyn rusqlite::ToSql>); 4] = [
                ("handoff", up.handoff.as_ref().map(|v| v as _)),
                ("handoff_hours", up.handoff_hours.as_ref().map(|v| v as _)),
                ("handoff_closed", up.handoff_closed.as_ref().map(|v| v as _)),
                ("handoff_timezone", up.handoff_timezone.as_ref().map(|v| v as _)),
            ];
            for (column, value) in handoff.iter().filter_map(|(c, v)| v.map(|v| (c, v))) {
                // The column names are the constants above, never input.
                tx.execute(&format!("UPDATE sites SET {column} = ?2 WHERE id = ?1"), params![id, value])?;
            }
            if let Some(secs) = up.handoff_wait_secs {
                if !(1..=super::sites::MAX_HANDOFF_WAIT_SECS).contains(&secs) {
                    return Err(StoreError::Invalid(format!("the hand-off wait is 1 to {} seconds", super::sites::MAX_HANDOFF_WAIT_SECS)));
                }
                tx.execute("UPDATE sites SET handoff_wait_secs = ?2 WHERE id = ?1", params![id, secs])?;
            }
            let mut creds = None;
            if let Some(tier) = up.tier {
                tx.execute("UPDATE sites SET tier = ?2 WHERE id = ?1", params![id, tier])?;
                if tier.has_bearer_token() && !before.has_bearer_token {
                    creds = Some(SiteCredentials { site_id: *id, webhook_secret: None, bearer_token: Some(set_token(tx, id)?) });
                } else if !tier.has_bearer_token() {
                    tx.execute("UPDATE sites SET token_hash = NULL WHERE id = ?1", [id])?;
                }
            }
            tx.execute("UPDATE sites SET updated_at = ?2 WHERE id = ?1", params![id, Timestamp::now()])?;
            Ok((get(tx, id)?.ok_or(StoreError::NotFound)?, creds))
        })
    }

    pub fn set_enabled(&self, enabled: bool) -> Result<Site> {
        let id = &self.id;
        self.store.write(|tx| {
            let n = tx.execute("UPDATE sites SET enabled = ?2, updated_at = ?3 WHERE id = ?1", params![id, enabled, Timestamp::now()])?;
            if n == 0 {
                return Err(StoreError::NotFound);
            }
            get(tx, id)?.ok_or(StoreError::NotFound)
        })
    }

    /// Replaces the bearer token; the old one stops working at once.
    pub fn rotate_token(&self) -> Result<String> {
        let id = &self.id;
        self.write(|tx| {
            let site = get(tx, id)?.ok_or(StoreError::NotFound)?;
            if !site.tier.has_bearer_token() {
                return Err(StoreError::Conflict(format!("site {id} is on the starter tier, which has no bearer token")));
            }
            let token = set_token(tx, id)?;
            tx.execute("UPDATE sites SET updated_at = ?2 WHERE id = ?1", params![id, Timestamp::now()])?;
            Ok(token)
        })
    }

    /// Replaces the webhook signing secret; the previous one keeps signing (as a second signature) for 24 h.
    pub fn rotate_secret(&self) -> Result<String> {
        let keyring: &Keyring = self.store.keyring();
        let secret = secrets::new_webhook_secret();
        self.write(|tx| {
            let now = Timestamp::now();
            let n = tx.execute(
                "UPDATE sites SET prev_secret_sealed = secret_sealed, prev_secret_until = ?2, secret_sealed = ?3, updated_at = ?4 WHERE id = ?1",
                params![self.id, now + ROTATION_OVERLAP, keyring.seal(&secret), now],
            )?;
            if n == 0 {
                return Err(StoreError::NotFound);
            }
            Ok(secret)
        })
    }

    /// The secrets that sign a delivery now: the current one, and the previous one during its overlap.
    pub fn signing_secrets(&self) -> Result<Vec<String>> {
        let keyring = self.store.keyring();
        let (current, prev, until): (Vec<u8>, Option<Vec<u8>>, Option<Timestamp>) = self
            .store
            .read(|conn| {
                conn.query_row("SELECT secret_sealed, prev_secret_sealed, prev_secret_until FROM sites WHERE id = ?1", [self.id], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })
                .optional_row()
            })?
            .ok_or(StoreError::NotFound)?;
        let mut out = vec![keyring.open(&current)?];
        if let (Some(prev), Some(until)) = (prev, until)
            && until > Timestamp::now()
        {
            out.push(keyring.open(&prev)?);
        }
        Ok(out)
    }

    pub fn leads(&self) -> super::leads::Leads<'s> {
        super::leads::Leads::new(*self)
    }

    pub fn knowledge(&self) -> super::knowledge::Knowledge<'s> {
        super::knowledge::Knowledge::new(*self)
    }

    /// The site's crawl sources and crawled pages.
    pub fn crawl(&self) -> super::crawl::Crawl<'s> {
        super::crawl::Crawl::new(*self)
    }

    pub fn conversations(&self) -> super::conversations::Conversations<'s> {
        super::conversations::Conversations::new(*self)
    }

    /// The site's hand-offs to a person: the visitor's side (with the conversation's token) and the staff's.
    pub fn handoff(&self) -> super::handoff::Handoffs<'s> {
        super::handoff::Handoffs::new(*self)
    }

    pub fn analytics(&self) -> super::analytics::Analytics<'s> {
        super::analytics::Analytics::new(*self)
    }

    pub fn curated(&self) -> super::curated::Curated<'s> {
        super::curated::Curated::new(*self)
    }

    pub fn insights(&self) -> super::insights::Insights<'s> {
        super::insights::Insights::new(*self)
    }

    pub fn queries(&self) -> super::queries::QueryLog<'s> {
        super::queries::QueryLog::new(*self)
    }

    /// The site's per-day counters (the console's dashboards).
    pub fn days(&self) -> super::days::Days<'s> {
        super::days::Days::new(*self)
    }

    /// The site's review queue: unanswered questions grouped by meaning.
    pub fn review(&self) -> super::review::Review<'s> {
        super::review::Review::new(*self)
    }

    /// History written in bulk at chosen times (benchmarks; the server never writes through it).
    pub fn history(&self) -> super::history::History<'s> {
        super::history::History::new(*self)
    }

    /// The counters behind the site's public stats; `None` when the site does not exist.
    pub fn counters(&self) -> Result<Option<super::stats::SiteCounters>> {
        self.store.read(|conn| super::stats::counters(conn, &self.id))
    }
}
