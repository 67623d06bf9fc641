//! `sitebot site ...`: create, list, show, update, disable, enable and rotate credentials.

use std::path::Path;

use anyhow::Context;
use clap::{Args, Subcommand};

use crate::config::Config;
use crate::domain::{Currency, Lang, Origin, SiteId, Tier, WebhookUrl};
use crate::store::{NewSite, Site, SiteCredentials, SiteUpdate, Store, sites};

#[derive(Debug, Subcommand)]
pub enum SiteCommand {
    /// Create a site; prints its id, webhook signing secret and (Pro and up) bearer token, shown only now
    Create(CreateArgs),
    /// List sites
    List {
        /// Print JSON
        #[arg(long, env = "SITEBOT_JSON")]
        json: bool,
    },
    /// Show one site
    Show {
        id: String,
        #[arg(long, env = "SITEBOT_JSON")]
        json: bool,
    },
    /// Change a site's settings
    Update(UpdateArgs),
    /// Refuse the site's requests with 403 site_disabled
    Disable { id: String },
    /// Serve the site again
    Enable { id: String },
    /// Replace the bearer token (the old one stops working now)
    RotateToken {
        id: String,
        #[arg(long, env = "SITEBOT_JSON")]
        json: bool,
    },
    /// Replace the webhook signing secret (the old one also signs for 24 h)
    RotateSecret {
        id: String,
        #[arg(long, env = "SITEBOT_JSON")]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub struct CreateArgs {
    /// Display name
    #[arg(long, env = "SITEBOT_SITE_NAME")]
    name: String,
    /// Vertical slug (e.g. dental)
    #[arg(long, env = "SITEBOT_SITE_VERTICAL")]
    vertical: String,
    #[arg(long, value_enum, env = "SITEBOT_SITE_TIER")]
    tier: Tier,
    /// ISO 4217 currency (e.g. EUR)
    #[arg(long, env = "SITEBOT_SITE_CURRENCY")]
    currency: String,
    /// Default language, BCP 47 (e.g. en)
    #[arg(long, env = "SITEBOT_SITE_LANG")]
    lang: String,
    /// Browser origin allowed to call the API (repeatable; none means any origin)
    #[arg(long = "allowed-origin", env = "SITEBOT_SITE_ALLOWED_ORIGINS", value_delimiter = ',')]
    allowed_origins: Vec<String>,
    /// CRM webhook URL
    #[arg(long, env = "SITEBOT_SITE_WEBHOOK_URL")]
    webhook_url: Option<String>,
    /// Webhook events to send, comma separated
    #[arg(long, env = "SITEBOT_SITE_EVENTS", value_delimiter = ',', default_value = "lead.captured")]
    events: Vec<String>,
    /// Print {"siteId", "webhookSecret", "bearerToken"} as JSON
    #[arg(long, env = "SITEBOT_JSON")]
    json: bool,
}

#[derive(Debug, Args)]
pub struct UpdateArgs {
    id: String,
    #[arg(long)]
    name: Option<String>,
    #[arg(long)]
    vertical: Option<String>,
    #[arg(long, value_enum)]
    tier: Option<Tier>,
    #[arg(long)]
    currency: Option<String>,
    #[arg(long)]
    lang: Option<String>,
    /// Replace the allowed origins with these (repeatable)
    #[arg(long = "allowed-origin", value_delimiter = ',')]
    allowed_origins: Vec<String>,
    /// Allow any origin again
    #[arg(long, conflicts_with = "allowed_origins")]
    clear_origins: bool,
    /// Set the CRM webhook URL (also re-enables an endpoint disabled by a 410)
    #[arg(long)]
    webhook_url: Option<String>,
    /// Remove the webhook
    #[arg(long, conflicts_with = "webhook_url")]
    no_webhook: bool,
    /// Webhook events to send, comma separated
    #[arg(long, value_delimiter = ',')]
    events: Option<Vec<String>>,
    #[arg(long, env = "SITEBOT_JSON")]
    json: bool,
}

fn parse_id(s: &str) -> anyhow::Result<SiteId> {
    SiteId::parse(s).map_err(|e| anyhow::anyhow!("{s}: {e}"))
}

fn parse_origins(list: &[String]) -> anyhow::Result<Vec<Origin>> {
    list.iter().filter(|s| !s.trim().is_empty()).map(|s| Origin::parse(s).map_err(anyhow::Error::from)).collect()
}

fn print_site(site: &Site, json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(site)?);
        return Ok(());
    }
    let origins =
        if site.allowed_origins.is_empty() { "(any)".to_owned() } else { site.allowed_origins.iter().map(|o| o.as_str()).collect::<Vec<_>>().join(", ") };
    println!("siteId:         {}", site.id);
    println!("name:           {}", site.name);
    println!("vertical:       {}", site.vertical);
    println!("tier:           {} ({} requests/min)", site.tier, site.tier.per_minute());
    println!("currency:       {}", site.currency);
    println!("lang:           {}", site.lang);
    println!("enabled:        {}", site.enabled);
    println!("origins:        {origins}");
    println!("webhook:        {}", site.webhook_url.as_deref().unwrap_or("(none)"));
    if let Some(at) = &site.webhook_disabled_at {
        println!("webhook state:  disabled at {at} (receiver answered 410 Gone; set --webhook-url again to re-enable)");
    }
    println!("events:         {}", site.webhook_events.join(","));
    println!("bearer token:   {}", if site.has_bearer_token { "set (shown only at creation or rotation)" } else { "none" });
    println!("created:        {}", site.created_at);
    Ok(())
}

