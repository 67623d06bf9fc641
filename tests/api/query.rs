//! `POST /v1/query` over TLS with the real model: grounded answers with the right citation, `topK` and
//! `scoreThreshold`, the localized fallback, validation, tenant isolation, and the query's record
//! (log, public counters, `query.completed` outbox event).

use serde_json::{Value, json};
use sitebot::domain::Tier;

use crate::helpers::{new_site, problem, spawn_app, with_webhook};
use crate::knowledge::{BIKES_MD, ask, ask_ok, clinic, import_files};

fn markers_index_sources(a: &Value) {
    let answer = a["answer"].as_str().unwrap();
    let n = a["sources"].as_array().unwrap().len();
    let mut found = 0;
    for part in answer.split('[').skip(1) {
        let idx: usize = part.split(']').next().unwrap().parse().expect("a numeric marker");
        assert!((1..=n).contains(&idx), "marker [{idx}] out of range in {answer}");
        found += 1;
    }
    assert!(found > 0, "no [n] marker in {answer}");
}

#[tokio::test]
async fn a_question_is_answered_from_the_right_source_with_a_citation() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;
    let a = ask_ok(&app, site.id, "How much does teeth whitening cost?").await;
    assert_eq!(a["resolved"], true, "{a}");
    assert!(a["id"].as_str().unwrap().starts_with("qry_"));
    assert_eq!(a["lang"], "en");
    assert!(a["latencyMs"].is_u64());
    let top = &a["sources"][0];
    assert_eq!(top["url"], "https://clinic.example/prices");
    assert_eq!(top["title"], "Prices › Whitening");
    assert!(top["id"].as_str().unwrap().starts_with("chk_") && top["documentId"].as_str().unwrap().starts_with("doc_"));
    assert!(top["snippet"].as_str().unwrap().contains("350 euros"));
    let answer = a["answer"].as_str().unwrap();
    assert!(answer.contains("In-office teeth whitening costs 350 euros per session."), "{answer}");
    assert!(!answer.contains("check-up"), "an unrelated sentence was quoted: {answer}");
    markers_index_sources(&a);
    let scores: Vec<f64> = a["sources"].as_array().unwrap().iter().map(|s| s["score"].as_f64().unwrap()).collect();
    assert!(scores.iter().all(|s| (0.0..=1.0).contains(s)), "{scores:?}");
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "sources best first: {scores:?}");

    let b = ask_ok(&app, site.id, "Do you treat kids?").await;
    assert_eq!(b["sources"][0]["url"], "https://clinic.example/faq#children", "{b}");
    assert!(b["answer"].as_str().unwrap().contains("children are welcome"), "{b}");
}

#[tokio::test]
async fn top_k_and_score_threshold_bound_the_sources() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;
    let q = "What are your opening hours and prices?";
    let all: Value = ask(&app, site.id, json!({"question": q, "topK": 20})).await.json().await.unwrap();
    let n = all["sources"].as_array().unwrap().len();
    assert!(n >= 2, "{all}");
    let one: Value = ask(&app, site.id, json!({"question": q, "topK": 1})).await.json().await.unwrap();
    assert_eq!(one["sources"].as_array().unwrap().len(), 1);
    assert_eq!(one["sources"][0]["id"], all["sources"][0]["id"]);

    // A threshold between the best and the worst score keeps exactly the sources at or above it.
    let scores: Vec<f64> = all["sources"].as_array().unwrap().iter().map(|s| s["score"].as_f64().unwrap()).collect();
    let cut = (scores[0] + scores[n - 1]) / 2.0;
    let some: Value = ask(&app, site.id, json!({"question": q, "topK": 20, "scoreThreshold": cut})).await.json().await.unwrap();
    let kept: Vec<f64> = some["sources"].as_array().unwrap().iter().map(|s| s["score"].as_f64().unwrap()).collect();
    assert_eq!(kept.len(), scores.iter().filter(|s| **s >= cut).count(), "{kept:?} vs {scores:?} cut {cut}");
    assert!(kept.iter().all(|s| *s >= cut));

    // Above every score: the fallback.
    let none: Value = ask(&app, site.id, json!({"question": q, "scoreThreshold": 1.0})).await.json().await.unwrap();
    assert_eq!(none["resolved"], false, "{none}");
    assert_eq!(none["sources"], json!([]));
}

