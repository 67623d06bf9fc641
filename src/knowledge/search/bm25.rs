//! BM25 in memory: each site's chunks as an inverted index of analyzed terms, scored with FTS5's own
//! `bm25()` formula (k1 1.2, b 0.75, the heading column weighted, a term's IDF floored at 1e-6).
//!
//! Why: FTS5 computes `bm25()` for every chunk that matches any term of the OR query, and for each one
//! it looks the chunk's length up in its `docsize` table: one B-tree search per matching chunk, about
//! 40 % of a question's BM25 time on SciFact, and the BM25 stage was about a third of a question's CPU
//! after the embedding. Here lengths sit in an array and postings in memory, so a question's BM25 costs
//! a few hundred microseconds and every term of the question can be scored, common ones included
//! (`TermStats` prunes those from the FTS5 query for cost). docs/performance.md has the figures.
//!
//! FTS5 stays the truth: this index is derived from the stored chunks (analyzed again as the import
//! analyzed them, `analysis::index_terms`), it is built in the background when a question finds the
//! site's generation moved past it, and until it is swapped in questions are answered by FTS5 as
//! before. Building reads every chunk of the site (about a second for SciFact's 12,000 chunks), so a
//! site's builds are spaced: the next one starts no sooner than `REBUILD_SPACING` times the last one's
//! duration after it ended, which keeps a site that is being imported from costing more than a fifth
//! of a core. At `serve` start every site's index is built in the background.
//!
//! Terms are FTS5's in all but two details: diacritics are folded from Latin letters (`fold`, as
//! `remove_diacritics 2` does), and a term FTS5 would split in two (none come out of the analysis,
//! which already splits words at every non-alphanumeric character) would stay one here.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use unicode_normalization::char::{decompose_canonical, is_combining_mark};

use crate::domain::SiteId;
use crate::knowledge::search::analysis;
use crate::store::{Store, StoreError};

/// FTS5's `bm25()` constants.
const K1: f64 = 1.2;
const B: f64 = 0.75;
/// A site's next build starts no sooner than this many times the last build's duration after it.
const REBUILD_SPACING: u32 = 4;

/// One chunk's occurrences of one term, per column.
#[derive(Debug, Clone, Copy)]
struct Posting {
    slot: u32,
    heading: u16,
    text: u16,
}

/// One site's chunks at one generation.
#[derive(Debug)]
pub struct Bm25Index {
    /// The site's generation when its chunks were read (they may be newer).
    pub generation: i64,
    terms: HashMap<Box<str>, u32>,
    /// By term id: the chunks holding the term, in slot order.
    postings: Vec<Box<[Posting]>>,
    /// By slot: the chunk's key and its length in terms (heading and text).
    keys: Box<[u64]>,
    lengths: Box<[u32]>,
    average_length: f64,
    /// Its ASCII terms by consonant skeleton (`skeleton`), made at the first question that needs them.
    skeletons: std::sync::OnceLock<super::skeleton::Map>,
}

