//! `sitebot site ...`: create, list, show, update, disable, enable, rotate credentials and delete (export,
//! import and unfreeze are in `transfer`).

use std::path::Path;

use anyhow::Context;
use clap::{Args, Subcommand};

use super::{JsonFlag, site_error};
use crate::config::Config;
use crate::domain::{
    AnswerMode, ClosedDates, Currency, EventType, HexColor, Lang, Origin, SiteId, Slug, Tier, TimeZone, WebhookUrl, WeeklyHours, WidgetPosition,
};
use crate::store::{NewSite, Site, SiteCredentials, SiteUpdate, Store};

#[derive(Debug, Subcommand)]
pub enum SiteCommand {
    /// Create a site; prints its id, webhook signing secret and (Pro and up) bearer token, shown only now
    Create(CreateArgs),
    /// List sites
    List(#[command(flatten)] JsonFlag),
    /// Show one site
    Show {
        /// The site's id
        id: SiteId,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Change a site's settings
    Update(UpdateArgs),
    /// Refuse the site's requests with 403 site_disabled
    Disable {
        /// The site's id
        id: SiteId,
    },
    /// Serve the site again
    Enable {
        /// The site's id
        id: SiteId,
    },
    /// Replace the bearer token (the old one stops working now)
    RotateToken {
        /// The site's id
        id: SiteId,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Replace the webhook signing secret (the old one also signs for 24 h)
    RotateSecret {
        /// The site's id
        id: SiteId,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Delete the site and everything of it (knowledge, indexes, questions, conversations, leads,
    /// webhook events, counters); prints what was removed. Cannot be undone
    Delete {
        /// The site's id
        id: SiteId,
        /// Confirm: without it nothing is deleted
        #[arg(long, env = "SITEBOT_SITE_DELETE_YES")]
        yes: bool,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Move the site away: mark it as moving (from now on its leads and other writes answer 503 with
    /// Retry-After here), then write it with everything it owns to a file, its secrets sealed with an
    /// export key
    Export(super::transfer::ExportArgs),
    /// Add a site exported from another node, verified by its MAC and checksum and refused whole if it
    /// holds anything of another site; lists the console users new here, who need a setup link
    Import(super::transfer::ImportArgs),
    /// Serve a site marked as moving here again (a move abandoned)
    Unfreeze {
        /// The site's id
        id: SiteId,
    },
}

#[derive(Debug, Args)]
pub struct CreateArgs {
    /// Display name
    #[arg(long, env = "SITEBOT_SITE_NAME")]
    name: String,
    /// Vertical slug (e.g. dental)
    #[arg(long, env = "SITEBOT_SITE_VERTICAL", value_parser = Slug::vertical)]
    vertical: Slug,
    /// Service tier: its request budget, and whether it has a bearer token
    #[arg(long, value_enum, env = "SITEBOT_SITE_TIER")]
    tier: Tier,
    /// ISO 4217 currency (e.g. EUR)
    #[arg(long, env = "SITEBOT_SITE_CURRENCY")]
    currency: Currency,
    /// Default language, BCP 47 (e.g. en)
    #[arg(long, env = "SITEBOT_SITE_LANG")]
    lang: Lang,
    /// Browser origin allowed to call the API (repeatable; none means any origin)
    #[arg(long = "allowed-origin", env = "SITEBOT_SITE_ALLOWED_ORIGINS", value_delimiter = ',', value_parser = Origin::parse)]
    allowed_origins: Vec<Origin>,
    /// CRM webhook URL (checked against webhooks.allow_http and webhooks.allow_private_networks)
    #[arg(long, env = "SITEBOT_SITE_WEBHOOK_URL")]
    webhook_url: Option<String>,
    /// Webhook events to send, comma separated
    #[arg(long, env = "SITEBOT_SITE_EVENTS", value_delimiter = ',', default_value = "lead.captured", value_parser = EventType::subscribable)]
    events: Vec<EventType>,
    #[command(flatten)]
    out: JsonFlag,
}

#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// The site's id
    id: SiteId,
    /// New display name
    #[arg(long, env = "SITEBOT_SITE_NAME")]
    name: Option<String>,
    /// New vertical slug
    #[arg(long, env = "SITEBOT_SITE_VERTICAL", value_parser = Slug::vertical)]
    vertical: Option<Slug>,
    /// New tier; moving up from starter prints the new bearer token
    #[arg(long, value_enum, env = "SITEBOT_SITE_TIER")]
    tier: Option<Tier>,
    /// New ISO 4217 currency
    #[arg(long, env = "SITEBOT_SITE_CURRENCY")]
    currency: Option<Currency>,
    /// New default language, BCP 47
    #[arg(long, env = "SITEBOT_SITE_LANG")]
    lang: Option<Lang>,
    /// Replace the allowed origins with these (repeatable)
    #[arg(long = "allowed-origin", env = "SITEBOT_SITE_ALLOWED_ORIGINS", value_delimiter = ',', value_parser = Origin::parse)]
    allowed_origins: Vec<Origin>,
    /// Allow any origin again
    #[arg(long, env = "SITEBOT_SITE_CLEAR_ORIGINS", conflicts_with = "allowed_origins")]
    clear_origins: bool,
    /// Set the CRM webhook URL (a new endpoint: also re-enables a disabled one and clears its backoff)
    #[arg(long, env = "SITEBOT_SITE_WEBHOOK_URL")]
    webhook_url: Option<String>,
    /// Remove the webhook
    #[arg(long, env = "SITEBOT_SITE_NO_WEBHOOK", conflicts_with = "webhook_url")]
    no_webhook: bool,
    /// Webhook events to send, comma separated
    #[arg(long, env = "SITEBOT_SITE_EVENTS", value_delimiter = ',', value_parser = EventType::subscribable)]
    events: Option<Vec<EventType>>,
    /// The widget's main colour, #rrggbb (its text is black or white, whichever contrasts more)
    #[arg(long, env = "SITEBOT_WIDGET_COLOR")]
    widget_color: Option<HexColor>,
    /// Which bottom corner the widget's launcher sits in
    #[arg(long, value_enum, env = "SITEBOT_WIDGET_POSITION")]
    widget_position: Option<WidgetPosition>,
    /// The widget's greeting in one language, LANG=TEXT (repeatable; an empty TEXT removes it)
    #[arg(long = "widget-greeting", env = "SITEBOT_WIDGET_GREETING", value_parser = greeting, value_name = "LANG=TEXT")]
    widget_greetings: Vec<(Lang, String)>,
    /// Whether the widget offers the contact form ("talk to a person")
    #[arg(long, value_enum, env = "SITEBOT_LEAD_FORM")]
    lead_form: Option<OnOff>,
    /// Who writes the answers: the operator's language model, each sentence checked against the
    /// sources it cites (`generative`, when `answer.generator` is configured), or quotes (`extractive`)
    #[arg(long, value_enum, env = "SITEBOT_SITE_ANSWERS")]
    answers: Option<AnswerMode>,
    /// Live hand-off: the widget asks for a person when the site is open and one of its staff has the
    /// console open (otherwise it offers the contact form)
    #[arg(long, value_enum, env = "SITEBOT_SITE_HANDOFF")]
    handoff: Option<OnOff>,
    /// Opening hours for hand-off, in --handoff-timezone: `Mon-Fri 09:00-17:00; Sat 10:00-14:00`
    /// (an empty value: open at every hour)
    #[arg(long, env = "SITEBOT_SITE_HANDOFF_HOURS", value_parser = hours, value_name = "SPEC")]
    handoff_hours: Option<WeeklyHours>,
    /// Dates closed whatever the hours say, comma separated: `2026-12-24,2026-12-25` (replaces the
    /// list; an empty value clears it)
    #[arg(long, env = "SITEBOT_SITE_HANDOFF_CLOSED", value_parser = closed, value_name = "DATES")]
    handoff_closed: Option<ClosedDates>,
    /// The IANA time zone the hours and dates are in (e.g. Europe/Berlin); UTC until set
    #[arg(long, env = "SITEBOT_SITE_HANDOFF_TIMEZONE", value_parser = zone, value_name = "TZ")]
    handoff_timezone: Option<TimeZone>,
    /// Seconds a visitor waits for a person before the contact form is offered (1 to 3600; 120 until set)
    #[arg(long, env = "SITEBOT_SITE_HANDOFF_WAIT", value_name = "SECS", value_parser = clap::value_parser!(u32).range(1..=3600))]
    handoff_wait: Option<u32>,
    // #25 email
    /// E-mail the site's owners each new lead (for sites without a CRM; needs `[email]` configured)
    #[arg(long, value_enum, env = "SITEBOT_SITE_LEAD_EMAIL")]
    lead_email: Option<OnOff>,
    #[command(flatten)]
    out: JsonFlag,
}

fn hours(s: &str) -> Result<WeeklyHours, String> {
    WeeklyHours::parse(s).map_err(|e| e.0)
}

fn closed(s: &str) -> Result<ClosedDates, String> {
    ClosedDates::parse(s).map_err(|e| e.0)
}

fn zone(s: &str) -> Result<TimeZone, String> {
    TimeZone::parse(s).map_err(|e| e.0)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

fn greeting(s: &str) -> Result<(Lang, String), String> {
    let (lang, text) = s.split_once('=').ok_or_else(|| format!("`{s}`: write LANG=TEXT, e.g. en=Hi! How can we help?"))?;
    Ok((Lang::parse(lang).map_err(|e| e.to_string())?, text.to_owned()))
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
    println!("webhook:        {}", site.webhook_url.as_ref().map_or("(none)", |u| u.as_str()));
    if let Some(at) = &site.webhook_disabled_at {
        println!(
            "webhook state:  disabled at {at} (a 410 Gone, or failing for webhooks.disable_after; `sitebot webhooks enable --site {}` re-enables it)",
            site.id
        );
    }
    println!("events:         {}", site.webhook_events.iter().map(|e| e.as_str()).collect::<Vec<_>>().join(","));
    println!("bearer token:   {}", if site.has_bearer_token { "set (shown only at creation or rotation)" } else { "none" });
    let greetings = site.widget.greeting.iter().map(|(l, t)| format!("{l}={t}")).collect::<Vec<_>>().join("; ");
    println!(
        "widget:         {} {}, contact form {}, greetings: {}",
        site.widget.primary_color.as_str(),
        site.widget.position,
        if site.widget.lead_form { "on" } else { "off" },
        if greetings.is_empty() { "(default)".to_owned() } else { greetings }
    );
    let answers = match site.answers {
        AnswerMode::Generative => "generative (when answer.generator is configured; quoted otherwise)",
        AnswerMode::Extractive => "extractive (quoted from the sources)",
    };
    println!("answers:        {answers}");
    let h = &site.handoff;
    let hours = if h.hours.weekly.is_empty() { "every hour".to_owned() } else { h.hours.weekly.to_string() };
    let closed = h.hours.closed.to_string();
    println!(
        "hand-off:       {}; hours {hours} ({}){}; visitors wait {} s for a person",
        if h.enabled { "on" } else { "off" },
        h.hours.zone,
        if closed.is_empty() { String::new() } else { format!(", closed {closed}") },
        h.wait_secs
    );
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
    let policy = crate::domain::NetworkPolicy::webhooks(&config.webhooks);
    match cmd {
        SiteCommand::Create(a) => {
            let new = NewSite {
                name: a.name,
                vertical: a.vertical,
                tier: a.tier,
                currency: a.currency,
                lang: a.lang,
                allowed_origins: a.allowed_origins,
                webhook_url: a.webhook_url.as_deref().map(|u| WebhookUrl::parse(u, &policy)).transpose()?,
                webhook_events: a.events,
            };
            let (_, creds) = store.sites().create(new).context("cannot create the site")?;
            print_credentials(&creds, a.out.json)
        }
        SiteCommand::List(out) => {
            let all = store.sites().list()?;
            if out.json {
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
        SiteCommand::Show { id, out } => {
            let site = store.site(id).get()?.ok_or_else(|| anyhow::anyhow!("no site {id}"))?;
            print_site(&site, out.json)
        }
        SiteCommand::Update(a) => {
            let up = SiteUpdate {
                name: a.name,
                vertical: a.vertical,
                tier: a.tier,
                currency: a.currency,
                lang: a.lang,
                allowed_origins: if a.clear_origins {
                    Some(vec![])
                } else if a.allowed_origins.is_empty() {
                    None
                } else {
                    Some(a.allowed_origins)
                },
                webhook_url: if a.no_webhook { Some(None) } else { a.webhook_url.as_deref().map(|u| WebhookUrl::parse(u, &policy).map(Some)).transpose()? },
                webhook_events: a.events,
                widget_color: a.widget_color,
                widget_position: a.widget_position,
                widget_greetings: if a.widget_greetings.is_empty() { None } else { Some(a.widget_greetings) },
                lead_form: a.lead_form.map(|o| o == OnOff::On),
                answers: a.answers,
                handoff: a.handoff.map(|o| o == OnOff::On),
                handoff_hours: a.handoff_hours,
                handoff_closed: a.handoff_closed,
                handoff_timezone: a.handoff_timezone,
                handoff_wait_secs: a.handoff_wait,
            };
            let (site, creds) = store.site(a.id).update(up).map_err(site_error(a.id))?;
            // #25 email
            if let Some(on) = a.lead_email {
                store.email().set_lead_email(a.id, on == OnOff::On).map_err(site_error(a.id))?;
                if on == OnOff::On && !config.email.enabled() {
                    eprintln!("note: lead e-mails are on for {}, but e-mail is off until [email] smtp_url and from are set", a.id);
                }
            }
            print_site(&site, a.out.json)?;
            if let (Some(on), false) = (a.lead_email, a.out.json) {
                println!("lead e-mails to the owners: {}", if on == OnOff::On { "on" } else { "off" });
            }
            if let Some(c) = creds {
                print_credentials(&c, a.out.json)?;
            }
            Ok(())
        }
        SiteCommand::Delete { id, yes, out } => delete(&store, data_dir, id, yes, out.json),
        SiteCommand::Export(a) => super::transfer::export(a, &store),
        SiteCommand::Import(a) => super::transfer::import(a, &store, config, data_dir),
        SiteCommand::Unfreeze { id } => super::transfer::unfreeze(id, &store),
        SiteCommand::Disable { id } => set_enabled(&store, id, false),
        SiteCommand::Enable { id } => set_enabled(&store, id, true),
        SiteCommand::RotateToken { id, out } => {
            let token = store.site(id).rotate_token().map_err(site_error(id))?;
            print_credentials(&SiteCredentials { site_id: id, webhook_secret: None, bearer_token: Some(token) }, out.json)
        }
        SiteCommand::RotateSecret { id, out } => {
            let secret = store.site(id).rotate_secret().map_err(site_error(id))?;
            print_credentials(&SiteCredentials { site_id: id, webhook_secret: Some(secret), bearer_token: None }, out.json)?;
            if !out.json {
                println!("The previous secret also signs deliveries for the next 24 hours.");
            }
            Ok(())
        }
    }
}

fn set_enabled(store: &Store, id: SiteId, enabled: bool) -> anyhow::Result<()> {
    let site = store.site(id).set_enabled(enabled).map_err(site_error(id))?;
    println!("site {} is now {}", site.id, if site.enabled { "enabled" } else { "disabled" });
    Ok(())
}

fn delete(store: &Store, data_dir: &Path, id: SiteId, yes: bool, json: bool) -> anyhow::Result<()> {
    if !yes {
        anyhow::bail!("deleting site {id} removes all its data and cannot be undone; run again with --yes");
    }
    let removed = store.erasure().site(id).map_err(site_error(id))?;
    let files = crate::knowledge::search::vector::remove_files(&data_dir.join(crate::knowledge::INDEX_DIR), &id)?;
    if json {
        let rows: serde_json::Map<String, serde_json::Value> = removed.rows.iter().map(|(t, n)| (t.clone(), (*n).into())).collect();
        let report = serde_json::json!({"siteId": id, "rows": rows, "ftsTableDropped": removed.fts_table_dropped, "indexFiles": files});
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!("deleted site {id}: {} row(s)", removed.total_rows());
    for (table, n) in &removed.rows {
        println!("  {table:<24} {n}");
    }
    if removed.fts_table_dropped {
        println!("  full-text table dropped");
    }
    println!("  {files} index file(s) removed");
    Ok(())
}
