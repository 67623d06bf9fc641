//! `sitebot insights --site ID [--since DATE] [--json]`: what visitors asked that the knowledge did not
//! answer (grouped by meaning), weak answers, thumbs-down ratings, the most cited sources and the
//! resolution rate by day. A gap found here is closed with `sitebot knowledge answer add`.

use std::path::Path;

use clap::Args;

use super::{JsonFlag, SiteArg};
use crate::config::Config;
use crate::domain::Timestamp;
use crate::knowledge::Engine;

#[derive(Debug, Args)]
pub struct InsightsArgs {
    #[command(flatten)]
    site: SiteArg,
    /// From this date (YYYY-MM-DD, UTC) or instant (RFC 3339) on [default: 30 days ago]
    #[arg(long, env = "SITEBOT_INSIGHTS_SINCE")]
    since: Option<Timestamp>,
    /// Answered questions whose best source scored below this (0..1) are listed as weak
    #[arg(long, env = "SITEBOT_INSIGHTS_WEAK_BELOW", default_value_t = 0.5)]
    weak_below: f32,
    #[command(flatten)]
    out: JsonFlag,
}

pub fn run(a: InsightsArgs, config: &Config, data_dir: &Path) -> anyhow::Result<()> {
    let store = crate::app::open_store(config, data_dir)?;
    if store.site(a.site.site).get()?.is_none() {
        anyhow::bail!("no site {}", a.site.site);
    }
    let since = a.since.unwrap_or_else(|| Timestamp::now() - std::time::Duration::from_secs(30 * 86_400));
    let knowledge = Engine::open(&config.knowledge, data_dir)?;
    let r = crate::insights::report(&store, &knowledge.embedder, &a.site.site, since, a.weak_below)?;
    if a.out.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(());
    }
    println!("since {}", r.since.date());
    println!("questions: {} ({} resolved, {:.1} %)", r.questions, r.resolved, r.resolution_rate * 100.0);
    println!("unanswered, grouped by meaning:");
    if r.unanswered.is_empty() {
        println!("  none");
    }
    for g in &r.unanswered {
        println!("  {:>5}x  {}", g.count, g.examples.join("  |  "));
    }
    println!("weak answers (best source below {}):", r.weak_below);
    for w in &r.weak_answers {
        println!("  {:.2}  {}  ({})", w.top_score.unwrap_or(0.0), w.question, w.query_id);
    }
    println!("thumbs down:");
    for t in &r.thumbs_down {
        println!("  {}  {}  ({})", t.question.as_deref().unwrap_or(&t.query_id), t.comment.as_deref().map(|c| format!("\"{c}\"")).unwrap_or_default(), t.at);
    }
    println!("most cited sources:");
    for s in &r.top_sources {
        println!("  {:>5}  {}  {}", s.citations, s.title, s.url.as_deref().unwrap_or(&s.document_id));
    }
    println!("resolution by day:");
    for d in &r.by_day {
        println!("  {}  {:>5} questions  {:>5.1} %", d.day, d.questions, d.rate * 100.0);
    }
    Ok(())
}
