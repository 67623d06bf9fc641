//! `POST /v1/leads`: acceptance, validation, body limits, idempotency, storage without a webhook.

use serde_json::json;
use sitebot::domain::{SiteId, Tier};
use sitebot::store::{leads, outbox};

use crate::helpers::{TestApp, new_site, problem, spawn_app, spawn_app_with, with_webhook};
use crate::webhooks::webhook_config;

pub async fn post_lead(app: &TestApp, site: &SiteId, body: &serde_json::Value) -> reqwest::Response {
    app.client.post(app.url("/v1/leads")).header("X-Site-Id", site.to_string()).json(body).send().await.unwrap()
}

/// `post_lead` with a conversation's token, as a lead that attaches its transcript needs.
pub async fn post_lead_as(app: &TestApp, site: &SiteId, body: &serde_json::Value, token: &str) -> reqwest::Response {
    app.client.post(app.url("/v1/leads")).header("X-Site-Id", site.to_string()).header("X-Conversation-Token", token).json(body).send().await.unwrap()
}

/// Posts a lead and returns its id, asserting the 202.
pub async fn accepted(app: &TestApp, site: &SiteId, body: &serde_json::Value) -> String {
    let resp = post_lead(app, site, body).await;
    assert_eq!(resp.status(), 202);
    let body: serde_json::Value = resp.json().await.unwrap();
    body["id"].as_str().unwrap().to_owned()
}

async fn stored(app: &TestApp, site: SiteId) -> Vec<leads::Lead> {
    app.state.store.run(move |s| s.site(site).leads().list(None)).await.unwrap()
}

async fn events(app: &TestApp, site: SiteId) -> Vec<outbox::Message> {
    app.state.store.run(move |s| s.outbox().list(Some(site), None, 1000)).await.unwrap()
}

#[tokio::test]
async fn a_lead_is_accepted_and_stored_with_its_event() {
    let app = spawn_app_with(webhook_config()).await;
    let (site, _) = app.create_site_with(with_webhook(new_site(Tier::Pro), "http://127.0.0.1:9/never")).await;
    let body = json!({"name": "Ada Lovelace", "email": "ada@example.com", "message": "Call me", "pageUrl": "https://clinic.example/prices", "extra": 1});
    let resp = post_lead(&app, &site.id, &body).await;
    assert_eq!(resp.status(), 202);
    assert_eq!(resp.headers()["content-type"], "application/json");
    assert!(resp.headers().contains_key("x-request-id"));
    let got: serde_json::Value = resp.json().await.unwrap();
    let id = got["id"].as_str().unwrap();
    assert!(id.starts_with("lead_") && id.len() == 31, "{id}");
    assert_eq!(got, json!({"id": id, "status": "accepted"}));

    let leads = stored(&app, site.id).await;
    assert_eq!(leads.len(), 1);
    let lead = &leads[0];
    assert_eq!((lead.lead_id.as_str(), lead.email.as_str()), (id, "ada@example.com"));
    assert_eq!(lead.name.as_deref(), Some("Ada Lovelace"));
    assert_eq!(lead.page_url.as_deref(), Some("https://clinic.example/prices"));
    let evs = events(&app, site.id).await;
    assert_eq!(evs.len(), 1);
    assert_eq!(evs[0].event_type.as_str(), "lead.captured");
    let (_, payload, _) = app
        .state
        .store
        .run({
            let id = evs[0].id.clone();
            move |s| s.outbox().get(&id)
        })
        .await
        .unwrap()
        .unwrap();
    let payload: serde_json::Value = serde_json::from_str(&payload).unwrap();
    assert_eq!(payload["type"], "lead.captured");
    assert_eq!(payload["data"]["leadId"], id);
    assert_eq!(payload["data"]["siteId"], site.id.to_string());
    assert_eq!(payload["data"]["message"], "Call me");
}

#[tokio::test]
async fn a_lead_is_stored_even_without_a_webhook() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Starter).await;
    let id = accepted(&app, &site.id, &json!({"email": "bob@example.com"})).await;
    let leads = stored(&app, site.id).await;
    assert_eq!(leads.iter().map(|l| l.lead_id.as_str()).collect::<Vec<_>>(), vec![id.as_str()]);
    assert!(events(&app, site.id).await.is_empty(), "no webhook, no event");
}

