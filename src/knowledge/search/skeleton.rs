//! Names and loanwords across scripts: a question word in Devanagari or Arabic script read as the
//! knowledge's English terms with the same consonant skeleton. Hindi and Arabic questions about English
//! knowledge write its names and many of its terms in their own script ("पैंथर्स डिफ़ेंस", Panthers defense;
//! "टैकल", tackle; "نورمان", Norman), which BM25 cannot meet, and neither Hindi's small dictionary nor Arabic's has most names. A skeleton is a
//! word's consonants in ten classes (p/b, t/d, k/g/q, j/ch, s/z/sh, f/v/w, m, n, l, r), vowels, h and y
//! dropped, repeats collapsed, three classes at least; an English term also has one without an r no vowel
//! follows. The English side is the site's BM25 index's own terms (Snowball stems: "panther", "tackl"),
//! mapped once per index generation (`Bm25Index::skeletons`).
//!
//! Measured (docs/performance.md, "Names and loanwords by their consonants"): offline, Hindi R@1 0.803 ->
//! 0.824 and Arabic beside its dictionary 0.725 -> 0.743; through the route's ranking in process
//! (`examples/xquad --fit --more DIR`, all articles), Hindi right first / answered 0.708/0.799 ->
//! 0.744/0.830, Arabic 0.677/0.824 -> 0.682/0.829, their questions with the article removed answered 0.197
//! -> 0.225 (German's 0.234) and 0.295 -> 0.297, off-topic questions as before (7 of 36, 10 of 45). Thai is
//! left out: its runs have no spaces, and their pieces meet chance words.

use std::collections::HashMap;

/// `classes` with each run of one class kept once.
fn collapse(classes: impl IntoIterator<Item = char>) -> String {
    let mut out = String::new();
    for c in classes {
        if !out.ends_with(c) {
            out.push(c);
        }
    }
    out
}

/// English letter pairs read as one class (or none: "gh" is silent).
const DIGRAPHS: [(char, char, Option<char>); 7] = [
    ('p', 'h', Some('F')),
    ('t', 'h', Some('T')),
    ('s', 'h', Some('S')),
    ('c', 'h', Some('J')),
    ('c', 'k', Some('K')),
    ('g', 'h', None),
    ('q', 'u', Some('K')),
];

/// An English (ASCII) term's skeletons: with every r, and without an r no vowel follows.
pub fn english_keys(term: &str) -> Vec<String> {
    let w: Vec<char> = term.chars().collect();
    if !w.iter().all(|c| c.is_ascii_lowercase()) {
        return Vec::new();
    }
    let vowel = |c: Option<&char>| c.is_some_and(|c| "aeiouy".contains(*c));
    let mut out: Vec<(char, bool)> = Vec::new(); // (class, an r no vowel follows)
    let mut i = 0;
    while i < w.len() {
        let (c, next) = (w[i], w.get(i + 1).copied());
        if let Some(&(_, _, class)) = DIGRAPHS.iter().find(|(a, b, _)| c == *a && next == Some(*b)) {
            out.extend(class.map(|k| (k, false)));
            i += 2;
            continue;
        }
        let class = match c {
            'x' => {
                out.push(('K', false));
                Some('S')
            }
            'c' => Some(if matches!(next, Some('e' | 'i' | 'y')) { 'S' } else { 'K' }),
            'k' | 'g' | 'q' => Some('K'),
            'j' => Some('J'),
            's' | 'z' => Some('S'),
            'f' | 'v' | 'w' => Some('F'),
            'p' | 'b' => Some('B'),
            't' | 'd' => Some('T'),
            'm' => Some('M'),
            'n' => Some('N'),
            'l' => Some('L'),
            'r' => Some('R'),
            _ => None,
        };
        out.extend(class.map(|k| (k, k == 'R' && !vowel(w.get(i + 1)))));
        i += 1;
    }
    let full = collapse(out.iter().map(|(c, _)| *c));
    let soft = collapse(out.iter().filter(|(_, s)| !s).map(|(c, _)| *c));
    let mut keys = vec![full];
    if soft != keys[0] {
        keys.push(soft);
    }
    keys.retain(|k| k.chars().count() >= 3);
    keys
}

