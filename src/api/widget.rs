//! `GET /v1/widget.js`, the embeddable assistant (its source is `assets/widget/widget.js`, compiled into
//! the binary), and `GET /v1/widget/config`, a site's widget settings.

use std::sync::{Arc, LazyLock};

use poem::http::{HeaderValue, StatusCode, header};
use poem::web::{Data, Json};
use poem::{Request, Response, handler};
use serde::Serialize;

use crate::app::AppState;
use crate::http::conditional;
use crate::http::scope::Tenant;

const WIDGET_JS: &str = include_str!("../../assets/widget/widget.js");
static WIDGET_ETAG: LazyLock<String> = LazyLock::new(|| conditional::etag(WIDGET_JS.as_bytes()));

/// The script, revalidated by browsers every five minutes (a 304 when unchanged).
#[handler]
pub async fn script(req: &Request) -> Response {
    let tag = WIDGET_ETAG.as_str();
    let mut resp = if conditional::none_match(req.headers(), tag) {
        Response::builder().status(StatusCode::NOT_MODIFIED).finish()
    } else {
        Response::builder().status(StatusCode::OK).content_type("text/javascript; charset=utf-8").body(WIDGET_JS)
    };
    let h = resp.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=300"));
    if let Ok(v) = HeaderValue::from_str(tag) {
        h.insert(header::ETAG, v);
    }
    resp
}

/// `GET /v1/widget/config` (API.md "Added routes").
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WidgetConfig {
    site_id: String,
    name: String,
    greeting: std::collections::BTreeMap<String, String>,
    primary_color: String,
    position: &'static str,
    lead_form: bool,
    /// Whether the site has live hand-off on (a person may come when asked; the answer says if one can).
    handoff: bool,
    /// The site's language first, then every language it has a greeting in.
    languages: Vec<String>,
}

#[handler]
pub async fn config(Data(_state): Data<&Arc<AppState>>, Data(tenant): Data<&Tenant>) -> Json<WidgetConfig> {
    let site = &tenant.site;
    let mut languages = vec![site.lang.as_str().to_owned()];
    languages.extend(site.widget.greeting.keys().filter(|l| *l != site.lang.as_str()).cloned());
    Json(WidgetConfig {
        site_id: site.id.to_string(),
        name: site.name.clone(),
        greeting: site.widget.greeting.clone(),
        primary_color: site.widget.primary_color.as_str().to_owned(),
        position: site.widget.position.as_str(),
        lead_form: site.widget.lead_form,
        handoff: site.handoff.enabled,
        languages,
    })
}
