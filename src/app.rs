//! `AppState`: everything a request handler or worker needs, built once at start-up and shared in an
//! `Arc`. No globals.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;

use crate::config::Config;
use crate::ratelimit::{Clock, RateLimiter, SystemClock};
use crate::secrets::Keyring;
use crate::store::{DB_FILE, Store};

pub struct AppState {
    pub config: Config,
    pub data_dir: PathBuf,
    pub store: Store,
    pub limiter: RateLimiter,
    pub started_at: chrono::DateTime<chrono::Utc>,
    /// Wakes the webhook worker when an event is enqueued.
    pub outbox_wake: Arc<tokio::sync::Notify>,
    /// Embeddings, vector indexes and retrieval; loading it fails when the runtime or model is missing.
    pub knowledge: Arc<crate::knowledge::Knowledge>,
    /// The operator's language model (`answer.generator = "openai"`), for sites whose answers may be
    /// generative; `None` when answers are always quoted.
    pub generator: Option<Arc<crate::knowledge::generate::Generator>>,
    /// `server.trusted_proxies`, parsed: who may name the client (`http::client`).
    pub proxies: crate::http::client::TrustedProxies,
    /// The Prometheus registry and the series the server records.
    pub metrics: Arc<crate::metrics::Metrics>,
    /// The data directory's free space against `storage.min_free_mb`.
    pub free_space: crate::disk::FreeSpace,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState").field("data_dir", &self.data_dir).field("store", &self.store).finish_non_exhaustive()
    }
}

/// Creates the data directory (mode 0700) if needed.
pub fn ensure_data_dir(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    if !dir.exists() {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).with_context(|| format!("cannot create data directory {}", dir.display()))?;
    }
    let meta = std::fs::metadata(dir).with_context(|| format!("cannot read data directory {}", dir.display()))?;
    if !meta.is_dir() {
        anyhow::bail!("data directory {} is not a directory", dir.display());
    }
    if meta.permissions().mode() & 0o077 != 0 {
        tracing::warn!(dir = %dir.display(), "data directory is readable by other users; chmod 700 recommended");
    }
    Ok(())
}

/// Opens the store of a data directory (creating both on first use) with its keyring.
pub fn open_store(config: &Config, data_dir: &Path) -> anyhow::Result<Store> {
    ensure_data_dir(data_dir)?;
    let keyring = match &config.secrets.master_key {
        Some(k) => Keyring::from_base64(k.expose())?,
        None => Keyring::load_or_create(&data_dir.join("master.key"))?,
    };
    let path = data_dir.join(DB_FILE);
    Store::open(&path, keyring).with_context(|| format!("cannot open the database {}", path.display()))
}

impl AppState {
    pub fn build(config: Config, data_dir: PathBuf) -> anyhow::Result<Arc<AppState>> {
        Self::build_with_clock(config, data_dir, Arc::new(SystemClock::default()))
    }

    /// As `build`, with the rate limiter's clock chosen by the caller (tests advance a manual one).
    pub fn build_with_clock(config: Config, data_dir: PathBuf, clock: Arc<dyn Clock>) -> anyhow::Result<Arc<AppState>> {
        let store = open_store(&config, &data_dir)?;
        store.bound_writes(config.limits.write_queue, config.limits.queue_wait()?);
        let generator = match config.answer.generator {
            crate::config::GeneratorKind::Openai => Some(Arc::new(crate::knowledge::generate::Generator::new(&config.answer, clock.clone())?)),
            crate::config::GeneratorKind::Extractive => None,
        };
        let limiter = RateLimiter::new(clock, config.limits.burst_multiplier, config.limits.max_tracked_keys);
        let knowledge = crate::knowledge::Knowledge::open_with(&config.knowledge, &data_dir, config.limits.queues()?)?;
        let proxies = config.server.proxies()?;
        let metrics = Arc::new(crate::metrics::Metrics::new(config.server.metrics_listen.is_some(), config.server.metrics_per_site, &knowledge.stages));
        let free_space = crate::disk::FreeSpace::new(&data_dir, config.storage.min_free_mb);
        Ok(Arc::new(AppState {
            free_space,
            proxies,
            metrics,
            config,
            data_dir,
            store,
            limiter,
            started_at: chrono::Utc::now(),
            outbox_wake: Arc::new(tokio::sync::Notify::new()),
            knowledge,
            generator,
        }))
    }
}
