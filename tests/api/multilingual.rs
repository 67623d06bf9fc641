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
