//! `serve`, `demo`, `backup` and `healthcheck`.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;

use std::sync::Arc;

use crate::config::Config;
use crate::domain::{Currency, Lang, SiteId, Slug, Tier};
use crate::http::tls;
use crate::ratelimit::SystemClock;
use crate::server::{Ended, Server};
use crate::store::NewSite;

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address to listen on for HTTPS; port 0 picks a free port [default: server.listen, 0.0.0.0:8443]
    #[arg(long, env = "SITEBOT_LISTEN", value_name = "ADDR:PORT")]
    pub listen: Option<SocketAddr>,
}

/// Installs the SIGTERM and SIGINT handlers now (so a signal sent as soon as the address is printed is
/// not missed) and returns a future that resolves on the first of them.
fn shutdown_signal() -> anyhow::Result<impl std::future::Future<Output = ()> + Send> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).context("cannot install the SIGTERM handler")?;
    let mut int = signal(SignalKind::interrupt()).context("cannot install the SIGINT handler")?;
    Ok(async move {
        tokio::select! {
            _ = int.recv() => tracing::info!("SIGINT received; shutting down"),
            _ = term.recv() => tracing::info!("SIGTERM received; shutting down"),
        }
    })
}

/// What `demo` adds to a server: the text printed before it serves (`BASE` in it becomes the address it
/// listens on), and the site its `/demo/` page embeds the widget for.
pub struct Demo {
    pub banner: String,
    pub site: Option<SiteId>,
}

/// The address to print for a listener: `localhost` for a wildcard address, else the address itself.
fn base_url(addr: SocketAddr) -> String {
    match addr.ip() {
        ip if ip.is_unspecified() => format!("https://localhost:{}", addr.port()),
        IpAddr::V6(ip) => format!("https://[{ip}]:{}", addr.port()),
        ip => format!("https://{ip}:{}", addr.port()),
    }
}

/// Builds the state, binds, prints `listening on https://ADDR:PORT` on stdout, and runs every task of
/// the server (`server::Server::run`) until a signal; a task that ends on its own first is an error.
pub async fn serve(config: Config, data_dir: PathBuf, demo: Option<Demo>) -> anyhow::Result<()> {
    let mut server = Server::bind(config, data_dir, Arc::new(SystemClock::default())).await?;
    let shutdown = shutdown_signal()?;
    let addr = server.addr()?;
    if let Some(d) = demo {
        println!("{}", d.banner.replace("BASE", &base_url(addr)));
        if let Some(site) = d.site {
            server = server.with_demo_page(site);
        }
    }
    println!("listening on https://{addr}");
    if let Some(p) = server.plain_addr() {
        println!("refusing plain HTTP on http://{p}");
    }
    if let Some((addr, tls)) = server.metrics_addr() {
        println!("metrics on {}://{addr}", if tls { "https" } else { "http" });
    }
    use std::io::Write;
    std::io::stdout().flush().ok();
    match server.run(shutdown).await? {
        Ended::Signal => Ok(()),
        Ended::Task { task, why } => anyhow::bail!("{task} ended first ({why}); the server stopped"),
    }
}

const DEMO_KEY: &str = "demo_site_id";
/// The demo's console administrator.
pub const DEMO_ADMIN: &str = "admin@demo.example";

/// The demo administrator's way into the console: a one-time setup link while no password is set (a new
/// one at each start, the old one dead), else where to sign in.
async fn demo_admin(config: &Config, store: &crate::store::Store) -> anyhow::Result<String> {
    use crate::domain::{Email, Timestamp};
    let token = crate::secrets::new_url_token();
    let hash = crate::secrets::token_hash(&token);
    let expires = Timestamp::from_millis(Timestamp::now().as_millis() + i64::from(config.console.setup_link_hours.max(1)) * 3_600_000);
    let existing = store.run(|s| s.users().by_email(DEMO_ADMIN)).await?;
    match existing {
        Some(u) if u.has_password => return Ok(format!("console: BASE/console/ (sign in as {DEMO_ADMIN})")),
        Some(u) => {
            store.run(move |s| s.users().reset(&u.id, &hash, expires)).await?;
        }
        None => {
            let email = Email::parse(DEMO_ADMIN).expect("a valid address");
            store.run(move |s| s.users().add(&email, true, None, &hash, expires)).await?;
            store.run(|s| s.audit().record("demo", None, "user_added", &serde_json::json!({"user": DEMO_ADMIN, "admin": true}))).await?;
        }
    }
    Ok(format!("console: set the password of the demo administrator {DEMO_ADMIN} (one-time link): BASE/console/setup/{token}"))
}

