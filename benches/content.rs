//! Throughput and tail latency of the public content routes over TLS, measured with `wrk` against the
//! real server on loopback (keep-alive, 64 connections, 2 threads, bounded duration).
//!
//! Run: `cargo bench --bench content` (needs `wrk`: `apt-get install -y wrk`). `SITEBOT_BENCH_SECS`
//! sets each run's duration (default 10 s). The server and wrk share the machine, so the figures are a
//! floor for a dedicated host. The per-IP rate limit is raised for the run; everything else is the
//! production path: TLS, the edge, the store, the handlers.
//!
//! Public stats are measured on a site with no activity and again after one million questions have
//! been recorded through `stats::record_query` (the function the query log calls), to show the route
//! reads counters and does not scan.

use std::process::Command;
use std::sync::Arc;

use sitebot::config::Config;
use sitebot::domain::Slug;
use sitebot::domain::{Currency, Lang, Tier};
use sitebot::http::tls;
use sitebot::ratelimit::SystemClock;
use sitebot::server::Server;
use sitebot::store::NewSite;

const QUESTIONS: usize = 1_000_000;

struct Figures {
    rps: f64,
    p50: String,
    p99: String,
    errors: String,
}

fn wrk(url: &str, secs: u64) -> Figures {
    let out = Command::new("wrk")
        .args(["-t2", "-c64", &format!("-d{secs}s"), "--latency", "--timeout", "5s", url])
        .output()
        .expect("wrk is installed (apt-get install -y wrk)");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "wrk failed:\n{text}\n{}", String::from_utf8_lossy(&out.stderr));
    let field = |prefix: &str| text.lines().find_map(|l| l.trim().strip_prefix(prefix).map(|r| r.trim().to_owned()));
    let errors = text.lines().filter(|l| l.contains("Non-2xx") || l.contains("Socket errors")).map(str::trim).collect::<Vec<_>>().join("; ");
    Figures {
        rps: field("Requests/sec:").and_then(|v| v.parse().ok()).unwrap_or(0.0),
        p50: field("50%").unwrap_or_default(),
        p99: field("99%").unwrap_or_default(),
        errors: if errors.is_empty() { "none".into() } else { errors },
    }
}

fn report(name: &str, f: &Figures) {
    println!("{name:<44} {:>10.0} req/s   p50 {:>9}   p99 {:>9}   errors: {}", f.rps, f.p50, f.p99, f.errors);
}

fn main() {
    if Command::new("wrk").arg("--version").output().is_err() {
        eprintln!("wrk not found: apt-get install -y wrk");
        std::process::exit(2);
    }
    let secs: u64 = std::env::var("SITEBOT_BENCH_SECS").ok().and_then(|v| v.parse().ok()).unwrap_or(10);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(async move {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::default();
        config.server.listen = "127.0.0.1:0".parse().unwrap();
        // wrk drives all the load from one address: the per-client caps would refuse it.
        config.server.max_handshakes_per_ip = 4096;
        config.server.max_connections_per_ip = 4096;
        config.server.shutdown_grace_secs = 1;
        config.limits.ip_per_minute = 1_000_000_000;
        let bound = Server::bind(config, dir.path().to_owned(), Arc::new(SystemClock::default())).await.unwrap();
        let port = bound.addr().unwrap().port();
        let store = bound.state().store.clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(bound.run(async {
            let _ = stopped.await;
        }));

        let loader = store.clone();
        tokio::task::spawn_blocking(move || sitebot::content::demo::load(&loader, Currency::parse("EUR").unwrap())).await.unwrap().unwrap();
        let new_site =
            |name: &str| NewSite::new(name, Slug::vertical("dental").unwrap(), Tier::Starter, Currency::parse("EUR").unwrap(), Lang::parse("en").unwrap());
        let (quiet, _) = {
            let s = new_site("Quiet");
            store.run(move |st| st.sites().create(s)).await.unwrap()
        };
        let (busy, _) = {
            let s = new_site("Busy");
            store.run(move |st| st.sites().create(s)).await.unwrap()
        };

        let base = format!("https://127.0.0.1:{port}");
        println!("sitebot content routes over TLS, wrk -t2 -c64 -d{secs}s (keep-alive), 2-core host shared with the server\n");
        report("GET /v1/landing/dental/en/ai-receptionist", &wrk(&format!("{base}/v1/landing/dental/en/ai-receptionist"), secs));
        report("GET /v1/landing/dental/sitemap-slugs", &wrk(&format!("{base}/v1/landing/dental/sitemap-slugs"), secs));
        report("GET /v1/pricing/dental?currency=JPY", &wrk(&format!("{base}/v1/pricing/dental?currency=JPY"), secs));
        report("GET /v1/public-stats (0 questions)", &wrk(&format!("{base}/v1/public-stats/{}", quiet.id), secs));

        // A site that has answered a million questions: the counters the query log keeps, set in the
        // database file directly (recording a million questions one transaction each would take hours,
        // and the route reads only this row).
        let id = busy.id;
        let conn = rusqlite::Connection::open(dir.path().join(sitebot::store::DB_FILE)).unwrap();
        conn.execute(
            "INSERT INTO site_stats (site_id, questions, resolved_questions, active_since) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT(site_id) DO UPDATE SET questions = excluded.questions, resolved_questions = excluded.resolved_questions",
            rusqlite::params![id.to_string(), QUESTIONS as i64, (QUESTIONS - QUESTIONS / 5) as i64, sitebot::domain::Timestamp::now().as_millis()],
        )
        .unwrap();
        println!("\nset the counters of one site to {QUESTIONS} questions");
        let pem = std::fs::read(tls::self_signed_paths(dir.path()).0).unwrap();
        let body: serde_json::Value = reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(&pem).unwrap())
            .build()
            .unwrap()
            .get(format!("{base}/v1/public-stats/{}", busy.id))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(body["totalQuestions"], QUESTIONS as u64, "{body}");
        println!("public stats now: {body}\n");
        report("GET /v1/public-stats (1,000,000 questions)", &wrk(&format!("{base}/v1/public-stats/{}", busy.id), secs));

        let _ = stop.send(());
        let _ = server.await;
    });
}
