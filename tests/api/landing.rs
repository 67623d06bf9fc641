//! `GET /v1/landing/{site}/{lang}/{slug}` and `/sitemap-slugs`: content imported through the code the
//! CLI runs, then fetched over TLS as a renderer would: drafts never show, ETags revalidate to 304.

use serde_json::{Value, json};
use sitebot::content::{self, ContentError, PageOutcome, Source};
use sitebot::domain::{Currency, Lang, Slug};
use sitebot::store::content::{Change, NewVertical};

use crate::helpers::{TestApp, problem, spawn_app};

/// Creates vertical `slug` offering `langs` (the first is the default), priced in `currency`.
pub async fn create_vertical(app: &TestApp, slug: &str, langs: &[&str], currency: &str) {
    let new = NewVertical {
        slug: Slug::vertical(slug).unwrap(),
        name: format!("{slug} practices"),
        default_lang: Lang::parse(langs[0]).unwrap(),
        default_currency: Currency::parse(currency).unwrap(),
        langs: langs.iter().map(|l| Lang::parse(l).unwrap()).collect(),
    };
    app.state.store.run(move |s| s.content().create_vertical(new)).await.unwrap();
}

/// `sitebot landing import` on in-memory files.
pub async fn import(app: &TestApp, files: &[(&str, String)], publish: bool) -> Result<Vec<PageOutcome>, ContentError> {
    let store = app.state.store.clone();
    let sources: Vec<Source> = files.iter().map(|(n, t)| Source::new(*n, t.clone())).collect();
    tokio::task::spawn_blocking(move || content::import_landing(&store, &sources, publish)).await.unwrap()
}

/// `sitebot landing publish|unpublish`.
async fn set_published(app: &TestApp, lang: &str, slug: &str, published: bool) -> Change {
    let (vertical, lang, slug) = (Slug::vertical("dental").unwrap(), Lang::parse(lang).unwrap(), Slug::parse(slug, 128).unwrap());
    app.state.store.run(move |s| s.content().set_published(&vertical, &lang, &slug, published)).await.unwrap()
}

fn page(lang: &str, slug: &str, page_type: &str, alternates: Value) -> Value {
    json!({
        "site": "dental", "lang": lang, "slug": slug, "type": page_type,
        "title": format!("Title of {slug}"), "description": format!("About {slug}."),
        "faq": [{"question": "Do you book appointments?", "answer": "We collect the request; the practice confirms."}],
        "features": [{"title": "Cited answers", "description": "From your own pages.", "icon": "book-open"}],
        "stats": [{"label": "Available", "value": "24/7"}],
        "alternates": alternates
    })
}

async fn get(app: &TestApp, path: &str) -> reqwest::Response {
    app.client.get(app.url(path)).send().await.unwrap()
}

