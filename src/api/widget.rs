//! `GET /v1/widget.js`, the embeddable assistant (its source is `assets/widget/widget.js`, compiled into
//! the binary), and `GET /v1/widget/config`, a site's widget settings: the published ones, or its draft
//! for the console's preview (a valid `X-Widget-Preview` token of the site; any other is 403).

use std::sync::{Arc, LazyLock};

use poem::http::{HeaderValue, StatusCode, header};
use poem::web::{Data, Json};
use poem::{Request, Response, handler};
use serde::Serialize;

use crate::app::AppState;
use crate::domain::{Lang, Timestamp};
use crate::http::conditional;
use crate::http::error::ApiError;
use crate::http::scope::Tenant;
use crate::store::widget::Preview;

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
    /// The questions the widget offers as buttons before the first question, for the visitor's language.
    suggested_questions: SuggestedQuestions,
}

/// Suggested questions in one language: the visitor's (`?lang=`), else its primary language, else the
/// site's; `lang` is `null` and the list empty when none of those has any.
#[derive(Debug, Serialize)]
pub struct SuggestedQuestions {
    lang: Option<String>,
    questions: Vec<String>,
}

/// The preview token header: the console's preview sends it (from the server's own origin, so it is not
/// among the CORS headers a page elsewhere may send).
pub const PREVIEW_HEADER: &str = "x-widget-preview";

/// `?lang=` of the query string, parsed; a malformed tag is a 400.
fn visitor_lang(req: &Request) -> Result<Option<Lang>, ApiError> {
    let Some(query) = req.uri().query() else { return Ok(None) };
    let raw = url::form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == "lang").map(|(_, v)| v.into_owned());
    raw.map(|l| Lang::parse(&l).map_err(|e| ApiError::BadRequest(e.0))).transpose()
}

#[handler]
pub async fn config(req: &Request, Data(state): Data<&Arc<AppState>>, Data(tenant): Data<&Tenant>) -> poem::Result<Json<WidgetConfig>> {
    let site = &tenant.site;
    let lang = visitor_lang(req)?;
    let preview = req.headers().get(PREVIEW_HEADER).map(|v| v.to_str().unwrap_or("").to_owned());
    let id = site.id;
    // The published settings, or with a valid preview token the site's draft.
    let shown = match preview {
        None => state.store.run(move |s| s.site(id).widget().published()).await.map_err(ApiError::from)?,
        Some(token) => match state.store.run(move |s| s.site(id).widget().preview(&token, Timestamp::now())).await.map_err(ApiError::from)? {
            Preview::Shown(draft) => draft,
            Preview::Refused => return Err(ApiError::PreviewTokenInvalid.into()),
        },
    };
    let mut languages = vec![site.lang.as_str().to_owned()];
    languages.extend(shown.greeting.keys().filter(|l| *l != site.lang.as_str()).cloned());
    let suggested = match shown.questions_for(lang.as_ref(), &site.lang) {
        Some((lang, questions)) => SuggestedQuestions { lang: Some(lang.to_owned()), questions: questions.to_vec() },
        None => SuggestedQuestions { lang: None, questions: Vec::new() },
    };
    Ok(Json(WidgetConfig {
        site_id: site.id.to_string(),
        name: site.name.clone(),
        primary_color: shown.primary_color.as_str().to_owned(),
        position: shown.position.as_str(),
        lead_form: shown.lead_form,
        greeting: shown.greeting,
        handoff: site.handoff.enabled,
        languages,
        suggested_questions: suggested,
    }))
}

#[cfg(test)]
mod tests {
    use super::WIDGET_JS;
    use crate::knowledge::answer::compose::FALLBACK_LANGUAGES;

    /// A visitor whose page is in a language the answers come in sees the widget's own texts in it too:
    /// each such language has its interface texts (`T`) and its hand-off texts (`TH`), with every key
    /// English has.
    #[test]
    fn the_widget_speaks_every_language_the_answers_do() {
        let table = |name: &str| -> Vec<(String, Vec<String>)> {
            let start = WIDGET_JS.find(&format!("const {name} = {{\n")).unwrap_or_else(|| panic!("no table {name}"));
            let body = &WIDGET_JS[start..];
            let body = &body[..body.find("\n  };").unwrap()];
            body.lines()
                .skip(1)
                .filter_map(|l| l.trim().split_once(": { "))
                .map(|(lang, rest)| {
                    let keys = rest.split("', ").filter_map(|kv| kv.trim().split_once(": '").map(|(k, _)| k.to_owned())).collect();
                    (lang.to_owned(), keys)
                })
                .collect()
        };
        for name in ["T", "TH"] {
            let rows = table(name);
            let english = &rows.iter().find(|(l, _)| l == "en").unwrap().1;
            assert!(english.len() >= 8, "{name}: {english:?}");
            for lang in FALLBACK_LANGUAGES {
                let keys = &rows.iter().find(|(l, _)| l == lang).unwrap_or_else(|| panic!("{name} has no {lang}")).1;
                assert_eq!(keys, english, "{name}.{lang}");
            }
        }
    }
}
