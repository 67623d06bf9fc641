//! Choosing a response language from `Accept-Language` (RFC 9110 section 12.5.4).

use crate::domain::Lang;

/// The most-preferred offered language for an `Accept-Language` value, or `None` when nothing offered
/// is acceptable (the caller then uses its default).
///
/// Ranges are tried by descending q-value (ties keep header order); `q=0` ranges are never chosen. A
/// range matches an offered tag exactly, else by its primary subtag (`de-CH` takes `de`), else an offered
/// regional tag of the same language (`de` takes `de-AT`); `*` takes the first offered language.
pub fn negotiate(header: &str, offered: &[Lang]) -> Option<Lang> {
    let mut ranges: Vec<(u16, usize, &str)> = header
        .split(',')
        .take(32) // a longer list is either hostile or useless; the first ranges decide
        .enumerate()
        .filter_map(|(i, part)| {
            let mut pieces = part.split(';');
            let range = pieces.next()?.trim();
            let mut q = 1000u16;
            for param in pieces {
                let (k, v) = param.split_once('=')?;
                if k.trim().eq_ignore_ascii_case("q") {
                    q = parse_q(v.trim())?;
                }
            }
            (!range.is_empty() && q > 0).then_some((q, i, range))
        })
        .collect();
    ranges.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for (_, _, range) in ranges {
        if range == "*" {
            return offered.first().cloned();
        }
        let Ok(wanted) = Lang::parse(range) else { continue };
        if let Some(l) = offered.iter().find(|o| **o == wanted) {
            return Some(l.clone());
        }
        if let Some(l) = offered.iter().find(|o| o.as_str() == wanted.primary()) {
            return Some(l.clone());
        }
        if let Some(l) = offered.iter().find(|o| o.primary() == wanted.primary()) {
            return Some(l.clone());
        }
    }
    None
}

/// A q-value in thousandths: `1`, `0.5`, `0.125`; `None` when malformed (the range is then ignored).
fn parse_q(v: &str) -> Option<u16> {
    let (int, frac) = v.split_once('.').unwrap_or((v, ""));
    if frac.len() > 3 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let thousandths = format!("{frac:0<3}").parse::<u16>().ok()?;
    match int {
        "0" => Some(thousandths),
        "1" if thousandths == 0 => Some(1000),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn langs(l: &[&str]) -> Vec<Lang> {
        l.iter().map(|s| Lang::parse(s).unwrap()).collect()
    }

    fn pick(header: &str, offered: &[&str]) -> Option<String> {
        negotiate(header, &langs(offered)).map(|l| l.to_string())
    }

    #[test]
    fn q_values_rank_ranges() {
        assert_eq!(pick("de-CH;q=0.9, en;q=0.5", &["en", "de"]).as_deref(), Some("de"));
        assert_eq!(pick("en;q=0.5, de-CH;q=0.9", &["en", "de"]).as_deref(), Some("de"));
        assert_eq!(pick("fr, en;q=0.8", &["en", "de"]).as_deref(), Some("en"));
        assert_eq!(pick("de;q=0, en;q=0.1", &["en", "de"]).as_deref(), Some("en"));
        assert_eq!(pick("en-GB,en;q=0.9", &["de", "en"]).as_deref(), Some("en"));
    }

    #[test]
    fn unmatched_or_malformed_falls_to_the_default() {
        assert_eq!(pick("fr, it;q=0.5", &["en", "de"]), None);
        assert_eq!(pick("", &["en", "de"]), None);
        assert_eq!(pick("de;q=2, @@", &["en", "de"]), None);
        assert_eq!(pick("de;q=0.1234", &["en", "de"]), None);
        assert_eq!(pick("*", &["en", "de"]).as_deref(), Some("en"));
    }

    #[test]
    fn a_bare_language_takes_a_regional_offer() {
        assert_eq!(pick("de", &["en", "de-AT"]).as_deref(), Some("de-AT"));
        assert_eq!(pick("DE-at", &["en", "de-AT"]).as_deref(), Some("de-AT"));
    }
}
