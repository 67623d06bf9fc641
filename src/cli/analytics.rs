//! `sitebot analytics --site ID [--since DATE] [--json]`: what a site's visitors did with the widget.

use std::path::Path;

use clap::Args;

use super::{JsonFlag, SiteArg};
use crate::config::Config;
use crate::domain::Timestamp;

#[derive(Debug, Args)]
pub struct AnalyticsArgs {
    #[command(flatten)]
    site: SiteArg,
    /// From this date (YYYY-MM-DD, UTC) or instant (RFC 3339) on [default: 30 days ago]
    #[arg(long, env = "SITEBOT_ANALYTICS_SINCE")]
    since: Option<Timestamp>,
    #[command(flatten)]
    out: JsonFlag,
}

pub fn run(a: AnalyticsArgs, config: &Config, data_dir: &Path) -> anyhow::Result<()> {
    let store = crate::app::open_store(config, data_dir)?;
    let site = store.site(a.site.site);
    if site.get()?.is_none() {
        anyhow::bail!("no site {}", a.site.site);
    }
    let since = a.since.unwrap_or_else(|| Timestamp::now() - std::time::Duration::from_secs(30 * 86_400));
    let r = site.analytics().report(since)?;
    if a.out.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(());
    }
    println!("since {}", r.since.date());
    println!("questions:      {} ({} answered, answer rate {:.1} %)", r.questions, r.answered, r.answer_rate * 100.0);
    if r.unlogged_questions > 0 {
        println!("not logged:     {} (answered after the daily cap, limits.logged_questions_per_site_per_day)", r.unlogged_questions);
    }
    println!("feedback:       {} up, {} down", r.feedback_up, r.feedback_down);
    println!("widget leads:   {}", r.widget_leads);
    println!("widget events:");
    for (t, n) in &r.events {
        println!("  {t:<18} {n}");
    }
    if !r.by_day.is_empty() {
        println!("by day:");
        for d in &r.by_day {
            let list = d.events.iter().map(|(t, n)| format!("{t} {n}")).collect::<Vec<_>>().join(", ");
            println!("  {}  {list}", d.day);
        }
    }
    if !r.top_sources.is_empty() {
        println!("top sources clicked:");
        for (url, n) in &r.top_sources {
            println!("  {n:>5}  {url}");
        }
    }
    if !r.latest_comments.is_empty() {
        println!("latest comments:");
        for c in &r.latest_comments {
            println!("  [{}] {}  ({}: {})", c.rating.as_str(), c.comment, c.at, c.question.as_deref().unwrap_or(&c.query_id));
        }
    }
    Ok(())
}