/// A question word's skeleton in Arabic or Devanagari script (its article and one-letter prefixes tried
/// off, for Arabic: every form).
pub fn foreign_keys(lang: &str, word: &str) -> Vec<String> {
    match lang {
        "ar" => {
            let mut forms = vec![word];
            for p in ["وال", "فال", "بال", "كال", "لل", "ال", "و", "ب", "ل", "ف", "ك"] {
                if let Some(rest) = word.strip_prefix(p).filter(|r| r.chars().count() >= 3) {
                    forms.push(rest);
                }
            }
            forms.into_iter().map(|f| collapse(f.chars().filter_map(arabic))).filter(|k| k.chars().count() >= 3).collect()
        }
        "hi" => {
            let chars: Vec<char> = word.chars().collect();
            let mut out: Vec<char> = Vec::new();
            for (i, &c) in chars.iter().enumerate() {
                if c == '\u{93c}' {
                    if let (Some(last), Some(prev)) = (out.last_mut(), i.checked_sub(1).map(|j| chars[j])) {
                        *last = match prev {
                            'ज' => 'S',
                            'फ' => 'F',
                            'ड' | 'ढ' => 'R',
                            _ => *last,
                        };
                    }
                    continue;
                }
                if let Some(k) = devanagari(c) {
                    out.push(k);
                }
            }
            let k = collapse(out);
            if k.chars().count() >= 3 { vec![k] } else { Vec::new() }
        }
        _ => Vec::new(),
    }
}

fn arabic(c: char) -> Option<char> {
    Some(match c {
        'ب' | 'پ' => 'B',
        'ت' | 'د' | 'ض' | 'ط' | 'ظ' | 'ث' | 'ذ' => 'T',
        'ج' | 'چ' => 'J',
        'خ' | 'غ' | 'ق' | 'ك' | 'گ' => 'K',
        'ز' | 'س' | 'ش' | 'ص' => 'S',
        'ف' | 'ڤ' => 'F',
        'م' => 'M',
        'ن' => 'N',
        'ل' => 'L',
        'ر' => 'R',
        _ => return None,
    })
}

fn devanagari(c: char) -> Option<char> {
    Some(match c {
        'क' | 'ख' | 'ग' | 'घ' | '\u{958}' | '\u{959}' | '\u{95a}' => 'K',
        'च' | 'छ' | 'ज' | 'झ' => 'J',
        'ट' | 'ठ' | 'ड' | 'ढ' | 'त' | 'थ' | 'द' | 'ध' => 'T',
        'ङ' | 'ञ' | 'ण' | 'न' | 'ं' | 'ँ' => 'N',
        'प' | 'ब' | 'भ' => 'B',
        'फ' | 'व' | '\u{95e}' => 'F',
        'म' => 'M',
        'र' | '\u{95c}' | '\u{95d}' => 'R',
        'ल' => 'L',
        'श' | 'ष' | 'स' | '\u{95b}' => 'S',
        _ => return None,
    })
}

/// Hindi's commonest question and function words, never read by their skeleton ("कितने", how many, is k-t-n
/// like "action" and "garden").
pub const HINDI_COMMON: &[&str] = &[
    "का", "की", "के", "में", "से", "ने", "को", "है", "हैं", "था", "थे", "थी", "क्या", "कौन", "किस", "किसने", "कितने", "कितना", "कितनी", "कब", "कहाँ", "कहां", "क्यों", "कैसे",
    "और", "या", "पर", "एक", "यह", "वह", "इस", "उस", "लिए", "द्वारा", "गया", "गई", "गए", "किया", "किए", "होता", "होती", "सबसे", "अधिक", "बाद", "पहले", "साथ", "तक",
    "नाम", "कौनसा", "किसको", "किसे", "किसका", "किसकी", "किसके", "जब", "जो", "तो", "भी", "नहीं", "कुछ", "अपने", "अपना", "अपनी", "रूप", "वर्ष", "साल", "दौरान", "बारे",
    "कहा", "करता", "करते", "करती", "करने", "हुआ", "हुई", "हुए", "रहा", "रही", "रहे", "सकता", "सकते", "प्रकार", "लगभग",
];

