//! Which bodies a JSON route takes.

use serde_json::json;
use sitebot::domain::Tier;

use crate::helpers::{problem, spawn_app};

/// Per RFC 8259 `application/json` has no parameters that matter and is always UTF-8; RFC 6839 lets
/// `application/*+json` types be read as JSON. Anything else, or a malformed or ambiguous type, is 415.
#[tokio::test]
async fn json_routes_take_json_content_types_only() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let lead = json!({"email": "a@example.com"}).to_string();
    let send = |content_types: &[&str]| {
        let mut req = app.client.post(app.url("/v1/leads")).header("X-Site-Id", site.id.to_string()).body(lead.clone());
        for ct in content_types {
            req = req.header("Content-Type", *ct);
        }
        req.send()
    };
    for ct in
        ["application/json", "application/json; charset=utf-8", "Application/JSON;Charset=\"UTF-8\"", "application/problem+json", "application/vnd.api+json"]
    {
        assert_eq!(send(&[ct]).await.unwrap().status(), 202, "{ct}");
    }
    for ct in [
        "text/plain",
        "text/json",
        "application/json-seq",
        "application/jsonx",
        "application/x-json",
        "application/+json",
        "application/json+",
        "application/json; charset=utf-16",
        "application/json; charset=iso-8859-1",
        "application/json, text/plain",
        "application/json garbage",
        "multipart/form-data; boundary=x",
        "application/x-www-form-urlencoded",
        "",
    ] {
        let resp = send(&[ct]).await.unwrap();
        assert_eq!(resp.status(), 415, "{ct}");
        let body = problem(resp, 415, "unsupported_media_type").await;
        assert!(body["detail"].as_str().unwrap().contains("application/json"), "{ct}: {body}");
    }
    problem(send(&[]).await.unwrap(), 415, "unsupported_media_type").await;
    // Two Content-Type fields: which one the body is in is anyone's guess.
    for twice in [["application/json", "text/plain"], ["application/json", "application/json"]] {
        let resp = send(&twice).await.unwrap();
        assert_eq!(resp.status(), 415, "{twice:?}");
        problem(resp, 415, "unsupported_media_type").await;
    }
}
