//! `sitebot webhooks ...`: inspect the outbox and its endpoints, replay and purge events, re-enable an
//! endpoint, send a test event.

use std::path::Path;

use anyhow::Context;
use clap::{Subcommand, ValueEnum};

use super::{JsonFlag, SiteArg, SiteFilter};
use crate::config::Config;
use crate::domain::{SiteId, Timestamp};
use crate::outbox::deliver::Sender;
use crate::store::outbox::{self, Endpoint, EndpointState, OutboxStatus};
use crate::store::{Store, StoreError};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum PurgeStatus {
    Dead,
}

#[derive(Debug, Subcommand)]
pub enum WebhooksCommand {
    /// List webhook events, newest first
    List {
        #[command(flatten)]
        site: SiteFilter,
        /// Only events in this state
        #[arg(long, value_enum, env = "SITEBOT_WEBHOOK_STATUS")]
        status: Option<OutboxStatus>,
        /// At most this many
        #[arg(long, default_value_t = 100, env = "SITEBOT_LIMIT")]
        limit: usize,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Show one event: its state, payload and every attempt with status codes and errors
    Show {
        /// The event id (msg_...), which is also its webhook-id
        id: String,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Each site's endpoint: URL, state (healthy, backing off until T, disabled since T), deliveries in
    /// flight, events pending, failures in a row and the last error
    Endpoints {
        #[command(flatten)]
        site: SiteFilter,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Re-enable a site's endpoint disabled by a 410 or by failing for `webhooks.disable_after` (or clear
    /// its backoff): its waiting events are due now, as a fresh round of attempts
    Enable {
        #[command(flatten)]
        site: SiteArg,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Send an event again, with the same webhook-id: it becomes pending and due now (a running server
    /// picks it up within about a second)
    Replay {
        /// The event id (msg_...)
        id: String,
    },
    /// Send a signed `webhook.test` event to a site's webhook now and print the receiver's answer
    Test {
        /// The site whose webhook URL and secret to use
        #[command(flatten)]
        site: SiteArg,
    },
    /// Delete events for good
    Purge {
        /// Which events (only dead ones can be purged)
        #[arg(long, value_enum, env = "SITEBOT_WEBHOOK_STATUS")]
        status: PurgeStatus,
        #[command(flatten)]
        site: SiteFilter,
    },
}

/// Replays an event (the CLI command and the tests share this).
pub fn replay(store: &Store, id: &str) -> anyhow::Result<outbox::Message> {
    store.outbox().replay(id).map_err(|e| match e {
        StoreError::NotFound => anyhow::anyhow!("no webhook event {id}"),
        other => other.into(),
    })
}

/// Re-enables a site's endpoint (the CLI command and the tests share this).
pub fn enable(store: &Store, site: SiteId) -> anyhow::Result<Endpoint> {
    store.outbox().enable_endpoint(site, Timestamp::now()).map_err(super::site_error(site))
}

/// `healthy`, `backing off until T`, `disabled since T`, `no URL`.
fn state_text(e: &Endpoint) -> String {
    match (e.state, e.retry_at, e.disabled_at) {
        (EndpointState::BackingOff, Some(at), _) => format!("backing off until {}", at.rfc3339_millis()),
        (EndpointState::Disabled, _, Some(at)) => format!("disabled since {}", at.rfc3339()),
        (EndpointState::NoUrl, _, _) => "no URL".to_owned(),
        _ => "healthy".to_owned(),
    }
}

fn print_endpoints(endpoints: &[Endpoint]) {
    if endpoints.is_empty() {
        println!("no webhook endpoints");
        return;
    }
    for e in endpoints {
        println!("{}  {}", e.site_id, e.url.as_ref().map_or("(no URL)", |u| u.as_str()));
        println!("  state:       {}", state_text(e));
        println!("  in flight:   {}", e.in_flight);
        println!("  pending:     {}", e.pending);
        match e.failing_since {
            Some(since) if e.consecutive_failures > 0 => {
                println!("  failures:    {} in a row, since {}", e.consecutive_failures, since.rfc3339())
            }
            _ => println!("  failures:    0"),
        }
        if let Some(at) = e.last_success_at {
            println!("  last success: {}", at.rfc3339());
        }
        if let Some(err) = &e.last_error {
            println!("  last error:  {err}");
        }
    }
}

pub fn run(cmd: WebhooksCommand, config: &Config, data_dir: &Path) -> anyhow::Result<()> {
    let store = crate::app::open_store(config, data_dir)?;
    match cmd {
        WebhooksCommand::List { site, status, limit, out } => {
            let rows = store.outbox().list(site.site, status, limit)?;
            if out.json {
                println!("{}", serde_json::to_string_pretty(&rows)?);
            } else if rows.is_empty() {
                println!("no webhook events");
            } else {
                println!("{:<30}  {:<36}  {:<16}  {:<9}  {:>8}  {:<20}  last error", "id", "siteId", "type", "status", "attempts", "created");
                for m in rows {
                    let err = m.last_error.as_deref().unwrap_or("");
                    println!(
                        "{:<30}  {:<36}  {:<16}  {:<9}  {:>8}  {:<20}  {err}",
                        m.id,
                        m.site_id,
                        m.event_type,
                        m.status,
                        m.attempts,
                        m.created_at.rfc3339()
                    );
                }
            }
            Ok(())
        }
        WebhooksCommand::Endpoints { site, out } => {
            let endpoints = store.outbox().endpoints(site.site, Timestamp::now())?;
            if out.json {
                println!("{}", serde_json::to_string_pretty(&endpoints)?);
            } else {
                print_endpoints(&endpoints);
            }
            Ok(())
        }
        WebhooksCommand::Enable { site: SiteArg { site }, out } => {
            let endpoint = enable(&store, site)?;
            if out.json {
                println!("{}", serde_json::to_string_pretty(&endpoint)?);
            } else {
                println!("site {site}'s webhook endpoint is enabled; {} waiting event(s) are due now", endpoint.pending);
                if endpoint.url.is_none() {
                    println!("note: the site has no webhook URL; its events wait until one is set");
                }
            }
            Ok(())
        }
        WebhooksCommand::Show { id, out } => {
            let (msg, payload, attempts) = store.outbox().get(&id)?.ok_or_else(|| anyhow::anyhow!("no webhook event {id}"))?;
            if out.json {
                let payload: serde_json::Value = serde_json::from_str(&payload).unwrap_or(serde_json::Value::String(payload));
                println!("{}", serde_json::to_string_pretty(&serde_json::json!({"event": msg, "payload": payload, "attempts": attempts}))?);
                return Ok(());
            }
            println!("id:            {}", msg.id);
            println!("site:          {}", msg.site_id);
            println!("type:          {}", msg.event_type);
            println!("status:        {}", msg.status);
            println!("created:       {}", msg.created_at);
            if let Some(at) = &msg.delivered_at {
                println!("delivered:     {at}");
            } else if msg.status == OutboxStatus::Pending {
                println!("next attempt:  {}", msg.next_attempt_at.rfc3339_millis());
            }
            println!("payload:       {payload}");
            println!("attempts:      {}", attempts.len());
            for a in attempts {
                let status = a.status_code.map(|s| s.to_string()).unwrap_or_else(|| "-".into());
                println!("  #{:<3} {}  status {:<3}  {:>6} ms  {}", a.attempt, a.at, status, a.duration_ms, a.error.as_deref().unwrap_or("ok"));
            }
            Ok(())
        }
        WebhooksCommand::Replay { id } => {
            let msg = replay(&store, &id)?;
            let site = store.site(msg.site_id).get()?;
            println!("{} is pending again and due now (same webhook-id)", msg.id);
            match site {
                Some(s) if s.webhook_url.is_none() => println!("note: site {} has no webhook URL; the event waits until one is set", s.id),
                Some(s) if s.webhook_disabled_at.is_some() => {
                    println!("note: site {}'s endpoint is disabled; the event waits until `sitebot webhooks enable --site {}`", s.id, s.id)
                }
                _ => {}
            }
            Ok(())
        }
        WebhooksCommand::Test { site: SiteArg { site: site_id } } => {
            let site = store.site(site_id).get()?.ok_or_else(|| anyhow::anyhow!("no site {site_id}"))?;
            let url = site.webhook_url.clone().ok_or_else(|| anyhow::anyhow!("site {site_id} has no webhook URL (site update --webhook-url)"))?;
            let secrets = store.site(site_id).signing_secrets()?;
            let sender = Sender::new(&config.webhooks).context("cannot build the HTTP client")?;
            let crate::outbox::test_event::Tested { id, sent } =
                super::runtime()?.block_on(crate::outbox::test_event::send(&sender, site_id, &url, &secrets, "`sitebot webhooks test`"))?;
            println!("sent {id} (webhook.test) to {}", url.as_str());
            if site.webhook_disabled_at.is_some() {
                println!("note: this endpoint is disabled for events; `sitebot webhooks enable --site {site_id}` re-enables it");
            }
            match sent.status {
                Some(status) => println!("status: {status} ({} ms)", sent.duration.as_millis()),
                None => println!("no answer ({} ms)", sent.duration.as_millis()),
            }
            if let Some(e) = &sent.error {
                println!("error: {e}");
            }
            if !sent.body.is_empty() {
                println!("body: {}", sent.body);
            }
            if sent.verdict != crate::outbox::deliver::Verdict::Delivered {
                anyhow::bail!("the test event was not accepted");
            }
            Ok(())
        }
        WebhooksCommand::Purge { status: PurgeStatus::Dead, site } => {
            let n = store.outbox().purge_dead(site.site)?;
            println!("purged {n} dead webhook event(s)");
            Ok(())
        }
    }
}
