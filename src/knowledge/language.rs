//! The language of a question or a document, with a confidence (whatlang: script detection, then
//! trigram profiles of 69 languages; no model to load, microseconds a question).
//!
//! Short questions are hard: "Preis?" could be several languages. A detection counts only when its
//! confidence reaches `CONFIDENT` (measured on short questions in 14 languages, see
//! `examples/langid.rs` and the README); below it the caller falls back to the site's language. Scripts
//! that name one language (Japanese kana, Hangul, Thai, Greek, Hebrew...) are confident however short
//! the text, which whatlang's confidence already says.

use std::sync::OnceLock;

use whatlang::{Detector, Lang};

/// Detections below this confidence are not trusted. Measured on 3,636 short questions in 14 languages:
/// at 0.4, 86.5 % are taken as detected and 0.5 % of all are wrong; at 0.3, 89.4 % and 1.0 %; at 0.5,
/// 83.4 % and 0.4 %.
pub const CONFIDENT: f32 = 0.4;

/// A detected language: an ISO 639-1 code and whatlang's confidence in [0, 1].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Detected {
    pub code: &'static str,
    pub confidence: f32,
}

impl Detected {
    pub fn is_confident(&self) -> bool {
        self.confidence >= CONFIDENT
    }
}

/// The languages considered: the 14 that sitebot first answered in (fallback texts, stemmers or
/// segmentation; Ukrainian and Bulgarian have fallback texts too now) and 14 more that are common on
/// European and Asian business sites. With all 69 of whatlang's, short
/// questions went to near neighbours (Arabic to Persian and Urdu, Swedish to Danish and Bokmål, Dutch
/// to Afrikaans, Italian to Latin): measured with `examples/langid.rs`, see the README.
const LANGUAGES: [Lang; 28] = [
    Lang::Eng,
    Lang::Deu,
    Lang::Fra,
    Lang::Spa,
    Lang::Ita,
    Lang::Por,
    Lang::Nld,
    Lang::Pol,
    Lang::Swe,
    Lang::Rus,
    Lang::Jpn,
    Lang::Cmn,
    Lang::Ara,
    Lang::Tur,
    Lang::Kor,
    Lang::Tha,
    Lang::Ell,
    Lang::Heb,
    Lang::Hin,
    Lang::Ukr,
    Lang::Dan,
    Lang::Fin,
    Lang::Ces,
    Lang::Ron,
    Lang::Hun,
    Lang::Vie,
    Lang::Ind,
    Lang::Bul,
];

fn detector() -> &'static Detector {
    static DETECTOR: OnceLock<Detector> = OnceLock::new();
    DETECTOR.get_or_init(|| Detector::with_allowlist(LANGUAGES.to_vec()))
}

/// The language of `text`, if whatlang can tell one.
///
/// Four corrections to whatlang's answer, from what the letters and words themselves say:
/// - A question that mixes another script with Latin words ("Что такое Engineering News-Record?") is
///   in the other script's language: whatlang takes the script with the most letters, so the Latin
///   name won. When letters of another script make up at least a quarter of the text's
///   ([`focus`]), the Latin letters are left out of the detection.
/// - Russian, Ukrainian and Bulgarian share most trigrams, and whatlang told a short Russian question
///   from the other two poorly (XQuAD-R's 1,190 Russian questions: 79 % confidently Russian, 2 %
///   confidently Ukrainian or Bulgarian). [`cyrillic`] decides by the letters only one of them has, then
///   by the question words only one of them uses.
/// - A Latin-script text whatlang is unsure of is German when it has German's own words ([`german`]),
///   Danish when it has Danish's and nothing Swedish ([`danish`]), Hungarian when it has Hungarian's
///   ([`hungarian`]).
/// - A Latin-script text of ASCII letters is English when its English function words outnumber every
///   other language's own ([`english`]), whatever trigrams guessed.
pub fn detect(text: &str) -> Option<Detected> {
    let text = focus(text);
    let info = detector().detect(&text)?;
    let whatlang = Detected { code: iso639_1(info.lang()), confidence: info.confidence() as f32 };
    if info.script() == whatlang::Script::Cyrillic {
        return Some(cyrillic(&text).unwrap_or(whatlang));
    }
    if info.script() == whatlang::Script::Latin {
        let lower = text.to_lowercase();
        let words = words(&lower);
        if !whatlang.is_confident()
            && let Some(decided) = german(&words, whatlang).or_else(|| danish(&lower, &words)).or_else(|| hungarian(&lower, &words, whatlang))
        {
            return Some(decided);
        }
        return Some(english(&lower, &words, whatlang).unwrap_or(whatlang));
    }
    Some(whatlang)
}