#[tokio::test]
async fn only_published_pages_are_served_and_drafts_never_leak() {
    let app = spawn_app().await;
    create_vertical(&app, "dental", &["en", "de"], "EUR").await;
    let yaml = "- site: dental\n  lang: en\n  slug: ai-receptionist\n  type: feature\n  title: An AI receptionist\n  description: Answers after hours.\n  \
                faq:\n    - question: Does it book?\n      answer: It collects the request.\n  alternates:\n    - lang: de\n      slug: ki-rezeption\n\
                - site: dental\n  lang: de\n  slug: ki-rezeption\n  type: feature\n  title: Eine KI-Rezeption\n  description: Antwortet nach Feierabend.\n  \
                alternates:\n    - lang: en\n      slug: ai-receptionist\n";
    let out = import(&app, &[("pages.yaml", yaml.to_owned())], false).await.unwrap();
    assert_eq!(out.len(), 2);
    assert!(out.iter().all(|o| o.change == Change::Created && !o.published));

    // Drafts: 404 exactly like an unknown page.
    let body = problem(get(&app, "/v1/landing/dental/en/ai-receptionist").await, 404, "not_found").await;
    let unknown = problem(get(&app, "/v1/landing/dental/en/no-such-page").await, 404, "not_found").await;
    assert_eq!(body["detail"], unknown["detail"]);

    // Published, with its draft alternate left out.
    assert_eq!(set_published(&app, "en", "ai-receptionist", true).await, Change::Updated);
    let resp = get(&app, "/v1/landing/dental/en/ai-receptionist").await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["cache-control"], "public, max-age=300");
    let p: Value = resp.json().await.unwrap();
    assert_eq!(p["site"], "dental");
    assert_eq!(p["lang"], "en");
    assert_eq!(p["slug"], "ai-receptionist");
    assert_eq!(p["type"], "feature");
    assert_eq!(p["title"], "An AI receptionist");
    assert_eq!(p["faq"], json!([{"question": "Does it book?", "answer": "It collects the request."}]));
    assert_eq!(p["features"], json!([]));
    assert_eq!(p["alternates"], json!([]), "a draft alternate must not leak");
    assert!(p["updatedAt"].as_str().unwrap().ends_with('Z'));

    // Once the German page is out, each lists the other.
    set_published(&app, "de", "ki-rezeption", true).await;
    let p: Value = get(&app, "/v1/landing/dental/en/ai-receptionist").await.json().await.unwrap();
    assert_eq!(p["alternates"], json!([{"lang": "de", "slug": "ki-rezeption"}]));
    let p: Value = get(&app, "/v1/landing/dental/de/ki-rezeption").await.json().await.unwrap();
    assert_eq!(p["alternates"], json!([{"lang": "en", "slug": "ai-receptionist"}]));

    // Re-import updates in place and keeps the published state the file now gives.
    let changed = yaml.replace("An AI receptionist", "An AI receptionist for dental practices");
    let out = import(&app, &[("pages.yaml", changed.clone())], true).await.unwrap();
    assert_eq!(out.iter().map(|o| o.change).collect::<Vec<_>>(), [Change::Updated, Change::Unchanged]);
    let p: Value = get(&app, "/v1/landing/dental/en/ai-receptionist").await.json().await.unwrap();
    assert_eq!(p["title"], "An AI receptionist for dental practices");
    let again = import(&app, &[("pages.yaml", changed)], true).await.unwrap();
    assert!(again.iter().all(|o| o.change == Change::Unchanged));

    // Withdrawn: 404 again, and the German page stops listing it.
    set_published(&app, "en", "ai-receptionist", false).await;
    problem(get(&app, "/v1/landing/dental/en/ai-receptionist").await, 404, "not_found").await;
    let p: Value = get(&app, "/v1/landing/dental/de/ki-rezeption").await.json().await.unwrap();
    assert_eq!(p["alternates"], json!([]));
}

#[tokio::test]
async fn malformed_addresses_are_404_without_a_lookup() {
    let app = spawn_app().await;
    create_vertical(&app, "dental", &["en"], "EUR").await;
    import(&app, &[("p.json", page("en", "home", "home", json!([])).to_string())], true).await.unwrap();
    assert_eq!(get(&app, "/v1/landing/dental/en/home").await.status(), 200);
    let long = format!("/v1/landing/dental/en/{}", "a".repeat(129));
    for path in ["/v1/landing/Dental/en/home", "/v1/landing/dental/english!/home", "/v1/landing/dental/en/Home", "/v1/landing/dental/en/ho%20me", &long] {
        problem(get(&app, path).await, 404, "not_found").await;
    }
    problem(get(&app, "/v1/landing/other/en/home").await, 404, "not_found").await;
}

#[tokio::test]
async fn etags_revalidate_to_304_until_the_page_changes() {
    let app = spawn_app().await;
    create_vertical(&app, "dental", &["en"], "EUR").await;
    import(&app, &[("p.json", page("en", "home", "home", json!([])).to_string())], true).await.unwrap();
    let resp = get(&app, "/v1/landing/dental/en/home").await;
    assert_eq!(resp.status(), 200);
    let etag = resp.headers()["etag"].to_str().unwrap().to_owned();
    let last_modified = resp.headers()["last-modified"].to_str().unwrap().to_owned();
    assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");
    assert!(last_modified.ends_with(" GMT"), "{last_modified}");

    let conditional = |value: String| {
        let req = app.client.get(app.url("/v1/landing/dental/en/home")).header("If-None-Match", value);
        async move { req.send().await.unwrap() }
    };
    for value in [etag.clone(), format!("W/{etag}"), format!("\"stale\", {etag}"), "*".to_owned()] {
        let resp = conditional(value.clone()).await;
        assert_eq!(resp.status(), 304, "If-None-Match: {value}");
        assert_eq!(resp.headers()["etag"], etag.as_str());
        assert_eq!(resp.headers()["cache-control"], "public, max-age=300");
        assert!(resp.headers().contains_key("x-ratelimit-remaining"));
        assert!(resp.bytes().await.unwrap().is_empty());
    }
    assert_eq!(conditional("\"stale\"".into()).await.status(), 200);

    // A content change gives a new tag, and the old one no longer matches.
    let mut changed = page("en", "home", "home", json!([]));
    changed["title"] = json!("A new title");
    import(&app, &[("p.json", changed.to_string())], true).await.unwrap();
    let resp = conditional(etag.clone()).await;
    assert_eq!(resp.status(), 200);
    assert_ne!(resp.headers()["etag"], etag.as_str());
    let p: Value = resp.json().await.unwrap();
    assert_eq!(p["title"], "A new title");
}

