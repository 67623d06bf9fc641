//! `sitebot knowledge ...`: import, crawl, list, delete and reindex a site's documents (and curated answers,
//! in `cli::answers`). Imports go straight to
//! the database the server reads; a running server picks them up on its next query for that site (the
//! site's generation moved), no restart needed.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Subcommand;

use super::{JsonFlag, SiteArg};
use crate::config::Config;
use crate::domain::SiteId;
use crate::knowledge::Engine;
use crate::knowledge::import::{self, ImportReport};
use crate::store::Store;

#[derive(Debug, Subcommand)]
pub enum KnowledgeCommand {
    /// Import files and directories (recursively): .md, .html, .txt, .pdf, FAQ .csv/.jsonl, document .jsonl.
    /// Unchanged documents are skipped; changed ones replace their old chunks.
    Import {
        #[command(flatten)]
        site: SiteArg,
        /// Files or directories
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Re-embed documents even when unchanged
        #[arg(long, env = "SITEBOT_FORCE")]
        force: bool,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// List a site's documents
    List {
        #[command(flatten)]
        site: SiteArg,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Delete one document (by id or source path), or all of them with --all
    Delete {
        #[command(flatten)]
        site: SiteArg,
        /// Document id (doc_...) or source
        document: Option<String>,
        /// Delete every document of the site
        #[arg(long, env = "SITEBOT_KNOWLEDGE_DELETE_ALL", conflicts_with = "document")]
        all: bool,
    },
    /// Crawl websites into the site's knowledge: robots.txt, sitemaps, then links on the same host.
    /// Crawling again updates changed pages, removes gone ones and skips unchanged ones.
    Crawl {
        #[command(flatten)]
        site: SiteArg,
        #[command(flatten)]
        args: super::crawl::CrawlArgs,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// List the site's crawl sources (last and next sync, pages, last errors), or remove one
    #[command(args_conflicts_with_subcommands = true)]
    Sources {
        /// The site's id (a GUID, as `site create` printed it)
        #[arg(long = "site", env = "SITEBOT_SITE", value_name = "ID")]
        site: Option<SiteId>,
        #[command(flatten)]
        out: JsonFlag,
        #[command(subcommand)]
        action: Option<super::crawl::SourcesAction>,
    },
    /// Rebuild the site's full-text index and vector index file from the stored chunks
    Reindex {
        #[command(flatten)]
        site: SiteArg,
    },
    /// Curated answers: an operator's answer to a question, preferred when a question matches it closely
    Answer {
        #[command(subcommand)]
        command: super::answers::AnswerCommand,
    },
}

/// Imports `inputs` into `site` and updates its index file; shared by `knowledge import` and `demo`.
pub fn import_inputs(store: &Store, knowledge: &Engine, site: &SiteId, inputs: &[import::Input], force: bool, bar: bool) -> anyhow::Result<ImportReport> {
    let progress = bar.then(|| {
        let pb = indicatif::ProgressBar::new(inputs.len() as u64);
        pb.set_style(indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} files {elapsed}").expect("a valid template"));
        pb
    });
    let report = import::import(store, knowledge.models(), site, inputs, force, &|done, _| {
        if let Some(pb) = &progress {
            pb.set_position(done as u64);
        }
    })?;
    if let Some(pb) = progress {
        pb.finish_and_clear();
    }
    knowledge.sync_index_blocking(store, site)?;
    Ok(report)
}

pub fn run(command: KnowledgeCommand, config: &Config, data_dir: &Path) -> anyhow::Result<()> {
    let store = crate::app::open_store(config, data_dir)?;
    match command {
        KnowledgeCommand::Import { site, paths, force, out: JsonFlag { json } } => {
            let site = site.existing(&store)?;
            let knowledge = Engine::open(&config.knowledge, data_dir)?;
            let started = std::time::Instant::now();
            let mut failed = Vec::new();
            let inputs = import::read_paths_within(&paths, config.knowledge.max_file_bytes, &mut failed);
            let mut report = import_inputs(&store, &knowledge, &site, &inputs, force, !json && std::io::stderr().is_terminal())?;
            failed.append(&mut report.failed);
            report.failed = failed;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                println!(
                    "imported {} documents ({} chunks), {} unchanged, {} removed, {} failed in {:.1}s",
                    report.documents,
                    report.chunks,
                    report.skipped,
                    report.deleted,
                    report.failed.len(),
                    started.elapsed().as_secs_f64()
                );
                for f in &report.failed {
                    println!("  failed: {}: {}", f.path, f.reason);
                }
            }
            Ok(())
        }
        KnowledgeCommand::List { site, out } => {
            let site = site.existing(&store)?;
            let docs = store.site(site).knowledge().list_documents()?;
            if out.json {
                println!("{}", serde_json::to_string_pretty(&docs)?);
            } else {
                for d in &docs {
                    println!(
                        "{}  {:>4} chunks  {:<2}  {}  {}",
                        d.id,
                        d.chunks,
                        d.lang.as_deref().unwrap_or("?"),
                        d.title,
                        d.url.as_deref().unwrap_or(&d.source)
                    );
                }
                println!("{} documents", docs.len());
            }
            Ok(())
        }
        KnowledgeCommand::Delete { site, document, all } => {
            let kb = store.site(site.existing(&store)?).knowledge();
            match (document, all) {
                (Some(doc), false) => {
                    kb.delete_document(&doc).with_context(|| format!("no document {doc}"))?;
                    println!("deleted {doc}");
                }
                (None, true) => {
                    let n = kb.delete_all()?;
                    println!("deleted {n} documents");
                }
                _ => anyhow::bail!("name a document, or pass --all"),
            }
            Ok(())
        }
        KnowledgeCommand::Answer { command } => super::answers::run(command, config, data_dir, &store),
        KnowledgeCommand::Crawl { site, args, out } => {
            let site = site.existing(&store)?;
            super::crawl::crawl(&store, config, data_dir, site, args, out.json)
        }
        KnowledgeCommand::Sources { site, out, action } => match action {
            Some(super::crawl::SourcesAction::Remove { site, url }) => super::crawl::remove(&store, site.existing(&store)?, &url),
            None => {
                let site = site.context("--site is required (or SITEBOT_SITE)")?;
                super::crawl::sources(&store, SiteArg { site }.existing(&store)?, out.json)
            }
        },
        KnowledgeCommand::Reindex { site } => {
            let site = site.existing(&store)?;
            let knowledge = Engine::open(&config.knowledge, data_dir)?;
            let rows = crate::knowledge::search::analysis::reindex(&store, &site)?;
            knowledge.vectors.drop_site(&site);
            let n = knowledge.sync_index_blocking(&store, &site)?;
            println!("indexes of {site} rebuilt: {rows} chunks in the full-text index, {n} in the vector index");
            Ok(())
        }
    }
}
