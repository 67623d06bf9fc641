//! The support test: a generated sentence is shown only when the passages it cites say what it says.
//!
//! A language model asked to answer from numbered passages still invents: a price off by fifty euros,
//! an opening hour, a person the passages never name. So every sentence is checked against the
//! passages it cites before it is shown:
//!
//! 1. it carries at least one `[n]` marker, and every marker names a passage that was given;
//! 2. every number in it (`350`, `3.50`, `8:00`) appears in the cited text;
//! 3. every capitalized word that does not start the sentence (a name, a product, a place) appears in
//!    the cited text;
//! 4. it negates nothing the cited text states plainly, and enough of its content words (stopwords of en/de/fr/es removed, suffixes folded) appear in the
//!    cited text.
//!
//! Checks 2 and 3 come before 4 because a changed number or name is the harmful case and leaves the
//! overlap almost untouched. Suffix folding is a short hand-written list rather than a Snowball crate:
//! no stemmer is in the dependency tree yet and the test only needs "opens"/"open" and
//! "Preise"/"Preis" to meet, not linguistically correct stems.

use std::collections::HashSet;

/// Share of a sentence's content words that must appear in the cited passages.
pub const MIN_OVERLAP: f32 = 0.6;

/// Why a sentence is, or is not, shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Supported,
    /// The sentence cites nothing.
    NoMarker,
    /// `[n]` names a passage that was not given to the model.
    UnknownSource(usize),
    Unsupported {
        reason: String,
    },
    NumberNotInSource(String),
    NameNotInSource(String),
}

impl Verdict {
    pub fn is_supported(&self) -> bool {
        matches!(self, Verdict::Supported)
    }
}

/// A numbered passage as the model saw it.
#[derive(Debug, Clone)]
pub struct NumberedPassage {
    pub n: usize,
    pub text: String,
}

/// Stopwords of English, German, French and Spanish: they say nothing about support.
const STOPWORDS: &[&str] = &[
    // en
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by", "can", "could", "did", "do", "does", "for",
    "from", "had", "has", "have", "he", "her", "here", "his", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "no", "not", "of", "on", "or",
    "our", "she", "should", "so", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those", "to", "too", "us", "was", "we",
    "were", "what", "when", "where", "which", "while", "who", "why", "will", "with", "would", "you", "your", "yes", "each", "per", "every", "only", "just",
    "more", "most", "very", "may", "must", "up", "out", "both", "between", // de
    "der", "die", "das", "den", "dem", "des", "ein", "eine", "einen", "einem", "einer", "und", "oder", "ist", "sind", "wie", "was", "wer", "wo", "wann", "ich",
    "du", "sie", "wir", "ihr", "es", "mit", "von", "zu", "zum", "zur", "für", "auf", "im", "bei", "kann", "können", "haben", "hat", "nicht", "auch", "noch",
    "man", "am", "um", "ab", "bis", "aus", "nach", "vor", "über", "unter", "wird", "werden", "ja", "nein", "pro", "jeden", // fr
    "le", "la", "les", "un", "une", "des", "du", "de", "et", "ou", "est", "sont", "il", "elle", "nous", "vous", "ils", "elles", "en", "au", "aux", "pour",
    "par", "sur", "dans", "avec", "ce", "cette", "ces", "qui", "que", "quoi", "ne", "pas", "se", "son", "sa", "ses", "leur", "oui", "à", "y", // es
    "el", "los", "las", "unos", "unas", "y", "o", "es", "son", "él", "ella", "nosotros", "ustedes", "ellos", "con", "para", "por", "del", "al", "este", "esta",
    "estos", "lo", "se", "su", "sus", "sí", "cada", "desde", "hasta", "entre",
];

/// Words that turn a sentence into its opposite while leaving its content words as they were.
const NEGATIONS: &[&str] = &[
    "not", "no", "never", "none", "nicht", "kein", "keine", "keinen", "keiner", "nie", "niemals", "pas", "jamais", "aucun", "aucune", "sans", "nunca",
    "ningún", "ninguna", "sin",
];

fn negates(text: &str) -> bool {
    words(text).any(|w| {
        let w = w.to_lowercase();
        NEGATIONS.contains(&w.as_str()) || w.ends_with("n't")
    })
}

