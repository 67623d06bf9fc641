//! The demo vertical `dental` (English and German landing pages, a price list and rates), compiled into
//! the binary so `sitebot demo` works from an installed copy with no asset directory.

use super::{ContentError, Source, import_landing, import_pricing, import_rates};
use crate::domain::Timestamp;
use crate::domain::{Currency, Lang, Slug};
use crate::store::Store;
use crate::store::content::NewVertical;

/// Set once the demo content is loaded, so later runs leave the operator's edits alone.
const LOADED_KEY: &str = "demo_content_loaded";

pub const FILES: &[(&str, &str)] = &[
    ("assets/demo/landing-en.yaml", include_str!("../../assets/demo/landing-en.yaml")),
    ("assets/demo/landing-de.yaml", include_str!("../../assets/demo/landing-de.yaml")),
];
pub const PRICING: (&str, &str) = ("assets/demo/pricing.json", include_str!("../../assets/demo/pricing.json"));
pub const RATES: (&str, &str) = ("assets/demo/rates.yaml", include_str!("../../assets/demo/rates.yaml"));

/// The vertical the demo files are written for.
pub fn vertical() -> NewVertical {
    NewVertical {
        slug: Slug::vertical("dental").expect("valid slug"),
        name: "Dental practices".into(),
        default_lang: Lang::parse("en").expect("valid tag"),
        default_currency: Currency::parse("EUR").expect("known currency"),
        langs: vec![Lang::parse("en").expect("valid tag"), Lang::parse("de").expect("valid tag")],
    }
}

/// Loads the demo content unless it was loaded before; true when it loaded now. An existing `dental`
/// vertical is kept as it is. Rates are only imported when `reference` is the EUR they are quoted in.
pub fn load(store: &Store, reference: Currency) -> Result<bool, ContentError> {
    if store.meta(LOADED_KEY).get()?.is_some() {
        return Ok(false);
    }
    store.content().ensure_vertical(vertical())?;
    let pages: Vec<Source> = FILES.iter().map(|(n, t)| Source::new(*n, *t)).collect();
    import_landing(store, &pages, false)?;
    import_pricing(store, &Source::new(PRICING.0, PRICING.1))?;
    if reference.code() == "EUR" {
        import_rates(store, reference, &Source::new(RATES.0, RATES.1))?;
    }
    store.meta(LOADED_KEY).set(&Timestamp::now().rfc3339())?;
    Ok(true)
}
