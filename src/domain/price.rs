//! Price lists and exchange rates as the store keeps them. Conversion and formatting live in
//! `content::money`; the priced payload in `content::pricing`.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::{Currency, Invalid, Slug};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Interval {
    Month,
    Year,
}

impl Interval {
    pub fn as_str(self) -> &'static str {
        match self {
            Interval::Month => "month",
            Interval::Year => "year",
        }
    }

    pub fn parse(s: &str) -> Option<Interval> {
        match s {
            "month" => Some(Interval::Month),
            "year" => Some(Interval::Year),
            _ => None,
        }
    }
}

/// A tier's texts in one language.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TierText {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub features: Vec<String>,
}

/// A validated tier, in the vertical's base currency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriceTier {
    pub id: String,
    pub amount_minor: u64,
    pub interval: Interval,
    pub requests_per_minute: u32,
    pub highlighted: bool,
    /// Keyed by canonical language tag; always holds the vertical's default language.
    pub i18n: BTreeMap<String, TierText>,
}

/// A vertical's whole price list; importing one replaces the previous one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PricingSheet {
    pub vertical: Slug,
    pub currency: Currency,
    pub tiers: Vec<PriceTier>,
}

/// Most significant digits a rate may have, and most digits after its point; with prices capped at
/// [`MAX_AMOUNT_MINOR`] these keep every product far inside `u128`.
const MAX_RATE_DIGITS: usize = 12;
const MAX_RATE_SCALE: u32 = 8;
/// Largest base price accepted, in minor units (100 million major units).
pub const MAX_AMOUNT_MINOR: u64 = 10_000_000_000;

/// A positive exact decimal: `mantissa x 10^-scale`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    mantissa: u64,
    scale: u32,
}

impl Rate {
    /// The digits, without the point.
    pub fn mantissa(self) -> u64 {
        self.mantissa
    }

    /// How many of the digits come after the point.
    pub fn scale(self) -> u32 {
        self.scale
    }

    pub const ONE: Rate = Rate { mantissa: 1, scale: 0 };

    /// Parses `162.5`, `1.0835`, `0.00062`; refuses signs, exponents, zero and more than 12 digits.
    pub fn parse(s: &str) -> Result<Rate, Invalid> {
        let s = s.trim();
        let err =
            || Invalid(format!("`{s}` is not a rate: a positive decimal such as 1.0835 (at most {MAX_RATE_DIGITS} digits, {MAX_RATE_SCALE} after the point)"));
        let (int, frac) = s.split_once('.').unwrap_or((s, ""));
        if int.is_empty() && frac.is_empty() || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
            return Err(err());
        }
        let frac = frac.trim_end_matches('0');
        let digits = format!("{int}{frac}");
        let digits = digits.trim_start_matches('0');
        if digits.is_empty() || digits.len() > MAX_RATE_DIGITS || frac.len() as u32 > MAX_RATE_SCALE {
            return Err(err());
        }
        let mantissa = digits.parse::<u64>().map_err(|_| err())?;
        Ok(Rate { mantissa, scale: frac.len() as u32 })
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = self.mantissa.to_string();
        let scale = self.scale as usize;
        if scale == 0 {
            return f.write_str(&digits);
        }
        let padded = format!("{digits:0>width$}", width = scale + 1);
        let (int, frac) = padded.split_at(padded.len() - scale);
        write!(f, "{int}.{frac}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_exactly() {
        assert_eq!(Rate::parse("162.5").unwrap().to_string(), "162.5");
        assert_eq!(Rate::parse("1.08350").unwrap().to_string(), "1.0835");
        assert_eq!(Rate::parse("0.00062").unwrap().to_string(), "0.00062");
        assert_eq!(Rate::parse("7").unwrap(), Rate { mantissa: 7, scale: 0 });
        for bad in ["0", "-1", "1e5", "", ".", "abc", "1.123456789", "1234567890123"] {
            assert!(Rate::parse(bad).is_err(), "{bad}");
        }
    }
}
