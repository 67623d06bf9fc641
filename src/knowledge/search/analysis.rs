//! Text to search terms, per language: what the FTS5 index holds and what a question is searched for.
//!
//! Words are found by Unicode segmentation (UAX #29 word boundaries, then grapheme clusters so that
//! combining marks stay with their letter), lower-cased, and stemmed with the Snowball stemmer of the
//! text's language when `rust-stemmers` has one (`stemmer`); other languages keep their words as they
//! are, so German is never cut by the English rules. Scripts written without spaces (Han, Hiragana,
//! Katakana, Thai, Lao, Khmer, Myanmar) become overlapping pairs of characters (Lucene's CJK bigrams):
//! measured against ICU4X's dictionary and LSTM word segmenter on hand-written business-site passages
//! (`examples/segmenters.rs`, docs/performance.md), the pairs found as many passages with no data and
//! no extra dependency.
//!
//! The FTS5 table's own tokenizer (`unicode61 remove_diacritics 2`, marks as token characters, no
//! Porter) only splits the analyzed terms at the spaces between them and folds diacritics; the
//! question goes through the same tokenizer as a quoted phrase, so both sides agree.
//!
//! [`VERSION`] names this analysis: a site's FTS table records the version it was built with, and a
//! table of another version is rebuilt from the stored chunks (`reindex_stale`, at `serve` start and
//! before an import).

use rust_stemmers::{Algorithm, Stemmer};
use unicode_segmentation::UnicodeSegmentation;

use crate::domain::SiteId;
use crate::store::{Store, StoreError};

/// The analysis the FTS tables are built with. 0 was FTS5's Porter over the raw text; 1 added nothing for
/// one-character words; 2 adds their pairs with the word next to them. Bump it whenever `index_text`
/// changes what it makes of a text.
pub const VERSION: i64 = 2;

/// The Snowball stemmer for an ISO 639-1 code, if there is one.
pub(crate) fn stemmer(lang: &str) -> Option<Stemmer> {
    let algorithm = match lang {
        "ar" => Algorithm::Arabic,
        "da" => Algorithm::Danish,
        "nl" => Algorithm::Dutch,
        "en" => Algorithm::English,
        "fi" => Algorithm::Finnish,
        "fr" => Algorithm::French,
        "de" => Algorithm::German,
        "el" => Algorithm::Greek,
        "hu" => Algorithm::Hungarian,
        "it" => Algorithm::Italian,
        "nb" | "no" | "nn" => Algorithm::Norwegian,
        "pt" => Algorithm::Portuguese,
        "ro" => Algorithm::Romanian,
        "ru" => Algorithm::Russian,
        "es" => Algorithm::Spanish,
        "sv" => Algorithm::Swedish,
        "ta" => Algorithm::Tamil,
        "tr" => Algorithm::Turkish,
        _ => return None,
    };
    Some(Stemmer::create(algorithm))
}

/// Scripts written without spaces between words: their runs become character pairs.
fn unspaced(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF // Thai, Lao
        | 0x1000..=0x109F // Myanmar
        | 0x1780..=0x17FF // Khmer
        | 0x3040..=0x30FF // Hiragana, Katakana
        | 0x31F0..=0x31FF // Katakana phonetic extensions
        | 0x3400..=0x4DBF // CJK extension A
        | 0x4E00..=0x9FFF // CJK unified ideographs
        | 0xF900..=0xFAFF // CJK compatibility ideographs
        | 0xFF66..=0xFF9F // half-width Katakana
        | 0x20000..=0x3FFFF // CJK extensions B and later
    )
}

/// One piece of text: a word of a spaced script, or a run of an unspaced one (as grapheme clusters).
enum Piece<'t> {
    Word(String),
    Run(Vec<&'t str>),
}