fn print_credentials(creds: &SiteCredentials, json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string(creds)?);
        return Ok(());
    }
    println!("siteId:         {}", creds.site_id);
    if let Some(s) = &creds.webhook_secret {
        println!("webhookSecret:  {s}");
    }
    if let Some(t) = &creds.bearer_token {
        println!("bearerToken:    {t}");
    }
    println!("Store these now: they are kept only in hashed or sealed form and will not be shown again.");
    Ok(())
}

pub fn run(cmd: SiteCommand, config: &Config, data_dir: &Path) -> anyhow::Result<()> {
    let store: Store = crate::app::open_store(config, data_dir)?;
    let policy = config.webhooks.policy();
    match cmd {
        SiteCommand::Create(a) => {
            let new = NewSite {
                name: a.name,
                vertical: crate::domain::Slug::vertical(&a.vertical)?.to_string(),
                tier: a.tier,
                currency: Currency::parse(&a.currency)?,
                lang: Lang::parse(&a.lang)?,
                allowed_origins: parse_origins(&a.allowed_origins)?,
                webhook_url: a.webhook_url.as_deref().map(|u| WebhookUrl::parse(u, policy)).transpose()?,
                webhook_events: a.events,
            };
            let keyring = store.keyring().clone();
            let (_, creds) = store.write_blocking(|tx| sites::create(tx, &keyring, new)).context("cannot create the site")?;
            print_credentials(&creds, a.json)
        }
        SiteCommand::List { json } => {
            let all = store.read_blocking(sites::list)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&all)?);
            } else if all.is_empty() {
                println!("no sites yet: sitebot site create --help");
            } else {
                println!("{:<36}  {:<10}  {:<8}  {:<12}  name", "siteId", "tier", "enabled", "vertical");
                for s in all {
                    println!("{:<36}  {:<10}  {:<8}  {:<12}  {}", s.id, s.tier, s.enabled, s.vertical, s.name);
                }
            }
            Ok(())
        }
        SiteCommand::Show { id, json } => {
            let id = parse_id(&id)?;
            let site = store.read_blocking(|c| sites::get(c, &id))?.ok_or_else(|| anyhow::anyhow!("no site {id}"))?;
            print_site(&site, json)
        }
        SiteCommand::Update(a) => {
            let id = parse_id(&a.id)?;
            let up = SiteUpdate {
                name: a.name,
                vertical: a.vertical.as_deref().map(crate::domain::Slug::vertical).transpose()?.map(|s| s.to_string()),
                tier: a.tier,
                currency: a.currency.as_deref().map(Currency::parse).transpose()?,
                lang: a.lang.as_deref().map(Lang::parse).transpose()?,
                allowed_origins: if a.clear_origins {
                    Some(vec![])
                } else if a.allowed_origins.is_empty() {
                    None
                } else {
                    Some(parse_origins(&a.allowed_origins)?)
                },
                webhook_url: if a.no_webhook { Some(None) } else { a.webhook_url.as_deref().map(|u| WebhookUrl::parse(u, policy).map(Some)).transpose()? },
                webhook_events: a.events,
            };
            let (site, creds) = store.write_blocking(|tx| sites::update(tx, &id, up)).map_err(not_found(id))?;
            print_site(&site, a.json)?;
            if let Some(c) = creds {
                print_credentials(&c, a.json)?;
            }
            Ok(())
        }
        SiteCommand::Disable { id } => set_enabled(&store, &id, false),
        SiteCommand::Enable { id } => set_enabled(&store, &id, true),
        SiteCommand::RotateToken { id, json } => {
            let id = parse_id(&id)?;
            let token = store.write_blocking(|tx| sites::rotate_token(tx, &id)).map_err(not_found(id))?;
            print_credentials(&SiteCredentials { site_id: id, webhook_secret: None, bearer_token: Some(token) }, json)
        }
        SiteCommand::RotateSecret { id, json } => {
            let id = parse_id(&id)?;
            let keyring = store.keyring().clone();
            let secret = store.write_blocking(|tx| sites::rotate_secret(tx, &keyring, &id)).map_err(not_found(id))?;
            print_credentials(&SiteCredentials { site_id: id, webhook_secret: Some(secret), bearer_token: None }, json)?;
            if !json {
                println!("The previous secret also signs deliveries for the next 24 hours.");
            }
            Ok(())
        }
    }
}

fn not_found(id: SiteId) -> impl Fn(crate::store::StoreError) -> anyhow::Error {
    move |e| match e {
        crate::store::StoreError::NotFound => anyhow::anyhow!("no site {id}"),
        other => other.into(),
    }
}

fn set_enabled(store: &Store, id: &str, enabled: bool) -> anyhow::Result<()> {
    let id = parse_id(id)?;
    let site = store.write_blocking(|tx| sites::set_enabled(tx, &id, enabled)).map_err(not_found(id))?;
    println!("site {} is now {}", site.id, if site.enabled { "enabled" } else { "disabled" });
    Ok(())
}
