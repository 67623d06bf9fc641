//! Vietnamese words from programs' translations. The gettext catalogs (`.mo`) of Debian's desktop
//! applications pair short English strings ("Change", "Password", "Room") with their Vietnamese ("Thay đổi",
//! "Mật khẩu", "Phòng"), Unicode CLDR names languages, territories, units and emoji in both, and OpenTTD's
//! language files name rivers, towns and industries ("Sông", river): together they give the native,
//! everyday words that no Sino-Vietnamese reading keys (`super::sino_vietnamese`). A string is kept where both
//! sides are a short phrase (`pair`); each key's English phrases are ranked by how many files give them, and
//! its first [`ENTRIES`] are kept, before CC-CEDICT's words of the same reading. Measured offline
//! (`benches/crosslingual_use/vietnamese_l10n.py`, XQuAD-R's 1,190 Vietnamese questions on the 240 English
//! paragraphs), R@1 0.748 without them, 0.784 with them; through `POST /v1/query`, answered (right first)
//! 0.810 (0.678) -> 0.846 (0.714), off-topic questions answered as before (docs/performance.md, "Vietnamese
//! through software localization"). The catalogs' sentences pair more words by the messages they share
//! (`aligned_pairs`), for the keys the other sources lack: answered 0.845 (0.725) -> 0.853 (0.736) (session
//! 38, "The catalogs' sentences").

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::{Builder, DictionaryError, Interner, MAX_PHRASE_WORDS, SENSES, english_words, key};

/// English phrases kept per key: those most catalogs give (then the first met).
pub(super) const ENTRIES: usize = 2;

/// The English half a Vietnamese file is paired with: CLDR's `…-en.xml` for `…-vi.xml`, OpenTTD's
/// `…english.lng` for `…vietnamese.lng`; none for a gettext catalog, which holds both.
pub(super) fn english_half(name: &str) -> Option<String> {
    name.strip_suffix("-vi.xml").map(|s| format!("{s}-en.xml")).or_else(|| name.strip_suffix("vietnamese.lng").map(|s| format!("{s}english.lng")))
}

/// The ranks the catalogs' words take (`ENTRIES` phrases of at most `SENSES` words): what is read after
/// them for the same key ranks from here on.
pub(super) const RANKS: u32 = (ENTRIES * SENSES) as u32;

/// The most words an English string may have to be kept: longer ones are sentences, not words.
const MAX_ENGLISH_WORDS: usize = 3;

/// Adds the catalogs `names` (in `dir`) to `b`: each key's English phrases by the number of catalogs that
/// give them, the first `ENTRIES` kept, their words ranked in that order. A name ending `.mo` is a gettext
/// catalog; `…-vi.xml` is a CLDR file paired with its `…-en.xml` (`cldr_pairs`), `…vietnamese.lng` an
/// OpenTTD language file paired with its `…english.lng` (`openttd_pairs`); the English halves are read
/// with them.
pub(super) fn add(dir: &Path, names: &[&str], b: &mut Builder) -> Result<(), DictionaryError> {
    // Per key: its phrases in the order first met, each with the number of catalogs that give it.
    let mut phrases: HashMap<String, Vec<(Vec<String>, u32)>> = HashMap::new();
    let read = |name: &str| {
        let path = dir.join(name);
        std::fs::read(&path).map(|bytes| (path.clone(), bytes)).map_err(|e| DictionaryError::Io(path, e))
    };
    for name in names {
        let files: Vec<Vec<(String, String)>> = if name.ends_with(".mo") {
            let (path, bytes) = read(name)?;
            let messages = messages(&bytes).map_err(|e| DictionaryError::Format(path, e))?;
            vec![messages.into_iter().map(|(e, v)| (e.to_owned(), v.to_owned())).collect()]
        } else if let Some(english) = english_half(name) {
            let ((en_path, en), (vi_path, vi)) = (read(&english)?, read(name)?);
            if name.ends_with("-vi.xml") {
                let text = |path: &Path, bytes: Vec<u8>| String::from_utf8(bytes).map_err(|_| DictionaryError::Format(path.to_owned(), "not UTF-8".into()));
                let (en, vi) = (text(&en_path, en)?, text(&vi_path, vi)?);
                cldr_pairs(&en, &vi).map_err(|e| DictionaryError::Format(vi_path, e))?
            } else {
                vec![openttd_pairs(&en, &vi).map_err(|e| DictionaryError::Format(vi_path, e))?]
            }
        } else if name.ends_with("-en.xml") || name.ends_with("english.lng") {
            continue;
        } else {
            return Err(DictionaryError::Format(dir.join(name), "not a kind of localization file this reader knows".into()));
        };
        // Each file counts once for a phrase (a CLDR file's keywords as a file of their own).
        for pairs in &files {
            let mut seen = HashSet::new();
            for (english, vietnamese) in pairs {
                let Some((k, words)) = pair(english, vietnamese) else { continue };
                if !seen.insert((k.clone(), words.clone())) {
                    continue;
                }
                let held = phrases.entry(k).or_default();
                match held.iter_mut().find(|(w, _)| *w == words) {
                    Some((_, n)) => *n += 1,
                    None => held.push((words, 1)),
                }
            }
        }
    }
    // In the keys' order, so that the packed file is the same bytes at every packing.
    let mut phrases: Vec<_> = phrases.into_iter().collect();
    phrases.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    for (k, mut held) in phrases {
        held.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
        for (i, (words, _)) in held.iter().take(ENTRIES).enumerate() {
            for (j, w) in words.iter().take(SENSES).enumerate() {
                b.add(&k, w, (i * SENSES + j) as u32);
            }
        }
    }
    Ok(())
}