/// Words only German writes of the Latin-script languages considered (not "die", "was", "wie", "der",
/// "den", "des", "mit", "von", "um", "als": English, Dutch, Danish, French or Portuguese words too).
const GERMAN_WORDS: &[&str] = &[
    "und", "ist", "wurde", "wurden", "wird", "werden", "nicht", "auch", "für", "über", "welche", "welcher", "welches", "welchen", "welchem", "wann", "warum",
    "wieso", "weshalb", "wer", "wen", "wem", "ein", "eine", "einem", "einen", "einer", "eines", "zum", "zur", "bei", "nach", "gegen", "seit", "viele",
    "vielen", "hatte", "hatten", "haben", "gibt", "kann", "können", "ihre", "ihrer", "seine", "seiner", "sich", "zu", "aus", "auf", "oder", "dass", "noch",
    "sehr", "heute", "jahr", "jahre", "jahren",
];

/// German, for a Latin-script text whatlang is unsure of, when two of its words are German only, or one
/// is and whatlang's best guess is German. A German question naming English things ("Wer gewann den Super
/// Bowl XLIX?") looks half English to trigrams: 18 % of XQuAD-R's German questions were unsure, 7 of 10
/// of them are German by this; no English, Spanish, Turkish or Vietnamese question of XQuAD-R's has
/// even one of these words.
fn german(words: &[&str], whatlang: Detected) -> Option<Detected> {
    let votes = votes(words, GERMAN_WORDS);
    (votes >= 2 || votes == 1 && whatlang.code == "de").then_some(Detected { code: "de", confidence: CONFIDENT })
}

/// Words only Danish writes of the languages considered: its question words (Swedish writes "vem",
/// "vad", "var", "när", "hur") and a few of its commonest.
const DANISH_WORDS: &[&str] =
    &["hvem", "hvad", "hvor", "hvornår", "hvordan", "hvorfor", "hvilken", "hvilket", "hvilke", "hvis", "ikke", "jeg", "også", "havde", "bliver"];

/// Words and letters only Swedish writes of Danish's neighbours.
const SWEDISH_WORDS: &[&str] = &["och", "är", "inte", "jag", "av", "också", "hur", "vad", "vem", "när", "vilken", "vilket", "vilka", "varför"];

/// Danish, for a Latin-script text whatlang is unsure of, when it has one of Danish's own words or
/// letters (æ, ø) and nothing Swedish (its words, ä or ö). Short Danish questions read as Swedish or
/// Norwegian to trigrams: "Hvem vandt verdensmesterskabet i fodbold i 1954?" was unsure, and its visitor
/// got the site's language.
fn danish(lower: &str, words: &[&str]) -> Option<Detected> {
    let danish = votes(words, DANISH_WORDS) > 0 || lower.contains(['æ', 'ø']);
    let swedish = votes(words, SWEDISH_WORDS) > 0 || lower.contains(['ä', 'ö']);
    (danish && !swedish).then_some(Detected { code: "da", confidence: CONFIDENT })
}

/// Words only Hungarian writes of the languages considered: its articles, question words and commonest
/// function words (not "van", "mit": Dutch and German words too).
const HUNGARIAN_WORDS: &[&str] = &[
    "az", "egy", "és", "hogy", "nem", "volt", "vagy", "azt", "ezt", "mikor", "hol", "miért", "hogyan", "mennyi", "melyik", "milyen", "csak", "már", "még",
    "lesz", "lehet", "kell", "nagyon", "nincs", "minden", "után", "előtt", "között", "szerint", "mennyibe", "kerül",
];

/// Hungarian, for a Latin-script text whatlang is unsure of, when it has two of Hungarian's own words or
/// letters (ő, ű), or one and whatlang's best guess is Hungarian ("Mi az ára?" was 0.34 Hungarian).
fn hungarian(lower: &str, words: &[&str], whatlang: Detected) -> Option<Detected> {
    let evidence = votes(words, HUNGARIAN_WORDS) + lower.chars().filter(|c| matches!(c, 'ő' | 'ű')).count();
    (evidence >= 2 || evidence == 1 && whatlang.code == "hu").then_some(Detected { code: "hu", confidence: CONFIDENT })
}

/// English's function and question words.
const ENGLISH_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been", "being", "but", "by", "can", "cannot", "could", "did",
    "do", "does", "doing", "for", "from", "had", "has", "have", "having", "he", "her", "here", "his", "how", "i", "if", "in", "into", "is", "it", "its", "me",
    "my", "not", "of", "on", "or", "our", "she", "should", "so", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those",
    "to", "too", "us", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "please",
];

