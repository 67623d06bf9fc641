//! Tenants: the site id and the service tier.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::{Invalid, invalid};

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
}
