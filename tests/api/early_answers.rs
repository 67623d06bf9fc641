//! Answers given before the body was read, and which bodies a JSON route takes.
//!
//! An error answered while the client was still sending its body used to be lost by Debian 12's curl
//! 7.88: on HTTP/2 the stream ended with `RST_STREAM(NO_ERROR)` and curl dropped the response it had
//! ("Stream error in the HTTP/2 framing layer"), on HTTP/1.1 the connection was reset under the client.
//! The server now reads and discards what is left of the body, up to `server.discard_body_bytes`, before
//! it answers, as nginx's lingering close does; these tests drive the Debian curl binary, and reqwest,
//! against the real server with bodies of every size the issue (#28) names.

use std::path::Path;

use futures_util::StreamExt;
use serde_json::{Value, json};
use sitebot::domain::Tier;

use crate::helpers::{TestApp, problem, spawn_app};

const TRIES: usize = 30;

/// What a curl call sends.
#[derive(Clone, Copy)]
enum Send<'a> {
    Text(&'a str),
    /// `--data-binary @file`.
    File(&'a Path),
    /// `-F question=... -F image=@file`: multipart/form-data.
    Form(&'a Path),
}

/// `--http2` or `--http1.1`, and the version curl's `%{http_version}` then reports.
#[derive(Clone, Copy, Debug)]
enum Proto {
    H2,
    H1,
}

impl Proto {
    fn flag(self) -> &'static str {
        match self {
            Proto::H2 => "--http2",
            Proto::H1 => "--http1.1",
        }
    }
    fn version(self) -> &'static str {
        match self {
            Proto::H2 => "2",
            Proto::H1 => "1.1",
        }
    }
}

/// One curl call: (exit ok, status, HTTP version, content type, body).
async fn curl(app: &TestApp, proto: Proto, path: &str, headers: &[&str], send: Send<'_>) -> (bool, String, String, String, String) {
    let cert = sitebot::http::tls::self_signed_paths(app.data_dir.path()).0;
    let mut cmd = tokio::process::Command::new("/usr/bin/curl");
    cmd.args(["-s", proto.flag(), "--max-time", "20", "--cacert"]).arg(&cert).args(["-X", "POST", "-w", "\n%{http_code} %{http_version} %{content_type}"]);
    for h in headers {
        cmd.args(["-H", h]);
    }
    match send {
        Send::Text(body) => cmd.args(["--data-binary", body]),
        Send::File(file) => cmd.arg("--data-binary").arg(format!("@{}", file.display())),
        Send::Form(file) => cmd.args(["-F", "question=What is in this picture?", "-F"]).arg(format!("image=@{};type=image/png", file.display())),
    };
    let out = cmd.arg(app.url(path)).output().await.expect("/usr/bin/curl runs (apt-get install curl)");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, meta) = text.rsplit_once('\n').unwrap_or(("", &text));
    let mut meta = meta.splitn(3, ' ');
    let mut next = || meta.next().unwrap_or("").to_owned();
    let (status, version, content_type) = (next(), next(), next());
    (out.status.success(), status, version, content_type, body.to_owned())
}

/// Sends the same request `TRIES` times and counts the tries that got the whole problem response.
async fn answered(app: &TestApp, proto: Proto, path: &str, headers: &[&str], send: Send<'_>, status: &str, code: &str) -> usize {
    let mut ok = 0;
    for i in 0..TRIES {
        let (exit_ok, got, version, content_type, text) = curl(app, proto, path, headers, send).await;
        let parsed: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if exit_ok && got == status && version == proto.version() && content_type == "application/problem+json" && parsed["code"] == code {
            ok += 1;
        } else {
            eprintln!("try {i}: exit ok {exit_ok}, status {got:?}, HTTP/{version}, {content_type:?}, body {text:?}");
        }
    }
    println!("curl {} {path} ({code}): {ok}/{TRIES} answered", proto.flag());
    ok
}

fn need_curl_with_http2() {
    assert!(
        std::process::Command::new("/usr/bin/curl").arg("--version").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("HTTP2")),
        "/usr/bin/curl with HTTP2 is needed"
    );
}

