//! The cross-cutting rules every route follows: TLS only, problem+json errors, rate-limit headers,
//! request ids, tenancy and authentication, CORS, the 501 route, health and the OpenAPI document.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use sitebot::domain::Tier;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::helpers::{http1_client_for, new_site, problem, spawn_app, with_origins};

async fn post_lead(app: &crate::helpers::TestApp, site: Option<&str>, body: Value) -> reqwest::Response {
    let mut req = app.client.post(app.url("/v1/leads")).json(&body);
    if let Some(s) = site {
        req = req.header("X-Site-Id", s);
    }
    req.send().await.unwrap()
}

async fn plain_request(addr: std::net::SocketAddr, raw: &str) -> String {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(raw.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    // The server closes the connection after its answer: read_to_end returns.
    tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out)).await.expect("server closes the connection").unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test]
async fn plain_http_is_refused_and_the_connection_closed() {
    let app = spawn_app().await;
    for raw in [
        "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n".to_owned(),
        format!("POST /v1/leads HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 25\r\n\r\n{}", r#"{"email":"a@example.com"}"#),
    ] {
        let resp = plain_request(app.addr, &raw).await;
        assert!(resp.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{resp}");
        assert!(resp.contains("Content-Type: application/problem+json"));
        assert!(resp.contains("Connection: close"));
        assert!(resp.contains("X-Request-Id: req_") && resp.contains("X-RateLimit-Limit: 1200") && resp.contains("X-RateLimit-Policy: 600;w=60;burst=1200"));
        let body: Value = serde_json::from_str(resp.split("\r\n\r\n").nth(1).unwrap()).unwrap();
        assert_eq!(body["code"], "https_required");
        assert_eq!(body["status"], 403);
    }
    // Nothing was stored by the refused POST.
    let n = app.count("SELECT count(*) FROM leads", []);
    assert_eq!(n, 0);
    // TLS on the same port still works.
    assert_eq!(app.client.get(app.url("/healthz")).send().await.unwrap().status(), 200);
}

#[tokio::test]
async fn http2_and_http1_are_both_served_over_tls() {
    let app = spawn_app().await;
    let resp = app.client.get(app.url("/healthz")).send().await.unwrap();
    assert_eq!(resp.version(), reqwest::Version::HTTP_2, "ALPN should pick h2");
    let h1 = http1_client_for(&app.cert_pem);
    let resp = h1.get(app.url("/healthz")).send().await.unwrap();
    assert_eq!(resp.version(), reqwest::Version::HTTP_11);
    assert_eq!(resp.status(), 200);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["status"], "ok");
    let ready: Value = app.client.get(app.url("/readyz")).send().await.unwrap().json().await.unwrap();
    assert_eq!(ready["status"], "ready");
}

/// HTTP/2 connections send every response header unindexed with a `Date` of the server's own: a
/// connection must still carry responses
/// larger than a buffer, many at once, and more after a pause, each byte for byte what HTTP/1.1 gets.
#[tokio::test]
async fn one_http2_connection_carries_large_concurrent_and_resumed_exchanges() {
    let app = spawn_app().await;
    let h1 = http1_client_for(&app.cert_pem);
    let get = |client: &reqwest::Client, path: &str| client.get(app.url(path)).send();
    for path in ["/v1/openapi.json", "/v1/widget.js"] {
        let want = get(&h1, path).await.unwrap();
        assert_eq!(want.status(), 200, "{path}");
        let want = want.bytes().await.unwrap();
        assert!(want.len() > 48 * 1024, "{path} is {} bytes: not larger than the buffers", want.len());

        // At once on the HTTP/2 client (one connection, many streams), then again after a pause long
        // enough for the connection to have gone idle.
        for round in 0..2 {
            // A connection that stopped writing or reading would hang the client, not fail it.
            let answers = tokio::time::timeout(Duration::from_secs(60), futures_util::future::join_all((0..24).map(|_| get(&app.client, path))))
                .await
                .unwrap_or_else(|_| panic!("{path}, round {round}: 24 answers not in 60 s"));
            for resp in answers {
                let resp = resp.unwrap();
                assert_eq!(resp.version(), reqwest::Version::HTTP_2);
                assert_eq!(resp.status(), 200);
                let dates: Vec<_> = resp.headers().get_all("date").iter().collect();
                assert_eq!(dates.len(), 1, "{path}: one Date header");
                assert!(httpdate::parse_http_date(dates[0].to_str().unwrap()).is_ok(), "{path}: Date {:?}", dates[0]);
                assert!(resp.headers().get("x-request-id").is_some());
                let got = resp.bytes().await.unwrap();
                assert!(got == want, "{path}, round {round}: {} bytes over HTTP/2, {} over HTTP/1.1", got.len(), want.len());
            }
            tokio::time::sleep(Duration::from_millis(1500)).await;
        }
    }
    // A request body larger than the read buffer's first allocation, on the same connection: the whole
    // body is read and answered with the field that is wrong.
    let site = app.create_site(Tier::Pro).await.0;
    let long = "x".repeat(40_000);
    let resp = app.client.post(app.url("/v1/query")).header("X-Site-Id", site.id.to_string()).json(&json!({"question": long})).send().await.unwrap();
    assert_eq!(resp.version(), reqwest::Version::HTTP_2);
    let body = problem(resp, 422, "validation_failed").await;
    assert_eq!(body["errors"][0]["field"], "question", "{body}");
}

#[tokio::test]
async fn every_client_error_code_is_reachable() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Starter).await;
    let id = site.id.to_string();

    problem(post_lead(&app, None, json!({"email": "a@example.com"})).await, 400, "site_id_required").await;
    problem(post_lead(&app, Some("not-a-guid"), json!({"email": "a@example.com"})).await, 400, "invalid_site_id").await;
    problem(post_lead(&app, Some("7b0c3c55-0a4e-4b8e-9d55-6f0f7f0e2a11"), json!({"email": "a@example.com"})).await, 404, "site_not_found").await;

    let resp =
        app.client.post(app.url("/v1/leads")).header("X-Site-Id", &id).header("Content-Type", "application/json").body("{\"email\": ").send().await.unwrap();
    problem(resp, 400, "invalid_json").await;

    let resp = app.client.post(app.url("/v1/leads")).header("X-Site-Id", &id).header("Content-Type", "text/plain").body("hello").send().await.unwrap();
    problem(resp, 415, "unsupported_media_type").await;
    let resp = app.client.post(app.url("/v1/leads")).header("X-Site-Id", &id).body("{}").send().await.unwrap();
    problem(resp, 415, "unsupported_media_type").await;

    let body = problem(post_lead(&app, Some(&id), json!({"email": "not an address", "message": "x".repeat(5001)})).await, 422, "validation_failed").await;
    let fields: Vec<&str> = body["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
    assert_eq!(fields, vec!["email", "message"]);
    let body = problem(post_lead(&app, Some(&id), json!({"name": "Ada"})).await, 422, "validation_failed").await;
    assert_eq!(body["errors"][0]["field"], "email");

    let big = json!({"email": "a@example.com", "message": "x".repeat(70 * 1024)});
    problem(post_lead(&app, Some(&id), big).await, 413, "payload_too_large").await;
    // Without Content-Length (chunked), the limit holds while reading.
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = std::iter::once(Ok(b"{\"email\":\"a@example.com\",\"message\":\"".to_vec()))
        .chain((0..80).map(|_| Ok(vec![b'x'; 1024])))
        .chain(std::iter::once(Ok(b"\"}".to_vec())))
        .collect();
    let resp = app
        .client
        .post(app.url("/v1/leads"))
        .header("X-Site-Id", &id)
        .header("Content-Type", "application/json")
        .body(reqwest::Body::wrap_stream(futures_util::stream::iter(chunks)))
        .send()
        .await
        .unwrap();
    problem(resp, 413, "payload_too_large").await;

    problem(app.client.get(app.url("/v1/nothing-here")).send().await.unwrap(), 404, "not_found").await;
    problem(app.client.get(app.url("/v1/leads")).send().await.unwrap(), 405, "method_not_allowed").await;

    let resp = app.client.post(app.url("/v1/leads")).bearer_auth("sbt_unknown").json(&json!({"email": "a@example.com"})).send().await.unwrap();
    assert_eq!(resp.headers()["www-authenticate"], "Bearer error=\"invalid_token\"");
    problem(resp, 401, "invalid_token").await;

    let (guarded, _) = app.create_site_with(with_origins(new_site(Tier::Starter), &["https://shop.example.com"])).await;
    let resp = app
        .client
        .post(app.url("/v1/leads"))
        .header("X-Site-Id", guarded.id.to_string())
        .header("Origin", "https://evil.example.com")
        .json(&json!({"email": "a@example.com"}))
        .send()
        .await
        .unwrap();
    assert!(!resp.headers().contains_key("access-control-allow-origin"));
    problem(resp, 403, "origin_not_allowed").await;

    let store = app.state.store.clone();
    store.run(move |s| s.site(site.id).set_enabled(false)).await.unwrap();
    problem(post_lead(&app, Some(&id), json!({"email": "a@example.com"})).await, 403, "site_disabled").await;

    // Nothing above created a lead.
    let n = app.count("SELECT count(*) FROM leads", []);
    assert_eq!(n, 0);
}

