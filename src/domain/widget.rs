//! The widget's settings a site chooses: its colour and where it sits on the page.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::{Invalid, invalid};

/// `#rrggbb`, kept lower-case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct HexColor(String);

impl HexColor {
    pub fn parse(s: &str) -> Result<Self, Invalid> {
        let s = s.trim();
        let hex = s.strip_prefix('#').unwrap_or(s);
        if hex.len() != 6 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(invalid(format!("`{s}` is not a colour: write it as #rrggbb")));
        }
        Ok(Self(format!("#{}", hex.to_ascii_lowercase())))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for HexColor {
    type Err = Invalid;
    fn from_str(s: &str) -> Result<Self, Invalid> {
        Self::parse(s)
    }
}

/// Which bottom corner the launcher sits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum WidgetPosition {
    BottomRight,
    BottomLeft,
}

impl WidgetPosition {
    pub fn as_str(self) -> &'static str {
        match self {
            WidgetPosition::BottomRight => "bottom-right",
            WidgetPosition::BottomLeft => "bottom-left",
        }
    }

    pub fn parse(s: &str) -> Result<Self, Invalid> {
        match s {
            "bottom-right" => Ok(WidgetPosition::BottomRight),
            "bottom-left" => Ok(WidgetPosition::BottomLeft),
            other => Err(invalid(format!("`{other}` is not a widget position (bottom-right or bottom-left)"))),
        }
    }
}

impl fmt::Display for WidgetPosition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_are_six_hex_digits() {
        assert_eq!(HexColor::parse("#0B5FFF").unwrap().as_str(), "#0b5fff");
        assert_eq!(HexColor::parse("0b5fff").unwrap().as_str(), "#0b5fff");
        for bad in ["#fff", "blue", "#0b5fffx", "url(x)"] {
            assert!(HexColor::parse(bad).is_err(), "{bad}");
        }
    }
}
