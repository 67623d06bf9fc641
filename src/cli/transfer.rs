//! `sitebot site export|import|unfreeze` (moving one site between nodes) and `sitebot cluster map` (the
//! HAProxy map line of each site a node serves). The store does the moving (`store::transfer`); this
//! module handles the export key and the derived files.
//!
//! The export key is 32 random bytes in base64. An export makes one and prints it once unless given
//! one (`--key` or, kept out of the process list, `SITEBOT_EXPORT_KEY`); the import needs the same key.
//! The export file holds the site's webhook secrets sealed with it, never in clear, and a MAC under a key
//! derived from it, which the import verifies before it reads anything else.
//!
//! Console users move without their passwords: the import names those new to this node, and the
//! operator gives each a setup link with `sitebot user reset --email ADDR` (e-mailed when `[email]` is
//! configured), as for any new user.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, Subcommand};

use super::{JsonFlag, site_error};
use crate::config::Config;
use crate::domain::SiteId;
use crate::secrets::Keyring;
use crate::store::Store;
use crate::store::transfer::Moved;

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The site's id
    id: SiteId,
    /// The file to write; must not exist
    #[arg(long = "to", env = "SITEBOT_EXPORT_TO", value_name = "FILE")]
    to: PathBuf,
    /// The export key (base64 of 32 bytes) [default: a new one, printed once]
    #[arg(long, env = "SITEBOT_EXPORT_KEY", hide_env_values = true)]
    key: Option<String>,
    #[command(flatten)]
    out: JsonFlag,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// A file `sitebot site export` wrote
    file: PathBuf,
    /// The export key the export printed (or was given)
    #[arg(long, env = "SITEBOT_EXPORT_KEY", hide_env_values = true)]
    key: String,
    /// Replace a site of the same id on this node (everything of it) instead of refusing
    #[arg(long, env = "SITEBOT_IMPORT_REPLACE")]
    replace: bool,
    #[command(flatten)]
    out: JsonFlag,
}

#[derive(Debug, Subcommand)]
pub enum ClusterCommand {
    /// Print one HAProxy map line `SITE_ID BACKEND` for each site this node serves (sites moving away
    /// are left out)
    Map {
        /// The HAProxy backend that reaches this node
        #[arg(long, env = "SITEBOT_CLUSTER_BACKEND")]
        backend: String,
    },
}

fn key(text: &str) -> anyhow::Result<Keyring> {
    Keyring::from_base64(text).context("the export key must be base64 of 32 bytes, as `sitebot site export` prints it")
}

fn print(moved: &Moved, what: &str, json: bool, key: Option<&str>) -> anyhow::Result<()> {
    if json {
        let mut v = serde_json::to_value(moved)?;
        v["rows"] = moved.rows.iter().map(|(t, n)| (t.clone(), serde_json::Value::from(*n))).collect::<serde_json::Map<_, _>>().into();
        if let Some(k) = key {
            v["exportKey"] = k.into();
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!("{what} site {}: {} row(s), sha256 {}", moved.site_id, moved.rows.iter().map(|(_, n)| n).sum::<u64>(), moved.sha256);
    for (table, n) in &moved.rows {
        println!("  {table:<24} {n}");
    }
    if !moved.new_users.is_empty() {
        println!(
            "{} console user(s) of the site had no account on this node and have no password here yet; \
             give each a setup link with `sitebot user reset --email ADDR`:",
            moved.new_users.len()
        );
        for email in &moved.new_users {
            println!("  {}", email.escape_debug());
        }
    }
    if let Some(k) = key {
        println!("exportKey: {k}");
        println!("The import needs this key (--key or SITEBOT_EXPORT_KEY); it is not stored anywhere.");
    }
    Ok(())
}

pub fn export(a: ExportArgs, store: &Store) -> anyhow::Result<()> {
    let made = a.key.is_none().then(crate::secrets::new_export_key);
    let key_text = a.key.as_deref().or(made.as_deref()).expect("given or made");
    let keyring = key(key_text)?;
    let site = store.site(a.id);
    let was_moving = site.moving_since().map_err(site_error(a.id))?;
    let moved = match store.transfer().export(a.id, &a.to, &keyring) {
        Ok(m) => m,
        Err(e) => {
            // A failed export leaves the site served here as it was.
            if was_moving.is_none() {
                let _ = site.thaw();
            }
            return Err(site_error(a.id)(e)).with_context(|| format!("cannot export site {} to {}", a.id, a.to.display()));
        }
    };
    print(&moved, "exported", a.out.json, made.as_deref())?;
    if !a.out.json {
        println!(
            "Site {} is now moving: its leads and other writes answer 503 here. Import it on the new node, point the balancer there, \
             then `sitebot site delete {} --yes` here (or `sitebot site unfreeze {}` to keep it here).",
            a.id, a.id, a.id
        );
    }
    Ok(())
}

pub fn import(a: ImportArgs, store: &Store, config: &Config, data_dir: &Path) -> anyhow::Result<()> {
    let keyring = key(&a.key)?;
    let moved = store.transfer().import(&a.file, &keyring, a.replace).with_context(|| format!("cannot import {}", a.file.display()))?;
    if a.replace {
        // The vector index of the replaced site is rebuilt from the imported chunks.
        crate::knowledge::search::vector::remove_files(&data_dir.join(crate::knowledge::INDEX_DIR), &moved.site_id)?;
    }
    // The full-text table and the vector index are derived from the chunks (their keys are this node's):
    // built now from the stored embeddings, so the site's first question here waits for neither.
    crate::knowledge::search::analysis::reindex(store, &moved.site_id).context("cannot build the imported site's full-text index")?;
    let knowledge = crate::knowledge::Engine::open(&config.knowledge, data_dir)?;
    knowledge.sync_index_blocking(store, &moved.site_id).context("cannot build the imported site's vector index")?;
    print(&moved, "imported", a.out.json, None)
}

pub fn unfreeze(id: SiteId, store: &Store) -> anyhow::Result<()> {
    store.site(id).thaw().map_err(site_error(id))?;
    println!("site {id} is served here again");
    Ok(())
}

pub fn run_cluster(cmd: ClusterCommand, config: &Config, data_dir: &Path) -> anyhow::Result<()> {
    let store = crate::app::open_store(config, data_dir)?;
    match cmd {
        ClusterCommand::Map { backend } => {
            if backend.is_empty() || !backend.chars().all(|c| c.is_ascii_alphanumeric() || "-_.:".contains(c)) {
                anyhow::bail!("`{backend}` is not an HAProxy backend name (letters, digits, - _ . :)");
            }
            for site in store.sites().list()? {
                if store.site(site.id).moving_since()?.is_none() {
                    println!("{} {backend}", site.id);
                }
            }
            Ok(())
        }
    }
}
