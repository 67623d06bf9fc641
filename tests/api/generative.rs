//! Generative answers through a real OpenAI-compatible server run by the test (`model.rs`): supported
//! sentences shown with their markers, unsupported ones never, the extractive answer whenever the
//! endpoint fails, the circuit opening and closing, what the prompt holds, and the stream's first
//! sentence arriving while the model is still writing.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sitebot::config::{Config, GeneratorKind};
use sitebot::domain::{AnswerMode, EventType, NetworkPolicy, SiteId, Tier, WebhookUrl};
use sitebot::store::SiteUpdate;

use crate::helpers::{TestApp, spawn_app_with, test_config};
use crate::knowledge::{BIKES_MD, ask, clinic, import_files};
use crate::model::{ModelServer, Script, chunk, done, passage_with, says, system_prompt};
use crate::stream::parse_sse;

fn config_for(base: &str) -> Config {
    let mut c = test_config();
    c.answer.generator = GeneratorKind::Openai;
    c.answer.openai_base_url = Some(base.to_owned());
    c.answer.model = "test-model".into();
    c.answer.allow_private_networks = true;
    c.answer.timeout_secs = 2;
    c
}

/// The clinic site with the model server as its generator, and a bike shop beside it.
async fn clinic_app(model: &ModelServer) -> (TestApp, SiteId, SiteId) {
    let app = spawn_app_with(config_for(&model.base)).await;
    let (site, _) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;
    let (bikes, _) = app.create_site(Tier::Pro).await;
    import_files(&app, bikes.id, &[("repairs.md", BIKES_MD.as_bytes())]).await;
    (app, site.id, bikes.id)
}

async fn ask_json(app: &TestApp, site: SiteId, body: Value) -> Value {
    let resp = ask(app, site, body).await;
    assert_eq!(resp.status(), 200);
    resp.json().await.unwrap()
}

/// The hours answer, citing the passage the server was given for it.
fn hours(body: &Value) -> Script {
    let n = passage_with(body, "8:00 to 18:00");
    says(&format!("The clinic is open Monday to Friday from 8:00 to 18:00 [{n}]. On Saturdays it opens from 9:00 to 13:00 [{n}]."))
}

#[tokio::test]
async fn a_supported_answer_is_shown_with_its_markers_and_logged() {
    let model = ModelServer::start(hours).await;
    let (app, site, _) = clinic_app(&model).await;
    let hook = WebhookUrl::parse("http://127.0.0.1:9/hook", &NetworkPolicy::private()).unwrap();
    let up = SiteUpdate { webhook_url: Some(Some(hook)), webhook_events: Some(vec![EventType::QueryCompleted]), ..Default::default() };
    app.state.store.run(move |s| s.site(site).update(up)).await.unwrap();
    let a = ask_json(&app, site, json!({"question": "When are you open?"})).await;
    assert_eq!(a["mode"], "generative", "{a}");
    let payload: String = app.db().query_row("SELECT payload FROM outbox WHERE event_type = 'query.completed'", [], |r| r.get(0)).unwrap();
    let event: Value = serde_json::from_str(&payload).unwrap();
    assert_eq!(event["data"]["mode"], "generative", "query.completed carries the mode: {event}");
    let n = passage_with(&model.calls()[0].body, "8:00 to 18:00");
    assert_eq!(a["answer"], format!("The clinic is open Monday to Friday from 8:00 to 18:00 [{n}]. On Saturdays it opens from 9:00 to 13:00 [{n}]."));
    assert_eq!(a["sources"][n - 1]["url"], "https://clinic.example/hours", "[{n}] is the {n}th source: {a}");
    assert_eq!(a["resolved"], true);
    let row = app
        .db()
        .query_row("SELECT mode, model, prompt_tokens, completion_tokens, first_sentence_ms FROM query_log WHERE id = ?1", [a["id"].as_str().unwrap()], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?, r.get::<_, Option<i64>>(2)?, r.get::<_, Option<i64>>(3)?, r.get::<_, Option<i64>>(4)?))
        })
        .unwrap();
    assert_eq!((row.0.as_str(), row.1.as_deref(), row.2, row.3), ("generative", Some("test-model"), Some(120), Some(30)), "{row:?}");
    assert!(row.4.is_some_and(|ms| ms <= a["latencyMs"].as_i64().unwrap()), "{row:?}");
}

