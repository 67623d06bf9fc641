//! The e-mail queue (#25 email): setup links, weekly digests and lead e-mails waiting for the SMTP
//! server, and the two preferences that decide who gets what (a user's digest, a site's lead e-mails).
//!
//! A row is written in the transaction of what causes it (a lead's e-mail in the lead's own transaction,
//! a week's digests with the mark that the week is done), claimed with a lease by `email::Worker`, and
//! marked sent right after the SMTP server accepted it, only under the lease it was claimed with. Each
//! row's `msg_id` is made when it is written and becomes its Message-ID, so a message sent again (the
//! server accepted it, then the process died before the mark) is the same message to the receiver.

use rusqlite::{Transaction, params};

use super::{OptionalRow, Result, Store, StoreError};
use crate::domain::{SiteId, Timestamp, UserId};

/// What a queued e-mail is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    SetupLink,
    Digest,
    Lead,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::SetupLink => "setup_link",
            Kind::Digest => "digest",
            Kind::Lead => "lead",
        }
    }

    fn parse(s: &str) -> Option<Kind> {
        match s {
            "setup_link" => Some(Kind::SetupLink),
            "digest" => Some(Kind::Digest),
            "lead" => Some(Kind::Lead),
            _ => None,
        }
    }
}

/// One e-mail to send, as written.
#[derive(Debug, Clone)]
pub struct NewEmail {
    pub kind: Kind,
    pub site_id: Option<SiteId>,
    pub recipient: String,
    /// JSON the message is rendered from (the link, the digest's figures).
    pub payload: String,
}

/// A claimed e-mail: deliver it, then report under `lease_token`.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub id: i64,
    pub kind: Kind,
    pub site_id: Option<SiteId>,
    pub lead_id: Option<String>,
    pub recipient: String,
    pub payload: String,
    pub msg_id: String,
    /// Attempts before this one.
    pub attempts: u32,
    pub lease_token: String,
}

/// A queued e-mail as `sitebot doctor`-like views and tests see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueCounts {
    pub queued: u64,
    pub sent: u64,
    pub dead: u64,
}

/// The next attempt of an e-mail that was not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    Sent,
    Retry(Timestamp),
    Dead,
}

fn new_msg_id() -> String {
    crate::secrets::new_url_token()
}

fn insert(tx: &Transaction<'_>, e: &NewEmail, lead_id: Option<&str>, now: Timestamp) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO email_queue (kind, site_id, lead_id, recipient, payload, msg_id, next_at, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)",
    )?
    .execute(params![e.kind.as_str(), e.site_id, lead_id, e.recipient, e.payload, new_msg_id(), now])?;
    Ok(())
}

/// A new lead's e-mails to the site's owners, in the lead's own transaction: one per owner when the site
/// asked for lead e-mails (`sites.lead_email`); none otherwise.
pub(super) fn queue_lead(tx: &Transaction<'_>, site: &SiteId, lead_id: &str, now: Timestamp) -> Result<usize> {
    let wanted: bool = tx.query_row("SELECT lead_email FROM sites WHERE id = ?1", [site], |r| r.get(0)).optional_row()?.unwrap_or(false);
    if !wanted {
        return Ok(0);
    }
    let owners = owners(tx, site, false)?;
    for to in &owners {
        insert(tx, &NewEmail { kind: Kind::Lead, site_id: Some(*site), recipient: to.clone(), payload: "{}".into() }, Some(lead_id), now)?;
    }
    Ok(owners.len())
}

