//! Pricing a vertical's tiers for one request: language, currency, conversion and formatting.

use super::language::negotiate;
use super::money::{self, Rate};
use super::pricing::{Price, PricedTier, PricingPayload};
use crate::domain::{Currency, Lang};
use crate::store::content::Vertical;
use crate::store::pricing::StoredSheet;

/// Why a request cannot be priced; each maps to a 422 naming its parameter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuoteError {
    #[error("`{wanted}` is not offered; this vertical offers {offered}")]
    LangNotOffered { wanted: String, offered: String },
    #[error("no exchange rate for {0} against the reference currency {1}; the operator sets one with `sitebot rates set {0} RATE`")]
    NoRate(Currency, Currency),
    #[error("the price does not fit in {0}")]
    Overflow(Currency),
}

/// The language of a pricing response: `?lang=` (which must be offered, or share its primary subtag
/// with an offered one), else the best `Accept-Language` match, else the vertical's default.
pub fn choose_lang(vertical: &Vertical, query: Option<&Lang>, accept: Option<&str>) -> Result<Lang, QuoteError> {
    if let Some(q) = query {
        return negotiate(q.as_str(), &vertical.langs).ok_or_else(|| QuoteError::LangNotOffered { wanted: q.to_string(), offered: vertical.langs_list() });
    }
    Ok(accept.and_then(|h| negotiate(h, &vertical.langs)).unwrap_or_else(|| vertical.default_lang.clone()))
}

/// Prices every tier of `sheet` in `target`, given the rates (against `reference`) of the sheet's base
/// currency and of the target; a missing rate is only an error when a conversion needs it.
pub fn quote(
    vertical: &Vertical,
    sheet: &StoredSheet,
    lang: &Lang,
    target: Currency,
    base_rate: Option<Rate>,
    target_rate: Option<Rate>,
    reference: Currency,
) -> Result<PricingPayload, QuoteError> {
    let (from_rate, to_rate) = if sheet.currency == target {
        (Rate::ONE, Rate::ONE)
    } else {
        (base_rate.ok_or(QuoteError::NoRate(sheet.currency, reference))?, target_rate.ok_or(QuoteError::NoRate(target, reference))?)
    };
    let mut tiers = Vec::with_capacity(sheet.tiers.len());
    for t in &sheet.tiers {
        let text = t.i18n.get(lang.as_str()).or_else(|| t.i18n.get(vertical.default_lang.as_str())).or_else(|| t.i18n.values().next());
        let amount = money::convert(t.amount_minor, sheet.currency, from_rate, target, to_rate).ok_or(QuoteError::Overflow(target))?;
        tiers.push(PricedTier {
            id: t.id.clone(),
            name: text.map(|x| x.name.clone()).unwrap_or_else(|| t.id.clone()),
            description: text.map(|x| x.description.clone()).unwrap_or_default(),
            price: Price { amount_minor: amount, currency: target.code().to_owned(), interval: t.interval, formatted: money::format(amount, target, lang) },
            requests_per_minute: t.requests_per_minute,
            features: text.map(|x| x.features.clone()).unwrap_or_default(),
            highlighted: t.highlighted,
        });
    }
    Ok(PricingPayload { vertical: vertical.slug.to_string(), lang: lang.to_string(), currency: target.code().to_owned(), tiers })
}
