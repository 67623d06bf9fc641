//! The demo site's knowledge: a fictional dental practice, "Bright Smile Dental" (hours, prices,
//! insurance, emergencies, booking, FAQ). Embedded in the binary so `sitebot demo` works from an
//! installed copy; imported through the ordinary pipeline, so a second start skips every document.

use std::path::Path;

use crate::config::KnowledgeConfig;
use crate::domain::SiteId;
use crate::knowledge::Engine;
use crate::knowledge::import::{self, Format, ImportReport, Input};
use crate::store::Store;

const FILES: &[(&str, Format, &str)] = &[
    ("opening-hours.md", Format::Markdown, include_str!("../../../assets/demo/knowledge/opening-hours.md")),
    ("prices.md", Format::Markdown, include_str!("../../../assets/demo/knowledge/prices.md")),
    ("insurance.md", Format::Markdown, include_str!("../../../assets/demo/knowledge/insurance.md")),
    ("emergencies.md", Format::Markdown, include_str!("../../../assets/demo/knowledge/emergencies.md")),
    ("booking.md", Format::Markdown, include_str!("../../../assets/demo/knowledge/booking.md")),
    ("faq.csv", Format::Csv, include_str!("../../../assets/demo/knowledge/faq.csv")),
];

pub fn inputs() -> Vec<Input> {
    FILES.iter().map(|(name, format, body)| Input { name: format!("demo/knowledge/{name}"), format: *format, bytes: body.as_bytes().to_vec() }).collect()
}

/// Imports the demo knowledge into `site` (idempotent) and brings its vector index up to date.
pub fn import(store: &Store, config: &KnowledgeConfig, data_dir: &Path, site: &SiteId) -> anyhow::Result<ImportReport> {
    let knowledge = Engine::open(config, data_dir)?;
    let report = import::import(store, knowledge.models(), site, &inputs(), false, &|_, _| {})?;
    if let Some(f) = report.failed.first() {
        anyhow::bail!("demo knowledge {} failed to import: {}", f.path, f.reason);
    }
    knowledge.sync_index_blocking(store, site)?;
    Ok(report)
}
