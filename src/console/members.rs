//! The site's users in the console (#25): who may see the site and with which role; invite by e-mail with
//! a role, change a role, remove. Owners for their own site, admins for every site; an owner grants at
//! most owner (there is no admin role here), and the store keeps the site's last owner
//! (`store::members`). Every change is audited (`user_invited`, `role_granted`, `role_revoked`).
//!
//! - `GET /console/sites/{site}/users`: the list and the invitation form.
//! - `POST .../users/invite`: a new address becomes a user with a one-time setup link, shown once in
//!   the answer, as `sitebot user add` prints it; a known one gets the role.
//! - `POST .../users/{user}/role`, `POST .../users/{user}/remove`.

use std::sync::Arc;

use poem::http::{StatusCode, header};
use poem::web::{Data, Path};
use poem::{Body, Request, Response, handler};
use serde_json::json;

use super::pages::{self, InviteLink, MemberRow};
use super::session::Me;
use super::texts::{self, Texts};
use super::views::{self, field, managed_site, see_other};
use crate::app::AppState;
use crate::domain::{Email, SiteId, SiteRole, Timestamp, UserId};
use crate::secrets::{new_url_token, token_hash};
use crate::store::users::User;
use crate::store::{Site, StoreError};

const ROLES: [&str; 3] = ["viewer", "editor", "owner"];

/// What an invitation did: the user, and for a new one the setup link and until when it works.
pub struct Invitation {
    pub user: User,
    pub link: Option<(String, Timestamp)>,
}

/// Invites `email` to `site` with `role` on behalf of `actor`, audited: the one place an invitation
/// happens, so that sending it by e-mail is one line here. `base` is the console's address as the
/// inviter reaches it (`https://host:port`).
pub async fn invite(state: &AppState, actor: &str, site: SiteId, email: Email, role: SiteRole, base: &str) -> Result<Invitation, StoreError> {
    let token = new_url_token();
    let hash = token_hash(&token);
    let expires = Timestamp::from_millis(Timestamp::now().as_millis() + i64::from(state.config.console.setup_link_hours.max(1)) * 3_600_000);
    let invited = state.store.run(move |s| s.site(site).members().invite(&email, role, &hash, expires)).await?;
    // The link names the site, so a balancer sends it to this node, which has the new user (#27).
    let link = invited.new_user.then(|| (crate::email::console_link(base, &format!("/console/setup/{token}"), Some(site)), expires));
    let detail = json!({"user": invited.user.email, "role": role.as_str(), "newUser": invited.new_user});
    views::audit(state, actor, Some(site), "user_invited", detail).await;
    // With e-mail configured the setup link is e-mailed too (still shown once on the page).
    if let Some((url, until)) = &link {
        let (config, url, until) = (state.config.clone(), url.clone(), *until);
        let to = crate::domain::Email::parse(&invited.user.email).map_err(|e| StoreError::Invalid(e.0))?;
        state.store.run(move |s| crate::email::queue_setup_link(s, &config, &to, &url, until, false).map(|_| ())).await?;
    }
    Ok(Invitation { user: invited.user, link })
}

/// `https://` and the host this request was sent to: the console as the inviter reaches it (a
/// same-origin POST, so it is the address in their browser).
fn base_of(req: &Request) -> String {
    let host = req.headers().get(header::HOST).and_then(|v| v.to_str().ok()).or_else(|| req.uri().authority().map(|a| a.as_str())).unwrap_or("localhost");
    format!("https://{host}")
}

/// What the page shows beyond the list.
#[derive(Default)]
struct Extra {
    error: Option<String>,
    invite_email: String,
    invite_role: String,
    link: Option<InviteLink>,
    invited_existing: Option<String>,
    saved: bool,
}

async fn page(state: &AppState, t: &'static Texts, me: &Me, site: Site, extra: Extra) -> Response {
    let id = site.id;
    let users = match state.store.run(move |s| s.users().of_site(&id)).await {
        Ok(u) => u,
        Err(e) => return views::failed(t, Some(me), e),
    };
    let rows = users
        .into_iter()
        .map(|(u, role)| MemberRow {
            id: u.id.to_string(),
            is_me: u.id == me.user.id,
            admin: u.is_admin && role.is_none(),
            role: role.map(|r| r.as_str().to_owned()).unwrap_or_default(),
            password_set: u.has_password,
            email: u.email,
        })
        .collect();
    let status = if extra.error.is_some() { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::OK };
    let invite_role = if extra.invite_role.is_empty() { "viewer".to_owned() } else { extra.invite_role };
    views::render(
        status,
        pages::Members {
            t,
            me: Some(views::header_of(me)),
            nav: views::site_nav(site, SiteRole::Owner, "users"),
            csrf: &me.csrf,
            rows,
            roles: ROLES,
            error: extra.error,
            invite_email: extra.invite_email,
            invite_role,
            link: extra.link,
            invited_existing: extra.invited_existing,
            saved: extra.saved,
        },
    )
}