/// Endings folded away so inflected forms meet; longest first.
const SUFFIXES: &[&str] = &[
    "ations", "ation", "ungen", "iones", "ción", "ment", "ness", "ings", "ing", "ung", "ies", "ied", "ers", "ern", "ed", "es", "er", "en", "em", "ly", "os",
    "as", "s", "e", "n",
];

/// Finds the `[n]` markers; returns the sentence with them removed and the numbers they hold.
pub fn markers(sentence: &str) -> (String, Vec<usize>) {
    let mut text = String::with_capacity(sentence.len());
    let mut found = Vec::new();
    let mut rest = sentence;
    while let Some(open) = rest.find('[') {
        text.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find(']') {
            Some(close) if !after[..close].is_empty() && after[..close].split(',').all(|p| p.trim().parse::<usize>().is_ok()) => {
                found.extend(after[..close].split(',').filter_map(|p| p.trim().parse::<usize>().ok()));
                rest = &after[close + 1..];
            }
            _ => {
                text.push('[');
                rest = after;
            }
        }
    }
    text.push_str(rest);
    (text, found)
}

/// Numbers as written: digits with inner `.`, `,` or `:` kept (`3.50`, `1,200`, `8:00`).
pub fn numbers(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || (matches!(chars[i], '.' | ',' | ':') && chars.get(i + 1).is_some_and(char::is_ascii_digit)))
            {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
        } else {
            i += 1;
        }
    }
    out
}

/// The words of a text, split at anything that is not a letter, digit or apostrophe.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-')).map(|w| w.trim_matches(['\'', '-'])).filter(|w| !w.is_empty())
}

/// Lowercases and folds one common ending, keeping at least three letters.
pub fn stem(word: &str) -> String {
    let lower = word.to_lowercase();
    for suffix in SUFFIXES {
        if let Some(base) = lower.strip_suffix(suffix)
            && base.chars().count() >= 3
        {
            return base.to_owned();
        }
    }
    lower
}

fn is_stopword(lower: &str) -> bool {
    STOPWORDS.contains(&lower)
}

/// Checks one generated sentence against the passages given to the model.
pub fn check(sentence: &str, passages: &[NumberedPassage]) -> Verdict {
    let (text, cited) = markers(sentence);
    if cited.is_empty() {
        return Verdict::NoMarker;
    }
    let mut source = String::new();
    for n in &cited {
        match passages.iter().find(|p| p.n == *n) {
            Some(p) => {
                source.push_str(&p.text);
                source.push('\n');
            }
            None => return Verdict::UnknownSource(*n),
        }
    }
    let source_numbers: HashSet<String> = numbers(&source).into_iter().collect();
    if let Some(n) = numbers(&text).into_iter().find(|n| !source_numbers.contains(n)) {
        return Verdict::NumberNotInSource(n);
    }
    let source_stems: HashSet<String> = words(&source).map(stem).collect();
    let source_lower: HashSet<String> = words(&source).map(str::to_lowercase).collect();
    let known = |w: &str| source_lower.contains(&w.to_lowercase()) || source_stems.contains(&stem(w));
    let all: Vec<&str> = words(&text).collect();
    let capitalized = |w: &str| w.chars().next().is_some_and(char::is_uppercase) && !is_stopword(&w.to_lowercase());
    for (i, word) in all.iter().enumerate() {
        // The first word is capitalized by grammar, not because it names something, unless the next
        // word is capitalized too ("Maria Berger leads ...").
        let name = capitalized(word) && (i > 0 || all.get(1).is_some_and(|w| capitalized(w)));
        if name && !known(word) {
            return Verdict::NameNotInSource((*word).to_owned());
        }
    }
    // Stopwords are ignored for overlap, so "is not open" would match "is open" without this.
    if negates(&text) && !negates(&source) {
        return Verdict::Unsupported { reason: "the sentence negates what the cited passages state".into() };
    }
    let content: Vec<&str> = words(&text).filter(|w| !w.chars().all(|c| c.is_ascii_digit()) && !is_stopword(&w.to_lowercase())).collect();
    if content.is_empty() {
        return Verdict::Unsupported { reason: "the sentence has no content words to check".into() };
    }
    let hits = content.iter().filter(|w| known(w)).count();
    let overlap = hits as f32 / content.len() as f32;
    if overlap < MIN_OVERLAP {
        return Verdict::Unsupported { reason: format!("{hits} of {} content words appear in the cited passages", content.len()) };
    }
    Verdict::Supported
}

