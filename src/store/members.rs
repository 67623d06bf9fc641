//! The people of one site as its owners manage them in the console (#25): invite by e-mail with a role,
//! change a role, take it away. Reached only through `store.site(id).members()`, so every query binds
//! the site's id, and every change is one transaction on the site's writer (refused while it moves).
//!
//! The rule that a site keeps an owner lives here, checked inside the transaction that would break it:
//! the last owner of a site is never demoted or removed, whoever asks (an admin names another owner
//! first), so two owners demoting each other at once cannot both succeed.

use rusqlite::{Transaction, params};

use super::users::{User, put_link};
use super::{OptionalRow, Result, SiteStore, StoreError};
use crate::domain::{Email, SiteRole, Timestamp, UserId};

/// What an invitation did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invited {
    pub user: User,
    /// The address had no user: one was made, with the setup link whose hash was given.
    pub new_user: bool,
}

/// One site's members.
pub struct Members<'s> {
    site: SiteStore<'s>,
}

impl<'s> SiteStore<'s> {
    /// The site's members: invitations, roles, removals.
    pub fn members(&self) -> Members<'s> {
        Members { site: *self }
    }
}

fn role_of(tx: &Transaction<'_>, user: &UserId, site: &crate::domain::SiteId) -> Result<Option<SiteRole>> {
    tx.query_row("SELECT role FROM console_grants WHERE user_id = ?1 AND site_id = ?2", params![user, site], |r| r.get(0)).optional_row()
}

fn owners(tx: &Transaction<'_>, site: &crate::domain::SiteId) -> Result<i64> {
    Ok(tx.query_row("SELECT count(*) FROM console_grants WHERE site_id = ?1 AND role = 'owner'", [site], |r| r.get(0))?)
}

/// `Conflict` when `user` is the site's only owner (what a demotion or a removal would leave ownerless).
fn keeps_an_owner(tx: &Transaction<'_>, user: &UserId, site: &crate::domain::SiteId) -> Result<()> {
    if role_of(tx, user, site)? == Some(SiteRole::Owner) && owners(tx, site)? <= 1 {
        return Err(StoreError::Conflict("the site's last owner cannot be demoted or removed; make someone else owner first".into()));
    }
    Ok(())
}

impl Members<'_> {
    /// Gives the person with this address `role` on the site. A new address becomes a user (not an
    /// admin) with the setup link `link_hash`, valid until `link_expires`; a known one keeps its password
    /// and gets no link. `Conflict` when the person already holds a role here.
    pub fn invite(&self, email: &Email, role: SiteRole, link_hash: &[u8; 32], link_expires: Timestamp) -> Result<Invited> {
        let site = self.site.id();
        self.site.write(|tx| {
            let known: Option<UserId> = tx.query_row("SELECT id FROM console_users WHERE email = ?1", [email.as_str()], |r| r.get(0)).optional_row()?;
            let (id, new_user) = match known {
                Some(id) => {
                    if role_of(tx, &id, &site)?.is_some() {
                        return Err(StoreError::Conflict(format!("{} already has a role on this site; change it in the list", email.as_str())));
                    }
                    (id, false)
                }
                None => {
                    let id = UserId::new();
                    tx.execute(
                        "INSERT INTO console_users (id, email, is_admin, created_at) VALUES (?1, ?2, 0, ?3)",
                        params![id, email.as_str(), Timestamp::now()],
                    )?;
                    put_link(tx, &id, link_hash, link_expires)?;
                    (id, true)
                }
            };
            tx.execute("INSERT INTO console_grants (user_id, site_id, role) VALUES (?1, ?2, ?3)", params![id, site, role])?;
            let user =
                tx.query_row("SELECT id, email, is_admin, password_hash IS NOT NULL, created_at, password_at FROM console_users WHERE id = ?1", [&id], |r| {
                    Ok(User { id: r.get(0)?, email: r.get(1)?, is_admin: r.get(2)?, has_password: r.get(3)?, created_at: r.get(4)?, password_at: r.get(5)? })
                })?;
            Ok(Invited { user, new_user })
        })
    }

    /// Changes a member's role; `NotFound` when the user holds none here, `Conflict` when it would
    /// demote the last owner.
    pub fn set_role(&self, user: &UserId, role: SiteRole) -> Result<()> {
        let site = self.site.id();
        self.site.write(|tx| {
            role_of(tx, user, &site)?.ok_or(StoreError::NotFound)?;
            if role != SiteRole::Owner {
                keeps_an_owner(tx, user, &site)?;
            }
            tx.execute("UPDATE console_grants SET role = ?3 WHERE user_id = ?1 AND site_id = ?2", params![user, site, role])?;
            Ok(())
        })
    }

    /// Takes a member's role on the site away (the user and its other sites stay); `NotFound` when it
    /// holds none here, `Conflict` for the last owner.
    pub fn remove(&self, user: &UserId) -> Result<()> {
        let site = self.site.id();
        self.site.write(|tx| {
            role_of(tx, user, &site)?.ok_or(StoreError::NotFound)?;
            keeps_an_owner(tx, user, &site)?;
            tx.execute("DELETE FROM console_grants WHERE user_id = ?1 AND site_id = ?2", params![user, site])?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Tier;
    use crate::store::sites::tests::{new_site, store};

    fn email(s: &str) -> Email {
        Email::parse(s).unwrap()
    }

    #[test]
    fn a_site_keeps_its_last_owner_and_an_invitation_is_once() {
        let (_d, store) = store();
        let (site, _) = store.sites().create(new_site("A", Tier::Pro, &[])).unwrap();
        let (other, _) = store.sites().create(new_site("B", Tier::Pro, &[])).unwrap();
        let later = Timestamp::from_millis(Timestamp::now().as_millis() + 3_600_000);
        let ada = store.site(site.id).members().invite(&email("ada@example.com"), SiteRole::Owner, &[1; 32], later).unwrap();
        assert!(ada.new_user && !ada.user.has_password && !ada.user.is_admin);
        let again = store.site(site.id).members().invite(&email("ADA@example.com"), SiteRole::Viewer, &[2; 32], later);
        assert!(matches!(again, Err(StoreError::Conflict(_))), "{again:?}");
        // A known address on another site: no new user, no new link.
        let on_b = store.site(other.id).members().invite(&email("ada@example.com"), SiteRole::Viewer, &[3; 32], later).unwrap();
        assert!(!on_b.new_user && on_b.user.id == ada.user.id);
        assert!(store.users().link_user(&[3; 32], Timestamp::now()).unwrap().is_none());
        assert!(store.users().link_user(&[1; 32], Timestamp::now()).unwrap().is_some());

        let members = store.site(site.id).members();
        assert!(matches!(members.set_role(&ada.user.id, SiteRole::Editor), Err(StoreError::Conflict(_))));
        assert!(matches!(members.remove(&ada.user.id), Err(StoreError::Conflict(_))));
        let bo = members.invite(&email("bo@example.com"), SiteRole::Owner, &[4; 32], later).unwrap();
        members.set_role(&ada.user.id, SiteRole::Editor).unwrap();
        assert!(matches!(members.remove(&bo.user.id), Err(StoreError::Conflict(_))));
        members.remove(&ada.user.id).unwrap();
        assert!(matches!(members.remove(&ada.user.id), Err(StoreError::NotFound)));
        // Ada's role on the other site is untouched.
        assert_eq!(store.users().grants(&ada.user.id).unwrap().len(), 1);
    }
}
