//! Curated answers over the real server and the real model: an operator's answer wins over the
//! passages for questions that mean the same, cites its URL, leaves unrelated questions alone, and
//! goes away when deleted.

use serde_json::{Value, json};
use sitebot::domain::{SiteId, Tier};

use crate::helpers::TestApp;
use crate::helpers::spawn_app;
use crate::knowledge::{ask, ask_ok, clinic, import_files};

/// Adds a curated answer as `sitebot knowledge answer add` does.
pub async fn add_answer(app: &TestApp, site: SiteId, question: &str, answer: &str, url: Option<&str>) -> String {
    let (state, q, a, u) = (app.state.clone(), question.to_owned(), answer.to_owned(), url.map(str::to_owned));
    tokio::task::spawn_blocking(move || sitebot::knowledge::answer::curated::add(&state.store, &state.knowledge.embedder, &site, &q, &a, u.as_deref()))
        .await
        .unwrap()
        .expect("curated answer added")
        .id
}

const OFFER: &str = "Until the end of June, in-office whitening costs 299 euros instead of 350.";

#[tokio::test]
async fn a_curated_answer_wins_over_the_passages_it_matches() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;
    let before = ask_ok(&app, site.id, "How much does teeth whitening cost?").await;
    assert_eq!(before["sources"][0]["url"], "https://clinic.example/prices", "{before}");

    let id = add_answer(&app, site.id, "How much does teeth whitening cost?", OFFER, Some("https://clinic.example/offers")).await;
    assert!(id.starts_with("ans_"));
    for q in ["How much does teeth whitening cost?", "how much is teeth whitening", "What is the price of teeth whitening?"] {
        let a = ask_ok(&app, site.id, q).await;
        assert_eq!(a["answer"], format!("{OFFER} [1]"), "{q}: {a}");
        assert_eq!(a["resolved"], true);
        let sources = a["sources"].as_array().unwrap();
        assert_eq!(sources.len(), 1, "{a}");
        assert_eq!(sources[0]["id"], id.as_str());
        assert_eq!(sources[0]["url"], "https://clinic.example/offers");
        assert_eq!(sources[0]["snippet"], OFFER);
        assert!(sources[0]["score"].as_f64().unwrap() >= 0.95, "{a}");
    }
    // The stream route answers the same.
    let resp = app
        .client
        .post(app.url("/v1/query/stream"))
        .header("X-Site-Id", site.id.to_string())
        .json(&json!({"question": "how much is teeth whitening"}))
        .send()
        .await
        .unwrap();
    let body = resp.text().await.unwrap();
    assert!(body.contains(&format!("\"id\":\"{id}\"")), "{body}");

    // A client threshold above the match's similarity is honoured: the curated answer does not count.
    let strict: Value = ask(&app, site.id, json!({"question": "how much is teeth whitening", "scoreThreshold": 1.0})).await.json().await.unwrap();
    assert_eq!(strict["resolved"], false, "{strict}");

    // Deleted, the passages answer again.
    let store = app.state.store.clone();
    let gone = id.clone();
    store.run(move |s| s.site(site.id).curated().delete(&gone)).await.unwrap();
    let after = ask_ok(&app, site.id, "How much does teeth whitening cost?").await;
    assert_eq!(after["sources"][0]["url"], "https://clinic.example/prices", "{after}");
    assert!(app.count("SELECT count(*) FROM curated_answers", []) == 0);
}

#[tokio::test]
async fn unrelated_questions_and_other_sites_are_not_captured() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let (other, _) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;
    import_files(&app, other.id, &clinic()).await;
    add_answer(&app, site.id, "How much does teeth whitening cost?", OFFER, Some("https://clinic.example/offers")).await;
    // Questions about the same business, even about prices of whitening, keep their passages.
    for (q, url) in [
        ("How much does a take-home whitening kit cost?", "https://clinic.example/prices"),
        ("How much does a check-up cost?", "https://clinic.example/prices"),
        ("Do you treat children?", "https://clinic.example/faq#children"),
        ("Is there parking?", "https://clinic.example/directions"),
        ("When are you open on Saturday?", "https://clinic.example/hours"),
    ] {
        let a = ask_ok(&app, site.id, q).await;
        assert_eq!(a["sources"][0]["url"], url, "{q}: {a}");
        assert!(!a["answer"].as_str().unwrap().contains("299"), "{q}: {a}");
    }
    // Another site's visitors never get this site's curated answer.
    let a = ask_ok(&app, other.id, "How much does teeth whitening cost?").await;
    assert_eq!(a["sources"][0]["url"], "https://clinic.example/prices", "{a}");
}

#[tokio::test]
async fn curated_answers_of_another_model_are_re_embedded_at_start() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;
    let id = add_answer(&app, site.id, "How much does teeth whitening cost?", OFFER, None).await;
    // As if an earlier model had embedded the question: it is never compared with this model's vectors.
    app.db().execute("UPDATE curated_answers SET model = 'all-minilm-l6-v2-int8:0000', embedding = zeroblob(1536)", []).unwrap();
    let a = ask_ok(&app, site.id, "How much does teeth whitening cost?").await;
    assert_eq!(a["sources"][0]["url"], "https://clinic.example/prices", "{a}");
    let dir = app.stop().await;

    let mut app = crate::helpers::spawn_app_in(crate::helpers::test_config(), dir).await;
    app.refreshed().await;
    let a = ask_ok(&app, site.id, "how much is teeth whitening").await;
    assert_eq!(a["sources"][0]["id"], id.as_str(), "{a}");
    assert_eq!(a["sources"][0]["url"], Value::Null, "an answer without --url cites no page");
}
