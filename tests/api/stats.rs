//! `GET /v1/public-stats/{siteId}`: counters recorded by the real paths (the query-log record fn, the
//! leads route), read back per site.

use serde_json::{Value, json};
use sitebot::domain::{AnswerMode, SiteId, Tier};
use sitebot::store::queries::QueryRecord;

use crate::helpers::{TestApp, problem, spawn_app};

/// Records `n` questions of which `resolved` were resolved, one transaction each, as the query log does.
pub async fn record(app: &TestApp, site: SiteId, n: usize, resolved: usize) {
    for i in 0..n {
        let rec = QueryRecord {
            query_id: sitebot::domain::QueryId::new(),
            site_id: site,
            question: "q".into(),
            resolved: i < resolved,
            source_count: 0,
            latency_ms: 1,
            mode: AnswerMode::Extractive,
            generation: None,
            lang: "en".into(),
            conversation: None,
            conversation_token: None,
            cited: Vec::new(),
            review: None,
        };
        app.state.store.run(move |s| s.site(site).queries().record(&rec, None)).await.unwrap();
    }
}

async fn public_stats(app: &TestApp, id: &str) -> reqwest::Response {
    app.client.get(app.url(&format!("/v1/public-stats/{id}"))).send().await.unwrap()
}

#[tokio::test]
async fn stats_count_questions_resolutions_and_leads() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Starter).await;
    let (other, _) = app.create_site(Tier::Starter).await;
    let today = chrono::Utc::now().date_naive().format("%Y-%m-%d").to_string();

    // Before any activity: zeros, active since the site's creation day.
    let resp = public_stats(&app, &site.id.to_string()).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["cache-control"], "public, max-age=60");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(
        body,
        json!({"siteId": site.id.to_string(), "totalQuestions": 0, "resolutionRate": 0.0, "leadsCollected": 0,
               "activeSince": site.created_at.date().to_string(), "daysActive": 1})
    );

    record(&app, site.id, 8, 6).await;
    for email in ["ada@example.com", "grace@example.com", "alan@example.com"] {
        let resp = app
            .client
            .post(app.url("/v1/leads"))
            .header("X-Site-Id", site.id.to_string())
            .json(&json!({"email": email, "message": "Please call me about an appointment"}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 202);
    }
    let body: Value = public_stats(&app, &site.id.to_string()).await.json().await.unwrap();
    assert_eq!(body["totalQuestions"], 8);
    assert_eq!(body["resolutionRate"], 0.75);
    assert_eq!(body["leadsCollected"], 3);
    assert_eq!(body["activeSince"], today);
    assert_eq!(body["daysActive"], 1);

    // Another site's counters are its own.
    record(&app, other.id, 3, 1).await;
    let body: Value = public_stats(&app, &other.id.to_string()).await.json().await.unwrap();
    assert_eq!((body["totalQuestions"].as_u64(), body["resolutionRate"].as_f64(), body["leadsCollected"].as_u64()), (Some(3), Some(0.3333), Some(0)));
    let body: Value = public_stats(&app, &site.id.to_string()).await.json().await.unwrap();
    assert_eq!(body["totalQuestions"], 8);
}

#[tokio::test]
async fn bad_and_unknown_site_ids() {
    let app = spawn_app().await;
    problem(public_stats(&app, "not-a-guid").await, 400, "invalid_site_id").await;
    problem(public_stats(&app, "3f2b6c1e-8d4a-4f7e-9b1a-2c3d4e5f6a7b").await, 404, "site_not_found").await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let id = site.id;
    app.state.store.run(move |s| s.site(id).set_enabled(false)).await.unwrap();
    problem(public_stats(&app, &site.id.to_string()).await, 403, "site_disabled").await;
}
