//! Public content routes (landing, sitemap, pricing, public stats): no header needed, rate limited per
//! client IP, cacheable. Kept together so their headers and schemas are documented in one place.

use serde_json::{Map, Value, json};

use super::*;

/// A success response of a cacheable route: the common headers plus `extra` header refs.
fn cached_ok(description: &str, schema: Value, extra: &[(&str, &str)]) -> Value {
    let mut headers = common_headers();
    for (name, component) in extra {
        headers[*name] = header_ref(component);
    }
    json!({"description": description, "headers": headers, "content": {"application/json": {"schema": schema}}})
}

fn not_modified(extra: &[(&str, &str)]) -> Value {
    let mut headers = common_headers();
    for (name, component) in extra {
        headers[*name] = header_ref(component);
    }
    json!({"description": "Not modified: the `If-None-Match` tag (or `*`) matches the current `ETag`; no body.", "headers": headers})
}

fn path_param(name: &str, description: &str, pattern: &str) -> Value {
    json!({"name": name, "in": "path", "required": true, "description": description, "schema": {"type": "string", "pattern": pattern}})
}

pub(super) fn paths(p: &mut Map<String, Value>) {
    let landing_headers = [("ETag", "ETag"), ("Last-Modified", "LastModified"), ("Cache-Control", "CacheControl")];
    let if_none_match = json!({"$ref": "#/components/parameters/IfNoneMatch"});
    let site = path_param("site", "The vertical's slug (`dental`).", "^[a-z0-9-]{1,64}$");
    p.insert(
        "/v1/landing/{site}/{lang}/{slug}".into(),
        json!({"get": operation("content", "getLandingPage", "A published landing page",
        "The payload of one published page. Drafts, unknown pages and malformed addresses all answer 404 `not_found`, \
         so a draft's existence never shows. `alternates` lists only published pages. Cacheable for 5 minutes; \
         revalidate with `If-None-Match` (lists, `W/` tags and `*` are understood) to get 304.",
        json!({
            "200": cached_ok("The page", schema_ref("LandingPage"), &landing_headers),
            "304": not_modified(&landing_headers)
        }),
        &[404],
        json!({"security": [], "parameters": [
            site,
            path_param("lang", "BCP 47 language tag (`en`, `de-CH`).", "^[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*$"),
            path_param("slug", "The page's slug.", "^[a-z0-9-]{1,128}$"),
            if_none_match
        ]}))}),
    );
    p.insert(
        "/v1/landing/{site}/sitemap-slugs".into(),
        json!({"get": operation("content", "getSitemapSlugs", "Published pages of a vertical, for sitemaps",
            "Every published page of the vertical, sorted by (lang, type, slug); an empty array when none is published. \
             Unknown vertical: 404 `not_found`. Same caching as the page route.",
            json!({
                "200": cached_ok("The pages", json!({"type": "array", "items": schema_ref("SitemapEntry")}), &landing_headers),
                "304": not_modified(&landing_headers)
            }),
            &[404],
            json!({"security": [], "parameters": [site, if_none_match]}))}),
    );
    let pricing_headers = [("ETag", "ETag"), ("Cache-Control", "CacheControl"), ("Content-Language", "ContentLanguage"), ("Vary", "Vary")];
    p.insert(
        "/v1/pricing/{vertical}".into(),
        json!({"get": operation("pricing", "getPricing", "Live prices of a vertical",
            "Tiers with localized names, descriptions and features, priced at request time from the stored base prices and \
             currency rates (base -> reference -> target, exact decimal arithmetic, rounded half up to the currency's minor unit). \
             Language: `lang`, else the best `Accept-Language` match (q-values honoured), else the vertical's default. \
             Currency: the site's when `X-Site-Id` is sent, else `currency`, else the vertical's default. \
             `Cache-Control: public, no-cache`: caches revalidate every time (304 on `If-None-Match`), so a price change shows at once. \
             422 `validation_failed` names `lang` (malformed or not offered) or `currency` (unknown, or no rate to convert by).",
            json!({
                "200": cached_ok("The priced tiers", schema_ref("Pricing"), &pricing_headers),
                "304": not_modified(&pricing_headers)
            }),
            &[400, 404, 422],
            json!({"security": [], "parameters": [
                path_param("vertical", "The vertical's slug.", "^[a-z0-9-]{1,64}$"),
                {"name": "lang", "in": "query", "required": false, "description": "BCP 47 tag; must be offered by the vertical (or share its primary language with an offered one), else 422.", "schema": lang_schema("BCP 47 tag")},
                {"name": "currency", "in": "query", "required": false, "description": "ISO 4217 code; ignored when `X-Site-Id` is sent. A supported code without a stored rate to convert by is 422.", "schema": currency_schema("A supported ISO 4217 code")},
                {"name": "Accept-Language", "in": "header", "required": false, "schema": {"type": "string"}},
                {"name": "X-Site-Id", "in": "header", "required": false, "description": "Prices in this site's currency. Malformed: 400 `invalid_site_id`; unknown: 404 `site_not_found`.", "schema": {"type": "string", "format": "uuid"}},
                if_none_match
            ]}))}),
    );
    p.insert(
        "/v1/public-stats/{siteId}".into(),
        json!({"get": operation("stats", "getPublicStats", "Public statistics of a site",
        "Totals kept as counters in the transactions that record queries and leads, so this is one lookup whatever the \
         traffic. `activeSince` is the UTC date of the site's first question or lead, or its creation date before any; \
         `daysActive` counts calendar days from it to today, both included. Cacheable for 60 s.",
        json!({"200": cached_ok("The statistics", schema_ref("PublicStats"), &[("Cache-Control", "CacheControl")])}),
        &[400, 403, 404],
        json!({"security": [], "parameters": [
            {"name": "siteId", "in": "path", "required": true, "description": "The site's GUID.", "schema": {"type": "string", "format": "uuid"}}
        ]}))}),
    );
}

