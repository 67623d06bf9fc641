//! `--fit`: fits the translated questions' cross-lingual model (`search::Translated`) on the route's own
//! candidates.
//!
//! The sites the CLI imported are opened in-process and every question is ranked by `search::rank`,
//! as `POST /v1/query` ranks it (depth `search::depth(5)`, the question's detected language, else the
//! site's). The candidates in another language than the question are the samples: the chunks of the
//! question's paragraph are positive, the rest negative; those of questions whose words were translated
//! (`Candidate::translation`) fit `Translated`, the others `CrossLingual` (printed only). Two kinds of
//! questions the knowledge cannot answer add negatives: each question again with its article's chunks
//! removed from the candidates (ranks, lift, margin and BM25 shares computed again on what is left), and
//! `OFF_TOPIC`, visitor questions no Wikipedia paragraph answers, asked of the large sites and of a tiny one
//! (one article), where the dense list is short. The fit uses the articles of even index; the report gives
//! R@1 and the answered share at the default threshold on the odd (held-out) articles and on all, for one
//! cross-lingual model for every question ("before"), the shipped pair and the fitted one, the off-topic
//! questions the shipped pair answers, and what moving the fitted bias would trade.

use std::collections::HashMap;
use std::path::Path;

use sitebot::config::Config;
use sitebot::domain::SiteId;
use sitebot::knowledge::Engine;
use sitebot::knowledge::embedding::model::Purpose;
use sitebot::knowledge::search::{self, Candidate, CrossLingual, Fusion, Mode, Translated};
use sitebot::store::Store;

use super::common::arg;

pub use super::common::VISITOR_OFF_TOPIC as OFF_TOPIC;

/// Visitor questions no XQuAD-R paragraph answers, never in a fit: `OFF_TOPIC` is also the fit's negatives, so
/// what it answers is not held out. 45 questions in 18 languages, those without a dictionary (Hindi, Thai,
/// Vietnamese, French, Japanese, ...) among them.
pub const HELD_OUT_OFF_TOPIC: &[&str] = &[
    "Wie ändere ich mein Passwort?",
    "Gibt es einen Rabatt für Studenten?",
    "Kann ich einen Gutschein einlösen?",
    "¿Cómo cambio mi contraseña?",
    "¿Hacen envíos internacionales?",
    "¿Tienen descuento para estudiantes?",
    "Comment réinitialiser mon mot de passe ?",
    "Acceptez-vous PayPal ?",
    "Quali sono gli orari di apertura la domenica?",
    "Posso cambiare la taglia di una maglietta?",
    "Como faço para cancelar minha assinatura?",
    "Kan ik mijn bestelling ophalen in de winkel?",
    "Jak mogę zmienić adres dostawy?",
    "Как изменить пароль?",
    "Есть ли у вас скидки для студентов?",
    "Можно ли оплатить картой при получении?",
    "Şifremi nasıl değiştirebilirim?",
    "Hafta sonu açık mısınız?",
    "İade süresi kaç gün?",
    "كيف يمكنني تغيير كلمة المرور؟",
    "هل تقبلون الدفع عند الاستلام؟",
    "ما هي مواعيد العمل يوم الجمعة؟",
    "Πώς μπορώ να αλλάξω τον κωδικό μου;",
    "Κάνετε αποστολές στην Κύπρο;",
    "Ποιες είναι οι ώρες λειτουργίας το Σάββατο;",
    "如何修改密码？",
    "你们周末营业吗？",
    "退货需要多长时间？",
    "パスワードを変更するにはどうすればいいですか？",
    "学生割引はありますか？",
    "मैं अपना पासवर्ड कैसे बदलूं?",
    "क्या आप कैश ऑन डिलीवरी स्वीकार करते हैं?",
    "क्या आपकी दुकान रविवार को खुली रहती है?",
    "เปลี่ยนรหัสผ่านได้อย่างไร",
    "ส่งของไปต่างประเทศได้ไหม",
    "ร้านเปิดวันอาทิตย์ไหม",
    "Làm thế nào để đổi mật khẩu?",
    "Cửa hàng có mở cửa vào Chủ nhật không?",
    "Phí giao hàng là bao nhiêu?",
    "비밀번호를 어떻게 변경하나요?",
    "Hur ändrar jag mitt lösenord?",
    "Wie hoch ist die Zugspitze?",
    "¿Cuántos litros de agua hay que beber al día?",
    "Какая погода будет завтра в Сочи?",
    "Bugün hava nasıl olacak?",
];

/// The weight of a question the knowledge cannot answer against one it can (`--unanswerable-weight`):
/// each answerable question is asked once more with its article removed, so at 1 the fit assumes half
/// the cross-lingual questions have no answer in the knowledge; at 1/3, one in four.
pub const UNANSWERABLE_WEIGHT: f64 = 1.0 / 3.0;

/// Threshold the report counts an answer at (`knowledge.min_score`'s default).
const THRESHOLD: f32 = 0.25;

/// A question: its paragraph (`None` for off-topic ones), its article, its text and vector.
pub struct Question {
    pub paragraph: Option<usize>,
    pub article: usize,
    pub text: String,
    pub vector: Vec<f32>,
}

/// A site the CLI imported, opened in-process.
pub struct Site {
    pub id: SiteId,
    pub lang: &'static str,
    /// Chunk key to paragraph id.
    pub paragraph_of: HashMap<u64, usize>,
}

/// One question's ranked candidates, as the route ranks them, and the same with its article removed.
struct Asked {
    article: usize,
    /// The right paragraph; `None` when the knowledge cannot answer.
    paragraph: Option<usize>,
    text: String,
    candidates: Vec<(Candidate, Option<usize>)>,
}

