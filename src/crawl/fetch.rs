//! One page request, politely: the operator's network policy (every URL checked with
//! `domain::check_endpoint`, every resolved address with `net::CheckedResolver`, no proxy), redirects
//! followed by hand so each hop is checked and kept on the site, a timeout per request, a size limit
//! read as the body streams in, `Crawl-delay` pacing, and retries with exponential backoff (or the
//! server's `Retry-After`) on 429, 5xx and timeouts.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Mutex;
use tokio::time::Instant;
use url::Url;

use crate::config::CrawlConfig;
use crate::domain::{EndpointNames, NetworkPolicy, check_endpoint};
use crate::net::checked_client;

/// The crawler's `User-Agent`; robots.txt groups for `sitebot` apply to it.
pub const USER_AGENT: &str = concat!("sitebot/", env!("CARGO_PKG_VERSION"), " (+website assistant crawler; robots.txt token: sitebot)");
/// The product token robots.txt groups are matched against.
pub const ROBOTS_AGENT: &str = "sitebot";
/// Redirect hops followed for one URL.
const MAX_REDIRECTS: usize = 10;
/// The longest a `Retry-After` or `Crawl-delay` is honoured; beyond it the request fails (or, for the
/// delay, the crawl paces at this).
pub const MAX_WAIT: Duration = Duration::from_secs(60);

/// Validators a conditional re-fetch sends.
#[derive(Debug, Clone, Default)]
pub struct Validators {
    pub etag: Option<String>,
    pub last_modified: Option<String>,
}

/// What asking for one URL gave.
#[derive(Debug)]
pub enum Answer {
    /// 200: the final URL (after redirects), its media type and body, and its validators.
    Page {
        url: Url,
        content_type: String,
        body: Vec<u8>,
        validators: Validators,
    },
    /// 304 to a conditional request.
    NotModified,
    /// 404 or 410.
    Gone(u16),
    /// Another 4xx.
    Unavailable(u16),
    /// Not fetched, or not followed, on purpose (a redirect off the site or into a refused area).
    Skipped(String),
    Failed(String),
}

/// The crawl's HTTP client.
#[derive(Debug, Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    policy: NetworkPolicy,
    max_bytes: u64,
    retries: u32,
    /// When the next request may start (`Crawl-delay`), and the delay.
    pace: Arc<Mutex<Instant>>,
    delay: Duration,
    /// The first backoff; doubled on each retry.
    backoff: Duration,
}

impl Fetcher {
    pub fn new(config: &CrawlConfig) -> Result<Fetcher, reqwest::Error> {
        let policy = crate::domain::NetworkPolicy::crawl(config);
        let client = checked_client(policy.clone(), "crawl.allow_private_networks", USER_AGENT)
            .timeout(Duration::from_secs(config.timeout_secs))
            .connect_timeout(Duration::from_secs(config.timeout_secs.min(10)))
            .pool_max_idle_per_host(config.connections)
            .build()?;
        Ok(Fetcher {
            client,
            policy,
            max_bytes: config.max_page_bytes,
            retries: config.retries,
            pace: Arc::new(Mutex::new(Instant::now())),
            delay: Duration::ZERO,
            backoff: Duration::from_secs(1),
        })
    }

    /// Paces requests `delay` apart (robots.txt `Crawl-delay`), at most [`MAX_WAIT`].
    pub fn with_delay(mut self, delay: Duration) -> Fetcher {
        self.delay = delay.min(MAX_WAIT);
        self
    }

    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    async fn wait_turn(&self) {
        if self.delay.is_zero() {
            return;
        }
        let at = {
            let mut next = self.pace.lock().await;
            let at = (*next).max(Instant::now());
            *next = at + self.delay;
            at
        };
        tokio::time::sleep_until(at).await;
    }

