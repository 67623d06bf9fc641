//! The model's own nearest English terms: a question in one of the translated languages
//! (`TRANSLATED_LANGUAGES`) on a site with English documents has each of its words embedded by the main
//! model, and a word whose vector is within cosine `THRESHOLD` of one of the site's English index terms
//! (embedded the same way) also searches that term in BM25, at `WEIGHT` of its score. It finds what the
//! dictionaries lack: names and loanwords in the question's script ("Бейонсе" -> "beyonce"), inflections
//! the dictionary does not list, newer words.
//!
//! Why: measured in process on XQuAD-R before it was built (docs/performance.md, "The model's own nearest
//! English terms"): Arabic questions answered 0.839 -> 0.852, Greek, Russian, Turkish and Spanish about a
//! point more, off-topic questions answered as before. English function words and terms of one or two
//! letters are not landed on ("de" -> "of" answered an off-topic question); word pairs and languages
//! without a dictionary (their own words searched on English text) answered more off-topic questions.
//!
//! Cost (docs/performance.md, "The model's own nearest English terms: built"): a site's terms are embedded
//! once, in the background, when its first such question finds them missing (from the site's in-memory BM25
//! index, once it is built), one site at a time in the order asked, each batch in its turn with the
//! questions (XQuAD's 5,022 in about 8 s, SciFact's 33,467 in 30-60 s), kept as int8 with a scale a term (2 MB and 13.7 MB) and
//! saved beside the site's vector index, so a restart reads them; a newer generation of the site's index
//! embeds only its new terms, and questions use the older ones meanwhile. A question's words the site has not
//! met are embedded with it, in the same call (about 1.8 ms a word), and compared with every term (about 2 ms
//! a word for 33,000 terms), before its BM25 search (which otherwise runs while the question is embedded).

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::domain::SiteId;
use crate::knowledge::embedding::model::Purpose;
use crate::knowledge::embedding::{EmbedError, Embedder};
use crate::knowledge::search::bm25::{Bm25Index, Bm25Indexes};
use crate::store::Store;

/// The least cosine between a question's word and an index term for the term to be searched.
pub const THRESHOLD: f32 = 0.90;
/// The share of its BM25 score a nearest term adds.
pub const WEIGHT: f64 = 0.3;
/// A question's words embedded at most (the first ones, each once).
pub const MAX_WORDS: usize = 16;
/// Terms embedded in one go while a site's terms are made: a question's embedding waits for at most one.
const BATCH: usize = 32;
/// Questions' words a site remembers the nearest term of.
const WORD_CACHE: usize = 4096;
/// After a failed build, the site's next one waits this long.
const RETRY_AFTER: Duration = Duration::from_secs(60);
/// How long a site's terms wait for its in-memory index to be built (a large site's takes seconds).
const INDEX_WAIT: Duration = Duration::from_secs(120);

/// English index terms a word may not land on: function words, which a question's own function words
/// are nearest ("de" -> "of"). Terms of one or two letters and numbers are left out too.
const FUNCTION_WORDS: &[&str] = &[
    "about", "after", "all", "also", "and", "any", "are", "been", "between", "both", "but", "can", "could", "did", "does", "each", "every", "for", "from",
    "get", "give", "had", "has", "have", "her", "here", "held", "high", "his", "hold", "how", "into", "its", "just", "may", "more", "most", "must", "new",
    "not", "one", "only", "our", "out", "per", "set", "she", "should", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this",
    "those", "time", "too", "two", "very", "was", "were", "what", "when", "where", "which", "while", "who", "why", "will", "with", "would", "yes", "you",
    "your",
];

/// Whether an index term may be landed on.
fn is_content(term: &str) -> bool {
    term.chars().count() > 2 && !term.chars().all(|c| c.is_ascii_digit()) && !FUNCTION_WORDS.contains(&term)
}

