//! Live hand-off at the scale #26 names: 10,000 idle conversation event streams open on one server, what
//! they cost in memory and in `/v1/query` throughput, and how long a staff reply takes to reach a visitor.
//!
//! The server is the built binary (`sitebot serve`, a child process) so its memory is measured alone
//! (`VmRSS` of the child); the data directory is prepared in-process first (a site with the demo
//! knowledge and hand-off on, and an owner with a setup link), then closed.
//!
//! 1. `SITEBOT_BENCH_STREAMS` (10,000) conversations are made through `/v1/query` (each first answer
//!    carries its token).
//! 2. Rounds (`SITEBOT_BENCH_ROUNDS`, 2), in the same minutes: A, `/v1/query` at concurrency 32 for
//!    `SITEBOT_BENCH_WINDOW_SECS` (30: every idle stream's 25 s keep-alive comment falls in each window)
//!    without streams; then every conversation's `GET /v1/conversations/{id}/events` is opened
//!    over its own HTTP/2 TLS connection, as each visitor's browser opens one (8 per source address, the
//!    per-client cap, from 127.1.x.y), and
//!    the server's RSS is read once all answered 200; B, the same load beside them; then they are closed.
//!    Prints the RSS added, the throughput of each window and the server's CPU an answer in it (the
//!    bench's client shares the cores, so B's throughput also pays for the client's side of the streams),
//!    the totals and B/A.
//!    In round 1 the server's CPU with no requests is read for `SITEBOT_BENCH_IDLE_SECS` (30) without
//!    the streams and again beside them: what idle streams cost apart from the query load.
//! 3. With the streams open: an owner has the inbox open, a visitor asks for a person, the owner takes
//!    over and sends `SITEBOT_BENCH_REPLIES` (200) replies one after the other; each is timed from the
//!    console POST to its `message` event on the visitor's stream; then the visitor sends up to 20
//!    messages (a visitor's limit a minute), each timed from its POST to the staff's `inbox` event that
//!    counts it. Prints p50, p99 and max of each.
//!
//! Bounded and stops by itself: every connection is closed and the child killed at the end. Nothing is
//! asserted about time. Run: `cargo bench --locked --bench handoff` (`SITEBOT_BENCH_STREAMS=1000` for a
//! quick run; `SITEBOT_BENCH_HTTP2=0` speaks HTTP/1.1 instead, as clients other than browsers may;
//! `SITEBOT_BENCH_SERVER=PATH` serves from another build, for A against B).

#[path = "support/mod.rs"]
mod support;

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use sitebot::config::Config;
use sitebot::domain::{Currency, Email, Lang, SiteId, SiteRole, Slug, Tier, Timestamp};
use sitebot::http::tls;
use sitebot::ratelimit::SystemClock;
use sitebot::secrets::{new_url_token, token_hash};
use sitebot::server::Server;
use sitebot::store::users::Grant;
use sitebot::store::{NewSite, SiteUpdate};
use tokio::io::{AsyncBufReadExt, BufReader};

const OWNER: &str = "owner@bench.example";
const PASSWORD: &str = "a long enough bench passphrase";
const QUESTIONS: &[&str] =
    &["When are you open?", "Do you take new patients?", "How much is a cleaning?", "What do I do in an emergency?", "Do you accept insurance?"];
