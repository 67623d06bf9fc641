//! `[replication]`: whether Litestream replicates the database, and where its metrics are.

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// Continuous replication of the database by Litestream (docs/scale-out.md). sitebot runs
/// correctly under Litestream whether or not this says so (it never issues a blocking checkpoint nor
/// changes the journal mode); saying so hands checkpoints to Litestream and lets `doctor` watch it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReplicationConfig {
    /// Litestream replicates this data directory's database: sitebot leaves WAL checkpoints to it
    /// (`wal_autocheckpoint = 0`), as Litestream advises under write load. Only with Litestream running:
    /// without it nothing checkpoints and the WAL grows.
    pub litestream: bool,
    /// Where Litestream serves its Prometheus metrics (`addr:` in litestream.yml, e.g.
    /// `127.0.0.1:9090`): `sitebot doctor` reports the replica's lag and sync errors from them.
    pub metrics_addr: Option<SocketAddr>,
}

impl ReplicationConfig {
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        if self.metrics_addr.is_some() && !self.litestream {
            return Err(ConfigError::Invalid(
                "replication.metrics_addr names Litestream's metrics, but replication.litestream is false: set it to true when Litestream replicates".into(),
            ));
        }
        Ok(())
    }
}
