//! The built binary as nodes of a deployment, for the black-box tests that run, replicate, kill and restore
//! them (`tests/replication.rs`, `tests/cluster.rs`): `sitebot` commands on a data directory, `serve` on
//! a port, and Litestream replicating a node's database to a file replica.
#![allow(dead_code)] // each test crate uses a part

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::process::{Child, Command};

#[path = "served.rs"]
mod served;

pub const LITESTREAM_VERSION: &str = "0.5.17";
/// Litestream as `install.sh --deps-only` installs it, or `SITEBOT_LITESTREAM`.
pub fn litestream_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("SITEBOT_LITESTREAM") {
        return p.into();
    }
    let cache = std::env::var_os("SITEBOT_CACHE_DIR").map(PathBuf::from).unwrap_or_else(|| {
        let base =
            std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache"));
        base.join("sitebot")
    });
    let bin = cache.join(format!("tools/litestream-{LITESTREAM_VERSION}/litestream"));
    assert!(
        bin.is_file(),
        "{} is missing: run ./install.sh --deps-only (it installs Litestream {LITESTREAM_VERSION} there), or point SITEBOT_LITESTREAM at a litestream binary",
        bin.display()
    );
    bin
}

pub fn sitebot(data_dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sitebot"));
    for (k, _) in std::env::vars() {
        if k.starts_with("SITEBOT_") {
            cmd.env_remove(k);
        }
    }
    cmd.arg("--data-dir")
        .arg(data_dir)
        // A steady load from one client: no daily cap, the site's whole rate for it.
        .env("SITEBOT_LIMITS__LEADS_PER_SITE_PER_DAY", "0")
        .env("SITEBOT_LIMITS__VISITOR_SHARE", "1")
        .env("SITEBOT_LOG__LEVEL", "warn")
        .kill_on_drop(true);
    cmd
}

pub async fn run(cmd: &mut Command) -> String {
    let out = cmd.output().await.unwrap();
    assert!(out.status.success(), "{cmd:?}: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// `sitebot serve` on a free port, with these variables; its HTTPS base URL from its banner.
pub async fn serve(data_dir: &Path, env: &[(&str, &str)]) -> (Child, String) {
    serve_at(data_dir, env, "127.0.0.1:0").await
}

/// `sitebot serve` on `listen`, with these variables; its HTTPS base URL from its banner.
pub async fn serve_at(data_dir: &Path, env: &[(&str, &str)], listen: &str) -> (Child, String) {
    let mut child = sitebot(data_dir).envs(env.iter().copied()).args(["serve", "--listen", listen]).stdout(Stdio::piped()).spawn().unwrap();
    let base = served::base_url(&mut child).await;
    (child, base)
}

pub fn private_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    dir
}

pub fn client(data_dir: &Path) -> reqwest::Client {
    let pem = std::fs::read(data_dir.join("tls/cert.pem")).unwrap();
    reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(&pem).unwrap())
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

pub async fn create_site(data_dir: &Path) -> String {
    let out = run(sitebot(data_dir)
        .args(["site", "create", "--json", "--name", "Replicated", "--vertical", "dental", "--tier", "enterprise", "--currency", "EUR", "--lang", "en"]))
    .await;
    serde_json::from_str::<serde_json::Value>(&out).unwrap()["siteId"].as_str().unwrap().to_owned()
}

/// `litestream replicate` of the data directory's database to a file replica, metrics on a free port.
pub struct Litestream {
    pub child: Child,
    pub metrics: SocketAddr,
    log: PathBuf,
}

impl Litestream {
    pub async fn start(data_dir: &Path, replica: &Path, work: &Path) -> Litestream {
        let metrics = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
        let config = work.join("litestream.yml");
        let db = std::fs::canonicalize(data_dir).unwrap().join("sitebot.db");
        std::fs::write(
            &config,
            format!(
                "addr: \"{metrics}\"\ndbs:\n  - path: {}\n    replica:\n      type: file\n      path: {}\n      sync-interval: 1s\n",
                db.display(),
                replica.display()
            ),
        )
        .unwrap();
        let log = work.join("litestream.log");
        let child = Command::new(litestream_bin())
            .args(["replicate", "-config"])
            .arg(&config)
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(std::fs::File::create(work.join("litestream.err")).unwrap())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let ls = Litestream { child, metrics, log };
        let started = Instant::now();
        while ls.scrape().await.is_none() {
            assert!(started.elapsed() < Duration::from_secs(15), "Litestream's metrics never answered: {}", ls.logs());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        ls
    }

    pub async fn scrape(&self) -> Option<String> {
        let resp = reqwest::get(format!("http://{}/metrics", self.metrics)).await.ok()?;
        resp.text().await.ok()
    }

    /// A gauge or counter of the replicated database.
    pub async fn value(&self, name: &str) -> f64 {
        let text = self.scrape().await.expect("Litestream's metrics");
        text.lines().find(|l| l.starts_with(&format!("{name}{{db=\"/"))).and_then(|l| l.rsplit(' ').next()).and_then(|v| v.parse().ok()).unwrap_or(f64::NAN)
    }

    pub fn logs(&self) -> String {
        let err = self.log.with_file_name("litestream.err");
        format!("{}{}", std::fs::read_to_string(&self.log).unwrap_or_default(), std::fs::read_to_string(err).unwrap_or_default())
    }
}

/// Calls `send(i)` for i = 0, 1, ... at `per_second` until `stop`, each request in its own task so that
/// one slow answer does not slow the offered load; then gives the requests in flight up to `drain` to end
/// (those cut by a kill end too).
pub async fn at_rate<F>(per_second: u32, stop: std::sync::Arc<tokio::sync::Notify>, drain: Duration, mut send: impl FnMut(u64) -> F)
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    let mut tick = tokio::time::interval(Duration::from_secs(1) / per_second);
    let mut tasks = tokio::task::JoinSet::new();
    let stopped = stop.notified();
    tokio::pin!(stopped);
    for i in 0u64.. {
        tokio::select! {
            _ = &mut stopped => break,
            _ = tick.tick() => {}
        }
        tasks.spawn(send(i));
    }
    tokio::time::timeout(drain, async { while tasks.join_next().await.is_some() {} }).await.ok();
}