/// Streams one source address opens: the server's per-client cap.
const PER_ADDRESS: usize = 8;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() {
    if std::env::args().skip(1).any(|a| !a.starts_with('-') && !"handoff".contains(a.as_str())) {
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(bench());
}

/// The CPU time the child has used so far (user and system), from `/proc/PID/stat` in clock ticks of
/// 10 ms (Linux's `USER_HZ` of 100, which is what every architecture Debian builds for reports).
fn cpu_ms(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The name field may hold spaces; the fields counted from 3 start after its closing parenthesis.
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks * 10.0
}

/// The child's CPU use while nothing is asked of it, over `secs`: milliseconds of CPU a second.
async fn idle_cpu(pid: u32, secs: u64) -> f64 {
    let before = cpu_ms(pid);
    tokio::time::sleep(Duration::from_secs(secs)).await;
    (cpu_ms(pid) - before) / secs as f64
}

/// Waits until the child is at rest (under 50 ms of CPU in a second), 30 s at most.
async fn settle(pid: u32) {
    for _ in 0..30 {
        let before = cpu_ms(pid);
        tokio::time::sleep(Duration::from_secs(1)).await;
        if cpu_ms(pid) - before < 50.0 {
            return;
        }
    }
}

/// The child's resident memory, in MiB.
fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: f64 = status.lines().find_map(|l| l.strip_prefix("VmRSS:")).unwrap().trim().trim_end_matches("kB").trim().parse().unwrap();
    kb / 1024.0
}

fn client(pem: &[u8], from: Option<IpAddr>) -> reqwest::Client {
    let b = reqwest::Client::builder().use_rustls_tls();
    let b = if http2() { b.http2_prior_knowledge() } else { b.http1_only() };
    let mut b = b
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(pem).unwrap())
        .redirect(reqwest::redirect::Policy::none())
        .pool_max_idle_per_host(64);
    if let Some(ip) = from {
        b = b.local_address(ip);
    }
    b.build().unwrap()
}

/// Every client speaks HTTP/2 (ALPN h2, as the browsers the widget runs in do), and each stream gets a
/// client, so a connection, of its own, as each visitor's browser brings one; `SITEBOT_BENCH_HTTP2=0`:
/// HTTP/1.1, a connection a stream either way.
fn http2() -> bool {
    std::env::var_os("SITEBOT_BENCH_HTTP2").is_none_or(|v| v != "0")
}

/// A site with the demo knowledge and hand-off on at every hour, and an owner's setup token.
async fn prepare(dir: &std::path::Path) -> (SiteId, String) {
    let bound = Server::bind(Config::default(), dir.to_owned(), Arc::new(SystemClock::default())).await.unwrap();
    let state = bound.state().clone();
    let new = NewSite::new("Hand-off bench", Slug::vertical("dental").unwrap(), Tier::Enterprise, Currency::parse("EUR").unwrap(), Lang::parse("en").unwrap());
    let site = state.store.run(move |s| s.sites().create(new)).await.unwrap().0.id;
    state.store.run(move |s| s.site(site).update(SiteUpdate { handoff: Some(true), handoff_wait_secs: Some(3600), ..Default::default() })).await.unwrap();
    let (store, engine) = (state.store.clone(), state.knowledge.clone());
    tokio::task::spawn_blocking(move || {
        sitebot::cli::knowledge::import_inputs(&store, &engine, &site, &sitebot::knowledge::import::demo::inputs(), false, false).unwrap()
    })
    .await
    .unwrap();
    let token = new_url_token();
    let (hash, expires) = (token_hash(&token), Timestamp::from_millis(Timestamp::now().as_millis() + 86_400_000));
    let email = Email::parse(OWNER).unwrap();
    state.store.run(move |s| s.users().add(&email, false, Some(Grant { site_id: site, role: SiteRole::Owner }), &hash, expires)).await.unwrap();
    state.store.run(move |s| s.users().set_display_name(&s.users().by_email(OWNER)?.unwrap().id, "Ada")).await.unwrap();
    drop(bound);
    drop(state);
    (site, token)
}