/// The words of a question that are embedded: lowercased, split at every character that is not a letter
/// or digit, of two characters or more, each once, at most `MAX_WORDS`.
pub fn words(question: &str) -> Vec<String> {
    let lower = question.to_lowercase();
    let mut out: Vec<String> = Vec::new();
    for w in lower.split(|c: char| !c.is_alphanumeric()).filter(|w| w.chars().count() > 1) {
        if out.len() == MAX_WORDS {
            break;
        }
        if !out.iter().any(|o| o == w) {
            out.push(w.to_owned());
        }
    }
    out
}

/// The dot product of int8 codes and a vector, in 16 lanes (which the compiler vectorizes; a sum in
/// order cannot be reordered: 3.6 times slower, measured).
fn dot(codes: &[i8], v: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 16];
    let (c16, v16) = (codes.chunks_exact(16), v.chunks_exact(16));
    let rest: f32 = c16.remainder().iter().zip(v16.remainder()).map(|(c, x)| *c as f32 * x).sum();
    for (c, x) in c16.zip(v16) {
        for k in 0..16 {
            lanes[k] += c[k] as f32 * x[k];
        }
    }
    lanes.iter().sum::<f32>() + rest
}

/// One site's index terms and their vectors (the main model's, embedded as queries), as int8.
#[derive(Debug)]
pub struct TermVectors {
    /// The generation of the index whose terms these are.
    pub generation: i64,
    terms: Vec<Box<str>>,
    /// By term, `dims` values each.
    codes: Vec<i8>,
    /// By term: what a code is worth.
    scales: Vec<f32>,
    dims: usize,
    /// Questions' words already compared, and the term each landed on (by index): a word met again costs
    /// neither an embedding nor a comparison. At most `WORD_CACHE`, emptied when full.
    seen: Mutex<HashMap<Box<str>, Option<u32>>>,
    /// How many of its terms were embedded to make it (the others came from the site's previous terms,
    /// in memory or saved).
    pub embedded: usize,
}

/// A question's words as a site's `TermVectors` remembered them when the question began (`lookup`), in
/// the question's order.
#[derive(Debug, Default, Clone)]
pub struct Lookup {
    /// Each word, and what an earlier question found for it: the index of its nearest term, or `Some(None)`
    /// when none was close; `None` when no earlier question had it (embedded with this one).
    words: Vec<(String, Option<Option<u32>>)>,
}

impl Lookup {
    /// The words no earlier question had, in order: `nearest` needs their vectors.
    pub fn unseen(&self) -> impl Iterator<Item = &str> {
        self.words.iter().filter(|(_, t)| t.is_none()).map(|(w, _)| w.as_str())
    }
}

impl TermVectors {
    fn empty(generation: i64) -> TermVectors {
        TermVectors { generation, terms: Vec::new(), codes: Vec::new(), scales: Vec::new(), dims: 0, seen: Default::default(), embedded: 0 }
    }

    fn push(&mut self, term: Box<str>, vector: &[f32]) {
        if self.terms.is_empty() {
            self.dims = vector.len();
        }
        debug_assert_eq!(vector.len(), self.dims);
        let max = vector.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
        self.codes.extend(vector.iter().map(|v| (v / scale).round().clamp(-127.0, 127.0) as i8));
        self.scales.push(scale);
        self.terms.push(term);
    }

    fn copy_from(&mut self, other: &TermVectors, i: usize) {
        if self.terms.is_empty() {
            self.dims = other.dims;
        }
        self.codes.extend_from_slice(&other.codes[i * other.dims..(i + 1) * other.dims]);
        self.scales.push(other.scales[i]);
        self.terms.push(other.terms[i].clone());
    }

    /// What the site remembers of `words`: the nearest term of each word an earlier question had; the
    /// others (`Lookup::unseen`) need their vectors. Taken once, so that a question's answer does not
    /// depend on what other questions do to the cache meanwhile (emptying it when full).
    pub fn lookup(&self, words: &[String]) -> Lookup {
        let seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        Lookup { words: words.iter().map(|w| (w.clone(), seen.get(w.as_str()).copied())).collect() }
    }

