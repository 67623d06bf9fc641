//! `sitebot knowledge answer add|list|delete`: curated answers, an operator's own answer to a question,
//! preferred over the passages when a visitor's question is a close match (`knowledge::curated`).

use clap::Subcommand;

use super::{JsonFlag, SiteArg};
use crate::config::Config;
use crate::knowledge::Engine;
use crate::store::Store;

#[derive(Debug, Subcommand)]
pub enum AnswerCommand {
    /// Add an answer for a question; questions that mean the same get it, citing --url
    Add {
        #[command(flatten)]
        site: SiteArg,
        /// The question it answers, as a visitor would ask it
        #[arg(long, env = "SITEBOT_ANSWER_QUESTION")]
        question: String,
        /// The answer, shown as written
        #[arg(long, env = "SITEBOT_ANSWER_TEXT")]
        answer: String,
        /// The page the answer cites (http or https)
        #[arg(long, env = "SITEBOT_ANSWER_URL")]
        url: Option<url::Url>,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// List the site's curated answers
    List {
        #[command(flatten)]
        site: SiteArg,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Delete a curated answer
    Delete {
        #[command(flatten)]
        site: SiteArg,
        /// The answer's id (ans_...)
        #[arg(env = "SITEBOT_ANSWER_ID")]
        id: String,
    },
}

pub fn run(command: AnswerCommand, config: &Config, data_dir: &std::path::Path, store: &Store) -> anyhow::Result<()> {
    match command {
        AnswerCommand::Add { site, question, answer, url, out } => {
            let site = site.existing(store)?;
            if let Some(u) = &url
                && !matches!(u.scheme(), "http" | "https")
            {
                anyhow::bail!("--url must be an http or https URL");
            }
            let knowledge = Engine::open(&config.knowledge, data_dir)?;
            let added = crate::knowledge::answer::curated::add(store, &knowledge.embedder, &site, &question, &answer, url.as_ref().map(url::Url::as_str))?;
            if out.json {
                println!("{}", serde_json::to_string_pretty(&added)?);
            } else {
                println!("added {}", added.id);
            }
            Ok(())
        }
        AnswerCommand::List { site, out } => {
            let site = site.existing(store)?;
            let answers = store.site(site).curated().list()?;
            if out.json {
                println!("{}", serde_json::to_string_pretty(&answers)?);
            } else {
                for a in &answers {
                    println!("{}  {}  ->  {}{}", a.id, a.question, a.answer, a.url.as_deref().map(|u| format!("  ({u})")).unwrap_or_default());
                }
                println!("{} curated answers", answers.len());
            }
            Ok(())
        }
        AnswerCommand::Delete { site, id } => {
            let site = site.existing(store)?;
            store.site(site).curated().delete(&id).map_err(|e| match e {
                crate::store::StoreError::NotFound => anyhow::anyhow!("no curated answer {id}"),
                other => other.into(),
            })?;
            println!("deleted {id}");
            Ok(())
        }
    }
}
