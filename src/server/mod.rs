//! The composition root: one function starts every long-running task of a server under one shutdown
//! signal, and says which task ended first. `sitebot serve` (and `demo`) and the test harness both run
//! a server through [`Server::run`] (or [`Server::run_serving`], which puts test handlers in place of
//! the route table), so what tests exercise is what the binary runs.
//!
//! The tasks:
//! - **HTTP**: the TLS listener and the route table (`http::serve`, `api::routes`), and refusals on
//!   `server.plain_listen`;
//! - **metrics**: `GET /metrics` on `server.metrics_listen`, when set;
//! - **webhook worker**: delivery from the outbox (`outbox::Worker`);
//! - **crawl scheduler**: re-syncs crawl sources as they fall due (`crawl::schedule::Scheduler`);
//! - **index refresh**: full-text indexes another analysis built rebuilt before the first request, then
//!   chunks another model embedded re-embedded in the background (`knowledge::import::refresh`); it ends
//!   by itself when done, and its report is in `AppState::refreshed`. Vector index files missing from
//!   the data directory (a restored node) are built in the background too, and `/readyz` answers 503
//!   until they are (`AppState::indexes_ready`);
//! - **housekeeping**: retention, the idempotency window and lapsed console sessions ([`housekeeping`]);
//! - **hand-off expiry**: waits for a person that ran out end with `missed` (`handoff::run_expiry`).
//! - **hand-off watch**: new hand-off events no bell announced ring their conversations' streams
//!   (`handoff::run_watch`).
//! - **e-mail** (#25, when `[email]` is set): the e-mail worker (`email::Worker`) and the weekly digest
//!   (`email::digest::run_weekly`).
//!
//! Shutdown, on the signal or when a task ends on its own: HTTP stops accepting and drains for
//! `server.shutdown_grace_secs`; then the workers stop claiming, finish what they hold, and the run
//! returns [`Ended`].

pub mod housekeeping;

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::app::AppState;
use crate::config::Config;
use crate::http::{self, tls};
use crate::ratelimit::Clock;

/// Everything the server answers, behind the edge: the API (`api::table`) and, when `console.enabled`,
/// the console under `/console/` (`console::routes`).
pub fn routes(state: Arc<AppState>) -> impl poem::Endpoint<Output = poem::Response> {
    routes_with_demo(state, None)
}

/// `routes`, and with `demo_site` the demo page at `/demo/`: a page of the demo clinic with the widget
/// embedded, as a site owner would embed it (`sitebot demo` only).
pub fn routes_with_demo(state: Arc<AppState>, demo_site: Option<crate::domain::SiteId>) -> impl poem::Endpoint<Output = poem::Response> {
    use poem::EndpointExt;
    let mut table = crate::api::table();
    if state.config.console.enabled {
        table = table.nest("/console", crate::console::routes(state.clone()));
    }
    if let Some(site) = demo_site {
        let page = demo_page(site);
        table = table.at(
            "/demo/",
            poem::get(poem::endpoint::make_sync(move |_| {
                let mut resp = poem::Response::builder().content_type("text/html; charset=utf-8").body(page.clone());
                crate::console::session::secure(&mut resp, false);
                resp
            })),
        );
    }
    crate::http::edge::Edge::new(table.data(state.clone()), state)
}

/// The demo clinic's page: a heading, a few lines and the widget's one tag, as a site owner embeds it.
fn demo_page(site: crate::domain::SiteId) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>Bright Smile Dental (demo)</title><link rel=\"icon\" href=\"data:,\"><link rel=\"stylesheet\" href=\"/console/assets/console.css\"></head>\
         <body><main id=\"main\"><h1>Bright Smile Dental</h1><p>This is the demo site's page. Ask the assistant in the corner about opening hours, \
         prices, insurance or emergencies, in any language; ask for a person to leave your details.</p>\
         <p class=\"note\">Served by <code>sitebot demo</code> only: a real site embeds the same one tag on its own pages.</p></main>\
         <script src=\"/v1/widget.js\" data-site-id=\"{site}\" async></script></body></html>"
    )
}