    /// The terms nearest a question's words, each at `WEIGHT`: for every word, its nearest term when their
    /// cosine is at least `THRESHOLD`, each term once. `vectors` are those of `lookup.unseen()`, in its
    /// order (as `Embedder` gives them: of norm 1).
    pub fn nearest(&self, lookup: &Lookup, vectors: &[Vec<f32>]) -> Vec<(String, f64)> {
        let mut vectors = vectors.iter();
        // The unseen words and their nearest terms, for the cache.
        let mut new: Vec<(&str, Option<u32>)> = Vec::new();
        let found: Vec<Option<u32>> = lookup
            .words
            .iter()
            .map(|(w, known)| {
                known.unwrap_or_else(|| {
                    let term = vectors.next().and_then(|v| self.nearest_one(v));
                    new.push((w.as_str(), term));
                    term
                })
            })
            .collect();
        {
            let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
            if seen.len() + new.len() > WORD_CACHE {
                seen.clear();
            }
            seen.extend(new.into_iter().map(|(w, t)| (Box::from(w), t)));
        }
        let mut out: Vec<(String, f64)> = Vec::new();
        for i in found.into_iter().flatten() {
            let term = &self.terms[i as usize];
            if !out.iter().any(|(t, _)| **t == **term) {
                out.push((term.to_string(), WEIGHT));
            }
        }
        out
    }

    /// The index of the term nearest `word`, when their cosine is at least `THRESHOLD`.
    fn nearest_one(&self, word: &[f32]) -> Option<u32> {
        if word.len() != self.dims || self.dims == 0 {
            return None;
        }
        let mut best = (0, f32::MIN);
        for (i, (codes, scale)) in self.codes.chunks_exact(self.dims).zip(&self.scales).enumerate() {
            let cos = dot(codes, word) * scale;
            if cos > best.1 {
                best = (i, cos);
            }
        }
        (best.1 >= THRESHOLD).then_some(best.0 as u32)
    }

    /// Terms held.
    pub fn len(&self) -> usize {
        self.terms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// About how many bytes it holds.
    pub fn bytes(&self) -> usize {
        self.codes.len() + self.scales.len() * 4 + self.terms.iter().map(|t| t.len() + std::mem::size_of::<Box<str>>()).sum::<usize>()
    }

    /// The terms of `index` and their vectors: those this one holds copied, the others embedded
    /// (blocking, `BATCH` at a time, each batch in its `turn`).
    fn next(previous: Option<&TermVectors>, index: &Bm25Index, embedder: &Embedder, turn: Turn) -> Result<TermVectors, EmbedError> {
        let known: HashMap<&str, usize> = previous.map(|p| p.terms.iter().enumerate().map(|(i, t)| (&**t, i)).collect()).unwrap_or_default();
        let mut out = TermVectors::empty(index.generation);
        let mut missing: Vec<String> = Vec::new();
        for term in index.terms().filter(|t| is_content(t)) {
            match (previous, known.get(term)) {
                (Some(p), Some(&i)) => out.copy_from(p, i),
                _ => missing.push(term.to_owned()),
            }
        }
        for batch in missing.chunks(BATCH) {
            let vectors = match turn {
                Turn::InLine => embedder.embed_in_turn_blocking(batch, Purpose::Query)?,
                Turn::Now => embedder.embed_blocking(batch, Purpose::Query)?,
            };
            for (term, vector) in batch.iter().zip(vectors) {
                out.push(term.as_str().into(), &vector);
            }
        }
        out.embedded = missing.len();
        Ok(out)
    }
}

/// The start of a saved terms file.
const MAGIC: &[u8; 8] = b"SBTERMS1";

impl TermVectors {
    /// The file: `MAGIC`, the model's fingerprint (length-prefixed), the generation, the
    /// dimensions and the term count, then each term (length-prefixed UTF-8), its scale and its codes; all
    /// little-endian. Written as it goes (no copy of the codes in memory).
    fn write_to(&self, out: &mut impl std::io::Write, fingerprint: &str) -> std::io::Result<()> {
        out.write_all(MAGIC)?;
        out.write_all(&(fingerprint.len() as u32).to_le_bytes())?;
        out.write_all(fingerprint.as_bytes())?;
        out.write_all(&self.generation.to_le_bytes())?;
        out.write_all(&(self.dims as u32).to_le_bytes())?;
        out.write_all(&(self.terms.len() as u32).to_le_bytes())?;
        for (i, term) in self.terms.iter().enumerate() {
            out.write_all(&(term.len() as u16).to_le_bytes())?;
            out.write_all(term.as_bytes())?;
            out.write_all(&self.scales[i].to_le_bytes())?;
            let codes = &self.codes[i * self.dims..(i + 1) * self.dims];
            // i8 to u8 bit for bit.
            out.write_all(&codes.iter().map(|c| c.to_le_bytes()[0]).collect::<Vec<u8>>())?;
        }
        out.flush()
    }