/// Creates the demo site on first run (remembered in the database), then serves.
pub async fn demo(config: Config, data_dir: PathBuf) -> anyhow::Result<()> {
    let store = crate::app::open_store(&config, &data_dir)?;
    let existing = store.run(|s| s.meta(DEMO_KEY).get()).await?;
    let mut banner = match existing {
        Some(id) => format!("demo site {id} (created earlier; its token was shown then)"),
        None => {
            let new = NewSite::new(
                "Bright Smile Dental (demo)",
                Slug::vertical("dental").expect("a valid slug"),
                Tier::Pro,
                Currency::parse("EUR").expect("EUR is known"),
                Lang::parse("en").expect("en is a tag"),
            );
            let (site, creds) = store
                .run(move |s| {
                    let out = s.sites().create(new)?;
                    s.meta(DEMO_KEY).set(&out.0.id.to_string())?;
                    Ok(out)
                })
                .await?;
            format!(
                "demo site {} created\n  bearer token (shown once): {}\n  try: curl -k -H 'X-Site-Id: {}' -H 'Content-Type: application/json' \
                 -d '{{\"email\":\"ada@example.com\"}}' BASE/v1/leads",
                site.id,
                creds.bearer_token.unwrap_or_default(),
                site.id
            )
        }
    };
    // The demo site's knowledge (embedded in the binary), imported idempotently.
    if let Some(id) = store.run(|s| s.meta(DEMO_KEY).get()).await? {
        let site_id: SiteId = id.parse().map_err(|e: crate::domain::Invalid| anyhow::anyhow!("stored demo site id: {e}"))?;
        let (kstore, kconfig, kdir) = (store.clone(), config.knowledge.clone(), data_dir.clone());
        let report = tokio::task::spawn_blocking(move || crate::knowledge::import::demo::import(&kstore, &kconfig, &kdir, &site_id)).await??;
        if report.documents > 0 {
            banner.push_str(&format!(
                "\ndemo knowledge imported: {} documents ({} chunks) of Bright Smile Dental\n  try: curl -k -H 'X-Site-Id: {id}' -H 'Content-Type: application/json' \
                 -d '{{\"question\":\"How much does whitening cost?\"}}' BASE/v1/query",
                report.documents, report.chunks
            ));
        }
    }
    // The demo vertical's pages, prices and rates, loaded once (the binary embeds them).
    let reference = Currency::parse(&config.pricing.reference_currency)?;
    let loader = store.clone();
    if tokio::task::spawn_blocking(move || crate::content::demo::load(&loader, reference)).await?? {
        banner.push_str(
            "\ndemo content loaded: vertical dental (en, de), landing pages, prices and rates\n  try: curl -k BASE/v1/landing/dental/en/home \
             and curl -k -H 'Accept-Language: de' 'BASE/v1/pricing/dental?currency=USD'",
        );
    }
    if config.console.enabled {
        banner.push('\n');
        banner.push_str(&demo_admin(&config, &store).await?);
    }
    let site = store.run(|s| s.meta(DEMO_KEY).get()).await?.and_then(|id| id.parse().ok());
    if site.is_some() {
        banner.push_str("\ndemo page with the widget: BASE/demo/");
    }
    drop(store);
    serve(config, data_dir, Some(Demo { banner, site })).await
}

pub fn backup(config: &Config, data_dir: &Path, dest: &Path) -> anyhow::Result<()> {
    let store = crate::app::open_store(config, data_dir)?;
    store.backup_to(dest).with_context(|| format!("backup to {} failed", dest.display()))?;
    let size = std::fs::metadata(dest).map(|m| m.len()).unwrap_or(0);
    println!("backup written to {} ({size} bytes, schema version {})", dest.display(), store.schema_version()?);
    if config.secrets.master_key.is_none() {
        println!("note: webhook secrets in it are sealed with {}; keep a copy of that file too", data_dir.join("master.key").display());
    }
    Ok(())
}

pub async fn healthcheck(config: &Config, data_dir: &Path, url: Option<String>) -> anyhow::Result<()> {
    let listen = config.server.listen;
    let port = listen.port();
    let mut client = reqwest::Client::builder().timeout(std::time::Duration::from_secs(5)).use_rustls_tls();
    let configured = config.server.tls_cert.is_some();
    if !configured {
        // Trust exactly the self-signed certificate of this data directory.
        let pem = std::fs::read(tls::self_signed_paths(data_dir).0).context("no self-signed certificate in the data directory; is the server set up?")?;
        client = client.tls_built_in_root_certs(false).add_root_certificate(reqwest::Certificate::from_pem(&pem)?);
    }
    let base = match url {
        Some(u) => u,
        None if !configured => {
            let ip = if listen.ip().is_unspecified() { IpAddr::V4(Ipv4Addr::LOCALHOST) } else { listen.ip() };
            format!("https://{}", SocketAddr::new(ip, port))
        }
        None => {
            // A CA-issued certificate names public hosts: ask for the first one, at this machine.
            let host = config.server.hostnames.first().cloned().unwrap_or_else(|| "localhost".into());
            client = client.resolve(&host, SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
            format!("https://{host}:{port}")
        }
    };
    let client = client.build()?;
    let resp = client.get(format!("{}/healthz", base.trim_end_matches('/'))).send().await.with_context(|| format!("no answer from {base}"))?;
    if !resp.status().is_success() {
        anyhow::bail!("{base}/healthz answered {}", resp.status());
    }
    println!("ok: {base} answers");
    Ok(())
}
