//! Language detection on short questions: accuracy and the share detected confidently, per language,
//! for `knowledge::language::detect` and for whatlang with every language enabled.
//!
//! ```text
//! cargo run --release --example langid     # XQuAD-R questions (en, de, es) and built-in questions in 13 more languages
//! cargo run --release --example langid -- --more DIR   # also XQuAD-R's ar, el, hi, ru, th, tr, vi, zh (lareqa's xquad-r/)
//! cargo run --release --example langid -- --tsv FILE    # the texts of FILE instead (`lang<TAB>text` lines), such as
//!                                                      # Debian's translated messages: python3 benches/langid_messages.py
//! cargo run --release --example langid -- --show-wrong  # also each text detected confidently as another language
//! ```
//! Questions come from `../shared/eval/xquad-r/{en,de,es}.json` (1,190 each), from the list below
//! (six typical website questions each in fr, it, pt, nl, pl, sv, ru, uk, bg, ja, zh, ar, tr) and, with
//! `--more`, from the other languages of XQuAD-R (1,190 each; their set replaces the built-in one).

use std::collections::BTreeMap;

use sitebot::knowledge::language::{self, CONFIDENT};

#[path = "common/mod.rs"]
mod common;

const BUILT_IN: &[(&str, &[&str])] = &[
    (
        "fr",
        &[
            "Quels sont vos horaires d'ouverture ?", "Combien coûte un détartrage ?", "Acceptez-vous les enfants ?", "Où puis-je me garer ?",
            "Comment prendre rendez-vous ?", "Faites-vous des devis gratuits ?",
        ],
    ),
    (
        "it",
        &[
            "Quali sono i vostri orari di apertura?", "Quanto costa una pulizia dei denti?", "Accettate bambini?", "Dove posso parcheggiare?",
            "Come posso prenotare un appuntamento?", "Fate preventivi gratuiti?",
        ],
    ),
    (
        "pt",
        &[
            "Qual é o horário de funcionamento?", "Quanto custa uma limpeza?", "Vocês atendem crianças?", "Onde posso estacionar?", "Como faço uma marcação?",
            "Fazem orçamentos gratuitos?",
        ],
    ),
    (
        "nl",
        &[
            "Wat zijn jullie openingstijden?", "Hoeveel kost een gebitsreiniging?", "Behandelen jullie ook kinderen?", "Waar kan ik parkeren?",
            "Hoe maak ik een afspraak?", "Is een offerte gratis?",
        ],
    ),
    (
        "pl",
        &[
            "Jakie są godziny otwarcia?", "Ile kosztuje czyszczenie zębów?", "Czy przyjmujecie dzieci?", "Gdzie mogę zaparkować?", "Jak umówić wizytę?",
            "Czy wycena jest bezpłatna?",
        ],
    ),
    (
        "sv",
        &[
            "Vilka är era öppettider?", "Vad kostar en tandrengöring?", "Tar ni emot barn?", "Var kan jag parkera?", "Hur bokar jag en tid?",
            "Är offerten gratis?",
        ],
    ),
    (
        "ru",
        &[
            "Какие у вас часы работы?", "Сколько стоит чистка зубов?", "Вы лечите детей?", "Где можно припарковаться?", "Как записаться на приём?",
            "Смета бесплатная?",
        ],
    ),
    (
        "ja",
        &[
            "営業時間は何時から何時までですか？", "歯のクリーニングはいくらですか？", "子供も診てもらえますか？", "駐車場はありますか？",
            "予約はどうすればいいですか？", "見積もりは無料ですか？",
        ],
    ),
    (
        "uk",
        &[
            "Який у вас графік роботи?", "Скільки коштує чистка зубів?", "Чи лікуєте ви дітей?", "Де можна припаркуватися?", "Як записатися на прийом?",
            "Чи безкоштовний кошторис?",
        ],
    ),
    (
        "bg",
        &[
            "Какво е работното ви време?",
            "Колко струва почистването на зъбите?",
            "Лекувате ли деца?",
            "Къде мога да паркирам?",
            "Как да си запазя час?",
            "Безплатна ли е офертата?",
        ],
    ),
    ("zh", &["你们的营业时间是什么？", "洗牙多少钱？", "你们给儿童看牙吗？", "在哪里可以停车？", "怎么预约？", "报价是免费的吗？"]),
    ("ar", &["ما هي ساعات العمل لديكم؟", "كم تكلفة تنظيف الأسنان؟", "هل تعالجون الأطفال؟", "أين يمكنني ركن السيارة؟", "كيف أحجز موعدا؟", "هل عرض السعر مجاني؟"]),
    (
        "tr",
        &[
            "Çalışma saatleriniz nedir?", "Diş temizliği ne kadar?", "Çocuklara bakıyor musunuz?", "Nereye park edebilirim?", "Nasıl randevu alabilirim?",
            "Fiyat teklifi ücretsiz mi?",
        ],
    ),
];