#[tokio::test]
async fn a_server_error_reveals_nothing_internal() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Starter).await;
    // Break the schema underneath the running server, as a disk or operator mistake would.
    let db = app.data_dir.path().join("sitebot.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("PRAGMA foreign_keys = OFF; DROP TABLE leads;").unwrap();
    let resp = post_lead(&app, Some(&site.id.to_string()), json!({"email": "a@example.com"})).await;
    let body = problem(resp, 500, "internal").await;
    let text = body.to_string().to_lowercase();
    for leak in ["sql", "table", "leads", "sitebot.db", "/tmp", "no such", "error:"] {
        assert!(!text.contains(leak), "500 body leaks `{leak}`: {text}");
    }
}

async fn boom() -> poem::Result<&'static str> {
    panic!("boom at /var/lib/sitebot/secret.db")
}

#[tokio::test]
async fn a_panicking_handler_is_answered_500_with_the_edge_headers() {
    let app = crate::helpers::spawn_app_serving(crate::helpers::test_config(), |state| {
        sitebot::http::edge::Edge::new(poem::Route::new().at("/boom", poem::endpoint::make(|_| boom())), state)
    })
    .await;
    let resp = app.client.get(app.url("/boom")).header("X-Request-Id", "boom-1").send().await.expect("an answer, not a reset");
    let body = problem(resp, 500, "internal").await;
    assert_eq!(body["requestId"], "boom-1");
    let text = body.to_string();
    assert!(!text.contains("boom at") && !text.contains("secret"), "{text}");
    // The connection is still good for the next request.
    problem(app.client.get(app.url("/elsewhere")).send().await.unwrap(), 404, "not_found").await;
}

