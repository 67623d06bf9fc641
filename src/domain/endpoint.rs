//! The network rules every outbound request follows (webhooks, the crawler, the answer generator): the
//! check of a URL when it is configured, and the check of each address its host resolves to, repeated at
//! connection time (`crate::net::CheckedResolver`) so DNS rebinding cannot reach the internal network.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use super::{Invalid, invalid};

/// What an operator allows for one kind of outbound endpoint.
#[derive(Debug, Clone, Default)]
pub struct NetworkPolicy {
    pub allow_http: bool,
    pub allow_private_networks: bool,
    /// Link-local or metadata addresses the operator named one by one (an appliance on 169.254.0.0/16):
    /// the only ones of those ranges ever reached, whatever `allow_private_networks` says.
    pub allowed_link_local: Arc<[IpAddr]>,
}

impl NetworkPolicy {
    /// Webhook deliveries (`[webhooks]`).
    pub fn webhooks(c: &crate::config::WebhooksConfig) -> NetworkPolicy {
        NetworkPolicy {
            allow_http: c.allow_http,
            allow_private_networks: c.allow_private_networks,
            allowed_link_local: c.allowed_link_local.iter().copied().collect(),
        }
    }

    /// The crawler (`[crawl]`).
    pub fn crawl(c: &crate::config::CrawlConfig) -> NetworkPolicy {
        NetworkPolicy {
            allow_http: c.allow_http,
            allow_private_networks: c.allow_private_networks,
            allowed_link_local: c.allowed_link_local.iter().copied().collect(),
        }
    }

    /// The answer generator (`[answer]`): the rules webhooks follow, with http allowed exactly where private
    /// networks are (a local model server rarely has a certificate).
    pub fn answer(c: &crate::config::AnswerConfig) -> NetworkPolicy {
        NetworkPolicy {
            allow_http: c.allow_private_networks,
            allow_private_networks: c.allow_private_networks,
            allowed_link_local: c.allowed_link_local.iter().copied().collect(),
        }
    }

    /// Private networks and http allowed, no link-local address named: tests and local tools.
    pub fn private() -> NetworkPolicy {
        NetworkPolicy { allow_http: true, allow_private_networks: true, allowed_link_local: Arc::new([]) }
    }

    /// Whether the operator named this link-local or metadata address (an IPv4-mapped form counts as its
    /// IPv4 address).
    fn names(&self, ip: IpAddr) -> bool {
        self.allowed_link_local.iter().any(|a| a.to_canonical() == ip.to_canonical())
    }
}

/// How the messages of [`check_endpoint`] name the endpoint and the settings that relax its policy.
#[derive(Debug, Clone, Copy)]
pub struct EndpointNames {
    /// "webhook", "crawl", "answer generator": the start of "... URLs must use https".
    pub what: &'static str,
    pub allow_http: &'static str,
    pub allow_private: &'static str,
    pub allowed_link_local: &'static str,
}

impl EndpointNames {
    pub const WEBHOOK: EndpointNames = EndpointNames {
        what: "webhook",
        allow_http: "webhooks.allow_http",
        allow_private: "webhooks.allow_private_networks",
        allowed_link_local: "webhooks.allowed_link_local",
    };
    pub const CRAWL: EndpointNames = EndpointNames {
        what: "crawl",
        allow_http: "crawl.allow_http",
        allow_private: "crawl.allow_private_networks",
        allowed_link_local: "crawl.allowed_link_local",
    };
    pub const ANSWER: EndpointNames = EndpointNames {
        what: "answer endpoint",
        allow_http: "answer.allow_private_networks",
        allow_private: "answer.allow_private_networks",
        allowed_link_local: "answer.allowed_link_local",
    };
}

