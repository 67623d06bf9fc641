//! Languages (BCP 47) and currencies (ISO 4217).

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use super::{Invalid, invalid};

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
    /// A supported code, in upper or lower case (`EUR`, `eur`; not `Eur`).
    pub fn parse(s: &str) -> Result<Self, Invalid> {
        let t = s.trim();
        let upper = t.to_ascii_uppercase();
        if t != upper && t != t.to_ascii_lowercase() {
            return Err(invalid(format!("`{t}` is not a supported ISO 4217 currency code (write it in upper or lower case)")));
        }
        CURRENCIES
            .iter()
            .find(|(code, _)| *code == upper)
            .map(|&(code, minor_units)| Currency { code, minor_units })
            .ok_or_else(|| invalid(format!("`{}` is not a supported ISO 4217 currency code", s.trim())))
    }

    /// Every supported code, upper case.
    pub fn all() -> impl Iterator<Item = &'static str> {
        CURRENCIES.iter().map(|(code, _)| *code)
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