#[tokio::test]
async fn corrupt_stored_data_is_a_generic_500_not_a_validation_error() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Starter).await;
    crate::landing::create_vertical(&app, "dental", &["en", "de"], "EUR").await;
    let (pricing_file, rates_file) = (sitebot::content::demo::PRICING, ("rates.yaml", "base: EUR\nrates:\n  USD: 1.08\n"));
    let store = app.state.store.clone();
    tokio::task::spawn_blocking(move || {
        sitebot::content::import_pricing(&store, &sitebot::content::Source::new(pricing_file.0, pricing_file.1)).unwrap();
        let eur = sitebot::domain::Currency::parse("EUR").unwrap();
        sitebot::content::import_rates(&store, eur, &sitebot::content::Source::new(rates_file.0, rates_file.1)).unwrap();
    })
    .await
    .unwrap();
    assert_eq!(app.client.get(app.url("/v1/pricing/dental?currency=USD")).send().await.unwrap().status(), 200);
    // A rate and a site row this build cannot read back, as a bad restore or a hand edit would leave them.
    let db = app.db();
    db.execute("UPDATE currency_rates SET rate = 'one point oh eight' WHERE currency = 'USD'", []).unwrap();
    db.execute("UPDATE sites SET webhook_events = 'lead.lost' WHERE id = ?1", [site.id.to_string()]).unwrap();
    let priced = app.client.get(app.url("/v1/pricing/dental?currency=USD")).send().await.unwrap();
    let leads = post_lead(&app, Some(&site.id.to_string()), json!({"email": "a@example.com"})).await;
    for body in [problem(priced, 500, "internal").await, problem(leads, 500, "internal").await] {
        let text = body.to_string().to_lowercase();
        for leak in ["stored", "corrupt", "rate", "webhook_events", "lead.lost", "one point"] {
            assert!(!text.contains(leak), "500 body leaks `{leak}`: {text}");
        }
    }
}