    /// Reads what `write_to` wrote for the model of `fingerprint`; `None` for another model's, another
    /// format's or a damaged file.
    fn from_bytes(bytes: &[u8], fingerprint: &str) -> Option<TermVectors> {
        let mut at = 0usize;
        let mut take = |n: usize| -> Option<&[u8]> {
            let part = bytes.get(at..at.checked_add(n)?)?;
            at += n;
            Some(part)
        };
        if take(8)? != MAGIC {
            return None;
        }
        let len = u32::from_le_bytes(take(4)?.try_into().ok()?) as usize;
        if take(len)? != fingerprint.as_bytes() {
            return None;
        }
        let mut out = TermVectors::empty(i64::from_le_bytes(take(8)?.try_into().ok()?));
        out.dims = u32::from_le_bytes(take(4)?.try_into().ok()?) as usize;
        let count = u32::from_le_bytes(take(4)?.try_into().ok()?) as usize;
        for _ in 0..count {
            let len = u16::from_le_bytes(take(2)?.try_into().ok()?) as usize;
            let term = std::str::from_utf8(take(len)?).ok()?;
            let scale = f32::from_le_bytes(take(4)?.try_into().ok()?);
            let codes = take(out.dims)?;
            out.terms.push(term.into());
            out.scales.push(scale);
            out.codes.extend(codes.iter().map(|c| *c as i8));
        }
        (take(1).is_none() && out.dims > 0).then_some(out)
    }
}

/// Where a site's terms are saved, beside its vector index (`vector::remove_files` removes both).
fn path(dir: &Path, site: &SiteId) -> PathBuf {
    dir.join(format!("{site}.terms"))
}

/// How a build's batches get an embedding session.
#[derive(Debug, Clone, Copy)]
enum Turn {
    /// Each in its turn in the questions' line (the background worker, on the blocking pool).
    InLine,
    /// At once (`build_now`, which may be called from async code, where waiting in line would block).
    Now,
}

/// Sites whose terms are due, in the order their questions asked, and whether a worker builds them.
#[derive(Debug, Default)]
struct Due {
    sites: VecDeque<(SiteId, Arc<Slot>, i64)>,
    working: bool,
}

/// Lets a later question start a worker when this one panics (`Due::working`).
struct Working(Arc<Mutex<Due>>);

impl Drop for Working {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.lock().unwrap_or_else(|p| p.into_inner()).working = false;
        }
    }
}

/// Every site's term vectors, made in the background. Cheap to share behind an `Arc`.
#[derive(Debug, Default)]
pub struct NearestTerms {
    /// The directory the terms are saved in (the vector indexes'), so that a restart does not embed them
    /// again; `None`: not saved.
    dir: Option<PathBuf>,
    sites: Mutex<HashMap<SiteId, Arc<Slot>>>,
    /// Sites' terms are made by one worker, one site after another in the order asked, whatever the number
    /// of sites asking (after a restart, every site with questions in these languages): the background work
    /// takes one embedding session at most.
    due: Arc<Mutex<Due>>,
}

