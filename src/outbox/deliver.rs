//! One signed HTTP attempt to a site's webhook, and what its answer means.
//!
//! The operator's URL policy is checked again here, against the addresses the host resolves to now: the
//! client's resolver (`net::CheckedResolver`) refuses a name if any of its addresses is not public, and the
//! connection goes only to the addresses it checked, so a DNS answer that changed since the URL was set
//! (rebinding) cannot reach the internal network. IP-literal hosts never reach a resolver and are checked
//! before sending. Redirects are never followed and no proxy is used (a proxy would resolve the name
//! itself, past the check).

use std::time::{Duration, Instant};

use super::signing;
use crate::config::WebhooksConfig;
use crate::domain::{NetworkPolicy, WebhookUrl};
use crate::net::{checked_client, error_chain};

/// How much of a receiver's answer is kept (printed by `webhooks test`).
const BODY_KEEP: usize = 4096;

/// The class of an attempt's result, which decides what happens next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// 2xx.
    Delivered,
    /// 410 Gone: the receiver asks us to stop; the site's endpoint is disabled.
    Gone,
    /// 429 or a timeout: back off at least `webhooks.min_backoff_after_throttle`.
    Throttled,
    /// Anything else: a non-2xx status (3xx included), a refused address, a connection error.
    Failed,
}

/// The observable result of one attempt.
#[derive(Debug, Clone)]
pub struct Sent {
    pub verdict: Verdict,
    pub status: Option<u16>,
    /// The start of the receiver's body (lossy UTF-8).
    pub body: String,
    pub error: Option<String>,
    pub retry_after: Option<Duration>,
    pub duration: Duration,
    /// Whether the receiver answered from an address that is not public (or unknown): what it said is
    /// then not shown to a site's owner, since it may be any internal service.
    pub private_peer: bool,
}

/// The webhook HTTP client: policy-checking resolver, no redirects, no proxy, the configured timeout.
#[derive(Debug, Clone)]
pub struct Sender {
    client: reqwest::Client,
    policy: NetworkPolicy,
}

impl Sender {
    pub fn new(config: &WebhooksConfig) -> Result<Sender, reqwest::Error> {
        let policy = crate::domain::NetworkPolicy::webhooks(config);
        let client = checked_client(policy.clone(), "webhooks.allow_private_networks", concat!("sitebot-webhooks/", env!("CARGO_PKG_VERSION")))
            .timeout(Duration::from_secs(config.timeout_secs))
            .connect_timeout(Duration::from_secs(config.timeout_secs.min(10)))
            .build()?;
        Ok(Sender { client, policy })
    }

    /// Checks what can be checked without resolving (scheme, credentials, IP-literal and local hosts)
    /// with the same policy code that accepted the URL when it was set: the operator may have tightened
    /// the policy since.
    fn check_url(&self, url: &str) -> Result<reqwest::Url, String> {
        let url = WebhookUrl::parse(url, &self.policy).map_err(|e| format!("refused: {e}"))?;
        reqwest::Url::parse(url.as_str()).map_err(|e| format!("invalid webhook URL: {e}"))
    }

    /// Sends `payload` to `url` signed with every secret in `secrets`, as event `id`, once.
    pub async fn send(&self, url: &str, id: &str, payload: &str, secrets: &[String]) -> Sent {
        let started = Instant::now();
        let failed = |error: String| Sent {
            verdict: Verdict::Failed,
            status: None,
            body: String::new(),
            error: Some(error),
            retry_after: None,
            duration: started.elapsed(),
            private_peer: false,
        };
        let url = match self.check_url(url) {
            Ok(u) => u,
            Err(e) => return failed(e),
        };
        let timestamp = chrono::Utc::now().timestamp();
        let signature = match signing::signature_header(secrets, id, timestamp, payload.as_bytes()) {
            Ok(s) => s,
            Err(e) => return failed(e.to_string()),
        };
        let request = self
            .client
            .post(url)
            .header("content-type", "application/json")
            .header("webhook-id", id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(payload.to_owned());
        let resp = match request.send().await {
            Ok(r) => r,
            Err(e) if e.is_timeout() => {
                return Sent { verdict: Verdict::Throttled, ..failed(format!("timed out: {}", error_chain(&e))) };
            }
            Err(e) => return failed(error_chain(&e)),
        };
        let status = resp.status();
        let private_peer = resp.remote_addr().is_none_or(|a| !crate::domain::is_public_ip(a.ip()));
        let retry_after = resp.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(parse_retry_after);
        let location = resp.headers().get("location").and_then(|v| v.to_str().ok()).map(str::to_owned);
        let body = read_start(resp).await;
        let (verdict, error) = match status.as_u16() {
            200..=299 => (Verdict::Delivered, None),
            410 => (Verdict::Gone, Some("410 Gone: the endpoint was disabled".to_owned())),
            429 => (Verdict::Throttled, Some("429 Too Many Requests".to_owned())),
            300..=399 if private_peer => (Verdict::Failed, Some(format!("{status}: redirects are not followed"))),
            300..=399 => (Verdict::Failed, Some(format!("{status}: redirects are not followed (location: {})", location.as_deref().unwrap_or("none")))),
            _ => (Verdict::Failed, Some(format!("receiver answered {status}"))),
        };
        Sent { verdict, status: Some(status.as_u16()), body, error, retry_after, duration: started.elapsed(), private_peer }
    }
}

/// Reads at most `BODY_KEEP` bytes of the answer, and no more than that off the wire.
async fn read_start(mut resp: reqwest::Response) -> String {
    let mut out = Vec::new();
    while out.len() < BODY_KEEP {
        match resp.chunk().await {
            Ok(Some(chunk)) => out.extend_from_slice(&chunk[..chunk.len().min(BODY_KEEP - out.len())]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `Retry-After`: delta seconds or an HTTP date.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let secs = (at.timestamp() - chrono::Utc::now().timestamp()).max(0);
    Some(Duration::from_secs(secs as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_forms() {
        assert_eq!(parse_retry_after("120"), Some(Duration::from_secs(120)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), Some(Duration::ZERO));
        let later = (chrono::Utc::now() + chrono::Duration::seconds(300)).to_rfc2822();
        let d = parse_retry_after(&later).unwrap();
        assert!((295..=300).contains(&d.as_secs()), "{d:?}");
        assert_eq!(parse_retry_after("soon"), None);
    }

    #[tokio::test]
    async fn private_addresses_are_refused_before_connecting() {
        let config = WebhooksConfig { allow_http: true, ..WebhooksConfig::default() };
        let sender = Sender::new(&config).unwrap();
        let secret = vec!["whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD".to_owned()];
        for url in ["http://127.0.0.1:9/hook", "http://[::1]:9/hook", "http://10.0.0.1/hook", "http://localhost:9/hook"] {
            let sent = sender.send(url, "msg_1", "{}", &secret).await;
            assert_eq!(sent.verdict, Verdict::Failed, "{url}");
            let err = sent.error.unwrap();
            assert!(err.contains("not a public address"), "{url}: {err}");
        }
        let strict = Sender::new(&WebhooksConfig::default()).unwrap();
        let err = strict.send("http://example.com/hook", "msg_1", "{}", &secret).await.error.unwrap();
        assert!(err.contains("http:// webhook URLs are not allowed"), "{err}");
    }
}