/// Adds the headers, parameters and schemas of the content routes to `components`.
pub(super) fn components(mut c: Value) -> Value {
    let headers = json!({
        "ETag": {"description": "Strong validator of the body (a quoted hash); send it back in `If-None-Match`.", "schema": {"type": "string"}},
        "LastModified": {"description": "When the payload last changed, as an HTTP date.", "schema": {"type": "string"}},
        "CacheControl": {"description": "`public, max-age=300` (landing, sitemap), `public, max-age=60` (stats), `public, no-cache` (pricing).", "schema": {"type": "string"}},
        "ContentLanguage": {"description": "The language the texts and `formatted` prices are in.", "schema": {"type": "string"}},
        "Vary": {"description": "`Accept-Language, X-Site-Id` (and `Origin`).", "schema": {"type": "string"}}
    });
    let text = |max: u32| json!({"type": "string", "minLength": 1, "maxLength": max});
    let schemas = json!({
        "LandingPage": {
            "type": "object",
            "required": ["site", "lang", "slug", "type", "title", "description", "faq", "features", "stats", "alternates", "updatedAt"],
            "properties": {
                "site": {"type": "string", "description": "The vertical's slug."},
                "lang": {"type": "string"},
                "slug": {"type": "string"},
                "type": schema_ref("PageType"),
                "title": text(200),
                "description": text(2000),
                "faq": {"type": "array", "maxItems": 100, "items": {"type": "object", "required": ["question", "answer"], "properties": {"question": text(500), "answer": text(5000)}}},
                "features": {"type": "array", "maxItems": 50, "items": {"type": "object", "required": ["title", "description"], "properties": {"title": text(200), "description": {"type": "string", "maxLength": 2000}, "icon": text(64)}}},
                "stats": {"type": "array", "maxItems": 50, "items": {"type": "object", "required": ["label", "value"], "properties": {"label": text(100), "value": text(100)}}},
                "alternates": {"type": "array", "description": "The same page in other languages; published pages only.", "items": {"type": "object", "required": ["lang", "slug"], "properties": {"lang": {"type": "string"}, "slug": {"type": "string"}}}},
                "updatedAt": {"type": "string", "format": "date-time"}
            }
        },
        "PageType": {"type": "string", "enum": ["home", "feature", "use-case", "comparison", "faq", "pricing", "article"]},
        "SitemapEntry": {
            "type": "object", "required": ["slug", "lang", "type", "updatedAt"],
            "properties": {"slug": {"type": "string"}, "lang": {"type": "string"}, "type": schema_ref("PageType"), "updatedAt": {"type": "string", "format": "date-time"}}
        },
        "Pricing": {
            "type": "object", "required": ["vertical", "lang", "currency", "tiers"],
            "properties": {
                "vertical": {"type": "string"},
                "lang": {"type": "string"},
                "currency": {"type": "string", "description": "ISO 4217"},
                "tiers": {"type": "array", "items": schema_ref("PricingTier")}
            }
        },
        "PricingTier": {
            "type": "object", "required": ["id", "name", "description", "price", "requestsPerMinute", "features", "highlighted"],
            "properties": {
                "id": {"type": "string"},
                "name": {"type": "string"},
                "description": {"type": "string"},
                "price": {"type": "object", "required": ["amountMinor", "currency", "interval", "formatted"], "properties": {
                    "amountMinor": {"type": "integer", "minimum": 0, "description": "In the currency's minor unit (cents; yen have none)."},
                    "currency": {"type": "string"},
                    "interval": {"type": "string", "enum": ["month", "year"]},
                    "formatted": {"type": "string", "description": "Localized, e.g. `€29.00` (en) or `29,00 €` (de, with a no-break space)."}
                }},
                "requestsPerMinute": {"type": "integer", "minimum": 1},
                "features": {"type": "array", "items": {"type": "string"}},
                "highlighted": {"type": "boolean"}
            }
        },
        "PublicStats": {
            "type": "object", "required": ["siteId", "totalQuestions", "resolutionRate", "leadsCollected", "activeSince", "daysActive"],
            "properties": {
                "siteId": {"type": "string", "format": "uuid"},
                "totalQuestions": {"type": "integer", "minimum": 0},
                "resolutionRate": {"type": "number", "minimum": 0, "maximum": 1, "description": "Resolved / all questions, 4 decimals; 0 when none."},
                "leadsCollected": {"type": "integer", "minimum": 0},
                "activeSince": {"type": "string", "format": "date"},
                "daysActive": {"type": "integer", "minimum": 1}
            }
        }
    });
    let parameters = json!({
        "IfNoneMatch": {"name": "If-None-Match", "in": "header", "required": false,
            "description": "ETags from earlier responses (comma separated, `W/` accepted) or `*`; a match answers 304.", "schema": {"type": "string"}}
    });
    for (section, add) in [("headers", headers), ("schemas", schemas), ("parameters", parameters)] {
        if let (Some(target), Some(add)) = (c.get_mut(section).and_then(Value::as_object_mut), add.as_object()) {
            for (k, v) in add {
                target.insert(k.clone(), v.clone());
            }
        }
    }
    c
}