#[tokio::test]
async fn curl_over_http2_gets_every_early_error() {
    need_curl_with_http2();
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let site_header = format!("X-Site-Id: {}", site.id);
    let question = Send::Text(r#"{"question":"hi"}"#);

    // No X-Site-Id: refused before the body is read.
    let n = answered(&app, Proto::H2, "/v1/query", &["content-type: application/json"], question, "400", "site_id_required").await;
    assert_eq!(n, TRIES);
    // A body that is not JSON: refused by its Content-Type, before it is read.
    let n = answered(&app, Proto::H2, "/v1/leads", &["content-type: text/plain", &site_header], Send::Text("hello"), "415", "unsupported_media_type").await;
    assert_eq!(n, TRIES);
    // A site that does not exist.
    let unknown = "X-Site-Id: 7b0c3c55-0a4e-4b8e-9d55-6f0f7f0e2a11";
    let n = answered(&app, Proto::H2, "/v1/query", &["content-type: application/json", unknown], question, "404", "site_not_found").await;
    assert_eq!(n, TRIES);
}

/// A JSON body of `bytes` bytes: a question padded with spaces, valid JSON of that size.
fn json_file(dir: &Path, bytes: usize) -> std::path::PathBuf {
    let head = r#"{"question":"hi""#;
    let body = format!("{head}{}}}", " ".repeat(bytes - head.len() - 1));
    let path = dir.join(format!("body-{bytes}.json"));
    std::fs::write(&path, body).unwrap();
    path
}

#[tokio::test]
async fn curl_gets_the_early_error_for_large_bodies_over_http2_and_http1() {
    need_curl_with_http2();
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let site_header = format!("X-Site-Id: {}", site.id);
    let dir = tempfile::tempdir().unwrap();
    let (kb70, mb1) = (json_file(dir.path(), 70_000), json_file(dir.path(), 1_000_000));
    let image = dir.path().join("photo.png");
    std::fs::write(&image, vec![0x5a_u8; 11_000_000]).unwrap();
    let json = "content-type: application/json";

    for proto in [Proto::H2, Proto::H1] {
        for (name, file) in [("70 KB", &kb70), ("1 MB", &mb1)] {
            let n = answered(&app, proto, "/v1/query", &[json, &site_header], Send::File(file), "413", "payload_too_large").await;
            assert_eq!(n, TRIES, "{proto:?}: the 413 for a {name} JSON body");
        }
        let n = answered(&app, proto, "/v1/query", &[json], Send::File(&kb70), "400", "site_id_required").await;
        assert_eq!(n, TRIES, "{proto:?}: the 400 for a 70 KB body without X-Site-Id");
        let n = answered(&app, proto, "/v1/query/ask-multimodal", &[], Send::Form(&image), "413", "payload_too_large").await;
        assert_eq!(n, TRIES, "{proto:?}: the 413 for an 11 MB multipart body");
    }

    // A current client, on both protocols: reqwest negotiates HTTP/2 by ALPN, or is told HTTP/1.1.
    let http1 = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&std::fs::read(sitebot::http::tls::self_signed_paths(app.data_dir.path()).0).unwrap()).unwrap())
        .http1_only()
        .build()
        .unwrap();
    for (client, version) in [(&app.client, reqwest::Version::HTTP_2), (&http1, reqwest::Version::HTTP_11)] {
        for bytes in [70_000, 1_000_000] {
            for _ in 0..5 {
                let resp = client
                    .post(app.url("/v1/query"))
                    .header("X-Site-Id", site.id.to_string())
                    .header("Content-Type", "application/json")
                    .body(std::fs::read(json_file(dir.path(), bytes)).unwrap())
                    .send()
                    .await
                    .unwrap_or_else(|e| panic!("{version:?}, {bytes} bytes: {e}"));
                assert_eq!(resp.version(), version);
                problem(resp, 413, "payload_too_large").await;
            }
        }
    }
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
        "text/plain", "text/json", "application/json-seq", "application/jsonx", "application/x-json", "application/+json", "application/json+",
        "application/json; charset=utf-16", "application/json; charset=iso-8859-1", "application/json, text/plain", "application/json garbage",
        "multipart/form-data; boundary=x", "application/x-www-form-urlencoded", "",
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
