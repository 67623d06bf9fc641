//! Shared by the benchmark examples: their `--name value` arguments, and creating a site with the real
//! CLI. Not an example itself (no `main.rs`); each includes it with `#[path]`.
#![allow(dead_code)] // each example uses a subset

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

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

/// Serves the data directory with the binary on a free loopback port; returns the process and a client
/// that trusts its certificate, with the base address. One address asks every question: it gets the site's
/// whole budget (`limits.visitor_share` 1), as one visitor of many never has, so a fast run is not turned
/// away with 429.
pub fn serve(bin: &str, dir: &Path) -> anyhow::Result<(Child, reqwest::Client, String)> {
    let mut server = Command::new(bin)
        .arg("--data-dir")
        .arg(dir)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("RUST_LOG", "warn")
        .env("SITEBOT_LIMITS__VISITOR_SHARE", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut lines = BufReader::new(server.stdout.take().ok_or_else(|| anyhow::anyhow!("no stdout"))?).lines();
    let base = loop {
        let line = lines.next().ok_or_else(|| anyhow::anyhow!("server exited"))??;
        if let Some(addr) = line.strip_prefix("listening on ") {
            break addr.trim().to_owned();
        }
    };
    let pem = std::fs::read(dir.join("tls/cert.pem"))?;
    let client =
        reqwest::Client::builder().use_rustls_tls().tls_built_in_root_certs(false).add_root_certificate(reqwest::Certificate::from_pem(&pem)?).build()?;
    Ok((server, client, base))
}
