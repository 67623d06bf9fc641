//! Webhook targets: the URL policy at the time a URL is set, and the address check delivery repeats
//! after DNS resolution.

use serde::Serialize;

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

#[cfg(test)]
mod tests {
    use std::net::IpAddr;

    use super::*;

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
            "https://[::127.0.0.1]/h",
            "https://[::ffff:0:7f00:1]/h",
            "https://[::ffff:10.0.0.1]/h",
            "https://[fec0::1]/h",
            "https://[2002:7f00:1::]/h",
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