pub fn open_site(store: &Store, knowledge: &Engine, id: &str, lang: &'static str) -> anyhow::Result<Site> {
    let id = SiteId::parse(id).map_err(|e| anyhow::anyhow!(e.0))?;
    knowledge.sync_index_blocking(store, &id)?;
    let paragraph_of = store
        .site(id)
        .knowledge()
        .chunk_sources()?
        .into_iter()
        .filter_map(|(k, src)| Some((k, src.rsplit('#').next()?.strip_prefix('p')?.parse().ok()?)))
        .collect();
    Ok(Site { id, lang, paragraph_of })
}

pub fn embed(knowledge: &Engine, texts: &[String]) -> anyhow::Result<Vec<Vec<f32>>> {
    Ok(knowledge.embedder.embed_parallel_blocking(texts, Purpose::Query)?)
}

/// Questions no paragraph answers, embedded, each numbered in order as its own article.
pub fn off_topic<'q>(knowledge: &Engine, questions: impl Iterator<Item = &'q &'q str>) -> anyhow::Result<Vec<Question>> {
    let texts: Vec<String> = questions.map(|q| q.to_string()).collect();
    Ok(embed(knowledge, &texts)?.into_iter().zip(texts).enumerate().map(|(i, (vector, text))| Question { paragraph: None, article: i, text, vector }).collect())
}

/// `--sentences A` (see `common::Sentences`): the sites' sentence vectors, when the experiment runs.
pub static SENTENCES: std::sync::OnceLock<super::common::Sentences> = std::sync::OnceLock::new();

/// `--shift FILE`: per-language vectors added to a question's vector on knowledge in another language
/// (`lang -> mean(en) - mean(lang)`), the experiment of a language shift.
pub static SHIFT: std::sync::OnceLock<HashMap<String, Vec<f32>>> = std::sync::OnceLock::new();

/// Time spent embedding questions' words and comparing them with the sites' terms (`search::nearest`,
/// microseconds), and their counts.
static NEAREST_TIMING: std::sync::Mutex<[u64; 4]> = std::sync::Mutex::new([0; 4]);

/// Makes the sites' English term vectors now (`search::nearest`; the route makes them in the background at
/// a site's first translated question), unless `knowledge.nearest_terms` is off.
pub fn embed_terms(store: &Store, knowledge: &Engine, sites: &[&Site]) -> anyhow::Result<()> {
    let Some(nearest) = &knowledge.nearest else { return Ok(()) };
    for site in sites {
        let started = std::time::Instant::now();
        let index = knowledge.bm25.build_now(store, &site.id)?;
        let terms = nearest.build_now(&knowledge.embedder, &site.id, &index)?;
        eprintln!("nearest: {} terms of {} embedded in {:.1}s ({} bytes)", terms.len(), site.id, started.elapsed().as_secs_f64(), terms.bytes());
    }
    Ok(())
}

/// The English terms nearest a translated question's words, as the route finds them.
fn nearest_terms(knowledge: &Engine, site: &SiteId, question: &str) -> anyhow::Result<Vec<(String, f64)>> {
    let Some(terms) = knowledge.nearest.as_ref().and_then(|n| n.get(site)) else { return Ok(Vec::new()) };
    let mut words = search::nearest::words(question);
    // `--nearest-langs L,...,pairs` (an experiment, not built): each two adjacent words as one too.
    if arg("--nearest-langs").is_some_and(|a| a.split(',').any(|x| x == "pairs")) {
        let pairs: Vec<String> = words.windows(2).map(|w| w.join(" ")).collect();
        words.extend(pairs);
    }
    let known = terms.lookup(&words);
    let started = std::time::Instant::now();
    let vectors = knowledge.embedder.embed_blocking(&known.unseen().collect::<Vec<_>>(), Purpose::Query)?;
    let took = started.elapsed();
    let started = std::time::Instant::now();
    let found = terms.nearest(&known, &vectors);
    let mut t = NEAREST_TIMING.lock().unwrap();
    t[0] += took.as_micros() as u64;
    t[1] += vectors.len() as u64;
    t[2] += started.elapsed().as_micros() as u64;
    t[3] += words.len() as u64;
    Ok(found)
}

/// What the nearest terms cost: the words embedded (one call a question, on one session) and compared.
pub fn report_nearest() {
    let [embed_us, embedded, near_us, words] = *NEAREST_TIMING.lock().unwrap();
    if words > 0 {
        println!(
            "nearest terms: {words} words, {embedded} of them embedded ({:.2} ms each, one call a question) and compared with the terms ({:.3} ms each)",
            embed_us as f64 / 1e3 / embedded.max(1) as f64,
            near_us as f64 / 1e3 / embedded.max(1) as f64
        );
    }
}

/// Ranks `q` on `site` as the route does.
fn ask(store: &Store, knowledge: &Engine, site: &Site, q: &Question) -> anyhow::Result<Vec<(Candidate, Option<usize>)>> {
    let lang = sitebot::knowledge::language::detect_confident(&q.text).unwrap_or(site.lang);
    let fusion = Fusion::default();
    let detected = sitebot::knowledge::language::detect_confident(&q.text);
    let soft = match detected {
        Some(l) if search::TRANSLATED_LANGUAGES.contains(&l) => nearest_terms(knowledge, &site.id, &q.text)?,
        // `--nearest-langs vi,...`: the nearest English terms for these languages' questions too (an
        // experiment: the route gives them to `TRANSLATED_LANGUAGES` only).
        Some(l) if arg("--nearest-langs").is_some_and(|a| a.split(',').any(|x| x == l)) => nearest_terms(knowledge, &site.id, &q.text)?,
        _ => Vec::new(),
    };
    // With `--show-features`, the nearest terms of each question the knowledge cannot answer.
    if q.paragraph.is_none() && !soft.is_empty() && std::env::args().any(|a| a == "--show-features") {
        eprintln!("nearest terms: {} -> {:?}", q.text, soft.iter().map(|(t, _)| t.as_str()).collect::<Vec<_>>());
    }
    let query = search::LexicalQuery { text: &q.text, lang, detected, depth: search::depth(5), soft: &soft };
    let mut vector = q.vector.clone();
    if let Some(shift) = SHIFT.get().filter(|_| lang != site.lang)
        && let (Some(from), Some(to)) = (shift.get(lang), shift.get(site.lang))
    {
        vector.iter_mut().zip(from.iter().zip(to)).for_each(|(v, (f, t))| *v += f - t);
        let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
        vector.iter_mut().for_each(|v| *v /= norm);
    }
    let mut ranked = search::rank(store, knowledge, &site.id, &query, &vector, None, &fusion, Mode::Hybrid)?;
    if let Some(sv) = SENTENCES.get() {
        sv.rescore(&mut ranked, &q.vector, &fusion, false);
    }
    Ok(ranked.into_iter().map(|c| (c.clone(), site.paragraph_of.get(&c.key).copied())).collect())
}