/// The words and unspaced runs of `text`, in order. A word ends at any grapheme that does not start
/// with a letter or digit (so "3.50" and "don't" are two words each, as FTS5 would split them).
fn pieces(text: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    for segment in text.split_word_bounds() {
        let mut word = String::new();
        for g in segment.graphemes(true) {
            let first = g.chars().next().unwrap_or(' ');
            if unspaced(first) {
                if !word.is_empty() {
                    out.push(Piece::Word(std::mem::take(&mut word)));
                }
                if first.is_alphanumeric() {
                    run.push(g);
                }
                continue;
            }
            if !run.is_empty() {
                out.push(Piece::Run(std::mem::take(&mut run)));
            }
            if first.is_alphanumeric() {
                word.push_str(g);
            } else if !word.is_empty() {
                out.push(Piece::Word(std::mem::take(&mut word)));
            }
        }
        if !word.is_empty() {
            out.push(Piece::Word(word));
        }
    }
    if !run.is_empty() {
        out.push(Piece::Run(run));
    }
    out
}

/// A term and whether it came from a word (stemmable, subject to stopwords) or from a run.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Term {
    text: String,
    from_word: bool,
    /// The lower-cased word before stemming (stopwords are listed unstemmed).
    word: String,
}

/// Overlapping pairs of a run's grapheme clusters; a run of one cluster is itself.
fn bigrams(run: &[&str], out: &mut Vec<Term>) {
    if run.len() == 1 {
        out.push(Term { text: run[0].to_lowercase(), from_word: false, word: String::new() });
        return;
    }
    for pair in run.windows(2) {
        out.push(Term { text: format!("{}{}", pair[0], pair[1]).to_lowercase(), from_word: false, word: String::new() });
    }
}

fn analyze(lang: &str, text: &str) -> Vec<Term> {
    let stemmer = stemmer(lang);
    let stop = stopwords(lang);
    let pieces = pieces(text);
    let stem = |w: &str| {
        let word = w.to_lowercase();
        let text = stemmer.as_ref().map_or_else(|| word.clone(), |s| s.stem(&word).into_owned());
        (text, word)
    };
    // A word of two characters or more, with a letter, that is no stopword: what a one-character word is
    // read with. Digits alone are no such word, so times and decimals ("8:00", "3.5") make no pairs.
    let neighbour = |i: usize| match pieces.get(i) {
        Some(Piece::Word(w)) if w.chars().count() >= 2 && w.chars().any(char::is_alphabetic) && !stop.contains(&w.to_lowercase().as_str()) => Some(stem(w).0),
        _ => None,
    };
    let mut out = Vec::new();
    for (i, piece) in pieces.iter().enumerate() {
        match piece {
            Piece::Word(w) => {
                let (text, word) = stem(w);
                let single = word.chars().count() == 1 && !stop.contains(&word.as_str());
                out.push(Term { text, from_word: true, word: word.clone() });
                if single {
                    // "page 5", "plan B", "vitamin C": the character with the word before it (or after it,
                    // when it comes first) is one term, as specific as the pair is.
                    let before = i.checked_sub(1).and_then(neighbour);
                    let pair = match before {
                        Some(b) => Some(format!("{b}{word}")),
                        None => neighbour(i + 1).map(|a| format!("{word}{a}")),
                    };
                    if let Some(pair) = pair {
                        out.push(Term { text: pair, from_word: false, word: String::new() });
                    }
                }
            }
            Piece::Run(r) => bigrams(r, &mut out),
        }
    }
    out
}

/// What the FTS5 index holds for `text` in `lang` (ISO 639-1): its terms, in order, joined by spaces.
pub fn index_text(lang: &str, text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    for t in analyze(lang, text) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&t.text);
    }
    out
}

/// What the FTS5 index holds for `text` in `lang`, term by term (`index_text` without the joining).
pub fn index_terms(lang: &str, text: &str) -> impl Iterator<Item = String> {
    analyze(lang, text).into_iter().map(|t| t.text)
}