#[tokio::test]
async fn sentences_the_sources_do_not_support_are_never_shown() {
    let model = ModelServer::start(hours).await;
    let (app, site, _) = clinic_app(&model).await;
    // A second sentence the passage does not say: the answer stops before it.
    model.set(|b| {
        let n = passage_with(b, "8:00 to 18:00");
        says(&format!(
            "The clinic is open Monday to Friday from 8:00 to 18:00 [{n}]. Every visit includes a free coffee and a massage [{n}]. We are open on Saturdays [{n}]."
        ))
    });
    let a = ask_json(&app, site, json!({"question": "When are you open?"})).await;
    let n = passage_with(&model.calls()[0].body, "8:00 to 18:00");
    assert_eq!(
        (a["mode"].as_str(), a["answer"].as_str()),
        (Some("generative"), Some(format!("The clinic is open Monday to Friday from 8:00 to 18:00 [{n}].").as_str()))
    );

    // A number changed from the source, first: nothing generative survives, the quoted answer is given.
    model.set(|b| {
        let n = passage_with(b, "350 euros");
        says(&format!("In-office teeth whitening costs 300 euros per session [{n}]."))
    });
    let a = ask_json(&app, site, json!({"question": "How much is teeth whitening?"})).await;
    assert_eq!(a["mode"], "extractive", "{a}");
    assert!(!a["answer"].as_str().unwrap().contains("300"), "{a}");
    assert!(a["answer"].as_str().unwrap().contains("350 euros"), "the extractive answer instead: {a}");

    // A marker to a passage that was not given.
    model.set(|_| says("The clinic is open Monday to Friday from 8:00 to 18:00 [9]."));
    let a = ask_json(&app, site, json!({"question": "When are you open?"})).await;
    assert_eq!(a["mode"], "extractive", "{a}");
    assert!(!a["answer"].as_str().unwrap().contains("[9]"), "{a}");

    // A sentence with no marker at all.
    model.set(|_| says("We are always happy to see you."));
    let a = ask_json(&app, site, json!({"question": "When are you open?"})).await;
    assert_eq!(a["mode"], "extractive", "{a}");
    assert!(!a["answer"].as_str().unwrap().contains("happy"), "{a}");
}

#[tokio::test]
async fn a_failing_or_slow_endpoint_gives_the_extractive_answer() {
    let model = ModelServer::start(|_| Script { status: 500, steps: vec![] }).await;
    let (app, site, _) = clinic_app(&model).await;
    let a = ask_json(&app, site, json!({"question": "When are you open?"})).await;
    assert_eq!(a["mode"], "extractive", "a 500: {a}");
    assert!(a["answer"].as_str().unwrap().contains("8:00"), "{a}");

    // Slower than answer.timeout_secs (2 s): the quoted answer, once the deadline has passed.
    model.set(|b| {
        let mut s = hours(b);
        s.steps.insert(0, (Duration::from_secs(6), String::new()));
        s
    });
    let started = Instant::now();
    let a = ask_json(&app, site, json!({"question": "When are you open?"})).await;
    assert_eq!(a["mode"], "extractive", "slow: {a}");
    println!("slow endpoint: extractive answer after {:?}", started.elapsed());

    // A malformed stream.
    model.set(|_| Script { status: 200, steps: vec![(Duration::ZERO, "data: {not json\n\n".into())] });
    assert_eq!(ask_json(&app, site, json!({"question": "When are you open?"})).await["mode"], "extractive");

    // A port that refuses connections.
    let (_refusing, port) = crate::helpers::held_port();
    let closed = format!("http://127.0.0.1:{port}/v1");
    let app = spawn_app_with(config_for(&closed)).await;
    let (site, _) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;
    let a = ask_json(&app, site.id, json!({"question": "When are you open?"})).await;
    assert_eq!(a["mode"], "extractive", "closed port: {a}");
    assert!(a["answer"].as_str().unwrap().contains("8:00"), "{a}");
}

#[tokio::test]
async fn repeated_failures_open_the_circuit_and_a_probe_closes_it() {
    let model = ModelServer::start(|_| Script { status: 503, steps: vec![] }).await;
    let (app, site, _) = clinic_app(&model).await;
    for _ in 0..3 {
        assert_eq!(ask_json(&app, site, json!({"question": "When are you open?"})).await["mode"], "extractive");
    }
    assert_eq!(model.calls().len(), 3);
    // Open: the endpoint is skipped, even once it would answer again.
    model.set(hours);
    for _ in 0..3 {
        assert_eq!(ask_json(&app, site, json!({"question": "When are you open?"})).await["mode"], "extractive");
    }
    assert_eq!(model.calls().len(), 3, "no request while the circuit is open");
    // After the cool-down one probe goes through; its success closes the circuit.
    app.clock.advance(Duration::from_secs(31));
    assert_eq!(ask_json(&app, site, json!({"question": "When are you open?"})).await["mode"], "generative");
    assert_eq!(ask_json(&app, site, json!({"question": "When are you open?"})).await["mode"], "generative");
    assert_eq!(model.calls().len(), 5);
}

