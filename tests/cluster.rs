//! Tenants across nodes behind the real HAProxy (2.6, `install.sh --deps-only`; `SITEBOT_HAPROXY` names
//! another), running `assets/haproxy.cfg` as shipped, with the built binary and the real Litestream, on
//! loopback. Nodes are TLS servers with certificates of a test CA, which HAProxy verifies; webhooks go to a
//! real local receiver. One cluster, a prologue and two acts:
//!
//! (0) **Console sign-ins reach the site's node** (#27). Users of a site on node B, HAProxy's second
//!     choice, are added by `sitebot user add --site` on B; fresh browsers (no cookies) follow the
//!     printed setup link through HAProxy, set the password, land signed in and open the site's page
//!     and the console's home there; others sign in at `/console/login?site=`. Pages without a site go
//!     round robin over A and B, so without `?site=` some of these reach A, which knows neither.
//!
//! (a) **A node is lost.** Nodes A and B, each replicated by Litestream to its own file replica, serve two
//!     tenants each, routed by the map `sitebot cluster map` printed. Leads flow to all four through
//!     HAProxy; A and its Litestream are killed with SIGKILL; node C restores A's replica, the map sends A's
//!     tenants to C (`set map` on the admin socket). Every lead acknowledged more than the replication
//!     window before the kill is on C and reaches the receiver (repeats only under the same
//!     `webhook-id`); B's tenants got 202 for every lead throughout.
//! (b) **A tenant moves** from B to C while its leads and questions flow through HAProxy: `site export`
//!     on B, `site import` on C, `set map`, then `site delete` on B. Every lead that got 202 is on C, every
//!     other got a 503 with `Retry-After`, no question failed, and every accepted lead reached the receiver.
//!     The site's owner moves with their role but not their password (an export never carries one): the
//!     import names them, C's operator runs `user reset`, and they set a password through HAProxy.
//!
//! Vertical content (landing pages) is loaded on each node by the CLI and answers through HAProxy from
//! every node, C included (it came with A's database).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

#[path = "common/nodes.rs"]
mod nodes;
#[path = "api/receiver.rs"]
mod receiver;

use nodes::{Litestream, litestream_bin, private_dir, run, serve_at, sitebot};
use receiver::{Received, Receiver};

/// Leads acknowledged within this much of a SIGKILL of a node and its Litestream may be lost.
const REPLICATION_WINDOW: Duration = Duration::from_secs(2);

fn haproxy_bin() -> PathBuf {
    let bin = std::env::var_os("SITEBOT_HAPROXY").map_or_else(|| PathBuf::from("/usr/sbin/haproxy"), PathBuf::from);
    assert!(bin.is_file(), "{} is missing: run ./install.sh --deps-only (it installs haproxy), or point SITEBOT_HAPROXY at one", bin.display());
    bin
}

/// A loopback port held for the test's length: bound with `SO_REUSEADDR`, never listening, so the server
/// given it (sitebot's listener and HAProxy's set `SO_REUSEADDR` too) can bind and listen on it, and again
/// after a restart, while no other socket is given it meanwhile. A port freed by dropping a listener was
/// once taken before the node started ("cannot listen on 127.0.0.1:38539: Address already in use").
fn reserved_port() -> (tokio::net::TcpSocket, u16) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_reuseaddr(true).unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let port = socket.local_addr().unwrap().port();
    (socket, port)
}