/// For each other Latin-script language detected: its own function and question words (a text with one of
/// them is never taken for English), and the words of [`ENGLISH_WORDS`] that are common words of it too
/// (French "on", Dutch "is", Polish "to"), which say nothing for English there.
const LATIN_WORDS: &[(&str, &[&str], &[&str])] = &[
    (
        "fr",
        &[
            "le", "la", "les", "un", "une", "des", "du", "de", "et", "est", "sont", "que", "qui", "quoi", "quel", "quelle", "quels", "quelles", "pour", "dans",
            "sur", "avec", "par", "pas", "ne", "ce", "cette", "ces", "il", "elle", "ils", "nous", "vous", "je", "au", "aux", "comment", "combien", "pourquoi",
            "quand", "où", "peut", "peux", "puis", "avez", "êtes", "mon", "votre", "vos", "leur", "se", "sa", "son", "ses", "été", "en", "y", "ou", "mais",
            "tout", "plus", "très", "faire", "fait", "être", "avoir", "a",
        ],
        &["a", "an", "as", "but", "me", "on", "or", "us"],
    ),
    (
        "es",
        &[
            "el", "la", "los", "las", "un", "una", "unos", "unas", "de", "del", "al", "y", "e", "o", "u", "que", "qué", "en", "es", "son", "por", "para",
            "con", "sin", "no", "se", "su", "sus", "lo", "le", "les", "como", "cómo", "cuál", "cuáles", "cuánto", "cuánta", "cuántos", "cuándo", "dónde",
            "quién", "quiénes", "hay", "está", "están", "fue", "ser", "estar", "puedo", "puede", "pueden", "tiene", "tienen", "tengo", "mi", "mis", "tu",
            "usted", "ustedes", "nos", "este", "esta", "esto", "ese", "esa", "eso", "más", "muy", "pero", "también", "entre", "sobre", "desde", "hasta",
        ],
        &["a", "he", "me", "has", "so"],
    ),
    (
        "it",
        &[
            "il", "lo", "la", "i", "gli", "le", "un", "uno", "una", "di", "del", "della", "dei", "delle", "degli", "da", "dal", "dalla", "in", "nel", "nella",
            "con", "su", "per", "tra", "fra", "e", "ed", "o", "che", "chi", "cosa", "come", "quale", "quali", "quanto", "quanti", "quando", "dove", "perché",
            "non", "è", "sono", "ha", "hanno", "si", "ci", "mi", "ti", "vi", "posso", "può", "questo", "questa", "quello", "quella", "anche", "più", "molto",
            "ma", "se", "al", "alla", "ai", "agli", "sul", "sulla", "all", "essere", "avere", "stato", "suo", "sua",
        ],
        &["a", "all", "in", "me", "do", "so", "i"],
    ),
    (
        "pt",
        &[
            "o", "a", "os", "as", "um", "uma", "uns", "umas", "de", "do", "da", "dos", "das", "em", "no", "na", "nos", "nas", "por", "para", "com", "sem", "e",
            "ou", "que", "quê", "qual", "quais", "quanto", "quantos", "quando", "onde", "como", "quem", "porque", "não", "é", "são", "foi", "ser", "estar",
            "está", "estão", "tem", "têm", "há", "pode", "posso", "se", "seu", "sua", "seus", "suas", "meu", "minha", "você", "vocês", "este", "esta", "isso",
            "isto", "esse", "essa", "mais", "muito", "mas", "também", "ao", "aos", "à", "pelo", "pela",
        ],
        &["a", "as", "do", "me", "for", "so"],
    ),
    (
        "nl",
        &[
            "de", "het", "een", "en", "van", "in", "is", "op", "te", "dat", "die", "dit", "deze", "met", "voor", "niet", "zijn", "er", "aan", "ook", "als",
            "bij", "door", "naar", "om", "uit", "over", "tot", "of", "maar", "wat", "wie", "waar", "wanneer", "waarom", "hoe", "welke", "hoeveel", "kan",
            "kunnen", "wordt", "worden", "werd", "heeft", "hebben", "ik", "je", "jij", "u", "uw", "mijn", "we", "wij", "ze", "zij", "hij", "was", "had",
        ],
        &["in", "is", "of", "was", "we", "me", "had", "been", "have", "an"],
    ),
    (
        "da",
        &[
            "og", "i", "at", "det", "en", "et", "den", "til", "er", "som", "på", "de", "med", "han", "af", "for", "ikke", "der", "var", "mig", "sig", "men",
            "har", "om", "vi", "min", "havde", "ham", "hun", "nu", "over", "da", "fra", "du", "ud", "sin", "dem", "os", "op", "man", "hans", "hvor", "eller",
            "hvad", "skal", "selv", "her", "alle", "vil", "blev", "kan", "kunne", "hvordan", "hvornår", "hvorfor", "hvilken", "hvilke", "hvem", "jeg", "også",
            "efter", "denne", "dette", "disse", "mange", "ved", "bliver",
        ],
        &["i", "at", "for", "her", "to", "is", "by", "and"],
    ),
    (
        "sv",
        &[
            "och", "i", "att", "det", "som", "en", "på", "är", "av", "för", "med", "till", "den", "har", "de", "inte", "om", "ett", "han", "men", "var", "in",
            "jag", "sig", "från", "vi", "så", "kan", "man", "när", "år", "säger", "hon", "under", "också", "efter", "eller", "nu", "sin", "där", "vid", "mot",
            "ska", "skulle", "kommer", "ut", "får", "finns", "vad", "hur", "vem", "varför", "vilken", "vilka", "vilket", "du", "ni", "min", "mitt", "dina",
            "era", "alla", "blev", "blir", "denna", "detta", "dessa",
        ],
        &["i", "all", "is", "by", "at", "for"],
    ),
    (
        "de",
        &[
            "der", "die", "das", "den", "dem", "des", "ein", "eine", "einen", "einem", "einer", "eines", "und", "oder", "ist", "sind", "war", "wie", "was",
            "wer", "wo", "wann", "warum", "welche", "welcher", "welches", "ich", "du", "sie", "wir", "ihr", "es", "mit", "von", "zu", "für", "auf", "im",
            "bei", "kann", "können", "habe", "haben", "hat", "mein", "meine", "nicht", "auch", "noch", "man", "gibt", "wird", "werden", "wurde", "aus", "in",
            "am", "nach", "über", "sich", "dass", "zum", "zur",
        ],
        &["in", "was", "will", "also", "so", "an", "am", "her"],
    ),
    (
        "ro",
        &[
            "și", "si", "în", "de", "la", "cu", "pe", "un", "o", "este", "sunt", "nu", "ce", "care", "cum", "când", "cand", "unde", "cine", "cât", "câte",
            "pentru", "din", "sau", "mai", "dar", "fost", "poate", "pot", "se", "să", "sa", "lui", "ei", "acest", "această", "acesta", "aceasta", "nostru",
            "vostru", "dumneavoastră", "al", "ale", "prin", "despre", "fi", "va", "vor", "ați", "am", "are", "au",
        ],
        &["a", "are", "i", "in", "an", "am", "do"],
    ),
    (
        "pl",
        &[
            "i", "w", "we", "z", "ze", "na", "do", "nie", "się", "to", "jest", "są", "że", "jak", "co", "czy", "o", "od", "po", "za", "dla", "przez", "ale",
            "lub", "albo", "jaki", "jaka", "jakie", "który", "która", "które", "kiedy", "gdzie", "kto", "dlaczego", "ile", "mogę", "może", "można", "był",
            "była", "było", "mój", "moja", "moje", "pan", "pani", "państwo", "ten", "ta", "te", "tego", "tym", "już", "jeszcze", "tak", "bardzo",
        ],
        &["a", "to", "on", "my", "do", "i", "by", "we"],
    ),
    (
        "cs",
        &[
            "a", "i", "v", "ve", "z", "ze", "na", "do", "ne", "se", "to", "je", "jsou", "že", "jak", "co", "o", "od", "po", "za", "pro", "při", "ale", "nebo",
            "jaký", "jaká", "jaké", "který", "která", "které", "kdy", "kde", "kdo", "proč", "kolik", "mohu", "může", "lze", "byl", "byla", "bylo", "můj",
            "moje", "váš", "vaše", "ten", "ta", "tento", "tato", "toto", "už", "ještě", "tak", "velmi", "jsem", "jste", "není", "bude",
        ],
        &["a", "to", "on", "by", "do", "i", "me", "my"],
    ),
    (
        "fi",
        &[
            "ja", "on", "ei", "se", "että", "hän", "oli", "ole", "olla", "kun", "niin", "mutta", "tai", "jos", "kuin", "mikä", "mitä", "missä", "milloin",
            "miksi", "miten", "kuka", "kuinka", "paljonko", "voi", "voin", "voiko", "onko", "ovat", "tämä", "tämän", "nämä", "sen", "ne", "me", "te", "he",
            "minä", "sinä", "myös", "vain", "kanssa", "jo", "sitten", "nyt", "mukaan", "ennen", "jälkeen",
        ],
        &["on", "me", "he"],
    ),
    (
        "hu",
        &[
            "a", "az", "egy", "és", "is", "hogy", "nem", "meg", "de", "van", "volt", "vagy", "ez", "azt", "ezt", "mi", "mit", "mikor", "hol", "ki", "miért",
            "hogyan", "mennyi", "melyik", "milyen", "csak", "már", "még", "lesz", "lehet", "kell", "fel", "el", "be", "össze", "nagyon", "vagyok", "vannak",
            "nincs", "egyik", "minden", "után", "előtt", "alatt", "között", "szerint",
        ],
        &["a", "is", "be"],
    ),
    (
        "id",
        &[
            "yang", "dan", "di", "ke", "dari", "untuk", "dengan", "ini", "itu", "tidak", "ada", "akan", "atau", "pada", "dalam", "oleh", "bisa", "dapat",
            "sudah", "juga", "apakah", "apa", "siapa", "kapan", "dimana", "mengapa", "kenapa", "bagaimana", "berapa", "harus", "tersebut", "saat", "jika",
            "kami", "kita", "saya", "anda", "mereka", "ia", "dia", "belum", "sedang", "telah", "sebagai", "adalah", "karena", "tetapi", "namun",
        ],
        &[],
    ),
    (
        "tr",
        &[
            "ve", "bir", "bu", "da", "de", "için", "ile", "mi", "mı", "mu", "mü", "ne", "nedir", "neydi", "neden", "nasıl", "nerede", "kim", "kimdir", "hangi",
            "kaç", "var", "yok", "değil", "olan", "olarak", "gibi", "çok", "daha", "ama", "veya", "ki", "şu", "o", "ben", "sen", "siz", "biz", "onlar",
            "sizin", "benim", "kadar", "sonra", "önce", "her",
        ],
        &["on", "an", "can", "her", "not"],
    ),
    (
        "vi",
        &[
            "và", "của", "là", "có", "không", "được", "cho", "với", "các", "những", "một", "này", "đó", "trong", "khi", "đã", "sẽ", "để", "người", "gì", "ai",
            "nào", "đâu", "bao", "nhiêu", "tại", "sao", "như", "thế", "bạn", "tôi", "chúng", "họ", "từ", "về", "ra", "vào", "lên", "cũng", "nhưng",
        ],
        &["an", "do", "in", "to", "so", "me", "on", "he", "my", "the"],
    ),
];

