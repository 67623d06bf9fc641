//! Replication and recovery with the real Litestream (`install.sh --deps-only` puts it in the cache) and
//! the built binary, over HTTPS on loopback:
//!
//! - a node replicated to a file replica takes leads; both sitebot and Litestream are killed with
//!   SIGKILL; `sitebot restore --from file://...` brings the database back into a data directory that
//!   holds only the master key; the restored node reports ready only once its vector index is built,
//!   answers from it, and has every lead acknowledged more than the replication window before the kill;
//! - a minute of leads while Litestream replicates (half with SQLite's own checkpoints, half with
//!   checkpoints left to Litestream) stalls no write beyond a second.
//!
//! The two run one after the other (each measures time on a shared machine).

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "common/nodes.rs"]
mod nodes;

use nodes::{Litestream, client, create_site, litestream_bin, private_dir, run, serve, sitebot};

/// Litestream takes new WAL frames about every second and ships them at `sync-interval` (1 s): leads
/// acknowledged within this much of a SIGKILL of both processes may be lost; older ones may not.
const REPLICATION_WINDOW: Duration = Duration::from_secs(2);
/// No write may take longer than this while Litestream replicates (a blocking checkpoint waits 5 s).
const STALL: Duration = Duration::from_secs(1);

/// One at a time: both tests time requests, and the machine has two cores.
static SERIAL: Mutex<()> = Mutex::new(());

/// A lead the server answered 202: its id, when the answer arrived, and how long the request took.
#[derive(Debug, Clone)]
struct Ack {
    id: String,
    at: Instant,
    took: Duration,
}

/// Posts leads at `per_second`, each with a message of `message` characters, each in its own task so that
/// one slow answer does not slow the offered load, until `stop` is set; returns the acknowledged ones and
/// the other answers (a refused or cut request).
async fn lead_load(
    client: reqwest::Client,
    base: String,
    site: String,
    per_second: u32,
    message: usize,
    stop: Arc<tokio::sync::Notify>,
) -> (Vec<Ack>, Vec<String>) {
    let acks = Arc::new(Mutex::new(Vec::new()));
    let failures = Arc::new(Mutex::new(Vec::new()));
    // Requests in flight when stopped are cut (by a kill) or finish: either way they are counted.
    nodes::at_rate(per_second, stop, Duration::from_secs(20), |i| {
        let (client, base, site, acks, failures) = (client.clone(), base.clone(), site.clone(), acks.clone(), failures.clone());
        async move {
            let sent = Instant::now();
            let resp = client
                .post(format!("{base}/v1/leads"))
                .header("X-Site-Id", &site)
                .json(&serde_json::json!({
                    "name": format!("Lead {i}"),
                    "email": format!("lead{i}@example.com"),
                    "message": format!("{i} ").repeat(message / (i.to_string().len() + 1)),
                }))
                .send()
                .await;
            match resp {
                Ok(r) if r.status() == 202 => {
                    let at = Instant::now();
                    let id = r.json::<serde_json::Value>().await.unwrap()["id"].as_str().unwrap().to_owned();
                    acks.lock().unwrap().push(Ack { id, at, took: at - sent });
                }
                Ok(r) => failures.lock().unwrap().push(format!("{}", r.status())),
                Err(e) => failures.lock().unwrap().push(e.to_string()),
            }
        }
    })
    .await;
    let acks = std::mem::take(&mut *acks.lock().unwrap());
    let failures = std::mem::take(&mut *failures.lock().unwrap());
    (acks, failures)
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().unwrap().block_on(f)
}

#[test]
fn a_node_killed_with_its_litestream_is_restored_with_every_lead_outside_the_window() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    block_on(async { tokio::time::timeout(Duration::from_secs(120), killed_and_restored()).await }).expect("the restore test finishes in two minutes");
}

