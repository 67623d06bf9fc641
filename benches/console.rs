//! The console at the size #24 names: one site with 1,000,000 logged questions, 100,000 conversations
//! and 10,000 leads, its pages timed over TLS from the client, and `/v1/query` throughput at
//! concurrency 32 without and with a console client loading dashboards, in the same run.
//!
//! 1. Fill. The history goes in through the store's `history()` (the functions the live paths run in
//!    their transactions, many items to a transaction, each at its own time): questions over the last 89
//!    days, each in a conversation, a fifth of them unanswered (grouped in the review queue by vectors
//!    near one of `SITEBOT_BENCH_MEANINGS` centres, of the real model's width and fingerprint), cited
//!    documents, ratings, and leads with their `lead.captured` outbox rows (the site has a webhook; no
//!    worker delivers). Then retention runs with the default settings, as housekeeping would, leaving the
//!    conversations of the last 30 days. Prints how long it took.
//! 2. Pages. An owner made as `sitebot user add` makes one (setup link, password) signs in; each page of
//!    the site is fetched `SITEBOT_BENCH_REQUESTS` times one after the other (keep-alive), after a
//!    warm-up; prints p50, p95 and max per page. Client-side over loopback TLS, so an upper bound of the
//!    server's time.
//! 3. Throughput. A second site holds the demo knowledge; 32 clients ask its questions for
//!    `SITEBOT_BENCH_WINDOW_SECS` (20) without console load (A), then with one console client loading the
//!    dashboards (7, 30, 90 days) and the sites page in a loop (B), alternating `SITEBOT_BENCH_ROUNDS`
//!    (3) times; prints requests a second of each window, the totals and the ratio B/A.
//! 4. Sign-in bursts. `SITEBOT_BENCH_QUERY_CLIENTS` (4) clients ask the demo site's questions one after
//!    another, each answer timed, for the same windows: alone (A), then beside a burst of 100 wrong
//!    passwords sent at once for one account every `SITEBOT_BENCH_BURST_EVERY_MS` (1000) (B), each burst
//!    for another account (an unknown one, which costs the same check) from another client address (named
//!    by `X-Forwarded-For`, the bench's loopback being a trusted proxy): the most checks the sign-in
//!    throttle lets attackers with many addresses buy. The bursts go over one HTTP/2 connection, so what
//!    they cost is the sign-in, not TLS handshakes. Prints `/v1/query` p50 and p99 of each window, the
//!    bursts' answers (checked, throttled, busy), and the ratios B/A.
//!
//! Run: `cargo bench --locked --bench console`. `SITEBOT_BENCH_QUESTIONS`, `SITEBOT_BENCH_CONVERSATIONS`
//! and `SITEBOT_BENCH_LEADS` scale the site down for a quick run. `SITEBOT_BENCH_DIR=DIR` keeps the data
//! directory in DIR, and a later run on the same DIR skips the fill (a migration added since runs on it).
//! `SITEBOT_BENCH_PAGES_ONLY=1` skips the throughput parts, `SITEBOT_BENCH_THROUGHPUT_ONLY=1` the pages
//! and the sign-in bursts, `SITEBOT_BENCH_SIGN_IN_ONLY=1` all but the sign-in bursts (with
//! `SITEBOT_BENCH_QUESTIONS=2000 SITEBOT_BENCH_CONVERSATIONS=200 SITEBOT_BENCH_LEADS=20` the fill then
//! takes seconds).
//! `SITEBOT_BENCH_LOADER_PATH=/console/assets/console.css` makes the B client load that address instead of
//! the dashboards: what a client's loop costs the API with (next to) no work of the console's behind it.
//! The B client is `wrk` in a process of its own, one connection, as a user's browser is on a machine of
//! its own; `SITEBOT_BENCH_LOADER=in-process` runs it in this process instead (its TLS and HTTP then
//! share the server's cores). The server paces one session's pages (`console.pages_per_minute`, 300);
//! `SITEBOT_BENCH_PAGES_PER_MINUTE=1000000` lifts that, to see what an unpaced loop would cost.
//! `SITEBOT_BENCH_LOADER_PER_SEC=10` paces that client (10 a second is what the server's default
//! `limits.ip_per_minute`, 600, lets one address load sustained; the bench lifts that limit).

#[path = "support/mod.rs"]
mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use sitebot::config::Config;
use sitebot::domain::{AnswerMode, ConversationId, Currency, Email, Lang, NetworkPolicy, QueryId, SiteId, SiteRole, Slug, Tier, Timestamp, WebhookUrl};
use sitebot::http::tls;
use sitebot::ratelimit::SystemClock;
use sitebot::secrets::{new_url_token, token_hash};
use sitebot::server::Server;
use sitebot::store::analytics::Rating;
use sitebot::store::history::Event;
use sitebot::store::leads::NewLead;
use sitebot::store::queries::{Cited, QueryRecord};
use sitebot::store::review::ReviewVector;
use sitebot::store::users::Grant;
use sitebot::store::{NewSite, Store};

