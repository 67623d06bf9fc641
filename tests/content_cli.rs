//! Black-box tests of the content commands: the built binary writes verticals, pages, prices and rates
//! into a data directory, and a `sitebot serve` on the same directory answers with them.

use serde_json::{Value, json};

mod common;
use common::*;

const PAGES: &str = "\
- site: dental
  lang: en
  slug: home
  type: home
  title: An assistant that knows your practice
  description: Answers from your own pages.
  alternates:
    - lang: de
      slug: startseite
- site: dental
  lang: de
  slug: startseite
  type: home
  title: Ein Assistent, der Ihre Praxis kennt
  description: Antworten aus Ihren eigenen Seiten.
";

#[test]
fn content_commands_write_what_the_server_serves() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = run_ok(sitebot(d).args(["vertical", "create", "dental", "--name", "Dental practices", "--lang", "en", "--langs", "en,de", "--currency", "EUR"]));
    assert!(out.contains("vertical dental created"), "{out}");
    let again = run(sitebot(d).args(["vertical", "create", "dental", "--name", "Again", "--lang", "en", "--currency", "EUR"]));
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("vertical `dental` exists"));
    let shown: Value = serde_json::from_str(&run_ok(sitebot(d).args(["vertical", "show", "dental", "--json"]))).unwrap();
    assert_eq!((shown["defaultLang"].as_str(), shown["defaultCurrency"].as_str()), (Some("en"), Some("EUR")));
    assert_eq!(shown["langs"], json!(["en", "de"]));

    // Languages still used by pages cannot be dropped later (checked once pages exist, below).
    let out = run_ok(sitebot(d).args(["vertical", "update", "dental", "--name", "Dental clinics"]));
    assert!(out.contains("vertical dental updated: Dental clinics (languages en, de, currency EUR)"), "{out}");

    // A file with an error: the message names the file and the field, and nothing is imported.
    std::fs::write(d.join("pages.yaml"), PAGES).unwrap();
    let bad = d.join("broken.json");
    std::fs::write(
        &bad,
        json!([{"site": "dental", "lang": "de", "slug": "preise", "type": "pricing", "title": "Preise", "description": "", "published": true}]).to_string(),
    )
    .unwrap();
    let out = run(sitebot(d).args(["landing", "import"]).arg(d.join("pages.yaml")).arg(&bad).arg("--publish"));
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("{}: field `[0].description`: must not be empty", bad.display())), "{stderr}");
    assert!(stderr.contains("nothing was imported"), "{stderr}");
    let listed: Vec<Value> = serde_json::from_str(&run_ok(sitebot(d).args(["landing", "list", "--json"]))).unwrap();
    assert!(listed.is_empty(), "{listed:?}");

    let out = run_ok(sitebot(d).args(["landing", "import"]).arg(d.join("pages.yaml")));
    assert!(out.contains("created    draft      dental/en/home"), "{out}");
    run_ok(sitebot(d).args(["landing", "publish", "dental", "en", "home"]));
    let refused = run(sitebot(d).args(["vertical", "update", "dental", "--langs", "en"]));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("pages exist in de"), "{}", String::from_utf8_lossy(&refused.stderr));

    std::fs::write(
        d.join("pricing.json"),
        json!({"vertical": "dental", "currency": "EUR", "tiers": [
            {"id": "starter", "price": {"amountMinor": 2900, "interval": "month"}, "requestsPerMinute": 60,
             "i18n": {"en": {"name": "Starter", "features": ["Cited answers"]}, "de": {"name": "Starter"}}}
        ]})
        .to_string(),
    )
    .unwrap();
    let out = run_ok(sitebot(d).args(["pricing", "import"]).arg(d.join("pricing.json")));
    assert!(out.contains("1 tier(s) imported for dental"), "{out}");
    assert_eq!(run_ok(sitebot(d).args(["rates", "set", "JPY", "162.5"])).trim(), "1 EUR = 162.5 JPY");
    std::fs::write(d.join("rates.yaml"), "base: EUR\nrates:\n  USD: 1.08\n  GBP: \"0.85\"\n").unwrap();
    assert!(run_ok(sitebot(d).args(["rates", "import"]).arg(d.join("rates.yaml"))).contains("2 rate(s) against EUR imported"));
    std::fs::write(d.join("usd.yaml"), "base: USD\nrates:\n  JPY: 150\n").unwrap();
    let wrong_base = run(sitebot(d).args(["rates", "import"]).arg(d.join("usd.yaml")));
    assert!(String::from_utf8_lossy(&wrong_base.stderr).contains("usd.yaml: field `base`"), "{}", String::from_utf8_lossy(&wrong_base.stderr));
    let listed = run_ok(sitebot(d).args(["rates", "list"]));
    assert!(listed.contains("1 EUR = 0.85 GBP") && listed.contains("1 EUR = 162.5 JPY") && listed.contains("1 EUR = 1.08 USD"), "{listed}");
    let refused = run(sitebot(d).args(["rates", "set", "JPY", "1e3"]));
    assert!(!refused.status.success() && String::from_utf8_lossy(&refused.stderr).contains("is not a rate"));

    let server = serve(d);
    let c = client(d);
    let base = format!("https://127.0.0.1:{}", server.port);
    let page: Value = c.get(format!("{base}/v1/landing/dental/en/home")).send().unwrap().json().unwrap();
    assert_eq!(page["title"], "An assistant that knows your practice");
    assert_eq!(page["alternates"], json!([]), "the German page is still a draft");
    assert_eq!(c.get(format!("{base}/v1/landing/dental/de/startseite")).send().unwrap().status(), 404);
    let prices: Value = c.get(format!("{base}/v1/pricing/dental?currency=JPY")).send().unwrap().json().unwrap();
    assert_eq!(prices["tiers"][0]["price"]["amountMinor"], 4713);

    // While the server runs: a new rate and an unpublished page apply on the next request.
    run_ok(sitebot(d).args(["rates", "set", "JPY", "170"]));
    let prices: Value = c.get(format!("{base}/v1/pricing/dental?currency=JPY")).send().unwrap().json().unwrap();
    assert_eq!(prices["tiers"][0]["price"]["formatted"], "¥4,930");
    run_ok(sitebot(d).args(["landing", "unpublish", "dental", "en", "home"]));
    assert_eq!(c.get(format!("{base}/v1/landing/dental/en/home")).send().unwrap().status(), 404);
}
