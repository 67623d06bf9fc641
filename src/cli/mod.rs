//! The command line: one clap-derive enum of commands, shared options flattened in, every flag also
//! settable through a `SITEBOT_*` environment variable. Each command group has its own module.

mod analytics;
mod answers;
mod content;
mod crawl;
mod doctor;
mod insights;
pub mod knowledge;
mod leads;
mod replica;
mod restore;
mod serve;
mod site;
mod transfer;
mod user;
pub mod webhooks;
// #25 email
mod digest;

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};

use crate::config::{Config, LogFormat, Overrides};

#[derive(Debug, Parser)]
#[command(name = "sitebot", version, about = "Self-hosted AI assistant service for websites")]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Directory holding the database, certificates, keys and indexes
    /// [default: /var/lib/sitebot as root, else ~/.local/share/sitebot]
    #[arg(long, global = true, env = "SITEBOT_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// TOML configuration file
    #[arg(long, global = true, env = "SITEBOT_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
}

impl GlobalArgs {
    pub fn data_dir(&self) -> PathBuf {
        self.data_dir.clone().unwrap_or_else(crate::config::default_data_dir)
    }

    pub fn load_config(&self, overrides: &Overrides) -> anyhow::Result<Config> {
        let config = Config::load(self.config.as_deref(), std::env::vars(), overrides)?;
        crate::app::check_config(&config)?;
        Ok(config)
    }
}

/// `--json`, shared by every command that prints something a script may read.
#[derive(Debug, Clone, Copy, Args)]
pub struct JsonFlag {
    /// Print JSON instead of text
    #[arg(long = "json", env = "SITEBOT_JSON")]
    pub json: bool,
}

/// `--site ID`, shared by every command that acts on one site's data.
#[derive(Debug, Clone, Copy, Args)]
pub struct SiteArg {
    /// The site's id (a GUID, as `site create` printed it)
    #[arg(long = "site", env = "SITEBOT_SITE", value_name = "ID")]
    pub site: crate::domain::SiteId,
}

impl SiteArg {
    /// The named site, which must exist.
    pub fn existing(self, store: &crate::store::Store) -> anyhow::Result<crate::domain::SiteId> {
        store.site(self.site).get()?.ok_or_else(|| anyhow::anyhow!("no site {}", self.site))?;
        Ok(self.site)
    }
}

/// `--site ID` where it narrows a listing and may be left out.
#[derive(Debug, Clone, Copy, Args)]
pub struct SiteFilter {
    /// Only this site's rows (a GUID)
    #[arg(long = "site", env = "SITEBOT_SITE", value_name = "ID")]
    pub site: Option<crate::domain::SiteId>,
}

