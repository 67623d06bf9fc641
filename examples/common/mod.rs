//! Shared by the benchmark examples: their `--name value` arguments, and creating a site with the real
//! CLI. Not an example itself (no `main.rs`); each includes it with `#[path]`.
#![allow(dead_code)] // each example uses a subset

use std::process::Command;

/// The value after `name` on the command line.
pub fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

/// Creates a site with `sitebot site create` on the data directory and returns its id.
pub fn create_site(bin: &str, dir: &str, name: &str, lang: &str) -> anyhow::Result<String> {
    let out = Command::new(bin)
        .args([
            "--data-dir",
            dir,
            "site",
            "create",
            "--name",
            name,
            "--vertical",
            "science",
            "--tier",
            "enterprise",
            "--currency",
            "EUR",
            "--lang",
            lang,
            "--json",
        ])
        .output()?;
    anyhow::ensure!(out.status.success(), "site create: {}", String::from_utf8_lossy(&out.stderr));
    let created: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    created["siteId"].as_str().map(str::to_owned).ok_or_else(|| anyhow::anyhow!("site create printed no siteId"))
}