/// The distinct content terms of `text` in `lang`: stopwords of the language and one-character words
/// left out (a single character of an unspaced script stays: it is a word there). A one-character word
/// carries meaning with the word next to it ("page 5", "plan B", "vitamin C", "size 9"): that pair is
/// a term of its own (`analyze`), on both sides, while the character alone matches too much to search
/// for (on SciFact, searching bare digits and letters cost 0.009 of nDCG@10 through the route).
pub fn terms(lang: &str, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    push_terms(lang, text, stopwords(lang), usize::MAX, usize::MAX, &mut out);
    out
}

/// The terms a question is searched for, analyzed in each of `langs` in turn (the question's language
/// first, then the languages of the site's documents, so that a name or an English word in a German
/// question still meets an English document): at most [`MAX_TERMS`] distinct terms, none over
/// [`MAX_TERM_BYTES`], no stopword of any of the languages.
pub fn question_terms(question: &str, langs: &[&str]) -> Vec<String> {
    let stop: Vec<&str> = langs.iter().flat_map(|l| stopwords(l)).copied().collect();
    let mut out = Vec::new();
    for lang in langs {
        push_terms(lang, question, &stop, MAX_TERMS, MAX_TERM_BYTES, &mut out);
    }
    out
}

/// Adds the terms of `text` in `lang` to a question's `terms` as `question_terms` makes them (distinct, no
/// stopword, none over [`MAX_TERM_BYTES`]), at most `more` of them: a question's words translated into
/// `lang` (`dictionary`).
pub fn push_question_terms(lang: &str, text: &str, more: usize, terms: &mut Vec<String>) {
    let max = terms.len().saturating_add(more);
    push_terms(lang, text, stopwords(lang), max, MAX_TERM_BYTES, terms);
}

fn push_terms(lang: &str, text: &str, stop: &[&str], max_terms: usize, max_bytes: usize, out: &mut Vec<String>) {
    for t in analyze(lang, text) {
        if out.len() >= max_terms {
            return;
        }
        if t.text.len() > max_bytes || out.contains(&t.text) {
            continue;
        }
        if t.from_word && (t.word.chars().count() < 2 || stop.contains(&t.word.as_str())) {
            continue;
        }
        out.push(t.text);
    }
}

/// A question's terms at most: each term is one FTS5 phrase (a count for pruning and a posting list to
/// score), so a question of hundreds of words would cost a stranger's request hundreds of index walks.
pub const MAX_TERMS: usize = 32;
/// Longer "words" are no words (a pasted token, a hash): they are left out of the search.
pub const MAX_TERM_BYTES: usize = 64;

/// Whether `word` (lower-cased, unstemmed) is a stopword of `lang`.
pub(crate) fn is_stopword(lang: &str, word: &str) -> bool {
    stopwords(lang).contains(&word)
}

/// Words too common to say what a question is about, for the languages that list them (the common-term
/// pruning in `retrieve::TermStats` handles the others).
fn stopwords(lang: &str) -> &'static [&'static str] {
    match lang {
        "en" => ENGLISH,
        "de" => GERMAN,
        _ => &[],
    }
}

const ENGLISH: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been", "being", "but", "by", "can", "could", "did", "do", "does",
    "doing", "for", "from", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "me",
    "my", "of", "on", "or", "our", "ours", "she", "should", "so", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those",
    "to", "too", "us", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours",
    "please", "tell", "know", "there's", "what's",
];

const GERMAN: &[&str] = &[
    "der", "die", "das", "den", "dem", "des", "ein", "eine", "einen", "einem", "einer", "und", "oder", "ist", "sind", "wie", "was", "wer", "wo", "wann",
    "warum", "ich", "du", "sie", "wir", "ihr", "es", "mit", "von", "zu", "für", "auf", "im", "in", "bei", "kann", "können", "habe", "haben", "hat", "mein",
    "meine", "ihre", "ihren", "nicht", "auch", "noch", "man", "welche", "welcher", "welches", "gibt",
];

