//! Answers given before the body was read, and which bodies a JSON route takes.
//!
//! An error answered before the request body was read used to be followed on HTTP/2 by
//! `RST_STREAM(NO_ERROR)`, and libcurl 7.88 (Debian 12) then lost the response about half of the time.
//! The server now reads a small declared body before answering, as nginx does; these tests drive the
//! Debian curl binary against the real server.

use futures_util::StreamExt;
use serde_json::{Value, json};
use sitebot::domain::Tier;

use crate::helpers::{TestApp, problem, spawn_app};

const TRIES: usize = 30;

/// One `curl --http2` call: (exit ok, status, HTTP version, content type, body).
async fn curl_h2(app: &TestApp, path: &str, headers: &[&str], body: &str) -> (bool, String, String, String, String) {
    let cert = sitebot::http::tls::self_signed_paths(app.data_dir.path()).0;
    let mut cmd = tokio::process::Command::new("/usr/bin/curl");
    cmd.args(["-s", "--http2", "--max-time", "20", "--cacert"]).arg(&cert).args(["-X", "POST", "-w", "\n%{http_code} %{http_version} %{content_type}"]);
    for h in headers {
        cmd.args(["-H", h]);
    }
    let out = cmd.args(["--data-binary", body]).arg(app.url(path)).output().await.expect("/usr/bin/curl runs (apt-get install curl)");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, meta) = text.rsplit_once('\n').unwrap_or(("", &text));
    let mut meta = meta.splitn(3, ' ');
    let mut next = || meta.next().unwrap_or("").to_owned();
    let (status, version, content_type) = (next(), next(), next());
    (out.status.success(), status, version, content_type, body.to_owned())
}

/// Sends the same request `TRIES` times and counts the tries that got the whole problem response.
async fn answered(app: &TestApp, path: &str, headers: &[&str], body: &str, status: &str, code: &str) -> usize {
    let mut ok = 0;
    for i in 0..TRIES {
        let (exit_ok, got, version, content_type, text) = curl_h2(app, path, headers, body).await;
        let parsed: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if exit_ok && got == status && version == "2" && content_type == "application/problem+json" && parsed["code"] == code {
            ok += 1;
        } else {
            eprintln!("try {i}: exit ok {exit_ok}, status {got:?}, HTTP/{version}, {content_type:?}, body {text:?}");
        }
    }
    println!("curl --http2 {path} ({code}): {ok}/{TRIES} answered");
    ok
}

#[tokio::test]
async fn curl_over_http2_gets_every_early_error() {
    assert!(
        std::process::Command::new("/usr/bin/curl").arg("--version").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("HTTP2")),
        "/usr/bin/curl with HTTP2 is needed"
    );
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let site_header = format!("X-Site-Id: {}", site.id);
    let question = r#"{"question":"hi"}"#;

    // No X-Site-Id: refused before the body is read.
    let n = answered(&app, "/v1/query", &["content-type: application/json"], question, "400", "site_id_required").await;
    assert_eq!(n, TRIES);
    // A body that is not JSON: refused by its Content-Type, before it is read.
    let n = answered(&app, "/v1/leads", &["content-type: text/plain", &site_header], "hello", "415", "unsupported_media_type").await;
    assert_eq!(n, TRIES);
    // A site that does not exist.
    let unknown = "X-Site-Id: 7b0c3c55-0a4e-4b8e-9d55-6f0f7f0e2a11";
    let n = answered(&app, "/v1/query", &["content-type: application/json", unknown], question, "404", "site_not_found").await;
    assert_eq!(n, TRIES);
}

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

#[tokio::test]
async fn a_body_that_stops_coming_is_answered_at_the_body_deadline() {
    let mut config = crate::helpers::test_config();
    config.server.body_timeout_secs = 1;
    let app = crate::helpers::spawn_app_with(config).await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let started = std::time::Instant::now();
    let half = futures_util::stream::once(async { Ok::<_, std::io::Error>(b"{\"email\": \"a@exa".to_vec()) }).chain(futures_util::stream::pending());
    let send = app
        .client
        .post(app.url("/v1/leads"))
        .header("X-Site-Id", site.id.to_string())
        .header("Content-Type", "application/json")
        .body(reqwest::Body::wrap_stream(half))
        .send();
    // Generous: five times the deadline, for a busy machine.
    let resp = tokio::time::timeout(std::time::Duration::from_secs(5), send).await.expect("answered by the body deadline").unwrap();
    let body = problem(resp, 400, "bad_request").await;
    assert!(body["detail"].as_str().unwrap().contains("did not arrive in time"), "{body}");
    assert!(started.elapsed() >= std::time::Duration::from_millis(900), "not before the deadline");
}
