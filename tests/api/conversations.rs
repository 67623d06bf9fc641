//! Conversations, feedback, widget events and the widget's routes, over the real server: follow-ups
//! understood with the earlier turn, another site's conversation 404, bounded turns; ratings of the
//! site's own answers only; event batches validated and counted; widget.js and its config.

use reqwest::StatusCode;
use serde_json::{Value, json};
use sitebot::domain::{SiteId, Tier};

use crate::helpers::{TestApp, new_site, problem, spawn_app, spawn_app_with, with_webhook};
use crate::knowledge::{ask, ask_as, clinic, import_files};
use crate::receiver::Receiver;

/// Asks, continuing the conversation `(id, token)` when one is given.
async fn ask_in(app: &TestApp, site: SiteId, question: &str, conversation: Option<(&str, &str)>) -> Value {
    let resp = match conversation {
        Some((id, token)) => ask_as(app, site, json!({"question": question, "conversationId": id}), token).await,
        None => ask(app, site, json!({"question": question})).await,
    };
    assert_eq!(resp.status(), 200);
    resp.json().await.unwrap()
}

/// The id and token of the conversation a first answer started.
fn started(a: &Value) -> (String, String) {
    (a["conversationId"].as_str().unwrap().to_owned(), a["conversationToken"].as_str().expect("a new conversation's token").to_owned())
}

async fn post(app: &TestApp, site: SiteId, path: &str, body: Value) -> reqwest::Response {
    app.client.post(app.url(path)).header("X-Site-Id", site.to_string()).json(&body).send().await.unwrap()
}

/// Follow-ups written for the clinic's knowledge: (first question, follow-up, the source the follow-up
/// needs, a phrase its answer must quote).
const FOLLOW_UPS: [(&str, &str, &str, &str); 3] = [
    ("When is the clinic open?", "And on Saturdays?", "https://clinic.example/hours", "9:00 to 13:00"),
    ("How much does teeth whitening cost?", "And the take-home kit?", "https://clinic.example/prices", "250 euros"),
    ("Do you treat children?", "From what age?", "https://clinic.example/faq#children", "first tooth"),
];

#[tokio::test]
async fn a_follow_up_is_understood_with_the_previous_question() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;
    let (mut with, mut without) = (0, 0);
    for (first, follow_up, source, phrase) in FOLLOW_UPS {
        let a = ask_in(&app, site.id, first, None).await;
        let (cid, token) = started(&a);
        assert!(cid.starts_with("cnv_"), "{a}");
        assert_eq!(a["mode"], "extractive");
        let b = ask_in(&app, site.id, follow_up, Some((&cid, &token))).await;
        assert_eq!(b["conversationId"], cid.as_str(), "the follow-up stays in the conversation");
        let right = |v: &Value| v["sources"][0]["url"] == source && v["answer"].as_str().unwrap_or("").contains(phrase);
        with += right(&b) as usize;
        without += right(&ask_in(&app, site.id, follow_up, None).await) as usize;
        assert!(right(&b), "{follow_up} after {first}: {b}");
    }
    println!("follow-ups answered from the right source: {with}/3 with the conversation, {without}/3 without");
}

#[tokio::test]
async fn conversations_belong_to_one_site_and_are_bounded() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let (other, _) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;
    let a = ask_in(&app, site.id, "When is the clinic open?", None).await;
    let (cid, token) = started(&a);
    // Another site cannot continue (or read) it, even with its token; nor can a made-up id.
    let foreign = ask_as(&app, other.id, json!({"question": "And on Saturdays?", "conversationId": cid}), &token).await;
    problem(foreign, 404, "conversation_not_found").await;
    let unknown = ask(&app, site.id, json!({"question": "Hi", "conversationId": "cnv_01JB8X3M6F9K2Q4R7T0V5W1Y2Z"})).await;
    problem(unknown, 404, "conversation_not_found").await;
    let malformed = ask(&app, site.id, json!({"question": "Hi", "conversationId": "abc"})).await;
    problem(malformed, 422, "validation_failed").await;
    // 15 more questions: 32 turns asked, the last 20 kept, each at most 2,000 characters.
    let long = format!("{} parking?", "very ".repeat(300));
    for _ in 0..15 {
        ask_in(&app, site.id, &long, Some((&cid, &token))).await;
    }
    let turns = app.count("SELECT count(*) FROM conversation_turns WHERE conversation_id = ?1", [&cid]);
    assert_eq!(turns, 20);
    let longest = app.count("SELECT max(length(text)) FROM conversation_turns WHERE conversation_id = ?1", [&cid]);
    assert!(longest <= 2000, "{longest}");
}