const BENCH_SITE: &str = "Console bench";
const KNOWLEDGE_SITE: &str = "Query bench";
const OWNER: &str = "owner@bench.example";
const PASSWORD: &str = "a long enough bench passphrase";
const DAY_MS: i64 = 86_400_000;
/// Days of history: inside the query log's default retention (90 days).
const HISTORY_DAYS: i64 = 89;
/// Sessions the page timings go round (each sees one request in this many, far inside its pace).
const SESSIONS: usize = 64;
/// Items written to one transaction.
const BATCH: usize = 20_000;
/// A word some questions hold (about 1 in 20,000) and one none does: the conversations page's text
/// filter at its rare and at its worst case.
const RARE_WORD: &str = "quokka";
const ABSENT_WORD: &str = "zyzzyva";

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e3
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument that is not ours means "not this bench".
    if std::env::args().skip(1).any(|a| !a.starts_with('-') && !"console".contains(a.as_str())) {
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(bench());
}

async fn bench() {
    let kept = std::env::var("SITEBOT_BENCH_DIR").ok().map(std::path::PathBuf::from);
    let temp = tempfile::tempdir().unwrap();
    let dir = kept.clone().unwrap_or_else(|| temp.path().to_owned());
    std::fs::create_dir_all(&dir).unwrap();
    let mut config = Config::default();
    config.server.listen = "127.0.0.1:0".parse().unwrap();
    // One client address drives all the load: lift the per-client caps and give it the sites' whole
    // budgets, with buckets deep enough for the run, so no limit is what is measured.
    config.server.max_handshakes_per_ip = 4096;
    config.server.max_connections_per_ip = 4096;
    config.limits.ip_per_minute = 1_000_000_000;
    config.limits.visitor_share = 1.0;
    config.limits.burst_multiplier = 100_000;
    // The sign-in bursts name their client addresses (part 4); nothing else sends the header.
    config.server.trusted_proxies = vec!["127.0.0.0/8".into()];
    // The console's own pace for one session stays at its default unless asked (a huge value lifts it).
    config.console.pages_per_minute = env_usize("SITEBOT_BENCH_PAGES_PER_MINUTE", config.console.pages_per_minute as usize) as u32;
    let retention = config.retention.clone();
    let bound = Server::bind(config, dir.clone(), Arc::new(SystemClock::default())).await.unwrap().without_background_delivery();
    let base = format!("https://{}", bound.addr().unwrap());
    let state = bound.state().clone();

    let sites = state.store.run(|s| s.sites().list()).await.unwrap();
    let (site, query_site) = match (sites.iter().find(|s| s.name == BENCH_SITE), sites.iter().find(|s| s.name == KNOWLEDGE_SITE)) {
        (Some(a), Some(b)) => {
            println!("console bench: reusing the filled site in {}", dir.display());
            (a.id, b.id)
        }
        _ => {
            let shape = Shape {
                questions: env_usize("SITEBOT_BENCH_QUESTIONS", 1_000_000),
                conversations: env_usize("SITEBOT_BENCH_CONVERSATIONS", 100_000),
                leads: env_usize("SITEBOT_BENCH_LEADS", 10_000),
                meanings: env_usize("SITEBOT_BENCH_MEANINGS", 400),
            };
            let site = create_site(&state.store, BENCH_SITE, true).await;
            let (store, model) = (state.store.clone(), state.knowledge.embedder.fingerprint.clone());
            let width = state.knowledge.embedder.manifest.dimensions;
            let started = Instant::now();
            let filled = tokio::task::spawn_blocking(move || fill(&store, site, &shape, &model, width, &retention)).await.unwrap();
            let took = started.elapsed().as_secs_f64();
            println!(
                "fill: {} questions, {} ratings, {} leads in {took:.0} s ({:.0} items/s); retention then left {} conversations",
                shape.questions,
                filled.ratings,
                shape.leads,
                (shape.questions + filled.ratings + shape.leads) as f64 / took,
                filled.conversations_left
            );
            let query_site = create_site(&state.store, KNOWLEDGE_SITE, false).await;
            let (store, engine) = (state.store.clone(), state.knowledge.clone());
            tokio::task::spawn_blocking(move || {
                sitebot::cli::knowledge::import_inputs(&store, &engine, &query_site, &sitebot::knowledge::import::demo::inputs(), false, false).unwrap()
            })
            .await
            .unwrap();
            (site, query_site)
        }
    };
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(bound.run(async {
        let _ = stop_rx.await;
    }));
    let pem = std::fs::read(tls::self_signed_paths(&dir).0).unwrap();
    let client = reqwest::Client::builder()
        .use_rustls_tls()
        .http1_only()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(&pem).unwrap())
        .redirect(reqwest::redirect::Policy::none())
        .pool_max_idle_per_host(64)
        .build()
        .unwrap();
    let console = Console { client: client.clone(), base: base.clone(), cookie: sign_in(&state, &client, &base, site).await };
    let only = |part: &str| std::env::var(format!("SITEBOT_BENCH_{part}_ONLY")).is_ok();
    if !only("THROUGHPUT") && !only("SIGN_IN") {
        // The server paces one session's pages (`console.pages_per_minute`); the timings are of pages,
        // not of that pace, so they go round sessions of the same owner, each well inside its pace.
        let user = state.store.run(|s| s.users().by_email(OWNER)).await.unwrap().expect("the owner");
        let mut cookies = Vec::new();
        for _ in 0..SESSIONS {
            let set = sitebot::console::session::start(&state, &user).await.unwrap();
            cookies.push(set.split(';').next().unwrap().to_owned());
        }
        let sessions: Vec<Console> = cookies.into_iter().map(|cookie| Console { client: client.clone(), base: base.clone(), cookie }).collect();
        pages(&state.store, &sessions, site).await;
    }
    if !only("PAGES") && !only("SIGN_IN") {
        throughput(&client, &base, query_site, &console, site, state.config.console.pages_per_minute).await;
    }
    if !only("PAGES") && !only("THROUGHPUT") {
        sign_in_bursts(&client, &pem, &base, query_site).await;
    }
    let _ = stop_tx.send(());
    let _ = server.await;
    drop(temp);
}

