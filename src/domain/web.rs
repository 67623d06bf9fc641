//! Slugs, browser origins and e-mail addresses.

use std::fmt;

use serde::Serialize;

use super::{Invalid, invalid};

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

/// Visitors write these fields: a leading `=`, `+`, `-`, `@`, tab or CR would run as a formula when the
/// CSV is opened in a spreadsheet (CSV injection), so such a value is prefixed with `'` (OWASP advice).
pub fn spreadsheet_safe(v: &str) -> String {
    match v.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{v}"),
        _ => v.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