#[tokio::test]
async fn a_lead_from_a_conversation_carries_its_transcript() {
    let rx = Receiver::start().await;
    let app = spawn_app_with(crate::webhooks::webhook_config()).await;
    let (site, _) = app.create_site_with(with_webhook(new_site(Tier::Pro), &rx.url("/hook"))).await;
    import_files(&app, site.id, &clinic()).await;
    let a = ask_in(&app, site.id, "Is there parking?", None).await;
    let (cid, token) = started(&a);
    let cid = cid.as_str();
    let resp = crate::leads::post_lead_as(&app, &site.id, &json!({"email": "ada@example.com", "conversationId": cid}), &token).await;
    assert_eq!(resp.status(), 202);
    app.deliver_until(|| rx.count() >= 1).await;
    let body = rx.wait_for(1, std::time::Duration::from_secs(5)).await[0].json();
    assert_eq!(body["data"]["conversationId"], cid);
    let transcript = body["data"]["transcript"].as_array().expect("a transcript");
    assert_eq!(transcript.len(), 2);
    assert_eq!((transcript[0]["role"].as_str(), transcript[0]["text"].as_str()), (Some("user"), Some("Is there parking?")));
    assert_eq!(transcript[1]["role"], "assistant");
    assert_eq!(transcript[1]["text"], a["answer"]);
    let (other, _) = app.create_site(Tier::Pro).await;
    let foreign = crate::leads::post_lead_as(&app, &other.id, &json!({"email": "ada@example.com", "conversationId": cid}), &token).await;
    problem(foreign, 404, "conversation_not_found").await;
}

/// A conversation id is in webhooks, logs and the console: on its own it neither continues the
/// conversation nor attaches its transcript to a lead. Only its token does.
#[tokio::test]
async fn a_conversation_id_without_its_token_opens_nothing() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;
    let a = ask_in(&app, site.id, "When is the clinic open?", None).await;
    let (cid, token) = started(&a);
    let turns = || app.count("SELECT count(*) FROM conversation_turns WHERE conversation_id = ?1", [&cid]);
    assert_eq!(turns(), 2);
    let wrong = "cvt_".to_owned() + &"A".repeat(43);
    for resp in [
        ask(&app, site.id, json!({"question": "And on Saturdays?", "conversationId": cid})).await,
        ask_as(&app, site.id, json!({"question": "And on Saturdays?", "conversationId": cid}), &wrong).await,
        ask_as(&app, site.id, json!({"question": "And on Saturdays?", "conversationId": cid}), "").await,
    ] {
        problem(resp, 404, "conversation_not_found").await;
    }
    let streamed = app
        .client
        .post(app.url("/v1/query/stream"))
        .header("X-Site-Id", site.id.to_string())
        .json(&json!({"question": "And on Saturdays?", "conversationId": cid}))
        .send()
        .await
        .unwrap();
    problem(streamed, 404, "conversation_not_found").await;
    assert_eq!(turns(), 2, "nothing was added to the conversation");
    // A lead naming the conversation without its token is refused, and nothing is stored.
    for resp in [
        crate::leads::post_lead(&app, &site.id, &json!({"email": "eve@example.com", "conversationId": cid})).await,
        crate::leads::post_lead_as(&app, &site.id, &json!({"email": "eve@example.com", "conversationId": cid}), &wrong).await,
    ] {
        problem(resp, 404, "conversation_not_found").await;
    }
    assert_eq!(app.count("SELECT count(*) FROM leads WHERE site_id = ?1", [site.id.to_string()]), 0);
    // With the token both work, and the transcript is the conversation's.
    let b = ask_in(&app, site.id, "And on Saturdays?", Some((&cid, &token))).await;
    assert_eq!(b["conversationId"], cid.as_str());
    assert_eq!(turns(), 4);
    let lead = crate::leads::post_lead_as(&app, &site.id, &json!({"email": "ada@example.com", "conversationId": cid}), &token).await;
    assert_eq!(lead.status(), 202);
    let id = lead.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_owned();
    let site_id = site.id;
    let stored = app.state.store.run(move |s| s.site(site_id).leads().get(&id)).await.unwrap();
    assert_eq!(stored.lead.transcript.map(|t| t.len()), Some(4), "the whole conversation goes with the lead");
}

