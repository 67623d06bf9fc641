//! `POST /v1/query/stream`: the answer as `token` events, then `done` with the sources; the tokens
//! concatenate to exactly the `/v1/query` answer; errors before the stream are problem+json.

use serde_json::{Value, json};
use sitebot::domain::Tier;

use crate::helpers::{problem, spawn_app};
use crate::knowledge::{ask, clinic, import_files};

/// (event, data) pairs of an SSE body; multi-line data joined with `\n`, comments skipped.
pub fn parse_sse(body: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for block in body.split("\n\n") {
        let mut event = "message".to_owned();
        let mut data: Vec<&str> = Vec::new();
        let mut any = false;
        for line in block.lines() {
            if line.starts_with(':') {
                continue;
            }
            if let Some(v) = line.strip_prefix("event:") {
                event = v.strip_prefix(' ').unwrap_or(v).to_owned();
                any = true;
            } else if let Some(v) = line.strip_prefix("data:") {
                data.push(v.strip_prefix(' ').unwrap_or(v));
                any = true;
            }
        }
        if any {
            out.push((event, data.join("\n")));
        }
    }
    out
}

async fn stream(app: &crate::helpers::TestApp, site: sitebot::domain::SiteId, body: Value) -> reqwest::Response {
    app.client.post(app.url("/v1/query/stream")).header("X-Site-Id", site.to_string()).header("Accept-Encoding", "gzip, br").json(&body).send().await.unwrap()
}

#[tokio::test]
async fn the_stream_sends_tokens_then_done_and_matches_the_plain_answer() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;
    let request = json!({"question": "When are you open on Saturdays?", "topK": 3});

    let resp = stream(&app, site.id, request.clone()).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    assert_eq!(resp.headers()["cache-control"], "no-cache");
    assert_eq!(resp.headers()["x-accel-buffering"], "no");
    assert!(resp.headers().get("content-encoding").is_none(), "never compressed");
    assert!(resp.headers().contains_key("x-request-id"));
    let events = parse_sse(&resp.text().await.unwrap());

    let (last, tokens) = events.split_last().expect("events");
    assert_eq!(last.0, "done", "{events:?}");
    assert!(tokens.len() > 3, "word-sized fragments: {tokens:?}");
    assert!(tokens.iter().all(|(e, _)| e == "token"), "{events:?}");
    let streamed: String = tokens.iter().map(|(_, d)| d.as_str()).collect();
    let done: Value = serde_json::from_str(&last.1).unwrap();

    let plain: Value = ask(&app, site.id, request).await.json().await.unwrap();
    assert_eq!(streamed, plain["answer"].as_str().unwrap());
    assert!(streamed.contains("9:00 to 13:00"), "{streamed}");
    assert_eq!(done["resolved"], true);
    assert_eq!(done["lang"], "en");
    assert!(done["id"].as_str().unwrap().starts_with("qry_"));
    assert_ne!(done["id"], plain["id"], "each request is its own query");
    assert!(done["latencyMs"].is_u64());
    let ids = |v: &Value| v["sources"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_owned()).collect::<Vec<_>>();
    assert_eq!(ids(&done), ids(&plain));
    assert_eq!(done["sources"][0]["url"], "https://clinic.example/hours");
}

#[tokio::test]
async fn an_off_topic_stream_streams_the_fallback() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;
    let body = json!({"question": "Who painted the Mona Lisa?", "lang": "de"});
    let events = parse_sse(&stream(&app, site.id, body.clone()).await.text().await.unwrap());
    let (last, tokens) = events.split_last().unwrap();
    let done: Value = serde_json::from_str(&last.1).unwrap();
    assert_eq!(done["resolved"], false);
    assert_eq!(done["sources"], json!([]));
    let streamed: String = tokens.iter().map(|(_, d)| d.as_str()).collect();
    let plain: Value = ask(&app, site.id, body).await.json().await.unwrap();
    assert_eq!(streamed, plain["answer"].as_str().unwrap());
    assert!(streamed.starts_with("Dazu"), "{streamed}");
}

#[tokio::test]
async fn errors_before_the_stream_are_problem_json() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let body = problem(stream(&app, site.id, json!({"question": "", "topK": 50})).await, 422, "validation_failed").await;
    let fields: Vec<&str> = body["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
    assert_eq!(fields, vec!["question", "topK"]);
    let resp = app
        .client
        .post(app.url("/v1/query/stream"))
        .header("X-Site-Id", sitebot::domain::SiteId::new_random().to_string())
        .json(&json!({"question": "hi"}))
        .send()
        .await
        .unwrap();
    problem(resp, 404, "site_not_found").await;
}

#[tokio::test]
async fn a_query_that_cannot_be_recorded_still_streams_to_done() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;
    // Retrieval still works, but recording the query cannot: the log table is gone, as after a disk
    // or operator mistake. The answer has started streaming by then, and it is finished as usual.
    let conn = rusqlite::Connection::open(app.data_dir.path().join("sitebot.db")).unwrap();
    conn.execute_batch("DROP TABLE query_log;").unwrap();
    let resp = stream(&app, site.id, json!({"question": "When are you open on Saturdays?"})).await;
    assert_eq!(resp.status(), 200);
    let events = parse_sse(&resp.text().await.unwrap());
    let (last, before) = events.split_last().expect("events");
    assert_eq!(last.0, "done", "{events:?}");
    assert!(!before.is_empty() && before.iter().all(|(e, _)| e == "token"), "{events:?}");
    let done: Value = serde_json::from_str(&last.1).unwrap();
    assert!(done["id"].as_str().unwrap().starts_with("qry_"), "{done}");
}
