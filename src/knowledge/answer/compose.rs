//! Grounded answers by construction: no generative model. The answer is made of sentences quoted from
//! the retrieved passages, each run of sentences followed by the `[n]` marker of the source it comes
//! from, so it can only say what a source says.
//!
//! Sentence choice: every sentence of every passage is scored by the passage's relevance times how much
//! of the question it covers (its search terms in the question's language, `analysis::terms`: Snowball
//! stems, character pairs for Chinese, Japanese and Thai); a passage's first sentence gets
//! a small bonus (an FAQ answer or a section's lead usually answers directly); questions are never
//! quoted (an FAQ's question is its heading, not its answer). The best sentence is kept, then up to
//! `MAX_SENTENCES` more that score at least half as well and are not near-duplicates of one already
//! kept. They are read out by source rank, then in document order, so sentences of one passage keep
//! their flow.

use std::collections::HashSet;

use crate::knowledge::search::Passage;
use crate::knowledge::search::analysis::terms;
use crate::knowledge::text::sentences;

const MAX_SENTENCES: usize = 3;
const MAX_CHARS: usize = 700;

/// The languages [`fallback`] has its own text for: every language detection knows
/// (`language::codes`). The widget's interface speaks each of them too.
pub const FALLBACK_LANGUAGES: [&str; 28] = [
    "en", "de", "fr", "es", "it", "pt", "nl", "pl", "sv", "ru", "uk", "bg", "ja", "zh", "ar", "tr", "el", "hi", "th", "vi", "ko", "he", "da", "fi", "cs", "ro",
    "hu", "id",
];