/// English, for a Latin-script text of ASCII letters (95 % of them at least) whose English function words
/// outnumber each other language's own ([`LATIN_WORDS`]): when whatlang is unsure and guesses English, one
/// English word no other language here writes; when it takes the text for another language, English words
/// that language does not write, and none of its own (more of them than of its own when it is unsure).
/// Technical English and short questions read as French, Danish or Spanish to trigrams ("Bone marrow cells
/// contribute to adult macrophage compartments." was confidently French; "Who won Super Bowl XLIX?" unsure):
/// such a visitor got the answer and the fallback in French, or on a German site in German.
fn english(lower: &str, words: &[&str], whatlang: Detected) -> Option<Detected> {
    // English is written in ASCII letters; a name or two may not be.
    let (letters, ascii) = lower.chars().filter(|c| c.is_alphabetic()).fold((0, 0), |(n, a), c| (n + 1, a + c.is_ascii() as usize));
    if letters == 0 || ascii * 20 < letters * 19 {
        return None;
    }
    let words: Vec<&str> = words.iter().copied().filter(|w| w.chars().count() > 1).collect();
    let count = |list: &[&str]| words.iter().filter(|w| list.contains(w)).count();
    let english = count(ENGLISH_WORDS);
    // No other language here has more of its own words in the text than English has.
    if english == 0 || LATIN_WORDS.iter().any(|(_, own, _)| count(own) > english) {
        return None;
    }
    let en = Some(Detected { code: "en", confidence: CONFIDENT });
    if whatlang.code == "en" {
        // Unsure: an English word no other language here writes.
        let anywhere = |w: &&str| LATIN_WORDS.iter().any(|(_, own, shared)| own.contains(w) || shared.contains(w));
        return (!whatlang.is_confident() && words.iter().any(|w| ENGLISH_WORDS.contains(w) && !anywhere(w))).then_some(en).flatten();
    }
    // Another language: English words it does not write, and none of its own (more of them than of its
    // own when whatlang is unsure of it).
    let (_, own, shared) = LATIN_WORDS.iter().find(|(code, _, _)| *code == whatlang.code)?;
    let (english, theirs) = (words.iter().filter(|w| ENGLISH_WORDS.contains(w) && !shared.contains(w)).count(), count(own));
    (english >= 1 && (theirs == 0 || !whatlang.is_confident() && english > theirs)).then_some(en).flatten()
}