/// The candidates without those of `article`, ranked again in each list and related again.
fn without(candidates: &[(Candidate, Option<usize>)], article_of: &[usize], article: usize) -> Vec<(Candidate, Option<usize>)> {
    keep(candidates, |p| p.is_none_or(|p| article_of[p] != article))
}

/// The candidates of `article` alone (a small site of alike sections: one article's paragraphs), ranked
/// again in each list and related again.
fn within(candidates: &[(Candidate, Option<usize>)], article_of: &[usize], article: usize) -> Vec<(Candidate, Option<usize>)> {
    keep(candidates, |p| p.is_some_and(|p| article_of[p] == article))
}

/// The candidates whose paragraph `kept` keeps, ranked again in each list and related again.
fn keep(candidates: &[(Candidate, Option<usize>)], kept: impl Fn(Option<usize>) -> bool) -> Vec<(Candidate, Option<usize>)> {
    let mut kept: Vec<(Candidate, Option<usize>)> = candidates.iter().filter(|(_, p)| kept(*p)).cloned().collect();
    fn dense(c: &mut Candidate) -> &mut Option<usize> {
        &mut c.dense_rank
    }
    fn bm25(c: &mut Candidate) -> &mut Option<usize> {
        &mut c.bm25_rank
    }
    for rank in [dense as fn(&mut Candidate) -> &mut Option<usize>, bm25] {
        let mut order: Vec<(usize, usize)> = kept.iter_mut().enumerate().filter_map(|(i, (c, _))| rank(c).map(|r| (r, i))).collect();
        order.sort_unstable();
        for (new, (_, i)) in order.into_iter().enumerate() {
            *rank(&mut kept[i].0) = Some(new + 1);
        }
    }
    let mut cs: Vec<Candidate> = kept.iter().map(|(c, _)| c.clone()).collect();
    search::relate(&mut cs);
    if let Some(t) = cs.iter().find_map(|c| c.translation) {
        search::share_bm25(&mut cs, t.lang);
    }
    for ((k, _), c) in kept.iter_mut().zip(cs) {
        *k = c;
    }
    kept
}

/// How a candidate is scored.
#[derive(Clone, Copy)]
enum Model {
    Fusion(Fusion),
}

impl Model {
    fn score(&self, c: &Candidate) -> f32 {
        match self {
            Model::Fusion(f) => f.score(c),
        }
    }
}

/// `CrossLingual` as a `Translated` that ignores the BM25 share: the fusion before translated questions had
/// a model of their own.
fn as_translated(c: CrossLingual) -> Translated {
    let lang_bias = languages().map(|l| (l, 0.0));
    Translated {
        w_cos: c.w_cos,
        w_lift: c.w_lift,
        w_bm25_rank: c.w_bm25_rank,
        w_dense_rank: c.w_dense_rank,
        w_margin: c.w_margin,
        w_bm25_share: 0.0,
        w_bm25_lead: 0.0,
        bias: c.bias,
        lang_bias,
    }
}

/// The best candidate under `model`: (its paragraph, its score).
fn best(candidates: &[(Candidate, Option<usize>)], model: &Model) -> Option<(Option<usize>, f32)> {
    candidates.iter().map(|(c, p)| (*p, model.score(c))).max_by(|a, b| a.1.total_cmp(&b.1))
}

/// One line of what `model` answers, per pair, on the held-out articles (off-topic: all), and the pooled
/// share answered of questions on English knowledge with their article removed.
fn per_pair(pairs: &[Pair], d: f32, model: &Model, all: bool) {
    let held_out = |a: usize| all || a % 2 == 1;
    let mut line = format!("d={d:>5.2}");
    let mut removed = Tally::default();
    for pair in pairs {
        let mut t = Tally::default();
        for a in pair.asked.iter().filter(|a| held_out(a.article) || a.paragraph.is_none()) {
            t.add(best(&a.candidates, model), a.paragraph);
            if pair.removable && a.paragraph.is_some() && pair.name.contains("on en") && held_out(a.article) {
                removed.add(best(&without(&a.candidates, &pair.article_of, a.article), model), None);
            }
        }
        let answerable = pair.asked.iter().any(|a| a.paragraph.is_some());
        line.push_str(&format!("  {}={}", pair.name.split(' ').next().unwrap_or(""), t.show(answerable)));
    }
    println!("{line}  removed={}", removed.show(false));
}

/// Counts over some questions: asked, right first answer, answered.
#[derive(Default, Clone, Copy)]
struct Tally {
    n: usize,
    right: usize,
    answered: usize,
}

impl Tally {
    fn add(&mut self, top: Option<(Option<usize>, f32)>, paragraph: Option<usize>) {
        self.n += 1;
        if let Some((p, _)) = top.filter(|t| t.1 >= THRESHOLD) {
            self.answered += 1;
            self.right += (paragraph.is_some() && p == paragraph) as usize;
        }
    }

    fn show(&self, answerable: bool) -> String {
        let n = self.n.max(1) as f64;
        if answerable { format!("{:.3}/{:.3}", self.right as f64 / n, self.answered as f64 / n) } else { format!("{:.3}", self.answered as f64 / n) }
    }
}