/// Vector indexes missing from the data directory (a node restored from its replica has none; a site
/// imported into while the server was down has one behind) are built in the background before the
/// server reports ready: `/readyz` answers 503 until then, so a load balancer sends no question that
/// would wait for a build. Questions that come anyway are answered (a site's first one waits for its
/// index). A failed build is logged and the server becomes ready: questions retry it.
async fn build_missing_indexes(state: &Arc<AppState>, stop: CancellationToken) -> anyhow::Result<()> {
    let (knowledge, store) = (state.knowledge.clone(), state.store.clone());
    let missing = tokio::task::spawn_blocking(move || knowledge.missing_indexes_blocking(&store)).await??;
    if missing.is_empty() {
        return Ok(());
    }
    tracing::info!(sites = missing.len(), "vector indexes missing or behind the database; building them, /readyz answers 503 until done");
    state.indexes_ready.send_replace(false);
    let state = state.clone();
    tokio::task::spawn_blocking(move || {
        let started = std::time::Instant::now();
        match state.knowledge.build_indexes_blocking(&state.store, &missing, &stop) {
            Ok(vectors) => tracing::info!(sites = missing.len(), vectors, took_ms = started.elapsed().as_millis() as u64, "vector indexes built; ready"),
            Err(e) => tracing::error!(error = %e, "building the vector indexes failed; questions build them as they come"),
        }
        state.indexes_ready.send_replace(true);
    });
    Ok(())
}

/// The long-running tasks of a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    Http,
    Metrics,
    WebhookWorker,
    CrawlScheduler,
    IndexRefresh,
    Housekeeping,
    HandoffExpiry,
    HandoffWatch,
    // #25 email
    EmailWorker,
    DigestSchedule,
    EnglishVectors,
}

impl std::fmt::Display for Task {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Task::Http => "the HTTPS server",
            Task::Metrics => "the metrics listener",
            Task::WebhookWorker => "the webhook worker",
            Task::CrawlScheduler => "the crawl scheduler",
            Task::IndexRefresh => "the index refresh",
            Task::Housekeeping => "housekeeping",
            Task::HandoffExpiry => "the hand-off expiry",
            Task::HandoffWatch => "the hand-off watch",
            Task::EmailWorker => "the e-mail worker",
            Task::DigestSchedule => "the weekly digest",
            Task::EnglishVectors => "the English vectors' filling",
        })
    }
}

/// What ended a run.
#[derive(Debug)]
pub enum Ended {
    /// The shutdown signal; every task then stopped in order.
    Signal,
    /// A task ended on its own before the signal (it failed, or panicked); the others were stopped.
    Task { task: Task, why: String },
}

/// A server built and bound, not yet serving: its addresses can be read (port 0) before it runs.
pub struct Server {
    state: Arc<AppState>,
    identity: tls::Identity,
    listener: TcpListener,
    plain: Option<TcpListener>,
    metrics: Option<TcpListener>,
    delivery: bool,
    demo_site: Option<crate::domain::SiteId>,
    /// Stops the workers (the refresh already runs) after HTTP.
    workers_stop: CancellationToken,
    refresh: tokio::task::JoinHandle<crate::knowledge::import::refresh::Reembedded>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("addr", &self.listener.local_addr().ok()).field("delivery", &self.delivery).finish_non_exhaustive()
    }
}

impl Server {
    /// Loads the TLS identity, builds the state (the store, the model, the indexes' directory), binds
    /// `server.listen`, `server.plain_listen` and `server.metrics_listen`, and readies the indexes: once
    /// this returns, full-text indexes another analysis built are rebuilt and sites whose chunks another
    /// model embedded are marked (searched by BM25 alone), and their re-embedding runs in the background.
    pub async fn bind(config: Config, data_dir: PathBuf, clock: Arc<dyn Clock>) -> anyhow::Result<Server> {
        let tls_files = config.server.tls_cert.as_deref().zip(config.server.tls_key.as_deref());
        let identity = tls::load_identity(&data_dir, &config.server.hostnames, tls_files).context("cannot set up TLS")?;
        tracing::info!(fingerprint = %identity.fingerprint, cert = %identity.cert_path.display(), self_signed = identity.self_signed, "TLS certificate");
        let (listen, plain_listen, metrics_listen) = (config.server.listen, config.server.plain_listen, config.server.metrics_listen);
        let state = AppState::build_with_clock(config, data_dir, clock)?;
        let listener = TcpListener::bind(listen).await.with_context(|| format!("cannot listen on {listen}"))?;
        let plain = match plain_listen {
            Some(addr) => Some(TcpListener::bind(addr).await.with_context(|| format!("cannot listen on {addr}"))?),
            None => None,
        };
        let metrics = match metrics_listen {
            Some(addr) => Some(TcpListener::bind(addr).await.with_context(|| format!("cannot listen on {addr} for metrics"))?),
            None => None,
        };
        let workers_stop = CancellationToken::new();
        let refresh = crate::knowledge::import::refresh::start(state.knowledge.clone(), state.store.clone(), workers_stop.clone()).await?;
        build_missing_indexes(&state, workers_stop.clone()).await?;
        Ok(Server { state, identity, listener, plain, metrics, delivery: true, demo_site: None, workers_stop, refresh })
    }