#[tokio::test]
async fn invalid_leads_name_every_bad_field() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let body = json!({"name": "x".repeat(201), "email": "not-an-address", "message": "m".repeat(5001), "pageUrl": "javascript:alert(1)"});
    let problem_body = problem(post_lead(&app, &site.id, &body).await, 422, "validation_failed").await;
    let mut fields: Vec<&str> = problem_body["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
    fields.sort();
    assert_eq!(fields, vec!["email", "message", "name", "pageUrl"]);

    let missing = problem(post_lead(&app, &site.id, &json!({"name": "Ada"})).await, 422, "validation_failed").await;
    assert_eq!(missing["errors"][0]["field"], "email");
    let wrong_type = problem(post_lead(&app, &site.id, &json!({"email": 42})).await, 422, "validation_failed").await;
    assert_eq!(wrong_type["errors"][0]["field"], "email");
    let long_key = app
        .client
        .post(app.url("/v1/leads"))
        .header("X-Site-Id", site.id.to_string())
        .header("Idempotency-Key", "k".repeat(256))
        .json(&json!({"email": "ada@example.com"}))
        .send()
        .await
        .unwrap();
    let key_problem = problem(long_key, 422, "validation_failed").await;
    assert_eq!(key_problem["errors"][0]["field"], "Idempotency-Key");
    assert!(stored(&app, site.id).await.is_empty(), "nothing invalid is stored");
}

#[tokio::test]
async fn malformed_wrongly_typed_and_oversized_bodies_are_refused() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let req = || app.client.post(app.url("/v1/leads")).header("X-Site-Id", site.id.to_string());
    let bad_json = req().header("content-type", "application/json").body("{\"email\": ").send().await.unwrap();
    problem(bad_json, 400, "invalid_json").await;
    let text = req().header("content-type", "text/plain").body("email=ada@example.com").send().await.unwrap();
    problem(text, 415, "unsupported_media_type").await;
    let none = req().body("{\"email\": \"ada@example.com\"}").send().await.unwrap();
    problem(none, 415, "unsupported_media_type").await;
    let big = json!({"email": "ada@example.com", "message": "x".repeat(64 * 1024)}).to_string();
    assert!(big.len() > 64 * 1024);
    let too_large = req().header("content-type", "application/json").body(big).send().await.unwrap();
    problem(too_large, 413, "payload_too_large").await;
    assert!(stored(&app, site.id).await.is_empty());
}

#[tokio::test]
async fn an_idempotency_key_replays_the_first_response_and_stores_one_lead() {
    let app = spawn_app_with(webhook_config()).await;
    let (site, _) = app.create_site_with(with_webhook(new_site(Tier::Pro), "http://127.0.0.1:9/never")).await;
    let (other, _) = app.create_site(Tier::Pro).await;
    let send = |site: SiteId, email: &'static str| {
        app.client
            .post(app.url("/v1/leads"))
            .header("X-Site-Id", site.to_string())
            .header("Idempotency-Key", "form-submit-7f3a")
            .json(&json!({"email": email}))
            .send()
    };
    let first = send(site.id, "ada@example.com").await.unwrap();
    assert_eq!(first.status(), 202);
    assert!(first.headers().get("idempotent-replayed").is_none());
    let first: serde_json::Value = first.json().await.unwrap();
    // A double-click: the first answer again, nothing new stored.
    let again = send(site.id, "ada@example.com").await.unwrap();
    assert_eq!(again.status(), 202);
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    assert_eq!(again.json::<serde_json::Value>().await.unwrap(), first);
    // The same key with another request is a client bug, not a repeat (Stripe, the IETF draft): 422, nothing stored.
    let reused = send(site.id, "changed@example.com").await.unwrap();
    crate::helpers::problem(reused, 422, "idempotency_key_reused").await;
    let leads = stored(&app, site.id).await;
    assert_eq!(leads.len(), 1);
    assert_eq!(leads[0].lead_id, first["id"].as_str().unwrap());
    assert_eq!(leads[0].email, "ada@example.com");
    assert_eq!(events(&app, site.id).await.len(), 1, "one lead, one event");
    // Keys belong to a site: the same key elsewhere is a new lead.
    let elsewhere: serde_json::Value = send(other.id, "eve@example.com").await.unwrap().json().await.unwrap();
    assert_ne!(elsewhere["id"], first["id"]);
    assert_eq!(stored(&app, other.id).await.len(), 1);
    let counted = app.count("SELECT leads FROM site_stats WHERE site_id = ?1", [site.id.to_string()]);
    assert_eq!(counted, 1, "the public leads counter counts the lead once");
}
