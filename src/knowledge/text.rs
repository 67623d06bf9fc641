//! Plain-text helpers shared by chunking, retrieval and answer composition: whitespace normalization,
//! sentence splitting, a token estimate and the content terms of a question.

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

/// Splits a passage into sentences: at `.`, `!` or `?` (or a closing quote or bracket after them)
/// followed by whitespace and not after a known abbreviation or a single letter.
pub fn sentences(text: &str) -> Vec<String> {
    let text = squash(text);
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
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
                    let s = text[start..end].trim();
                    if !s.is_empty() {
                        out.push(s.to_owned());
                    }
                    start = end;
                }
            }
            i = end;
            continue;
        }
        i += 1;
    }
    let rest = text[start..].trim();
    if !rest.is_empty() {
        out.push(rest.to_owned());
    }
    out
}

/// English and German words too common to say what a question is about.
const STOPWORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been", "being", "but", "by", "can", "could", "did", "do", "does",
    "doing", "for", "from", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "me",
    "my", "of", "on", "or", "our", "ours", "she", "should", "so", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those",
    "to", "too", "us", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours",
    "please", "tell", "know", "there's", "what's", "der", "die", "das", "den", "dem", "des", "ein", "eine", "einen", "einem", "einer", "und", "oder", "ist",
    "sind", "wie", "was", "wer", "wo", "wann", "warum", "ich", "du", "sie", "wir", "ihr", "es", "mit", "von", "zu", "für", "auf", "im", "in", "bei", "kann",
    "können", "habe", "haben", "hat", "mein", "meine", "ihre", "ihren", "nicht", "auch", "noch", "man",
];

/// The lower-cased content words of `text` (letters and digits; stopwords and one-letter words
/// dropped), in order, without repeats.
pub fn terms(text: &str) -> Vec<String> {
    bounded_terms(text, usize::MAX, usize::MAX)
}

/// The terms a question is searched for: at most [`MAX_TERMS`], none over [`MAX_TERM_BYTES`].
pub fn question_terms(question: &str) -> Vec<String> {
    bounded_terms(question, MAX_TERMS, MAX_TERM_BYTES)
}

fn bounded_terms(text: &str, max_terms: usize, max_bytes: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for raw in text.split(|c: char| !c.is_alphanumeric()) {
        if out.len() == max_terms {
            break;
        }
        if raw.len() > max_bytes {
            continue;
        }
        let w = raw.to_lowercase();
        if w.chars().count() < 2 || STOPWORDS.contains(&w.as_str()) || out.contains(&w) {
            continue;
        }
        out.push(w);
    }
    out
}

/// A question's terms at most: each term is one FTS5 phrase (a count for pruning and a posting list to
/// score), so a question of hundreds of words would cost a stranger's request hundreds of index walks.
pub const MAX_TERMS: usize = 32;
/// Longer "words" are no words (a pasted token, a hash): they are left out of the search.
pub const MAX_TERM_BYTES: usize = 64;

/// A crude stem for comparing words between a question and a sentence (FTS5 uses Porter for ranking;
/// this only decides which sentences of an already retrieved passage to quote).
pub fn stem(word: &str) -> &str {
    for suffix in ["ing", "ies", "es", "ed", "ly", "s"] {
        if word.len() > suffix.len() + 3 && word.ends_with(suffix) {
            return &word[..word.len() - suffix.len()];
        }
    }
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_gives_at_most_32_terms_of_at_most_64_bytes() {
        let many: String = (0..500).map(|i| format!("word{i} ")).collect();
        let t = question_terms(&many);
        assert_eq!(t.len(), MAX_TERMS);
        assert_eq!(t[0], "word0");
        let long = format!("{} crown", "x".repeat(65));
        assert_eq!(question_terms(&long), vec!["crown".to_owned()]);
        assert_eq!(terms(&many).len(), 500, "passage text is not bounded");
    }

    #[test]
    fn splits_sentences_but_not_abbreviations() {
        let s = sentences("We open at 8 a.m. on weekdays. Call Dr. Weber, e.g. for emergencies! Is it free? Yes.");
        assert_eq!(s, vec!["We open at 8 a.m. on weekdays.", "Call Dr. Weber, e.g. for emergencies!", "Is it free?", "Yes."]);
        assert_eq!(sentences("No final stop"), vec!["No final stop"]);
        assert_eq!(sentences("Price is 3.50 euros. Next."), vec!["Price is 3.50 euros.", "Next."]);
    }

    #[test]
    fn terms_drop_stopwords_and_repeats() {
        assert_eq!(terms("What are the opening hours? Opening HOURS!"), vec!["opening", "hours"]);
        assert_eq!(terms("\"x\" OR y*"), Vec::<String>::new());
    }

    #[test]
    fn token_estimate_is_not_below_word_count() {
        assert!(estimate_tokens("one two three") >= 3);
        assert!(estimate_tokens("pneumonoultramicroscopic") > 1);
    }
}