/// One pair of question and knowledge languages: the asked questions.
pub struct Pair {
    pub name: &'static str,
    pub train: bool,
    /// Whether "its article removed" makes sense (not on the one-article site).
    removable: bool,
    asked: Vec<Asked>,
    /// Chunks' articles by paragraph.
    article_of: Vec<usize>,
}

#[allow(clippy::too_many_arguments)] // each pair names its sites, questions and role in the fit
pub fn pair(
    store: &Store,
    knowledge: &Engine,
    name: &'static str,
    train: bool,
    removable: bool,
    site: &Site,
    questions: &[Question],
    article_of: &[usize],
) -> anyhow::Result<Pair> {
    let mut asked = Vec::with_capacity(questions.len());
    for q in questions {
        asked.push(Asked { article: q.article, paragraph: q.paragraph, text: q.text.clone(), candidates: ask(store, knowledge, site, q)? });
    }
    Ok(Pair { name, train, removable, asked, article_of: article_of.to_vec() })
}

/// The languages `Translated` scores, in the order of its shipped `lang_bias`.
fn languages() -> [&'static str; search::TRANSLATED_LANGUAGES.len()] {
    Fusion::default().translated.lang_bias.map(|(l, _)| l)
}

/// The features of `search::Translated` before the languages' (`Translated::logit`).
const TRANSLATED_FEATURES: usize = 7;

/// A translated question's cross-lingual candidate's features (`search::Translated`): the seven, then one
/// per language (1 for the question's).
fn translated_features(c: &Candidate) -> [f32; TRANSLATED_FEATURES + search::TRANSLATED_LANGUAGES.len()] {
    let [cos, lift, b, d, margin] = c.cross_features();
    let mut x = [0f32; TRANSLATED_FEATURES + search::TRANSLATED_LANGUAGES.len()];
    let (share, lead) = c.translation.map_or((0.0, 0.0), |t| (t.bm25_share, t.bm25_lead));
    x[..TRANSLATED_FEATURES].copy_from_slice(&[cos, lift, b, d, margin, share, lead]);
    if let Some(i) = c.translation.and_then(|t| languages().iter().position(|l| *l == t.lang)) {
        x[TRANSLATED_FEATURES + i] = 1.0;
    }
    x
}

