//! Console users: the people who run sites. Each has an e-mail address, a password hash (Argon2id, set
//! through a one-time setup link; never a default), admin or not, and a role per site it may see.
//! Setup links and session ids are stored only as SHA-256 hashes, so the database never holds what a
//! browser or an e-mail carries. Sessions live here, server side; ending them is deleting rows.

use rusqlite::{Connection, Transaction, params};

use super::{OptionalRow, Result, Store, StoreError};
use crate::domain::{Email, SiteId, SiteRole, Timestamp, UserId};

/// A console user as lists and pages show it (never the password hash).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub id: UserId,
    pub email: String,
    pub is_admin: bool,
    /// Whether a password was ever set (a user whose setup link is unused cannot sign in).
    pub has_password: bool,
    pub created_at: Timestamp,
    pub password_at: Option<Timestamp>,
}

/// A user's role on one site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grant {
    pub site_id: SiteId,
    pub role: SiteRole,
}

/// A stored session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub user: User,
    pub csrf: String,
    pub created_at: Timestamp,
    pub last_seen_at: Timestamp,
}

const USER_COLUMNS: &str = "id, email, is_admin, password_hash IS NOT NULL, created_at, password_at";

fn user_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<User> {
    Ok(User { id: r.get(0)?, email: r.get(1)?, is_admin: r.get(2)?, has_password: r.get(3)?, created_at: r.get(4)?, password_at: r.get(5)? })
}

fn user(conn: &Connection, id: &UserId) -> Result<Option<User>> {
    conn.query_row(&format!("SELECT {USER_COLUMNS} FROM console_users WHERE id = ?1"), [id], user_row).optional_row()
}

fn grants(conn: &Connection, id: &UserId) -> Result<Vec<Grant>> {
    let mut stmt = conn.prepare_cached("SELECT site_id, role FROM console_grants WHERE user_id = ?1 ORDER BY site_id")?;
    let rows = stmt.query_map([id], |r| Ok(Grant { site_id: r.get(0)?, role: r.get(1)? }))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Replaces the user's setup links with this one (valid until `expires_at`).
pub(super) fn put_link(tx: &Transaction<'_>, id: &UserId, token_hash: &[u8; 32], expires_at: Timestamp) -> Result<()> {
    tx.execute("DELETE FROM console_setup_links WHERE user_id = ?1", [id])?;
    tx.execute("INSERT INTO console_setup_links (token_hash, user_id, expires_at) VALUES (?1, ?2, ?3)", params![&token_hash[..], id, expires_at])?;
    Ok(())
}

/// The console's users, their grants, setup links and sessions.
pub struct Users<'s> {
    store: &'s Store,
}

impl<'s> Users<'s> {
    pub(super) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Adds a user (admin, or with one grant) and its setup link, in one transaction. `Conflict` when the
    /// e-mail address has a user already; `NotFound` when the granted site does not exist.
    pub fn add(&self, email: &Email, admin: bool, grant: Option<Grant>, link_hash: &[u8; 32], link_expires: Timestamp) -> Result<User> {
        self.store.write(|tx| {
            let taken = tx.query_row("SELECT 1 FROM console_users WHERE email = ?1", [email.as_str()], |_| Ok(())).optional_row()?.is_some();
            if taken {
                return Err(StoreError::Conflict(format!("a user with the e-mail address {} exists", email.as_str())));
            }
            let id = UserId::new();
            tx.execute(
                "INSERT INTO console_users (id, email, is_admin, created_at) VALUES (?1, ?2, ?3, ?4)",
                params![id, email.as_str(), admin, Timestamp::now()],
            )?;
            if let Some(g) = grant {
                let known = tx.query_row("SELECT 1 FROM sites WHERE id = ?1", [g.site_id], |_| Ok(())).optional_row()?.is_some();
                if !known {
                    return Err(StoreError::NotFound);
                }
                tx.execute("INSERT INTO console_grants (user_id, site_id, role) VALUES (?1, ?2, ?3)", params![id, g.site_id, g.role])?;
            }
            put_link(tx, &id, link_hash, link_expires)?;
            user(tx, &id)?.ok_or(StoreError::NotFound)
        })
    }