/// The words of lower-cased `text`. Combining marks belong to their word (Turkish "İ" lower-cases to "i"
/// and a dot above), and so do apostrophes (Turkish "Jacksonville'in", French "l'heure": no English "in";
/// Ukrainian "зв'язок").
fn words(lower: &str) -> Vec<&str> {
    lower.split(|c: char| !c.is_alphabetic() && !matches!(c as u32, 0x300..=0x36F) && !matches!(c, '\'' | '’')).filter(|w| !w.is_empty()).collect()
}

/// How many of `words` are in `list`.
fn votes(words: &[&str], list: &[&str]) -> usize {
    words.iter().filter(|w| list.contains(w)).count()
}

/// How much a letter says about its script's language: a Chinese or Japanese character is about a word,
/// so it weighs as several letters of an alphabet.
fn weight(c: char) -> usize {
    match c as u32 {
        0x3040..=0x30FF | 0x3400..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF => 3,
        _ => 1,
    }
}

fn is_latin(c: char) -> bool {
    c.is_ascii_alphabetic() || matches!(c as u32, 0xC0..=0x24F | 0x1E00..=0x1EFF) && c.is_alphabetic()
}

/// `text` without its Latin letters when letters of another script weigh at least a quarter of
/// its letters; `text` itself otherwise.
fn focus(text: &str) -> std::borrow::Cow<'_, str> {
    let (mut latin, mut other) = (0, 0);
    for c in text.chars().filter(|c| c.is_alphabetic()) {
        if is_latin(c) {
            latin += 1;
        } else {
            other += weight(c);
        }
    }
    if latin == 0 || other == 0 || other * 4 < latin + other {
        return text.into();
    }
    // Letter by letter: Chinese, Japanese and Thai put no space between a Latin name and their words.
    text.chars().map(|c| if is_latin(c) { ' ' } else { c }).collect::<String>().into()
}