    pub fn state(&self) -> &Arc<AppState> {
        &self.state
    }

    pub fn addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    pub fn plain_addr(&self) -> Option<SocketAddr> {
        self.plain.as_ref().and_then(|p| p.local_addr().ok())
    }

    /// The metrics listener's address and whether it speaks TLS (only loopback goes in clear).
    pub fn metrics_addr(&self) -> Option<(SocketAddr, bool)> {
        self.metrics.as_ref().and_then(|m| m.local_addr().ok()).map(|a| (a, !http::metrics::plain_on(a)))
    }

    /// Serves the demo page at `/demo/` for the site (`sitebot demo`).
    pub fn with_demo_page(mut self, site: crate::domain::SiteId) -> Server {
        self.demo_site = Some(site);
        self
    }

    /// Runs without the background webhook worker: the caller delivers (tests drive `Worker::run_once`
    /// so that every attempt happens when they say).
    pub fn without_background_delivery(mut self) -> Server {
        self.delivery = false;
        self
    }

    /// Serves the route table and runs every other task until `shutdown` resolves or a task ends.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send) -> anyhow::Result<Ended> {
        let routes = routes_with_demo(self.state.clone(), self.demo_site);
        self.run_serving(routes, shutdown).await
    }

    /// As [`run`](Self::run), with `endpoint` in place of the route table (tests put handlers of their
    /// own behind the real `Edge`).
    pub async fn run_serving<E>(self, endpoint: E, shutdown: impl Future<Output = ()> + Send) -> anyhow::Result<Ended>
    where
        E: poem::Endpoint<Output = poem::Response> + 'static,
    {
        let Server { state, identity, listener, plain, metrics, delivery, demo_site: _, workers_stop, refresh } = self;
        // #25 email: links in e-mails name the port this server listens on, unless configured.
        let listener_port = listener.local_addr().ok().map(|a| a.port());
        // HTTP stops first; the workers after it, so what HTTP accepted while draining is still handed on.
        let http_stop = CancellationToken::new();
        let metrics_tls = identity.config.clone();
        let mut tasks: JoinSet<(Task, anyhow::Result<()>)> = JoinSet::new();
        {
            let (state, stop) = (state.clone(), http_stop.clone());
            tasks.spawn(async move {
                let served = http::serve(listener, plain, &identity, state, endpoint, stop.cancelled_owned()).await;
                (Task::Http, served.context("server failed"))
            });
        }
        if let Some(m) = metrics {
            let tls = (!http::metrics::plain_on(m.local_addr()?)).then(|| http::metrics::tls_config(&metrics_tls));
            let (state, stop) = (state.clone(), workers_stop.clone());
            tasks.spawn(async move {
                tokio::select! {
                    _ = http::metrics::serve(m, tls, state) => (Task::Metrics, Err(anyhow::anyhow!("the metrics listener stopped"))),
                    _ = stop.cancelled() => (Task::Metrics, Ok(())),
                }
            });
        }
        if delivery {
            let worker = crate::outbox::Worker::new(state.clone())?;
            let stop = workers_stop.clone();
            tasks.spawn(async move {
                worker.run_until_stopped(stop).await;
                (Task::WebhookWorker, Ok(()))
            });
        }
        {
            let scheduler = crate::crawl::schedule::Scheduler::new(state.clone());
            let stop = workers_stop.clone();
            tasks.spawn(async move {
                scheduler.run_until_stopped(stop).await;
                (Task::CrawlScheduler, Ok(()))
            });
        }
        {
            let (state, stop) = (state.clone(), workers_stop.clone());
            tasks.spawn(async move {
                housekeeping::run_until_stopped(&state, stop).await;
                (Task::Housekeeping, Ok(()))
            });
        }
        {
            let (state, stop) = (state.clone(), workers_stop.clone());
            tasks.spawn(async move {
                crate::handoff::run_expiry(state, stop).await;
                (Task::HandoffExpiry, Ok(()))
            });
        }
        {
            let (state, stop) = (state.clone(), workers_stop.clone());
            tasks.spawn(async move {
                crate::handoff::run_watch(state, stop).await;
                (Task::HandoffWatch, Ok(()))
            });
        }
        {
            let (knowledge, store, stop) = (state.knowledge.clone(), state.store.clone(), workers_stop.clone());
            tasks.spawn(async move {
                crate::knowledge::import::english::run_until_stopped(knowledge, store, stop.clone()).await;
                // With no English model it returns at once, which is no reason to stop the others.
                stop.cancelled().await;
                (Task::EnglishVectors, Ok(()))
            });
        }
        // #25 email: the e-mail worker and the weekly digest, when e-mail is configured.
        {
            let port = listener_port;
            let base = crate::email::base_url(&state.config, port);
            if let Some(worker) = crate::email::Worker::new(state.store.clone(), &state.config, base)? {
                tracing::info!(server = %worker.server(), "e-mail on");
                if state.config.email.digest {
                    let (store, hour, wake, stop) = (state.store.clone(), state.config.email.digest_hour, worker.wake.clone(), workers_stop.clone());
                    tasks.spawn(async move {
                        crate::email::digest::run_weekly(store, hour, wake, stop).await;
                        (Task::DigestSchedule, Ok(()))
                    });
                }
                let stop = workers_stop.clone();
                tasks.spawn(async move {
                    worker.run_until_stopped(stop).await;
                    (Task::EmailWorker, Ok(()))
                });
            }
        }
        // The refresh ends by itself once done, which is no reason to stop the others; its report is
        // published for `doctor`-like readers and tests.
        let refreshed = {
            let state = state.clone();
            tokio::spawn(async move {
                match refresh.await {
                    Ok(report) => {
                        state.refreshed.send_replace(Some(report));
                    }
                    Err(e) => tracing::error!(task = %Task::IndexRefresh, error = %e, "the index refresh panicked"),
                }
            })
        };

        tokio::pin!(shutdown);
        let ended = tokio::select! {
            _ = &mut shutdown => Ended::Signal,
            Some(first) = tasks.join_next() => {
                let (task, result) = first.unwrap_or_else(|e| (Task::Http, Err(anyhow::anyhow!("a task panicked: {e}"))));
                let why = match result {
                    Ok(()) => "it returned".to_owned(),
                    Err(e) => format!("{e:#}"),
                };
                tracing::error!(task = %task, why, "a task ended first; stopping the others");
                Ended::Task { task, why }
            }
        };
        if let Ended::Signal = ended {
            tracing::info!("shutting down");
        }
        http_stop.cancel();
        let mut http_done = matches!(ended, Ended::Task { task: Task::Http, .. });
        while !http_done {
            match tasks.join_next().await {
                Some(Ok((Task::Http, result))) => {
                    http_done = true;
                    if let Err(e) = result {
                        tracing::error!(error = %format!("{e:#}"), "the HTTPS server failed while stopping");
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => tracing::error!(error = %e, "a task panicked while stopping"),
                None => break,
            }
        }
        workers_stop.cancel();
        while let Some(done) = tasks.join_next().await {
            match done {
                Ok((task, Err(e))) => tracing::error!(task = %task, error = %format!("{e:#}"), "a task failed while stopping"),
                Err(e) => tracing::error!(error = %e, "a task panicked while stopping"),
                Ok(_) => {}
            }
        }
        let _ = refreshed.await;
        tracing::info!("stopped");
        Ok(ended)
    }
}