#[derive(Debug, Default)]
struct Slot {
    current: Mutex<Option<Arc<TermVectors>>>,
    /// The site was deleted: a build under way saves nothing.
    dropped: AtomicBool,
    /// When the next build may start (after a failed one).
    not_before: Mutex<Option<Instant>>,
}

impl NearestTerms {
    /// Terms saved in `dir` (the vector indexes' directory) and read from there at a site's first build.
    pub fn saved_in(dir: PathBuf) -> NearestTerms {
        NearestTerms { dir: Some(dir), ..Default::default() }
    }

    fn slot(&self, site: &SiteId) -> Arc<Slot> {
        self.sites.lock().unwrap_or_else(|p| p.into_inner()).entry(*site).or_default().clone()
    }

    /// The site's term vectors, of its index's generation or an older one; `None` until first made.
    pub fn get(&self, site: &SiteId) -> Option<Arc<TermVectors>> {
        let slot = self.sites.lock().unwrap_or_else(|p| p.into_inner()).get(site).cloned()?;
        slot.current.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Has the site's term vectors made in the background for its knowledge of `generation` (a question
    /// found them missing or older), unless they are of it already, the site waits its turn already, or its
    /// last build failed less than `RETRY_AFTER` ago. The worker takes the terms of the site's in-memory
    /// index once that holds `generation` (waiting up to `INDEX_WAIT` while it builds), and embeds each
    /// batch in its turn with the questions (`Embedder::embed_in_turn_blocking`), so steady load slows it
    /// down without stopping it.
    pub fn refresh(&self, embedder: &Arc<Embedder>, store: &Store, bm25: &Arc<Bm25Indexes>, site: &SiteId, generation: i64) {
        let slot = self.slot(site);
        if slot.holds(generation) || !slot.due_now() {
            return;
        }
        let mut due = self.due.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(queued) = due.sites.iter_mut().find(|(s, ..)| s == site) {
            queued.2 = queued.2.max(generation);
            return;
        }
        due.sites.push_back((*site, slot, generation));
        if std::mem::replace(&mut due.working, true) {
            return;
        }
        let (embedder, store, bm25, due, dir) = (embedder.clone(), store.clone(), bm25.clone(), self.due.clone(), self.dir.clone());
        crate::knowledge::in_background(move || {
            let _working = Working(due.clone());
            loop {
                let (site, slot, generation) = {
                    let mut due = due.lock().unwrap_or_else(|p| p.into_inner());
                    match due.sites.pop_front() {
                        Some(next) => next,
                        None => {
                            due.working = false;
                            return;
                        }
                    }
                };
                if slot.dropped.load(Ordering::SeqCst) || slot.holds(generation) {
                    continue;
                }
                let Some(index) = bm25.wait(&store, &site, generation, INDEX_WAIT) else {
                    tracing::info!(site = %site, generation, "no in-memory index to take the English terms from yet; a later question asks again");
                    continue;
                };
                if let Err(e) = slot.build(&embedder, &site, &index, dir.as_deref(), Turn::InLine) {
                    tracing::warn!(site = %site, error = %e, "cannot embed the site's English terms; questions in other languages are searched without them");
                    *slot.not_before.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now() + RETRY_AFTER);
                }
            }
        });
    }

    /// The sites whose terms are held in memory (or being made).
    pub fn held(&self) -> Vec<SiteId> {
        self.sites.lock().unwrap_or_else(|p| p.into_inner()).keys().copied().collect()
    }

    /// Forgets a deleted site's terms and the words its questions had.
    pub fn drop_site(&self, site: &SiteId) {
        if let Some(slot) = self.sites.lock().unwrap_or_else(|p| p.into_inner()).remove(site) {
            slot.dropped.store(true, Ordering::SeqCst);
        }
    }

