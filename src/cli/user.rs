//! `sitebot user ...` (the console's users) and `sitebot audit` (what was done, by whom).
//!
//! `user add` and `user reset` print a one-time setup link (valid `console.setup_link_hours`, 24 by
//! default): whoever opens it sets the password. There is never a default password; a reset ends the
//! user's sessions at once. The link names a site of the user (`?site=ID`) when they have one, so a
//! balancer in front of several nodes sends it to this node (#27 scale-out).
//! With `[email]` configured (#25) the link is also e-mailed to the user (queued, then sent at once when
//! the SMTP server takes it; the server's worker retries it otherwise).

use std::path::Path;

use anyhow::Context;
use clap::{Args, Subcommand};
use serde_json::json;

use super::{JsonFlag, SiteFilter};
use crate::config::Config;
use crate::domain::{Email, SiteId, SiteRole, Timestamp};
use crate::secrets::{new_url_token, token_hash};
use crate::store::users::{Grant, User};
use crate::store::{Store, StoreError};

#[derive(Debug, Args)]
pub struct AddArgs {
    /// The person's e-mail address (their sign-in name)
    #[arg(long, value_name = "ADDR")]
    pub email: String,
    /// An administrator: every site, users and tiers
    #[arg(long, conflicts_with_all = ["site", "role"])]
    pub admin: bool,
    /// The site the user may see (with --role)
    #[arg(long, value_name = "ID", requires = "role")]
    pub site: Option<SiteId>,
    /// owner (everything on the site), editor (knowledge and curated answers) or viewer (read only)
    #[arg(long, value_name = "ROLE", requires = "site")]
    pub role: Option<String>,
    /// The console's address as users reach it, for the printed link [default: https://HOSTNAME:PORT]
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// The name visitors see when this person joins a conversation (live hand-off); the site's name
    /// until set. The e-mail address is never shown to visitors
    #[arg(long, value_name = "NAME")]
    pub display_name: Option<String>,
    #[command(flatten)]
    pub out: JsonFlag,
}

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Add a user and print a one-time setup link where they set their password
    Add(AddArgs),
    /// List users and their roles
    List {
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Give a user a role on a site (replacing any other role there)
    Grant {
        #[arg(long, value_name = "ADDR")]
        email: String,
        #[arg(long, value_name = "ID")]
        site: SiteId,
        /// owner, editor or viewer
        #[arg(long, value_name = "ROLE")]
        role: String,
    },
    /// Take a user's role on a site away
    Revoke {
        #[arg(long, value_name = "ADDR")]
        email: String,
        #[arg(long, value_name = "ID")]
        site: SiteId,
    },
    /// Remove a user (their sessions end at once)
    Remove {
        #[arg(long, value_name = "ADDR")]
        email: String,
    },
    /// Print a new setup link for a user (the old one stops working and their sessions end)
    Reset {
        #[arg(long, value_name = "ADDR")]
        email: String,
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
        #[command(flatten)]
        out: JsonFlag,
    },
}