/// Fits on the even articles of the training pairs and prints the report: `search::Translated` on the
/// cross-lingual candidates of questions whose words were translated, `search::CrossLingual` on the others'
/// (printed only: the languages without a dictionary are not in XQuAD-R's German and Spanish, on which the
/// shipped one was fitted, so "fitted" below keeps the shipped `CrossLingual`).
pub fn run(pairs: &[Pair], unanswerable: f64) -> anyhow::Result<()> {
    let held_out = |a: usize| a % 2 == 1;
    let (mut five, mut translated) = (Vec::new(), Vec::new());
    let (mut positives, mut removed) = (0, 0);
    for pair in pairs.iter().filter(|p| p.train) {
        for a in pair.asked.iter().filter(|a| !held_out(a.article)) {
            let weight = if a.paragraph.is_some() { 1.0 } else { unanswerable };
            let mut sample = |c: &Candidate, label: bool, weight: f64| match c.translation {
                Some(_) => translated.push((translated_features(c), label as u8 as f32, weight)),
                None => five.push((c.cross_features(), label as u8 as f32, weight)),
            };
            for (c, p) in a.candidates.iter().filter(|(c, _)| c.cross_lingual) {
                let label = a.paragraph.is_some() && *p == a.paragraph;
                positives += label as usize;
                sample(c, label, weight);
            }
            if a.paragraph.is_some() && pair.removable {
                for (c, _) in without(&a.candidates, &pair.article_of, a.article).iter().filter(|(c, _)| c.cross_lingual) {
                    sample(c, false, unanswerable);
                    removed += 1;
                }
            }
        }
    }
    println!(
        "fit on {} cross-lingual candidates ({positives} positive, {removed} from questions with their article removed), {} of translated questions",
        five.len() + translated.len(),
        translated.len()
    );
    let shipped = Fusion::default();
    let mut fitted = shipped;
    if !five.is_empty() {
        let w = super::common::logistic(&five);
        let cross = CrossLingual {
            w_cos: w[0] as f32,
            w_lift: w[1] as f32,
            w_bm25_rank: w[2] as f32,
            w_dense_rank: w[3] as f32,
            w_margin: w[4] as f32,
            bias: w[5] as f32,
        };
        println!("untranslated questions' candidates, fitted (not used below): {cross:?}");
    }
    // Each language's bias alone, fitted on the shipped model's other coefficients (a language joining the
    // translated questions without refitting the rest; for those fitted with them, a check: it comes out
    // near its shipped bias).
    for (i, lang) in languages().iter().enumerate() {
        let t = shipped.translated;
        let samples: Vec<(f64, f64, f64)> = translated
            .iter()
            .filter(|(x, _, _)| x[TRANSLATED_FEATURES + i] == 1.0)
            .map(|(x, y, w)| (t.logit(x[..TRANSLATED_FEATURES].try_into().expect("the features"), "") as f64, *y as f64, *w))
            .collect();
        if samples.is_empty() {
            continue;
        }
        let mut b = 0.0f64;
        for _ in 0..50 {
            let (mut g, mut h) = (0.0, 0.0);
            for (s, y, w) in &samples {
                let p = 1.0 / (1.0 + (-(s + b)).exp());
                g += w * (p - y);
                h += w * p * (1.0 - p);
            }
            b -= g / h.max(1e-12);
        }
        println!("{lang}: its bias alone on the shipped coefficients {b:.3} (shipped {:.3}, {} candidates)", t.lang_bias[i].1, samples.len());
    }
    if !translated.is_empty() {
        let w = super::common::logistic(&translated);
        fitted.translated = Translated {
            w_cos: w[0] as f32,
            w_lift: w[1] as f32,
            w_bm25_rank: w[2] as f32,
            w_dense_rank: w[3] as f32,
            w_margin: w[4] as f32,
            w_bm25_share: w[5] as f32,
            w_bm25_lead: w[6] as f32,
            bias: w[TRANSLATED_FEATURES + search::TRANSLATED_LANGUAGES.len()] as f32,
            lang_bias: std::array::from_fn(|i| (languages()[i], w[TRANSLATED_FEATURES + i] as f32)),
        };
    }
    println!("fitted: {:?}", fitted.translated);
    let before = Fusion { translated: as_translated(shipped.cross), ..shipped };
    let models = [Model::Fusion(before), Model::Fusion(shipped), Model::Fusion(fitted)];
    println!("R@1/answered at {THRESHOLD} (off-topic and article-removed: answered share)");
    println!("{:<22} {:>24} {:>24} {:>24}", "questions", "before: held-out | all", "shipped: held-out | all", "fitted: held-out | all");
    for pair in pairs {
        for removed in [false, true] {
            if removed && (!pair.removable || pair.asked.iter().all(|a| a.paragraph.is_none())) {
                continue;
            }
            let mut cells = Vec::new();
            for fusion in &models {
                let (mut held, mut all) = (Tally::default(), Tally::default());
                for a in pair.asked.iter().filter(|a| !removed || a.paragraph.is_some()) {
                    let (top, paragraph) = if removed {
                        (best(&without(&a.candidates, &pair.article_of, a.article), fusion), None)
                    } else {
                        (best(&a.candidates, fusion), a.paragraph)
                    };
                    all.add(top, paragraph);
                    if held_out(a.article) {
                        held.add(top, paragraph);
                    }
                }
                let answerable = !removed && pair.asked.iter().any(|a| a.paragraph.is_some());
                cells.push(format!("{} | {}", held.show(answerable), all.show(answerable)));
            }
            let name = if removed { format!("{} (article removed)", pair.name) } else { pair.name.to_owned() };
            println!("{name:<22} {:>24} {:>24} {:>24}", cells[0], cells[1], cells[2]);
        }
    }
    // The ranking's ceiling against the gate: R@1 whatever the score, by whether the question was translated.
    println!("shipped, answerable pairs: translated share | R@1 at threshold 0 (translated / not) | right first but under {THRESHOLD}");
    for pair in pairs.iter().filter(|p| p.asked.iter().any(|a| a.paragraph.is_some())) {
        let (mut n, mut tr, mut r0, mut r0_tr, mut under) = (0usize, 0usize, 0usize, 0usize, 0usize);
        for a in pair.asked.iter().filter(|a| a.paragraph.is_some()) {
            n += 1;
            let translated = a.candidates.iter().any(|(c, _)| c.translation.is_some());
            tr += translated as usize;
            if let Some((_, score)) = best(&a.candidates, &models[1]).filter(|t| t.0 == a.paragraph) {
                r0 += 1;
                r0_tr += translated as usize;
                under += (score < THRESHOLD) as usize;
            }
        }
        let f = |x: usize, d: usize| x as f64 / d.max(1) as f64;
        println!("  {:<22} {:.3} | {:.3} ({:.3} / {:.3}) | {:.3}", pair.name, f(tr, n), f(r0, n), f(r0_tr, tr), f(r0 - r0_tr, n - tr), f(under, n));
    }
    // The off-topic questions the shipped model answers on the English site, to read.
    for p in pairs.iter().filter(|p| p.name.ends_with("off-topic on en")) {
        for a in &p.asked {
            if let Some((_, score)) = best(&a.candidates, &models[1]).filter(|t| t.1 >= THRESHOLD) {
                let translated = a.candidates.iter().any(|(c, _)| c.translation.is_some());
                println!("  {} answered (shipped): {:.3} {}{}", p.name, score, a.text, if translated { " (translated)" } else { "" });
                if std::env::args().any(|a| a == "--show-features") {
                    let mut cs: Vec<_> = a.candidates.iter().map(|(c, _)| (models[1].score(c), c)).collect();
                    cs.sort_by(|x, y| y.0.total_cmp(&x.0));
                    for (sc, c) in cs.iter().take(3) {
                        println!(
                            "      {sc:.3} key {} cross {:?} share {:?} bm25 {:?}",
                            c.key,
                            c.cross_features(),
                            c.translation.map(|t| t.bm25_share),
                            c.bm25
                        );
                    }
                }
            }
        }
    }
    // Every pair at each bias move: held-out answerable R@1/answered, and the pooled article-removed share.
    println!("per pair, fitted with its bias moved by d (held-out; off-topic: all; removed: all pairs on en pooled)");
    // `--sweep-shipped`: the shipped model's bias moved instead of the fitted one's.
    let swept = if std::env::args().any(|a| a == "--sweep-shipped") { shipped.translated } else { fitted.translated };
    for d in [-0.75f32, -0.5, -0.4, -0.3, -0.2, -0.1, 0.0, 0.1, 0.2] {
        per_pair(pairs, d, &Model::Fusion(Fusion { translated: Translated { bias: swept.bias + d, ..swept }, ..shipped }), false);
    }
    // `--sweep-both`: both shipped cross-lingual models' biases moved together, every article (what a change
    // of the candidates' cosines answers at the off-topic count it had before).
    if std::env::args().any(|a| a == "--sweep-both") {
        println!("per pair, shipped with both cross-lingual models' biases moved by d (all articles)");
        for d in [-0.8f32, -0.6, -0.5, -0.4, -0.3, -0.2, -0.1, 0.0, 0.1] {
            let f = Fusion {
                translated: Translated { bias: shipped.translated.bias + d, ..shipped.translated },
                cross: CrossLingual { bias: shipped.cross.bias + d, ..shipped.cross },
                ..shipped
            };
            per_pair(pairs, d, &Model::Fusion(f), true);
        }
    }
    println!("per pair, before (one cross-lingual model for every question) with the bias of translated questions moved by d");
    for d in [-0.5f32, -0.3, -0.2, -0.1, 0.0, 0.1, 0.2, 0.3, 0.5] {
        per_pair(pairs, d, &Model::Fusion(Fusion { translated: Translated { bias: before.translated.bias + d, ..before.translated }, ..shipped }), false);
    }
    // `CrossLingual`'s bias moved for one untranslated language's questions alone: what that language's
    // questions, its article-removed twins and the off-topic questions in it would get.
    println!("untranslated languages, CrossLingual's bias moved by d for that language's questions alone:");
    println!("  right/answered held-out | all; article removed answered, all; off-topic in it answered (fit's + held-out)");
    for pair in
        pairs.iter().filter(|p| p.removable && p.name.contains(" on en") && p.asked.iter().all(|a| a.candidates.iter().all(|(c, _)| c.translation.is_none())))
    {
        let lang = pair.name.split(' ').next().unwrap_or("");
        if !pair.asked.iter().any(|a| a.paragraph.is_some()) {
            continue;
        }
        let off = off_topic_in(pairs, lang);
        for d in [0.0f32, 0.25, 0.5, 0.75, 1.0, 1.5] {
            let model = Model::Fusion(Fusion { cross: CrossLingual { bias: shipped.cross.bias + d, ..shipped.cross }, ..shipped });
            println!("  {lang} d={d:.2}  {}", language_row(pair, &off, &model));
        }
    }
    // `--sweep-lang ar,vi`: the shipped translated questions' model with one language's bias alone moved.
    for lang in arg("--sweep-lang").iter().flat_map(|a| a.split(',').map(str::to_owned).collect::<Vec<_>>()) {
        let Some(pair) = pairs.iter().find(|p| p.removable && p.name == format!("{lang} on en")) else { continue };
        println!("{lang}: Translated's bias for its questions alone moved by d; right/answered held-out | all; article removed answered, all; off-topic in it");
        let off = off_topic_in(pairs, &lang);
        for d in [-0.2f32, -0.15, -0.1, -0.05, 0.0, 0.05, 0.1] {
            let lang_bias = shipped.translated.lang_bias.map(|(l, b)| (l, if l == lang { b + d } else { b }));
            let model = Model::Fusion(Fusion { translated: Translated { lang_bias, ..shipped.translated }, ..shipped });
            println!("  {lang} d={d:.2}  {}", language_row(pair, &off, &model));
        }
    }
    // What moving the bias would trade: answered share of the answerable against that of the others.
    println!("fitted with its bias moved by d (held-out articles; off-topic: all):");
    println!("{:>5} {:>13} {:>13} {:>9} {:>9} {:>9} {:>9}", "d", "de on en", "es on en", "removed", "off en", "off de", "off tiny");
    for d in [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 10.0] {
        let model = Model::Fusion(Fusion { translated: Translated { bias: fitted.translated.bias + d, ..fitted.translated }, ..shipped });
        let mut cells = Vec::new();
        let mut removed = Tally::default();
        for pair in pairs {
            let mut t = Tally::default();
            for a in pair.asked.iter().filter(|a| held_out(a.article) || a.paragraph.is_none()) {
                t.add(best(&a.candidates, &model), a.paragraph);
                if pair.removable && a.paragraph.is_some() && pair.name.ends_with("on en") {
                    removed.add(best(&without(&a.candidates, &pair.article_of, a.article), &model), None);
                }
            }
            cells.push(t);
        }
        println!(
            "{d:>5.1} {:>13} {:>13} {:>9} {:>9} {:>9} {:>9}",
            cells[0].show(true),
            cells[1].show(true),
            removed.show(false),
            cells[3].show(false),
            cells[4].show(false),
            cells[7].show(false)
        );
    }
    Ok(())
}

