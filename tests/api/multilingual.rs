//! Answers in every language, over the real server with the real multilingual model: a model change
//! re-embeds a site's chunks in the background while questions keep being answered.

use sitebot::domain::Tier;

use crate::helpers::{spawn_app, spawn_app_in, test_config};
use crate::knowledge::{ask_ok, clinic, import_files};

#[tokio::test]
async fn a_model_change_re_embeds_the_site_while_questions_are_answered() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let (report, _files) = import_files(&app, site.id, &clinic()).await;
    let current = app.state.knowledge.embedder.fingerprint.clone();
    let id = site.id.to_string();
    let models = |app: &crate::helpers::TestApp| -> Vec<String> {
        let db = app.db();
        let mut s = db.prepare("SELECT DISTINCT model FROM kb_chunks WHERE site_id = ?1").unwrap();
        s.query_map([&id], |r| r.get(0)).unwrap().collect::<Result<_, _>>().unwrap()
    };
    assert_eq!(models(&app), vec![current.clone()], "an import stores the loaded model's fingerprint");
    // As if an earlier model had embedded the site.
    app.db().execute("UPDATE kb_chunks SET model = 'all-minilm-l6-v2-int8:0000' WHERE site_id = ?1", [&id]).unwrap();
    let dir = app.stop().await;

    let mut app = spawn_app_in(test_config(), dir).await;
    assert!(app.state.knowledge.is_stale(&site.id), "marked before the first query");
    // Meanwhile the site answers from BM25 alone.
    let a = ask_ok(&app, site.id, "How much does teeth whitening cost?").await;
    assert_eq!(a["resolved"], true, "{a}");
    assert_eq!(a["sources"][0]["url"], "https://clinic.example/prices", "{a}");

    let done = app.refreshed().await;
    assert_eq!((done.sites, done.chunks), (1, report.chunks), "{done:?}");
    assert_eq!(models(&app), vec![current], "every chunk now carries the loaded model's fingerprint");
    assert!(!app.state.knowledge.is_stale(&site.id));
    // Back to hybrid retrieval over the re-embedded vectors: a question sharing no word with the text.
    let b = ask_ok(&app, site.id, "Do you treat kids?").await;
    assert_eq!(b["sources"][0]["url"], "https://clinic.example/faq#children", "{b}");
    let vectors = app.state.knowledge.sync_index_blocking(&app.state.store, &site.id).unwrap();
    assert_eq!(vectors, report.chunks, "the vector index holds every re-embedded chunk");
}

#[tokio::test]
async fn a_fresh_server_has_nothing_to_re_embed() {
    let mut app = spawn_app().await;
    assert_eq!(app.refreshed().await, sitebot::knowledge::refresh::Report::default());
}

#[tokio::test]
async fn the_fallback_comes_in_the_questions_language() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;
    let cases = [
        ("de", "Wer hat die Fußball-Weltmeisterschaft 1954 gewonnen?", "Dazu habe ich"),
        ("fr", "Qui a gagné la coupe du monde de football en 1954 ?", "Je n'ai malheureusement"),
        ("es", "¿Quién ganó la copa mundial de fútbol en 1954?", "Lo siento"),
        ("ru", "Кто выиграл чемпионат мира по футболу в 1954 году?", "К сожалению"),
        ("ja", "1954年のサッカーワールドカップで優勝したのはどこですか？", "申し訳ありません"),
        ("zh", "谁赢得了1954年的世界杯足球赛？", "抱歉"),
        ("ar", "من فاز بكأس العالم لكرة القدم عام 1954؟", "عذرًا"),
        ("pl", "Kto wygrał mistrzostwa świata w piłce nożnej w 1954 roku?", "Niestety"),
    ];
    for (lang, question, start) in cases {
        let a = ask_ok(&app, site.id, question).await;
        assert_eq!(a["resolved"], false, "{question}: {a}");
        assert_eq!(a["lang"], lang, "{question}: {a}");
        assert!(a["answer"].as_str().unwrap().starts_with(start), "{question}: {a}");
    }
    // An explicit `lang` still wins over the detected one.
    let a: serde_json::Value = crate::knowledge::ask(&app, site.id, serde_json::json!({"question": cases[0].1, "lang": "it"})).await.json().await.unwrap();
    assert_eq!(a["lang"], "it");
    assert!(a["answer"].as_str().unwrap().starts_with("Purtroppo"), "{a}");
}

/// A small practice's knowledge in three languages (each document in one).
const PRAXIS_DE: &str = "---\ntitle: Zahnreinigung\nurl: https://praxis.example/de/prophylaxe\n---\n# Zahnreinigung\n\n\
Eine professionelle Zahnreinigung dauert etwa 45 Minuten und kostet 95 Euro.\n";
const CLINIC_ZH: &str = "---\ntitle: 营业时间\nurl: https://praxis.example/zh/hours\n---\n# 营业时间\n\n\
我们的诊所周一至周五上午八点到下午六点营业，周六上午九点到下午一点营业。\n";
const CLINIC_AR: &str = "---\ntitle: مواقف السيارات\nurl: https://praxis.example/ar/parking\n---\n# مواقف السيارات\n\n\
يتوفر موقف مجاني للسيارات للمرضى في الفناء خلف المبنى.\n";

#[tokio::test]
#[ignore = "not yet: a question sharing no FTS5 term with the site (Chinese, Arabic, another language) scores below the threshold; the fusion needs a calibrated dense-only branch"]
async fn questions_in_german_chinese_and_arabic_find_their_passage() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let files: Vec<(&str, &[u8])> = vec![("prophylaxe.md", PRAXIS_DE.as_bytes()), ("hours.md", CLINIC_ZH.as_bytes()), ("parking.md", CLINIC_AR.as_bytes())];
    import_files(&app, site.id, &files).await;
    let langs: Vec<(String, Option<String>)> = {
        let db = app.db();
        let mut s = db.prepare("SELECT title, lang FROM kb_documents WHERE site_id = ?1 ORDER BY title").unwrap();
        s.query_map([site.id.to_string()], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().collect::<Result<_, _>>().unwrap()
    };
    assert!(langs.contains(&("Zahnreinigung".into(), Some("de".into()))), "{langs:?}");
    assert!(langs.contains(&("营业时间".into(), Some("zh".into()))), "{langs:?}");
    assert!(langs.contains(&("مواقف السيارات".into(), Some("ar".into()))), "{langs:?}");
    for (lang, question, url) in [
        ("de", "Wie lange dauert eine Zahnreinigung?", "https://praxis.example/de/prophylaxe"),
        ("zh", "你们周六几点开门？", "https://praxis.example/zh/hours"),
        ("ar", "هل يوجد موقف للسيارات؟", "https://praxis.example/ar/parking"),
    ] {
        let a = ask_ok(&app, site.id, question).await;
        assert_eq!(a["resolved"], true, "{question}: {a}");
        assert_eq!(a["sources"][0]["url"], url, "{question}: {a}");
        assert_eq!(a["lang"], lang, "{question}: {a}");
    }
}

#[tokio::test]
async fn a_german_question_finds_english_knowledge() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;
    let a = ask_ok(&app, site.id, "Wie viel kostet eine Zahnaufhellung?").await;
    assert_eq!(a["resolved"], true, "{a}");
    assert_eq!(a["sources"][0]["url"], "https://clinic.example/prices", "{a}");
    assert_eq!(a["lang"], "de", "{a}");
}
