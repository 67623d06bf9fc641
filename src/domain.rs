//! Values parsed once at the boundary (HTTP headers, JSON bodies, CLI flags) and trusted after.
//!
//! Every constructor validates; there is no way to build one of these from unchecked text except through
//! `parse`, so a function that takes a `SiteId` or a `Lang` never re-validates it.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Why a value was refused, worded for the person who typed it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

fn invalid(msg: impl Into<String>) -> Invalid {
    Invalid(msg.into())
}

/// A site (tenant) identifier: a GUID, kept in canonical lower-case hyphenated form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SiteId(uuid::Uuid);

impl SiteId {
    pub fn new_random() -> Self {
        Self(uuid::Uuid::new_v4())
    }

    /// Accepts the 36-character hyphenated form only, in either case.
    pub fn parse(s: &str) -> Result<Self, Invalid> {
        let s = s.trim();
        if s.len() != 36 {
            return Err(invalid("a site id is a GUID such as 3f2b6c1e-8d4a-4f7e-9b1a-2c3d4e5f6a7b"));
        }
        uuid::Uuid::try_parse(s).map(Self).map_err(|_| invalid("a site id is a GUID such as 3f2b6c1e-8d4a-4f7e-9b1a-2c3d4e5f6a7b"))
    }

    pub fn as_uuid(&self) -> uuid::Uuid {
        self.0
    }
}

impl fmt::Display for SiteId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.hyphenated().fmt(f)
    }
}

impl FromStr for SiteId {
    type Err = Invalid;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl Serialize for SiteId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl rusqlite::ToSql for SiteId {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(rusqlite::types::ToSqlOutput::from(self.to_string()))
    }
}

impl rusqlite::types::FromSql for SiteId {
    fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        let s = value.as_str()?;
        SiteId::parse(s).map_err(|e| rusqlite::types::FromSqlError::Other(Box::new(e)))
    }
}

/// A site's service tier. It sets the request budget and whether a bearer token exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    Starter,
    Pro,
    Enterprise,
}

impl Tier {
    /// Sustained requests a minute; the bucket holds twice this.
    pub fn per_minute(self) -> u32 {
        match self {
            Tier::Starter => 60,
            Tier::Pro => 600,
            Tier::Enterprise => 6000,
        }
    }

    /// Pro and Enterprise sites get a bearer token for server-to-server calls.
    pub fn has_bearer_token(self) -> bool {
        !matches!(self, Tier::Starter)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Starter => "starter",
            Tier::Pro => "pro",
            Tier::Enterprise => "enterprise",
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Tier {
    type Err = Invalid;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "starter" => Ok(Tier::Starter),
            "pro" => Ok(Tier::Pro),
            "enterprise" => Ok(Tier::Enterprise),
            _ => Err(invalid("tier is one of starter, pro, enterprise")),
        }
    }
}

/// A BCP 47 language tag, canonically cased (`en`, `de-CH`, `zh-Hant-TW`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Lang(String);

