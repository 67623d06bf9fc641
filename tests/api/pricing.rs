//! `GET /v1/pricing/{vertical}`: language and currency negotiation, conversion through stored rates,
//! localized formatting, and CLI changes visible on the next request.

use serde_json::{Value, json};
use sitebot::content::money::Rate;
use sitebot::content::{self, ContentError, Source};
use sitebot::domain::{Currency, Tier};

use crate::helpers::{TestApp, new_site, problem, spawn_app};
use crate::landing::create_vertical;

fn sheet() -> Value {
    json!({
        "vertical": "dental",
        "currency": "EUR",
        "tiers": [
            {"id": "starter", "price": {"amountMinor": 2900, "interval": "month"}, "requestsPerMinute": 60,
             "i18n": {"en": {"name": "Starter", "description": "For one practice.", "features": ["Cited answers"]},
                      "de": {"name": "Starter", "description": "Für eine Praxis.", "features": ["Antworten mit Quelle"]}}},
            {"id": "pro", "price": {"amountMinor": 7900, "interval": "month"}, "requestsPerMinute": 600, "highlighted": true,
             "i18n": {"en": {"name": "Professional", "description": "For busy practices.", "features": ["Bearer token", "Streaming"]},
                      "de": {"name": "Profi", "description": "Für ausgelastete Praxen.", "features": ["Bearer-Token", "Streaming"]}}}
        ]
    })
}

async fn import_sheet(app: &TestApp, text: String) -> Result<(String, usize), ContentError> {
    let store = app.state.store.clone();
    tokio::task::spawn_blocking(move || content::import_pricing(&store, &Source::new("pricing.json", text))).await.unwrap()
}

/// `sitebot rates set CUR RATE`.
async fn set_rate(app: &TestApp, cur: &str, rate: &str) {
    let store = app.state.store.clone();
    let (cur, rate) = (Currency::parse(cur).unwrap(), Rate::parse(rate).unwrap());
    tokio::task::spawn_blocking(move || content::set_rate(&store, Currency::parse("EUR").unwrap(), cur, rate)).await.unwrap().unwrap();
}

async fn setup() -> TestApp {
    let app = spawn_app().await;
    create_vertical(&app, "dental", &["en", "de"], "EUR").await;
    assert_eq!(import_sheet(&app, sheet().to_string()).await.unwrap(), ("dental".to_owned(), 2));
    set_rate(&app, "USD", "1.08").await;
    set_rate(&app, "JPY", "162.5").await;
    app
}

async fn pricing(app: &TestApp, query: &str, headers: &[(&str, &str)]) -> reqwest::Response {
    let mut req = app.client.get(app.url(&format!("/v1/pricing/dental{query}")));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    req.send().await.unwrap()
}

async fn ok(resp: reqwest::Response, lang: &str) -> Value {
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-language"], lang);
    let vary: Vec<&str> = resp.headers().get_all("vary").iter().map(|v| v.to_str().unwrap()).collect();
    assert!(vary.contains(&"Accept-Language, X-Site-Id"), "{vary:?}");
    assert!(resp.headers().contains_key("etag"));
    resp.json().await.unwrap()
}

#[tokio::test]
async fn defaults_are_the_verticals_language_and_currency() {
    let app = setup().await;
    let body = ok(pricing(&app, "", &[]).await, "en").await;
    assert_eq!((body["vertical"].as_str(), body["lang"].as_str(), body["currency"].as_str()), (Some("dental"), Some("en"), Some("EUR")));
    assert_eq!(
        body["tiers"][0],
        json!({"id": "starter", "name": "Starter", "description": "For one practice.",
               "price": {"amountMinor": 2900, "currency": "EUR", "interval": "month", "formatted": "€29.00"},
               "requestsPerMinute": 60, "features": ["Cited answers"], "highlighted": false})
    );
    assert_eq!(body["tiers"][1]["name"], "Professional");
    assert_eq!(body["tiers"][1]["highlighted"], true);
}

#[tokio::test]
async fn accept_language_q_values_pick_the_offered_language() {
    let app = setup().await;
    let body = ok(pricing(&app, "", &[("Accept-Language", "de-CH;q=0.9, en;q=0.5")]).await, "de").await;
    assert_eq!(body["lang"], "de");
    assert_eq!(body["tiers"][1]["name"], "Profi");
    assert_eq!(body["tiers"][0]["features"], json!(["Antworten mit Quelle"]));
    assert_eq!(body["tiers"][0]["price"]["formatted"], "29,00\u{a0}€");
    // A higher q for English wins; an unoffered language falls back to the default.
    ok(pricing(&app, "", &[("Accept-Language", "de;q=0.4, en-GB;q=0.8")]).await, "en").await;
    ok(pricing(&app, "", &[("Accept-Language", "fr-FR, it;q=0.9")]).await, "en").await;
    // ?lang= beats the header.
    let body = ok(pricing(&app, "?lang=en", &[("Accept-Language", "de")]).await, "en").await;
    assert_eq!(body["tiers"][1]["name"], "Professional");
    let err = problem(pricing(&app, "?lang=fr", &[]).await, 422, "validation_failed").await;
    assert_eq!(err["errors"][0]["field"], "lang");
    let err = problem(pricing(&app, "?lang=not_a_tag!", &[]).await, 422, "validation_failed").await;
    assert_eq!(err["errors"][0]["field"], "lang");
}

