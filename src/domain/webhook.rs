//! Webhook targets: the URL policy at the time a URL is set, and the address check delivery repeats
//! after DNS resolution.

use std::net::IpAddr;

use serde::Serialize;

use super::{Invalid, invalid};

/// What an operator allows for webhook targets.
#[derive(Debug, Clone, Copy, Default)]
pub struct WebhookPolicy {
    pub allow_http: bool,
    pub allow_private_networks: bool,
}

/// A CRM webhook URL that passed the operator's policy when it was set. Delivery checks the resolved
/// address again, since DNS can change after this.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct WebhookUrl(String);

impl WebhookUrl {
    pub fn parse(s: &str, policy: WebhookPolicy) -> Result<Self, Invalid> {
        let url = url::Url::parse(s.trim()).map_err(|_| invalid(format!("`{s}` is not a URL")))?;
        match url.scheme() {
            "https" => {}
            "http" if policy.allow_http => {}
            "http" => return Err(invalid("http:// webhook URLs are not allowed; use https (the operator can set webhooks.allow_http = true)")),
            other => return Err(invalid(format!("webhook URLs must use https, not {other}"))),
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(invalid("webhook URLs must not carry credentials; the payload is signed instead"));
        }
        let host = url.host().ok_or_else(|| invalid("webhook URLs need a host"))?;
        if !policy.allow_private_networks {
            let refused = match host {
                url::Host::Ipv4(ip) => !is_public_ip(IpAddr::V4(ip)),
                url::Host::Ipv6(ip) => !is_public_ip(IpAddr::V6(ip)),
                url::Host::Domain(d) => {
                    let d = d.trim_end_matches('.').to_ascii_lowercase();
                    d == "localhost" || d.ends_with(".localhost") || d.ends_with(".local") || d.ends_with(".internal")
                }
            };
            if refused {
                return Err(invalid(format!(
                    "{host} is not a public address; webhook URLs must point to one (the operator can set webhooks.allow_private_networks = true)"
                )));
            }
        }
        Ok(Self(url.to_string()))
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

/// True for globally routable addresses; false for loopback, private, link-local, CGNAT, multicast,
/// documentation and unspecified ranges (and their IPv4-mapped IPv6 forms).
pub fn is_public_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            !(v4.is_private()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_broadcast()
                || v4.is_documentation()
                || v4.is_unspecified()
                || v4.is_multicast()
                || o[0] == 0
                || (o[0] == 100 && (64..128).contains(&o[1]))
                || (o[0] == 192 && o[1] == 0 && o[2] == 0)
                || (o[0] == 198 && (18..20).contains(&o[1]))
                || o[0] >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public_ip(IpAddr::V4(v4));
            }
            let seg = v6.segments();
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (seg[0] & 0xfe00) == 0xfc00
                || (seg[0] & 0xffc0) == 0xfe80
                || (seg[0] == 0x2001 && seg[1] == 0x0db8)
                || (seg[0] == 0x0064 && seg[1] == 0xff9b))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webhook_urls_follow_the_policy() {
        let strict = WebhookPolicy::default();
        assert!(WebhookUrl::parse("https://crm.example.com/hook", strict).is_ok());
        assert!(WebhookUrl::parse("http://crm.example.com/hook", strict).is_err());
        assert!(WebhookUrl::parse("https://127.0.0.1/hook", strict).is_err());
        assert!(WebhookUrl::parse("https://10.1.2.3/hook", strict).is_err());
        assert!(WebhookUrl::parse("https://[::1]/hook", strict).is_err());
        assert!(WebhookUrl::parse("https://localhost/hook", strict).is_err());
        let open = WebhookPolicy { allow_http: true, allow_private_networks: true };
        assert!(WebhookUrl::parse("http://127.0.0.1:9000/hook", open).is_ok());
    }
}