/// The language a text is analyzed in: its own when detected confidently, else `fallback` (the site's).
pub fn language_of(detected: Option<(&str, f32)>, fallback: &str) -> String {
    match detected {
        Some((code, confidence)) if confidence >= crate::knowledge::language::CONFIDENT => code.to_owned(),
        _ => fallback.to_owned(),
    }
}

/// The language a site's text is analyzed in when its own is not detected confidently: the site's.
pub(crate) fn site_language(store: &Store, site: &SiteId) -> Result<String, StoreError> {
    Ok(store.site(*site).get()?.map_or_else(|| "en".to_owned(), |s| s.lang.primary().to_owned()))
}

/// Rebuilds the site's full-text index with this analysis, from its stored chunks, in one transaction
/// (blocking; `knowledge reindex`). Returns the row count.
pub fn reindex(store: &Store, site: &SiteId) -> Result<usize, StoreError> {
    let fallback = site_language(store, site)?;
    store.site(*site).knowledge().rebuild_fts(VERSION, |detected, text| index_text(&language_of(detected, &fallback), text))
}

/// Before an import writes terms: rebuilds the site's index if another analysis built it, or creates
/// it (blocking). Returns the site's language.
pub fn reindex_if_stale(store: &Store, site: &SiteId) -> Result<String, StoreError> {
    if store.site(*site).knowledge().fts_analyzer()? != Some(VERSION) {
        reindex(store, site)?;
    }
    site_language(store, site)
}

/// Rebuilds every site's index that another analysis built (blocking; `serve` runs it before it
/// listens, so no question is analyzed differently from its index). Returns the sites rebuilt with
/// their row counts.
pub fn reindex_stale(store: &Store) -> Result<Vec<(SiteId, usize)>, StoreError> {
    let mut out = Vec::new();
    for site in stale_sites(store)? {
        out.push((site, reindex(store, &site)?));
    }
    Ok(out)
}