/// The English and Vietnamese texts of the same CLDR element, in the English file's order: each element
/// with text and no child elements, named by its path from the root with every element's attributes but
/// `draft` and `references` ("ldml/localeDisplayNames/territories/territory[type=VN]": Vietnam, Việt Nam);
/// then, as a file of their own, the emoji keywords paired by the emoji they share (`cldr_keyword_pairs`).
fn cldr_pairs(en: &str, vi: &str) -> Result<Vec<Vec<(String, String)>>, String> {
    let (en, vi): (Vec<(String, String)>, HashMap<String, String>) = (cldr_leaves(en)?, cldr_leaves(vi)?.into_iter().collect());
    let keywords = cldr_keyword_pairs(&en, &vi);
    let leaves = en.into_iter().filter_map(|(path, text)| vi.get(&path).map(|v| (text, v.clone()))).collect();
    Ok(if keywords.is_empty() { vec![leaves] } else { vec![leaves, keywords] })
}

/// The emoji keywords of CLDR's annotations ("ocean | water | wave"; "sóng | nước | đại dương"), which list
/// no pairs: each Vietnamese keyword with the English keyword it shares the most emoji with, where they share
/// at least `MIN_SHARED_EMOJI`, at least half of the Vietnamese keyword's, and a Dice coefficient of 0.3
/// (ties to the English keyword first in order; vietnamese_l10n.py's rule).
fn cldr_keyword_pairs(en: &[(String, String)], vi: &HashMap<String, String>) -> Vec<(String, String)> {
    use std::collections::{BTreeMap, BTreeSet};
    const MIN_SHARED_EMOJI: u32 = 3;
    let keywords = |text: &str| text.split('|').map(|w| w.trim().to_owned()).filter(|w| !w.is_empty()).collect::<BTreeSet<String>>();
    let (mut shared, mut vi_count, mut en_count) = (BTreeMap::<(String, String), u32>::new(), HashMap::<String, u32>::new(), HashMap::<String, u32>::new());
    for (path, text) in en {
        let last = path.rsplit('/').next().unwrap_or_default();
        let Some(v) = vi.get(path).filter(|_| last.starts_with("annotation[") && !last.contains("type=")) else { continue };
        let (english, vietnamese) = (keywords(text), keywords(v));
        english.iter().for_each(|e| *en_count.entry(e.clone()).or_default() += 1);
        vietnamese.iter().for_each(|w| *vi_count.entry(w.clone()).or_default() += 1);
        for w in &vietnamese {
            for e in &english {
                *shared.entry((w.clone(), e.clone())).or_default() += 1;
            }
        }
    }
    let mut best: BTreeMap<&str, (&str, u32)> = BTreeMap::new();
    for ((w, e), &n) in &shared {
        let (nw, ne) = (vi_count[w], en_count[e]);
        if n >= MIN_SHARED_EMOJI && 2.0 * n as f64 / (nw + ne) as f64 >= 0.3 && 2 * n >= nw && best.get(w.as_str()).is_none_or(|b| n > b.1) {
            best.insert(w, (e, n));
        }
    }
    best.into_iter().map(|(w, (e, _))| (e.to_owned(), w.to_owned())).collect()
}

