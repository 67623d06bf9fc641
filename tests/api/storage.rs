//! Storage strangers cannot fill, over the real server: per-site daily caps on anonymous leads and logged
//! questions (across a restart), the free-space watermark (writes stop, answers go on), and a failing
//! query-log write that never turns a computed answer into an error.

use serde_json::{Value, json};
use sitebot::domain::{SiteId, Tier, Timestamp};

use crate::helpers::{TestApp, problem, spawn_app_in, spawn_app_with, test_config};
use crate::knowledge::{ask, clinic, import_files};
use crate::leads::post_lead;
use crate::stream::parse_sse;

const QUESTION: &str = "How much does teeth whitening cost?";

/// Asks and asserts the 200 with the grounded answer, whatever happens to its record.
async fn answered(app: &TestApp, site: SiteId) -> Value {
    let resp = ask(app, site, json!({"question": QUESTION})).await;
    assert_eq!(resp.status(), 200);
    let a: Value = resp.json().await.unwrap();
    assert!(a["answer"].as_str().unwrap().contains("350 euros"), "{a}");
    assert_eq!(a["resolved"], true);
    a
}

/// Streams the question and returns the `done` event's data, asserting the stream ends with it.
async fn streamed(app: &TestApp, site: SiteId) -> Value {
    let resp = app.client.post(app.url("/v1/query/stream")).header("X-Site-Id", site.to_string()).json(&json!({"question": QUESTION})).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let events = parse_sse(&resp.text().await.unwrap());
    let (last, before) = events.split_last().expect("events");
    assert_eq!(last.0, "done", "{events:?}");
    let text: String = before.iter().map(|(e, d)| if e == "token" { d.as_str() } else { "" }).collect();
    assert!(text.contains("350 euros"), "{text}");
    serde_json::from_str(&last.1).unwrap()
}

fn logged(app: &TestApp, site: SiteId) -> i64 {
    app.count("SELECT count(*) FROM query_log WHERE site_id = ?1", [site.to_string()])
}

fn public_questions(app: &TestApp, site: SiteId) -> i64 {
    app.db().query_row("SELECT coalesce(sum(questions), 0) FROM site_stats WHERE site_id = ?1", [site.to_string()], |r| r.get(0)).unwrap()
}

/// Seconds from now to the next midnight UTC.
fn secs_to_midnight() -> i64 {
    let now = Timestamp::now();
    (now.next_day().as_millis() - now.as_millis()) / 1000
}

#[tokio::test]
async fn anonymous_leads_over_the_daily_cap_get_429_until_midnight_utc_even_after_a_restart() {
    let mut config = test_config();
    config.limits.leads_per_site_per_day = 2;
    let app = spawn_app_with(config.clone()).await;
    let (site, creds) = app.create_site(Tier::Pro).await;
    let (other, _) = app.create_site(Tier::Starter).await;
    let lead = json!({"email": "ada@example.com"});
    let keyed =
        app.client.post(app.url("/v1/leads")).header("X-Site-Id", site.id.to_string()).header("Idempotency-Key", "k1").json(&lead).send().await.unwrap();
    assert_eq!(keyed.status(), 202);
    assert_eq!(post_lead(&app, &site.id, &lead).await.status(), 202);

    let refused = post_lead(&app, &site.id, &lead).await;
    let retry: i64 = refused.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((retry - secs_to_midnight()).abs() <= 2, "Retry-After {retry} s is the next midnight UTC");
    let body = problem(refused, 429, "daily_quota_exceeded").await;
    assert!(body["detail"].as_str().unwrap().contains("midnight UTC"), "{body}");
    // Every 202 is a stored lead, and the refused one is not stored.
    assert_eq!(app.count("SELECT count(*) FROM leads WHERE site_id = ?1", [site.id.to_string()]), 2);

    // A replay of an accepted lead is still answered; the site's own server (bearer token) is not capped;
    // another site is not affected.
    let replay =
        app.client.post(app.url("/v1/leads")).header("X-Site-Id", site.id.to_string()).header("Idempotency-Key", "k1").json(&lead).send().await.unwrap();
    assert_eq!((replay.status().as_u16(), replay.headers()["idempotent-replayed"].to_str().unwrap()), (202, "true"));
    let token = creds.bearer_token.unwrap();
    let server = app.client.post(app.url("/v1/leads")).bearer_auth(&token).json(&lead).send().await.unwrap();
    assert_eq!(server.status(), 202);
    assert_eq!(post_lead(&app, &other.id, &lead).await.status(), 202);
    assert_eq!(app.count("SELECT count(*) FROM leads WHERE site_id = ?1", [site.id.to_string()]), 3);

    // The day's count is in the database: a restart does not reset it.
    let dir = app.stop().await;
    let app = spawn_app_in(config, dir).await;
    problem(post_lead(&app, &site.id, &lead).await, 429, "daily_quota_exceeded").await;
    assert_eq!(app.count("SELECT count(*) FROM leads WHERE site_id = ?1", [site.id.to_string()]), 3);
}