#[tokio::test]
async fn currency_comes_from_the_site_then_the_query_then_the_vertical() {
    let app = setup().await;
    let mut usd_site = new_site(Tier::Starter);
    usd_site.currency = Currency::parse("USD").unwrap();
    let (site, _) = app.create_site_with(usd_site).await;

    // ?currency=JPY: 29.00 EUR x 162.5 = 4712.5 yen, rounded half up, no minor unit.
    let body = ok(pricing(&app, "?currency=jpy", &[]).await, "en").await;
    assert_eq!(body["currency"], "JPY");
    assert_eq!(body["tiers"][0]["price"], json!({"amountMinor": 4713, "currency": "JPY", "interval": "month", "formatted": "¥4,713"}));
    assert_eq!(body["tiers"][1]["price"]["amountMinor"], 12838); // 7900 x 1.625 = 12837.5
    let body = ok(pricing(&app, "?currency=JPY", &[("Accept-Language", "de")]).await, "de").await;
    assert_eq!(body["tiers"][0]["price"]["formatted"], "4.713\u{a0}¥");

    // The site's currency wins over the query.
    let id = site.id.to_string();
    let body = ok(pricing(&app, "?currency=JPY", &[("X-Site-Id", &id)]).await, "en").await;
    assert_eq!(body["currency"], "USD");
    assert_eq!(body["tiers"][0]["price"]["amountMinor"], 3132);
    assert_eq!(body["tiers"][0]["price"]["formatted"], "$31.32");

    // Bad site ids are the tenant problems of API.md.
    problem(pricing(&app, "", &[("X-Site-Id", "not-a-guid")]).await, 400, "invalid_site_id").await;
    problem(pricing(&app, "", &[("X-Site-Id", "3f2b6c1e-8d4a-4f7e-9b1a-2c3d4e5f6a7b")]).await, 404, "site_not_found").await;

    // Unknown currency, and a known one without a rate.
    let err = problem(pricing(&app, "?currency=XYZ", &[]).await, 422, "validation_failed").await;
    assert_eq!(err["errors"][0]["field"], "currency");
    let err = problem(pricing(&app, "?currency=CHF", &[]).await, 422, "validation_failed").await;
    assert_eq!(err["errors"][0]["field"], "currency");
    assert!(err["errors"][0]["message"].as_str().unwrap().contains("no exchange rate for CHF"), "{err}");

    problem(app.client.get(app.url("/v1/pricing/unknown")).send().await.unwrap(), 404, "not_found").await;
    problem(app.client.get(app.url("/v1/pricing/Not%20A%20Slug")).send().await.unwrap(), 404, "not_found").await;
}

#[tokio::test]
async fn cli_changes_show_on_the_next_request() {
    let app = setup().await;
    let first = pricing(&app, "?currency=JPY", &[]).await;
    let etag = first.headers()["etag"].to_str().unwrap().to_owned();
    assert_eq!(first.headers()["cache-control"], "public, no-cache");
    let body: Value = first.json().await.unwrap();
    assert_eq!(body["tiers"][0]["price"]["amountMinor"], 4713);
    let same = app.client.get(app.url("/v1/pricing/dental?currency=JPY")).header("If-None-Match", &etag).send().await.unwrap();
    assert_eq!(same.status(), 304);

    set_rate(&app, "JPY", "170").await;
    let resp = app.client.get(app.url("/v1/pricing/dental?currency=JPY")).header("If-None-Match", &etag).send().await.unwrap();
    assert_eq!(resp.status(), 200, "a rate change must not revalidate as unchanged");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["tiers"][0]["price"]["amountMinor"], 4930);

    // A new price list replaces the old one, tiers removed included.
    let mut s = sheet();
    s["tiers"][0]["price"]["amountMinor"] = json!(3500);
    s["tiers"].as_array_mut().unwrap().pop();
    import_sheet(&app, s.to_string()).await.unwrap();
    let body = ok(pricing(&app, "", &[]).await, "en").await;
    assert_eq!(body["tiers"].as_array().unwrap().len(), 1);
    assert_eq!(body["tiers"][0]["price"]["formatted"], "€35.00");
}

#[tokio::test]
async fn pricing_files_are_validated_field_by_field() {
    let app = spawn_app().await;
    create_vertical(&app, "dental", &["en", "de"], "EUR").await;
    let mut s = sheet();
    s["tiers"][1]["i18n"] = json!({"de": {"name": "Profi"}});
    s["tiers"][0]["price"]["interval"] = json!("week");
    let Err(ContentError::Invalid(errors)) = import_sheet(&app, s.to_string()).await else { panic!("expected errors") };
    assert_eq!(errors[0].field, "tiers[0].price.interval", "{errors:?}");
    let mut s = sheet();
    s["tiers"][1]["i18n"] = json!({"de": {"name": "Profi"}});
    s["currency"] = json!("EURO");
    let Err(ContentError::Invalid(errors)) = import_sheet(&app, s.to_string()).await else { panic!("expected errors") };
    let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["currency", "tiers[1].i18n"], "{errors:?}");
    assert!(errors[1].message.contains("default language `en`"));
    // Nothing was stored: the vertical has no prices.
    problem(app.client.get(app.url("/v1/pricing/dental")).send().await.unwrap(), 404, "not_found").await;
}