/// Letters that only Ukrainian (і, ї, є, ґ) or only Russian (ы, э, ё) of the three writes.
const UKRAINIAN_LETTERS: &[char] = &['і', 'ї', 'є', 'ґ'];
const RUSSIAN_LETTERS: &[char] = &['ы', 'э', 'ё'];
/// Question and function words that one language uses and the other two do not (none with the letters
/// above, which decide alone).
const RUSSIAN_WORDS: &[&str] = &[
    "что", "какой", "какая", "какие", "каком", "какую", "каких", "какого", "какому", "когда", "где", "кто", "куда", "откуда", "сколько", "почему", "зачем",
    "чем", "чему", "чего", "который", "которая", "которое", "которые", "которого", "которой", "котором", "был", "была", "было", "были", "для", "году", "года",
    "свою", "своей", "своего", "его", "ее", "их", "же", "через", "также", "самый", "самая", "очень", "можно", "нужно", "есть", "сейчас", "чтобы",
];
const BULGARIAN_WORDS: &[&str] = &[
    "какво", "какъв", "каква", "какви", "кой", "коя", "кои", "кога", "къде", "колко", "защо", "е", "са", "бил", "била", "било", "били", "във", "със", "към",
    "ще", "това", "този", "тази", "тези", "който", "която", "което", "които", "тя", "година", "годината", "през", "като", "също", "може", "има", "няма",
    "сега",
];
const UKRAINIAN_WORDS: &[&str] = &["що", "як", "коли", "де", "хто", "чому", "яка", "яке", "який", "якого", "було", "була", "або", "це", "цей", "ця"];

/// Russian, Ukrainian or Bulgarian, when the letters or the words of Cyrillic `text` tell; `None`
/// when they do not (whatlang's answer stands).
fn cyrillic(text: &str) -> Option<Detected> {
    let lower = text.to_lowercase();
    let (uk, ru) = (lower.contains(UKRAINIAN_LETTERS), lower.contains(RUSSIAN_LETTERS));
    match (uk, ru) {
        (true, false) => return Some(Detected { code: "uk", confidence: 1.0 }),
        (false, true) => return Some(Detected { code: "ru", confidence: 1.0 }),
        (true, true) => return None,
        (false, false) => {}
    }
    let words = words(&lower);
    let tally = [("ru", votes(&words, RUSSIAN_WORDS)), ("bg", votes(&words, BULGARIAN_WORDS)), ("uk", votes(&words, UKRAINIAN_WORDS))];
    let best = tally.iter().max_by_key(|t| t.1)?;
    let others = tally.iter().filter(|t| t.0 != best.0).map(|t| t.1).sum::<usize>();
    (best.1 > others).then_some(Detected { code: best.0, confidence: if others == 0 { 1.0 } else { 0.5 } })
}

/// The confident language of `text`.
pub fn detect_confident(text: &str) -> Option<&'static str> {
    detect(text).filter(Detected::is_confident).map(|d| d.code)
}

/// The ISO 639-1 codes detection can give a question.
pub fn codes() -> impl Iterator<Item = &'static str> {
    LANGUAGES.iter().map(|&l| iso639_1(l))
}

/// ISO 639-1 for each language whatlang knows (Mandarin is `zh`, Bokmål `nb`, Persian `fa`).
fn iso639_1(lang: Lang) -> &'static str {
    use Lang::*;
    match lang {
        Epo => "eo",
        Eng => "en",
        Rus => "ru",
        Cmn => "zh",
        Spa => "es",
        Por => "pt",
        Ita => "it",
        Ben => "bn",
        Fra => "fr",
        Deu => "de",
        Ukr => "uk",
        Kat => "ka",
        Ara => "ar",
        Hin => "hi",
        Jpn => "ja",
        Heb => "he",
        Yid => "yi",
        Pol => "pl",
        Amh => "am",
        Jav => "jv",
        Kor => "ko",
        Nob => "nb",
        Dan => "da",
        Swe => "sv",
        Fin => "fi",
        Tur => "tr",
        Nld => "nl",
        Hun => "hu",
        Ces => "cs",
        Ell => "el",
        Bul => "bg",
        Bel => "be",
        Mar => "mr",
        Kan => "kn",
        Ron => "ro",
        Slv => "sl",
        Hrv => "hr",
        Srp => "sr",
        Mkd => "mk",
        Lit => "lt",
        Lav => "lv",
        Est => "et",
        Tam => "ta",
        Vie => "vi",
        Urd => "ur",
        Tha => "th",
        Guj => "gu",
        Uzb => "uz",
        Pan => "pa",
        Aze => "az",
        Ind => "id",
        Tel => "te",
        Pes => "fa",
        Mal => "ml",
        Ori => "or",
        Mya => "my",
        Nep => "ne",
        Sin => "si",
        Khm => "km",
        Tuk => "tk",
        Aka => "ak",
        Zul => "zu",
        Sna => "sn",
        Afr => "af",
        Lat => "la",
        Slk => "sk",
        Cat => "ca",
        Tgl => "tl",
        Hye => "hy",
        Cym => "cy",
    }
}