#[tokio::test]
async fn questions_over_the_daily_logging_cap_are_answered_counted_but_not_logged() {
    let mut config = test_config();
    config.limits.logged_questions_per_site_per_day = 2;
    config.server.metrics_listen = Some("127.0.0.1:0".parse().unwrap());
    let app = spawn_app_with(config).await;
    let (site, creds) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;
    for _ in 0..3 {
        answered(&app, site.id).await;
    }
    streamed(&app, site.id).await;
    assert_eq!(logged(&app, site.id), 2, "the cap");
    assert_eq!(public_questions(&app, site.id), 4, "public stats count every answered question");
    let unlogged: i64 = app.db().query_row("SELECT unlogged_questions FROM daily_usage WHERE site_id = ?1", [site.id.to_string()], |r| r.get(0)).unwrap();
    assert_eq!(unlogged, 2);
    let since = Timestamp::now().day_start();
    let id = site.id;
    let report = app.state.store.run(move |s| s.site(id).analytics().report(since)).await.unwrap();
    assert_eq!((report.questions, report.unlogged_questions), (2, 2), "the operator's report says how many were not logged");
    let metrics = app.state.metrics.encode(&[], 0, Default::default(), None);
    assert!(metrics.contains("sitebot_writes_not_stored_total{what=\"question\",reason=\"daily_cap\"} 2"), "{metrics}");

    // The site's own server (bearer token) is logged beyond the cap.
    let resp = app.client.post(app.url("/v1/query")).bearer_auth(creds.bearer_token.unwrap()).json(&json!({"question": QUESTION})).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(logged(&app, site.id), 3);
}

#[tokio::test]
async fn below_the_free_space_watermark_visitors_writes_stop_and_answers_go_on() {
    let mut config = test_config();
    // More than any disk has: the data directory is always below it.
    config.storage.min_free_mb = 1 << 40;
    let app = spawn_app_with(config).await;
    let (site, _) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;

    let a = answered(&app, site.id).await;
    streamed(&app, site.id).await;
    assert_eq!(logged(&app, site.id), 0);

    let events = json!({"events": [{"type": "widget_opened", "sessionId": "s1"}, {"type": "answer_shown", "sessionId": "s1"}]});
    let resp = app.client.post(app.url("/v1/events")).header("X-Site-Id", site.id.to_string()).json(&events).send().await.unwrap();
    assert_eq!(resp.status(), 202);
    assert_eq!(resp.json::<Value>().await.unwrap(), json!({"accepted": 0}), "the answer says nothing was kept");
    assert_eq!(app.count("SELECT count(*) FROM widget_events", []), 0);

    let rating = json!({"queryId": a["id"], "rating": "up"});
    let resp = app.client.post(app.url("/v1/feedback")).header("X-Site-Id", site.id.to_string()).json(&rating).send().await.unwrap();
    assert_eq!(resp.headers()["retry-after"], "300");
    problem(resp, 503, "unavailable").await;

    // A lead is refused, never acknowledged and then lost.
    let resp = post_lead(&app, &site.id, &json!({"email": "ada@example.com"})).await;
    assert_eq!(resp.headers()["retry-after"], "300");
    problem(resp, 503, "unavailable").await;
    assert_eq!(app.count("SELECT count(*) FROM leads", []), 0);

    let ready: Value = app.client.get(app.url("/readyz")).send().await.unwrap().json().await.unwrap();
    assert_eq!(ready, json!({"status": "ready", "storage": "low"}));
}

#[tokio::test]
async fn a_failing_query_log_write_still_answers_200() {
    let mut config = test_config();
    config.server.metrics_listen = Some("127.0.0.1:0".parse().unwrap());
    let app = spawn_app_with(config).await;
    let (site, _) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;
    let ready: Value = app.client.get(app.url("/readyz")).send().await.unwrap().json().await.unwrap();
    assert_eq!(ready["storage"], "ok");
    // The write fails inside the server's transaction, as on a full disk.
    app.db().execute_batch("CREATE TRIGGER full_disk BEFORE INSERT ON query_log BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;").unwrap();
    answered(&app, site.id).await;
    let done = streamed(&app, site.id).await;
    assert!(done["id"].as_str().unwrap().starts_with("qry_") && done["sources"].as_array().is_some_and(|s| !s.is_empty()), "{done}");
    assert_eq!(logged(&app, site.id), 0);
    assert_eq!(public_questions(&app, site.id), 0, "the transaction rolled back whole");
    let metrics = app.state.metrics.encode(&[], 0, Default::default(), None);
    assert!(metrics.contains("sitebot_writes_not_stored_total{what=\"question\",reason=\"failed\"} 2"), "{metrics}");

    // Once the fault is gone, questions are logged again.
    app.db().execute_batch("DROP TRIGGER full_disk;").unwrap();
    answered(&app, site.id).await;
    assert_eq!(logged(&app, site.id), 1);
}
