//! How an answer is made.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{Invalid, invalid};

/// `extractive`: sentences quoted from the sources. `generative`: sentences written by the operator's
/// language model, each shown only when the passages it cites support it. As a site setting,
/// `generative` means "when the operator has configured a generator"; as a response's `mode`, it says
/// which one answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum AnswerMode {
    Generative,
    Extractive,
}

impl AnswerMode {
    pub fn as_str(self) -> &'static str {
        match self {
            AnswerMode::Generative => "generative",
            AnswerMode::Extractive => "extractive",
        }
    }

    pub fn parse(s: &str) -> Result<Self, Invalid> {
        match s {
            "generative" => Ok(AnswerMode::Generative),
            "extractive" => Ok(AnswerMode::Extractive),
            other => Err(invalid(format!("`{other}` is not an answer mode (generative or extractive)"))),
        }
    }
}

impl fmt::Display for AnswerMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
