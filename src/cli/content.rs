//! `sitebot vertical|landing|pricing|rates ...`: the public content an operator publishes. Imports go
//! through `content::import_*`, the same code `sitebot demo` and the tests use.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use super::JsonFlag;
use crate::config::Config;
use crate::content::money::Rate;
use crate::content::{self, ContentError, Source};
use crate::domain::{Currency, Lang, Slug};
use crate::store::content::{Change, NewVertical};
use crate::store::{Store, StoreError};

#[derive(Debug, Subcommand)]
pub enum VerticalCommand {
    /// Create a vertical (a family of sites sharing landing pages and a price list)
    Create(VerticalArgs),
    /// Change a vertical's name, default language, languages or default currency
    Update(VerticalUpdateArgs),
    /// List verticals
    List(#[command(flatten)] JsonFlag),
    /// Show one vertical with its page and tier counts
    Show {
        /// Vertical slug (e.g. dental)
        #[arg(env = "SITEBOT_VERTICAL", value_parser = Slug::vertical)]
        slug: Slug,
        #[command(flatten)]
        out: JsonFlag,
    },
}

#[derive(Debug, Args)]
pub struct VerticalArgs {
    /// Slug: 1 to 64 of a-z, 0-9 and -
    #[arg(env = "SITEBOT_VERTICAL", value_parser = Slug::vertical)]
    slug: Slug,
    /// Display name
    #[arg(long, env = "SITEBOT_VERTICAL_NAME")]
    name: String,
    /// Default language, BCP 47 (e.g. en)
    #[arg(long, env = "SITEBOT_VERTICAL_LANG")]
    lang: Lang,
    /// Languages offered, comma separated; the default is always included
    #[arg(long, env = "SITEBOT_VERTICAL_LANGS", value_delimiter = ',')]
    langs: Vec<Lang>,
    /// Default currency, ISO 4217 (e.g. EUR)
    #[arg(long, env = "SITEBOT_VERTICAL_CURRENCY")]
    currency: Currency,
}

#[derive(Debug, Args)]
pub struct VerticalUpdateArgs {
    /// Vertical slug
    #[arg(env = "SITEBOT_VERTICAL", value_parser = Slug::vertical)]
    slug: Slug,
    /// Display name
    #[arg(long, env = "SITEBOT_VERTICAL_NAME")]
    name: Option<String>,
    /// Default language, BCP 47
    #[arg(long, env = "SITEBOT_VERTICAL_LANG")]
    lang: Option<Lang>,
    /// Languages offered, comma separated (replaces the list; the default is always included)
    #[arg(long, env = "SITEBOT_VERTICAL_LANGS", value_delimiter = ',')]
    langs: Option<Vec<Lang>>,
    /// Default currency, ISO 4217
    #[arg(long, env = "SITEBOT_VERTICAL_CURRENCY")]
    currency: Option<Currency>,
}

#[derive(Debug, Subcommand)]
pub enum LandingCommand {
    /// Import landing pages from JSON or YAML files (one page or a list per file); re-import updates
    Import {
        /// Files to import; all or nothing
        #[arg(required = true, env = "SITEBOT_LANDING_FILES", value_delimiter = ',')]
        paths: Vec<PathBuf>,
        /// Publish every imported page, whatever its file says
        #[arg(long, env = "SITEBOT_LANDING_PUBLISH")]
        publish: bool,
    },
    /// Publish a page
    Publish(PageRef),
    /// Withdraw a page (it answers 404 from now on)
    Unpublish(PageRef),
    /// List pages, drafts included
    List {
        /// Only this vertical
        #[arg(env = "SITEBOT_VERTICAL", value_parser = Slug::vertical)]
        vertical: Option<Slug>,
        #[command(flatten)]
        out: JsonFlag,
    },
}

#[derive(Debug, Args)]
pub struct PageRef {
    /// Vertical slug
    #[arg(env = "SITEBOT_VERTICAL", value_parser = Slug::vertical)]
    vertical: Slug,
    /// Language tag
    #[arg(env = "SITEBOT_LANDING_LANG")]
    lang: Lang,
    /// Page slug
    #[arg(env = "SITEBOT_LANDING_SLUG", value_parser = page_slug)]
    slug: Slug,
}

#[derive(Debug, Subcommand)]
pub enum PricingCommand {
    /// Import a vertical's price list (JSON or YAML), replacing the previous one
    Import {
        /// The price list file
        #[arg(env = "SITEBOT_PRICING_FILE")]
        path: PathBuf,
    },
}

#[derive(Debug, Subcommand)]
pub enum RatesCommand {
    /// Set how many units of CUR one unit of the reference currency (pricing.reference_currency) is worth
    Set {
        /// ISO 4217 code (e.g. JPY)
        #[arg(env = "SITEBOT_RATES_CURRENCY")]
        currency: Currency,
        /// Exact decimal (e.g. 162.5)
        #[arg(env = "SITEBOT_RATES_RATE", value_parser = Rate::parse)]
        rate: Rate,
    },
    /// Import rates from a JSON or YAML file: {"base": "EUR", "rates": {"USD": 1.08, ...}}
    Import {
        /// The rates file
        #[arg(env = "SITEBOT_RATES_FILE")]
        path: PathBuf,
    },
    /// List the rates against the reference currency
    List,
}

fn page_slug(s: &str) -> Result<Slug, crate::domain::Invalid> {
    Slug::parse(s, 128)
}

fn open(config: &Config, data_dir: &Path) -> anyhow::Result<Store> {
    crate::app::open_store(config, data_dir)
}

fn reference(config: &Config) -> anyhow::Result<Currency> {
    Ok(Currency::parse(&config.pricing.reference_currency)?)
}

/// Content errors are already worded per file and field; print them as they are.
fn report(e: ContentError) -> anyhow::Error {
    match e {
        ContentError::Invalid(errors) => {
            let n = errors.len();
            let list = errors.iter().map(|e| format!("  {e}")).collect::<Vec<_>>().join("\n");
            anyhow::anyhow!("{n} problem{} found; nothing was imported:\n{list}", if n == 1 { "" } else { "s" })
        }
        ContentError::Store(e) => e.into(),
    }
}

fn read_all(paths: &[PathBuf]) -> anyhow::Result<Vec<Source>> {
    paths.iter().map(|p| Source::read(p).map_err(report)).collect()
}

pub fn run_vertical(cmd: VerticalCommand, config: &Config, data_dir: &Path) -> anyhow::Result<()> {
    let store = open(config, data_dir)?;
    match cmd {
        VerticalCommand::Create(a) => {
            let new = NewVertical { slug: a.slug, name: a.name, default_lang: a.lang, default_currency: a.currency, langs: a.langs };
            let v = store.content().create_vertical(new)?;
            println!("vertical {} created: {} (languages {}, currency {})", v.slug, v.name, v.langs_list(), v.default_currency);
            Ok(())
        }
        VerticalCommand::Update(a) => {
            let slug = a.slug;
            let current = store.content().vertical(&slug)?.ok_or_else(|| anyhow::anyhow!("no vertical `{slug}`"))?;
            let new = NewVertical {
                slug: current.slug,
                name: a.name.unwrap_or(current.name),
                default_lang: a.lang.unwrap_or(current.default_lang),
                default_currency: a.currency.unwrap_or(current.default_currency),
                langs: a.langs.unwrap_or(current.langs),
            };
            let v = store.content().update_vertical(new)?;
            println!("vertical {} updated: {} (languages {}, currency {})", v.slug, v.name, v.langs_list(), v.default_currency);
            Ok(())
        }
        VerticalCommand::List(out) => {
            let all = store.content().verticals()?;
            if out.json {
                println!("{}", serde_json::to_string_pretty(&all)?);
            } else if all.is_empty() {
                println!("no verticals yet: sitebot vertical create --help");
            } else {
                println!("{:<20}  {:<8}  {:<8}  {:<16}  name", "vertical", "lang", "currency", "languages");
                for v in all {
                    println!("{:<20}  {:<8}  {:<8}  {:<16}  {}", v.slug, v.default_lang, v.default_currency, v.langs_list(), v.name);
                }
            }
            Ok(())
        }
        VerticalCommand::Show { slug, out } => {
            let v = store.content().vertical(&slug)?.ok_or_else(|| anyhow::anyhow!("no vertical `{slug}`"))?;
            let (pages, sheet) = (store.content().list_pages(Some(&slug))?, store.pricing().sheet(&slug)?);
            let published = pages.iter().filter(|p| p.published).count();
            if out.json {
                let mut value = serde_json::to_value(&v)?;
                value["pages"] = pages.len().into();
                value["publishedPages"] = published.into();
                value["tiers"] = sheet.as_ref().map_or(0, |s| s.tiers.len()).into();
                println!("{}", serde_json::to_string_pretty(&value)?);
                return Ok(());
            }
            println!("vertical:   {}", v.slug);
            println!("name:       {}", v.name);
            println!("language:   {} (offered: {})", v.default_lang, v.langs_list());
            println!("currency:   {}", v.default_currency);
            println!("pages:      {} ({published} published)", pages.len());
            match sheet {
                Some(s) => println!("pricing:    {} tiers in {}", s.tiers.len(), s.currency),
                None => println!("pricing:    none (sitebot pricing import FILE)"),
            }
            println!("created:    {}", v.created_at);
            Ok(())
        }
    }
}

pub fn run_landing(cmd: LandingCommand, config: &Config, data_dir: &Path) -> anyhow::Result<()> {
    let store = open(config, data_dir)?;
    match cmd {
        LandingCommand::Import { paths, publish } => {
            let sources = read_all(&paths)?;
            let outcomes = content::import_landing(&store, &sources, publish).map_err(report)?;
            for o in &outcomes {
                let state = if o.published { "published" } else { "draft" };
                let change = match o.change {
                    Change::Created => "created",
                    Change::Updated => "updated",
                    Change::Unchanged => "unchanged",
                };
                println!("{change:<9}  {state:<9}  {}/{}/{}", o.vertical, o.lang, o.slug);
            }
            println!("{} page(s) imported from {} file(s)", outcomes.len(), sources.len());
            Ok(())
        }
        LandingCommand::Publish(p) => set_published(&store, p, true),
        LandingCommand::Unpublish(p) => set_published(&store, p, false),
        LandingCommand::List { vertical, out } => {
            let pages = store.content().list_pages(vertical.as_ref())?;
            if out.json {
                println!("{}", serde_json::to_string_pretty(&pages)?);
            } else if pages.is_empty() {
                println!("no pages yet: sitebot landing import --help");
            } else {
                println!("{:<9}  {:<20}  {:<6}  {:<10}  {:<20}  slug", "state", "updated", "lang", "type", "vertical");
                for p in pages {
                    let state = if p.published { "published" } else { "draft" };
                    println!("{state:<9}  {:<20}  {:<6}  {:<10}  {:<20}  {}", p.updated_at.rfc3339(), p.lang, p.page_type.as_str(), p.site, p.slug);
                }
            }
            Ok(())
        }
    }
}

fn set_published(store: &Store, p: PageRef, published: bool) -> anyhow::Result<()> {
    let what = format!("{}/{}/{}", p.vertical, p.lang, p.slug);
    let change = store.content().set_published(&p.vertical, &p.lang, &p.slug, published).map_err(|e| match e {
        StoreError::NotFound => anyhow::anyhow!("no page {what}; see sitebot landing list"),
        other => other.into(),
    })?;
    let state = if published { "published" } else { "unpublished" };
    match change {
        Change::Unchanged => println!("{what} was already {state}"),
        _ => println!("{what} {state}"),
    }
    Ok(())
}

pub fn run_pricing(cmd: PricingCommand, config: &Config, data_dir: &Path) -> anyhow::Result<()> {
    let store = open(config, data_dir)?;
    match cmd {
        PricingCommand::Import { path } => {
            let source = Source::read(&path).map_err(report)?;
            let (vertical, n) = content::import_pricing(&store, &source).map_err(report)?;
            println!("{n} tier(s) imported for {vertical}; prices show on the next request");
            Ok(())
        }
    }
}

pub fn run_rates(cmd: RatesCommand, config: &Config, data_dir: &Path) -> anyhow::Result<()> {
    let store = open(config, data_dir)?;
    let reference = reference(config)?;
    match cmd {
        RatesCommand::Set { currency: cur, rate } => {
            content::set_rate(&store, reference, cur, rate).map_err(report)?;
            println!("1 {reference} = {rate} {cur}");
            Ok(())
        }
        RatesCommand::Import { path } => {
            let source = Source::read(&path).map_err(report)?;
            let n = content::import_rates(&store, reference, &source).map_err(report)?;
            println!("{n} rate(s) against {reference} imported");
            Ok(())
        }
        RatesCommand::List => {
            let rates = store.pricing().rates(reference)?;
            if rates.is_empty() {
                println!("no rates against {reference} yet: sitebot rates set CUR RATE");
            }
            for r in rates {
                println!("1 {reference} = {} {}  (set {})", r.rate, r.currency, r.updated_at);
            }
            Ok(())
        }
    }
}