/// The off-topic questions on English knowledge (the fit's and the held-out ones) in `lang`.
fn off_topic_in<'p>(pairs: &'p [Pair], lang: &str) -> Vec<&'p Asked> {
    pairs
        .iter()
        .filter(|p| p.name.ends_with("off-topic on en"))
        .flat_map(|p| p.asked.iter())
        .filter(|a| sitebot::knowledge::language::detect_confident(&a.text) == Some(lang))
        .collect()
}

/// One language's questions on English knowledge (`pair`) under `model`: right/answered on held-out articles
/// and on all, the share of them answered with their own article removed, and that language's off-topic
/// questions (`off_topic_in`) answered.
fn language_row(pair: &Pair, off: &[&Asked], model: &Model) -> String {
    let held_out = |a: usize| a % 2 == 1;
    let (mut held, mut all, mut removed, mut offt) = (Tally::default(), Tally::default(), Tally::default(), Tally::default());
    for a in pair.asked.iter().filter(|a| a.paragraph.is_some()) {
        let top = best(&a.candidates, model);
        all.add(top, a.paragraph);
        if held_out(a.article) {
            held.add(top, a.paragraph);
        }
        removed.add(best(&without(&a.candidates, &pair.article_of, a.article), model), None);
    }
    for a in off {
        offt.add(best(&a.candidates, model), None);
    }
    format!("{} | {}  removed {}  off-topic {}/{}", held.show(true), all.show(true), removed.show(false), offt.answered, offt.n)
}

/// `--dump-translated FILE`: every cross-lingual candidate of every pair's questions, as the route ranks
/// them ("all"), with the question's article removed ("removed") and with its article's paragraphs alone
/// ("own", a small site of alike sections): pair, question, article, view, label, the features.
pub fn dump_translated(pairs: &[Pair], file: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::fs::File::create(file)?);
    writeln!(out, "pair\tquestion\tarticle\tview\tlabel\tlang\tcos\tlift\tb\td\tmargin\tshare\tbm25")?;
    for pair in pairs {
        for (qi, a) in pair.asked.iter().enumerate() {
            let mut views = vec![("all", a.candidates.clone())];
            if pair.removable && a.paragraph.is_some() {
                views.push(("removed", without(&a.candidates, &pair.article_of, a.article)));
                views.push(("own", within(&a.candidates, &pair.article_of, a.article)));
            }
            for (view, cs) in views {
                for (c, p) in cs.iter().filter(|(c, _)| c.cross_lingual) {
                    let label = view != "removed" && a.paragraph.is_some() && *p == a.paragraph;
                    let [cos, lift, b, d, margin] = c.cross_features();
                    let (share, lang) = c.translation.map_or((-1.0, ""), |t| (t.bm25_share, t.lang));
                    writeln!(
                        out,
                        "{}\t{qi}\t{}\t{view}\t{}\t{lang}\t{cos}\t{lift}\t{b}\t{d}\t{margin}\t{share}\t{}",
                        pair.name,
                        a.article,
                        label as u8,
                        c.bm25.unwrap_or(0.0)
                    )?;
                }
            }
        }
    }
    Ok(())
}