async fn killed_and_restored() {
    let (dir, work, replica) = (private_dir(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let site = create_site(dir.path()).await;
    let doc = work.path().join("prices.md");
    std::fs::write(
        &doc,
        "# Prices\n\nIn-office teeth whitening costs 350 euros per session.\n\n# Hours\n\nThe practice is open Monday to Friday, 8 am to 6 pm.\n",
    )
    .unwrap();
    run(sitebot(dir.path()).args(["knowledge", "import", "--site", &site]).arg(&doc)).await;
    let litestream = Litestream::start(dir.path(), replica.path(), work.path()).await;
    let metrics = litestream.metrics.to_string();
    let told = [("SITEBOT_REPLICATION__LITESTREAM", "true"), ("SITEBOT_REPLICATION__METRICS_ADDR", metrics.as_str())];
    let (mut server, base) = serve(dir.path(), &told).await;

    // A steady load of leads, the replica's lag measured by doctor under it, then both killed.
    let stop = Arc::new(tokio::sync::Notify::new());
    let load = tokio::spawn(lead_load(client(dir.path()), base.clone(), site.clone(), 20, 0, stop.clone()));
    tokio::time::sleep(Duration::from_secs(3)).await;
    let doctor = sitebot(dir.path()).envs(told).arg("doctor").output().await.unwrap();
    let report = String::from_utf8_lossy(&doctor.stdout).into_owned();
    let lag = report.lines().find(|l| l.contains("replica lag")).unwrap_or_else(|| panic!("doctor reports no replica lag:\n{report}")).to_owned();
    assert!(lag.starts_with("ok    replica lag: Litestream took a change made now in"), "{lag}\n{}", litestream.logs());
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut litestream = litestream;
    let kill_at = Instant::now();
    litestream.child.start_kill().unwrap();
    server.start_kill().unwrap();
    stop.notify_one();
    let (acks, _cut) = load.await.unwrap();
    litestream.child.wait().await.unwrap();
    server.wait().await.unwrap();
    assert!(acks.len() > 50, "the load ran: {} leads acknowledged", acks.len());

    // doctor says so when Litestream is gone.
    let doctor = sitebot(dir.path()).envs(told).arg("doctor").output().await.unwrap();
    let report = String::from_utf8_lossy(&doctor.stdout).into_owned();
    assert!(!doctor.status.success(), "{report}");
    assert!(report.contains(&format!("FAIL  replica lag: cannot reach Litestream's metrics at http://{metrics}/metrics")), "{report}");

    // A new node: a data directory with nothing but the master key.
    let fresh = private_dir();
    let from = format!("file://{}", replica.path().display());
    let bin = litestream_bin();
    let restore = |data_dir: &Path| {
        let mut cmd = sitebot(data_dir);
        cmd.args(["restore", "--from", &from, "--litestream"]).arg(&bin);
        cmd
    };
    let refused = restore(fresh.path()).output().await.unwrap();
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("no master key at") && said.contains("copy the lost node's master.key"), "{said}");
    assert!(!fresh.path().join("sitebot.db").exists() && !fresh.path().join("master.key").exists(), "a refused restore leaves nothing");
    std::fs::copy(dir.path().join("master.key"), fresh.path().join("master.key")).unwrap();
    let started = Instant::now();
    let said = run(&mut restore(fresh.path())).await;
    let restore_time = started.elapsed();
    assert!(said.contains("integrity ok, 1 site(s)"), "{said}");
    use std::os::unix::fs::PermissionsExt;
    for entry in std::fs::read_dir(fresh.path()).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        assert!(["master.key", "sitebot.db", "sitebot.db-wal"].contains(&name.as_str()), "restore left {name} behind");
        assert_eq!(entry.metadata().unwrap().permissions().mode() & 0o077, 0, "{name} is private");
    }
    let again = restore(fresh.path()).output().await.unwrap();
    assert!(!again.status.success() && String::from_utf8_lossy(&again.stderr).contains("restore never overwrites"), "{again:?}");

    // Ready only once the vector index the new node lacked is built; then it answers from it.
    let (mut restored, base) = serve(fresh.path(), &[]).await;
    let c = client(fresh.path());
    let started = Instant::now();
    loop {
        let r = c.get(format!("{base}/readyz")).send().await.unwrap();
        if r.status() == 200 {
            break;
        }
        assert_eq!(r.status(), 503);
        assert!(started.elapsed() < Duration::from_secs(30), "never ready");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let indexes: Vec<_> = std::fs::read_dir(fresh.path().join("indexes")).map(|d| d.flatten().map(|e| e.file_name()).collect()).unwrap_or_default();
    assert!(indexes.iter().any(|n| n.to_string_lossy() == format!("{site}.usearch")), "ready before the vector index was built: {indexes:?}");
    let answer: serde_json::Value = c
        .post(format!("{base}/v1/query"))
        .header("X-Site-Id", &site)
        .json(&serde_json::json!({"question": "How much does whitening cost?"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(answer["answer"].as_str().unwrap_or_default().contains("350 euros"), "{answer}");

    let export = run(sitebot(fresh.path()).args(["leads", "export", "--site", &site, "--format", "jsonl"])).await;
    restored.start_kill().unwrap();
    let present: BTreeSet<String> =
        export.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["leadId"].as_str().unwrap().to_owned()).collect();
    let lost: Vec<&Ack> = acks.iter().filter(|a| !present.contains(&a.id)).collect();
    let outside = acks.iter().filter(|a| kill_at - a.at > REPLICATION_WINDOW).count();
    let lost_outside: Vec<&Ack> = lost.iter().copied().filter(|a| kill_at - a.at > REPLICATION_WINDOW).collect();
    let lag_at_kill = lost.iter().map(|a| kill_at - a.at).max().unwrap_or_default();
    let size = std::fs::metadata(fresh.path().join("sitebot.db")).unwrap().len();
    eprintln!(
        "replication: {}; {} leads acknowledged at 20/s, {outside} of them more than {:?} before the SIGKILL; {} lost, the oldest acknowledged {:.2} s before the kill; \
         restore of {size} bytes took {:.2} s",
        lag.trim_start_matches("ok    "),
        acks.len(),
        REPLICATION_WINDOW,
        lost.len(),
        lag_at_kill.as_secs_f64(),
        restore_time.as_secs_f64()
    );
    assert!(lost_outside.is_empty(), "leads acknowledged more than {REPLICATION_WINDOW:?} before the kill are missing: {lost_outside:?}");
}

#[test]
fn a_minute_of_leads_under_litestream_stalls_no_write_beyond_a_second() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    block_on(async { tokio::time::timeout(Duration::from_secs(150), steady_load()).await }).expect("the load test finishes in time");
}

async fn steady_load() {
    let (dir, work, replica) = (private_dir(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let site = create_site(dir.path()).await;
    let litestream = Litestream::start(dir.path(), replica.path(), work.path()).await;
    let metrics = litestream.metrics.to_string();
    // Half the minute with SQLite's own (PASSIVE) checkpoints, as sitebot runs when not told; half with
    // checkpoints left to Litestream. The restart in between opens the database under Litestream.
    let halves: [(&str, Vec<(&str, &str)>); 2] = [
        ("not told (SQLite checkpoints)", vec![]),
        ("[replication] litestream = true", vec![("SITEBOT_REPLICATION__LITESTREAM", "true"), ("SITEBOT_REPLICATION__METRICS_ADDR", metrics.as_str())]),
    ];
    for (what, env) in halves {
        let (mut server, base) = serve(dir.path(), &env).await;
        let stop = Arc::new(tokio::sync::Notify::new());
        let written_before = litestream.value("litestream_total_wal_bytes").await;
        // 4,000 characters a lead: the WAL passes 1,000 pages (4 MB) within the half, so checkpoints
        // (SQLite's, then Litestream's) run under the load.
        let load = tokio::spawn(lead_load(client(dir.path()), base, site.clone(), 40, 4000, stop.clone()));
        // The WAL file's size, which only a TRUNCATE checkpoint (never issued) would shrink.
        let mut wal_file = 0;
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(30) {
            tokio::time::sleep(Duration::from_millis(200)).await;
            wal_file = wal_file.max(std::fs::metadata(dir.path().join("sitebot.db-wal")).map(|m| m.len()).unwrap_or(0));
        }
        stop.notify_one();
        let (acks, failures) = load.await.unwrap();
        server.kill().await.unwrap();
        // Litestream copies every WAL frame once: more than the WAL file ever held means the WAL was
        // checkpointed and started again from its beginning during the load.
        tokio::time::sleep(Duration::from_secs(2)).await;
        let written = litestream.value("litestream_total_wal_bytes").await - written_before;
        let mut took: Vec<Duration> = acks.iter().map(|a| a.took).collect();
        took.sort();
        let (max, p99) = (took.last().copied().unwrap_or_default(), took.get(took.len() * 99 / 100).copied().unwrap_or_default());
        let (txid, errors) = (litestream.value("litestream_txid").await, litestream.value("litestream_sync_error_count").await);
        let wal = wal_file as f64;
        eprintln!(
            "load under Litestream, {what}: {} leads in 30 s, max write latency {:.0} ms, p99 {:.0} ms; Litestream txid {txid}, \
             {:.1} MB of WAL written through a WAL file of {:.1} MB, {errors} sync errors",
            acks.len(),
            max.as_secs_f64() * 1000.0,
            p99.as_secs_f64() * 1000.0,
            written / 1e6,
            wal / 1e6
        );
        assert!(written > wal, "{what}: the WAL was checkpointed and reused during the load ({written} bytes through {wal})");
        assert!(failures.is_empty(), "{what}: every lead is accepted, none refused or cut: {failures:?}");
        assert!(acks.len() > 600, "{what}: the load ran ({} leads)", acks.len());
        assert!(max < STALL, "{what}: a write took {max:?} (a blocking checkpoint waits for Litestream's lock)");
    }
    assert_eq!(litestream.value("litestream_sync_error_count").await, 0.0, "{}", litestream.logs());
}
