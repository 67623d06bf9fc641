//! Pricing sheets (per vertical: tiers with a base price and localized texts), rate files, and the
//! priced payload of `GET /v1/pricing/{vertical}`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::import::{Checker, FieldErrors};
use super::money::{MAX_AMOUNT_MINOR, Rate};
use crate::domain::{Currency, Lang, Slug};
pub use crate::domain::{Interval, PriceTier, PricingSheet, TierText};
use crate::store::content::Vertical;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PricingFile {
    vertical: String,
    currency: String,
    tiers: Vec<TierFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct TierFile {
    id: String,
    price: PriceFile,
    requests_per_minute: u32,
    #[serde(default)]
    highlighted: bool,
    i18n: BTreeMap<String, TierText>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct PriceFile {
    amount_minor: u64,
    interval: Interval,
}

impl PricingFile {
    pub fn validate(self, verticals: &[Vertical], errors: &mut FieldErrors) -> Option<PricingSheet> {
        let mut c = Checker::new("", errors);
        let vertical = c.parse("vertical", Slug::vertical(&self.vertical));
        let known = vertical.as_ref().and_then(|v| verticals.iter().find(|x| x.slug == *v));
        if vertical.is_some() && known.is_none() {
            c.fail("vertical", format!("no vertical `{}`; create it first with `sitebot vertical create`", self.vertical));
        }
        let currency = c.parse("currency", Currency::parse(&self.currency));
        if self.tiers.is_empty() {
            c.fail("tiers", "at least one tier");
        }
        c.count("tiers", self.tiers.len(), 20);
        let mut tiers = Vec::with_capacity(self.tiers.len());
        for (i, t) in self.tiers.into_iter().enumerate() {
            let at = |f: &str| format!("tiers[{i}].{f}");
            if let Some(id) = c.parse(&at("id"), Slug::parse(&t.id, 64))
                && tiers.iter().any(|x: &PriceTier| x.id == id.as_str())
            {
                c.fail(&at("id"), format!("`{id}` appears twice"));
            }
            if t.price.amount_minor > MAX_AMOUNT_MINOR {
                c.fail(&at("price.amountMinor"), format!("at most {MAX_AMOUNT_MINOR}"));
            }
            if t.requests_per_minute == 0 {
                c.fail(&at("requestsPerMinute"), "must be at least 1");
            }
            let mut i18n = BTreeMap::new();
            for (tag, text) in t.i18n {
                let field = format!("tiers[{i}].i18n.{tag}");
                let Some(lang) = c.parse(&field, Lang::parse(&tag)) else { continue };
                if let Some(v) = known
                    && !v.langs.contains(&lang)
                {
                    c.fail(&field, format!("vertical `{}` offers {}", v.slug, v.langs_list()));
                }
                c.text(&format!("{field}.name"), &text.name, 1, 100);
                c.text(&format!("{field}.description"), &text.description, 0, 1000);
                c.count(&format!("{field}.features"), text.features.len(), 50);
                for (j, f) in text.features.iter().enumerate() {
                    c.text(&format!("{field}.features[{j}]"), f, 1, 200);
                }
                i18n.insert(lang.to_string(), text);
            }
            if let Some(v) = known
                && !i18n.contains_key(v.default_lang.as_str())
            {
                c.fail(&at("i18n"), format!("needs the vertical's default language `{}`", v.default_lang));
            }
            tiers.push(PriceTier {
                id: t.id,
                amount_minor: t.price.amount_minor,
                interval: t.price.interval,
                requests_per_minute: t.requests_per_minute,
                highlighted: t.highlighted,
                i18n,
            });
        }
        if !c.ok() {
            return None;
        }
        Some(PricingSheet { vertical: vertical?, currency: currency?, tiers })
    }
}

/// A rates file: `{"base": "EUR", "rates": {"USD": 1.0835, "JPY": "162.5"}}`. `base`, when given, must
/// be the configured reference currency, so rates quoted against another currency are not taken as ours.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RatesFile {
    #[serde(default)]
    base: Option<String>,
    rates: BTreeMap<String, serde_json::Value>,
}

impl RatesFile {
    pub fn validate(self, reference: Currency, errors: &mut FieldErrors) -> Option<Vec<(Currency, Rate)>> {
        let mut c = Checker::new("", errors);
        if let Some(base) = &self.base {
            match Currency::parse(base) {
                Ok(b) if b == reference => {}
                Ok(b) => c.fail("base", format!("rates are quoted against the reference currency {reference} (pricing.reference_currency), not {b}")),
                Err(e) => c.fail("base", e.0),
            }
        }
        let mut out = Vec::new();
        for (code, value) in self.rates {
            let field = format!("rates.{code}");
            let text = match &value {
                serde_json::Value::Number(n) => n.to_string(),
                serde_json::Value::String(s) => s.clone(),
                _ => {
                    c.fail(&field, "must be a number or a decimal string");
                    continue;
                }
            };
            let cur = c.parse(&field, Currency::parse(&code));
            let rate = c.parse(&field, Rate::parse(&text));
            if let (Some(cur), Some(rate)) = (cur, rate) {
                if cur == reference && rate != Rate::ONE {
                    c.fail(&field, format!("{reference} is the reference currency; its rate is 1"));
                }
                out.push((cur, rate));
            }
        }
        c.ok().then_some(out)
    }
}

/// `GET /v1/pricing/{vertical}` (API.md route 6).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PricingPayload {
    pub vertical: String,
    pub lang: String,
    pub currency: String,
    pub tiers: Vec<PricedTier>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PricedTier {
    pub id: String,
    pub name: String,
    pub description: String,
    pub price: Price,
    pub requests_per_minute: u32,
    pub features: Vec<String>,
    pub highlighted: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Price {
    pub amount_minor: u64,
    pub currency: String,
    pub interval: Interval,
    pub formatted: String,
}
