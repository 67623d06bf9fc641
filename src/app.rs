//! `AppState`: everything a request handler or worker needs, built once at start-up and shared in an
//! `Arc`. No globals.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;

use crate::config::{Config, ConfigError};
use crate::domain::{Currency, EndpointPolicy, TrustedProxies, check_link_local};
use crate::ratelimit::{Clock, RateLimiter, SystemClock};
use crate::secrets::Keyring;
use crate::store::{Checkpoints, DB_FILE, Store};

pub struct AppState {
    pub config: Config,
    pub data_dir: PathBuf,
    pub store: Store,
    pub limiter: RateLimiter,
    pub started_at: chrono::DateTime<chrono::Utc>,
    /// Wakes the webhook worker when an event is enqueued.
    pub outbox_wake: Arc<tokio::sync::Notify>,
    /// Embeddings, vector indexes and retrieval; loading it fails when the runtime or model is missing.
    pub knowledge: Arc<crate::knowledge::Engine>,
    /// The operator's language model (`answer.generator = "openai"`), for sites whose answers may be
    /// generative; `None` when answers are always quoted.
    pub generator: Option<Arc<crate::knowledge::answer::generate::Generator>>,
    /// `server.trusted_proxies`, parsed: who may name the client (`http::client`).
    pub proxies: TrustedProxies,
    /// The Prometheus registry and the series the server records.
    pub metrics: Arc<crate::metrics::Metrics>,
    /// The data directory's free space against `storage.min_free_mb`.
    pub free_space: crate::disk::FreeSpace,
    /// What the start-up re-embedding did, once it is done (`None` while it runs).
    pub refreshed: tokio::sync::watch::Sender<Option<crate::knowledge::import::refresh::Reembedded>>,
    /// Staff presence, bells and stream caps for live hand-off (in memory, this process only).
    pub live: Arc<crate::live::Live>,
    /// False while the server builds vector indexes missing from the data directory (after a restore):
    /// `/readyz` answers 503 until they are in (`server::Server::bind`).
    pub indexes_ready: tokio::sync::watch::Sender<bool>,
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
    let checkpoints = if config.replication.litestream { Checkpoints::Litestream } else { Checkpoints::Automatic };
    let store = Store::open_with(&path, keyring, checkpoints).with_context(|| format!("cannot open the database {}", path.display()))?;
    // #25 email: a lead queues its owners' e-mails only when e-mail is on.
    if config.email.enabled() {
        store.enable_email();
    }
    Ok(store)
}

/// Builds, once, every type its consumers make from the configuration's plain values, so that a value
/// only a consumer can judge (an address list, a URL under the network rules, a key) is named when the
/// configuration is read rather than when the consumer first needs it. `cli` calls it after
/// `Config::load`, and `AppState::build` before anything starts.
pub fn check_config(config: &Config) -> Result<(), ConfigError> {
    let bad = |key: &str, message: String| ConfigError::BadValue { key: key.into(), message };
    TrustedProxies::parse(&config.server.trusted_proxies).map_err(ConfigError::Invalid)?;
    for (key, list) in [
        ("webhooks.allowed_link_local", &config.webhooks.allowed_link_local),
        ("crawl.allowed_link_local", &config.crawl.allowed_link_local),
        ("answer.allowed_link_local", &config.answer.allowed_link_local),
    ] {
        check_link_local(key, list).map_err(|e| ConfigError::Invalid(e.0))?;
    }
    EndpointPolicy::from_config(&config.webhooks)?;
    crate::knowledge::Queues::from_limits(&config.limits)?;
    if let Some(base) = config.answer.openai_base_url.as_deref().filter(|_| config.answer.generator == crate::config::GeneratorKind::Openai) {
        crate::knowledge::answer::generate::client::endpoint(base, &config.answer).map_err(|e| bad("answer.openai_base_url", e.to_string()))?;
    }
    Currency::parse(&config.pricing.reference_currency).map_err(|e| bad("pricing.reference_currency", e.to_string()))?;
    if let Some(key) = &config.secrets.master_key {
        Keyring::from_base64(key.expose()).map_err(|_| bad("secrets.master_key", "must be base64 of 32 bytes".into()))?;
    }
    // #25 email
    crate::email::smtp::Mailer::from_config(&config.email, &config.server.hostnames)?;
    Ok(())
}

impl AppState {
    pub fn build(config: Config, data_dir: PathBuf) -> anyhow::Result<Arc<AppState>> {
        Self::build_with_clock(config, data_dir, Arc::new(SystemClock::default()))
    }