#[tokio::test]
async fn the_sitemap_lists_published_pages_sorted_by_lang_type_slug() {
    let app = spawn_app().await;
    create_vertical(&app, "dental", &["en", "de"], "EUR").await;
    create_vertical(&app, "legal", &["en"], "EUR").await;
    let mut pages = vec![
        page("en", "pricing", "pricing", json!([])),
        page("en", "home", "home", json!([])),
        page("de", "preise", "pricing", json!([])),
        page("en", "ai-receptionist", "feature", json!([])),
        page("en", "appointment-requests", "feature", json!([])),
        page("de", "startseite", "home", json!([])),
        page("en", "faq", "faq", json!([])),
    ];
    let mut draft = page("en", "secret-launch", "article", json!([]));
    draft["published"] = json!(false);
    pages.push(draft);
    for p in pages.iter_mut().take(7) {
        p["published"] = json!(true);
    }
    let mut other = page("en", "home", "home", json!([]));
    other["site"] = json!("legal");
    other["published"] = json!(true);
    import(&app, &[("dental.json", Value::Array(pages).to_string()), ("legal.json", other.to_string())], false).await.unwrap();

    let resp = get(&app, "/v1/landing/dental/sitemap-slugs").await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["cache-control"], "public, max-age=300");
    let etag = resp.headers()["etag"].to_str().unwrap().to_owned();
    let entries: Vec<Value> = resp.json().await.unwrap();
    let got: Vec<(String, String, String)> =
        entries.iter().map(|e| (e["lang"].as_str().unwrap().into(), e["type"].as_str().unwrap().into(), e["slug"].as_str().unwrap().into())).collect();
    let want = [
        ("de", "home", "startseite"),
        ("de", "pricing", "preise"),
        ("en", "faq", "faq"),
        ("en", "feature", "ai-receptionist"),
        ("en", "feature", "appointment-requests"),
        ("en", "home", "home"),
        ("en", "pricing", "pricing"),
    ];
    assert_eq!(got, want.map(|(a, b, c)| (a.to_owned(), b.to_owned(), c.to_owned())));
    assert!(entries.iter().all(|e| e["updatedAt"].is_string() && e.as_object().unwrap().len() == 4));

    let resp = app.client.get(app.url("/v1/landing/dental/sitemap-slugs")).header("If-None-Match", &etag).send().await.unwrap();
    assert_eq!(resp.status(), 304);
    // Publishing the draft changes the list and its tag.
    set_published(&app, "en", "secret-launch", true).await;
    let resp = app.client.get(app.url("/v1/landing/dental/sitemap-slugs")).header("If-None-Match", &etag).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let entries: Vec<Value> = resp.json().await.unwrap();
    assert_eq!(entries.len(), 8);
    assert_eq!((entries[2]["lang"].as_str(), entries[2]["type"].as_str(), entries[2]["slug"].as_str()), (Some("en"), Some("article"), Some("secret-launch")));

    problem(get(&app, "/v1/landing/unknown/sitemap-slugs").await, 404, "not_found").await;
    let empty: Vec<Value> = {
        create_vertical(&app, "empty", &["en"], "EUR").await;
        get(&app, "/v1/landing/empty/sitemap-slugs").await.json().await.unwrap()
    };
    assert!(empty.is_empty());
}