/// The store and engine as the server would open them, the environment's `SITEBOT_*` settings applied (say,
/// `SITEBOT_KNOWLEDGE__DICTIONARIES_DIR` set to an empty directory for the ranking without translations).
pub fn open(data: &Path) -> anyhow::Result<(Store, std::sync::Arc<Engine>)> {
    let config = Config::load(None, std::env::vars(), &sitebot::config::Overrides::default())?;
    Ok((sitebot::app::open_store(&config, data)?, Engine::open(&config.knowledge, data)?))
}

/// English visitors' questions that no XQuAD-R paragraph answers, for the English model (`english_report`):
/// `OFF_TOPIC` and `HELD_OUT_OFF_TOPIC` hold none in English. Those of even index are its fit's negatives
/// (article -1 in `--english-samples`), the others held out (-2).
pub const ENGLISH_OFF_TOPIC: &[&str] = &[
    "How much is shipping to Austria?", "Are you open on Sundays?", "Can I cancel my order?", "Where can I find my invoice?", "Can I pay cash on delivery?",
    "How long does delivery take?", "Can I book an appointment online?", "How do I reset my password?", "Do you offer a student discount?",
    "Can I return shoes I have already worn?", "What colour is a flamingo?", "How do I bake an apple pie?", "Is there parking near your shop?",
    "Do you have this jacket in size M?", "What is your refund policy?", "Can I change my delivery address?", "How do I unsubscribe from the newsletter?",
    "Do you ship to Canada?", "What are your opening hours on Saturday?", "Can I redeem a gift card in the store?",
    "How much does a professional teeth cleaning cost?", "Is the gym open on public holidays?", "How many litres of water should I drink a day?",
    "What will the weather be like tomorrow in Leeds?",
];

/// `--english`: the English model (`knowledge.english_model`, which must be on) on the English site's own
/// questions. Each English question (and each of `off`'s that the route would give the English model) is
/// ranked with the English model's vector as the route ranks it; prints R@1 and the answered share at the
/// default threshold, on the odd (held-out) articles and on all, the off-topic questions answered and the
/// share of questions answered with their article's candidates removed (all articles),
/// without the English model, with the shipped one, and with `XQUAD_ENGLISH=[cos,]b,d,en_cos,en_rank,bias`
/// (another `search::English`; without `cos`, its main cosine's weight 0 as shipped). With `--english-samples FILE`, writes
/// every candidate's English features (`Candidate::english_features`) with its article (-1 off-topic) and
/// label, a TSV line each, for `examples/scifact --fit --english-extra FILE`.
pub fn english_report(store: &Store, knowledge: &Engine, site: &Site, questions: &[Question], off: &[Question], article_of: &[usize]) -> anyhow::Result<()> {
    let english = knowledge.english.as_ref().ok_or_else(|| anyhow::anyhow!("--english: set SITEBOT_KNOWLEDGE__ENGLISH_MODEL=true"))?;
    let given = |q: &Question| sitebot::knowledge::is_english(sitebot::knowledge::language::detect_confident(&q.text), &q.text);
    let asked: Vec<&Question> = questions.iter().chain(off).filter(|q| given(q)).collect();
    let texts: Vec<String> = asked.iter().map(|q| q.text.clone()).collect();
    let vectors = english.embed_parallel_blocking(&texts, Purpose::Query)?;
    let fusion = Fusion::default();
    let mut ranked = Vec::new();
    let mut samples = String::new();
    for (q, en) in asked.iter().zip(&vectors) {
        let detected = sitebot::knowledge::language::detect_confident(&q.text);
        let query = search::LexicalQuery { text: &q.text, lang: "en", detected, depth: search::depth(5), soft: &[] };
        let cs = search::rank(store, knowledge, &site.id, &query, &q.vector, Some(en), &fusion, Mode::Hybrid)?;
        for c in &cs {
            if let Some(f) = c.english_features() {
                let label = q.paragraph.is_some() && site.paragraph_of.get(&c.key).copied() == q.paragraph;
                let article = if q.paragraph.is_some() {
                    q.article as i64
                } else if q.article % 2 == 0 {
                    -1
                } else {
                    -2
                };
                samples.push_str(&format!("{article}\t{}\t{}\t{}\t{}\t{}\t{}\n", label as u8, f[0], f[1], f[2], f[3], f[4]));
            }
        }
        ranked.push((*q, cs));
    }
    if let Some(file) = arg("--english-samples") {
        std::fs::write(&file, samples)?;
        println!("English samples written to {file}");
    }
    let parse = |s: String| -> anyhow::Result<search::English> {
        let w: Vec<f32> = s.split(',').map(|x| x.trim().parse()).collect::<Result<_, _>>()?;
        // Five: the main cosine's weight 0, as shipped; six: that weight first.
        let w = match w.len() {
            5 => [&[0.0][..], &w[..]].concat(),
            6 => w,
            _ => anyhow::bail!("XQUAD_ENGLISH: [cos,]b,d,en_cos,en_rank,bias"),
        };
        Ok(search::English { below: fusion.english.below, w_cos: w[0], w_bm25_rank: w[1], w_dense_rank: w[2], w_en_cos: w[3], w_en_rank: w[4], bias: w[5] })
    };
    let mut models: Vec<(&str, Option<search::English>)> = vec![("without the English model", None), ("shipped English model", Some(fusion.english))];
    if let Ok(w) = std::env::var("XQUAD_ENGLISH") {
        models.push(("XQUAD_ENGLISH", Some(parse(w)?)));
    }
    let n = ENGLISH_OFF_TOPIC.len();
    println!("{:<26} {:>14} {:>14} {:>11} {:>8}", "English questions on en", "held-out R@1", "all R@1", "off-topic", "removed");
    println!("{:<26} {:>14} {:>14} {:>11} {:>8}", "", "(answered)", "(answered)", format!("{} / {} of", n.div_ceil(2), n / 2), "answered");
    // Each answerable question again with its article's candidates removed (`without`; the English rank
    // given again among those left): the knowledge cannot answer it.
    let removed: Vec<Vec<Candidate>> = ranked
        .iter()
        .filter(|(q, _)| q.paragraph.is_some())
        .map(|(q, cs)| {
            let with: Vec<(Candidate, Option<usize>)> = cs.iter().map(|c| (c.clone(), site.paragraph_of.get(&c.key).copied())).collect();
            let mut left: Vec<Candidate> = without(&with, article_of, q.article).into_iter().map(|(c, _)| c).collect();
            let mut order: Vec<usize> = (0..left.len()).filter(|&i| left[i].english.is_some()).collect();
            order.sort_by(|&a, &b| left[b].english.map(|e| e.0).unwrap_or(0.0).total_cmp(&left[a].english.map(|e| e.0).unwrap_or(0.0)));
            for (rank, i) in order.into_iter().enumerate() {
                left[i].english = left[i].english.map(|(cos, _)| (cos, rank + 1));
            }
            left
        })
        .collect();
    for (name, model) in models {
        let (mut held, mut all, mut off_answered) = ([0usize; 3], [0usize; 3], [0usize; 2]);
        let score = |c: &Candidate| match model {
            Some(m) => Fusion { english: m, ..fusion }.score(c),
            None => fusion.score(&Candidate { english: None, ..c.clone() }),
        };
        let top = |cs: &[Candidate]| cs.iter().map(score).fold(0f32, f32::max);
        let removed_answered = removed.iter().filter(|cs| top(cs) >= THRESHOLD).count();
        for (q, cs) in &ranked {
            let Some(best) = cs.iter().max_by(|a, b| score(a).total_cmp(&score(b)).then(b.key.cmp(&a.key))) else { continue };
            let answered = score(best) >= THRESHOLD;
            let Some(p) = q.paragraph else {
                off_answered[q.article % 2] += answered as usize;
                continue;
            };
            let right = site.paragraph_of.get(&best.key) == Some(&p);
            for (t, counts) in [(true, &mut all), (q.article % 2 == 1, &mut held)] {
                if t {
                    counts[0] += 1;
                    counts[1] += (right && answered) as usize;
                    counts[2] += answered as usize;
                }
            }
        }
        let share = |c: [usize; 3]| format!("{:.3} ({:.3})", c[1] as f64 / c[0].max(1) as f64, c[2] as f64 / c[0].max(1) as f64);
        println!(
            "{name:<26} {:>14} {:>14} {:>4} / {:<4} {:>8.3}",
            share(held),
            share(all),
            off_answered[0],
            off_answered[1],
            removed_answered as f64 / removed.len().max(1) as f64
        );
    }
    Ok(())
}