    /// Sets the name visitors see when the user joins a conversation (1 to 80 characters).
    pub fn set_display_name(&self, id: &UserId, name: &str) -> Result<()> {
        let name = name.trim();
        if name.is_empty() || name.chars().count() > 80 || name.chars().any(char::is_control) {
            return Err(StoreError::Invalid("a display name is 1 to 80 characters, without control characters".into()));
        }
        self.store.write(|tx| match tx.execute("UPDATE console_users SET display_name = ?2 WHERE id = ?1", params![id, name])? {
            0 => Err(StoreError::NotFound),
            _ => Ok(()),
        })
    }

    /// Every user with its grants, by e-mail address.
    pub fn list(&self) -> Result<Vec<(User, Vec<Grant>)>> {
        self.store.read(|c| {
            let mut stmt = c.prepare_cached(&format!("SELECT {USER_COLUMNS} FROM console_users ORDER BY email"))?;
            let users = stmt.query_map([], user_row)?.collect::<rusqlite::Result<Vec<User>>>()?;
            users.into_iter().map(|u| Ok((grants(c, &u.id)?, u))).map(|r| r.map(|(g, u)| (u, g))).collect()
        })
    }

    pub fn get(&self, id: &UserId) -> Result<Option<User>> {
        self.store.read(|c| user(c, id))
    }

    pub fn by_email(&self, email: &str) -> Result<Option<User>> {
        self.store.read(|c| c.query_row(&format!("SELECT {USER_COLUMNS} FROM console_users WHERE email = ?1"), [email.trim()], user_row).optional_row())
    }

    /// The stored password hash of the user with this e-mail address (sign-in only).
    pub fn password_hash(&self, email: &str) -> Result<Option<(User, Option<String>)>> {
        self.store.read(|c| {
            c.query_row(&format!("SELECT {USER_COLUMNS}, password_hash FROM console_users WHERE email = ?1"), [email.trim()], |r| {
                Ok((user_row(r)?, r.get::<_, Option<String>>(6)?))
            })
            .optional_row()
        })
    }

    pub fn grants(&self, id: &UserId) -> Result<Vec<Grant>> {
        self.store.read(|c| grants(c, id))
    }

    /// The users who may see a site: admins, and those with a grant on it.
    pub fn of_site(&self, site: &SiteId) -> Result<Vec<(User, Option<SiteRole>)>> {
        self.store.read(|c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {USER_COLUMNS}, g.role FROM console_users u LEFT JOIN console_grants g ON g.user_id = u.id AND g.site_id = ?1
                 WHERE u.is_admin OR g.role IS NOT NULL ORDER BY u.email"
            ))?;
            let rows = stmt.query_map([site], |r| Ok((user_row(r)?, r.get(6)?)))?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// Gives the user `role` on the site (replacing any other role there).
    pub fn grant(&self, id: &UserId, g: Grant) -> Result<()> {
        self.store.write(|tx| {
            user(tx, id)?.ok_or(StoreError::NotFound)?;
            let known = tx.query_row("SELECT 1 FROM sites WHERE id = ?1", [g.site_id], |_| Ok(())).optional_row()?.is_some();
            if !known {
                return Err(StoreError::NotFound);
            }
            tx.execute(
                "INSERT INTO console_grants (user_id, site_id, role) VALUES (?1, ?2, ?3) ON CONFLICT(user_id, site_id) DO UPDATE SET role = excluded.role",
                params![id, g.site_id, g.role],
            )?;
            Ok(())
        })
    }

    /// Takes the user's role on the site away; returns whether it had one.
    pub fn revoke(&self, id: &UserId, site: &SiteId) -> Result<bool> {
        self.store.write(|tx| Ok(tx.execute("DELETE FROM console_grants WHERE user_id = ?1 AND site_id = ?2", params![id, site])? > 0))
    }

    /// Removes the user, its grants, links and sessions.
    pub fn remove(&self, id: &UserId) -> Result<()> {
        self.store.write(|tx| {
            if tx.execute("DELETE FROM console_users WHERE id = ?1", [id])? == 0 {
                return Err(StoreError::NotFound);
            }
            Ok(())
        })
    }