/// A store error with `NotFound` worded for the site the command named.
pub fn site_error(id: crate::domain::SiteId) -> impl Fn(crate::store::StoreError) -> anyhow::Error {
    move |e| match e {
        crate::store::StoreError::NotFound => anyhow::anyhow!("no site {id}"),
        other => other.into(),
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the HTTPS API
    Serve(serve::ServeArgs),
    /// Create a demo site once, then serve it
    Demo(serve::ServeArgs),
    /// Import, list, delete and reindex a site's knowledge (documents the answers cite), and curated answers
    Knowledge {
        #[command(subcommand)]
        command: knowledge::KnowledgeCommand,
    },
    /// Check every prerequisite (runtime, model, data directory, certificate, database) and the replica's lag
    Doctor,
    /// Pack the bilingual dictionaries for the server to read in one go (install.sh runs it)
    PackDictionaries {
        /// The dictionaries' directory [default: the one the server finds]
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Manage sites (tenants)
    Site {
        #[command(subcommand)]
        command: site::SiteCommand,
    },
    /// Nodes behind HAProxy: the map of the sites this node serves
    Cluster {
        #[command(subcommand)]
        command: transfer::ClusterCommand,
    },
    /// Inspect, replay, purge and test webhook deliveries
    Webhooks {
        #[command(subcommand)]
        command: webhooks::WebhooksCommand,
    },
    /// Widget events, questions, answer rate, feedback and clicked sources of one site
    Analytics(analytics::AnalyticsArgs),
    /// Unanswered questions grouped by meaning, weak answers, thumbs down, most cited sources, resolution by day
    Insights(insights::InsightsArgs),
    /// Manage the console's users: add (prints a one-time setup link), list, grant, revoke, remove, reset
    User {
        #[command(subcommand)]
        command: user::UserCommand,
    },
    /// The audit log: console changes and account events, newest first
    Audit(user::AuditArgs),
    /// Export captured leads
    Leads {
        #[command(subcommand)]
        command: leads::LeadsCommand,
    },
    /// Manage verticals (families of sites that share landing pages and a price list)
    Vertical {
        #[command(subcommand)]
        command: content::VerticalCommand,
    },
    /// Import, publish and list landing pages
    Landing {
        #[command(subcommand)]
        command: content::LandingCommand,
    },
    /// Import a vertical's price list
    Pricing {
        #[command(subcommand)]
        command: content::PricingCommand,
    },
    /// Set and import currency rates against pricing.reference_currency
    Rates {
        #[command(subcommand)]
        command: content::RatesCommand,
    },
    /// Show the configuration
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// Write an online, consistent copy of the live database to PATH
    Backup {
        /// Destination file; must not exist
        #[arg(env = "SITEBOT_BACKUP_PATH")]
        path: PathBuf,
    },
    /// Restore the database from its Litestream replica into a data directory that holds only the master key
    Restore(restore::RestoreArgs),
    /// Apply pending database migrations and print the schema version
    Migrate,
    /// Exit 0 when a local server answers /healthz
    Healthcheck {
        /// Base URL to check [default: from server.listen]
        #[arg(long, env = "SITEBOT_HEALTHCHECK_URL")]
        url: Option<String>,
    },
    // #25 email
    /// E-mail the weekly digest now (it is also sent every Monday by the server when e-mail is on)
    Digest {
        #[command(subcommand)]
        command: digest::DigestCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the effective configuration (defaults, file, environment), secrets redacted
    Print,
    /// Print a commented example configuration with every key
    Example,
}

fn init_tracing(level: &str, format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Json => builder.json().try_init(),
        LogFormat::Text => builder.try_init(),
    };
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start the async runtime")
}

/// Runs one command to completion.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    let overrides = match &cli.command {
        Command::Serve(a) | Command::Demo(a) => Overrides { listen: a.listen },
        _ => Overrides::default(),
    };
    let config = cli.global.load_config(&overrides)?;
    let data_dir = cli.global.data_dir();
    // Servers log at the configured level; one-shot commands only say what went wrong (migrate also
    // lists the migrations it applies).
    let level = match &cli.command {
        Command::Serve(_) | Command::Demo(_) => config.log.level.as_str(),
        Command::Migrate => "info",
        Command::Doctor => "error",
        _ => "warn",
    };
    init_tracing(level, config.log.format);
    match cli.command {
        Command::Serve(_) => runtime()?.block_on(serve::serve(config, data_dir, None)),
        Command::Demo(_) => runtime()?.block_on(serve::demo(config, data_dir)),
        Command::Site { command } => site::run(command, &config, &data_dir),
        Command::Knowledge { command } => knowledge::run(command, &config, &data_dir),
        Command::Cluster { command } => transfer::run_cluster(command, &config, &data_dir),
        Command::Doctor => doctor::run(&config, &data_dir),
        Command::PackDictionaries { dir } => doctor::pack_dictionaries(&config, dir),
        Command::Webhooks { command } => webhooks::run(command, &config, &data_dir),
        Command::Leads { command } => leads::run(command, &config, &data_dir),
        Command::User { command } => user::run(command, &config, &data_dir),
        Command::Audit(a) => user::audit_log(a, &config, &data_dir),
        Command::Analytics(a) => analytics::run(a, &config, &data_dir),
        Command::Insights(a) => insights::run(a, &config, &data_dir),
        Command::Vertical { command } => content::run_vertical(command, &config, &data_dir),
        Command::Landing { command } => content::run_landing(command, &config, &data_dir),
        Command::Pricing { command } => content::run_pricing(command, &config, &data_dir),
        Command::Rates { command } => content::run_rates(command, &config, &data_dir),
        Command::Config { command: ConfigCommand::Print } => {
            println!("# data_dir = {:?} (flag --data-dir / SITEBOT_DATA_DIR)", data_dir.display().to_string());
            print!("{}", config.to_toml());
            Ok(())
        }
        Command::Config { command: ConfigCommand::Example } => {
            print!("{}", crate::config::EXAMPLE);
            Ok(())
        }
        Command::Backup { path } => serve::backup(&config, &data_dir, &path),
        Command::Restore(args) => restore::run(args, &config, &data_dir),
        Command::Migrate => {
            let store = crate::app::open_store(&config, &data_dir)?;
            println!("schema version {}", store.schema_version()?);
            Ok(())
        }
        Command::Healthcheck { url } => runtime()?.block_on(serve::healthcheck(&config, &data_dir, url)),
        // #25 email
        Command::Digest { command } => digest::run(command, &config, &data_dir),
    }
}