async fn create_site(store: &Store, name: &str, webhook: bool) -> SiteId {
    let mut new = NewSite::new(name, Slug::vertical("dental").unwrap(), Tier::Enterprise, Currency::parse("EUR").unwrap(), Lang::parse("en").unwrap());
    if webhook {
        // Never called: the server runs without the delivery worker, so the events wait in the outbox.
        new.webhook_url = Some(WebhookUrl::parse("https://127.0.0.1:9/hook", &NetworkPolicy::private()).unwrap());
    }
    store.run(move |s| s.sites().create(new)).await.unwrap().0.id
}

/// How big the filled site is.
#[derive(Clone, Copy)]
struct Shape {
    questions: usize,
    conversations: usize,
    leads: usize,
    meanings: usize,
}

struct Filled {
    ratings: usize,
    conversations_left: usize,
}

const TOPICS: &[&str] = &[
    "a cleaning", "a filling", "a crown", "an implant", "whitening", "a root canal", "braces", "aligners", "a check-up", "an x-ray", "a bridge", "dentures",
    "gum treatment", "a wisdom tooth", "a veneer", "an inlay", "a night guard", "sensitive teeth", "bad breath", "a broken tooth", "a lost filling",
    "toothache", "bleeding gums", "a child's first visit", "sedation", "parking", "the opening hours", "an emergency", "insurance", "payment by instalments",
    "a second opinion", "a referral", "the waiting time", "a cancellation",
];
const ASKS: &[&str] =
    &["How much is", "Do you offer", "How long does", "Can I book", "What should I know about", "Is there a discount on", "Who does", "When can I get"];
const UNANSWERED: &[&str] = &[
    "cat", "horse", "tattoo", "piano lessons", "car repair", "a passport", "tax advice", "a wedding", "hair colouring", "a boat licence", "yoga",
    "dog grooming", "a mortgage", "roof tiles", "a fishing permit", "a bicycle", "wine tasting", "chess club", "violin", "surfing",
];
const LANGS: &[(&str, u32)] = &[("en", 80), ("de", 12), ("fr", 4), ("es", 3), ("tr", 1)];

/// A unit vector of `width` from a seeded generator (Box-Muller normals).
fn unit(rng: &mut StdRng, width: usize, scale: f32) -> Vec<f32> {
    let mut v: Vec<f32> = (0..width)
        .map(|_| {
            let (u1, u2): (f32, f32) = (rng.r#gen::<f32>().max(1e-7), rng.r#gen());
            (-2.0 * u1.ln()).sqrt() * (std::f32::consts::TAU * u2).cos()
        })
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x *= scale / norm);
    v
}