    /// Makes the term vectors of `index` now and keeps them (blocking; benchmarks, before they ask).
    pub fn build_now(&self, embedder: &Embedder, site: &SiteId, index: &Bm25Index) -> Result<Arc<TermVectors>, EmbedError> {
        self.slot(site).build(embedder, site, index, self.dir.as_deref(), Turn::Now)
    }
}

impl Slot {
    /// Whether its terms are of `generation` or newer.
    fn holds(&self, generation: i64) -> bool {
        self.current.lock().unwrap_or_else(|p| p.into_inner()).as_ref().is_some_and(|c| c.generation >= generation)
    }

    /// Whether a build may start (none failed in the last `RETRY_AFTER`).
    fn due_now(&self) -> bool {
        self.not_before.lock().unwrap_or_else(|p| p.into_inner()).is_none_or(|t| Instant::now() >= t)
    }

    /// Makes the site's terms for `index` from those it holds, else those saved in `dir`, embedding only
    /// the others, keeps them and saves them (blocking).
    fn build(&self, embedder: &Embedder, site: &SiteId, index: &Bm25Index, dir: Option<&Path>, turn: Turn) -> Result<Arc<TermVectors>, EmbedError> {
        let started = Instant::now();
        let mut previous = self.current.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let (None, Some(dir)) = (&previous, dir) {
            previous = std::fs::read(path(dir, site)).ok().and_then(|b| TermVectors::from_bytes(&b, &embedder.fingerprint)).map(Arc::new);
        }
        // Saved for this very generation (a restart): the index's terms are those, taken as they are.
        let made = match previous.clone().filter(|p| p.generation == index.generation) {
            Some(same) => same,
            None => Arc::new(TermVectors::next(previous.as_deref(), index, embedder, turn)?),
        };
        tracing::info!(
            site = %site, generation = made.generation, terms = made.len(), embedded = made.embedded, bytes = made.bytes(),
            took_ms = started.elapsed().as_millis() as u64, "English terms embedded"
        );
        *self.current.lock().unwrap_or_else(|p| p.into_inner()) = Some(made.clone());
        if let Some(dir) = dir.filter(|_| made.embedded > 0 || previous.as_ref().is_none_or(|p| p.generation != made.generation)) {
            // Derived data: a file lost or damaged is embedded again, so no fsync; the rename keeps a
            // reader from half a file.
            let (file, tmp) = (path(dir, site), dir.join(format!("{site}.terms.tmp{}", std::process::id())));
            let saved = std::fs::create_dir_all(dir)
                .and_then(|_| std::fs::File::create(&tmp))
                .and_then(|f| made.write_to(&mut std::io::BufWriter::new(f), &embedder.fingerprint))
                .and_then(|_| if self.dropped.load(Ordering::SeqCst) { std::fs::remove_file(&tmp) } else { std::fs::rename(&tmp, &file) });
            if let Err(e) = saved {
                tracing::warn!(site = %site, error = %e, "cannot save the site's English terms; a restart embeds them again");
                let _ = std::fs::remove_file(&tmp);
            }
        }
        Ok(made)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_s_words_are_lowercased_split_at_punctuation_kept_once_and_bounded() {
        assert_eq!(words("Когда родилась Бейонсе? Бейонсе, a x"), vec!["когда", "родилась", "бейонсе"]);
        assert_eq!(words("¿Quién fundó Warszawa-Praga?"), vec!["quién", "fundó", "warszawa", "praga"]);
        let long: String = (0..40).map(|i| format!("w{i} ")).collect();
        assert_eq!(words(&long).len(), MAX_WORDS);
    }

    #[test]
    fn function_words_short_terms_and_numbers_are_not_landed_on() {
        for t in ["of", "the", "which", "1066", "uk"] {
            assert!(!is_content(t), "{t}");
        }
        for t in ["beyonce", "warsaw", "1066s", "nfl"] {
            assert!(is_content(t), "{t}");
        }
    }

    fn unit(v: &[f32]) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    #[test]
    fn saved_terms_read_back_for_the_same_model_only_and_a_damaged_file_is_refused() {
        let mut tv = TermVectors::empty(7);
        tv.push("warsaw".into(), &unit(&[1.0, 0.0, 0.0, 0.1]));
        tv.push("kraków".into(), &unit(&[0.0, 1.0, 0.3, 0.1]));
        let mut bytes = Vec::new();
        tv.write_to(&mut bytes, "e5-small:abc").unwrap();
        let back = TermVectors::from_bytes(&bytes, "e5-small:abc").unwrap();
        assert_eq!((back.generation, back.dims, &back.terms, &back.codes, &back.scales), (7, 4, &tv.terms, &tv.codes, &tv.scales));
        assert!(TermVectors::from_bytes(&bytes, "e5-small:abd").is_none(), "another model's terms");
        assert!(TermVectors::from_bytes(&bytes[..bytes.len() - 1], "e5-small:abc").is_none(), "cut short");
        assert!(TermVectors::from_bytes(&[bytes.as_slice(), &[0]].concat(), "e5-small:abc").is_none(), "trailing bytes");
        assert!(TermVectors::from_bytes(b"SBTERMS0", "e5-small:abc").is_none());
    }

    #[test]
    fn the_lanes_sum_what_a_plain_sum_does() {
        let codes: Vec<i8> = (0..37).map(|i| (i * 7 % 255 - 127) as i8).collect();
        let v: Vec<f32> = (0..37).map(|i| (i as f32 * 0.37).sin()).collect();
        let plain: f32 = codes.iter().zip(&v).map(|(c, x)| *c as f32 * x).sum();
        assert!((dot(&codes, &v) - plain).abs() < 1e-3, "{} vs {plain}", dot(&codes, &v));
    }

    #[test]
    fn a_word_lands_on_its_nearest_term_only_when_close_enough_and_each_term_once() {
        let mut tv = TermVectors::empty(3);
        tv.push("warsaw".into(), &unit(&[1.0, 0.0, 0.0, 0.1]));
        tv.push("praga".into(), &unit(&[0.0, 1.0, 0.0, 0.1]));
        let close = unit(&[0.95, 0.1, 0.0, 0.1]);
        let far = unit(&[0.5, 0.5, 0.7, 0.0]);
        let words: Vec<String> = ["варшава", "далеко", "варшавы"].map(String::from).to_vec();
        let first = tv.lookup(&words);
        assert_eq!(first.unseen().collect::<Vec<_>>(), words);
        assert_eq!(tv.nearest(&first, &[close.clone(), far, close]), vec![("warsaw".to_owned(), WEIGHT)]);
        // Met again, the words need no vectors; a new word among them does.
        let mixed: Vec<String> = ["далеко", "варшавы", "прага"].map(String::from).to_vec();
        let again = tv.lookup(&mixed);
        assert_eq!(again.unseen().collect::<Vec<_>>(), ["прага"]);
        // Even when another question empties the cache between the lookup and the search.
        tv.seen.lock().unwrap().clear();
        let prague = unit(&[0.05, 0.97, 0.0, 0.1]);
        assert_eq!(tv.nearest(&again, &[prague]), vec![("warsaw".to_owned(), WEIGHT), ("praga".to_owned(), WEIGHT)]);
        assert_eq!(tv.lookup(&mixed).unseen().collect::<Vec<_>>(), ["далеко", "варшавы"], "the search remembers only the words it embedded");
        // int8 codes keep the cosine within a few thousandths.
        let exact: f32 = unit(&[1.0, 0.0, 0.0, 0.1]).iter().zip(&unit(&[0.95, 0.1, 0.0, 0.1])).map(|(a, b)| a * b).sum();
        let quantized = dot(&tv.codes[..tv.dims], &unit(&[0.95, 0.1, 0.0, 0.1])) * tv.scales[0];
        assert!((exact - quantized).abs() < 0.005, "{exact} vs {quantized}");
    }
}