#[tokio::test]
async fn the_prompt_holds_the_question_the_passages_and_the_conversation_and_nothing_of_another_site() {
    let model = ModelServer::start(hours).await;
    let (app, site, bikes) = clinic_app(&model).await;
    // The bike shop asks first, so its text has been in a prompt of this server.
    model.set(|b| {
        let n = passage_with(b, "flat tyre");
        says(&format!("A flat tyre repair costs 15 euros [{n}]."))
    });
    assert_eq!(ask_json(&app, bikes, json!({"question": "How much is a flat tyre repair?"})).await["mode"], "generative");
    model.set(hours);
    let first = ask_json(&app, site, json!({"question": "When are you open?"})).await;
    let cid = first["conversationId"].as_str().unwrap();
    let token = first["conversationToken"].as_str().unwrap();
    let follow = crate::knowledge::ask_as(&app, site, json!({"question": "And on Saturdays?", "conversationId": cid}), token).await;
    assert_eq!(follow.status(), 200);
    let follow: Value = follow.json().await.unwrap();
    assert_eq!(follow["mode"], "generative");
    let body = model.calls().last().unwrap().body.clone();
    let prompt = system_prompt(&body);
    assert!(prompt.contains("only the numbered passages"), "the instructions: {prompt}");
    assert!(prompt.contains("8:00 to 18:00") && prompt.contains("Saturdays"), "the passages: {prompt}");
    let messages = body["messages"].as_array().unwrap();
    let said: Vec<(&str, &str)> = messages.iter().map(|m| (m["role"].as_str().unwrap(), m["content"].as_str().unwrap())).collect();
    assert_eq!(said[1], ("user", "When are you open?"), "the earlier question: {said:?}");
    assert_eq!(said[2], ("assistant", first["answer"].as_str().unwrap()), "the earlier answer: {said:?}");
    assert_eq!(*said.last().unwrap(), ("user", "And on Saturdays?"));
    assert_eq!(body["model"], "test-model");
    let all = body.to_string();
    for foreign in ["tyre", "bike", "e-bikes", "15 euros"] {
        assert!(!all.contains(foreign), "another site's text ({foreign}) in the prompt: {all}");
    }
}

#[tokio::test]
async fn a_site_set_to_extractive_never_reaches_the_model() {
    let model = ModelServer::start(hours).await;
    let (app, site, _) = clinic_app(&model).await;
    let up = SiteUpdate { answers: Some(AnswerMode::Extractive), ..Default::default() };
    app.state.store.run(move |s| s.site(site).update(up)).await.unwrap();
    let a = ask_json(&app, site, json!({"question": "When are you open?"})).await;
    assert_eq!(a["mode"], "extractive");
    assert!(model.calls().is_empty(), "the model was asked");
}

#[tokio::test]
async fn the_stream_sends_the_first_sentence_before_the_model_has_finished() {
    let slow = |b: &Value| {
        let n = passage_with(b, "8:00 to 18:00");
        Script {
            status: 200,
            steps: vec![
                (Duration::ZERO, chunk(&format!("The clinic is open Monday to Friday from 8:00 to 18:00 [{n}]. On"))),
                (Duration::from_millis(1500), chunk(&format!(" Saturdays it opens from 9:00 to 13:00 [{n}]."))),
                (Duration::ZERO, done(100, 25)),
            ],
        }
    };
    let model = ModelServer::start(slow).await;
    let (app, site, _) = clinic_app(&model).await;
    let mut resp = app
        .client
        .post(app.url("/v1/query/stream"))
        .header("X-Site-Id", site.to_string())
        .json(&json!({"question": "When are you open?"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let mut body = String::new();
    let mut first_token_at = None;
    while let Some(bytes) = resp.chunk().await.unwrap() {
        body.push_str(std::str::from_utf8(&bytes).unwrap());
        if first_token_at.is_none() && body.contains("event: token") {
            first_token_at = Some(Instant::now());
        }
    }
    let finished = model.calls()[0].finished.expect("the model finished");
    assert!(first_token_at.expect("tokens") < finished, "the first sentence came only after the model had finished");
    let events = parse_sse(&body);
    let (tokens, rest): (Vec<_>, Vec<_>) = events.iter().partition(|(e, _)| e == "token");
    let streamed: String = tokens.iter().map(|(_, d)| d.as_str()).collect();
    let done_event: Value = serde_json::from_str(&rest.last().unwrap().1).unwrap();
    assert_eq!(done_event["mode"], "generative");
    // The same question in the same state through route 1 gives exactly the streamed text.
    let a = ask_json(&app, site, json!({"question": "When are you open?"})).await;
    assert_eq!(a["mode"], "generative");
    assert_eq!(streamed, a["answer"].as_str().unwrap());
    assert!(streamed.contains("Saturdays"), "{streamed}");
}