impl Lang {
    pub fn parse(s: &str) -> Result<Self, Invalid> {
        let s = s.trim();
        let err = || invalid(format!("`{s}` is not a BCP 47 language tag such as en or de-CH"));
        if s.is_empty() || s.len() > 35 {
            return Err(err());
        }
        let mut out = String::with_capacity(s.len());
        for (i, part) in s.split(['-', '_']).enumerate() {
            let ok = if i == 0 {
                (2..=3).contains(&part.len()) && part.bytes().all(|b| b.is_ascii_alphabetic())
            } else {
                (1..=8).contains(&part.len()) && part.bytes().all(|b| b.is_ascii_alphanumeric())
            };
            if !ok {
                return Err(err());
            }
            if i > 0 {
                out.push('-');
            }
            match (i, part.len()) {
                (0, _) => out.push_str(&part.to_ascii_lowercase()),
                (_, 2) if part.bytes().all(|b| b.is_ascii_alphabetic()) => out.push_str(&part.to_ascii_uppercase()),
                (_, 4) if part.bytes().all(|b| b.is_ascii_alphabetic()) => {
                    out.push_str(&part[..1].to_ascii_uppercase());
                    out.push_str(&part[1..].to_ascii_lowercase());
                }
                _ => out.push_str(&part.to_ascii_lowercase()),
            }
        }
        Ok(Self(out))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The primary language subtag: `de` for `de-CH`.
    pub fn primary(&self) -> &str {
        self.0.split('-').next().unwrap_or(&self.0)
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for Lang {
    type Err = Invalid;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl Serialize for Lang {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

/// An ISO 4217 currency code with its number of minor units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Currency {
    code: &'static str,
    minor_units: u8,
}

/// Active ISO 4217 codes and their minor units (the currencies an operator can price in).
const CURRENCIES: &[(&str, u8)] = &[
    ("AED", 2),
    ("ARS", 2),
    ("AUD", 2),
    ("BDT", 2),
    ("BGN", 2),
    ("BHD", 3),
    ("BRL", 2),
    ("CAD", 2),
    ("CHF", 2),
    ("CLP", 0),
    ("CNY", 2),
    ("COP", 2),
    ("CZK", 2),
    ("DKK", 2),
    ("EGP", 2),
    ("EUR", 2),
    ("GBP", 2),
    ("HKD", 2),
    ("HUF", 2),
    ("IDR", 2),
    ("ILS", 2),
    ("INR", 2),
    ("ISK", 0),
    ("JOD", 3),
    ("JPY", 0),
    ("KES", 2),
    ("KRW", 0),
    ("KWD", 3),
    ("MAD", 2),
    ("MXN", 2),
    ("MYR", 2),
    ("NGN", 2),
    ("NOK", 2),
    ("NZD", 2),
    ("OMR", 3),
    ("PEN", 2),
    ("PHP", 2),
    ("PKR", 2),
    ("PLN", 2),
    ("QAR", 2),
    ("RON", 2),
    ("RSD", 2),
    ("SAR", 2),
    ("SEK", 2),
    ("SGD", 2),
    ("THB", 2),
    ("TND", 3),
    ("TRY", 2),
    ("TWD", 2),
    ("UAH", 2),
    ("UGX", 0),
    ("USD", 2),
    ("VND", 0),
    ("XAF", 0),
    ("XOF", 0),
    ("ZAR", 2),
];

impl Currency {
    pub fn parse(s: &str) -> Result<Self, Invalid> {
        let upper = s.trim().to_ascii_uppercase();
        CURRENCIES
            .iter()
            .find(|(code, _)| *code == upper)
            .map(|&(code, minor_units)| Currency { code, minor_units })
            .ok_or_else(|| invalid(format!("`{}` is not a supported ISO 4217 currency code", s.trim())))
    }

    pub fn code(&self) -> &'static str {
        self.code
    }

    /// Digits after the decimal point: 2 for EUR, 0 for JPY, 3 for KWD.
    pub fn minor_units(&self) -> u8 {
        self.minor_units
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code)
    }
}

impl FromStr for Currency {
    type Err = Invalid;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl Serialize for Currency {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.code)
    }
}

/// A URL-safe slug: `[a-z0-9-]{1,max}`. Verticals use 64, landing pages 128.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct Slug(String);

impl Slug {
    pub fn parse(s: &str, max: usize) -> Result<Self, Invalid> {
        if !s.is_empty() && s.len() <= max && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-') {
            Ok(Self(s.to_owned()))
        } else {
            Err(invalid(format!("`{s}` is not a slug: 1 to {max} characters of a-z, 0-9 and -")))
        }
    }

