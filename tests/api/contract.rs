//! The OpenAPI document against the running server: schemathesis (installed by `install.sh --deps-only`
//! into a venv in the cache) generates requests from the document, positive and negative, and runs all
//! of its checks on the answers (status codes, response schemas and headers, SSE events, 405 `Allow`,
//! acceptance of valid and rejection of invalid data). Bounded in examples and time, with a fixed seed;
//! the contract's rules no schema can state are in `tests/contract/schemathesis.toml`, each with its
//! reason.

use std::path::PathBuf;
use std::process::Command;

use sitebot::domain::Tier;

use crate::helpers::{spawn_app_with, test_config};
use crate::knowledge::{clinic, import_files};

/// The schemathesis executable: `SITEBOT_SCHEMATHESIS`, else where install.sh puts it.
fn schemathesis() -> PathBuf {
    if let Some(p) = std::env::var_os("SITEBOT_SCHEMATHESIS") {
        return p.into();
    }
    let cache = std::env::var_os("SITEBOT_CACHE_DIR").map(PathBuf::from).unwrap_or_else(|| {
        let base =
            std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache"));
        base.join("sitebot")
    });
    let version = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/contract/requirements.txt"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("schemathesis==").map(str::to_owned))
        .expect("schemathesis is pinned");
    cache.join(format!("tools/schemathesis-{version}/bin/schemathesis"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemathesis_finds_no_failure() {
    let bin = schemathesis();
    assert!(bin.exists(), "{} is missing: run ./install.sh --deps-only", bin.display());
    let mut config = test_config();
    // The test clock stands still, so buckets never refill: let the generated traffic through.
    config.limits.ip_per_minute = 10_000_000;
    let app = spawn_app_with(config).await;
    let (site, _) = app.create_site(Tier::Enterprise).await;
    import_files(&app, site.id, &clinic()).await;
    let work = tempfile::tempdir().unwrap();
    let cert = work.path().join("cert.pem");
    std::fs::write(&cert, &app.cert_pem).unwrap();
    let url = app.url("/v1/openapi.json");
    let out = tokio::task::spawn_blocking(move || {
        Command::new(&bin)
            .current_dir(work.path())
            .arg("--config-file")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/contract/schemathesis.toml"))
            .args(["run", &url, "--max-examples", "10", "--max-time", "60", "--workers", "1", "--seed", "1", "--no-color"])
            .arg("--tls-verify")
            .arg(&cert)
            .args(["--header", &format!("X-Site-Id: {}", site.id)])
            .output()
            .expect("schemathesis runs")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary: String = stdout.lines().rev().take(25).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n");
    println!("{summary}");
    assert!(out.status.success(), "schemathesis found failures:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
}