/// The localized "not in my knowledge" answer, by primary language subtag (English otherwise).
pub fn fallback(lang: &str) -> &'static str {
    match lang.split('-').next().unwrap_or("").to_ascii_lowercase().as_str() {
        "de" => "Dazu habe ich in den Informationen dieser Website leider nichts gefunden. Bitte wenden Sie sich direkt an uns, wir helfen Ihnen gerne weiter.",
        "fr" => {
            "Je n'ai malheureusement rien trouvé à ce sujet dans les informations de ce site. N'hésitez pas à nous contacter directement, nous vous aiderons volontiers."
        }
        "es" => "Lo siento, no he encontrado información sobre eso en este sitio. Póngase en contacto con nosotros directamente y le ayudaremos con gusto.",
        "it" => "Purtroppo non ho trovato nulla su questo argomento nelle informazioni di questo sito. Contattateci direttamente, saremo lieti di aiutarvi.",
        "pt" => {
            "Infelizmente, não encontrei nada sobre isso nas informações deste site. Entre em contacto connosco diretamente e teremos todo o gosto em ajudar."
        }
        "nl" => {
            "Helaas heb ik daarover niets gevonden in de informatie van deze website. Neem gerust rechtstreeks contact met ons op, we helpen u graag verder."
        }
        "pl" => "Niestety nie znalazłem nic na ten temat w informacjach na tej stronie. Prosimy o bezpośredni kontakt, chętnie pomożemy.",
        "sv" => "Tyvärr hittade jag inget om det i informationen på den här webbplatsen. Kontakta oss gärna direkt, så hjälper vi dig.",
        "ru" => "К сожалению, я не нашёл информации об этом на нашем сайте. Пожалуйста, свяжитесь с нами напрямую, мы с радостью поможем.",
        "uk" => "На жаль, я не знайшов інформації про це на нашому сайті. Будь ласка, зв'яжіться з нами напряму, ми з радістю допоможемо.",
        "bg" => "За съжаление не намерих информация по този въпрос на нашия сайт. Моля, свържете се директно с нас, ще се радваме да помогнем.",
        "ja" => {
            "申し訳ありませんが、このサイトの情報にはその件について見つかりませんでした。お手数ですが、直接お問い合わせください。喜んでお手伝いいたします。"
        }
        "zh" => "抱歉，本网站的信息中没有找到相关内容。请直接与我们联系，我们很乐意为您提供帮助。",
        "ar" => "عذرًا، لم أجد أي معلومات حول ذلك في هذا الموقع. يرجى التواصل معنا مباشرة وسنكون سعداء بمساعدتك.",
        "tr" => {
            "Maalesef bu sitenin bilgilerinde bununla ilgili bir şey bulamadım. Lütfen doğrudan bizimle iletişime geçin, size memnuniyetle yardımcı oluruz."
        }
        "el" => "Λυπάμαι, δεν βρήκα τίποτα σχετικό στις πληροφορίες αυτού του ιστότοπου. Επικοινωνήστε απευθείας μαζί μας και θα χαρούμε να σας βοηθήσουμε.",
        "hi" => "क्षमा करें, इस वेबसाइट की जानकारी में मुझे इसके बारे में कुछ नहीं मिला। कृपया हमसे सीधे संपर्क करें, हमें आपकी मदद करके खुशी होगी।",
        "th" => "ขออภัย ฉันไม่พบข้อมูลเกี่ยวกับเรื่องนี้ในเว็บไซต์นี้ กรุณาติดต่อเราโดยตรง เรายินดีให้ความช่วยเหลือ",
        "vi" => {
            "Xin lỗi, tôi không tìm thấy thông tin nào về điều đó trên trang web này. Vui lòng liên hệ trực tiếp với chúng tôi, chúng tôi rất sẵn lòng hỗ trợ."
        }
        "ko" => "죄송합니다. 이 사이트의 정보에서 해당 내용을 찾지 못했습니다. 저희에게 직접 문의해 주시면 기꺼이 도와드리겠습니다.",
        "he" => "מצטערים, לא מצאתי מידע על כך באתר הזה. אפשר לפנות אלינו ישירות ונשמח לעזור.",
        "da" => "Desværre fandt jeg ikke noget om det i oplysningerne på denne hjemmeside. Kontakt os gerne direkte, så hjælper vi dig.",
        "fi" => "Valitettavasti en löytänyt tämän sivuston tiedoista mitään siitä. Ota meihin yhteyttä suoraan, autamme mielellämme.",
        "cs" => "Bohužel jsem v informacích na tomto webu nic takového nenašel. Kontaktujte nás prosím přímo, rádi vám pomůžeme.",
        "ro" => "Din păcate, nu am găsit nimic despre acest subiect în informațiile acestui site. Vă rugăm să ne contactați direct, vă vom ajuta cu plăcere.",
        "hu" => "Sajnos nem találtam erről semmit a webhely információi között. Kérjük, forduljon hozzánk közvetlenül, szívesen segítünk.",
        "id" => {
            "Maaf, saya tidak menemukan informasi tentang hal itu di situs ini. Silakan hubungi kami secara langsung, kami akan dengan senang hati membantu."
        }
        _ => "Sorry, I couldn't find anything about that in this site's information. Please contact us directly and we'll be glad to help.",
    }
}

struct Candidate {
    source: usize,
    position: usize,
    text: String,
    words: HashSet<String>,
    score: f32,
}

fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> f32 {
    let inter = a.intersection(b).count() as f32;
    let union = a.union(b).count() as f32;
    if union == 0.0 { 0.0 } else { inter / union }
}