#[tokio::test]
async fn request_ids_are_echoed_when_sane() {
    let app = spawn_app().await;
    let resp = app.client.get(app.url("/healthz")).header("X-Request-Id", "trace-42.a:b").send().await.unwrap();
    assert_eq!(resp.headers()["x-request-id"], "trace-42.a:b");
    let resp = app.client.get(app.url("/healthz")).header("X-Request-Id", "bad id with spaces").send().await.unwrap();
    assert!(resp.headers()["x-request-id"].to_str().unwrap().starts_with("req_"));
    let body = problem(app.client.get(app.url("/nope")).header("X-Request-Id", "abc").send().await.unwrap(), 404, "not_found").await;
    assert_eq!(body["requestId"], "abc");
}

fn rate(resp: &reqwest::Response) -> (u64, u64, u64) {
    let h = |n: &str| resp.headers()[n].to_str().unwrap().parse::<u64>().unwrap();
    (h("x-ratelimit-limit"), h("x-ratelimit-remaining"), h("x-ratelimit-reset"))
}

#[tokio::test]
async fn a_starter_site_gets_its_burst_then_one_request_a_second() {
    // One client may spend the whole budget here (`tests/api/fair_use.rs` covers the visitor's share).
    let mut config = crate::helpers::test_config();
    config.limits.visitor_share = 1.0;
    let app = crate::helpers::spawn_app_with(config).await;
    let (site, _) = app.create_site(Tier::Starter).await;
    let id = site.id.to_string();
    // Invalid bodies (422) count like any request and store nothing.
    for i in 0..120u64 {
        let resp = post_lead(&app, Some(&id), json!({})).await;
        assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY, "request {i}");
        let (limit, remaining, reset) = rate(&resp);
        assert_eq!((limit, remaining), (120, 119 - i), "request {i}");
        assert_eq!(resp.headers()["x-ratelimit-policy"], "60;w=60;burst=120");
        assert_eq!(reset, i + 1, "request {i}: bucket full again after (i + 1) s");
    }
    let refused = post_lead(&app, Some(&id), json!({"email": "a@example.com"})).await;
    assert_eq!(refused.headers()["retry-after"], "1");
    assert_eq!(rate(&refused).1, 0);
    problem(refused, 429, "rate_limited").await;

    app.clock.advance(Duration::from_secs(1));
    let ok = post_lead(&app, Some(&id), json!({"email": "a@example.com"})).await;
    assert_eq!(ok.status(), StatusCode::ACCEPTED);
    assert_eq!(rate(&ok).1, 0);
    problem(post_lead(&app, Some(&id), json!({"email": "a@example.com"})).await, 429, "rate_limited").await;
    app.clock.advance(Duration::from_millis(999));
    problem(post_lead(&app, Some(&id), json!({"email": "a@example.com"})).await, 429, "rate_limited").await;
    app.clock.advance(Duration::from_millis(1));
    assert_eq!(post_lead(&app, Some(&id), json!({"email": "a@example.com"})).await.status(), StatusCode::ACCEPTED);

    // Another site's budget is untouched, and tiers set the limit.
    let (pro, _) = app.create_site(Tier::Pro).await;
    let resp = post_lead(&app, Some(&pro.id.to_string()), json!({})).await;
    assert_eq!(rate(&resp), (1200, 1199, 1));
    let (ent, _) = app.create_site(Tier::Enterprise).await;
    let resp = post_lead(&app, Some(&ent.id.to_string()), json!({})).await;
    assert_eq!(rate(&resp).0, 12000);
}

#[tokio::test]
async fn routes_without_a_site_are_limited_per_client_ip() {
    let mut config = crate::helpers::test_config();
    config.limits.ip_per_minute = 5;
    let app = crate::helpers::spawn_app_with(config).await;
    for i in 0..10u64 {
        let resp = app.client.get(app.url("/healthz")).send().await.unwrap();
        assert_eq!(resp.status(), 200, "request {i}");
        assert_eq!(rate(&resp).0, 10, "the bucket holds twice the 5 a minute");
        assert_eq!(rate(&resp).1, 9 - i);
        assert_eq!(resp.headers()["x-ratelimit-policy"], "5;w=60;burst=10");
    }
    // Every route without a site shares the client's bucket: unknown routes and the 501 route too.
    let refused = app.client.get(app.url("/v1/unknown")).send().await.unwrap();
    assert!(refused.headers().contains_key("retry-after"));
    problem(refused, 429, "rate_limited").await;
    problem(app.client.post(app.url("/v1/query/ask-multimodal")).send().await.unwrap(), 429, "rate_limited").await;
    app.clock.advance(Duration::from_secs(12));
    assert_eq!(app.client.get(app.url("/healthz")).send().await.unwrap().status(), 200);
}