/// A term as the index holds it: Latin letters without their diacritics (FTS5's `remove_diacritics 2`:
/// "café" and "cafe" are one term); other scripts keep their marks, which are letters there.
pub fn fold(term: &str) -> Cow<'_, str> {
    if term.is_ascii() {
        return Cow::Borrowed(term);
    }
    let mut out = String::with_capacity(term.len());
    for c in term.chars() {
        if latin(c) {
            decompose_canonical(c, |d| {
                if !is_combining_mark(d) {
                    out.push(d)
                }
            });
        } else if !(('\u{300}'..='\u{36f}').contains(&c) && out.chars().next_back().is_some_and(|p| p.is_ascii_alphabetic())) {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Latin letters with precomposed diacritics (Latin-1 to Latin Extended-B, Latin Extended Additional).
fn latin(c: char) -> bool {
    matches!(c as u32, 0xC0..=0x24F | 0x1E00..=0x1EFF)
}

/// Builds a `Bm25Index` chunk by chunk.
#[derive(Debug, Default)]
pub struct Builder {
    terms: HashMap<Box<str>, u32>,
    postings: Vec<Vec<Posting>>,
    keys: Vec<u64>,
    lengths: Vec<u32>,
    /// The chunk being added: (heading, text) occurrences by term id.
    counts: HashMap<u32, (u16, u16)>,
}

impl Builder {
    fn term_id(&mut self, term: &str) -> u32 {
        let term = fold(term);
        if let Some(&id) = self.terms.get(term.as_ref()) {
            return id;
        }
        let id = self.postings.len() as u32;
        self.terms.insert(term.into_owned().into_boxed_str(), id);
        self.postings.push(Vec::new());
        id
    }

    /// Adds a chunk: its key and its heading's and text's analyzed terms, in order.
    pub fn add(&mut self, key: u64, heading: impl IntoIterator<Item = String>, text: impl IntoIterator<Item = String>) {
        let slot = self.keys.len() as u32;
        let mut counts = std::mem::take(&mut self.counts);
        counts.clear();
        let mut length = 0u32;
        for t in heading {
            length += 1;
            let e = counts.entry(self.term_id(&t)).or_default();
            e.0 = e.0.saturating_add(1);
        }
        for t in text {
            length += 1;
            let e = counts.entry(self.term_id(&t)).or_default();
            e.1 = e.1.saturating_add(1);
        }
        for (&id, &(heading, text)) in &counts {
            self.postings[id as usize].push(Posting { slot, heading, text });
        }
        self.counts = counts;
        self.keys.push(key);
        self.lengths.push(length);
    }

    pub fn finish(self, generation: i64) -> Bm25Index {
        let total: u64 = self.lengths.iter().map(|&l| l as u64).sum();
        let average_length = if self.keys.is_empty() { 1.0 } else { (total as f64 / self.keys.len() as f64).max(f64::MIN_POSITIVE) };
        let mut terms = self.terms;
        terms.shrink_to_fit();
        Bm25Index {
            generation,
            terms,
            postings: self.postings.into_iter().map(Vec::into_boxed_slice).collect(),
            keys: self.keys.into_boxed_slice(),
            lengths: self.lengths.into_boxed_slice(),
            average_length,
            skeletons: std::sync::OnceLock::new(),
        }
    }
}

impl Bm25Index {
    /// The site's chunks as stored now, analyzed in their documents' languages (blocking).
    pub fn build(store: &Store, site: &SiteId) -> Result<Bm25Index, StoreError> {
        let fallback = analysis::site_language(store, site)?;
        let mut builder = Builder::default();
        let generation = store.site(*site).knowledge().each_chunk_text(|key, detected, heading, text| {
            let lang = analysis::language_of(detected, &fallback);
            builder.add(key, analysis::index_terms(&lang, heading), analysis::index_terms(&lang, text));
        })?;
        Ok(builder.finish(generation))
    }

    /// The chunks holding any of `terms` (a question's analyzed terms), best first, at most `limit`:
    /// (key, BM25 score) as `Knowledge::fts_search` gives them, `heading_weight` weighing the heading.
    pub fn search(&self, terms: &[String], heading_weight: f64, limit: usize) -> Vec<(u64, f64)> {
        self.search_weighted(terms.iter().map(|t| (t.as_str(), 1.0)), heading_weight, limit)
    }

    /// `search` with a weight for each term's score (a term met twice counts at its first weight).
    pub fn search_weighted<'t>(&self, terms: impl IntoIterator<Item = (&'t str, f64)>, heading_weight: f64, limit: usize) -> Vec<(u64, f64)> {
        let n = self.keys.len();
        if n == 0 || limit == 0 {
            return Vec::new();
        }
        let mut scores = vec![0.0f64; n];
        let mut hit = vec![false; n];
        let mut touched: Vec<u32> = Vec::new();
        let mut used: Vec<u32> = Vec::new();
        for (t, weight) in terms {
            let Some(&id) = self.terms.get(fold(t).as_ref()) else { continue };
            if used.contains(&id) {
                continue;
            }
            used.push(id);
            let list = &self.postings[id as usize];
            let df = list.len() as f64;
            let idf = ((n as f64 - df + 0.5) / (df + 0.5)).ln();
            let idf = weight * if idf <= 0.0 { 1e-6 } else { idf };
            for p in list.iter() {
                let slot = p.slot as usize;
                let f = heading_weight * p.heading as f64 + p.text as f64;
                let norm = K1 * (1.0 - B + B * self.lengths[slot] as f64 / self.average_length);
                scores[slot] += idf * f * (K1 + 1.0) / (f + norm);
                if !hit[slot] {
                    hit[slot] = true;
                    touched.push(p.slot);
                }
            }
        }
        let order = |a: &u32, b: &u32| scores[*b as usize].total_cmp(&scores[*a as usize]).then(self.keys[*a as usize].cmp(&self.keys[*b as usize]));
        if touched.len() > limit {
            touched.select_nth_unstable_by(limit - 1, order);
            touched.truncate(limit);
        }
        touched.sort_unstable_by(order);
        touched.into_iter().map(|s| (self.keys[s as usize], scores[s as usize])).collect()
    }

    /// Its terms, in no order.
    pub fn terms(&self) -> impl Iterator<Item = &str> {
        self.terms.keys().map(|k| &**k)
    }

    /// Its ASCII terms by consonant skeleton, for Hindi and Arabic questions (`skeleton`).
    pub fn skeletons(&self) -> &super::skeleton::Map {
        self.skeletons.get_or_init(|| super::skeleton::map(self.terms()))
    }

    /// How many chunks it holds.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// About how many bytes it holds (postings, lengths and keys, and the terms).
    pub fn bytes(&self) -> usize {
        let postings: usize = self.postings.iter().map(|p| p.len() * std::mem::size_of::<Posting>() + std::mem::size_of::<Box<[Posting]>>()).sum();
        let terms: usize = self.terms.keys().map(|t| t.len() + std::mem::size_of::<(Box<str>, u32)>() + 8).sum();
        postings + terms + self.keys.len() * 12
    }
}