#[cfg(test)]
mod tests {
    use crate::knowledge::language::*;

    #[test]
    fn a_mixed_batch_of_questions_gets_each_its_language() {
        let batch = [
            ("en", "How much does a teeth whitening session cost?"),
            ("de", "Wie viel kostet eine professionelle Zahnreinigung bei Ihnen?"),
            ("fr", "Combien coûte un blanchiment des dents dans votre cabinet ?"),
            ("es", "¿Cuánto cuesta una limpieza dental en su clínica?"),
            ("it", "Quanto costa una pulizia dei denti nel vostro studio?"),
            ("pt", "Quanto custa uma limpeza dentária na vossa clínica?"),
            ("nl", "Hoeveel kost een gebitsreiniging bij jullie praktijk?"),
            ("pl", "Ile kosztuje czyszczenie zębów w waszym gabinecie?"),
            ("sv", "Hur mycket kostar en tandrengöring hos er?"),
            ("ru", "Сколько стоит профессиональная чистка зубов?"),
            ("ja", "歯のクリーニングはいくらですか？"),
            ("zh", "洗牙需要多少钱？"),
            ("ar", "كم تكلفة تنظيف الأسنان في عيادتكم؟"),
            ("tr", "Diş temizliği kliniğinizde ne kadar tutuyor?"),
        ];
        let mut confident = 0;
        for (want, q) in batch {
            let d = detect(q).unwrap_or_else(|| panic!("nothing detected for {q}"));
            assert_eq!(d.code, want, "{q}: {d:?}");
            confident += d.is_confident() as usize;
        }
        // Short questions in close languages (Portuguese and Spanish, Swedish and Danish) may be unsure:
        // at the 0.4 threshold 86.5 % of short questions are confident (examples/langid.rs).
        assert!(confident >= 11, "only {confident} of {} confident", batch.len());
    }

    #[test]
    fn russian_ukrainian_and_bulgarian_are_told_apart_by_their_letters_and_words() {
        // XQuAD-R Russian questions whatlang took for Ukrainian (confidence 1.0 for the first) or Bulgarian.
        for q in [
            "Чему поспособствовала популярность перевода Лютера?",
            "Как Тесла финансировал свою работу?",
            "С какой целью шах Ирана дал интервью?",
            "Когда династия Чан нанесла поражение монголо-татарам?",
            "Где находится Кения по шкале ИВК?",
            "Сколько стоит чистка зубов?",
        ] {
            assert_eq!(detect_confident(q), Some("ru"), "{q}: {:?}", detect(q));
        }
        for q in ["Скільки коштує чистка зубів?", "Коли ви відкриті в неділю?", "Як записатися на прийом до лікаря?"]
        {
            assert_eq!(detect_confident(q), Some("uk"), "{q}: {:?}", detect(q));
        }
        for q in ["Колко струва почистването на зъбите?", "Кога работите в неделя?", "Къде мога да паркирам колата?", "Какво е работното време?"]
        {
            assert_eq!(detect_confident(q), Some("bg"), "{q}: {:?}", detect(q));
        }
    }

    #[test]
    fn a_german_question_naming_english_things_is_german_by_its_own_words() {
        // XQuAD-R German questions whatlang was unsure of (Dutch at 0.01, Spanish at 0.15, German at 0.27).
        for q in [
            "Welches Team war der Sieger der Divisional Round im Spiel der Broncos gegen die Steelers?",
            "Für wen spielte John Elway im Super Bowl XXXIII?",
            "Wer gewann den Super Bowl XLIX?",
        ] {
            let before = detector().detect(q).map(|i| i.confidence());
            assert!(before.is_some_and(|c| (c as f32) < CONFIDENT), "{q}: whatlang alone {before:?}");
            assert_eq!(detect_confident(q), Some("de"), "{q}: {:?}", detect(q));
        }
        // English questions keep their language, names and all.
        for q in ["Who won Super Bowl XLIX?", "How old was Peyton Manning when he played in Super Bowl 50?"] {
            assert_ne!(detect(q).map(|d| d.code), Some("de"), "{q}");
        }
    }