#[tokio::test]
async fn bearer_tokens_identify_pro_sites_and_are_refused_elsewhere() {
    let app = spawn_app().await;
    let (pro, creds) = app.create_site_with(with_origins(new_site(Tier::Pro), &["https://shop.example.com"])).await;
    let token = creds.bearer_token.unwrap();
    let (other, other_creds) = app.create_site(Tier::Enterprise).await;
    let (starter, starter_creds) = app.create_site(Tier::Starter).await;
    assert!(starter_creds.bearer_token.is_none());

    // The token alone identifies the site, and skips the Origin check (server-to-server).
    let resp = app
        .client
        .post(app.url("/v1/leads"))
        .bearer_auth(&token)
        .header("Origin", "https://elsewhere.example")
        .json(&json!({"email": "a@example.com"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 202);
    assert_eq!(rate(&resp).0, 1200);
    let resp = app
        .client
        .post(app.url("/v1/leads"))
        .bearer_auth(&token)
        .header("X-Site-Id", pro.id.to_string())
        .json(&json!({"email": "a@example.com"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 202);
    let stored = app.state.store.run(move |s| s.site(pro.id).leads().list(None)).await.unwrap();
    assert_eq!(stored.len(), 2);

    // Another site's token with this site's id: refused as a mismatch.
    let resp = app
        .client
        .post(app.url("/v1/leads"))
        .bearer_auth(other_creds.bearer_token.unwrap())
        .header("X-Site-Id", pro.id.to_string())
        .json(&json!({"email": "a@example.com"}))
        .send()
        .await
        .unwrap();
    problem(resp, 403, "token_site_mismatch").await;
    // A wrong token, or any token for a Starter site: invalid.
    let resp = app.client.post(app.url("/v1/leads")).bearer_auth(format!("{token}x")).json(&json!({"email": "a@example.com"})).send().await.unwrap();
    problem(resp, 401, "invalid_token").await;
    let resp = app
        .client
        .post(app.url("/v1/leads"))
        .bearer_auth(&token)
        .header("X-Site-Id", starter.id.to_string())
        .json(&json!({"email": "a@example.com"}))
        .send()
        .await
        .unwrap();
    problem(resp, 403, "token_site_mismatch").await;

    // Rotation revokes the old token at once.
    let id = pro.id;
    let new_token = app.state.store.run(move |s| s.site(id).rotate_token()).await.unwrap();
    let resp = app.client.post(app.url("/v1/leads")).bearer_auth(&token).json(&json!({"email": "a@example.com"})).send().await.unwrap();
    problem(resp, 401, "invalid_token").await;
    let resp = app.client.post(app.url("/v1/leads")).bearer_auth(&new_token).json(&json!({"email": "a@example.com"})).send().await.unwrap();
    assert_eq!(resp.status(), 202);
    let _ = other;
}

async fn preflight(app: &crate::helpers::TestApp, origin: &str) -> reqwest::Response {
    app.client
        .request(reqwest::Method::OPTIONS, app.url("/v1/leads"))
        .header("Origin", origin)
        .header("Access-Control-Request-Method", "POST")
        .header("Access-Control-Request-Headers", "content-type, x-site-id")
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn cors_preflight_and_requests_follow_allowed_origins() {
    let app = spawn_app().await;
    let (site, _) = app.create_site_with(with_origins(new_site(Tier::Starter), &["https://shop.example.com"])).await;

    let ok = preflight(&app, "https://shop.example.com").await;
    assert_eq!(ok.status(), StatusCode::NO_CONTENT);
    assert_eq!(ok.headers()["access-control-allow-origin"], "https://shop.example.com");
    let allow_headers = ok.headers()["access-control-allow-headers"].to_str().unwrap().to_lowercase();
    assert!(allow_headers.contains("x-site-id") && allow_headers.contains("content-type") && allow_headers.contains("authorization"));
    assert!(ok.headers()["access-control-allow-methods"].to_str().unwrap().contains("POST"));
    assert!(ok.headers().contains_key("x-ratelimit-limit") && ok.headers().contains_key("x-request-id"));

    let refused = preflight(&app, "https://evil.example.com").await;
    assert!(!refused.headers().contains_key("access-control-allow-origin"));
    problem(refused, 403, "origin_not_allowed").await;

    let resp = app
        .client
        .post(app.url("/v1/leads"))
        .header("X-Site-Id", site.id.to_string())
        .header("Origin", "https://shop.example.com")
        .json(&json!({"email": "a@example.com"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 202);
    assert_eq!(resp.headers()["access-control-allow-origin"], "https://shop.example.com");
    let exposed = resp.headers()["access-control-expose-headers"].to_str().unwrap();
    assert!(exposed.contains("X-RateLimit-Remaining") && exposed.contains("X-Request-Id"));

    // A site with no list accepts any origin, which opens preflights for every origin.
    app.create_site(Tier::Starter).await;
    assert_eq!(preflight(&app, "https://evil.example.com").await.status(), StatusCode::NO_CONTENT);
}

#[tokio::test]
async fn the_multimodal_route_answers_501_with_the_expected_shape() {
    let app = spawn_app().await;
    for resp in [
        app.client.post(app.url("/v1/query/ask-multimodal")).header("Content-Type", "multipart/form-data; boundary=x").body("--x--\r\n").send().await.unwrap(),
        app.client.post(app.url("/v1/query/ask-multimodal")).json(&json!({"question": "hi"})).send().await.unwrap(),
    ] {
        let body = problem(resp, 501, "not_implemented").await;
        let expected = &body["expected"];
        assert_eq!(expected["fallback"], "/v1/query");
        assert_eq!(expected["plannedFor"], "2026-Q4");
        let parts = expected["parts"].as_array().unwrap();
        assert_eq!(parts[0]["name"], "question");
        assert_eq!(parts[1]["name"], "image");
        assert_eq!(parts[1]["contentTypes"], json!(["image/png", "image/jpeg", "image/webp"]));
        assert_eq!(parts[1]["maxBytes"], 10 * 1024 * 1024);
        assert_eq!(expected["response"]["sameAs"], "POST /v1/query");
    }
    // Only POST reaches the 501; other methods are 405 naming it.
    let get = app.client.get(app.url("/v1/query/ask-multimodal")).send().await.unwrap();
    assert_eq!(get.headers()["allow"], "POST");
    problem(get, 405, "method_not_allowed").await;
    let put = app.client.put(app.url("/v1/query")).send().await.unwrap();
    assert_eq!(put.headers()["allow"], "POST");
    let post = app.client.post(app.url("/healthz")).send().await.unwrap();
    assert_eq!(post.headers()["allow"], "GET, HEAD");
    problem(post, 405, "method_not_allowed").await;
}

/// Every `.at("...")` in the route table, as OpenAPI paths.
fn routed_paths() -> Vec<String> {
    let src = include_str!("../../src/api/mod.rs");
    src.split(".at(\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap())
        .map(|p| p.split('/').map(|seg| seg.strip_prefix(':').map(|n| format!("{{{n}}}")).unwrap_or_else(|| seg.to_owned())).collect::<Vec<_>>().join("/"))
        .collect()
}

#[tokio::test]
async fn the_openapi_document_is_served_complete_and_valid() {
    let app = spawn_app().await;
    let resp = app.client.get(app.url("/v1/openapi.json")).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let doc: Value = resp.json().await.unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    let documented: Vec<&String> = doc["paths"].as_object().unwrap().keys().collect();
    let routed = routed_paths();
    assert!(routed.len() >= 5, "{routed:?}");
    for p in &routed {
        assert!(documented.contains(&p), "route {p} is not in the OpenAPI document");
    }
    for d in &documented {
        assert!(routed.iter().any(|p| p == *d), "documented path {d} is not routed");
    }
    // An independent validator (openapi-spec-validator, installed by install.sh) must accept it.
    let file = app.data_dir.path().join("openapi.json");
    std::fs::write(&file, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let out = std::process::Command::new("python3")
        .args(["-m", "openapi_spec_validator", "--schema", "3.1"])
        .arg(&file)
        .output()
        .expect("python3 runs (install.sh --deps-only installs openapi-spec-validator)");
    assert!(
        out.status.success(),
        "openapi-spec-validator refused the document:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