    /// As `build`, with the rate limiter's clock chosen by the caller (tests advance a manual one).
    pub fn build_with_clock(config: Config, data_dir: PathBuf, clock: Arc<dyn Clock>) -> anyhow::Result<Arc<AppState>> {
        check_config(&config)?;
        let store = open_store(&config, &data_dir)?;
        store.bound_writes(config.limits.write_queue, config.limits.queue_wait()?);
        let generator = match config.answer.generator {
            crate::config::GeneratorKind::Openai => Some(Arc::new(crate::knowledge::answer::generate::Generator::new(&config.answer, clock.clone())?)),
            crate::config::GeneratorKind::Extractive => None,
        };
        let limiter = RateLimiter::new(clock, config.limits.burst_multiplier, config.limits.max_tracked_keys);
        let knowledge = crate::knowledge::Engine::open_with(&config.knowledge, &data_dir, crate::knowledge::Queues::from_limits(&config.limits)?)?;
        let proxies = TrustedProxies::parse(&config.server.trusted_proxies).map_err(ConfigError::Invalid)?;
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
            refreshed: tokio::sync::watch::Sender::new(None),
            live: Arc::new(crate::live::Live::default()),
            indexes_ready: tokio::sync::watch::Sender::new(true),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{GeneratorKind, Overrides};
    use crate::domain::NetworkPolicy;

    /// The configuration as the CLI reads it: loaded, then checked by its consumers.
    fn load(env: Vec<(String, String)>) -> Result<Config, ConfigError> {
        let c = Config::load(None, env, &Overrides::default())?;
        check_config(&c)?;
        Ok(c)
    }

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn values_only_a_consumer_can_judge_are_named_at_load() {
        let err = load(env(&[("SITEBOT_SERVER__TRUSTED_PROXIES", r#"["10.0.0.0/8", "proxy.internal"]"#)])).unwrap_err().to_string();
        assert!(err.contains("server.trusted_proxies") && err.contains("proxy.internal"), "{err}");
        let err = load(env(&[("SITEBOT_PRICING__REFERENCE_CURRENCY", "EURO")])).unwrap_err().to_string();
        assert!(err.contains("pricing.reference_currency"), "{err}");
        let err = load(env(&[("SITEBOT_SECRETS__MASTER_KEY", "c2hvcnQ=")])).unwrap_err().to_string();
        assert!(err.contains("secrets.master_key"), "{err}");
        let err = load(env(&[("SITEBOT_WEBHOOKS__DISABLE_AFTER", "forever")])).unwrap_err().to_string();
        assert!(err.contains("webhooks.disable_after"), "{err}");
    }

    #[test]
    fn the_answer_generator_needs_an_endpoint_that_meets_the_policy() {
        let c = load(env(&[])).unwrap();
        assert_eq!((c.answer.generator, c.answer.timeout_secs, c.answer.max_concurrency), (GeneratorKind::Extractive, 8, 4));
        let err = load(env(&[("SITEBOT_ANSWER__GENERATOR", "openai")])).unwrap_err().to_string();
        assert!(err.contains("answer.openai_base_url"), "{err}");
        let local = [("SITEBOT_ANSWER__GENERATOR", "openai"), ("SITEBOT_ANSWER__OPENAI_BASE_URL", "http://127.0.0.1:11434/v1"), ("SITEBOT_ANSWER__MODEL", "m")];
        let err = load(env(&local)).unwrap_err().to_string();
        assert!(err.contains("answer.allow_private_networks"), "{err}");
        let allowed = [local.as_slice(), &[("SITEBOT_ANSWER__ALLOW_PRIVATE_NETWORKS", "true"), ("SITEBOT_ANSWER__API_KEY", "sk-secret")]].concat();
        let c = load(env(&allowed)).unwrap();
        assert!(!c.to_toml().contains("sk-secret") && !format!("{c:?}").contains("sk-secret"));
    }

    #[test]
    fn link_local_addresses_are_named_one_by_one_per_kind_of_endpoint() {
        let c = load(env(&[])).unwrap();
        assert!(c.webhooks.allowed_link_local.is_empty() && c.crawl.allowed_link_local.is_empty() && c.answer.allowed_link_local.is_empty());
        let named = [("SITEBOT_WEBHOOKS__ALLOWED_LINK_LOCAL", r#"["169.254.10.5", "fd00:ec2::254"]"#), ("SITEBOT_CRAWL__ALLOWED_LINK_LOCAL", r#"["fe80::1"]"#)];
        let c = load(env(&named)).unwrap();
        let (hooks, crawl, answer) = (NetworkPolicy::webhooks(&c.webhooks), NetworkPolicy::crawl(&c.crawl), NetworkPolicy::answer(&c.answer));
        assert!(hooks.allows("169.254.10.5".parse().unwrap()) && hooks.allows("fd00:ec2::254".parse().unwrap()));
        assert!(!hooks.allows("169.254.169.254".parse().unwrap()) && !hooks.allows("fe80::1".parse().unwrap()));
        assert!(crawl.allows("fe80::1".parse().unwrap()) && !crawl.allows("169.254.10.5".parse().unwrap()));
        assert!(!answer.allows("169.254.10.5".parse().unwrap()));
        // Only link-local and metadata addresses can be named; anything else is allow_private_networks' call.
        let err = load(env(&[("SITEBOT_WEBHOOKS__ALLOWED_LINK_LOCAL", r#"["10.0.0.1"]"#)])).unwrap_err().to_string();
        assert!(err.contains("webhooks.allowed_link_local") && err.contains("10.0.0.1"), "{err}");
        let err = load(env(&[("SITEBOT_ANSWER__ALLOWED_LINK_LOCAL", r#"["metadata"]"#)])).unwrap_err().to_string();
        assert!(err.contains("answer.allowed_link_local"), "{err}");
    }
}