/// The question languages whose words are read by their skeleton.
pub const LANGUAGES: [&str; 2] = ["ar", "hi"];

/// At most this many English terms for one skeleton: more would be chance.
const MAX_TERMS: usize = 3;

/// An index's terms by skeleton.
pub type Map = HashMap<String, Vec<Box<str>>>;

/// The English terms of `map` that `question`'s words in `lang` read as: each word but a Hindi function word
/// ([`HINDI_COMMON`]) and those `skip` says are otherwise read (Arabic words its dictionary translates), by
/// its first skeleton (then without a final s) that at most [`MAX_TERMS`] terms have.
pub fn terms(lang: &str, question: &str, map: &Map, skip: impl Fn(&str) -> bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in question.split(|c: char| c.is_whitespace() || c.is_ascii_punctuation() || matches!(c, '؟' | '،' | '।')) {
        if word.is_empty() || word.is_ascii() || (lang == "hi" && HINDI_COMMON.contains(&word)) || skip(word) {
            continue;
        }
        // A plural's final s is not in the stem ("पैंथर्स" b-n-t-r-s, "panther").
        let keys = foreign_keys(lang, word);
        let stems = keys.iter().filter_map(|k| k.strip_suffix('S').filter(|s| s.len() >= 3).map(str::to_owned));
        let found = keys.iter().cloned().chain(stems).find_map(|k| map.get(&k).filter(|ts| ts.len() <= MAX_TERMS));
        for t in found.into_iter().flatten() {
            if !out.iter().any(|o| o.as_str() == &**t) {
                out.push(t.to_string());
            }
        }
    }
    out
}

/// The skeleton map of an index's ASCII terms: skeleton to the terms that have it.
pub fn map<'a>(terms: impl Iterator<Item = &'a str>) -> Map {
    let mut out: HashMap<String, Vec<Box<str>>> = HashMap::new();
    for t in terms.filter(|t| t.len() >= 3) {
        for k in english_keys(t) {
            out.entry(k).or_default().push(t.into());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_loanwords_meet_their_english_terms() {
        // The index's terms are Snowball stems.
        let map = map(["panther", "tackl", "norman", "intercept", "garden", "action", "denver", "bronco"].into_iter());
        let read = |lang: &str, q: &str| terms(lang, q, &map, |_| false);
        assert_eq!(read("hi", "पैंथर्स डिफ़ेंस ने कितने अंक दिए?"), ["panther"]);
        assert_eq!(read("hi", "ल्यूक कुएक्ली ने कितने टैकल रजिस्टर किए?"), ["tackl"]);
        assert_eq!(read("hi", "जोश नॉर्मन ने कितने बॉल को इंटरसेप्ट किया?"), ["norman", "intercept"]);
        assert_eq!(read("ar", "كم من كرة اعترض جوش نورمان؟"), ["norman"]);
        assert_eq!(read("ar", "كم عدد الاعتراضات التي سجلت لصالح دفاع البانثرز في 2015؟"), ["panther"]);
        // A word the dictionary reads is left to it; Hindi's "कितने" (k-t-n) is a function word, not "action".
        assert!(terms("ar", "نورمان", &map, |_| true).is_empty());
        assert!(!read("hi", "कितने").contains(&"action".to_owned()));
        // Thai and other languages are not read so.
        assert!(read("th", "เดนเวอร์ บรองโกส์").is_empty());
    }

    #[test]
    fn english_terms_have_a_skeleton_with_and_without_an_r_no_vowel_follows() {
        assert_eq!(english_keys("denver"), ["TNFR", "TNF"]);
        assert_eq!(english_keys("panther"), ["BNTR", "BNT"]);
        assert_eq!(english_keys("tackl"), ["TKL"]);
        assert!(english_keys("café").is_empty() && english_keys("to").is_empty());
    }
}