#[derive(Debug, Args)]
pub struct AuditArgs {
    #[command(flatten)]
    pub site: SiteFilter,
    /// Entries at most, newest first
    #[arg(long, default_value_t = 100)]
    pub limit: usize,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// `--base-url`, else `[email] base_url`, else `https://HOST:PORT`: the first configured hostname (else
/// `localhost`) and the listening port (#25 email: one rule with the links the server e-mails).
fn base_url(config: &Config, given: Option<&str>) -> String {
    match given {
        Some(b) => b.trim_end_matches('/').to_owned(),
        None => crate::email::base_url(config, None),
    }
}

/// A setup link, naming `site` (#27 scale-out: a balancer sends it to the site's node, which has the user).
fn setup_link(config: &Config, base: Option<&str>, token: &str, site: Option<SiteId>) -> String {
    crate::email::console_link(&base_url(config, base), &format!("/console/setup/{token}"), site)
}

fn user_by_email(store: &Store, email: &str) -> anyhow::Result<User> {
    store.users().by_email(email)?.with_context(|| format!("no user {email}"))
}

fn role(s: &str) -> anyhow::Result<SiteRole> {
    SiteRole::parse(s).map_err(|e| anyhow::anyhow!("--role: {e}"))
}

/// A new link: the token to print and its hash and expiry to store.
fn new_link(config: &Config) -> (String, [u8; 32], Timestamp) {
    let token = new_url_token();
    let hash = token_hash(&token);
    let expires = Timestamp::from_millis(Timestamp::now().as_millis() + i64::from(config.console.setup_link_hours.max(1)) * 3_600_000);
    (token, hash, expires)
}

fn audit(store: &Store, site: Option<SiteId>, action: &str, detail: serde_json::Value) -> anyhow::Result<()> {
    Ok(store.audit().record("cli", site, action, &detail)?)
}

// #25 email
/// E-mails a setup link when e-mail is on (queued, then sent at once if the SMTP server takes it);
/// `None` when e-mail is off. What to tell the person at the terminal otherwise.
fn email_link(store: &Store, config: &Config, to: &Email, link: &str, expires: Timestamp, reset: bool) -> anyhow::Result<Option<String>> {
    if !crate::email::queue_setup_link(store, config, to, link, expires, reset)? {
        return Ok(None);
    }
    let sent = super::digest::send_now(store, config)?.unwrap_or_default();
    Ok(Some(format!("the link was e-mailed to {} ({})", to.as_str(), super::digest::describe(&sent))))
}

pub fn run(command: UserCommand, config: &Config, data_dir: &Path) -> anyhow::Result<()> {
    let store = crate::app::open_store(config, data_dir)?;
    match command {
        UserCommand::Add(a) => {
            let email = Email::parse(&a.email).map_err(|e| anyhow::anyhow!("--email: {e}"))?;
            anyhow::ensure!(a.admin || a.site.is_some(), "say what the user may see: --admin, or --site ID --role owner|editor|viewer");
            let grant = match (a.site, a.role.as_deref()) {
                (Some(site), Some(r)) => Some(Grant { site_id: site, role: role(r)? }),
                _ => None,
            };
            let (token, hash, expires) = new_link(config);
            let user = store.users().add(&email, a.admin, grant, &hash, expires).map_err(|e| match e {
                StoreError::NotFound => anyhow::anyhow!("no site {}", a.site.map(|s| s.to_string()).unwrap_or_default()),
                other => other.into(),
            })?;
            if let Some(name) = &a.display_name {
                store.users().set_display_name(&user.id, name).map_err(|e| anyhow::anyhow!("--display-name: {e}"))?;
            }
            let detail = json!({"user": user.email, "admin": a.admin, "site": a.site, "role": grant.map(|g| g.role.as_str())});
            audit(&store, a.site, "user_added", detail)?;
            let link = setup_link(config, a.base_url.as_deref(), &token, a.site);
            // #25 email
            let emailed = email_link(&store, config, &email, &link, expires, false)?;
            if a.out.json {
                println!(
                    "{}",
                    json!({"id": user.id, "email": user.email, "admin": user.is_admin, "setupLink": link, "expiresAt": expires, "emailed": emailed.is_some()})
                );
            } else {
                println!(
                    "user {} added ({})",
                    user.email,
                    if a.admin {
                        "admin".to_owned()
                    } else {
                        format!("{} of {}", grant.map_or("", |g| g.role.as_str()), a.site.map(|s| s.to_string()).unwrap_or_default())
                    }
                );
                println!("one-time setup link (valid until {expires}): {link}");
                if let Some(said) = emailed {
                    println!("{said}");
                }
            }
            Ok(())
        }
        UserCommand::List { out } => {
            let users = store.users().list()?;
            if out.json {
                let rows: Vec<_> = users
                    .iter()
                    .map(|(u, g)| {
                        json!({"id": u.id, "email": u.email, "admin": u.is_admin, "passwordSet": u.has_password, "createdAt": u.created_at,
                               "sites": g.iter().map(|g| json!({"site": g.site_id, "role": g.role.as_str()})).collect::<Vec<_>>()})
                    })
                    .collect();
                println!("{}", serde_json::to_string_pretty(&rows)?);
            } else if users.is_empty() {
                println!("no users (sitebot user add --email ADDR --admin)");
            } else {
                for (u, grants) in users {
                    let roles = if u.is_admin {
                        "admin".to_owned()
                    } else {
                        grants.iter().map(|g| format!("{} of {}", g.role, g.site_id)).collect::<Vec<_>>().join(", ")
                    };
                    println!("{}  {}  {}", u.email, if u.has_password { "password set" } else { "setup link not used" }, roles);
                }
            }
            Ok(())
        }
        UserCommand::Grant { email, site, role: r } => {
            let user = user_by_email(&store, &email)?;
            let g = Grant { site_id: site, role: role(&r)? };
            store.users().grant(&user.id, g).map_err(super::site_error(site))?;
            audit(&store, Some(site), "role_granted", json!({"user": user.email, "role": g.role.as_str()}))?;
            println!("{} is now {} of {site}", user.email, g.role);
            Ok(())
        }
        UserCommand::Revoke { email, site } => {
            let user = user_by_email(&store, &email)?;
            anyhow::ensure!(store.users().revoke(&user.id, &site)?, "{} has no role on {site}", user.email);
            audit(&store, Some(site), "role_revoked", json!({"user": user.email}))?;
            println!("{} no longer sees {site}", user.email);
            Ok(())
        }
        UserCommand::Remove { email } => {
            let user = user_by_email(&store, &email)?;
            store.users().remove(&user.id)?;
            audit(&store, None, "user_removed", json!({"user": user.email}))?;
            println!("user {} removed; their sessions have ended", user.email);
            Ok(())
        }
        UserCommand::Reset { email, base_url: given, out } => {
            let user = user_by_email(&store, &email)?;
            let (token, hash, expires) = new_link(config);
            store.users().reset(&user.id, &hash, expires)?;
            audit(&store, None, "password_reset", json!({"user": user.email}))?;
            // Any site of theirs names this node to a balancer; an admin's link names none.
            let site = store.users().grants(&user.id)?.first().map(|g| g.site_id);
            let link = setup_link(config, given.as_deref(), &token, site);
            // #25 email
            let to = Email::parse(&user.email).map_err(|e| anyhow::anyhow!("the stored address {}: {e}", user.email))?;
            let emailed = email_link(&store, config, &to, &link, expires, true)?;
            if out.json {
                println!("{}", json!({"email": user.email, "setupLink": link, "expiresAt": expires, "emailed": emailed.is_some()}));
            } else {
                println!("sessions of {} ended; new one-time setup link (valid until {expires}): {link}", user.email);
                if let Some(said) = emailed {
                    println!("{said}");
                }
            }
            Ok(())
        }
    }
}

pub fn audit_log(a: AuditArgs, config: &Config, data_dir: &Path) -> anyhow::Result<()> {
    let store = crate::app::open_store(config, data_dir)?;
    let entries = store.audit().list(a.site.site, None, a.limit.clamp(1, 10_000))?;
    if a.out.json {
        let rows: Vec<_> = entries
            .iter()
            .map(|e| {
                let detail: serde_json::Value = serde_json::from_str(&e.detail).unwrap_or(serde_json::Value::Null);
                json!({"id": e.id, "at": e.at, "actor": e.actor, "site": e.site_id, "action": e.action, "detail": detail})
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else if entries.is_empty() {
        println!("the audit log is empty");
    } else {
        for e in entries {
            let site = e.site_id.map(|s| s.to_string()).unwrap_or_else(|| "-".into());
            println!("{}  {}  {}  {}  {}", e.at, e.actor.escape_debug(), site, e.action, e.detail.escape_debug());
        }
    }
    Ok(())
}