/// The e-mail addresses of a site's owners (only those who want the digest when `digest`).
fn owners(c: &rusqlite::Connection, site: &SiteId, digest: bool) -> Result<Vec<String>> {
    let mut stmt = c.prepare_cached(
        "SELECT u.email FROM console_grants g JOIN console_users u ON u.id = g.user_id
         WHERE g.site_id = ?1 AND g.role = 'owner' AND (?2 = 0 OR u.digest = 1) ORDER BY u.email",
    )?;
    let rows = stmt.query_map(params![site, digest], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The e-mail queue and the preferences behind it.
pub struct EmailQueue<'s> {
    store: &'s Store,
}

impl<'s> EmailQueue<'s> {
    pub(super) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Queues one e-mail (a setup link); returns its row id.
    pub fn queue(&self, e: &NewEmail) -> Result<i64> {
        self.store.write(|tx| {
            insert(tx, e, None, Timestamp::now())?;
            Ok(tx.last_insert_rowid())
        })
    }

    /// Queues a site's digest for each of its owners who want it, with `payload` (its figures); returns
    /// how many were queued.
    pub fn queue_digest(&self, site: SiteId, payload: &str) -> Result<usize> {
        self.store.write(|tx| queue_digest(tx, site, payload, Timestamp::now()))
    }

    /// Queues the digests of the week that starts at `week` (each site's figures), unless that week's were
    /// queued already: the mark (`meta` `email.digest_week`) is written in the same transaction as the
    /// rows, so a crash or a second server never queues one week twice. `None` when they were.
    pub fn queue_week(&self, week: Timestamp, digests: &[(SiteId, String)]) -> Result<Option<usize>> {
        self.store.write(|tx| {
            let done: Option<String> = tx.query_row("SELECT value FROM meta WHERE key = 'email.digest_week'", [], |r| r.get(0)).optional_row()?;
            if done.and_then(|d| d.parse::<i64>().ok()).is_some_and(|d| d >= week.as_millis()) {
                return Ok(None);
            }
            let now = Timestamp::now();
            let mut n = 0;
            for (site, payload) in digests {
                n += queue_digest(tx, *site, payload, now)?;
            }
            tx.execute(
                "INSERT INTO meta (key, value) VALUES ('email.digest_week', ?1) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [week.as_millis().to_string()],
            )?;
            Ok(Some(n))
        })
    }

    /// The week whose digests were queued last (its Monday), if any.
    pub fn last_week(&self) -> Result<Option<Timestamp>> {
        self.store.read(|c| {
            let v: Option<String> = c.query_row("SELECT value FROM meta WHERE key = 'email.digest_week'", [], |r| r.get(0)).optional_row()?;
            Ok(v.and_then(|v| v.parse::<i64>().ok()).map(Timestamp::from_millis))
        })
    }

    /// Claims up to `limit` due e-mails (queued, due, not leased or leased past `now`) with a lease until
    /// `until`. E-mails of a site that is moving to another node wait for it.
    pub fn claim_due(&self, now: Timestamp, until: Timestamp, limit: usize) -> Result<Vec<Claimed>> {
        let token = crate::secrets::new_url_token();
        self.store.write(|tx| {
            let mut stmt = tx.prepare_cached(
                "UPDATE email_queue SET lease_until = ?2, lease_token = ?3
                 WHERE id IN (SELECT q.id FROM email_queue q WHERE q.state = 'queued' AND q.next_at <= ?1
                                AND (q.lease_until IS NULL OR q.lease_until <= ?1)
                                AND (q.site_id IS NULL OR NOT EXISTS (SELECT 1 FROM sites s WHERE s.id = q.site_id AND s.moving_since IS NOT NULL))
                              ORDER BY q.next_at, q.id LIMIT ?4)
                 RETURNING id, kind, site_id, lead_id, recipient, payload, msg_id, attempts",
            )?;
            let rows = stmt.query_map(params![now, until, token, limit as i64], |r| {
                let row: (i64, String, Option<SiteId>, Option<String>, String, String, String, i64) =
                    (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?);
                Ok(row)
            })?;
            let mut out = Vec::new();
            for row in rows {
                let (id, kind, site_id, lead_id, recipient, payload, msg_id, attempts) = row?;
                let kind = Kind::parse(&kind).ok_or_else(|| StoreError::Corrupt(format!("email_queue {id}: kind {kind}")))?;
                out.push(Claimed { id, kind, site_id, lead_id, recipient, payload, msg_id, attempts: attempts as u32, lease_token: token.clone() });
            }
            Ok(out)
        })
    }

    /// Records an attempt under its lease: sent (the payload is dropped then: a setup link's token is
    /// kept no longer than needed), another try at a time, or dead. `false` when the lease was no longer
    /// this worker's (nothing is changed then).
    pub fn record(&self, id: i64, lease_token: &str, next: Next, error: Option<&str>) -> Result<bool> {
        let now = Timestamp::now();
        self.store.write(|tx| {
            let n = match next {
                Next::Sent => tx.execute(
                    "UPDATE email_queue SET state = 'sent', sent_at = ?3, attempts = attempts + 1, payload = '{}', lease_until = NULL, lease_token = NULL, last_error = NULL
                     WHERE id = ?1 AND lease_token = ?2 AND state = 'queued'",
                    params![id, lease_token, now],
                )?,
                Next::Retry(at) => tx.execute(
                    "UPDATE email_queue SET next_at = ?3, attempts = attempts + 1, last_error = ?4, lease_until = NULL, lease_token = NULL
                     WHERE id = ?1 AND lease_token = ?2 AND state = 'queued'",
                    params![id, lease_token, at, error],
                )?,
                Next::Dead => tx.execute(
                    "UPDATE email_queue SET state = 'dead', attempts = attempts + 1, last_error = ?3, payload = '{}', lease_until = NULL, lease_token = NULL
                     WHERE id = ?1 AND lease_token = ?2 AND state = 'queued'",
                    params![id, lease_token, error],
                )?,
            };
            Ok(n == 1)
        })
    }

    /// When the next queued e-mail is due (its time or its lease's end), if any is queued.
    pub fn next_due(&self) -> Result<Option<Timestamp>> {
        self.store.read(|c| {
            Ok(c.query_row("SELECT min(max(next_at, coalesce(lease_until, 0))) FROM email_queue WHERE state = 'queued'", [], |r| {
                r.get::<_, Option<Timestamp>>(0)
            })?)
        })
    }

    /// How many e-mails are queued, sent and dead.
    pub fn counts(&self) -> Result<QueueCounts> {
        self.store.read(|c| {
            let n = |state: &str| c.query_row("SELECT count(*) FROM email_queue WHERE state = ?1", [state], |r| r.get::<_, i64>(0)).map(|v| v as u64);
            Ok(QueueCounts { queued: n("queued")?, sent: n("sent")?, dead: n("dead")? })
        })
    }

    /// Whether the site e-mails its owners each new lead.
    pub fn lead_email(&self, site: SiteId) -> Result<bool> {
        self.store.read(|c| c.query_row("SELECT lead_email FROM sites WHERE id = ?1", [site], |r| r.get(0)).optional_row()?.ok_or(StoreError::NotFound))
    }

    /// Turns the site's lead e-mails on or off; `NotFound` without such a site.
    pub fn set_lead_email(&self, site: SiteId, on: bool) -> Result<()> {
        self.store.write(|tx| match tx.execute("UPDATE sites SET lead_email = ?2 WHERE id = ?1", params![site, on])? {
            0 => Err(StoreError::NotFound),
            _ => Ok(()),
        })
    }

    /// Whether the user wants the weekly digest of the sites they own.
    pub fn digest_wanted(&self, user: &UserId) -> Result<bool> {
        self.store.read(|c| c.query_row("SELECT digest FROM console_users WHERE id = ?1", [user], |r| r.get(0)).optional_row()?.ok_or(StoreError::NotFound))
    }

    pub fn set_digest_wanted(&self, user: &UserId, on: bool) -> Result<()> {
        self.store.write(|tx| match tx.execute("UPDATE console_users SET digest = ?2 WHERE id = ?1", params![user, on])? {
            0 => Err(StoreError::NotFound),
            _ => Ok(()),
        })
    }
}

fn queue_digest(tx: &Transaction<'_>, site: SiteId, payload: &str, now: Timestamp) -> Result<usize> {
    let to = owners(tx, &site, true)?;
    for r in &to {
        insert(tx, &NewEmail { kind: Kind::Digest, site_id: Some(site), recipient: r.clone(), payload: payload.to_owned() }, None, now)?;
    }
    Ok(to.len())
}