/// `--dump-same FILE` with `--fit`: every candidate of questions on knowledge in their own language (en on
/// en, de on de, es on es, and the off-topic visitors' questions in the site's language), the model that
/// scores them being `Fusion`'s main one, fitted on SciFact alone, whose every claim has an answer. A TSV
/// line a candidate: the site's language, the kind (`q` a question; `r` the same with its article's
/// candidates removed, as `without` ranks them; `o` off-topic), the question's number and article (-1
/// off-topic), the label, then cos, lift, BM25 rank feature, dense rank feature, margin (every candidate
/// related, `search::relate`, as the route relates those of a confidently detected question) and the BM25
/// score over the best candidate's (0 without one).
pub fn dump_same(store: &Store, knowledge: &Engine, sites: &[(&Site, &[Question])], off: &[Question], article_of: &[usize], file: &str) -> anyhow::Result<()> {
    let mut out = String::from("lang\tkind\tquestion\tarticle\tlabel\tcos\tlift\tb\td\tmargin\tbm25_share\n");
    let mut line = |lang: &str, kind: char, n: usize, article: i64, cs: &[(Candidate, Option<usize>)], paragraph: Option<usize>| {
        let mut plain: Vec<Candidate> = cs.iter().map(|(c, _)| c.clone()).collect();
        search::relate(&mut plain);
        let best_bm25 = plain.iter().filter_map(|c| c.bm25).fold(f64::MIN_POSITIVE, f64::max);
        for (c, (_, p)) in plain.iter().zip(cs) {
            if c.cross_lingual || c.faq {
                continue;
            }
            let [cos, lift, b, d, margin] = c.cross_features();
            let label = paragraph.is_some() && *p == paragraph;
            let share = c.bm25.map_or(0.0, |x| x / best_bm25);
            out.push_str(&format!("{lang}\t{kind}\t{n}\t{article}\t{}\t{cos}\t{lift}\t{b}\t{d}\t{margin}\t{share}\n", label as u8));
        }
    };
    for (site, questions) in sites {
        for (n, q) in questions.iter().enumerate() {
            let cs = ask(store, knowledge, site, q)?;
            line(site.lang, 'q', n, q.article as i64, &cs, q.paragraph);
            line(site.lang, 'r', n, q.article as i64, &without(&cs, article_of, q.article), None);
        }
        for (n, q) in off.iter().enumerate() {
            if sitebot::knowledge::language::detect_confident(&q.text) == Some(site.lang) {
                line(site.lang, 'o', n, -1, &ask(store, knowledge, site, q)?, None);
            }
        }
    }
    std::fs::write(file, out)?;
    println!("same-language candidates written to {file}");
    Ok(())
}