/// Each element of an XML file with text and no child elements: its path (`cldr_pairs`) and its text.
fn cldr_leaves(xml: &str) -> Result<Vec<(String, String)>, String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(xml);
    // Per open element: where its segment starts in `path`, and whether it has a child element.
    let (mut path, mut open, mut text, mut out) = (String::new(), Vec::<(usize, bool)>::new(), String::new(), Vec::new());
    loop {
        match reader.read_event().map_err(|e| format!("not XML: {e}"))? {
            Event::Start(e) => {
                if let Some(parent) = open.last_mut() {
                    parent.1 = true;
                }
                open.push((path.len(), false));
                path.push('/');
                path.push_str(e.name().as_ref());
                let mut attributes: Vec<(String, String)> = e
                    .attributes()
                    .filter_map(Result::ok)
                    .map(|a| (a.key.as_ref().to_owned(), a.value.into_owned()))
                    .filter(|(k, _)| k != "draft" && k != "references")
                    .collect();
                attributes.sort();
                if !attributes.is_empty() {
                    let joined: Vec<String> = attributes.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    path.push_str(&format!("[{}]", joined.join(";")));
                }
                text.clear();
            }
            Event::Empty(_) => {
                if let Some(parent) = open.last_mut() {
                    parent.1 = true;
                }
            }
            Event::Text(t) => text.push_str(&t.xml10_content()),
            Event::CData(t) => text.push_str(&t),
            Event::GeneralRef(r) => text.extend(crate::knowledge::text::xml_reference(&r)),
            Event::End(_) => {
                let Some((start, has_child)) = open.pop() else { return Err("an end tag without its start".into()) };
                if !has_child && !text.trim().is_empty() {
                    out.push((path[1..].to_owned(), text.trim().to_owned()));
                }
                path.truncate(start);
                text.clear();
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(out)
}

/// The strings of OpenTTD's compiled English and Vietnamese language files paired by their ids, where the
/// Vietnamese differs (an untranslated string is the English).
fn openttd_pairs(en: &[u8], vi: &[u8]) -> Result<Vec<(String, String)>, String> {
    let (en, vi) = (openttd_strings(en)?, openttd_strings(vi)?);
    Ok(en.into_iter().zip(vi).flat_map(|(e, v)| e.into_iter().zip(v)).filter(|(e, v)| e != v).collect())
}

/// A compiled OpenTTD language file's strings (`strgen`'s format): a 546-byte header that names, at byte
/// 88, how many strings each of its 32 tabs has, then every string, each after its length (one byte, or two
/// from 0xC0 on).
fn openttd_strings(bytes: &[u8]) -> Result<Vec<Vec<String>>, String> {
    const HEADER: usize = 546;
    if bytes.len() < HEADER || &bytes[..4] != b"LANG" {
        return Err("not an OpenTTD language file".into());
    }
    let mut at = HEADER;
    let mut tabs = Vec::with_capacity(32);
    for tab in 0..32 {
        let count = u16::from_le_bytes([bytes[88 + 2 * tab], bytes[89 + 2 * tab]]) as usize;
        let mut strings = Vec::with_capacity(count);
        for _ in 0..count {
            let cut = || format!("cut short at byte {at}");
            let first = *bytes.get(at).ok_or_else(cut)? as usize;
            let len = if first >= 0xC0 {
                let second = *bytes.get(at + 1).ok_or_else(cut)? as usize;
                at += 2;
                ((first - 0xC0) << 8) | second
            } else {
                at += 1;
                first
            };
            let raw = bytes.get(at..at + len).ok_or_else(|| format!("a string past the end at byte {at}"))?;
            strings.push(String::from_utf8_lossy(raw).into_owned());
            at += len;
        }
        tabs.push(strings);
    }
    Ok(tabs)
}

/// A message as a dictionary entry, where the English is one to three words (`MAX_ENGLISH_WORDS`) and
/// the Vietnamese one to three syllables (`MAX_PHRASE_WORDS`), both without their accelerators, format
/// specifiers, markup and trailing colons or ellipses: the Vietnamese keyed as a question's syllables are
/// (`key`), and the English's content words (`english_words`). A message left untranslated (a syllable
/// that is one of the English words: "OK", "Email") or a message id ("label_open") is none.
pub(super) fn pair(english: &str, vietnamese: &str) -> Option<(String, Vec<String>)> {
    if is_message_id(english.trim()) {
        return None;
    }
    let (english, vietnamese) = (clean(english), clean(vietnamese));
    let english_split: Vec<&str> = english.split(' ').collect();
    if english_split.len() > MAX_ENGLISH_WORDS || !english_split.iter().all(|w| is_english_word(w)) {
        return None;
    }
    let words: Vec<String> = english_words(&english).collect();
    let syllables: Vec<&str> = vietnamese.split(|c: char| c == '-' || c.is_whitespace()).filter(|s| !s.is_empty()).collect();
    if words.is_empty() || syllables.is_empty() || syllables.len() > MAX_PHRASE_WORDS || !syllables.iter().all(|s| s.chars().all(char::is_alphabetic)) {
        return None;
    }
    let english_parts: HashSet<&str> = english.split([' ', '-']).collect();
    if syllables.iter().any(|s| english_parts.contains(s)) {
        return None;
    }
    Some((syllables.iter().map(|s| key("vi", s)).collect::<Vec<_>>().join(" "), words))
}

/// `open_file`, `label_change`: an id a program looks its message up by, not English.
fn is_message_id(s: &str) -> bool {
    let mut parts = s.split('_');
    let first = parts.next().unwrap_or_default();
    let rest: Vec<&str> = parts.collect();
    !first.is_empty()
        && first.bytes().all(|c| c.is_ascii_lowercase())
        && !rest.is_empty()
        && rest.iter().all(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()))
}

/// A lower-case English word, perhaps with an apostrophe or hyphen inside ("don't", "e-mail").
fn is_english_word(w: &str) -> bool {
    let b = w.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_lowercase()
        && b[b.len() - 1].is_ascii_lowercase()
        && b.windows(2).all(|p| p[0].is_ascii_lowercase() || p[1].is_ascii_lowercase())
        && b.iter().all(|c| c.is_ascii_lowercase() || *c == b'\'' || *c == b'-')
}

/// A message's text as a phrase: format specifiers (`%s`, `%1$d`, `%(name)s`, `${x}`, `$x`, `{0}`), markup
/// (`<b>`, `&amp;`) and escapes (`\n`) taken out, accelerators (`_Open`, `&File`, `Mở (_O)`) and a trailing
/// colon or ellipsis dropped, spaces collapsed; lower-cased, in NFC.
fn clean(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            '%' => {
                // A printf specifier: flags, width, precision and length up to its conversion letter.
                let mut j = i + 1;
                if next == Some('(') {
                    while j < chars.len() && chars[j] != ')' {
                        j += 1;
                    }
                    j += 1;
                }
                while j < chars.len() && (chars[j].is_ascii_digit() || "-+ #.*$'".contains(chars[j])) {
                    j += 1;
                }
                while j < chars.len() && "hlzjtLIq".contains(chars[j]) {
                    j += 1;
                }
                i = (j + 1).min(chars.len());
                out.push(' ');
            }
            '$' if next == Some('{') => {
                i = close(&chars, i, '}');
                out.push(' ');
            }
            '$' if next.is_some_and(|n| n.is_alphanumeric() || n == '_') => {
                i += 1;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                out.push(' ');
            }
            '{' => {
                i = close(&chars, i, '}');
                out.push(' ');
            }
            '<' => {
                i = close(&chars, i, '>');
                out.push(' ');
            }
            '&' if next.is_some_and(char::is_alphanumeric) && entity_end(&chars, i).is_some() => {
                i = entity_end(&chars, i).unwrap_or(i) + 1;
                out.push(' ');
            }
            '\\' if next.is_some() => {
                i += 2;
                out.push(' ');
            }
            // "Mở (_O)": the accelerator a translation writes after its words.
            '(' if matches!(next, Some('_' | '&' | '~')) && chars.get(i + 2).is_some_and(|c| c.is_alphanumeric()) && chars.get(i + 3) == Some(&')') => {
                i += 4;
                out.push(' ');
            }
            '_' | '&' | '~' if next.is_some_and(|n| n.is_alphanumeric()) => i += 1,
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    let mut text = out.split_whitespace().collect::<Vec<_>>().join(" ");
    loop {
        let trimmed = text.trim_end_matches(['…', ':', '：']).trim_end_matches("...").trim_end();
        if trimmed.len() == text.len() {
            break;
        }
        text = trimmed.to_owned();
    }
    text.to_lowercase().nfc().collect()
}

/// Where the bracket opened at `open` closes, plus one (the end of the text if it never does).
fn close(chars: &[char], open: usize, closing: char) -> usize {
    chars[open..].iter().position(|c| *c == closing).map_or(chars.len(), |p| open + p + 1)
}

/// The `;` of an HTML entity (`&amp;`, `&#39;`) that starts at `at`.
fn entity_end(chars: &[char], at: usize) -> Option<usize> {
    let mut j = at + 1;
    if chars.get(j) == Some(&'#') {
        j += 1;
    }
    let start = j;
    while j < chars.len() && chars[j].is_ascii_alphanumeric() && j - start < 10 {
        j += 1;
    }
    (j > start && chars.get(j) == Some(&';')).then_some(j)
}

/// A gettext catalog's messages (GNU gettext's `.mo` format, either byte order): each original with its
/// translation, the singular of a plural message, its context dropped, the header and untranslated messages
/// left out. Read here rather than by a crate: the `gettext` crate looks messages up but does not list them
/// (and pulls in the unmaintained `encoding`), and `polib` reads `.po` files only; the format is five
/// numbers and two tables of (length, offset), each bounds-checked here.
pub(super) fn messages(bytes: &[u8]) -> Result<Vec<(&str, &str)>, String> {
    let word = |at: usize, little: bool| -> Result<usize, String> {
        let b: [u8; 4] = bytes.get(at..at + 4).and_then(|s| s.try_into().ok()).ok_or_else(|| format!("cut short at byte {at}"))?;
        Ok(if little { u32::from_le_bytes(b) } else { u32::from_be_bytes(b) } as usize)
    };
    let little = match word(0, true)? {
        0x9504_12de => true,
        0xde12_0495 => false,
        _ => return Err("not a gettext catalog (.mo)".into()),
    };
    if word(4, little)? >> 16 > 1 {
        return Err("a .mo revision this reader does not know".into());
    }
    let (count, originals, translations) = (word(8, little)?, word(12, little)?, word(16, little)?);
    let string = |table: usize, i: usize| -> Result<&str, String> {
        let (len, at) = (word(table + 8 * i, little)?, word(table + 8 * i + 4, little)?);
        let raw = bytes.get(at..at.checked_add(len).ok_or("a string past the end")?).ok_or_else(|| format!("string {i} past the end"))?;
        std::str::from_utf8(raw).map_err(|_| format!("string {i} is not UTF-8"))
    };
    let mut out = Vec::with_capacity(count.min(bytes.len() / 16));
    for i in 0..count {
        let (original, translation) = (string(originals, i)?, string(translations, i)?);
        // "context\u{4}original\0plural", "translation\0plural translation"
        let original = original.rsplit('\u{4}').next().unwrap_or_default().split('\0').next().unwrap_or_default();
        let translation = translation.split('\0').next().unwrap_or_default();
        if !original.is_empty() && !translation.is_empty() {
            out.push((original, translation));
        }
    }
    Ok(out)
}

/// The fewest messages a Vietnamese unit and its English word must share to be paired (`aligned_pairs`).
const MIN_SHARED_MESSAGES: u32 = 3;
/// The least Dice coefficient of a pair (`aligned_pairs`): the messages they share over the mean of the
/// messages each is in.
const MIN_DICE: f64 = 0.3;
/// The fewest English content words and Vietnamese syllables a message must have to be read as a sentence
/// (`aligned_pairs`; shorter ones are `pair`'s), and the most syllables.
const SENTENCE_WORDS: usize = 2;
const SENTENCE_SYLLABLES: std::ops::RangeInclusive<usize> = 3..=60;

/// Adds the words the catalogs' longer messages teach (`aligned_pairs`) for the keys no earlier source gave,
/// each pair's English as the key's only sense.
pub(super) fn add_aligned(dir: &Path, names: &[&str], b: &mut Builder) -> Result<(), DictionaryError> {
    let known = b.known();
    let mut files = Vec::with_capacity(names.len());
    for name in names {
        let path = dir.join(name);
        files.push((std::fs::read(&path).map_err(|e| DictionaryError::Io(path.clone(), e))?, path));
    }
    let mut all = Vec::new();
    for (bytes, path) in &files {
        all.extend(messages(bytes).map_err(|e| DictionaryError::Format(path.clone(), e))?);
    }
    for (unit, english) in aligned_pairs(&all) {
        b.add_unless_known(&unit, &english, 0, known);
    }
    Ok(())
}

/// Vietnamese words paired with their English by the messages they appear in together: programs' sentences
/// ("Could not change the password", "Không thể thay đổi mật khẩu") say in both languages what the short
/// strings `pair` reads do not ("thay đổi", change, is one of those; "bảo hành", warranty, is not). Each
/// distinct message whose English has `SENTENCE_WORDS` content words or more and whose Vietnamese has
/// `SENTENCE_SYLLABLES` syllables is counted once: its keyed syllables and adjacent pairs of syllables
/// ("units") against its English words. A unit is paired with the English word it shares the most messages
/// with, by Dice, where that word shares the most with it in turn (mutual best: a unit's neighbour in
/// many messages seldom is), in `MIN_SHARED_MESSAGES` messages or more and a Dice of `MIN_DICE` or more; a
/// unit that holds its English word itself (a name or a loanword left untranslated) is not paired.
fn aligned_pairs(messages: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut seen: HashSet<(&str, &str)> = HashSet::new();
    // Units and words numbered in the order first met (`Interner`), with the number of messages each is in.
    let (mut units, mut words) = ((Interner::default(), Vec::<u32>::new()), (Interner::default(), Vec::<u32>::new()));
    let count = |(strings, counts): &mut (Interner, Vec<u32>), s: &str| {
        let (id, new) = strings.intern(s);
        if new {
            counts.push(0);
        }
        counts[id as usize] += 1;
        id
    };
    let mut together: HashMap<(u32, u32), u32> = HashMap::new();
    for &(english, vietnamese) in messages {
        if is_message_id(english.trim()) || !seen.insert((english, vietnamese)) {
            continue;
        }
        let mut en: Vec<String> = english_words(&clean(english)).collect();
        en.sort();
        en.dedup();
        let syllables: Vec<String> = clean(vietnamese).split(|c: char| !c.is_alphabetic()).filter(|s| !s.is_empty()).map(|s| key("vi", s)).collect();
        if en.len() < SENTENCE_WORDS || !SENTENCE_SYLLABLES.contains(&syllables.len()) {
            continue;
        }
        let mut mine: Vec<String> = syllables.windows(2).map(|w| format!("{} {}", w[0], w[1])).collect();
        mine.extend(syllables);
        mine.sort();
        mine.dedup();
        let (u, w): (Vec<u32>, Vec<u32>) = (mine.iter().map(|s| count(&mut units, s)).collect(), en.iter().map(|s| count(&mut words, s)).collect());
        for &a in &u {
            for &e in &w {
                *together.entry((a, e)).or_default() += 1;
            }
        }
    }
    // Each unit's best word and each word's best unit: the higher Dice, then (a word's unit) the pair of
    // syllables over the syllable alone, as a word's syllables are always met together with it, then the
    // lower id (the first met).
    let (mut best_word, mut best_unit) = (HashMap::<u32, (f64, u32)>::new(), HashMap::<u32, (f64, u32)>::new());
    let syllables = |a: u32| units.0.get(a).split(' ').count();
    for (&(a, e), &n) in &together {
        if n < MIN_SHARED_MESSAGES {
            continue;
        }
        let d = 2.0 * n as f64 / (units.1[a as usize] + words.1[e as usize]) as f64;
        if best_word.get(&a).is_none_or(|&(h, o)| d > h || (d == h && e < o)) {
            best_word.insert(a, (d, e));
        }
        if best_unit.get(&e).is_none_or(|&(h, o)| d > h || (d == h && (syllables(a), std::cmp::Reverse(a)) > (syllables(o), std::cmp::Reverse(o)))) {
            best_unit.insert(e, (d, a));
        }
    }
    let mut pairs: Vec<(String, String)> = best_word
        .into_iter()
        .filter(|&(a, (d, e))| d >= MIN_DICE && best_unit.get(&e).is_some_and(|&(_, u)| u == a))
        .map(|(a, (_, e))| (units.0.get(a).to_owned(), words.0.get(e).to_owned()))
        .filter(|(u, e)| !u.split(' ').any(|s| s == e))
        .collect();
    pairs.sort();
    pairs
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A `.mo` file holding `messages` (original, translation), little-endian, as msgfmt writes one.
    pub fn mo(messages: &[(&str, &str)]) -> Vec<u8> {
        let mut sorted = messages.to_vec();
        sorted.sort();
        let n = sorted.len();
        let (originals, translations) = (28, 28 + 8 * n);
        let mut strings = Vec::new();
        let mut tables = (Vec::new(), Vec::new());
        let start = 28 + 16 * n;
        for (o, t) in &sorted {
            tables.0.push((o.len(), start + strings.len()));
            strings.extend_from_slice(o.as_bytes());
            strings.push(0);
            tables.1.push((t.len(), start + strings.len()));
            strings.extend_from_slice(t.as_bytes());
            strings.push(0);
        }
        let mut out = Vec::new();
        for w in [0x9504_12de_usize, 0, n, originals, translations, 0, 0] {
            out.extend_from_slice(&(w as u32).to_le_bytes());
        }
        for (len, at) in tables.0.iter().chain(&tables.1) {
            out.extend_from_slice(&(*len as u32).to_le_bytes());
            out.extend_from_slice(&(*at as u32).to_le_bytes());
        }
        out.extend_from_slice(&strings);
        out
    }

    /// A localization file named `name` (`add`): a `.mo` catalog of `messages`, or an empty CLDR or OpenTTD file.
    pub fn empty_or_mo(name: &str, messages: &[(&str, &str)]) -> Vec<u8> {
        if name.ends_with(".xml") {
            b"<ldml/>".to_vec()
        } else if name.ends_with(".lng") {
            let mut b = vec![0u8; 546];
            b[..4].copy_from_slice(b"LANG");
            b
        } else {
            mo(messages)
        }
    }

    #[test]
    fn a_catalogs_messages_are_read_in_either_byte_order_and_a_damaged_one_is_an_error() {
        let file =
            mo(&[("", "Content-Type: text/plain; charset=UTF-8\n"), ("_Open", "_Mở"), ("menu\u{4}File", "Tập tin"), ("%d file\0%d files", "%d tập tin")]);
        let mut read = messages(&file).unwrap();
        read.sort();
        assert_eq!(read, [("%d file", "%d tập tin"), ("File", "Tập tin"), ("_Open", "_Mở")]);
        // The same catalog big-endian: every number of the header and the tables byte-swapped.
        let mut big = file.clone();
        let words = 7 + 4 * 4;
        for w in 0..words {
            big[4 * w..4 * w + 4].reverse();
        }
        assert_eq!(messages(&big).unwrap().len(), 3);
        assert!(messages(b"not a catalog").unwrap_err().contains("not a gettext catalog"));
        assert!(messages(&file[..24]).unwrap_err().contains("cut short"), "its tables cut short");
        assert!(messages(&file[..40]).unwrap_err().contains("past the end"), "its strings cut short");
        let mut wrong = file.clone();
        wrong[28..32].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(messages(&wrong).is_err(), "a length past the end of the file");
    }

    #[test]
    fn cldr_files_pair_the_texts_of_the_same_element_and_openttd_files_the_strings_of_the_same_id() {
        let en = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE ldml SYSTEM "../../common/dtd/ldml.dtd">
<ldml><identity><language type="en"/></identity>
<localeDisplayNames><territories><territory type="VN">Vietnam</territory><territory type="FR">France</territory>
<territory type="GB" alt="short">UK</territory></territories></localeDisplayNames>
<annotations><annotation cp="🌊">ocean | water | wave</annotation><annotation cp="🌊" type="tts">water wave</annotation>
<annotation cp="&amp;">ampersand</annotation></annotations></ldml>"#;
        let vi = r#"<?xml version="1.0" encoding="UTF-8"?>
<ldml><identity><language type="vi"/></identity>
<localeDisplayNames><territories><territory type="VN" draft="contributed">Việt Nam</territory>
<territory type="GB">Vương quốc Anh</territory></territories></localeDisplayNames>
<annotations><annotation cp="🌊">sóng | nước | đại dương</annotation><annotation cp="🌊" type="tts">sóng nước</annotation>
<annotation cp="&amp;">dấu và</annotation></annotations></ldml>"#;
        // France has no Vietnamese, the short UK none either (its `alt` differs); a `draft` is not part of
        // the path.
        assert_eq!(
            cldr_pairs(en, vi).unwrap()[0],
            [("Vietnam", "Việt Nam"), ("ocean | water | wave", "sóng | nước | đại dương"), ("water wave", "sóng nước"), ("ampersand", "dấu và")]
                .map(|(e, v)| (e.to_owned(), v.to_owned()))
        );
        assert!(cldr_pairs("<ldml><a>x</b></ldml>", vi).is_err(), "mismatched tags");
        // Keywords: "sóng" and "wave" share all three of their emoji; "nước" and "water" two only.
        let annotations = |keywords: [&str; 4]| {
            let a: String = keywords.iter().enumerate().map(|(i, k)| format!("<annotation cp=\"{i}\">{k}</annotation>")).collect();
            format!("<ldml><annotations>{a}</annotations></ldml>")
        };
        let en = annotations(["wave | water", "wave | sea", "wave | surf", "water"]);
        let vi = annotations(["sóng | nước", "sóng | biển", "sóng | lướt", "nước"]);
        assert_eq!(cldr_pairs(&en, &vi).unwrap()[1], [("wave".to_owned(), "sóng".to_owned())]);

        // Two language files of strgen's format: 4 strings in tab 0 and 1 in tab 1; the second and third
        // untranslated.
        let lng = |tabs: &[&[&str]]| {
            let mut b = vec![0u8; 546];
            b[..4].copy_from_slice(b"LANG");
            for (i, t) in tabs.iter().enumerate() {
                b[88 + 2 * i..90 + 2 * i].copy_from_slice(&(t.len() as u16).to_le_bytes());
            }
            for s in tabs.iter().flat_map(|t| t.iter()) {
                if s.len() >= 0xC0 {
                    b.extend_from_slice(&[0xC0 + (s.len() >> 8) as u8, s.len() as u8]);
                } else {
                    b.push(s.len() as u8);
                }
                b.extend_from_slice(s.as_bytes());
            }
            b
        };
        let long = "River ".repeat(40);
        let en = lng(&[&["River", "Town", "Bus", long.trim_end()], &["Coal Mine"]]);
        let vi = lng(&[&["Sông", "Town", "Bus", "Sông dài"], &["Mỏ than"]]);
        assert_eq!(
            openttd_pairs(&en, &vi).unwrap(),
            [("River", "Sông"), (long.trim_end(), "Sông dài"), ("Coal Mine", "Mỏ than")].map(|(e, v)| (e.to_owned(), v.to_owned()))
        );
        assert!(openttd_pairs(&en, &vi[..560]).is_err(), "cut short");
        assert!(openttd_pairs(b"not a language file", &vi).is_err());
    }

    #[test]
    fn short_messages_pair_their_vietnamese_syllables_with_their_english_words() {
        let k = |s: &str| s.split(' ').map(|w| key("vi", w)).collect::<Vec<_>>().join(" ");
        assert_eq!(pair("_Change", "_Thay đổi"), Some((k("thay đổi"), vec!["change".to_owned()])));
        assert_eq!(pair("River:", "Sông:"), Some((k("sông"), vec!["river".to_owned()])));
        assert_eq!(pair("Open File…", "Mở tập tin (_O)…"), Some((k("mở tập tin"), vec!["open".to_owned(), "file".to_owned()])));
        assert_eq!(pair("Delete %s", "Xoá %s"), Some((k("xoá"), vec!["delete".to_owned()])));
        assert_eq!(pair("<b>Person</b>", "<b>Người</b>"), Some((k("người"), vec!["person".to_owned()])));
        assert_eq!(pair("E-mail", "Thư điện tử"), Some((k("thư điện tử"), vec!["mail".to_owned()])));
        // Untranslated, a message id, a sentence, too many syllables, digits: none.
        assert_eq!(pair("Email", "Email"), None);
        assert_eq!(pair("OK", "OK"), None);
        assert_eq!(pair("label_open", "Mở"), None);
        assert_eq!(pair("Could not open the file", "Không thể mở tập tin"), None);
        assert_eq!(pair("Preferences", "Các tùy thích của ứng dụng"), None);
        assert_eq!(pair("Page 5", "Trang 5"), None);
        assert_eq!(pair("The", "Cái"), None, "no content word");
    }

    /// Packing the same catalogs twice gives the same bytes: the phrases are added in their keys' order, not
    /// a hash map's, so English words get the same ids every time.
    #[test]
    fn the_same_catalogs_give_the_same_dictionary_bytes_every_time() {
        let dir = tempfile::tempdir().unwrap();
        let syllables = ["mở", "lưu", "xoá", "tìm", "chạy", "đóng", "in", "gửi", "nhận", "chép", "dán", "cắt"];
        let words = ["open", "save", "delete", "find", "run", "close", "print", "send", "receive", "copy", "paste", "cut"];
        let mut messages = vec![("".to_owned(), "Content-Type: text/plain; charset=UTF-8\n".to_owned())];
        for (i, (s, w)) in syllables.iter().zip(words).enumerate() {
            for (t, (s2, w2)) in syllables.iter().zip(words).enumerate().filter(|&(t, _)| t != i) {
                messages.push((format!("{w} {w2}"), format!("{s} {s2}")));
                messages.push((format!("_{w}{t}"), format!("_{s} {s2} {s}")));
            }
        }
        let borrowed: Vec<(&str, &str)> = messages.iter().map(|(e, v)| (e.as_str(), v.as_str())).collect();
        std::fs::write(dir.path().join("a.mo"), mo(&borrowed)).unwrap();
        let packed = || {
            let mut b = Builder::default();
            add(dir.path(), &["a.mo"], &mut b).unwrap();
            b.finish().to_bytes(0)
        };
        let first = packed();
        assert!(first.len() > 1_000, "the catalog gave keys: {} bytes", first.len());
        for _ in 0..4 {
            assert!(packed() == first, "the same bytes");
        }
    }

    #[test]
    fn programs_sentences_pair_a_vietnamese_word_with_the_english_word_it_goes_with() {
        let sentences = [
            ("Could not change the password", "Không thể thay đổi mật khẩu"),
            ("The password is too short", "Mật khẩu quá ngắn"),
            ("Enter the password again", "Nhập lại mật khẩu"),
            ("Change the password of the account", "Thay đổi mật khẩu của tài khoản"),
            ("Could not open the file", "Không thể mở tập tin"),
            ("Could not save the file", "Không thể lưu tập tin"),
            ("Could not delete the account", "Không thể xoá tài khoản"),
            ("Open the Python file", "Mở tập tin Python"),
            ("Open the Python file", "Mở tập tin Python"),
            ("Run the Python script", "Chạy văn lệnh Python"),
            ("Python script failed", "Văn lệnh Python bị lỗi"),
            ("label_password_short", "Mật khẩu quá ngắn"),
        ];
        let pairs = aligned_pairs(&sentences);
        let k = |s: &str| s.split(' ').map(|w| key("vi", w)).collect::<Vec<_>>().join(" ");
        let of = |unit: &str| pairs.iter().find(|(u, _)| *u == k(unit)).map(|(_, e)| e.as_str());
        assert_eq!(of("mật khẩu"), Some("password"), "{pairs:?}");
        assert_eq!(of("tập tin"), Some("file"));
        // "không thể" (cannot) goes with "not" in every message it is in ("could" is a stopword), and so do
        // "không" and "thể": the pair is the word's unit, never its syllables.
        assert_eq!(of("không thể"), Some("not"));
        assert_eq!((of("không"), of("thể"), of("mật"), of("tập")), (None, None, None, None));
        // A unit with its English inside it (a name left untranslated) is not paired; a repeated message
        // counts once and a message id not at all, so "mở" is in two messages, too few.
        assert_eq!(of("python"), None);
        assert_eq!(of("mở"), None);
        assert!(pairs.iter().all(|(_, e)| e != "the"), "no stopword");
    }
}