/// The policy every outbound endpoint follows: https unless http is allowed, no credentials in the URL,
/// no link-local or metadata address unless the operator named it, and no loopback, private or local host
/// unless private networks are allowed. One function, so a tightening applies to all of them.
pub fn check_endpoint(s: &str, policy: &NetworkPolicy, names: EndpointNames) -> Result<url::Url, Invalid> {
    let what = names.what;
    let url = url::Url::parse(s.trim()).map_err(|_| invalid(format!("`{s}` is not a URL")))?;
    match url.scheme() {
        "https" => {}
        "http" if policy.allow_http => {}
        "http" => {
            return Err(invalid(format!("http:// {what} URLs are not allowed; use https (the operator can set {} = true)", names.allow_http)));
        }
        other => return Err(invalid(format!("{what} URLs must use https, not {other}"))),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid(format!("{what} URLs must not carry credentials")));
    }
    let host = url.host().ok_or_else(|| invalid(format!("{what} URLs need a host")))?;
    let literal = match host {
        url::Host::Ipv4(ip) => Some(IpAddr::V4(ip)),
        url::Host::Ipv6(ip) => Some(IpAddr::V6(ip)),
        url::Host::Domain(_) => None,
    };
    if let Some(ip) = literal.filter(|ip| is_link_local_or_metadata(*ip)) {
        if policy.names(ip) {
            return Ok(url);
        }
        return Err(invalid(format!(
            "{ip} is a link-local or cloud metadata address; no {what} URL may point to one unless the operator names it in {}",
            names.allowed_link_local
        )));
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
                "{host} is not a public address; {what} URLs must point to one (the operator can set {} = true)",
                names.allow_private
            )));
        }
    }
    Ok(url)
}

impl NetworkPolicy {
    /// Whether an outbound request may go to `ip`: public addresses always; private and loopback ones when
    /// the operator allows private networks; link-local and metadata addresses only when named in
    /// `allowed_link_local`.
    pub fn allows(&self, ip: IpAddr) -> bool {
        if is_link_local_or_metadata(ip) {
            return self.names(ip);
        }
        self.allow_private_networks || is_public_ip(ip)
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

/// Link-local addresses (169.254.0.0/16, fe80::/10) and where cloud metadata services answer
/// (169.254.169.254, fd00:ec2::254): no outbound request reaches them, even where the operator allows
/// private networks, unless the operator named the address (`NetworkPolicy::allowed_link_local`).
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

/// Checks that every entry of an `*.allowed_link_local` list (`key`) is link-local or metadata: anything
/// else is governed by `allow_private_networks`, and listing it there would suggest otherwise.
pub fn check_link_local(key: &str, list: &[IpAddr]) -> Result<(), Invalid> {
    match list.iter().find(|ip| !is_link_local_or_metadata(**ip)) {
        Some(ip) => Err(Invalid(format!(
            "{key}: {ip} is not a link-local or metadata address (169.254.0.0/16, fe80::/10, fd00:ec2::254); allow_private_networks governs it"
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn private_networks_never_open_link_local_or_metadata_addresses() {
        let open = NetworkPolicy::private();
        for url in [
            "http://169.254.169.254/latest/meta-data", "http://169.254.10.5/", "http://[fe80::1]/", "http://[fd00:ec2::254]/",
            "http://[::ffff:169.254.169.254]/",
        ] {
            let e = check_endpoint(url, &open, EndpointNames::WEBHOOK).unwrap_err();
            assert!(e.0.contains("webhooks.allowed_link_local"), "{url}: {e:?}");
        }
        for a in ["169.254.169.254", "169.254.0.1", "fe80::1", "fd00:ec2::254", "::ffff:169.254.169.254"] {
            assert!(!open.allows(ip(a)), "{a}");
        }
        assert!(open.allows(ip("10.0.0.1")) && open.allows(ip("127.0.0.1")));
    }

    #[test]
    fn a_named_link_local_address_is_allowed_and_only_that_one() {
        let policy = NetworkPolicy { allowed_link_local: Arc::new([ip("169.254.10.5"), ip("fd00:ec2::254")]), ..NetworkPolicy::default() };
        assert!(check_endpoint("https://169.254.10.5/hook", &policy, EndpointNames::CRAWL).is_ok());
        assert!(check_endpoint("https://[fd00:ec2::254]/", &policy, EndpointNames::CRAWL).is_ok());
        assert!(policy.allows(ip("169.254.10.5")) && policy.allows(ip("::ffff:169.254.10.5")) && policy.allows(ip("fd00:ec2::254")));
        let e = check_endpoint("https://169.254.169.254/", &policy, EndpointNames::CRAWL).unwrap_err();
        assert!(e.0.contains("crawl.allowed_link_local"), "{e:?}");
        assert!(!policy.allows(ip("169.254.169.254")) && !policy.allows(ip("fe80::1")));
        // Naming a link-local address opens nothing else: private networks stay refused.
        assert!(!policy.allows(ip("10.0.0.1")));
        assert!(check_endpoint("https://10.0.0.1/", &policy, EndpointNames::CRAWL).is_err());
    }
}