    /// A new setup link for the user (the old one stops working) and, since whoever holds a link can set
    /// the password, the end of every session the user has.
    pub fn reset(&self, id: &UserId, link_hash: &[u8; 32], link_expires: Timestamp) -> Result<User> {
        self.store.write(|tx| {
            let u = user(tx, id)?.ok_or(StoreError::NotFound)?;
            put_link(tx, id, link_hash, link_expires)?;
            tx.execute("DELETE FROM console_sessions WHERE user_id = ?1", [id])?;
            Ok(u)
        })
    }

    /// The user a setup link belongs to, while it is unused and unexpired.
    pub fn link_user(&self, link_hash: &[u8; 32], now: Timestamp) -> Result<Option<User>> {
        self.store.read(|c| {
            let id: Option<UserId> = c
                .query_row(
                    "SELECT user_id FROM console_setup_links WHERE token_hash = ?1 AND used_at IS NULL AND expires_at > ?2",
                    params![&link_hash[..], now],
                    |r| r.get(0),
                )
                .optional_row()?;
            match id {
                Some(id) => user(c, &id),
                None => Ok(None),
            }
        })
    }

    /// Uses a setup link: sets the password hash, marks the link used and ends the user's sessions, in one
    /// transaction. `NotFound` when the link is unknown, used or expired.
    pub fn use_link(&self, link_hash: &[u8; 32], now: Timestamp, password_hash: &str) -> Result<User> {
        self.store.write(|tx| {
            let id: UserId = tx
                .query_row(
                    "UPDATE console_setup_links SET used_at = ?2 WHERE token_hash = ?1 AND used_at IS NULL AND expires_at > ?2 RETURNING user_id",
                    params![&link_hash[..], now],
                    |r| r.get(0),
                )
                .optional_row()?
                .ok_or(StoreError::NotFound)?;
            tx.execute("UPDATE console_users SET password_hash = ?2, password_at = ?3 WHERE id = ?1", params![id, password_hash, now])?;
            tx.execute("DELETE FROM console_sessions WHERE user_id = ?1", [&id])?;
            user(tx, &id)?.ok_or(StoreError::NotFound)
        })
    }

    /// Sets a new password (the signed-in user's own change): every session of the user ends.
    pub fn set_password(&self, id: &UserId, password_hash: &str, now: Timestamp) -> Result<()> {
        self.store.write(|tx| {
            if tx.execute("UPDATE console_users SET password_hash = ?2, password_at = ?3 WHERE id = ?1", params![id, password_hash, now])? == 0 {
                return Err(StoreError::NotFound);
            }
            tx.execute("DELETE FROM console_sessions WHERE user_id = ?1", [id])?;
            Ok(())
        })
    }

    /// Starts a session (`id_hash` is the hash of the cookie's value).
    pub fn start_session(&self, id_hash: &[u8; 32], user: &UserId, csrf: &str, now: Timestamp) -> Result<()> {
        self.store.write(|tx| {
            tx.execute(
                "INSERT INTO console_sessions (id_hash, user_id, csrf, created_at, last_seen_at) VALUES (?1, ?2, ?3, ?4, ?4)",
                params![&id_hash[..], user, csrf, now],
            )?;
            Ok(())
        })
    }