fn xquad(dir: &str, lang: &str) -> Vec<String> {
    let path = format!("{dir}/{lang}.json");
    let Ok(text) = std::fs::read_to_string(&path) else { return Vec::new() };
    let v: serde_json::Value = serde_json::from_str(&text).expect("XQuAD-R JSON");
    let mut out = Vec::new();
    for article in v["data"].as_array().into_iter().flatten() {
        for p in article["paragraphs"].as_array().into_iter().flatten() {
            for qa in p["qas"].as_array().into_iter().flatten() {
                out.extend(qa["question"].as_str().map(str::to_owned));
            }
        }
    }
    out
}

/// whatlang's code for the languages measured.
fn iso639_3(lang: &str) -> &'static str {
    match lang {
        "en" => "eng",
        "de" => "deu",
        "fr" => "fra",
        "es" => "spa",
        "it" => "ita",
        "pt" => "por",
        "nl" => "nld",
        "pl" => "pol",
        "sv" => "swe",
        "ru" => "rus",
        "ja" => "jpn",
        "zh" => "cmn",
        "ar" => "ara",
        "uk" => "ukr",
        "bg" => "bul",
        "el" => "ell",
        "hi" => "hin",
        "th" => "tha",
        "vi" => "vie",
        "tr" => "tur",
        "da" => "dan",
        "fi" => "fin",
        "cs" => "ces",
        "ro" => "ron",
        "hu" => "hun",
        "id" => "ind",
        _ => "?",
    }
}

fn main() {
    let mut sets: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for l in ["en", "de", "es"] {
        sets.insert(l, xquad("../shared/eval/xquad-r", l));
    }
    for (l, qs) in BUILT_IN {
        sets.insert(l, qs.iter().map(|q| q.to_string()).collect());
    }
    if let Some(dir) = common::arg("--more") {
        for l in ["ar", "el", "hi", "ru", "th", "tr", "vi", "zh"] {
            sets.insert(l, xquad(&dir, l));
        }
    }
    // `--tsv FILE`: its texts instead, a language code and a text a line (benches/langid_messages.py).
    let tsv = common::arg("--tsv").map(|f| std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{f}: {e}")));
    if let Some(tsv) = &tsv {
        sets.clear();
        for (lang, text) in tsv.lines().filter_map(|l| l.split_once('\t')) {
            sets.entry(lang).or_default().push(text.to_owned());
        }
    }
    // `--show-wrong`: each text detected confidently as another language, listed above its language's line.
    let show_wrong = std::env::args().any(|a| a == "--show-wrong");
    println!("{:<4} {:>6} {:>10} {:>12} {:>14} {:>12}", "lang", "n", "accuracy", "confident", "conf. wrong", "whatlang all");
    let (mut total, mut right, mut confident_wrong) = (0, 0, 0);
    for (lang, qs) in &sets {
        let (mut ok, mut conf, mut conf_bad, mut all_ok) = (0, 0, 0, 0);
        for q in qs {
            let d = language::detect(q);
            let code = d.map(|d| d.code);
            ok += (code == Some(*lang)) as usize;
            if d.is_some_and(|d| d.confidence >= CONFIDENT) {
                conf += 1;
                conf_bad += (code != Some(*lang)) as usize;
                if code != Some(*lang) && show_wrong {
                    println!("  confidently {}: {q}", code.unwrap_or("-"));
                }
            }
            let plain = whatlang::detect(q).map(|i| i.lang().code());
            all_ok += (plain == Some(iso639_3(lang))) as usize;
        }
        let n = qs.len().max(1) as f64;
        println!("{lang:<4} {:>6} {:>10.3} {:>12.3} {:>14} {:>12.3}", qs.len(), ok as f64 / n, conf as f64 / n, conf_bad, all_ok as f64 / n);
        total += qs.len();
        right += ok;
        confident_wrong += conf_bad;
    }
    println!("all  {total:>6} {:>10.3}  confidently wrong: {confident_wrong}", right as f64 / total as f64);
    // What another threshold would give: the share of questions taken as their detection, and the share wrong.
    for t in [0.1f32, 0.2, 0.3, 0.4, 0.5] {
        let (mut taken, mut wrong) = (0, 0);
        for (lang, qs) in &sets {
            for d in qs.iter().filter_map(|q| language::detect(q)).filter(|d| d.confidence >= t) {
                taken += 1;
                wrong += (d.code != *lang) as usize;
            }
        }
        println!("threshold {t:.1}: {:.3} taken, {:.4} of all wrong", taken as f64 / total as f64, wrong as f64 / total as f64);
    }
}