/// Words that end with a period without ending the sentence.
const ABBREVIATIONS: &[&str] =
    &["e.g", "i.e", "etc", "vs", "dr", "mr", "mrs", "ms", "st", "no", "nr", "z.b", "bzw", "ca", "inc", "approx", "usw", "p.ex", "p.ej", "env"];

/// Cuts streamed text into sentences as soon as each one is known to be complete.
///
/// A sentence ends at `.`, `!` or `?` (plus closing quotes and brackets and any `[n]` markers, before or
/// after a space) followed by whitespace and a character that can start a sentence. So the end of a
/// sentence is only known once the next one has begun, or the stream is over ([`finish`](Self::finish)):
/// "8:00", "3.50", "e.g." and "[1]." never cut early.
#[derive(Debug, Default)]
pub struct SentenceSplitter {
    buf: String,
}

impl SentenceSplitter {
    /// Adds a fragment; returns the sentences it completed, in order.
    pub fn push(&mut self, fragment: &str) -> Vec<String> {
        self.buf.push_str(fragment);
        let mut out = Vec::new();
        while let Some(end) = self.boundary() {
            let sentence = self.buf[..end].split_whitespace().collect::<Vec<_>>().join(" ");
            self.buf.drain(..end);
            if !sentence.is_empty() {
                out.push(sentence);
            }
        }
        out
    }

    /// The text left when the stream ends, as the last sentence.
    pub fn finish(&mut self) -> Option<String> {
        let rest = std::mem::take(&mut self.buf).split_whitespace().collect::<Vec<_>>().join(" ");
        (!rest.is_empty()).then_some(rest)
    }

    /// The byte offset just past the first complete sentence, when one is known to be complete.
    fn boundary(&self) -> Option<usize> {
        let b = self.buf.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if !matches!(b[i], b'.' | b'!' | b'?') {
                i += 1;
                continue;
            }
            let period = b[i] == b'.';
            let word_start = self.buf[..i].rfind(char::is_whitespace).map_or(0, |s| s + 1);
            let mut end = i + 1;
            while end < b.len() && matches!(b[end], b'"' | b'\'' | b')' | b'.' | b'!' | b'?') {
                end += 1;
            }
            end = skip_markers(b, end, false)?;
            if end >= b.len() {
                return None;
            }
            if !b[end].is_ascii_whitespace() {
                i = end;
                continue;
            }
            // Markers written after the space still belong to this sentence ("... 9 to 5. [2]").
            let after = skip_markers(b, end, true)?;
            let next = self.buf[after..].trim_start().chars().next()?;
            let last = self.buf[word_start..i].trim_start_matches(['(', '"', '\'']).to_lowercase();
            let abbreviation = period && (ABBREVIATIONS.contains(&last.as_str()) || (last.chars().count() == 1 && last.chars().all(char::is_alphabetic)));
            if !abbreviation && !next.is_lowercase() {
                return Some(after);
            }
            i = end;
        }
        None
    }
}

/// Skips `[n]` markers (and, when `spaces`, the whitespace before them) from `at`. `None` when the
/// buffer ends inside what may still become a marker, so the caller waits for more text.
fn skip_markers(b: &[u8], mut at: usize, spaces: bool) -> Option<usize> {
    loop {
        let mut j = at;
        if spaces {
            while j < b.len() && b[j].is_ascii_whitespace() {
                j += 1;
            }
        }
        if j >= b.len() {
            return if spaces { Some(at) } else { Some(j) };
        }
        if b[j] != b'[' {
            return Some(at);
        }
        let mut k = j + 1;
        while k < b.len() && (b[k].is_ascii_digit() || b[k] == b',' || b[k] == b' ') {
            k += 1;
        }
        if k >= b.len() {
            return None;
        }
        if b[k] != b']' || k == j + 1 {
            return Some(at);
        }
        at = k + 1;
        // A period after the markers ("[1].") closes the same sentence.
        while at < b.len() && matches!(b[at], b'.' | b'!' | b'?') {
            at += 1;
        }
    }
}

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
