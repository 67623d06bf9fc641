//! The operator's insights from real traffic: questions asked over the real server, unanswered ones
//! grouped by meaning with the real model, weak answers, thumbs down with comments, the most cited
//! sources and the resolution rate by day.

use serde_json::json;
use sitebot::domain::{Tier, Timestamp};

use crate::helpers::spawn_app;
use crate::knowledge::{ask_ok, clinic, import_files};

#[tokio::test]
async fn insights_group_similar_unanswered_questions() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let (other, _) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;
    let started = Timestamp::now();
    let unanswered = [
        "Do you accept credit cards?", "Can I pay by credit card?", "Is payment by credit card possible?", "Do you offer dental implants?",
        "Do you do dental implants?", "What is the capital of France?",
    ];
    for q in unanswered {
        let a = ask_ok(&app, site.id, q).await;
        assert_eq!(a["resolved"], false, "{q} was answered: {a}");
    }
    let answered = ask_ok(&app, site.id, "How much does teeth whitening cost?").await;
    ask_ok(&app, site.id, "What does teeth whitening cost?").await;
    assert_eq!(answered["resolved"], true);
    let qid = answered["id"].as_str().unwrap();
    let down = app
        .client
        .post(app.url("/v1/feedback"))
        .header("X-Site-Id", site.id.to_string())
        .json(&json!({"queryId": qid, "rating": "down", "comment": "I wanted the take-home kit"}))
        .send()
        .await
        .unwrap();
    assert_eq!(down.status(), 202);
    // Another site's traffic is not this site's insight.
    ask_ok(&app, other.id, "Do you accept credit cards?").await;

    let state = app.state.clone();
    let r =
        tokio::task::spawn_blocking(move || sitebot::insights::report(&state.store, &state.knowledge.embedder, &site.id, started, 1.0)).await.unwrap().unwrap();
    let groups: Vec<(usize, Vec<String>)> = r.unanswered.iter().map(|g| (g.count, g.examples.clone())).collect();
    assert_eq!(groups.len(), 3, "{groups:?}");
    assert_eq!(groups[0].0, 3, "{groups:?}");
    assert!(groups[0].1.iter().all(|e| e.contains("card")), "{groups:?}");
    assert_eq!(groups[0].1[0], "Is payment by credit card possible?", "newest first: {groups:?}");
    assert_eq!(groups[1].0, 2, "{groups:?}");
    assert!(groups[1].1.iter().all(|e| e.contains("implants")), "{groups:?}");
    assert_eq!(groups[2], (1, vec!["What is the capital of France?".to_owned()]));

    assert_eq!((r.questions, r.resolved), (8, 2));
    assert_eq!(r.by_day.len(), 1);
    assert_eq!((r.by_day[0].questions, r.by_day[0].resolved, r.by_day[0].rate), (8, 2, 0.25));
    assert_eq!(r.thumbs_down.len(), 1);
    assert_eq!(r.thumbs_down[0].question.as_deref(), Some("How much does teeth whitening cost?"));
    assert_eq!(r.thumbs_down[0].comment.as_deref(), Some("I wanted the take-home kit"));
    assert_eq!(r.top_sources[0].url.as_deref(), Some("https://clinic.example/prices"), "{:?}", r.top_sources);
    assert_eq!(r.top_sources[0].citations, 2, "{:?}", r.top_sources);
    // With every answer counted as weak (below 1.0), both answered questions are listed, lowest first.
    assert_eq!(r.weak_answers.len(), 2);
    assert!(r.weak_answers[0].top_score <= r.weak_answers[1].top_score);
}
