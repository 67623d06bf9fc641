//! `sitebot leads export`: a site's leads as CSV or JSON lines, on stdout. `sitebot leads erase`: a
//! visitor's leads, and what carries or links to them, removed on request.

use std::io::Write;
use std::path::Path;

use clap::{Subcommand, ValueEnum};

use super::{JsonFlag, SiteArg, SiteFilter};
use crate::config::Config;
use crate::domain::{Email, Timestamp};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    Csv,
    Jsonl,
}

#[derive(Debug, Subcommand)]
pub enum LeadsCommand {
    /// Print a site's leads, oldest first
    Export {
        #[command(flatten)]
        site: SiteArg,
        /// `csv` (RFC 4180, with a header row) or `jsonl` (one JSON object a line)
        #[arg(long, value_enum, default_value = "csv", env = "SITEBOT_LEADS_FORMAT")]
        format: Format,
        /// Only leads captured on or after this date (YYYY-MM-DD) or instant (RFC 3339), UTC
        #[arg(long, env = "SITEBOT_LEADS_SINCE")]
        since: Option<Timestamp>,
    },
    /// Remove a visitor's leads (by e-mail address, any case), their webhook events, the widget
    /// conversations they came from and the questions asked there; prints the counts
    Erase {
        /// The visitor's e-mail address
        #[arg(long, env = "SITEBOT_LEADS_EMAIL", value_parser = parse_email)]
        email: Email,
        #[command(flatten)]
        site: SiteFilter,
        #[command(flatten)]
        out: JsonFlag,
    },
}

fn parse_email(s: &str) -> Result<Email, String> {
    Email::parse(s).map_err(|e| e.to_string())
}

pub fn run(cmd: LeadsCommand, config: &Config, data_dir: &Path) -> anyhow::Result<()> {
    match cmd {
        LeadsCommand::Export { site: SiteArg { site }, format, since } => export(config, data_dir, site, format, since),
        LeadsCommand::Erase { email, site: SiteFilter { site }, out } => {
            let store = crate::app::open_store(config, data_dir)?;
            if let Some(id) = site
                && store.site(id).get()?.is_none()
            {
                anyhow::bail!("no site {id}");
            }
            let erased = store.erasure().visitor(&email, site)?;
            if out.json {
                println!("{}", serde_json::to_string_pretty(&erased)?);
            } else {
                println!(
                    "erased {} lead(s), {} webhook event(s), {} conversation(s), {} question(s), {} idempotency key(s)",
                    erased.leads, erased.events, erased.conversations, erased.questions, erased.idempotency_keys
                );
            }
            Ok(())
        }
    }
}

fn export(config: &Config, data_dir: &Path, site_id: crate::domain::SiteId, format: Format, since: Option<Timestamp>) -> anyhow::Result<()> {
    let store = crate::app::open_store(config, data_dir)?;
    let site = store.site(site_id);
    if site.get()?.is_none() {
        anyhow::bail!("no site {site_id}");
    }
    let rows = site.leads().list(since)?;
    let stdout = std::io::stdout().lock();
    match format {
        Format::Csv => {
            let mut w = csv::Writer::from_writer(stdout);
            w.write_record(["leadId", "siteId", "createdAt", "name", "email", "message", "pageUrl"])?;
            for l in &rows {
                let (site, created) = (l.site_id.to_string(), l.created_at.rfc3339());
                let opt = |v: &Option<String>| crate::domain::spreadsheet_safe(v.as_deref().unwrap_or(""));
                let (name, message, page) = (opt(&l.name), opt(&l.message), opt(&l.page_url));
                let email = crate::domain::spreadsheet_safe(&l.email);
                let row: [&str; 7] = [&l.lead_id, &site, &created, &name, &email, &message, &page];
                w.write_record(row)?;
            }
            w.flush()?;
        }
        Format::Jsonl => {
            let mut out = std::io::BufWriter::new(stdout);
            for l in &rows {
                serde_json::to_writer(&mut out, l)?;
                out.write_all(b"\n")?;
            }
            out.flush()?;
        }
    }
    eprintln!("{} lead(s) exported", rows.len());
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn formulas_are_neutralised() {
        assert_eq!(crate::domain::spreadsheet_safe("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
        assert_eq!(crate::domain::spreadsheet_safe("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(crate::domain::spreadsheet_safe("Ada"), "Ada");
        assert_eq!(crate::domain::spreadsheet_safe(""), "");
    }

    #[test]
    fn since_is_normalized() {
        // `--since` parses as a `Timestamp`: a date is midnight UTC, an RFC 3339 instant is converted to UTC.
        let since = |s: &str| s.parse::<crate::domain::Timestamp>().map(|t| t.rfc3339());
        assert_eq!(since("2026-11-01").unwrap(), "2026-11-01T00:00:00Z");
        assert_eq!(since("2026-11-01T12:00:00+02:00").unwrap(), "2026-11-01T10:00:00Z");
        assert!(since("yesterday").is_err());
    }
}
