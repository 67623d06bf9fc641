//! Webhook targets: the URL policy at the time a URL is set, and the address check delivery repeats
//! after DNS resolution; and `EndpointPolicy`, how a target that keeps failing is backed off and disabled.

use std::time::Duration;

use serde::Serialize;

use super::Timestamp;

use super::endpoint::{EndpointNames, NetworkPolicy, check_endpoint};
use super::{Invalid, invalid};

/// A CRM webhook URL that passed the operator's policy when it was set. Delivery checks the resolved
/// address again, since DNS can change after this.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct WebhookUrl(String);

impl WebhookUrl {
    pub fn parse(s: &str, policy: &NetworkPolicy) -> Result<Self, Invalid> {
        check_endpoint(s, policy, EndpointNames::WEBHOOK).map(|url| Self(url.to_string()))
    }

    /// A URL read back from the store: it met the operator's policy when it was set, and delivery checks
    /// the resolved address again, so only its syntax is checked here.
    pub fn stored(s: &str) -> Result<Self, Invalid> {
        url::Url::parse(s).map(|u| Self(u.to_string())).map_err(|_| invalid(format!("`{s}` is not a URL")))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// How deliveries to one endpoint (a site's webhook URL) are scheduled, whatever its events' own retry
/// schedules say. Read from `[webhooks]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndpointPolicy {
    /// Attempts in flight to a healthy endpoint at once; a failing one gets one at a time (a probe).
    pub max_in_flight: u32,
    /// The endpoint's pause after its first failure in a row; it doubles with each further one...
    pub backoff_initial: Duration,
    /// ...up to this.
    pub backoff_max: Duration,
    /// An endpoint whose attempts have all failed for this long is disabled.
    pub disable_after: Duration,
}

impl EndpointPolicy {
    /// `[webhooks] max_in_flight_per_endpoint`, `endpoint_backoff_*` and `disable_after`.
    pub fn from_config(c: &crate::config::WebhooksConfig) -> Result<EndpointPolicy, crate::config::ConfigError> {
        let (backoff_initial, backoff_max, disable_after) = c.endpoint_durations()?;
        Ok(EndpointPolicy { max_in_flight: c.max_in_flight_per_endpoint, backoff_initial, backoff_max, disable_after })
    }
}

/// What a failed attempt does to its endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failing {
    /// None of the endpoint's events is claimed before this.
    pub retry_at: Timestamp,
    /// The endpoint has failed continuously for `disable_after`: disable it.
    pub disable: bool,
}

impl EndpointPolicy {
    /// The slots of an endpoint with `failures` consecutive failures.
    pub fn slots(&self, failures: u32) -> u32 {
        if failures == 0 { self.max_in_flight.max(1) } else { 1 }
    }

    /// After the `failures`-th failure in a row (counting this one), at `now`, of a streak that began at
    /// `failing_since`: pause `backoff_initial * 2^(failures-1)`, capped at `backoff_max`, and never less
    /// than the `Retry-After` the receiver asked for (already capped by the caller).
    pub fn after_failure(&self, failures: u32, failing_since: Timestamp, now: Timestamp, retry_after: Option<Duration>) -> Failing {
        let doublings = failures.saturating_sub(1).min(31);
        let pause = self.backoff_initial.saturating_mul(1u32 << doublings).min(self.backoff_max);
        let pause = pause.max(retry_after.unwrap_or_default());
        let failing_for = Duration::from_millis((now.as_millis() - failing_since.as_millis()).max(0) as u64);
        Failing { retry_at: now + pause, disable: failing_for >= self.disable_after }
    }
}

#[cfg(test)]
mod tests {
    use std::net::IpAddr;

    use super::*;

    #[test]
    fn a_failing_endpoint_backs_off_exponentially_and_is_disabled_after_the_period() {
        let s = Duration::from_secs;
        let p = EndpointPolicy { max_in_flight: 2, backoff_initial: s(1), backoff_max: s(600), disable_after: s(5 * 86_400) };
        let t = |ms: i64| Timestamp::from_millis(ms);
        let at = |f, now| p.after_failure(f, t(0), t(now), None);
        assert_eq!(at(1, 0), Failing { retry_at: t(1_000), disable: false });
        assert_eq!(at(2, 0).retry_at, t(2_000));
        assert_eq!(at(5, 0).retry_at, t(16_000));
        assert_eq!(at(11, 0).retry_at, t(600_000), "capped");
        assert_eq!(at(u32::MAX, 0).retry_at, t(600_000), "no overflow");
        // Retry-After longer than the backoff wins; shorter does not shorten it.
        assert_eq!(p.after_failure(1, t(0), t(0), Some(s(30))).retry_at, t(30_000));
        assert_eq!(p.after_failure(5, t(0), t(0), Some(s(1))).retry_at, t(16_000));
        // Failing continuously for five days, however few attempts that took.
        assert!(!at(3, 5 * 86_400_000 - 1).disable);
        assert!(at(3, 5 * 86_400_000).disable);
        assert_eq!((p.slots(0), p.slots(1), p.slots(9)), (2, 1, 1), "a failing endpoint gets one probe at a time");
    }

    #[test]
    fn webhook_urls_follow_the_policy() {
        let strict = NetworkPolicy::default();
        assert!(WebhookUrl::parse("https://crm.example.com/hook", &strict).is_ok());
        assert!(WebhookUrl::parse("http://crm.example.com/hook", &strict).is_err());
        assert!(WebhookUrl::parse("https://127.0.0.1/hook", &strict).is_err());
        assert!(WebhookUrl::parse("https://10.1.2.3/hook", &strict).is_err());
        assert!(WebhookUrl::parse("https://[::1]/hook", &strict).is_err());
        assert!(WebhookUrl::parse("https://localhost/hook", &strict).is_err());
        let open = NetworkPolicy::private();
        assert!(WebhookUrl::parse("http://127.0.0.1:9000/hook", &open).is_ok());
        // IPv6 forms that embed a private IPv4 address, and site-local, are not public.
        for bad in [
            "https://[::127.0.0.1]/h", "https://[::ffff:0:7f00:1]/h", "https://[::ffff:10.0.0.1]/h", "https://[fec0::1]/h", "https://[2002:7f00:1::]/h",
            "https://[2002:a00:1::1]/h",
        ] {
            assert!(WebhookUrl::parse(bad, &strict).is_err(), "{bad}");
        }
        assert!(WebhookUrl::parse("https://[2002:808:808::1]/h", &strict).is_ok(), "6to4 of a public address");
        // Allowing private networks never allows link-local or metadata addresses.
        for bad in ["http://169.254.169.254/latest", "http://[fd00:ec2::254]/", "http://[fe80::1]/h", "http://[::ffff:169.254.169.254]/"] {
            assert!(WebhookUrl::parse(bad, &open).is_err(), "{bad}");
            let ip: IpAddr = bad.split("//").nth(1).unwrap().split('/').next().unwrap().trim_matches(|c| c == '[' || c == ']').parse().unwrap();
            assert!(!open.allows(ip), "{ip}");
        }
        assert!(open.allows("10.0.0.1".parse().unwrap()));
    }
}
