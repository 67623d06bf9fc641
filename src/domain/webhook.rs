//! Webhook targets: the URL policy at the time a URL is set, and the address check delivery repeats
//! after DNS resolution.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

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
        let literal = match host {
            url::Host::Ipv4(ip) => Some(IpAddr::V4(ip)),
            url::Host::Ipv6(ip) => Some(IpAddr::V6(ip)),
            url::Host::Domain(_) => None,
        };
        if let Some(ip) = literal.filter(|ip| is_link_local_or_metadata(*ip)) {
            return Err(invalid(format!("{ip} is a link-local or cloud metadata address; no webhook may point to one")));
        }
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
            if let Some(v4) = embedded_ipv4(v6) {
                return is_public_ip(IpAddr::V4(v4));
            }
            let seg = v6.segments();
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (seg[0] & 0xfe00) == 0xfc00
                || (seg[0] & 0xffc0) == 0xfe80
                || (seg[0] & 0xffc0) == 0xfec0
                || (seg[0] == 0x2001 && seg[1] == 0x0db8)
                || (seg[0] == 0x0064 && seg[1] == 0xff9b))
        }
    }
}

/// The IPv4 address an IPv6 form carries, for the forms that route to it: IPv4-mapped (`::ffff:a.b.c.d`),
/// IPv4-compatible (`::a.b.c.d`, deprecated but still honoured by some stacks), IPv4-translated
/// (`::ffff:0:a.b.c.d`) and 6to4 (`2002:AABB:CCDD::/48`). Each is judged by the address it embeds.
fn embedded_ipv4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = v6.segments();
    let v4 = |hi: u16, lo: u16| Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
    match s {
        [0, 0, 0, 0, 0, 0xffff, hi, lo] => Some(v4(hi, lo)),
        [0, 0, 0, 0, 0, 0, hi, lo] if v6 != Ipv6Addr::UNSPECIFIED && v6 != Ipv6Addr::LOCALHOST => Some(v4(hi, lo)),
        [0, 0, 0, 0, 0xffff, 0, hi, lo] => Some(v4(hi, lo)),
        [0x2002, hi, lo, ..] => Some(v4(hi, lo)),
        _ => None,
    }
}

/// Link-local addresses, where cloud metadata services answer (169.254.169.254, fd00:ec2::254): no webhook
/// reaches them, even where the operator allows private networks.
pub fn is_link_local_or_metadata(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => {
            if let Some(v4) = embedded_ipv4(v6) {
                return v4.is_link_local();
            }
            (v6.segments()[0] & 0xffc0) == 0xfe80 || v6 == Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254)
        }
    }
}

impl WebhookPolicy {
    /// Whether a webhook may be delivered to `ip`: public addresses always; private and loopback ones when
    /// the operator allows private networks; link-local and metadata addresses never.
    pub fn allows(&self, ip: IpAddr) -> bool {
        !is_link_local_or_metadata(ip) && (self.allow_private_networks || is_public_ip(ip))
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
        // IPv6 forms that embed a private IPv4 address, and site-local, are not public.
        for bad in [
            "https://[::127.0.0.1]/h",
            "https://[::ffff:0:7f00:1]/h",
            "https://[::ffff:10.0.0.1]/h",
            "https://[fec0::1]/h",
            "https://[2002:7f00:1::]/h",
            "https://[2002:a00:1::1]/h",
        ] {
            assert!(WebhookUrl::parse(bad, strict).is_err(), "{bad}");
        }
        assert!(WebhookUrl::parse("https://[2002:808:808::1]/h", strict).is_ok(), "6to4 of a public address");
        // Allowing private networks never allows link-local or metadata addresses.
        for bad in ["http://169.254.169.254/latest", "http://[fd00:ec2::254]/", "http://[fe80::1]/h", "http://[::ffff:169.254.169.254]/"] {
            assert!(WebhookUrl::parse(bad, open).is_err(), "{bad}");
            let ip: IpAddr = bad.split("//").nth(1).unwrap().split('/').next().unwrap().trim_matches(|c| c == '[' || c == ']').parse().unwrap();
            assert!(!open.allows(ip), "{ip}");
        }
        assert!(open.allows("10.0.0.1".parse().unwrap()));
    }
}