/// Composes the answer from `passages` (in source order: marker `[i + 1]` cites `passages[i]`), comparing
/// words in `lang` (the question's language, ISO 639-1). Returns `None` when no passage has a quotable
/// sentence.
pub fn compose(question: &str, lang: &str, passages: &[Passage]) -> Option<String> {
    let q: HashSet<String> = terms(lang, question).into_iter().collect();
    let mut candidates = Vec::new();
    for (source, p) in passages.iter().enumerate() {
        for (position, s) in sentences(&p.chunk.text).into_iter().enumerate() {
            let words: HashSet<String> = terms(lang, &s).into_iter().collect();
            if s.ends_with(['?', '？']) || (words.len() < 2 && s.split_whitespace().count() < 2) {
                continue;
            }
            let coverage = if q.is_empty() { 0.0 } else { q.intersection(&words).count() as f32 / q.len() as f32 };
            let lead = if position == 0 { 0.15 } else { 0.0 };
            let score = p.score * (0.35 + coverage + lead);
            candidates.push(Candidate { source, position, text: s, words, score });
        }
    }
    candidates.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.source.cmp(&b.source)).then(a.position.cmp(&b.position)));
    let best = candidates.first()?.score;
    let mut kept: Vec<Candidate> = Vec::new();
    let mut chars = 0;
    for c in candidates {
        if kept.len() >= MAX_SENTENCES || c.score < best * 0.5 {
            break;
        }
        if chars > 0 && chars + c.text.len() > MAX_CHARS {
            continue;
        }
        if kept.iter().any(|k| jaccard(&k.words, &c.words) > 0.6 || k.text == c.text) {
            continue;
        }
        chars += c.text.len();
        kept.push(c);
    }
    kept.sort_by_key(|c| (c.source, c.position));
    let mut out = String::new();
    for (i, c) in kept.iter().enumerate() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&c.text);
        let last_of_run = kept.get(i + 1).is_none_or(|n| n.source != c.source);
        if last_of_run {
            if !c.text.ends_with(['.', '!', '?', ':', ';', '"', ')', '。', '！', '？']) {
                out.push('.');
            }
            out.push_str(&format!(" [{}]", c.source + 1));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use crate::knowledge::answer::compose::*;
    use crate::store::knowledge::ChunkRow;

    fn passage(text: &str, score: f32) -> Passage {
        let chunk = ChunkRow {
            key: 1,
            id: "chk_1".into(),
            document_id: "doc_1".into(),
            source: "s".into(),
            title: "T".into(),
            heading: "T".into(),
            url: None,
            text: text.into(),
        };
        Passage { chunk, score }
    }

    #[test]
    fn quotes_the_covering_sentences_with_markers() {
        let ps = vec![
            passage("We are open Monday to Friday from 8 am to 6 pm. Parking is free.", 0.9),
            passage("On Saturdays we are open from 9 am to 1 pm. Our team speaks English.", 0.7),
        ];
        let a = compose("When are you open on Saturday?", "en", &ps).unwrap();
        assert!(a.contains("On Saturdays we are open from 9 am to 1 pm. [2]"), "{a}");
        assert!(!a.contains("Parking"), "{a}");
        assert!(a.starts_with("We are open Monday"), "{a}");
    }

    #[test]
    fn near_duplicates_are_quoted_once() {
        let ps = vec![passage("A check-up costs 60 euros.", 0.9), passage("A check-up costs 60 euros!", 0.8)];
        let a = compose("How much is a check-up?", "en", &ps).unwrap();
        assert_eq!(a, "A check-up costs 60 euros. [1]");
    }

    /// A question in any language detection tells apart is answered in it when nothing is found, not in
    /// English marked with its language.
    #[test]
    fn every_detected_language_has_its_fallback() {
        for code in crate::knowledge::language::codes() {
            assert!(FALLBACK_LANGUAGES.contains(&code), "no fallback text in {code}");
        }
        assert_eq!(crate::knowledge::language::codes().count(), FALLBACK_LANGUAGES.len());
    }

    #[test]
    fn fallbacks_are_localized() {
        assert!(fallback("de-CH").starts_with("Dazu"));
        assert!(fallback("xx").starts_with("Sorry"));
        let all = FALLBACK_LANGUAGES;
        let texts: HashSet<&str> = all.iter().map(|l| fallback(l)).collect();
        assert_eq!(texts.len(), all.len(), "each language has its own text");
        // Each text is in its language, as the detector reads it.
        for l in all {
            assert_eq!(crate::knowledge::language::detect(fallback(l)).map(|d| d.code), Some(l), "{l}");
        }
    }
}