async fn bench() {
    let streams = env_usize("SITEBOT_BENCH_STREAMS", 10_000);
    let window = Duration::from_secs(env_usize("SITEBOT_BENCH_WINDOW_SECS", 30) as u64);
    let rounds = env_usize("SITEBOT_BENCH_ROUNDS", 2);
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().to_owned();
    let (site, setup) = prepare(&dir).await;

    // `SITEBOT_BENCH_SERVER=PATH` serves from another build of the binary (a saved copy of the build
    // before a change, to run A against B in the same minutes); the data directory is this build's.
    let server = std::env::var_os("SITEBOT_BENCH_SERVER").unwrap_or_else(|| env!("CARGO_BIN_EXE_sitebot").into());
    // `SITEBOT_BENCH_HEAPTRACK=FILE` runs the server under heaptrack (Debian's), to see what a stream
    // allocates: `heaptrack_print -f FILE.zst --print-peaks 1`. Its RSS figures are then heaptrack's.
    let mut cmd = match std::env::var("SITEBOT_BENCH_HEAPTRACK") {
        Ok(out) => {
            let mut c = tokio::process::Command::new("heaptrack");
            c.arg("-o").arg(&out).arg(&server);
            c
        }
        Err(_) => tokio::process::Command::new(&server),
    };
    let mut child = cmd
        .arg("--data-dir")
        .arg(&dir)
        .args(["serve", "--listen", "127.0.0.1:0"])
        // One address drives the query load: no limit is what is measured.
        .env("SITEBOT_LIMITS__IP_PER_MINUTE", "1000000000")
        .env("SITEBOT_LIMITS__VISITOR_SHARE", "1.0")
        .env("SITEBOT_LIMITS__BURST_MULTIPLIER", "100000")
        // The owner's replies go one after another: the console's pace (five pages a second past a burst
        // of 30) would be what is timed, not the reply reaching the visitor.
        .env("SITEBOT_CONSOLE__PAGES_PER_MINUTE", "1000000")
        .env("SITEBOT_CONSOLE__PAGE_BURST", "100000")
        .env("SITEBOT_LOG__LEVEL", "warn")
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let base = loop {
        let line = lines.next_line().await.unwrap().expect("sitebot serve printed its address");
        if let Some(addr) = line.strip_prefix("listening on https://") {
            break format!("https://{}", addr.trim());
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let pem = std::fs::read(tls::self_signed_paths(&dir).0).unwrap();
    let http = client(&pem, None);

    // 1. The conversations, through the question route.
    let started = Instant::now();
    let made = Arc::new(tokio::sync::Mutex::new(Vec::with_capacity(streams)));
    let next = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..32 {
        let (http, base, made, next) = (http.clone(), base.clone(), made.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            while next.fetch_add(1, Ordering::Relaxed) < streams {
                let i = next.load(Ordering::Relaxed);
                let a: serde_json::Value = http
                    .post(format!("{base}/v1/query"))
                    .header("X-Site-Id", site.to_string())
                    .json(&serde_json::json!({"question": QUESTIONS[i % QUESTIONS.len()]}))
                    .send()
                    .await
                    .unwrap()
                    .json()
                    .await
                    .unwrap();
                let pair = (a["conversationId"].as_str().unwrap().to_owned(), a["conversationToken"].as_str().unwrap().to_owned());
                made.lock().await.push(pair);
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let conversations = Arc::new(std::mem::take(&mut *made.lock().await));
    println!("hand-off bench: {} conversations made through /v1/query in {:.1} s", conversations.len(), started.elapsed().as_secs_f64());

    // Warm-up.
    support::query_window(&http, &base, site, Duration::from_secs(3), QUESTIONS).await;
    let address = |i: usize| IpAddr::V4(Ipv4Addr::new(127, 1 + (i / 62_500) as u8, ((i / 250) % 250) as u8, (i % 250) as u8 + 1));
    // A client a source address over HTTP/1.1 (each stream still opens its own connection); one a stream
    // over HTTP/2, which would otherwise carry an address's streams on one connection.
    let addresses: Vec<reqwest::Client> = if http2() {
        (0..conversations.len()).map(|i| client(&pem, Some(address(i / PER_ADDRESS)))).collect()
    } else {
        (0..conversations.len().div_ceil(PER_ADDRESS)).map(|i| client(&pem, Some(address(i)))).collect()
    };
    println!("/v1/query at concurrency 32, {} s windows: A without streams, B beside {} idle event streams", window.as_secs(), conversations.len());
    let (mut a, mut b, mut rss_added) = (0usize, 0usize, Vec::new());
    // The server's CPU an answer in each window: the bench's client shares the machine's cores, so B's
    // throughput also pays for the client's side of the streams; this is the server's side alone.
    let (mut cpu_a, mut cpu_b) = (0.0, 0.0);
    // Each round's B against its own A: the machine's speed drifts between rounds minutes apart.
    let mut ratios = Vec::with_capacity(rounds);
    let mut latency_done = false;
    // `SITEBOT_BENCH_IDLE_SECS` (30): in round 1, the server's CPU with no requests is read for this long
    // without the streams and again beside them, so what idle streams cost a second is seen apart from the
    // query load (0 skips it).
    let idle_secs = env_usize("SITEBOT_BENCH_IDLE_SECS", 30) as u64;
    let mut idle_without = 0.0;
    for round in 1..=rounds {
        let cpu = cpu_ms(pid);
        let (n, failed) = support::query_window(&http, &base, site, window, QUESTIONS).await;
        let per = (cpu_ms(pid) - cpu) / n.max(1) as f64;
        println!("  round {round} A: {n} answered ({failed} failed), {:.1} req/s, server CPU {per:.2} ms an answer", n as f64 / window.as_secs_f64());
        a += n;
        cpu_a += per;
        let a_round = n.max(1);
        if round == 1 && idle_secs > 0 {
            idle_without = idle_cpu(pid, idle_secs).await;
        }
        let before = rss_mib(pid);
        let opened = Instant::now();
        let open = open_streams(&addresses, &base, site, &conversations).await;
        let after = rss_mib(pid);
        println!(
            "  round {round}: {} streams open in {:.1} s; server RSS {before:.1} MiB -> {after:.1} MiB: {:.1} MiB added ({:.1} KiB a stream)",
            open.len(),
            opened.elapsed().as_secs_f64(),
            after - before,
            (after - before) * 1024.0 / open.len() as f64
        );
        rss_added.push(after - before);
        if round == 1 && idle_secs > 0 {
            let with = idle_cpu(pid, idle_secs).await;
            println!(
                "  round {round}: server CPU with no requests, {idle_secs} s each: {idle_without:.1} ms/s without streams, {with:.1} ms/s beside them ({:.1} % of one core added)",
                (with - idle_without) / 10.0
            );
        }
        let cpu = cpu_ms(pid);
        let (n, failed) = support::query_window(&http, &base, site, window, QUESTIONS).await;
        let per = (cpu_ms(pid) - cpu) / n.max(1) as f64;
        println!("  round {round} B: {n} answered ({failed} failed), {:.1} req/s, server CPU {per:.2} ms an answer", n as f64 / window.as_secs_f64());
        b += n;
        cpu_b += per;
        ratios.push(n as f64 / a_round as f64);
        if !latency_done {
            latency(&http, &base, site, &setup, &conversations[0]).await;
            latency_done = true;
        }
        drop(open);
        // The next A starts once the server has closed the connections (10,000 TLS connections take it a
        // few seconds): an A window that overlapped that work ran slow and made B/A look better.
        settle(pid).await;
    }
    let secs = window.as_secs_f64() * rounds as f64;
    println!(
        "  total A {:.1} req/s, B {:.1} req/s, B/A = {:.3}; server CPU an answer A {:.2} ms, B {:.2} ms, B/A = {:.3}; RSS added by the streams: {}",
        a as f64 / secs,
        b as f64 / secs,
        b as f64 / a as f64,
        cpu_a / rounds as f64,
        cpu_b / rounds as f64,
        cpu_b / cpu_a,
        rss_added.iter().map(|m| format!("{m:.1} MiB")).collect::<Vec<_>>().join(", ")
    );
    ratios.sort_by(f64::total_cmp);
    println!(
        "  B/A of each round: {}; median {:.3}",
        ratios.iter().map(|r| format!("{r:.3}")).collect::<Vec<_>>().join(", "),
        if ratios.len() % 2 == 1 { ratios[ratios.len() / 2] } else { (ratios[ratios.len() / 2 - 1] + ratios[ratios.len() / 2]) / 2.0 }
    );
    if std::env::var_os("SITEBOT_BENCH_HEAPTRACK").is_some() {
        // A clean stop, so heaptrack's file is complete (the child is heaptrack's script, not sitebot).
        let _ = std::process::Command::new("pkill").args(["-TERM", "-f", &format!("data-dir {}", dir.display())]).status();
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
    child.kill().await.unwrap();
    drop(temp);
}

/// Opens every conversation's event stream, `PER_ADDRESS` to a source address; returns the open
/// responses (dropping them closes the connections).
async fn open_streams(addresses: &[reqwest::Client], base: &str, site: SiteId, conversations: &Arc<Vec<(String, String)>>) -> Vec<reqwest::Response> {
    let mut tasks = Vec::new();
    let gate = Arc::new(tokio::sync::Semaphore::new(64));
    let per_client = if addresses.len() == conversations.len() { 1 } else { PER_ADDRESS };
    for (i, c) in addresses.iter().enumerate() {
        for j in 0..per_client {
            let Some((cid, token)) = conversations.get(i * per_client + j).cloned() else { break };
            let (c, base, gate) = (c.clone(), base.to_owned(), gate.clone());
            tasks.push(tokio::spawn(async move {
                let _permit = gate.acquire().await.unwrap();
                let resp = c
                    .get(format!("{base}/v1/conversations/{cid}/events"))
                    .header("X-Site-Id", site.to_string())
                    .header("X-Conversation-Token", token)
                    .send()
                    .await
                    .unwrap();
                assert_eq!(resp.status(), 200, "an event stream");
                resp
            }));
        }
    }
    let mut open = Vec::with_capacity(tasks.len());
    for t in tasks {
        open.push(t.await.unwrap());
    }
    open
}

/// Staff reply to visitor over loopback, beside the idle streams: the owner signs in and opens the
/// inbox, the visitor (the first conversation, whose idle stream is one of the others) asks for a
/// person, the owner takes over and replies; each reply is timed from the POST to its event.
async fn latency(http: &reqwest::Client, base: &str, site: SiteId, setup: &str, (cid, token): &(String, String)) {
    let resp =
        http.post(format!("{base}/console/setup/{setup}")).header("Origin", base).form(&[("password", PASSWORD), ("repeat", PASSWORD)]).send().await.unwrap();
    assert_eq!(resp.status(), 303, "setup");
    let cookie = resp
        .headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("__Host-sitebot_session="))
        .map(|v| v.split(';').next().unwrap().to_owned())
        .unwrap();
    let page = http.get(format!("{base}/console/sites")).header("Cookie", &cookie).send().await.unwrap().text().await.unwrap();
    let at = page.find("name=\"csrf\" value=\"").unwrap() + "name=\"csrf\" value=\"".len();
    let csrf = page[at..].split('"').next().unwrap().to_owned();
    let inbox = http.get(format!("{base}/console/sites/{site}/inbox/events")).header("Cookie", &cookie).send().await.unwrap();
    assert_eq!(inbox.status(), 200);
    let visitor =
        |what: &str| http.post(format!("{base}/v1/conversations/{cid}/{what}")).header("X-Site-Id", site.to_string()).header("X-Conversation-Token", token);
    assert_eq!(visitor("handoff").send().await.unwrap().status(), 202);
    let staff = |what: &str, text: &str| {
        http.post(format!("{base}/console/sites/{site}/inbox/{cid}/{what}"))
            .header("Cookie", &cookie)
            .header("Origin", base)
            .form(&[("csrf", csrf.as_str()), ("text", text)])
    };
    assert_eq!(staff("take", "").send().await.unwrap().status(), 303);
    let mut stream = http
        .get(format!("{base}/v1/conversations/{cid}/events"))
        .header("X-Site-Id", site.to_string())
        .header("X-Conversation-Token", token)
        .send()
        .await
        .unwrap();
    let mut buf = String::new();
    // Read up to the `joined` event: what came before is not timed.
    while !buf.contains("\"joined\"") {
        buf.push_str(&String::from_utf8_lossy(&stream.chunk().await.unwrap().unwrap()));
    }
    let replies = env_usize("SITEBOT_BENCH_REPLIES", 200);
    let mut took = Vec::with_capacity(replies);
    for i in 0..replies {
        let text = format!("reply number {i}.");
        let sent = Instant::now();
        assert_eq!(staff("reply", &text).send().await.unwrap().status(), 303);
        while !buf.contains(&text) {
            buf.push_str(&String::from_utf8_lossy(&stream.chunk().await.unwrap().unwrap()));
        }
        took.push(sent.elapsed());
        buf.clear();
    }
    took.sort();
    let ms = |p: f64| took[((took.len() as f64 * p).ceil() as usize).clamp(1, took.len()) - 1].as_secs_f64() * 1000.0;
    println!(
        "  staff reply -> visitor's stream ({replies} replies, console POST included): p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        ms(0.5),
        ms(0.99),
        ms(1.0)
    );

    // The other way: a visitor's message to the staff's inbox stream, timed from the visitor's POST to the
    // `inbox` event that counts it (the console shows the conversation again on that event). A visitor
    // may send 20 messages a minute to a person, so at most 20 are timed.
    let mut inbox = inbox;
    let mut events = String::new();
    let mut last = 0;
    // What the replies above rang: read until the stream is quiet, keeping the latest count.
    while let Ok(Some(Ok(chunk))) = tokio::time::timeout(Duration::from_millis(500), inbox.chunk()).await.map(|c| c.transpose()) {
        events.push_str(&String::from_utf8_lossy(&chunk));
        last = last.max(inbox_last_event(&mut events, cid));
    }
    let messages = replies.min(20);
    let mut took = Vec::with_capacity(messages);
    for i in 0..messages {
        let sent = Instant::now();
        let resp = visitor("messages").json(&serde_json::json!({"text": format!("visitor message {i}")})).send().await.unwrap();
        assert_eq!(resp.status(), 202, "a visitor's message");
        let want = last + 1;
        while last < want {
            let chunk = tokio::time::timeout(Duration::from_secs(10), inbox.chunk()).await.expect("the inbox told of the message within 10 s");
            events.push_str(&String::from_utf8_lossy(&chunk.unwrap().unwrap()));
            last = last.max(inbox_last_event(&mut events, cid));
        }
        took.push(sent.elapsed());
    }
    took.sort();
    let ms = |p: f64| took[((took.len() as f64 * p).ceil() as usize).clamp(1, took.len()) - 1].as_secs_f64() * 1000.0;
    println!(
        "  visitor message -> staff's inbox stream ({messages} messages, the visitor's POST included): p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        ms(0.5),
        ms(0.99),
        ms(1.0)
    );
}

/// The largest last event id of conversation `cid` in the complete `inbox` events at the start of `buf`
/// (which are taken out of it); 0 when none names it. Every message raises it.
fn inbox_last_event(buf: &mut String, cid: &str) -> usize {
    let mut most = 0;
    while let Some(end) = buf.find("\n\n") {
        let block: String = buf.drain(..end + 2).collect();
        let Some(data) = block.lines().find_map(|l| l.strip_prefix("data:")) else { continue };
        let Ok(v) = serde_json::from_str::<serde_json::Value>(data.trim()) else { continue };
        for c in v["conversations"].as_array().into_iter().flatten() {
            if c["conversationId"] == cid {
                most = most.max(c["lastEvent"].as_u64().unwrap_or(0) as usize);
            }
        }
    }
    most
}