#[handler]
pub async fn members_page(req: &Request, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, site) = match managed_site(state, req, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let saved = req.uri().query().is_some_and(|q| q.split('&').any(|p| p == "saved=1"));
    page(state, t, &me, site, Extra { saved, ..Default::default() }).await
}

/// A role an owner may grant (owner at most), or what is wrong with it.
fn role(t: &Texts, raw: &str) -> Result<SiteRole, String> {
    SiteRole::parse(raw.trim()).map_err(|e| format!("{}: {}", t.member_role, e.0))
}

#[handler]
pub async fn invite_member(req: &Request, body: Body, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, fields, site) = match views::owner_post(state, req, body, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let (typed_email, typed_role) = (field(&fields, "email").trim().to_owned(), field(&fields, "role").trim().to_owned());
    let parsed = Email::parse(&typed_email).map_err(|e| format!("{}: {}", t.email, e.0)).and_then(|e| Ok((e, role(t, &typed_role)?)));
    let refused = |error: String| Extra { error: Some(error), invite_email: typed_email.clone(), invite_role: typed_role.clone(), ..Default::default() };
    let (email, granted) = match parsed {
        Ok(v) => v,
        Err(error) => return page(state, t, &me, site, refused(error)).await,
    };
    match invite(state, &me.email, site.id, email, granted, &base_of(req)).await {
        Ok(Invitation { user, link: Some((link, expires)) }) => {
            let link = InviteLink { email: user.email, link, expires: expires.rfc3339().replace('T', " ").trim_end_matches('Z').to_owned() + " UTC" };
            let extra = Extra { link: Some(link), invite_role: granted.as_str().to_owned(), ..Default::default() };
            page(state, t, &me, site, extra).await
        }
        Ok(Invitation { user, link: None }) => {
            let extra = Extra { invited_existing: Some(user.email), invite_role: granted.as_str().to_owned(), ..Default::default() };
            page(state, t, &me, site, extra).await
        }
        Err(StoreError::Conflict(_)) => page(state, t, &me, site, refused(t.already_member.to_owned())).await,
        Err(e) => views::failed(t, Some(&me), e),
    }
}

/// A member of the site by the id in the URL, with their e-mail address; `Err` is the 404 page.
async fn member(state: &AppState, t: &Texts, me: &Me, site: &Site, raw: &str) -> Result<(UserId, String), Response> {
    let missing = || views::not_found(t, Some(me));
    let Ok(id) = UserId::parse(raw) else { return Err(missing()) };
    let site_id = site.id;
    let users = state.store.run(move |s| s.users().of_site(&site_id)).await.map_err(|e| views::failed(t, Some(me), e))?;
    // Only a user holding a role here is one this page may act on (an admin without one is not).
    users.into_iter().find(|(u, r)| u.id == id && r.is_some()).map(|(u, _)| (u.id, u.email)).ok_or_else(missing)
}

#[handler]
pub async fn change_role(req: &Request, body: Body, Path((raw, user)): Path<(String, String)>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, fields, site) = match views::owner_post(state, req, body, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let (uid, email) = match member(state, t, &me, &site, &user).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let granted = match role(t, field(&fields, "role")) {
        Ok(r) => r,
        Err(error) => return page(state, t, &me, site, Extra { error: Some(error), ..Default::default() }).await,
    };
    let (id, who) = (site.id, uid.clone());
    match state.store.run(move |s| s.site(id).members().set_role(&who, granted)).await {
        Ok(()) => {}
        Err(StoreError::Conflict(_)) => return page(state, t, &me, site, Extra { error: Some(t.last_owner.to_owned()), ..Default::default() }).await,
        Err(StoreError::NotFound) => return views::not_found(t, Some(&me)),
        Err(e) => return views::failed(t, Some(&me), e),
    }
    views::audit(state, &me.email, Some(id), "role_granted", json!({"user": email, "role": granted.as_str()})).await;
    see_other(&format!("/console/sites/{id}/users?saved=1"))
}

#[handler]
pub async fn remove_member(req: &Request, body: Body, Path((raw, user)): Path<(String, String)>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, _, site) = match views::owner_post(state, req, body, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let (uid, email) = match member(state, t, &me, &site, &user).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let id = site.id;
    match state.store.run(move |s| s.site(id).members().remove(&uid)).await {
        Ok(()) => {}
        Err(StoreError::Conflict(_)) => return page(state, t, &me, site, Extra { error: Some(t.last_owner.to_owned()), ..Default::default() }).await,
        Err(StoreError::NotFound) => return views::not_found(t, Some(&me)),
        Err(e) => return views::failed(t, Some(&me), e),
    }
    views::audit(state, &me.email, Some(id), "role_revoked", json!({"user": email})).await;
    see_other(&format!("/console/sites/{id}/users?saved=1"))
}