#[tokio::test]
async fn sources_are_distinct_documents_and_a_sent_threshold_is_honoured_exactly() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    // Four documents, six chunks (hours and prices have two sections each).
    import_files(&app, site.id, &clinic()).await;
    let documents = |a: &Value| -> Vec<String> { a["sources"].as_array().unwrap().iter().map(|s| s["documentId"].as_str().unwrap().to_owned()).collect() };
    let q = "When are you open and what does whitening cost?";
    // scoreThreshold 0: every document, each once, best first.
    let all: Value = ask(&app, site.id, json!({"question": q, "topK": 20, "scoreThreshold": 0})).await.json().await.unwrap();
    let docs = documents(&all);
    assert_eq!(docs.len(), 4, "{all}");
    assert_eq!(docs.iter().collect::<std::collections::HashSet<_>>().len(), 4, "one source per document: {all}");
    let scores: Vec<f64> = all["sources"].as_array().unwrap().iter().map(|s| s["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    markers_index_sources(&all);
    // topK counts documents.
    let two: Value = ask(&app, site.id, json!({"question": q, "topK": 2, "scoreThreshold": 0})).await.json().await.unwrap();
    assert_eq!(documents(&two), docs[..2].to_vec(), "{two}");

    // The operator's knowledge.min_score (0.25) applies only when the client sends no threshold: an
    // off-topic question gets the fallback without one, and every document with 0.
    let off = "What is the capital of France?";
    let default = ask_ok(&app, site.id, off).await;
    assert_eq!(default["resolved"], false, "{default}");
    let zero: Value = ask(&app, site.id, json!({"question": off, "topK": 10, "scoreThreshold": 0})).await.json().await.unwrap();
    assert_eq!(zero["resolved"], true, "{zero}");
    assert_eq!(documents(&zero).len(), 4, "{zero}");
    assert!(zero["sources"].as_array().unwrap().iter().any(|s| s["score"].as_f64().unwrap() < 0.25), "{zero}");
    // A high threshold returns none.
    let high: Value = ask(&app, site.id, json!({"question": q, "topK": 20, "scoreThreshold": 0.999})).await.json().await.unwrap();
    assert_eq!(high["sources"], json!([]), "{high}");
    assert_eq!(high["resolved"], false);
}

#[tokio::test]
async fn an_off_topic_question_gets_the_localized_fallback() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;
    let a = ask_ok(&app, site.id, "What is the capital of France?").await;
    assert_eq!(a["resolved"], false, "{a}");
    assert_eq!(a["sources"], json!([]));
    assert!(a["answer"].as_str().unwrap().contains("contact us"), "{a}");
    assert!(!a["answer"].as_str().unwrap().contains('['));

    let de: Value = ask(&app, site.id, json!({"question": "Wer gewann die Fußball-WM 1954?", "lang": "de-DE"})).await.json().await.unwrap();
    assert_eq!(de["resolved"], false, "{de}");
    assert_eq!(de["lang"], "de-DE");
    assert!(de["answer"].as_str().unwrap().contains("wenden Sie sich"), "{de}");

    // A site whose language is German answers in German when the question's language cannot be told,
    // and in the question's language when it can.
    let mut german = new_site(Tier::Pro);
    german.lang = sitebot::domain::Lang::parse("de").unwrap();
    let (g, _) = app.create_site_with(german).await;
    let a = ask_ok(&app, g.id, "42?").await;
    assert_eq!(a["lang"], "de");
    assert!(a["answer"].as_str().unwrap().starts_with("Dazu"), "{a}");
    let a = ask_ok(&app, g.id, "What is the capital of France?").await;
    assert_eq!(a["lang"], "en");
    assert!(a["answer"].as_str().unwrap().starts_with("Sorry"), "{a}");
}

#[tokio::test]
async fn invalid_requests_name_every_bad_field() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let body =
        problem(ask(&app, site.id, json!({"question": "   ", "topK": 0, "scoreThreshold": 1.5, "lang": "not a tag"})).await, 422, "validation_failed").await;
    let fields: Vec<&str> = body["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
    assert_eq!(fields, vec!["question", "topK", "scoreThreshold", "lang"], "{body}");
    let long = "x".repeat(2001);
    problem(ask(&app, site.id, json!({"question": long})).await, 422, "validation_failed").await;
    problem(ask(&app, site.id, json!({"question": "hi", "topK": 21})).await, 422, "validation_failed").await;
    problem(ask(&app, site.id, json!({"question": "hi", "topK": "five"})).await, 422, "validation_failed").await;
    problem(ask(&app, site.id, json!({"topK": 3})).await, 422, "validation_failed").await;
    let resp = app.client.post(app.url("/v1/query")).json(&json!({"question": "hi"})).send().await.unwrap();
    problem(resp, 400, "site_id_required").await;
    // 2000 characters after trimming is fine.
    let ok = ask(&app, site.id, json!({"question": format!("  {}  ", "a".repeat(2000))})).await;
    assert_eq!(ok.status(), 200);
}