    /// A vertical's slug (`dental`).
    pub fn vertical(s: &str) -> Result<Self, Invalid> {
        Self::parse(s, 64)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Slug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A browser origin (`https://shop.example.com`, `http://localhost:3000`): scheme, host and port only.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct Origin(String);

impl Origin {
    pub fn parse(s: &str) -> Result<Self, Invalid> {
        let url = url::Url::parse(s.trim()).map_err(|_| invalid(format!("`{s}` is not an origin such as https://example.com")))?;
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return Err(invalid(format!("`{s}` is not an http(s) origin such as https://example.com")));
        }
        if url.path() != "/" || url.query().is_some() || url.fragment().is_some() || !url.username().is_empty() {
            return Err(invalid(format!("`{s}` is not an origin: give scheme, host and port only, no path")));
        }
        // ascii_serialization drops default ports and lower-cases the host, as browsers send it.
        Ok(Self(url.origin().ascii_serialization()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An e-mail address as a form would accept it: one `@`, a dotted domain, at most 254 characters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Email(String);

impl Email {
    pub fn parse(s: &str) -> Result<Self, Invalid> {
        let s = s.trim();
        let err = || invalid("must be a valid e-mail address such as ada@example.com");
        if s.len() > 254 {
            return Err(invalid("must be at most 254 characters"));
        }
        let (local, domain) = s.rsplit_once('@').ok_or_else(err)?;
        let local_ok = !local.is_empty()
            && local.len() <= 64
            && !local.starts_with('.')
            && !local.ends_with('.')
            && !local.contains("..")
            && local.chars().all(|c| c.is_alphanumeric() || "!#$%&'*+/=?^_`{|}~.-".contains(c));
        let labels: Vec<&str> = domain.split('.').collect();
        let domain_ok = labels.len() >= 2
            && labels
                .iter()
                .all(|l| !l.is_empty() && l.len() <= 63 && !l.starts_with('-') && !l.ends_with('-') && l.chars().all(|c| c.is_alphanumeric() || c == '-'));
        if local_ok && domain_ok { Ok(Self(s.to_owned())) } else { Err(err()) }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

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
            "http" => return Err(invalid("webhook URLs must use https (the operator can set webhooks.allow_http = true)")),
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
                return Err(invalid("webhook URLs must point to a public address (the operator can set webhooks.allow_private_networks = true)"));
            }
        }
        Ok(Self(url.to_string()))
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
    fn site_ids_are_canonical_guids() {
        let id = SiteId::parse("3F2B6C1E-8D4A-4F7E-9B1A-2C3D4E5F6A7B").unwrap();
        assert_eq!(id.to_string(), "3f2b6c1e-8d4a-4f7e-9b1a-2c3d4e5f6a7b");
        assert!(SiteId::parse("3f2b6c1e8d4a4f7e9b1a2c3d4e5f6a7b").is_err());
        assert!(SiteId::parse("not-a-guid").is_err());
        assert!(SiteId::parse("").is_err());
    }

    #[test]
    fn language_tags_are_cased_canonically() {
        assert_eq!(Lang::parse("de-ch").unwrap().as_str(), "de-CH");
        assert_eq!(Lang::parse("zh-hant-tw").unwrap().as_str(), "zh-Hant-TW");
        assert_eq!(Lang::parse("EN").unwrap().primary(), "en");
        assert!(Lang::parse("english!").is_err());
        assert!(Lang::parse("e").is_err());
    }

    #[test]
    fn currencies_know_their_minor_units() {
        assert_eq!(Currency::parse("jpy").unwrap().minor_units(), 0);
        assert_eq!(Currency::parse("EUR").unwrap().minor_units(), 2);
        assert!(Currency::parse("XYZ").is_err());
    }

    #[test]
    fn origins_are_normalised_and_paths_refused() {
        assert_eq!(Origin::parse("https://Shop.Example.com:443").unwrap().as_str(), "https://shop.example.com");
        assert_eq!(Origin::parse("http://localhost:3000").unwrap().as_str(), "http://localhost:3000");
        assert!(Origin::parse("https://example.com/path").is_err());
        assert!(Origin::parse("ftp://example.com").is_err());
    }

    #[test]
    fn emails() {
        assert!(Email::parse("ada@example.com").is_ok());
        assert!(Email::parse("ada.lovelace+crm@mail.example.co.uk").is_ok());
        for bad in ["ada", "ada@", "@example.com", "ada@example", "a..b@example.com", "ada@exa mple.com"] {
            assert!(Email::parse(bad).is_err(), "{bad}");
        }
    }

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