/// A test CA and one certificate it signed for `localhost` and 127.0.0.1, made with the openssl CLI: the
/// nodes serve it (`server.tls_cert`), HAProxy verifies them with the CA and serves it to clients.
struct Pki {
    ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
    /// Certificate and key in one file, as HAProxy's `crt` wants them.
    pem: PathBuf,
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("openssl").current_dir(dir).args(args).output().expect("openssl");
    assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn pki(dir: &Path) -> Pki {
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
    openssl(dir, &[&["req", "-x509"][..], &ec, &["-subj", "/CN=sitebot test CA", "-days", "2", "-keyout", "ca.key", "-out", "ca.pem"]].concat());
    openssl(dir, &[&["req"][..], &ec, &["-subj", "/CN=localhost", "-keyout", "node.key", "-out", "node.csr"]].concat());
    std::fs::write(dir.join("san.ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\n").unwrap();
    openssl(
        dir,
        &["x509", "-req", "-in", "node.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2", "-extfile", "san.ext", "-out", "node.pem"],
    );
    let pem = dir.join("lb.pem");
    std::fs::write(&pem, [std::fs::read(dir.join("node.pem")).unwrap(), std::fs::read(dir.join("node.key")).unwrap()].concat()).unwrap();
    Pki { ca: dir.join("ca.pem"), cert: dir.join("node.pem"), key: dir.join("node.key"), pem }
}

/// The settings every node runs with (and its CLI: webhook URLs are checked against them).
fn node_env(pki: &Pki) -> Vec<(String, String)> {
    vec![
        ("SITEBOT_SERVER__TLS_CERT".into(), pki.cert.display().to_string()),
        ("SITEBOT_SERVER__TLS_KEY".into(), pki.key.display().to_string()),
        ("SITEBOT_WEBHOOKS__ALLOW_HTTP".into(), "true".into()),
        ("SITEBOT_WEBHOOKS__ALLOW_PRIVATE_NETWORKS".into(), "true".into()),
        // An event leased by a killed node is offered again after 2 × 5 + 2 s.
        ("SITEBOT_WEBHOOKS__TIMEOUT_SECS".into(), "5".into()),
    ]
}

fn cli(dir: &Path, pki: &Pki) -> Command {
    let mut cmd = sitebot(dir);
    cmd.envs(node_env(pki));
    cmd
}

fn client(pki: &Pki) -> reqwest::Client {
    reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(&std::fs::read(&pki.ca).unwrap()).unwrap())
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

async fn create_site(dir: &Path, pki: &Pki, name: &str, hook: &str) -> String {
    let out = run(cli(dir, pki).args([
        "site", "create", "--json", "--name", name, "--vertical", "dental", "--tier", "enterprise", "--currency", "EUR", "--lang", "en", "--webhook-url", hook,
    ]))
    .await;
    serde_json::from_str::<serde_json::Value>(&out).unwrap()["siteId"].as_str().unwrap().to_owned()
}

/// Vertical content, loaded on a node by the CLI as on every node (it is not per tenant).
async fn load_vertical(dir: &Path, pki: &Pki) {
    run(cli(dir, pki).args(["vertical", "create", "dental", "--name", "Dental", "--lang", "en", "--langs", "en,de", "--currency", "EUR"])).await;
    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo");
    run(cli(dir, pki).args(["landing", "import", "--publish"]).arg(assets.join("landing-en.yaml")).arg(assets.join("landing-de.yaml"))).await;
}

/// A node: its data directory, port and server process.
struct Node {
    _tmp: tempfile::TempDir,
    /// Holds `listen`'s port (`reserved_port`).
    _port: tokio::net::TcpSocket,
    dir: PathBuf,
    listen: String,
    server: Option<Child>,
}

impl Node {
    fn new() -> Node {
        let tmp = private_dir();
        let (held, port) = reserved_port();
        Node { dir: tmp.path().to_owned(), _tmp: tmp, _port: held, listen: format!("127.0.0.1:{port}"), server: None }
    }

    async fn start(&mut self, pki: &Pki, extra: &[(&str, &str)]) {
        let mut env: Vec<(String, String)> = node_env(pki);
        env.extend(extra.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let (child, _) = serve_at(&self.dir, &env, &self.listen).await;
        self.server = Some(child);
    }

    async fn map(&self, pki: &Pki, backend: &str) -> String {
        run(cli(&self.dir, pki).args(["cluster", "map", "--backend", backend])).await
    }

    /// The ids of a site's leads in this node's database.
    async fn leads(&self, pki: &Pki, site: &str) -> BTreeSet<String> {
        let out = run(cli(&self.dir, pki).args(["leads", "export", "--site", site, "--format", "jsonl"])).await;
        out.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["leadId"].as_str().unwrap().to_owned()).collect()
    }
}

/// HAProxy running `assets/haproxy.cfg` with three node backends.
struct Balancer {
    /// Killed when the test ends (`kill_on_drop`).
    _child: Child,
    /// Holds the port HAProxy listens on (`reserved_port`).
    _port: tokio::net::TcpSocket,
    base: String,
    map: PathBuf,
    socket: PathBuf,
    log: PathBuf,
}

impl Balancer {
    async fn start(work: &Path, pki: &Pki, nodes: [&str; 3], map: &str) -> Balancer {
        let (held, port) = reserved_port();
        let (map_file, socket, log) = (work.join("sites.map"), work.join("admin.sock"), work.join("haproxy.log"));
        std::fs::write(&map_file, map).unwrap();
        let cfg = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/haproxy.cfg");
        let mut cmd = Command::new(haproxy_bin());
        cmd.args(["-db", "-f"]).arg(&cfg);
        cmd.env("SITEBOT_LB_BIND", format!("127.0.0.1:{port}"))
            .env("SITEBOT_LB_PEM", &pki.pem)
            .env("SITEBOT_LB_MAP", &map_file)
            .env("SITEBOT_LB_SOCKET", &socket);
        for (i, addr) in nodes.iter().enumerate() {
            let n = i + 1;
            cmd.env(format!("SITEBOT_NODE{n}"), addr).env(format!("SITEBOT_NODE{n}_CA"), &pki.ca).env(format!("SITEBOT_NODE{n}_NAME"), "localhost");
        }
        let out = std::fs::File::create(&log).unwrap();
        let child = cmd.stdout(out.try_clone().unwrap()).stderr(out).kill_on_drop(true).spawn().unwrap();
        let lb = Balancer { _child: child, _port: held, base: format!("https://localhost:{port}"), map: map_file, socket, log };
        let started = Instant::now();
        while tokio::net::UnixStream::connect(&lb.socket).await.is_err() {
            assert!(started.elapsed() < Duration::from_secs(20), "HAProxy did not start: {}", lb.logs());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        lb
    }

    /// One command on the admin socket; its answer.
    async fn admin(&self, command: &str) -> String {
        let mut s = tokio::net::UnixStream::connect(&self.socket).await.unwrap();
        s.write_all(format!("{command}\n").as_bytes()).await.unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        out
    }

    /// Sends `site` to `backend` at once (no reload).
    async fn route(&self, site: &str, backend: &str) {
        let said = self.admin(&format!("set map {} {site} {backend}", self.map.display())).await;
        assert!(said.trim().is_empty(), "set map: {said}");
        let shown = self.admin(&format!("show map {}", self.map.display())).await;
        assert!(shown.lines().any(|l| l.ends_with(&format!("{site} {backend}"))), "{shown}");
    }

    fn logs(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until `GET path` through the balancer answers 200.
    async fn wait_for(&self, c: &reqwest::Client, path: &str, within: Duration) {
        let started = Instant::now();
        loop {
            if c.get(format!("{}{path}", self.base)).send().await.is_ok_and(|r| r.status() == 200) {
                return;
            }
            assert!(started.elapsed() < within, "{path} never answered 200 through HAProxy: {}", self.logs());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// What one request of the load got.
#[derive(Debug, Clone)]
enum Outcome {
    /// A lead answered 202, with its id, when the answer came.
    Accepted { id: String, at: Instant },
    /// A question answered 200.
    Answered,
    /// A 503 that says when to try again.
    Retryable,
    /// Anything else: the status and body, or the transport error.
    Failed(String),
}

/// Every request's outcome by site, in the order answered (`true`: a question).
type Outcomes = BTreeMap<String, Vec<(bool, Outcome)>>;

/// Leads (and, when `questions`, a question every fifth tick) for each site at `per_second` through the
/// balancer until `stop`; every outcome by site, in the order sent.
async fn flow(c: reqwest::Client, base: String, sites: Vec<String>, per_second: u32, questions: bool, stop: Arc<tokio::sync::Notify>) -> Outcomes {
    let outcomes: Arc<Mutex<Outcomes>> = Arc::default();
    let sent = outcomes.clone();
    nodes::at_rate(per_second, stop, Duration::from_secs(60), move |i| {
        let (c, base, sites, outcomes) = (c.clone(), base.clone(), sites.clone(), sent.clone());
        async move {
            // The sites' requests of one tick go out together.
            let mut each = tokio::task::JoinSet::new();
            for site in sites {
                let (c, base, outcomes) = (c.clone(), base.clone(), outcomes.clone());
                each.spawn(async move {
                    let question = questions && i % 5 == 0;
                    let req = if question {
                        c.post(format!("{base}/v1/query")).json(&serde_json::json!({"question": "How much does whitening cost?"}))
                    } else {
                        c.post(format!("{base}/v1/leads")).json(&serde_json::json!({"name": format!("Lead {i}"), "email": format!("lead{i}@example.com")}))
                    };
                    let outcome = match req.header("X-Site-Id", &site).send().await {
                        Ok(r) if r.status() == 202 && !question => {
                            let at = Instant::now();
                            Outcome::Accepted { id: r.json::<serde_json::Value>().await.unwrap()["id"].as_str().unwrap().to_owned(), at }
                        }
                        Ok(r) if r.status() == 200 && question => Outcome::Answered,
                        Ok(r) if r.status() == 503 && !question && r.headers().contains_key("retry-after") => Outcome::Retryable,
                        Ok(r) => Outcome::Failed(format!("{} {}", r.status(), r.text().await.unwrap_or_default())),
                        Err(e) => Outcome::Failed(e.to_string()),
                    };
                    outcomes.lock().unwrap().entry(site).or_default().push((question, outcome));
                });
            }
            while each.join_next().await.is_some() {}
        }
    })
    .await;
    std::mem::take(&mut *outcomes.lock().unwrap())
}

fn accepted(outcomes: &[(bool, Outcome)]) -> Vec<(String, Instant)> {
    outcomes.iter().filter_map(|(_, o)| if let Outcome::Accepted { id, at } = o { Some((id.clone(), *at)) } else { None }).collect()
}

/// What the requests that were not accepted or answered got, as text.
fn failures(outcomes: &[(bool, Outcome)], retryable_too: bool) -> Vec<String> {
    outcomes
        .iter()
        .filter_map(|(_, o)| match o {
            Outcome::Failed(why) => Some(why.clone()),
            Outcome::Retryable if retryable_too => Some("503 with Retry-After".into()),
            _ => None,
        })
        .collect()
}

fn count(outcomes: &[(bool, Outcome)], pred: impl Fn(&Outcome) -> bool) -> usize {
    outcomes.iter().filter(|(_, o)| pred(o)).count()
}

/// The `webhook-id`s each lead arrived under.
fn deliveries(received: &[Received]) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for r in received {
        let body = r.json();
        if body["type"] == "lead.captured" {
            out.entry(body["data"]["leadId"].as_str().unwrap_or_default().to_owned()).or_default().insert(r.id());
        }
    }
    out
}

/// Waits until every lead in `leads` reached the receiver; then checks each came under one `webhook-id`.
async fn all_delivered(receiver: &Receiver, leads: &BTreeSet<String>, what: &str) {
    let received = receiver
        .wait_until(Duration::from_secs(90), what, |r| {
            let got = deliveries(r);
            leads.iter().all(|l| got.contains_key(l))
        })
        .await;
    for (lead, ids) in deliveries(&received) {
        assert_eq!(ids.len(), 1, "lead {lead} arrived under several webhook-ids: {ids:?}");
    }
}

/// A browser behind the balancer, with the cookies it was given (kept here: the tests' reqwest has no
/// cookie store) and redirects followed as a browser follows them.
struct Browser {
    c: reqwest::Client,
    base: String,
    cookies: BTreeMap<String, String>,
}

impl Browser {
    /// A fresh one: no cookies.
    fn new(pki: &Pki, base: &str) -> Browser {
        let c = reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(&std::fs::read(&pki.ca).unwrap()).unwrap())
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap();
        Browser { c, base: base.to_owned(), cookies: BTreeMap::new() }
    }

    /// GET `to` (a URL, or a path on the balancer), or POST `form` there; then every redirect. The
    /// status, path (with its query) and body of the last answer.
    async fn open(&mut self, to: &str, form: Option<&[(&str, &str)]>) -> (u16, String, String) {
        let mut url = if to.starts_with('/') { format!("{}{to}", self.base) } else { to.to_owned() };
        let mut form = form;
        for _ in 0..5 {
            let req = match form.take() {
                Some(f) => self.c.post(&url).header("Origin", &self.base).form(f),
                None => self.c.get(&url),
            };
            let jar: Vec<String> = self.cookies.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let req = if jar.is_empty() { req } else { req.header("Cookie", jar.join("; ")) };
            let resp = req.send().await.unwrap();
            for set in resp.headers().get_all("set-cookie").iter().filter_map(|v| v.to_str().ok()) {
                let (name, value) = set.split(';').next().unwrap().split_once('=').unwrap();
                if set.contains("Max-Age=0") {
                    self.cookies.remove(name);
                } else {
                    self.cookies.insert(name.to_owned(), value.to_owned());
                }
            }
            let path = resp.url().path().to_owned() + &resp.url().query().map(|q| format!("?{q}")).unwrap_or_default();
            match resp.headers().get("location").and_then(|l| l.to_str().ok()) {
                Some(to) if resp.status().is_redirection() => url = format!("{}{to}", self.base),
                _ => return (resp.status().as_u16(), path, resp.text().await.unwrap()),
            }
        }
        panic!("more than 5 redirects from {to}");
    }
}

/// Prologue (0): console users of `site`, on `node` (not HAProxy's first choice), sign in through the
/// balancer from fresh browsers and see the node's signed-in pages.
async fn console_sign_ins_reach_the_node(pki: &Pki, lb: &Balancer, node: &Node, site: &str) {
    const PASSWORD: &str = "correct horse battery staple";
    // The signed-in pages of the node that has the user: its header names them, its site list the site.
    let signed_in = |what: &str, (status, path, page): &(u16, String, String), email: &str, at: &str| {
        assert_eq!((*status, path.as_str()), (200, at), "{what} through HAProxy: {page}\n{}", lb.logs());
        assert!(page.contains(email) && page.contains(site), "{what}: not {email}'s page of {site}: {page}");
    };
    for i in 0..3 {
        let email = format!("owner{i}@b.example");
        let added =
            run(cli(&node.dir, pki).args(["user", "add", "--email", &email, "--site", site, "--role", "owner", "--base-url", &lb.base, "--json"])).await;
        let link = serde_json::from_str::<serde_json::Value>(&added).unwrap()["setupLink"].as_str().unwrap().to_owned();
        let path = link.strip_prefix(&lb.base).unwrap_or_else(|| panic!("the link is on the balancer's address: {link}"));
        assert!(path.starts_with("/console/setup/") && path.ends_with(&format!("?site={site}")), "the link names the site: {link}");

        let mut browser = Browser::new(pki, &lb.base);
        let (status, _, page) = browser.open(&link, None).await;
        assert_eq!(status, 200, "{email}'s setup link through HAProxy: {page}\n{}", lb.logs());
        assert!(page.contains(&email) && page.contains(&format!("action=\"{path}\"")), "{page}");
        let landed = browser.open(&link, Some(&[("password", PASSWORD), ("repeat", PASSWORD)])).await;
        signed_in("setting the password", &landed, &email, "/console/sites");
        let site_page = format!("/console/sites/{site}");
        signed_in("the site's page", &browser.open(&site_page, None).await, &email, &site_page);
        signed_in("the console's home", &browser.open("/console/", None).await, &email, "/console/sites");

        // Another fresh browser signs in at the sign-in page that names the site.
        let mut browser = Browser::new(pki, &lb.base);
        let login = format!("/console/login?site={site}");
        let (status, _, page) = browser.open(&login, None).await;
        assert!(status == 200 && page.contains(&format!("action=\"{login}\"")), "{status} {page}");
        signed_in("signing in", &browser.open(&login, Some(&[("email", &email), ("password", PASSWORD)])).await, &email, "/console/sites");
        signed_in("the console's home", &browser.open("/console/", None).await, &email, "/console/sites");
    }
    // A site's page opened without a session sends the browser to sign in for that site.
    let (status, path, _) = Browser::new(pki, &lb.base).open(&format!("/console/sites/{site}/leads"), None).await;
    assert_eq!((status, path), (200, format!("/console/login?site={site}&next=%2Fconsole%2Fsites%2F{site}%2Fleads")));
    // HAProxy's cookie holds the site id, lower-cased, and nothing else.
    let cookie = |b: &Browser| b.cookies.get("__Host-sitebot-site").cloned();
    let mut browser = Browser::new(pki, &lb.base);
    browser.open(&format!("/console/login?site={}", site.to_uppercase()), None).await;
    assert_eq!(cookie(&browser).as_deref(), Some(site));
    for forged in ["/console/login?site=x;Domain=evil.example", "/console/sites/x;Max-Age=9/leads"] {
        let mut browser = Browser::new(pki, &lb.base);
        browser.open(forged, None).await;
        assert_eq!(cookie(&browser), None, "{forged}");
    }
}

/// The password b1's owner sets on B, and again on C through a setup link after the move.
const MOVER_PASSWORD: &str = "a moving owner's long passphrase";

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().unwrap().block_on(f)
}

#[test]
fn a_lost_node_is_restored_behind_haproxy_and_a_tenant_moves_without_losing_a_request() {
    block_on(async { tokio::time::timeout(Duration::from_secs(400), cluster()).await }).expect("the cluster test finishes in time");
}

async fn cluster() {
    let work = tempfile::tempdir().unwrap();
    let pki = pki(work.path());
    let c = client(&pki);
    let receiver = Receiver::start().await;
    let hook = receiver.url("/crm");
    let (mut a, mut b, mut nc) = (Node::new(), Node::new(), Node::new());
    let (a1, a2) = (create_site(&a.dir, &pki, "A one", &hook).await, create_site(&a.dir, &pki, "A two", &hook).await);
    let (b1, b2) = (create_site(&b.dir, &pki, "B one", &hook).await, create_site(&b.dir, &pki, "B two", &hook).await);
    let doc = work.path().join("prices.md");
    std::fs::write(&doc, "# Prices\n\nIn-office teeth whitening costs 350 euros per session.\n").unwrap();
    run(cli(&b.dir, &pki).args(["knowledge", "import", "--site", &b1]).arg(&doc)).await;
    load_vertical(&a.dir, &pki).await;
    load_vertical(&b.dir, &pki).await;

    // Each node replicated by its own Litestream to its own replica.
    let (replica_a, replica_b) = (work.path().join("replica-a"), work.path().join("replica-b"));
    let (work_a, work_b) = (work.path().join("litestream-a"), work.path().join("litestream-b"));
    for d in [&replica_a, &replica_b, &work_a, &work_b] {
        std::fs::create_dir_all(d).unwrap();
    }
    let mut litestream_a = Litestream::start(&a.dir, &replica_a, &work_a).await;
    let _litestream_b = Litestream::start(&b.dir, &replica_b, &work_b).await;
    let told = [("SITEBOT_REPLICATION__LITESTREAM", "true")];
    a.start(&pki, &told).await;
    b.start(&pki, &told).await;
    let map = format!("{}{}", a.map(&pki, "node1").await, b.map(&pki, "node2").await);
    assert_eq!(map.lines().count(), 4, "{map}");
    assert!(map.contains(&format!("{a1} node1")) && map.contains(&format!("{b2} node2")), "{map}");
    let lb = Balancer::start(work.path(), &pki, [&a.listen, &b.listen, &nc.listen], &map).await;
    for site in [&a1, &a2, &b1, &b2] {
        lb.wait_for(&c, &format!("/v1/public-stats/{site}"), Duration::from_secs(30)).await;
    }
    // The map routes the header as well as the path: each site's widget settings come from its node.
    for (site, name) in [(&a1, "A one"), (&b2, "B two")] {
        let config: serde_json::Value =
            c.get(format!("{}/v1/widget/config", lb.base)).header("X-Site-Id", site.as_str()).send().await.unwrap().json().await.unwrap();
        assert_eq!(config["name"], name, "{config}");
    }
    for _ in 0..4 {
        // Round robin over the nodes: every node has the vertical's pages.
        assert_eq!(c.get(format!("{}/v1/landing/dental/en/home", lb.base)).send().await.unwrap().status(), 200);
    }
    // b2, which stays on B (b1 moves in act (b)).
    console_sign_ins_reach_the_node(&pki, &lb, &b, &b2).await;
    // HAProxy logs a line a request with the site and the node that served it, and never a path: the setup
    // links just opened carry their tokens there.
    let logs = lb.logs();
    for (node, site) in [("node1", &a1), ("node2", &b2)] {
        assert!(logs.contains(&format!("{node}/{node} site=\"{site}\" GET 200")), "no line for {site} on {node}:\n{logs}");
    }
    assert!(!logs.contains("/console/") && !logs.contains("/v1/"), "a path in HAProxy's log:\n{logs}");
    // An owner of b1 sets a password through HAProxy; the account and its role move with b1 in act (b).
    let mover = "mover@b.example";
    let added = run(cli(&b.dir, &pki).args(["user", "add", "--email", mover, "--site", &b1, "--role", "owner", "--base-url", &lb.base, "--json"])).await;
    let link = serde_json::from_str::<serde_json::Value>(&added).unwrap()["setupLink"].as_str().unwrap().to_owned();
    let mut browser = Browser::new(&pki, &lb.base);
    assert_eq!(browser.open(&link, None).await.0, 200);
    let (status, path, _) = browser.open(&link, Some(&[("password", MOVER_PASSWORD), ("repeat", MOVER_PASSWORD)])).await;
    assert_eq!((status, path.as_str()), (200, "/console/sites"), "b1's owner set a password on B");

    // (a) Leads to all four tenants; A and its Litestream killed; C restores A's replica.
    let stop = Arc::new(tokio::sync::Notify::new());
    let load = tokio::spawn(flow(c.clone(), lb.base.clone(), vec![a1.clone(), a2.clone(), b1.clone(), b2.clone()], 5, false, stop.clone()));
    tokio::time::sleep(Duration::from_secs(6)).await;
    let kill_at = Instant::now();
    litestream_a.child.start_kill().unwrap();
    a.server.as_mut().unwrap().start_kill().unwrap();
    litestream_a.child.wait().await.unwrap();
    a.server.take().unwrap().wait().await.unwrap();

    std::fs::copy(a.dir.join("master.key"), nc.dir.join("master.key")).unwrap();
    let restore_started = Instant::now();
    run(cli(&nc.dir, &pki).args(["restore", "--from", &format!("file://{}", replica_a.display()), "--litestream"]).arg(litestream_bin())).await;
    let restore_time = restore_started.elapsed();
    nc.start(&pki, &[]).await;
    for site in [&a1, &a2] {
        lb.route(site, "node3").await;
    }
    lb.wait_for(&c, &format!("/v1/public-stats/{a1}"), Duration::from_secs(60)).await;
    let back_at = Instant::now();
    tokio::time::sleep(Duration::from_secs(3)).await;
    stop.notify_one();
    let outcomes = load.await.unwrap();

    for site in [&b1, &b2] {
        let o = &outcomes[site.as_str()];
        let failed = failures(o, true);
        assert!(failed.is_empty(), "node B's tenant {site} was interrupted: {failed:?}");
    }
    let mut must_deliver = BTreeSet::new();
    let (mut outside, mut lost_inside, mut refused) = (0, 0, 0);
    for site in [&a1, &a2] {
        let on_c = nc.leads(&pki, site).await;
        let o = &outcomes[site.as_str()];
        refused += count(o, |x| !matches!(x, Outcome::Accepted { .. }));
        for (id, at) in accepted(o) {
            let before_kill = at < kill_at;
            if !before_kill || kill_at - at > REPLICATION_WINDOW {
                assert!(
                    on_c.contains(&id),
                    "lead {id} of {site}, acknowledged {} before the kill, is not on the restored node",
                    if before_kill { format!("{:?}", kill_at - at) } else { "after".into() }
                );
                outside += 1;
                must_deliver.insert(id);
            } else if on_c.contains(&id) {
                must_deliver.insert(id);
            } else {
                lost_inside += 1;
            }
        }
    }
    for site in [&b1, &b2] {
        let on_b = b.leads(&pki, site).await;
        for (id, _) in accepted(&outcomes[site.as_str()]) {
            assert!(on_b.contains(&id), "lead {id} of {site} is not on node B");
            must_deliver.insert(id);
        }
    }
    all_delivered(&receiver, &must_deliver, "every kept lead's webhook").await;
    eprintln!(
        "lost node: restore {:.2} s; A's tenants answered again {:.1} s after the SIGKILL ({refused} requests refused meanwhile); \
         {outside} of A's leads outside the {REPLICATION_WINDOW:?} window all on C, {lost_inside} inside it lost; {} leads delivered; \
         B's {} leads all accepted",
        restore_time.as_secs_f64(),
        (back_at - kill_at).as_secs_f64(),
        must_deliver.len(),
        accepted(&outcomes[b1.as_str()]).len() + accepted(&outcomes[b2.as_str()]).len()
    );
    assert_eq!(
        c.get(format!("{}/v1/landing/dental/en/home", lb.base)).header("X-Site-Id", a1.as_str()).send().await.unwrap().status(),
        200,
        "C has the vertical's pages"
    );

    // (b) B's tenant b1 moves to C under leads and questions.
    let stop = Arc::new(tokio::sync::Notify::new());
    let load = tokio::spawn(flow(c.clone(), lb.base.clone(), vec![b1.clone()], 10, true, stop.clone()));
    tokio::time::sleep(Duration::from_secs(3)).await;
    let moved_at = Instant::now();
    let file = work.path().join("b1.site");
    let exported: serde_json::Value = serde_json::from_str(&run(cli(&b.dir, &pki).args(["site", "export", &b1, "--json", "--to"]).arg(&file)).await).unwrap();
    let key = exported["exportKey"].as_str().unwrap().to_owned();
    let imported: serde_json::Value =
        serde_json::from_str(&run(cli(&nc.dir, &pki).args(["site", "import", "--json", "--key", &key]).arg(&file)).await).unwrap();
    lb.route(&b1, "node3").await;
    let move_time = moved_at.elapsed();
    let again = cli(&nc.dir, &pki).args(["site", "import", "--key", &key]).arg(&file).output().await.unwrap();
    assert!(!again.status.success() && String::from_utf8_lossy(&again.stderr).contains("already on this node"), "{again:?}");
    tokio::time::sleep(Duration::from_secs(3)).await;
    stop.notify_one();
    let outcomes = load.await.unwrap();
    let o = &outcomes[b1.as_str()];
    let failed = failures(o, false);
    assert!(failed.is_empty(), "every lead got 202 or a retryable 503, every question 200: {failed:?}");
    let on_c = nc.leads(&pki, &b1).await;
    let leads: BTreeSet<String> = accepted(o).into_iter().map(|(id, _)| id).collect();
    let missing: Vec<_> = leads.iter().filter(|l| !on_c.contains(*l)).collect();
    assert!(missing.is_empty(), "leads that got 202 are not on the new node: {missing:?}");
    all_delivered(&receiver, &leads, "every moved tenant's lead's webhook").await;
    eprintln!(
        "moved tenant: export + import + set map took {:.2} s ({} rows, sha256 {}); {} leads accepted, {} retryable 503s, {} questions answered",
        move_time.as_secs_f64(),
        imported["rows"].as_object().map_or(0, |r| r.values().filter_map(|v| v.as_u64()).sum::<u64>()),
        exported["sha256"].as_str().unwrap_or_default(),
        leads.len(),
        count(o, |x| matches!(x, Outcome::Retryable)),
        count(o, |x| matches!(x, Outcome::Answered)),
    );
    assert_eq!(imported["sha256"], exported["sha256"]);
    assert_eq!(imported["newUsers"], serde_json::json!([mover]), "b1's owner has no account on C yet: {imported}");

    // Drained: the old node forgets the tenant; the new one serves it.
    run(cli(&b.dir, &pki).args(["site", "delete", &b1, "--yes"])).await;
    assert!(!b.map(&pki, "node2").await.contains(&b1));
    assert!(nc.map(&pki, "node3").await.contains(&b1));
    let answer: serde_json::Value = c
        .post(format!("{}/v1/query", lb.base))
        .header("X-Site-Id", b1.as_str())
        .json(&serde_json::json!({"question": "How much does whitening cost?"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(answer["answer"].as_str().unwrap_or_default().contains("350 euros"), "{answer}");
    // b1's owner moved without the password set on B: it does not sign in on C. C's operator gives them
    // a setup link; they set a password through HAProxy, then sign in with it and see b1 there.
    let mut browser = Browser::new(&pki, &lb.base);
    let login = format!("/console/login?site={b1}");
    assert_eq!(browser.open(&login, None).await.0, 200);
    let (_, path, page) = browser.open(&login, Some(&[("email", mover), ("password", MOVER_PASSWORD)])).await;
    assert_ne!(path, "/console/sites", "the password set on B signs in on C: {page}");
    let reset = run(cli(&nc.dir, &pki).args(["user", "reset", "--email", mover, "--base-url", &lb.base, "--json"])).await;
    let link = serde_json::from_str::<serde_json::Value>(&reset).unwrap()["setupLink"].as_str().unwrap().to_owned();
    let mut browser = Browser::new(&pki, &lb.base);
    assert_eq!(browser.open(&link, None).await.0, 200, "C's setup link through HAProxy");
    let (status, path, _) = browser.open(&link, Some(&[("password", MOVER_PASSWORD), ("repeat", MOVER_PASSWORD)])).await;
    assert_eq!((status, path.as_str()), (200, "/console/sites"), "b1's owner set a password on C");
    let mut browser = Browser::new(&pki, &lb.base);
    assert_eq!(browser.open(&login, None).await.0, 200);
    let (status, path, page) = browser.open(&login, Some(&[("email", mover), ("password", MOVER_PASSWORD)])).await;
    assert_eq!((status, path.as_str()), (200, "/console/sites"), "b1's owner signs in on C: {page}");
    assert!(page.contains(mover) && page.contains(b1.as_str()), "C's site list shows b1 to its owner: {page}");
    drop(lb);
}