#[tokio::test]
async fn two_sites_never_see_each_others_sources() {
    let app = spawn_app().await;
    let (clinic_site, _) = app.create_site(Tier::Pro).await;
    let (bikes_site, _) = app.create_site(Tier::Pro).await;
    import_files(&app, clinic_site.id, &clinic()).await;
    import_files(&app, bikes_site.id, &[("bikes.md", BIKES_MD.as_bytes())]).await;

    // What a visitor reads: the answer and its sources (the response's random ids and tokens could hold any
    // digits).
    let shown = |a: &Value| format!("{} {}", a["answer"], a["sources"]);
    let bikes_q = ask_ok(&app, clinic_site.id, "How much does a flat tyre repair cost?").await;
    assert!(!shown(&bikes_q).contains("bikes.example"), "{bikes_q}");
    let clinic_q = ask_ok(&app, bikes_site.id, "How much does teeth whitening cost?").await;
    assert!(!shown(&clinic_q).contains("clinic.example"), "{clinic_q}");
    assert!(!shown(&clinic_q).contains("350"), "{clinic_q}");
    let own = ask_ok(&app, bikes_site.id, "How much does a flat tyre repair cost?").await;
    assert_eq!(own["sources"][0]["url"], "https://bikes.example/repairs", "{own}");
}

#[tokio::test]
async fn every_query_is_logged_counted_and_announced_to_opted_in_sites() {
    let app = spawn_app().await;
    let mut new = with_webhook(new_site(Tier::Pro), "http://127.0.0.1:9/hook");
    new.webhook_events = vec![sitebot::domain::EventType::QueryCompleted];
    let (site, _) = app.create_site_with(new).await;
    import_files(&app, site.id, &clinic()).await;
    let a = ask_ok(&app, site.id, "How much does teeth whitening cost?").await;
    let b = ask_ok(&app, site.id, "What is the capital of France?").await;

    let (id, db) = (site.id.to_string(), app.db());
    let (questions, resolved): (i64, i64) =
        db.query_row("SELECT questions, resolved_questions FROM site_stats WHERE site_id = ?1", [&id], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    assert_eq!((questions, resolved), (2, 1));
    let mut s = db.prepare("SELECT id, resolved, source_count FROM query_log WHERE site_id = ?1 ORDER BY created_at, id").unwrap();
    let logged: Vec<(String, i64, i64)> = s.query_map([&id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(logged.len(), 2);
    assert!(logged.iter().any(|(q, r, n)| q == a["id"].as_str().unwrap() && *r == 1 && *n as usize == a["sources"].as_array().unwrap().len()));
    assert!(logged.iter().any(|(q, r, n)| q == b["id"].as_str().unwrap() && *r == 0 && *n == 0));

    let mut s = db.prepare("SELECT payload FROM outbox WHERE site_id = ?1 AND event_type = 'query.completed'").unwrap();
    let payloads: Vec<String> = s.query_map([&id], |r| r.get(0)).unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(payloads.len(), 2);
    let event: Value =
        payloads.iter().map(|p| serde_json::from_str::<Value>(p).unwrap()).find(|e| e["data"]["queryId"] == a["id"]).expect("event of the first query");
    assert_eq!(event["type"], "query.completed");
    assert_eq!(event["data"]["siteId"], site.id.to_string());
    assert_eq!(event["data"]["question"], "How much does teeth whitening cost?");
    assert_eq!(event["data"]["resolved"], true);
    assert_eq!(event["data"]["sourceCount"], a["sources"].as_array().unwrap().len());
    assert!(event["data"]["latencyMs"].is_u64());

    // A site that did not opt in gets no event.
    let (quiet, _) = app.create_site(Tier::Pro).await;
    ask_ok(&app, quiet.id, "anything?").await;
    let qid = quiet.id;
    let n = app.count("SELECT count(*) FROM outbox WHERE site_id = ?1", [qid.to_string()]);
    assert_eq!(n, 0);
}
