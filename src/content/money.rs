//! Exchange rates, conversion and localized price strings.
//!
//! Rates are exact decimals, never floats: a rate of `162.5` is kept as 1625 x 10^-1, and conversion is
//! integer arithmetic on minor units with one rounding step at the end (half up), so the same inputs
//! give the same cents on every machine. A rate says how many units of a currency one unit of the
//! reference currency (`pricing.reference_currency`) is worth; a price converts base -> reference ->
//! target in one fraction.

use crate::domain::{Currency, Lang};
pub use crate::domain::{MAX_AMOUNT_MINOR, Rate};

/// Converts `amount_minor` of `from` (worth `from_rate` per reference unit) into minor units of `to`
/// (worth `to_rate`), rounding half up to the target's minor unit. `None` on overflow, which the caps on
/// rates and amounts rule out.
pub fn convert(amount_minor: u64, from: Currency, from_rate: Rate, to: Currency, to_rate: Rate) -> Option<u64> {
    if from == to {
        return Some(amount_minor);
    }
    let pow = |e: u32| 10u128.checked_pow(e);
    // amount / 10^mu_from / from_rate * to_rate * 10^mu_to, as one fraction.
    let num =
        (amount_minor as u128).checked_mul(to_rate.mantissa() as u128)?.checked_mul(pow(from_rate.scale())?)?.checked_mul(pow(to.minor_units() as u32)?)?;
    let den = (from_rate.mantissa() as u128).checked_mul(pow(to_rate.scale())?)?.checked_mul(pow(from.minor_units() as u32)?)?;
    let rounded = num.checked_add(den / 2)? / den;
    u64::try_from(rounded).ok()
}

/// A currency's symbol where it is unambiguous in common use; other currencies show their code.
fn symbol(code: &str) -> Option<&'static str> {
    Some(match code {
        "EUR" => "€",
        "USD" => "$",
        "GBP" => "£",
        "JPY" => "¥",
        "INR" => "₹",
        "KRW" => "₩",
        "CNY" => "CN¥",
        "AUD" => "A$",
        "CAD" => "CA$",
        "NZD" => "NZ$",
        "HKD" => "HK$",
        "BRL" => "R$",
        "MXN" => "MX$",
        "ILS" => "₪",
        "VND" => "₫",
        "PHP" => "₱",
        "UAH" => "₴",
        "TRY" => "₺",
        "PLN" => "zł",
        _ => return None,
    })
}

/// How a language writes amounts: separators, and whether the symbol goes before or after.
struct Style {
    group: &'static str,
    decimal: char,
    symbol_first: bool,
}

fn style(lang: &Lang) -> Style {
    match lang.primary() {
        "de" if lang.as_str() == "de-CH" => Style { group: "’", decimal: '.', symbol_first: true },
        "de" | "es" | "it" | "pt" | "da" | "ro" | "tr" | "id" => Style { group: ".", decimal: ',', symbol_first: false },
        "nl" => Style { group: ".", decimal: ',', symbol_first: true },
        // A narrow no-break space groups digits in French, Swedish, Norwegian, Finnish, Czech, Polish.
        "fr" | "sv" | "nb" | "no" | "fi" | "cs" | "pl" | "sk" => Style { group: "\u{202f}", decimal: ',', symbol_first: false },
        _ => Style { group: ",", decimal: '.', symbol_first: true },
    }
}

/// `€29.00` (en), `29,00 €` (de), `¥4,713` (en, JPY), `CHF 1,234.50` (en, no symbol), `29,00 CHF` (de).
pub fn format(amount_minor: u64, currency: Currency, lang: &Lang) -> String {
    let st = style(lang);
    let mu = currency.minor_units() as u32;
    let unit = 10u64.pow(mu);
    let whole = (amount_minor / unit).to_string();
    let mut number = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            number.push_str(st.group);
        }
        number.push(c);
    }
    if mu > 0 {
        number.push(st.decimal);
        number.push_str(&format!("{:0width$}", amount_minor % unit, width = mu as usize));
    }
    match (symbol(currency.code()), st.symbol_first) {
        (Some(sym), true) if lang.primary() != "nl" => format!("{sym}{number}"),
        (Some(sym), true) => format!("{sym}\u{a0}{number}"),
        (None, true) => format!("{}\u{a0}{number}", currency.code()),
        (sym, false) => format!("{number}\u{a0}{}", sym.unwrap_or(currency.code())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cur(c: &str) -> Currency {
        Currency::parse(c).unwrap()
    }
    fn lang(l: &str) -> Lang {
        Lang::parse(l).unwrap()
    }

    #[test]
    fn conversion_goes_through_the_reference_and_rounds_half_up() {
        // 29.00 EUR (the reference) at 162.5 JPY per EUR: 4712.5 yen rounds up to 4713.
        assert_eq!(convert(2900, cur("EUR"), Rate::ONE, cur("JPY"), Rate::parse("162.5").unwrap()), Some(4713));
        assert_eq!(convert(2900, cur("EUR"), Rate::ONE, cur("USD"), Rate::parse("1.08").unwrap()), Some(3132));
        // USD base to GBP through EUR: 10.00 USD / 1.25 * 0.85 = 6.80 GBP.
        assert_eq!(convert(1000, cur("USD"), Rate::parse("1.25").unwrap(), cur("GBP"), Rate::parse("0.85").unwrap()), Some(680));
        // JPY base (no minor unit) to EUR.
        assert_eq!(convert(4713, cur("JPY"), Rate::parse("162.5").unwrap(), cur("EUR"), Rate::ONE), Some(2900));
        // KWD has three decimals.
        assert_eq!(convert(100, cur("EUR"), Rate::ONE, cur("KWD"), Rate::parse("0.3312").unwrap()), Some(331));
        // The extremes the caps allow do not overflow the arithmetic; a result beyond u64 is refused.
        assert_eq!(convert(MAX_AMOUNT_MINOR, cur("EUR"), Rate::ONE, cur("JPY"), Rate::parse("999999").unwrap()), Some(99_999_900_000_000));
        assert_eq!(convert(MAX_AMOUNT_MINOR, cur("EUR"), Rate::parse("0.00000001").unwrap(), cur("KWD"), Rate::parse("999999999999").unwrap()), None);
    }

    #[test]
    fn formatting_follows_the_language() {
        assert_eq!(format(2900, cur("EUR"), &lang("en")), "€29.00");
        assert_eq!(format(2900, cur("EUR"), &lang("de")), "29,00\u{a0}€");
        assert_eq!(format(123456, cur("EUR"), &lang("de")), "1.234,56\u{a0}€");
        assert_eq!(format(4713, cur("JPY"), &lang("en")), "¥4,713");
        assert_eq!(format(4713, cur("JPY"), &lang("de")), "4.713\u{a0}¥");
        assert_eq!(format(123450, cur("CHF"), &lang("en")), "CHF\u{a0}1,234.50");
        assert_eq!(format(2900, cur("CHF"), &lang("de")), "29,00\u{a0}CHF");
        assert_eq!(format(123456789, cur("USD"), &lang("en-US")), "$1,234,567.89");
        assert_eq!(format(2900, cur("EUR"), &lang("fr")), "29,00\u{a0}€");
        assert_eq!(format(5, cur("EUR"), &lang("en")), "€0.05");
        assert_eq!(format(1500, cur("KWD"), &lang("en")), "KWD\u{a0}1.500");
    }
}
