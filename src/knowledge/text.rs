//! Plain-text helpers shared by chunking and answer composition: whitespace normalization, sentence
//! splitting and a token estimate. Search terms are `analysis`'s.

/// The character an XML reference (`&#233;`, `&amp;`) stands for: a character reference, or one of XML's
/// five predefined entities; `None` for any other (a DTD's own entities are not read).
pub fn xml_reference(r: &quick_xml::events::BytesRef) -> Option<char> {
    match r.resolve_char_ref() {
        Ok(Some(c)) => Some(c),
        _ => match &**r {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => None,
        },
    }
}

/// Collapses every run of whitespace (newlines included) into one space and trims.
pub fn squash(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// An estimate of the word pieces the model's tokenizer makes of `s`: words plus punctuation, with
/// long words counted as several pieces. It errs high, so a chunk under the bound fits the model.
pub fn estimate_tokens(s: &str) -> usize {
    s.split_whitespace()
        .map(|w| {
            let alnum = w.chars().filter(|c| c.is_alphanumeric()).count();
            let punct = w.chars().count() - alnum;
            1 + alnum / 7 + punct
        })
        .sum()
}

/// Words that end a sentence with a period without ending the sentence.
const ABBREVIATIONS: &[&str] = &["e.g", "i.e", "etc", "vs", "dr", "mr", "mrs", "ms", "st", "no", "nr", "z.b", "bzw", "ca", "inc", "approx", "fig", "al"];

/// Ideographic full stop, full-width exclamation and question marks: they end a sentence with no space
/// after them (Chinese, Japanese).
const WIDE_ENDS: [char; 3] = ['。', '！', '？'];

/// Splits a passage into sentences: at `.`, `!` or `?` (or a closing quote or bracket after them)
/// followed by whitespace and not after a known abbreviation or a single letter, and after `。`, `！`
/// or `？`.
pub fn sentences(text: &str) -> Vec<String> {
    let text = squash(text);
    let mut out = Vec::new();
    let mut push = |piece: &str| {
        let piece = piece.trim();
        if !piece.is_empty() {
            out.push(piece.to_owned());
        }
    };
    let mut start = 0;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if let Some(wide) = WIDE_ENDS.iter().find(|c| b >= 0xC0 && text[i..].starts_with(**c)) {
            let end = i + wide.len_utf8();
            push(&text[start..end]);
            start = end;
            i = end;
            continue;
        }
        if matches!(b, b'.' | b'!' | b'?') {
            let mut end = i + 1;
            while end < bytes.len() && matches!(bytes[end], b'"' | b'\'' | b')' | b']' | b'.' | b'!' | b'?') {
                end += 1;
            }
            if end >= bytes.len() || bytes[end] == b' ' {
                let before = &text[start..i];
                let last = before.rsplit(' ').next().unwrap_or("").trim_start_matches(['(', '"', '\'']).to_lowercase();
                let abbreviation =
                    b == b'.' && (ABBREVIATIONS.contains(&last.as_str()) || (last.chars().count() == 1 && last.chars().all(char::is_alphabetic)));
                let next_starts_sentence = text[end..].trim_start().chars().next().is_none_or(|c| !c.is_lowercase());
                if !abbreviation && next_starts_sentence {
                    push(&text[start..end]);
                    start = end;
                }
            }
            i = end;
            continue;
        }
        i += 1;
    }
    push(&text[start..]);
    out
}

#[cfg(test)]
mod tests {
    use crate::knowledge::text::*;

    #[test]
    fn splits_sentences_but_not_abbreviations() {
        let s = sentences("We open at 8 a.m. on weekdays. Call Dr. Weber, e.g. for emergencies! Is it free? Yes.");
        assert_eq!(s, vec!["We open at 8 a.m. on weekdays.", "Call Dr. Weber, e.g. for emergencies!", "Is it free?", "Yes."]);
        assert_eq!(sentences("No final stop"), vec!["No final stop"]);
        assert_eq!(sentences("Price is 3.50 euros. Next."), vec!["Price is 3.50 euros.", "Next."]);
        assert_eq!(sentences("周一至周五营业。周六上午营业！"), vec!["周一至周五营业。", "周六上午营业！"]);
    }

    #[test]
    fn token_estimate_is_not_below_word_count() {
        assert!(estimate_tokens("one two three") >= 3);
        assert!(estimate_tokens("pneumonoultramicroscopic") > 1);
    }
}