/// Sites whose full-text index another analysis built (blocking; `sitebot doctor` reports them).
pub fn stale_sites(store: &Store) -> Result<Vec<SiteId>, StoreError> {
    let mut out = Vec::new();
    for site in store.sites().list()? {
        if store.site(site.id).knowledge().fts_analyzer()?.is_some_and(|v| v != VERSION) {
            out.push(site.id);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::knowledge::search::analysis::*;

    #[test]
    fn german_is_stemmed_as_german() {
        assert_eq!(index_text("de", "Zahnreinigungen dauern"), "zahnrein dau");
        // The inflections of one word meet in one term.
        assert_eq!(index_text("de", "Zahnreinigung"), index_text("de", "Zahnreinigungen"));
        assert_eq!(index_text("de", "Behandlung Behandlungen"), "behandl behandl");
        // Stopwords of the language are left out of a question's terms.
        let q = terms("de", "Wie lange dauert eine Zahnreinigung?");
        assert_eq!(q.len(), 3, "{q:?}");
        assert!(q.contains(&"zahnrein".to_owned()), "{q:?}");
    }

    #[test]
    fn no_english_stemming_of_other_languages() {
        // English rules would leave the German plural whole and cut German words as if English.
        assert_eq!(index_text("en", "Behandlungen"), "behandlungen");
        assert_eq!(index_text("de", "Behandlungen"), "behandl");
        assert_eq!(index_text("de", "Termine"), "termin");
        // A language without a Snowball stemmer keeps its words whole.
        assert_eq!(index_text("pl", "Ile kosztuje czyszczenie zębów"), "ile kosztuje czyszczenie zębów");
        assert_eq!(index_text("ja", "Booking required"), "booking required");
        assert_eq!(index_text("en", "cleanings cost"), "clean cost");
    }

    #[test]
    fn chinese_becomes_overlapping_character_pairs() {
        assert_eq!(index_text("zh", "周六营业"), "周六 六营 营业");
        // Punctuation ends a run; Latin words and digits in between are words of their own.
        assert_eq!(index_text("zh", "我们周六，上午9点 WiFi免费"), "我们 们周 周六 上午 9 点 wifi 免费");
        let q = question_terms("你们周六几点开门？", &["zh"]);
        assert!(q.contains(&"周六".to_owned()), "{q:?}");
        // A lone character of an unspaced script is a term.
        assert_eq!(terms("zh", "门"), vec!["门"]);
    }

    #[test]
    fn japanese_mixes_kana_and_kanji_in_one_run() {
        assert_eq!(index_text("ja", "予約は不要"), "予約 約は は不 不要");
    }

    #[test]
    fn thai_pairs_keep_their_marks() {
        // "ที่จอดรถ" (parking): the vowel and tone marks stay with their consonant in one cluster.
        let t = index_text("th", "ที่จอดรถ");
        assert_eq!(t, "ที่จ จอ อด ดร รถ");
        assert!(index_text("th", "มีที่จอดรถฟรี").contains("รถ"));
    }

    #[test]
    fn arabic_is_stemmed() {
        let q = question_terms("هل يوجد موقف للسيارات؟", &["ar"]);
        let passage = index_text("ar", "يتوفر موقف مجاني للسيارات للمرضى");
        let indexed: Vec<&str> = passage.split(' ').collect();
        assert!(q.iter().filter(|t| indexed.contains(&t.as_str())).count() >= 2, "{q:?} in {passage}");
    }

    #[test]
    fn questions_are_searched_in_several_languages_within_the_caps() {
        // The German stem and the word as the English side reads it.
        assert_eq!(question_terms("Preise bei Müller", &["de", "en"]), vec!["preis", "mull", "müller"]);
        let many: String = (0..500).map(|i| format!("word{i} ")).collect();
        let t = question_terms(&many, &["en"]);
        assert_eq!(t.len(), MAX_TERMS);
        assert_eq!(t[0], "word0");
        let long = format!("{} crown", "x".repeat(65));
        assert_eq!(question_terms(&long, &["en"]), vec!["crown".to_owned()]);
        assert_eq!(terms("en", &many).len(), 500, "passage text is not bounded");
    }

    #[test]
    fn terms_drop_stopwords_and_repeats() {
        assert_eq!(terms("en", "What are the opening hours? Opening HOURS!"), vec!["open", "hour"]);
        assert_eq!(terms("en", "\"x\" OR y*"), Vec::<String>::new());
    }

    #[test]
    fn one_character_terms_that_carry_meaning_are_searched() {
        assert_eq!(question_terms("What is the codeword for page 5?", &["en"]), vec!["codeword", "page", "page5"]);
        assert_eq!(question_terms("Is plan B cheaper than vitamin C?", &["en"]), vec!["plan", "planb", "cheaper", "vitamin", "vitaminc"]);
        // Stopwords are neither searched alone nor paired: "a" and "I" are English stopwords.
        assert_eq!(question_terms("I need a room", &["en"]), vec!["need", "room"]);
        // A character that comes first pairs with the word after it; in every language's analysis.
        assert_eq!(question_terms("5 rooms", &["en"]), vec!["5room", "room"]);
        assert_eq!(question_terms("Zimmer 7 im Haus B", &["de"]), vec!["zimm", "zimm7", "haus", "hausb"]);
        assert_eq!(question_terms("комната 5", &["ru"]), vec!["комнат", "комнат5"]);
        // The index holds the character alone and its pair, so questions of either kind meet it.
        assert_eq!(index_text("en", "Page 5: plan B"), "page 5 page5 plan b planb");
        // Times and decimals are numbers, not a character beside a word.
        assert_eq!(index_text("en", "from 8:00 to 3.5"), "from 8 00 to 3 5");
    }

    #[test]
    fn a_confident_detection_wins_over_the_fallback() {
        assert_eq!(language_of(Some(("de", 0.9)), "en"), "de");
        assert_eq!(language_of(Some(("de", 0.1)), "en"), "en");
        assert_eq!(language_of(None, "fr"), "fr");
    }
}