#[tokio::test]
async fn an_invalid_file_names_file_and_field_and_imports_nothing() {
    let app = spawn_app().await;
    create_vertical(&app, "dental", &["en", "de"], "EUR").await;
    let good = page("en", "home", "home", json!([]));
    let mut bad_slug = page("en", "Bad Slug", "feature", json!([]));
    bad_slug["published"] = json!(true);
    let mut bad_faq = page("de", "fragen", "faq", json!([{"lang": "fr", "slug": "questions"}]));
    bad_faq["faq"] = json!([{"question": "Wie?"}]);
    let Err(ContentError::Invalid(errors)) =
        import(&app, &[("good.json", good.to_string()), ("bad.json", json!([page("en", "ok", "faq", json!([])), bad_slug]).to_string())], true).await
    else {
        panic!("expected a validation failure");
    };
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!((errors[0].file.as_str(), errors[0].field.as_str()), ("bad.json", "[1].slug"));
    assert!(errors[0].to_string().starts_with("bad.json: field `[1].slug`: `Bad Slug` is not a slug"), "{}", errors[0]);
    // All or nothing: the valid pages of both files were not imported either.
    problem(get(&app, "/v1/landing/dental/en/home").await, 404, "not_found").await;
    problem(get(&app, "/v1/landing/dental/en/ok").await, 404, "not_found").await;

    // Serde-level errors carry the path too, in YAML as in JSON.
    let Err(ContentError::Invalid(errors)) = import(&app, &[("de.json", bad_faq.to_string())], false).await else { panic!() };
    assert_eq!(errors[0].field, "faq[0]");
    assert!(errors[0].message.contains("missing field `answer`"), "{errors:?}");
    let yaml = "site: dental\nlang: fr\nslug: accueil\ntype: homepage\ntitle: x\ndescription: y\n";
    let Err(ContentError::Invalid(errors)) = import(&app, &[("fr.yaml", yaml.to_owned())], false).await else { panic!() };
    assert_eq!((errors[0].file.as_str(), errors[0].field.as_str()), ("fr.yaml", "type"));
    let yaml = "site: dental\nlang: fr\nslug: accueil\ntype: home\ntitle: x\ndescription: y\n";
    let Err(ContentError::Invalid(errors)) = import(&app, &[("fr.yaml", yaml.to_owned())], false).await else { panic!() };
    assert_eq!(errors[0].field, "lang");
    assert!(errors[0].message.contains("offers en, de"), "{errors:?}");
}

#[tokio::test]
async fn the_demo_content_loads_once_and_its_alternates_all_resolve() {
    let app = spawn_app().await;
    let store = app.state.store.clone();
    let eur = Currency::parse("EUR").unwrap();
    let s = store.clone();
    assert!(tokio::task::spawn_blocking(move || content::demo::load(&s, eur)).await.unwrap().unwrap());
    // A later run leaves the operator's changes alone.
    set_published(&app, "en", "faq", false).await;
    let s = store.clone();
    assert!(!tokio::task::spawn_blocking(move || content::demo::load(&s, eur)).await.unwrap().unwrap());
    problem(get(&app, "/v1/landing/dental/en/faq").await, 404, "not_found").await;
    set_published(&app, "en", "faq", true).await;

    let entries: Vec<Value> = get(&app, "/v1/landing/dental/sitemap-slugs").await.json().await.unwrap();
    let langs: std::collections::BTreeSet<&str> = entries.iter().map(|e| e["lang"].as_str().unwrap()).collect();
    assert_eq!(langs.into_iter().collect::<Vec<_>>(), ["de", "en"]);
    assert!(entries.len() >= 10, "{entries:?}");
    for types in ["home", "feature", "use-case", "faq", "pricing"] {
        assert!(entries.iter().filter(|e| e["type"] == types).count() >= 2, "a {types} page in each language");
    }
    // The draft comparison page is not listed, and every alternate of every page is itself published.
    assert!(!entries.iter().any(|e| e["slug"] == "sitebot-vs-contact-forms"));
    for e in &entries {
        let page: Value = get(&app, &format!("/v1/landing/dental/{}/{}", e["lang"].as_str().unwrap(), e["slug"].as_str().unwrap())).await.json().await.unwrap();
        assert!(!page["alternates"].as_array().unwrap().is_empty(), "{} has no alternate", e["slug"]);
        for alt in page["alternates"].as_array().unwrap() {
            assert!(entries.iter().any(|x| x["lang"] == alt["lang"] && x["slug"] == alt["slug"]), "dangling alternate {alt}");
        }
    }
    let prices: Value = app.client.get(app.url("/v1/pricing/dental")).header("Accept-Language", "de").send().await.unwrap().json().await.unwrap();
    assert_eq!(prices["tiers"][0]["price"]["formatted"], "29,00\u{a0}€");
    let prices: Value = app.client.get(app.url("/v1/pricing/dental?currency=USD")).send().await.unwrap().json().await.unwrap();
    assert_eq!(prices["tiers"][0]["price"]["formatted"], "$31.32");
}