    /// The session behind a cookie, with its user.
    pub fn session(&self, id_hash: &[u8; 32]) -> Result<Option<Session>> {
        self.store.read(|c| {
            let row: Option<(UserId, String, Timestamp, Timestamp)> = c
                .query_row("SELECT user_id, csrf, created_at, last_seen_at FROM console_sessions WHERE id_hash = ?1", [&id_hash[..]], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                })
                .optional_row()?;
            let Some((id, csrf, created_at, last_seen_at)) = row else { return Ok(None) };
            Ok(user(c, &id)?.map(|user| Session { user, csrf, created_at, last_seen_at }))
        })
    }

    /// Marks the session used now (the idle clock starts again).
    pub fn touch_session(&self, id_hash: &[u8; 32], now: Timestamp) -> Result<()> {
        self.store.write(|tx| {
            tx.execute("UPDATE console_sessions SET last_seen_at = ?2 WHERE id_hash = ?1", params![&id_hash[..], now])?;
            Ok(())
        })
    }

    /// Ends one session.
    pub fn end_session(&self, id_hash: &[u8; 32]) -> Result<()> {
        self.store.write(|tx| {
            tx.execute("DELETE FROM console_sessions WHERE id_hash = ?1", [&id_hash[..]])?;
            Ok(())
        })
    }

    /// Deletes sessions idle since `idle_before` or started before `started_before`: those no cookie will
    /// bring back (`server::housekeeping`, hourly).
    pub fn expire_sessions(&self, idle_before: Timestamp, started_before: Timestamp) -> Result<usize> {
        self.store.write(|tx| Ok(tx.execute("DELETE FROM console_sessions WHERE last_seen_at < ?1 OR created_at < ?2", params![idle_before, started_before])?))
    }

    /// Whether any user exists (the console shows only its sign-in page until one does).
    pub fn any(&self) -> Result<bool> {
        self.store.read(|c| Ok(c.query_row("SELECT EXISTS (SELECT 1 FROM console_users)", [], |r| r.get(0))?))
    }

    // #25 oidc
    /// The user a single sign-on names by its verified address, in one transaction: found (the address
    /// in any case), or added with no grants when `create`. `admin`, when the provider's claim decides,
    /// sets whether the user is an admin. `None` when the address has no user and `create` is false.
    pub fn single_sign_on(&self, email: &Email, admin: Option<bool>, create: bool) -> Result<Option<SignedOn>> {
        self.store.write(|tx| {
            let found = tx.query_row(&format!("SELECT {USER_COLUMNS} FROM console_users WHERE email = ?1"), [email.as_str()], user_row).optional_row()?;
            let (mut u, created) = match found {
                Some(u) => (u, false),
                None if create => {
                    let id = UserId::new();
                    tx.execute(
                        "INSERT INTO console_users (id, email, is_admin, created_at) VALUES (?1, ?2, ?3, ?4)",
                        params![id, email.as_str(), admin.unwrap_or(false), Timestamp::now()],
                    )?;
                    (user(tx, &id)?.ok_or(StoreError::NotFound)?, true)
                }
                None => return Ok(None),
            };
            let was_admin = u.is_admin;
            if let Some(admin) = admin.filter(|a| *a != u.is_admin) {
                tx.execute("UPDATE console_users SET is_admin = ?2 WHERE id = ?1", params![u.id, admin])?;
                u.is_admin = admin;
            }
            Ok(Some(SignedOn { admin_changed: !created && was_admin != u.is_admin, user: u, created }))
        })
    }
}

// #25 oidc
/// Who a single sign-on signed in, and what it changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedOn {
    pub user: User,
    /// The user was added by this sign-on.
    pub created: bool,
    /// The provider's admin claim changed whether an existing user is an admin.
    pub admin_changed: bool,
}

/// One entry of the audit log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    pub id: i64,
    pub at: Timestamp,
    /// A user's e-mail address, `cli`, or the address tried for a failed sign-in.
    pub actor: String,
    pub site_id: Option<SiteId>,
    /// `login`, `login_failed`, `logout`, `password_set`, `user_added`, `curated_added`, ...
    pub action: String,
    /// What changed, as short JSON.
    pub detail: String,
}

/// The audit log: who did what, when, on which site.
pub struct Audit<'s> {
    store: &'s Store,
}

impl<'s> Audit<'s> {
    pub(super) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    pub fn record(&self, actor: &str, site: Option<SiteId>, action: &str, detail: &serde_json::Value) -> Result<()> {
        let detail = detail.to_string();
        self.store.write(|tx| {
            tx.execute(
                "INSERT INTO audit_log (at, actor, site_id, action, detail) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![Timestamp::now(), actor, site, action, detail],
            )?;
            Ok(())
        })
    }

    /// The newest entries first (of one site, or all), at most `limit`, before entry `before` when given
    /// (keyset pagination).
    pub fn list(&self, site: Option<SiteId>, before: Option<i64>, limit: usize) -> Result<Vec<AuditEntry>> {
        self.store.read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT id, at, actor, site_id, action, detail FROM audit_log
                 WHERE (?1 IS NULL OR site_id = ?1) AND (?2 IS NULL OR id < ?2) ORDER BY id DESC LIMIT ?3",
            )?;
            let rows = stmt.query_map(params![site, before, limit as i64], |r| {
                Ok(AuditEntry { id: r.get(0)?, at: r.get(1)?, actor: r.get(2)?, site_id: r.get(3)?, action: r.get(4)?, detail: r.get(5)? })
            })?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }
}