/// Every site's in-memory index, built on demand in the background. Cheap to share behind an `Arc`.
#[derive(Debug, Default)]
pub struct Bm25Indexes {
    sites: Mutex<HashMap<SiteId, Arc<Slot>>>,
    /// Every question goes to FTS5 (benchmarks compare the two).
    off: AtomicBool,
}

#[derive(Debug, Default)]
struct Slot {
    current: Mutex<Option<Arc<Bm25Index>>>,
    /// Notified when a build swaps `current` in (`Bm25Indexes::wait`).
    built: Condvar,
    building: AtomicBool,
    /// When the next build may start (`REBUILD_SPACING`).
    not_before: Mutex<Option<Instant>>,
}

impl Bm25Indexes {
    fn slot(&self, site: &SiteId) -> Arc<Slot> {
        self.sites.lock().unwrap_or_else(|p| p.into_inner()).entry(*site).or_default().clone()
    }

    /// The site's index when it holds the chunks of `generation` (or newer); else `None` (the caller
    /// asks FTS5), and a build starts in the background unless one is running or the last ended too
    /// recently.
    pub fn at(&self, store: &Store, site: &SiteId, generation: i64) -> Option<Arc<Bm25Index>> {
        if self.off.load(Ordering::Relaxed) {
            return None;
        }
        let slot = self.slot(site);
        let current = slot.current.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(idx) = current.filter(|i| i.generation >= generation) {
            return Some(idx);
        }
        let due = slot.not_before.lock().unwrap_or_else(|p| p.into_inner()).is_none_or(|t| Instant::now() >= t);
        if due && slot.claim() {
            let (store, site) = (store.clone(), *site);
            crate::knowledge::in_background(move || slot.build(&store, &site));
        }
        None
    }

    /// The site's index once it holds `generation` (or newer), waiting up to `patience` for a build
    /// (blocking; started as `at` starts one, and again when the spacing has passed); `None` after that,
    /// or at once while every question goes to FTS5.
    pub fn wait(&self, store: &Store, site: &SiteId, generation: i64, patience: Duration) -> Option<Arc<Bm25Index>> {
        let started = Instant::now();
        while !self.off.load(Ordering::Relaxed) {
            if let Some(idx) = self.at(store, site, generation) {
                return Some(idx);
            }
            let left = patience.saturating_sub(started.elapsed());
            if left.is_zero() {
                break;
            }
            let slot = self.slot(site);
            let current = slot.current.lock().unwrap_or_else(|p| p.into_inner());
            if current.as_ref().is_none_or(|i| i.generation < generation) {
                drop(slot.built.wait_timeout(current, left.min(Duration::from_secs(1))));
            }
        }
        None
    }

    /// Builds the site's index now and swaps it in (blocking; benchmarks, before they ask).
    pub fn build_now(&self, store: &Store, site: &SiteId) -> Result<Arc<Bm25Index>, StoreError> {
        let idx = Arc::new(Bm25Index::build(store, site)?);
        let slot = self.slot(site);
        *slot.current.lock().unwrap_or_else(|p| p.into_inner()) = Some(idx.clone());
        slot.built.notify_all();
        Ok(idx)
    }

    /// The sites whose index is held in memory (or being built).
    pub fn held(&self) -> Vec<SiteId> {
        self.sites.lock().unwrap_or_else(|p| p.into_inner()).keys().copied().collect()
    }

    /// Forgets a deleted site's index (a build under way keeps its own until it ends).
    pub fn drop_site(&self, site: &SiteId) {
        self.sites.lock().unwrap_or_else(|p| p.into_inner()).remove(site);
    }