    #[test]
    fn english_is_english_by_its_function_words_when_trigrams_take_it_for_another_language() {
        // SciFact claims whatlang took for French confidently, XQuAD-R questions it was unsure of or took for
        // Spanish or Portuguese.
        for q in [
            "Bone marrow cells contribute to adult macrophage compartments.",
            "Leuko-reduced blood reduces infectious complications in red blood cell transfusion.",
            "Transferred UCB T cells acquire a memory-like phenotype in recipients.",
            "Who won Super Bowl XLIX?",
            "Who did John Elway play for in Super Bowl XXXIII?",
            "When did Tesla attain his electrical transmitter patent?",
            "What year did Tesla die?",
        ] {
            let before = detector().detect(q).map(|i| (iso639_1(i.lang()), i.confidence() as f32));
            assert!(before.is_some_and(|(code, c)| code != "en" || c < CONFIDENT), "{q}: whatlang alone {before:?}");
            assert_eq!(detect_confident(q), Some("en"), "{q}: {:?}", detect(q));
        }
        // Other languages keep theirs: their own words, their letters, their apostrophes.
        for (lang, q) in [
            ("es", "¿Tienen The North Face en la tienda?"),
            ("nl", "Is de praktijk in het weekend open?"),
            ("sv", "Har ni öppet på söndag?"),
            ("de", "Wer gewann den Super Bowl XLIX?"),
            ("tr", "Camuka, Temuçin'in kitlesinden olmayan kimleri destekledi?"),
            ("fr", "Où est le parking du cabinet ?"),
            ("pl", "Co to jest wybielanie zębów?"),
        ] {
            assert_ne!(detect(q).map(|d| d.code), Some("en"), "{q}");
            assert_eq!(detect(q).map(|d| d.code), Some(lang), "{q}");
        }
    }

    #[test]
    fn danish_and_hungarian_are_told_by_their_own_words_when_trigrams_are_unsure() {
        for (lang, q) in [
            ("da", "Hvem vandt verdensmesterskabet i fodbold i 1954?"),
            ("da", "Hvad koster en tandrensning?"),
            ("da", "Hvem vandt VM i fodbold i 1954?"),
            ("hu", "Ki nyerte az 1954-es labdarúgó-világbajnokságot?"),
            ("hu", "Mi az ára?"),
            ("hu", "Hol lehet parkolni?"),
        ] {
            let before = detector().detect(q).map(|i| (iso639_1(i.lang()), i.confidence() as f32));
            assert!(before.is_some_and(|(_, c)| c < CONFIDENT), "{q}: whatlang alone {before:?}");
            assert_eq!(detect_confident(q), Some(lang), "{q}: {:?}", detect(q));
        }
        // Swedish keeps its own: its words and letters say it is not Danish.
        for q in ["Vem vann fotbolls-VM 1954?", "Hur mycket kostar en tandrengöring?", "Har ni öppet på söndag?"] {
            assert_ne!(detect(q).map(|d| d.code), Some("da"), "{q}");
        }
    }

    /// The words that decide an unsure text for German, Danish or Hungarian are no other language's own:
    /// a Dutch question with "van" twice was Hungarian to a first list.
    #[test]
    fn the_words_that_decide_a_language_are_its_own() {
        for (code, list) in [("de", GERMAN_WORDS), ("da", DANISH_WORDS), ("hu", HUNGARIAN_WORDS)] {
            for w in list {
                let theirs: Vec<&str> = LATIN_WORDS.iter().filter(|(c, own, _)| *c != code && own.contains(w)).map(|(c, _, _)| *c).collect();
                assert!(theirs.is_empty(), "{code}: {w} is a word of {theirs:?} too");
            }
        }
        assert_ne!(detect("Wat is de prijs van de behandeling van tanden?").map(|d| d.code), Some("hu"));
    }

    #[test]
    fn each_languages_words_are_listed_once_and_its_shared_words_are_english() {
        for (code, own, shared) in LATIN_WORDS {
            let distinct: std::collections::HashSet<_> = own.iter().collect();
            assert_eq!(distinct.len(), own.len(), "{code}: a word listed twice");
            assert!(own.iter().all(|w| !w.contains(' ')), "{code}: one word each");
            for w in *shared {
                assert!(ENGLISH_WORDS.contains(w), "{code}: {w} is no English word of the list");
            }
        }
    }

    #[test]
    fn latin_names_in_a_question_in_another_script_do_not_decide_its_language() {
        assert_eq!(detect_confident("Что такое Engineering News-Record?"), Some("ru"));
        assert_eq!(detect_confident("Τι είναι το Engineering News-Record;"), Some("el"));
        assert_eq!(detect_confident("Engineering News-Record是什么杂志？"), Some("zh"));
        // A few characters of another script in an English question leave it English.
        assert_eq!(detect_confident("Can I pay by card when the parcel arrives, as 你好 says?"), Some("en"));
    }

    #[test]
    fn too_little_text_is_not_confident() {
        assert_eq!(detect_confident("ok"), None);
        assert_eq!(detect_confident("123 ?"), None);
    }
}