    /// One request with its retries; `Err` is a failure reason.
    async fn send(&self, url: &Url, validators: Option<&Validators>) -> Result<reqwest::Response, String> {
        check_endpoint(url.as_str(), &self.policy, EndpointNames::CRAWL).map_err(|e| format!("refused: {e}"))?;
        let mut attempt = 0;
        loop {
            self.wait_turn().await;
            let mut request = self.client.get(url.clone()).header("accept", "text/html,application/xhtml+xml,application/pdf;q=0.9,*/*;q=0.5");
            if let Some(v) = validators {
                if let Some(etag) = &v.etag {
                    request = request.header("if-none-match", etag);
                }
                if let Some(lm) = &v.last_modified {
                    request = request.header("if-modified-since", lm);
                }
            }
            let (retry, reason, after) = match request.send().await {
                Ok(resp) if resp.status().as_u16() == 429 || resp.status().is_server_error() => {
                    let after = resp.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<u64>().ok());
                    (true, format!("HTTP {}", resp.status()), after.map(Duration::from_secs))
                }
                Ok(resp) => return Ok(resp),
                Err(e) if e.is_timeout() || e.is_connect() => (true, crate::net::error_chain(&e), None),
                Err(e) => return Err(crate::net::error_chain(&e)),
            };
            if !retry || attempt >= self.retries {
                return Err(if attempt > 0 { format!("{reason} (after {} attempts)", attempt + 1) } else { reason });
            }
            let wait = after.unwrap_or(self.backoff * 2u32.pow(attempt));
            if wait > MAX_WAIT {
                return Err(format!("{reason}: the server asks to wait {}s", wait.as_secs()));
            }
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    /// Reads the body within the size limit.
    async fn body(&self, mut resp: reqwest::Response) -> Result<Vec<u8>, String> {
        let max = self.max_bytes;
        let too_large = || format!("larger than crawl.max_page_bytes ({max} bytes)");
        if resp.content_length().is_some_and(|n| n > max) {
            return Err(too_large());
        }
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| crate::net::error_chain(&e))? {
            if (body.len() + chunk.len()) as u64 > max {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    /// GETs `url`, following redirects that `refuses` lets through (it says why a target is not
    /// crawled: another site, robots.txt, a pattern). `validators` make the first request conditional.
    pub async fn get(&self, url: &Url, validators: Option<&Validators>, refuses: &(dyn Fn(&Url) -> Option<String> + Sync)) -> Answer {
        let mut current = url.clone();
        for hop in 0..=MAX_REDIRECTS {
            let resp = match self.send(&current, if hop == 0 { validators } else { None }).await {
                Ok(r) => r,
                Err(reason) => return Answer::Failed(reason),
            };
            let status = resp.status().as_u16();
            match status {
                200 => {}
                304 if hop == 0 && validators.is_some() => return Answer::NotModified,
                404 | 410 => return Answer::Gone(status),
                301 | 302 | 303 | 307 | 308 => {
                    let location = resp.headers().get("location").and_then(|v| v.to_str().ok()).and_then(|l| super::link::resolve(&current, l));
                    let Some(next) = location else { return Answer::Failed(format!("HTTP {status} without a usable Location")) };
                    if let Some(why) = refuses(&next) {
                        return Answer::Skipped(format!("redirects to {next}, which is not crawled: {why}"));
                    }
                    current = next;
                    continue;
                }
                400..=499 => return Answer::Unavailable(status),
                _ => return Answer::Failed(format!("HTTP {}", resp.status())),
            }
            let header = |name: &str| resp.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
            let validators = Validators { etag: header("etag"), last_modified: header("last-modified") };
            let content_type = header("content-type")
                .and_then(|t| t.split(';').next().map(|e| e.trim().to_ascii_lowercase()))
                .unwrap_or_else(|| "application/octet-stream".to_owned());
            return match self.body(resp).await {
                Ok(body) => Answer::Page { url: current, content_type, body, validators },
                Err(reason) => Answer::Failed(reason),
            };
        }
        Answer::Failed(format!("more than {MAX_REDIRECTS} redirects"))
    }
}
