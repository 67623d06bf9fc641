//! `sitebot digest send [--site ID]` (#25 email): the digest of the last seven days, now, to each owner
//! who wants it; and [`send_now`], which the CLI's e-mailing commands share.
//!
//! A command queues its e-mails in the store (as the server does) and then tries to send what is due at
//! once, so it works without a running server; what the SMTP server does not accept now stays queued
//! for the server's worker, which retries it. A running server's worker may send them first: the queue's
//! leases make sure only one of them sends each e-mail.

use std::path::Path;

use clap::{Args, Subcommand};
use serde_json::json;

use super::JsonFlag;
use crate::config::Config;
use crate::domain::SiteId;
use crate::email::worker::Summary;
use crate::store::{Store, StoreError};

#[derive(Debug, Subcommand)]
pub enum DigestCommand {
    /// Send the digest of the last seven days now (questions, answered, new unanswered groups, leads)
    /// to the owners of one site or of every site who want it
    Send(SendArgs),
}

#[derive(Debug, Args)]
pub struct SendArgs {
    /// Only this site [default: every site]
    #[arg(long, value_name = "ID", env = "SITEBOT_DIGEST_SITE")]
    pub site: Option<SiteId>,
    #[command(flatten)]
    pub out: JsonFlag,
}

/// Sends what is due in the e-mail queue now, round after round while there is some (at most a few
/// rounds: what is not accepted waits for its retry, in the server). `None` when e-mail is off.
pub(super) fn send_now(store: &Store, config: &Config) -> anyhow::Result<Option<Summary>> {
    let Some(worker) = crate::email::Worker::new(store.clone(), config, crate::email::base_url(config, None))? else { return Ok(None) };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async {
        let mut total = Summary::default();
        for _ in 0..16 {
            let s = worker.run_once().await?;
            if s.claimed == 0 {
                break;
            }
            total.claimed += s.claimed;
            total.sent += s.sent;
            total.retrying += s.retrying;
            total.dead += s.dead;
        }
        Ok(Some(total))
    })
}

/// What a sending round says to the person at the terminal.
pub(super) fn describe(s: &Summary) -> String {
    match (s.retrying, s.dead) {
        (0, 0) => format!("{} sent", s.sent),
        (r, 0) => format!("{} sent; {r} not accepted yet (the server retries them)", s.sent),
        (r, d) => format!("{} sent; {r} not accepted yet (the server retries them); {d} refused for good (see the server's log)", s.sent),
    }
}

pub fn run(cmd: DigestCommand, config: &Config, data_dir: &Path) -> anyhow::Result<()> {
    let DigestCommand::Send(a) = cmd;
    anyhow::ensure!(config.email.enabled(), "e-mail is off: set [email] smtp_url and from (or SITEBOT_EMAIL__SMTP_URL and SITEBOT_EMAIL__FROM)");
    let store = crate::app::open_store(config, data_dir)?;
    let queued = crate::email::digest::queue_now(&store, a.site).map_err(|e| match (e, a.site) {
        (StoreError::NotFound, Some(id)) => anyhow::anyhow!("no site {id}"),
        (e, _) => e.into(),
    })?;
    let sent = send_now(&store, config)?.unwrap_or_default();
    if a.out.json {
        println!("{}", json!({"sites": queued.sites, "queued": queued.emails, "sent": sent.sent, "retrying": sent.retrying, "dead": sent.dead}));
    } else {
        println!("digests of {} site(s) queued for {} owner(s); {}", queued.sites, queued.emails, describe(&sent));
    }
    Ok(())
}
