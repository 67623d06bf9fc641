//! The replica's lag as `sitebot doctor` reports it, from Litestream's own Prometheus metrics (its
//! `addr:`, named by `replication.metrics_addr`).
//!
//! Litestream 0.5.17 exports, per database (label `db`, the database's absolute path): `litestream_txid`
//! (the last transaction it has taken from the WAL into its own files, which it ships to the replica
//! every `sync-interval`), `litestream_sync_count` and `litestream_sync_error_count` (its syncs, about
//! one a second, and the failed ones), `litestream_wal_size` and `litestream_db_size`. No series says
//! how far the replica is behind in time, so doctor measures it: it commits one row (`meta`
//! `replication_probe`) and times how long Litestream takes to count a new transaction.

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::store::Store;

/// How long doctor waits for Litestream to take the probe: far beyond its one-second cadence, short of
/// its backoff after errors (which then is the finding).
const PROBE_WAIT: Duration = Duration::from_secs(10);

/// One database's series, as read at one scrape.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Position {
    txid: f64,
    syncs: f64,
    sync_errors: f64,
}

/// The series of `db` in a scrape of Litestream's metrics; `Err` names the databases it does replicate.
fn position(text: &str, db: &Path) -> Result<Position, String> {
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).map_err(|e| format!("unreadable metrics: {e}"))?;
    let wanted = db.to_string_lossy();
    let value = |name: &str| {
        scrape.samples.iter().find(|s| s.metric == name && s.labels.get("db") == Some(&*wanted)).and_then(|s| match s.value {
            prometheus_parse::Value::Counter(v) | prometheus_parse::Value::Gauge(v) | prometheus_parse::Value::Untyped(v) => Some(v),
            _ => None,
        })
    };
    match (value("litestream_txid"), value("litestream_sync_count"), value("litestream_sync_error_count")) {
        (Some(txid), Some(syncs), Some(sync_errors)) => Ok(Position { txid, syncs, sync_errors }),
        _ => {
            let mut dbs: Vec<&str> = scrape.samples.iter().filter(|s| s.metric == "litestream_txid").filter_map(|s| s.labels.get("db")).collect();
            dbs.dedup();
            Err(format!("Litestream does not replicate {wanted} (it replicates: {})", if dbs.is_empty() { "nothing".into() } else { dbs.join(", ") }))
        }
    }
}

async fn scrape(client: &reqwest::Client, url: &str, db: &Path) -> Result<Position, String> {
    let resp = client.get(url).send().await.map_err(|e| format!("cannot reach Litestream's metrics at {url}: {e}"))?;
    if !resp.status().is_success() {
        return Err(format!("Litestream's metrics at {url} answered {}", resp.status()));
    }
    position(&resp.text().await.map_err(|e| format!("{url}: {e}"))?, db)
}

/// The replica's lag: one probe row committed, and the time until Litestream counts it.
pub fn lag_check(addr: SocketAddr, store: &Store) -> Result<String, String> {
    let url = format!("http://{addr}/metrics");
    // Litestream labels the series with the path its configuration names; the data directory may be
    // given through a symbolic link.
    let db = std::fs::canonicalize(store.path()).unwrap_or_else(|_| store.path().to_owned());
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    rt.block_on(async {
        let client = reqwest::Client::builder().timeout(Duration::from_secs(3)).build().map_err(|e| e.to_string())?;
        let unreachable = |e: String| format!("{e}; is sitebot-litestream running, with addr: \"{addr}\" in its litestream.yml?");
        let before = scrape(&client, &url, &db).await.map_err(unreachable)?;
        let probe = store.clone();
        probe.run(|s| s.meta("replication_probe").set(&chrono::Utc::now().to_rfc3339())).await.map_err(|e| format!("cannot write the probe row: {e}"))?;
        let started = Instant::now();
        loop {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let now = scrape(&client, &url, &db).await?;
            let errors = now.sync_errors - before.sync_errors;
            if now.txid > before.txid {
                let waited = started.elapsed().as_secs_f64();
                return Ok(format!(
                    "Litestream took a change made now in {waited:.1} s (txid {}, {} sync errors since it started{}); it ships it to the replica within its sync-interval",
                    now.txid,
                    now.sync_errors,
                    if errors > 0.0 { format!(", {errors} during this check") } else { String::new() }
                ));
            }
            if started.elapsed() > PROBE_WAIT {
                return Err(format!(
                    "Litestream has not taken a change made {} s ago (txid stays {}, {} syncs and {errors} sync errors meanwhile): replication is stalled or backing off; see journalctl -u sitebot-litestream",
                    PROBE_WAIT.as_secs(),
                    now.txid,
                    now.syncs - before.syncs
                ));
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scrape of Litestream 0.5.17 (`litestream replicate` with `addr:`), trimmed.
    const SCRAPE: &str = r#"# HELP litestream_db_size The current size of the real DB
# TYPE litestream_db_size gauge
litestream_db_size{db="/var/lib/sitebot/sitebot.db"} 8192
# HELP litestream_l0_retention_files_total Number of L0 files by status during retention enforcement
# TYPE litestream_l0_retention_files_total gauge
litestream_l0_retention_files_total{db="sitebot.db",status="eligible"} 0
# HELP litestream_sync_count Number of sync operations performed
# TYPE litestream_sync_count counter
litestream_sync_count{db="/var/lib/sitebot/sitebot.db"} 19
# HELP litestream_sync_error_count Number of sync errors that have occurred
# TYPE litestream_sync_error_count counter
litestream_sync_error_count{db="/var/lib/sitebot/sitebot.db"} 2
# HELP litestream_txid The current transaction ID
# TYPE litestream_txid gauge
litestream_txid{db="/var/lib/sitebot/sitebot.db"} 3
"#;

    #[test]
    fn the_database_series_are_read_and_another_database_is_named() {
        let p = position(SCRAPE, Path::new("/var/lib/sitebot/sitebot.db")).unwrap();
        assert_eq!(p, Position { txid: 3.0, syncs: 19.0, sync_errors: 2.0 });
        let err = position(SCRAPE, Path::new("/srv/sitebot/sitebot.db")).unwrap_err();
        assert_eq!(err, "Litestream does not replicate /srv/sitebot/sitebot.db (it replicates: /var/lib/sitebot/sitebot.db)");
    }
}