fn fill(store: &Store, site: SiteId, shape: &Shape, model: &str, width: usize, retention: &sitebot::config::RetentionConfig) -> Filled {
    let mut rng = StdRng::seed_from_u64(24);
    let now = Timestamp::now().as_millis();
    let start = now - HISTORY_DAYS * DAY_MS;
    let step = (HISTORY_DAYS * DAY_MS) as f64 / shape.questions as f64;
    // Conversations are kept 30 days: so many start over the whole history that about the target is
    // left in the last 30 days.
    let new_conversation = (shape.conversations as f64 * HISTORY_DAYS as f64 / 30.0 / shape.questions as f64).min(1.0);
    let centres: Vec<Vec<f32>> = (0..shape.meanings).map(|_| unit(&mut rng, width, 1.0)).collect();
    let docs: Vec<(String, String, Option<String>)> = (0..300)
        .map(|i| (format!("doc_bench{i:04}"), format!("{} — page {i}", TOPICS[i % TOPICS.len()]), Some(format!("https://brightsmile.example/docs/{i}"))))
        .collect();
    let lead_every = (shape.questions / shape.leads.max(1)).max(1);
    let mut recent: Vec<(ConversationId, usize)> = Vec::new();
    let (mut events, mut ratings, mut leads, mut started) = (Vec::with_capacity(BATCH + 8), 0, 0, 0);
    let mut progress = Instant::now();
    for i in 0..shape.questions {
        let at = Timestamp::from_millis(start + (i as f64 * step) as i64);
        let lang = {
            let mut pick = rng.gen_range(0..100);
            LANGS
                .iter()
                .find(|(_, w)| {
                    if pick < *w {
                        true
                    } else {
                        pick -= w;
                        false
                    }
                })
                .map_or("en", |(l, _)| *l)
        };
        // A visitor keeps asking in a conversation of the last few, up to ten exchanges.
        if recent.is_empty() || rng.r#gen::<f64>() < new_conversation {
            started += 1;
            recent.push((ConversationId::new(), 0));
            if recent.len() > 8 {
                recent.remove(0);
            }
        }
        let c = rng.gen_range(0..recent.len());
        recent[c].1 += 1;
        let conversation = recent[c].0.clone();
        if recent[c].1 >= 10 {
            recent.remove(c);
        }
        let resolved = rng.gen_range(0..5) > 0;
        let rare = if rng.gen_range(0..20_000) == 0 { format!(" {RARE_WORD}") } else { String::new() };
        let query_id = QueryId::new();
        let (question, answer, cited, review) = if resolved {
            let topic = TOPICS[(rng.r#gen::<f64>().powi(2) * TOPICS.len() as f64) as usize];
            let question = format!("{} {topic}{rare}? ({})", ASKS[rng.gen_range(0..ASKS.len())], rng.gen_range(0..1000));
            let cited: Vec<Cited> = (0..rng.gen_range(1..=3))
                .map(|_| {
                    let d = &docs[(rng.r#gen::<f64>().powi(3) * docs.len() as f64) as usize];
                    Cited { document_id: d.0.clone(), title: d.1.clone(), url: d.2.clone(), score: rng.gen_range(0.4..0.9) }
                })
                .collect();
            let answer = format!(
                "For {topic}, the practice's page says: appointments are on weekdays from 8 to 18 and on Saturdays from 9 to 13; \
                 the price depends on the treatment plan, which we explain at your first visit. Bring your insurance card. [1]"
            );
            (question, answer, cited, None)
        } else {
            let meaning = (rng.r#gen::<f64>().powi(2) * shape.meanings as f64) as usize;
            let noise = unit(&mut rng, width, 0.2);
            let vector: Vec<f32> = centres[meaning].iter().zip(&noise).map(|(c, n)| c + n).collect();
            let question = format!("Can you help with {} number {meaning}{rare}?", UNANSWERED[meaning % UNANSWERED.len()]);
            let answer = "I could not find this in the practice's pages. You can leave your details and the team will get back to you.".to_owned();
            (question, answer, Vec::new(), Some(ReviewVector { vector, model: model.to_owned(), similarity: sitebot::insights::GROUP_SIMILARITY }))
        };
        events.push((
            at,
            Event::Question(QueryRecord {
                query_id: query_id.clone(),
                site_id: site,
                question,
                resolved,
                source_count: cited.len(),
                latency_ms: rng.gen_range(5..60),
                mode: AnswerMode::Extractive,
                generation: None,
                lang: lang.to_owned(),
                conversation: Some((conversation.clone(), answer)),
                conversation_token: None,
                cited,
                review,
            }),
        ));
        if rng.gen_range(0..20) == 0 {
            let rating = if rng.gen_range(0..10) < 7 { Rating::Up } else { Rating::Down };
            let comment = (rating == Rating::Down && rng.gen_range(0..3) == 0).then(|| "That did not answer my question.".to_owned());
            events.push((Timestamp::from_millis(at.as_millis() + 30_000), Event::Rating { query_id, rating, comment }));
            ratings += 1;
        }
        if i % lead_every == lead_every - 1 && leads < shape.leads {
            let n = leads;
            events.push((
                Timestamp::from_millis(at.as_millis() + 60_000),
                Event::Lead(NewLead {
                    name: Some(format!("Visitor {n}")),
                    email: Email::parse(&format!("visitor{n}@mail.example")).unwrap(),
                    message: Some(format!("Please call me back about my appointment, reference {n}.")),
                    page_url: Some(format!("https://brightsmile.example/page/{}", n % 40)),
                    conversation_id: (rng.gen_range(0..10) < 6).then(|| conversation.clone()),
                }),
            ));
            leads += 1;
        }
        if events.len() >= BATCH {
            store.site(site).history().write(std::mem::take(&mut events)).unwrap();
            if progress.elapsed() > Duration::from_secs(30) {
                println!("  fill: {} of {} questions", i + 1, shape.questions);
                progress = Instant::now();
            }
        }
    }
    store.site(site).history().write(events).unwrap();
    let pruned = store.retention().prune(sitebot::server::housekeeping::cutoffs(retention, Timestamp::now())).unwrap();
    // Some of the queue handled in the console, so the dashboard shows answers' effects.
    let open = store.site(site).review().open(None, 10).unwrap();
    for (n, g) in open.iter().enumerate() {
        store.site(site).review().handle(g.id, if n % 2 == 0 { "curated" } else { "reviewed" }, OWNER).unwrap();
    }
    for n in 0..2000 {
        store.audit().record(OWNER, Some(site), "curated_added", &serde_json::json!({"group": n, "question": "How much is a cleaning?"})).unwrap();
    }
    Filled { ratings, conversations_left: started - pruned.conversations }
}

/// A signed-in console client.
struct Console {
    client: reqwest::Client,
    base: String,
    cookie: String,
}

impl Console {
    async fn get(&self, path: &str) -> Duration {
        let t = Instant::now();
        let resp = self.client.get(format!("{}{path}", self.base)).header("Cookie", &self.cookie).send().await.expect("a console page");
        let status = resp.status();
        let body = resp.bytes().await.expect("a body");
        assert_eq!(status, 200, "{path}: {}", String::from_utf8_lossy(&body[..body.len().min(300)]));
        t.elapsed()
    }
}

/// An owner of the site as `sitebot user add` makes one, who sets a password through the setup link:
/// the session cookie.
async fn sign_in(state: &sitebot::app::AppState, client: &reqwest::Client, base: &str, site: SiteId) -> String {
    let email = Email::parse(OWNER).unwrap();
    let token = new_url_token();
    let (hash, expires) = (token_hash(&token), Timestamp::from_millis(Timestamp::now().as_millis() + DAY_MS));
    if state.store.run(|s| s.users().by_email(OWNER)).await.unwrap().is_some() {
        // A kept data directory: the owner exists; a reset gives a new link.
        let id = state.store.run(|s| s.users().by_email(OWNER)).await.unwrap().unwrap().id;
        state.store.run(move |s| s.users().reset(&id, &hash, expires)).await.unwrap();
    } else {
        state.store.run(move |s| s.users().add(&email, false, Some(Grant { site_id: site, role: SiteRole::Owner }), &hash, expires)).await.unwrap();
    }
    let resp =
        client.post(format!("{base}/console/setup/{token}")).header("Origin", base).form(&[("password", PASSWORD), ("repeat", PASSWORD)]).send().await.unwrap();
    assert_eq!(resp.status(), 303, "setup");
    resp.headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("__Host-sitebot_session="))
        .map(|v| v.split(';').next().unwrap().to_owned())
        .expect("a session cookie")
}

/// Times every page of the site; ids of groups, conversations and leads rotate over a few of each.
async fn pages(store: &Store, sessions: &[Console], site: SiteId) {
    let requests = env_usize("SITEBOT_BENCH_REQUESTS", 100);
    let s = format!("/console/sites/{site}");
    let groups: Vec<i64> = store.run(move |st| st.site(site).review().open(None, 20)).await.unwrap().into_iter().map(|g| g.id).collect();
    let filter = sitebot::store::conversations::ConversationFilter::default();
    let conversations: Vec<String> =
        store.run(move |st| st.site(site).conversations().page(&filter, None, 20, None)).await.unwrap().rows.into_iter().map(|c| c.id).collect();
    let leads = store.run(move |st| st.site(site).leads().newest(None, 51)).await.unwrap();
    let lead_ids: Vec<String> = leads.iter().take(20).map(|l| l.lead.lead_id.clone()).collect();
    let second = leads.last().map(|l| format!("{}:{}", l.lead.created_at.as_millis(), l.lead.lead_id)).unwrap_or_default();
    let list: Vec<(String, Vec<String>)> = vec![
        ("sites".into(), vec!["/console/sites".into()]),
        ("dashboard, 7 days".into(), vec![format!("{s}/dashboard?days=7")]),
        ("dashboard, 30 days".into(), vec![format!("{s}/dashboard?days=30")]),
        ("dashboard, 90 days".into(), vec![format!("{s}/dashboard?days=90")]),
        ("review queue".into(), vec![s.clone()]),
        ("a group".into(), groups.iter().map(|g| format!("{s}/review/{g}")).collect()),
        ("conversations, 30 days".into(), vec![format!("{s}/conversations?days=30")]),
        ("conversations, 90 days, unanswered".into(), vec![format!("{s}/conversations?days=90&unanswered=1")]),
        ("conversations, with a lead".into(), vec![format!("{s}/conversations?days=30&lead=1")]),
        ("conversations, rated".into(), vec![format!("{s}/conversations?days=30&rated=1")]),
        ("conversations, language tr".into(), vec![format!("{s}/conversations?days=30&lang=tr")]),
        (format!("conversations, rare text \"{RARE_WORD}\""), vec![format!("{s}/conversations?days=30&q={RARE_WORD}")]),
        (format!("conversations, absent text \"{ABSENT_WORD}\""), vec![format!("{s}/conversations?days=30&q={ABSENT_WORD}")]),
        ("a conversation".into(), conversations.iter().map(|c| format!("{s}/conversations/{c}")).collect()),
        ("leads".into(), vec![format!("{s}/leads")]),
        ("leads, second page".into(), vec![format!("{s}/leads?before={second}")]),
        ("a lead".into(), lead_ids.iter().map(|l| format!("{s}/leads/{l}")).collect()),
        ("audit".into(), vec![format!("{s}/audit")]),
    ];
    println!("pages: {requests} requests each, one at a time, after 3 of warm-up (ms, client-side over TLS)");
    println!("  {:<44} {:>8} {:>8} {:>8}", "page", "p50", "p95", "max");
    for (name, paths) in list {
        assert!(!paths.is_empty(), "{name}: nothing to fetch");
        for (i, p) in paths.iter().take(3).enumerate() {
            sessions[i % sessions.len()].get(p).await;
        }
        let mut times = Vec::with_capacity(requests);
        for i in 0..requests {
            times.push(sessions[i % sessions.len()].get(&paths[i % paths.len()]).await);
        }
        times.sort();
        let flag = if percentile(&times, 0.95) > 50.0 { "  > 50 ms" } else { "" };
        println!("  {name:<44} {:>8.1} {:>8.1} {:>8.1}{flag}", percentile(&times, 0.5), percentile(&times, 0.95), percentile(&times, 1.0));
    }
}

const QUESTIONS: &[&str] = &[
    "When are you open on Saturday?", "How much does a professional cleaning cost?", "Do you treat children?", "Is the practice wheelchair accessible?",
    "What do I do in a dental emergency at night?", "Which insurance do you accept?", "How can I book an appointment?",
    "Do you offer treatment under sedation?", "Wie viel kostet eine Zahnreinigung?", "Habt ihr samstags geöffnet?", "Do you offer clear aligners?",
    "Which languages do you speak?",
];

async fn throughput(client: &reqwest::Client, base: &str, query_site: SiteId, console: &Console, site: SiteId, pages_per_minute: u32) {
    let window = Duration::from_secs(env_usize("SITEBOT_BENCH_WINDOW_SECS", 20) as u64);
    let rounds = env_usize("SITEBOT_BENCH_ROUNDS", 3);
    // Warm-up: the index loaded, the sessions busy.
    support::query_window(client, base, query_site, Duration::from_secs(3), QUESTIONS).await;
    println!(
        "/v1/query at concurrency 32, {} s windows: A without console load, B with a console client loading dashboards in a loop ({}; the server paces a session at {} pages a minute)",
        window.as_secs(),
        if std::env::var("SITEBOT_BENCH_LOADER").as_deref() == Ok("in-process") { "in this process" } else { "wrk, its own process" },
        pages_per_minute
    );
    let (mut a, mut b) = (0usize, 0usize);
    for round in 1..=rounds {
        let (n, failed) = support::query_window(client, base, query_site, window, QUESTIONS).await;
        println!("  round {round} A: {n} answered ({failed} failed), {:.1} req/s", n as f64 / window.as_secs_f64());
        a += n;
        let paths = match std::env::var("SITEBOT_BENCH_LOADER_PATH") {
            Ok(path) => vec![path],
            Err(_) => vec![
                format!("/console/sites/{site}/dashboard?days=7"),
                format!("/console/sites/{site}/dashboard?days=30"),
                format!("/console/sites/{site}/dashboard?days=90"),
                "/console/sites".to_owned(),
            ],
        };
        let per_sec = env_usize("SITEBOT_BENCH_LOADER_PER_SEC", 0);
        let loader = if std::env::var("SITEBOT_BENCH_LOADER").as_deref() == Ok("in-process") {
            Loader::in_process(console, paths, per_sec)
        } else {
            Loader::wrk(console, &paths, per_sec, window)
        };
        let (n, failed) = support::query_window(client, base, query_site, window, QUESTIONS).await;
        let pages = loader.finish(window).await;
        println!("  round {round} B: {n} answered ({failed} failed), {:.1} req/s; console pages meanwhile: {pages}", n as f64 / window.as_secs_f64());
        b += n;
    }
    let secs = window.as_secs_f64() * rounds as f64;
    println!("  total A {:.1} req/s, B {:.1} req/s, B/A = {:.3}", a as f64 / secs, b as f64 / secs, b as f64 / a as f64);
}

/// The B window's console client: by default `wrk` in a process of its own, one connection (a user's
/// browser is not the server's CPU; in this process its TLS and HTTP would be), or in this process.
enum Loader {
    Wrk(tokio::process::Child, tempfile::NamedTempFile),
    InProcess(Arc<AtomicBool>, tokio::task::JoinHandle<Vec<Duration>>),
}

impl Loader {
    fn wrk(console: &Console, paths: &[String], per_sec: usize, window: Duration) -> Loader {
        use std::io::Write;
        let mut script = tempfile::NamedTempFile::new().unwrap();
        let list: Vec<String> = paths.iter().map(|p| format!("{p:?}")).collect();
        let pause = 1000usize.checked_div(per_sec).map(|ms| format!("function delay() return {ms} end\n")).unwrap_or_default();
        write!(
            script,
            "local paths = {{{}}}\nlocal i = 0\nfunction request()\n  i = i % #paths + 1\n  return wrk.format(\"GET\", paths[i])\nend\n{pause}",
            list.join(", ")
        )
        .unwrap();
        let child = tokio::process::Command::new("wrk")
            .args(["-t1", "-c1", "--latency", "--timeout", "10s"])
            .arg(format!("-d{}s", window.as_secs()))
            .arg("-H")
            .arg(format!("Cookie: {}", console.cookie))
            .arg("-s")
            .arg(script.path())
            .arg(&console.base)
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("wrk (install.sh --deps-only installs it)");
        Loader::Wrk(child, script)
    }

    fn in_process(console: &Console, paths: Vec<String>, per_sec: usize) -> Loader {
        let stop = Arc::new(AtomicBool::new(false));
        let c = Console { client: console.client.clone(), base: console.base.clone(), cookie: console.cookie.clone() };
        let flag = stop.clone();
        let task = tokio::spawn(async move {
            let mut pace = (per_sec > 0).then(|| tokio::time::interval(Duration::from_secs_f64(1.0 / per_sec as f64)));
            let mut times = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                if let Some(p) = pace.as_mut() {
                    p.tick().await;
                }
                times.push(c.get(&paths[times.len() % paths.len()]).await);
            }
            times
        });
        Loader::InProcess(stop, task)
    }

    /// Stops the client; what it loaded, as one line.
    async fn finish(self, window: Duration) -> String {
        match self {
            Loader::Wrk(child, _script) => {
                let out = child.wait_with_output().await.unwrap();
                let text = String::from_utf8_lossy(&out.stdout);
                let field = |label: &str| text.lines().find_map(|l| l.trim().strip_prefix(label).map(|v| v.trim().to_owned())).unwrap_or_else(|| "?".into());
                let requests = text.lines().find_map(|l| l.split_once(" requests in ").map(|(n, _)| n.trim().to_owned())).unwrap_or_else(|| "?".into());
                let errors = text.lines().find(|l| l.contains("Non-2xx") || l.contains("Socket errors")).map(|l| format!(", {}", l.trim())).unwrap_or_default();
                format!("{requests} ({}/s, p50 {}, p99 {}{errors})", field("Requests/sec:"), field("50%"), field("99%"))
            }
            Loader::InProcess(stop, task) => {
                stop.store(true, Ordering::Relaxed);
                let mut times = task.await.unwrap();
                times.sort();
                format!(
                    "{} ({:.1}/s, p50 {:.1} ms, p95 {:.1} ms)",
                    times.len(),
                    times.len() as f64 / window.as_secs_f64(),
                    percentile(&times, 0.5),
                    percentile(&times, 0.95)
                )
            }
        }
    }
}

/// `/v1/query` at concurrency `clients` for a window, asking `QUESTIONS` in turn: the time of each answer
/// (200), and how many got another status or none.
async fn query_latencies(client: &reqwest::Client, base: &str, site: SiteId, window: Duration, clients: usize) -> (Vec<Duration>, usize) {
    let stop = Arc::new(AtomicBool::new(false));
    let tasks: Vec<_> = (0..clients)
        .map(|w| {
            let (client, url, stop) = (client.clone(), format!("{base}/v1/query"), stop.clone());
            tokio::spawn(async move {
                let (mut times, mut failed, mut i) = (Vec::new(), 0, w);
                while !stop.load(Ordering::Relaxed) {
                    let asked = Instant::now();
                    let sent = client
                        .post(&url)
                        .header("X-Site-Id", site.to_string())
                        .json(&serde_json::json!({"question": QUESTIONS[i % QUESTIONS.len()]}))
                        .send()
                        .await;
                    let ok = match sent {
                        Ok(resp) => resp.status() == 200 && resp.bytes().await.is_ok(),
                        Err(_) => false,
                    };
                    let took = asked.elapsed();
                    i += 1;
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    if ok {
                        times.push(took);
                    } else {
                        failed += 1;
                    }
                }
                (times, failed)
            })
        })
        .collect();
    tokio::time::sleep(window).await;
    stop.store(true, Ordering::Relaxed);
    let (mut times, mut failed) = (Vec::new(), 0);
    for t in tasks {
        let (t, f) = t.await.unwrap();
        times.extend(t);
        failed += f;
    }
    times.sort();
    (times, failed)
}

/// The answers to sign-in bursts, by status.
#[derive(Default)]
struct Bursts {
    bursts: usize,
    checked: usize,
    throttled: usize,
    busy: usize,
    other: usize,
}

/// Bursts of 100 wrong passwords sent at once, one every `every` until `stop`; burst `n` for account
/// `burstN@bench.example` from client `198.18.x.y` (the benchmarking range), numbered from `first`.
async fn burst_loop(client: reqwest::Client, base: String, every: Duration, first: usize, stop: Arc<AtomicBool>) -> Bursts {
    let mut tally = Bursts::default();
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while !stop.load(Ordering::Relaxed) {
        tick.tick().await;
        let n = first + tally.bursts;
        let (account, address) = (format!("burst{n}@bench.example"), format!("198.18.{}.{}", n / 256 % 256, n % 256));
        let sent = (0..100).map(|_| {
            client
                .post(format!("{base}/console/login"))
                .header("Origin", &base)
                .header("X-Forwarded-For", &address)
                .form(&[("email", account.as_str()), ("password", "a wrong guess at the password")])
                .send()
        });
        for answer in futures_util::future::join_all(sent).await {
            match answer.map(|r| r.status().as_u16()) {
                Ok(401) => tally.checked += 1,
                Ok(429) => tally.throttled += 1,
                Ok(503) => tally.busy += 1,
                _ => tally.other += 1,
            }
        }
        tally.bursts += 1;
    }
    tally
}

async fn sign_in_bursts(client: &reqwest::Client, pem: &[u8], base: &str, query_site: SiteId) {
    let window = Duration::from_secs(env_usize("SITEBOT_BENCH_WINDOW_SECS", 20) as u64);
    let rounds = env_usize("SITEBOT_BENCH_ROUNDS", 3);
    let clients = env_usize("SITEBOT_BENCH_QUERY_CLIENTS", 4);
    let every = Duration::from_millis(env_usize("SITEBOT_BENCH_BURST_EVERY_MS", 1000) as u64);
    // The attacker's client: HTTP/2 (ALPN), so a burst is 100 streams on one connection.
    let burst_client = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(pem).unwrap())
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    query_latencies(client, base, query_site, Duration::from_secs(3), clients).await;
    println!(
        "/v1/query latency at concurrency {clients}, {} s windows: A alone, B beside 100 wrong passwords sent at once every {} ms (ms, client-side over TLS)",
        window.as_secs(),
        every.as_millis()
    );
    let line = |times: &[Duration], failed: usize| {
        format!("{} answered ({failed} failed), p50 {:.1}, p99 {:.1}", times.len(), percentile(times, 0.5), percentile(times, 0.99))
    };
    let (mut a, mut b, mut first) = (Vec::new(), Vec::new(), 0);
    for round in 1..=rounds {
        let (times, failed) = query_latencies(client, base, query_site, window, clients).await;
        println!("  round {round} A: {}", line(&times, failed));
        a.extend(times);
        let stop = Arc::new(AtomicBool::new(false));
        let bursts = tokio::spawn(burst_loop(burst_client.clone(), base.to_owned(), every, first, stop.clone()));
        let (times, failed) = query_latencies(client, base, query_site, window, clients).await;
        stop.store(true, Ordering::Relaxed);
        let t = bursts.await.unwrap();
        first += t.bursts;
        println!(
            "  round {round} B: {}; {} bursts: {} checked, {} throttled, {} busy, {} other",
            line(&times, failed),
            t.bursts,
            t.checked,
            t.throttled,
            t.busy,
            t.other
        );
        b.extend(times);
    }
    a.sort();
    b.sort();
    let (a50, a99, b50, b99) = (percentile(&a, 0.5), percentile(&a, 0.99), percentile(&b, 0.5), percentile(&b, 0.99));
    println!("  total A p50 {a50:.1} ms, p99 {a99:.1} ms; B p50 {b50:.1} ms, p99 {b99:.1} ms; B/A p50 {:.3}, p99 {:.3}", b50 / a50, b99 / a99);
}