#[tokio::test]
async fn feedback_rates_the_sites_own_answers_and_rating_again_replaces() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let (other, _) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;
    let qid = ask_in(&app, site.id, "Is there parking?", None).await["id"].as_str().unwrap().to_owned();
    let up = post(&app, site.id, "/v1/feedback", json!({"queryId": qid, "rating": "up"})).await;
    assert_eq!(up.status(), StatusCode::ACCEPTED);
    assert_eq!(up.json::<Value>().await.unwrap(), json!({"status": "accepted"}));
    let down = post(&app, site.id, "/v1/feedback", json!({"queryId": qid, "rating": "down", "comment": "Not what I asked"})).await;
    assert_eq!(down.status(), StatusCode::ACCEPTED);
    assert_eq!(app.count("SELECT count(*) FROM feedback WHERE query_id = ?1", [&qid]), 1, "one rating per answer");
    assert_eq!(app.count("SELECT count(*) FROM feedback WHERE query_id = ?1 AND rating = 'down'", [&qid]), 1);
    // The id in lower case is the same answer (the contract's pattern takes either case).
    let lower = post(&app, site.id, "/v1/feedback", json!({"queryId": qid.to_lowercase(), "rating": "up"})).await;
    assert_eq!(lower.status(), StatusCode::ACCEPTED);
    assert_eq!(app.count("SELECT count(*) FROM feedback WHERE query_id = ?1 AND rating = 'up'", [&qid]), 1, "the same answer's rating, replaced");
    problem(post(&app, other.id, "/v1/feedback", json!({"queryId": qid, "rating": "up"})).await, 404, "query_not_found").await;
    problem(post(&app, site.id, "/v1/feedback", json!({"queryId": "qry_01M84JCM6EFTAP9RAQZ4H80QG6", "rating": "up"})).await, 404, "query_not_found").await;
    problem(post(&app, site.id, "/v1/feedback", json!({"queryId": "qry_nope", "rating": "up"})).await, 422, "validation_failed").await;
    problem(post(&app, site.id, "/v1/feedback", json!({"queryId": qid, "rating": "meh"})).await, 422, "validation_failed").await;
    let long = "x".repeat(1001);
    problem(post(&app, site.id, "/v1/feedback", json!({"queryId": qid, "rating": "up", "comment": long})).await, 422, "validation_failed").await;
}

#[tokio::test]
async fn events_are_validated_by_batch_and_counted_per_day_and_type() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let ev = |t: &str| json!({"type": t, "sessionId": "s-1", "url": "https://clinic.example/hours"});
    let batch: Vec<Value> = ["widget_loaded", "widget_opened", "question_asked", "source_clicked", "source_clicked"].iter().map(|t| ev(t)).collect();
    let resp = post(&app, site.id, "/v1/events", json!({"events": batch})).await;
    assert_eq!(resp.status(), StatusCode::ACCEPTED);
    assert_eq!(resp.json::<Value>().await.unwrap(), json!({"accepted": 5}));
    let counted = app.count("SELECT count FROM widget_event_counts WHERE site_id = ?1 AND type = 'source_clicked'", [site.id.to_string()]);
    assert_eq!(counted, 2);
    problem(post(&app, site.id, "/v1/events", json!({"events": []})).await, 422, "validation_failed").await;
    let too_many: Vec<Value> = (0..51).map(|_| ev("widget_loaded")).collect();
    problem(post(&app, site.id, "/v1/events", json!({"events": too_many})).await, 422, "validation_failed").await;
    let unknown = problem(post(&app, site.id, "/v1/events", json!({"events": [ev("page_scrolled")]})).await, 422, "validation_failed").await;
    assert_eq!(unknown["errors"][0]["field"], "events[0].type");
    assert_eq!(app.count("SELECT count(*) FROM widget_events WHERE site_id = ?1", [site.id.to_string()]), 5, "a refused batch stores nothing");
    // The operator's report reads the counts.
    let report = site_report(&app, site.id).await;
    assert_eq!(report["events"]["source_clicked"], 2);
    assert_eq!(report["topSources"][0], json!(["https://clinic.example/hours", 2]));
}