    /// Sends every question to FTS5 (`false`) or back to the in-memory indexes.
    pub fn set_enabled(&self, enabled: bool) {
        self.off.store(!enabled, Ordering::Relaxed);
    }

    /// Builds every listed site's index, one after another, in the background (`serve` start).
    pub fn warm(self: &Arc<Self>, store: &Store, sites: Vec<SiteId>) {
        let (this, store) = (self.clone(), store.clone());
        crate::knowledge::in_background(move || {
            for site in sites {
                let slot = this.slot(&site);
                if slot.claim() {
                    slot.build(&store, &site);
                }
            }
        });
    }
}

impl Slot {
    /// Claims the site's one build at a time: false while another runs.
    fn claim(&self) -> bool {
        !self.building.swap(true, Ordering::SeqCst)
    }

    /// Builds the site's index, swaps it in and releases the claim (blocking; after `claim`).
    fn build(&self, store: &Store, site: &SiteId) {
        let started = Instant::now();
        match Bm25Index::build(store, site) {
            Ok(idx) => {
                let took = started.elapsed();
                tracing::info!(site = %site, generation = idx.generation, chunks = idx.len(), bytes = idx.bytes(), took_ms = took.as_millis() as u64, "BM25 index built");
                *self.current.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(idx));
                self.built.notify_all();
                *self.not_before.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now() + took * REBUILD_SPACING);
            }
            Err(e) => {
                tracing::warn!(site = %site, error = %e, "cannot build the BM25 index; FTS5 answers meanwhile");
                *self.not_before.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now() + Duration::from_secs(10));
            }
        }
        self.building.store(false, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use crate::domain::{Currency, Lang, Slug, Tier};
    use crate::knowledge::search::bm25::*;
    use crate::knowledge::search::match_expression;
    use crate::store::NewSite;
    use crate::store::knowledge::{NewChunk, NewDocument};

    fn store() -> (tempfile::TempDir, Store, SiteId) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db"), crate::secrets::Keyring::from_bytes(&[7u8; 32])).unwrap();
        let new = NewSite::new("t", Slug::vertical("dental").unwrap(), Tier::Pro, Currency::parse("EUR").unwrap(), Lang::parse("en").unwrap());
        let site = store.sites().create(new).unwrap().0.id;
        (dir, store, site)
    }

    /// A document of one chunk per (heading, text), analyzed as English as the import does.
    fn import(store: &Store, site: &SiteId, source: &str, chunks: &[(&str, &str)]) {
        let chunks = chunks
            .iter()
            .map(|(h, t)| NewChunk {
                index_heading: analysis::index_text("en", h),
                index_text: analysis::index_text("en", t),
                heading: (*h).into(),
                text: (*t).into(),
                embedding: vec![0.0; 384],
                english: None,
            })
            .collect();
        let doc = NewDocument {
            source: source.into(),
            title: source.into(),
            url: None,
            format: "md".into(),
            content_hash: source.into(),
            model: "m".into(),
            english_model: String::new(),
            lang: Some(("en".into(), 0.99)),
            chunks,
        };
        store.site(*site).knowledge().replace_document(&doc).unwrap();
    }

    fn corpus(store: &Store, site: &SiteId) {
        let topics = ["crown", "implant", "whitening", "cleaning", "braces", "filling", "root canal", "extraction"];
        let mut chunks = Vec::new();
        for (i, topic) in topics.iter().enumerate() {
            for j in 0..4 {
                let text = format!(
                    "A {topic} at our practice costs {} euros. {} Book a {topic} online or call us; the price includes a check-up.",
                    100 + 50 * i + j,
                    "Patients ask about the price and the appointment. ".repeat(j)
                );
                chunks.push((format!("Prices › {topic}"), text));
            }
        }
        let chunks: Vec<(&str, &str)> = chunks.iter().map(|(h, t)| (h.as_str(), t.as_str())).collect();
        import(store, site, "prices.md", &chunks);
        import(store, site, "cafe.md", &[("Café", "Our café serves coffee to patients who wait. The crown of the menu is cake.")]);
    }

    #[test]
    fn it_ranks_and_scores_as_fts5_bm25() {
        let (_dir, store, site) = store();
        corpus(&store, &site);
        let idx = Bm25Index::build(&store, &site).unwrap();
        assert_eq!(idx.len(), 33);
        let kb = store.site(site).knowledge();
        for question in ["How much is a crown?", "price of implant and whitening", "book an appointment for braces", "root canal cost euros", "price"] {
            let terms = analysis::question_terms(question, &["en"]);
            for weight in [1.0, 2.0] {
                let fts = kb.fts_search(&match_expression(&terms).unwrap(), weight, 10).unwrap();
                let ours = idx.search(&terms, weight, 10);
                assert_eq!(ours.len(), fts.len(), "{question}");
                for ((k1, s1), (k2, s2)) in ours.iter().zip(&fts) {
                    assert!((s1 - s2).abs() < 1e-9 * s2.abs().max(1.0), "{question}: {s1} vs FTS5 {s2}");
                    // Equal scores may come in either order; a different score must be the same chunk.
                    assert!(k1 == k2 || fts.iter().any(|(k, s)| k == k1 && (s - s1).abs() < 1e-9), "{question}: {ours:?} vs {fts:?}");
                }
            }
        }
        assert!(idx.search(&analysis::question_terms("zebra", &["en"]), 2.0, 10).is_empty());
    }

    #[test]
    fn a_weighted_term_scores_its_weight_times_its_share_and_a_repeated_term_counts_once() {
        let (_dir, store, site) = store();
        corpus(&store, &site);
        let idx = Bm25Index::build(&store, &site).unwrap();
        let [cake, price] = ["cake", "price"].map(|q| analysis::question_terms(q, &["en"]).remove(0));
        let alone = |t: &str| idx.search_weighted([(t, 1.0)], 2.0, 40).into_iter().collect::<HashMap<u64, f64>>();
        let (cake_alone, price_alone) = (alone(&cake), alone(&price));
        assert_eq!(cake_alone.len(), 1, "only the café chunk holds cake");
        let both = idx.search_weighted([(price.as_str(), 1.0), (cake.as_str(), 0.3), (price.as_str(), 0.1)], 2.0, 40);
        assert_eq!(both.len(), price_alone.len() + 1);
        for (key, score) in both {
            let expected = price_alone.get(&key).copied().unwrap_or(0.0) + 0.3 * cake_alone.get(&key).copied().unwrap_or(0.0);
            assert!((score - expected).abs() < 1e-9, "{key}: {score} vs {expected}");
        }
        assert_eq!(idx.search(std::slice::from_ref(&price), 2.0, 40), idx.search_weighted([(price.as_str(), 1.0)], 2.0, 40));
    }

    #[test]
    fn diacritics_fold_from_latin_letters_only() {
        assert_eq!(fold("café"), "cafe");
        assert_eq!(fold("über"), "uber");
        assert_eq!(fold("cafe\u{301}"), "cafe");
        assert_eq!(fold("żółć"), "zołc", "ł has no decomposition, as in FTS5");
        assert_eq!(fold("й"), "й", "Cyrillic keeps its letters");
        assert_eq!(fold("ที่"), "ที่", "Thai keeps its marks");
        let (_dir, store, site) = store();
        corpus(&store, &site);
        let idx = Bm25Index::build(&store, &site).unwrap();
        let hits = idx.search(&analysis::question_terms("cafe coffee", &["en"]), 2.0, 5);
        let kb = store.site(site).knowledge();
        let fts = kb.fts_search(&match_expression(&analysis::question_terms("cafe coffee", &["en"])).unwrap(), 2.0, 5).unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].0, fts[0].0, "the café chunk, as FTS5 finds it");
    }

    #[test]
    fn questions_go_to_fts5_until_the_index_holds_the_generation() {
        let (_dir, store, site) = store();
        corpus(&store, &site);
        let indexes = Bm25Indexes::default();
        let wait = |generation: i64| {
            let started = Instant::now();
            loop {
                if let Some(idx) = indexes.at(&store, &site, generation) {
                    return idx;
                }
                assert!(started.elapsed() < Duration::from_secs(20), "the index was never built");
                std::thread::sleep(Duration::from_millis(5));
            }
        };
        let kb = store.site(site).knowledge();
        let first = kb.generation().unwrap();
        assert!(indexes.at(&store, &site, first).is_none(), "not built yet: FTS5 answers");
        let idx = wait(first);
        assert_eq!(idx.len(), 33);
        import(&store, &site, "new.md", &[("Opening hours", "We open at eight on Saturdays.")]);
        let second = kb.generation().unwrap();
        assert!(second > first);
        assert!(indexes.at(&store, &site, second).is_none(), "the new document is not in it: FTS5 answers");
        let idx = wait(second);
        assert_eq!(idx.len(), 34);
        assert_eq!(idx.search(&analysis::question_terms("saturday opening", &["en"]), 2.0, 3).len(), 1);
        indexes.set_enabled(false);
        assert!(indexes.at(&store, &site, second).is_none());
    }
}