/// `at` is typed `date-time` in the contract: exactly RFC 3339 with its `T` and an offset is accepted; a space for
/// the `T`, a date alone or a time without an offset is 422 naming the event's field, and nothing of that batch
/// is stored.
#[tokio::test]
async fn an_event_time_is_exactly_rfc_3339_or_the_batch_is_refused_naming_the_field() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let ev = |at: Value| json!({"type": "widget_opened", "sessionId": "s-1", "at": at});
    let stored = || app.count("SELECT count(*) FROM widget_events WHERE site_id = ?1", [site.id.to_string()]);
    for bad in ["6045-11-09 11:23:28-22:09", "2026-11-21 10:00:00Z", "2026-11-21", "2026-11-21T10:00:00", "2026-11-21T25:00:00Z", "yesterday"] {
        let body = json!({"events": [ev(json!(null)), ev(json!(bad))]});
        let refused = problem(post(&app, site.id, "/v1/events", body).await, 422, "validation_failed").await;
        assert_eq!(refused["errors"].as_array().map(Vec::len), Some(1), "{bad}: {refused}");
        assert_eq!(refused["errors"][0]["field"], "events[1].at", "{bad}: {refused}");
        assert_eq!(stored(), 0, "{bad}: a refused batch stores nothing");
    }
    let hour_ago = (sitebot::domain::Timestamp::now() - std::time::Duration::from_secs(3600)).rfc3339();
    let offset = "2026-11-21T12:00:00.5+02:00";
    let body = json!({"events": [ev(json!(hour_ago)), ev(json!(offset)), ev(json!(null))]});
    let resp = post(&app, site.id, "/v1/events", body).await;
    assert_eq!(resp.status(), StatusCode::ACCEPTED);
    assert_eq!(resp.json::<Value>().await.unwrap(), json!({"accepted": 3}));
    assert_eq!(stored(), 3);
}

async fn site_report(app: &TestApp, site: SiteId) -> Value {
    let store = app.state.store.clone();
    let since = sitebot::domain::Timestamp::now() - std::time::Duration::from_secs(3600);
    let r = store.run(move |s| s.site(site).analytics().report(since)).await.unwrap();
    serde_json::to_value(r).unwrap()
}

#[tokio::test]
async fn the_widget_script_and_config_are_served() {
    let app = spawn_app().await;
    let js = app.client.get(app.url("/v1/widget.js")).send().await.unwrap();
    assert_eq!(js.status(), 200);
    assert_eq!(js.headers()["content-type"], "text/javascript; charset=utf-8");
    assert_eq!(js.headers()["cache-control"], "public, max-age=300");
    let etag = js.headers()["etag"].to_str().unwrap().to_owned();
    assert_eq!(js.text().await.unwrap(), include_str!("../../assets/widget/widget.js"));
    let again = app.client.get(app.url("/v1/widget.js")).header("If-None-Match", &etag).send().await.unwrap();
    assert_eq!(again.status(), 304);

    let (site, _) = app.create_site(Tier::Starter).await;
    let config = |app: &TestApp| app.client.get(app.url("/v1/widget/config")).header("X-Site-Id", site.id.to_string()).send();
    let c: Value = config(&app).await.unwrap().json().await.unwrap();
    assert_eq!(
        c,
        json!({"siteId": site.id.to_string(), "name": "Test Site", "greeting": {}, "primaryColor": "#0b5fff",
                         "position": "bottom-right", "leadForm": true, "handoff": false, "languages": ["en"],
                         "suggestedQuestions": {"lang": null, "questions": []}})
    );
    let up = sitebot::store::SiteUpdate {
        widget_color: Some(sitebot::domain::HexColor::parse("#FFCC00").unwrap()),
        widget_position: Some(sitebot::domain::WidgetPosition::BottomLeft),
        widget_greetings: Some(vec![(sitebot::domain::Lang::parse("de").unwrap(), "Hallo!".into())]),
        lead_form: Some(false),
        handoff: Some(true),
        ..Default::default()
    };
    let id = site.id;
    app.state.store.run(move |s| s.site(id).update(up)).await.unwrap();
    let c: Value = config(&app).await.unwrap().json().await.unwrap();
    assert_eq!((c["primaryColor"].as_str(), c["position"].as_str(), c["leadForm"].as_bool()), (Some("#ffcc00"), Some("bottom-left"), Some(false)));
    assert_eq!(c["handoff"], true, "the widget asks for a person when the site has hand-off on");
    assert_eq!(c["greeting"], json!({"de": "Hallo!"}));
    assert_eq!(c["languages"], json!(["en", "de"]));
    problem(app.client.get(app.url("/v1/widget/config")).send().await.unwrap(), 400, "site_id_required").await;
}
