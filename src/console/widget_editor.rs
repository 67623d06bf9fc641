//! The widget editor (#25): colour, position, greetings and suggested questions per language, the
//! contact form, and the allowed origins, saved as a draft, previewed with the real widget, published
//! with one button. Owners (and admins) only; every change is a form post with the session's CSRF token
//! and is audited (`widget_draft_saved`, `widget_published`, `widget_draft_discarded`, with the values).
//!
//! - `GET /console/sites/{site}/widget`: the form (the draft, else what is published), the preview frame
//!   and the embed code.
//! - `POST /console/sites/{site}/widget`: saves the draft, `303` back; a wrong value is `422` with the
//!   form as sent and what is wrong with it, and nothing is saved.
//! - `POST /console/sites/{site}/widget/publish` and `/discard`: the draft becomes what visitors get, or
//!   is dropped; `409` with the page when there is none.
//! - `GET /console/sites/{site}/widget/preview[?lang=]`: the page the preview frame shows: a host page
//!   loading the real `/v1/widget.js` with a preview token made for it (`store::widget`): bound to this
//!   site, valid for [`PREVIEW_TTL`], and good for nothing but reading the draft. It is framed by the
//!   console's own pages only.

use std::sync::Arc;

use poem::http::{HeaderValue, StatusCode, header};
use poem::web::{Data, Path};
use poem::{Body, Request, Response, handler};

use super::pages::{self, WidgetForm, WidgetLangRow};
use super::session::Me;
use super::texts::{self, Texts};
use super::views::{self, field, managed_site, see_other};
use crate::app::AppState;
use crate::domain::{HexColor, Lang, Origin, Timestamp, WidgetPosition};
use crate::store::Site;
use crate::store::widget::{DraftError, LanguageEntry, MAX_LANGUAGES, SavedDraft, WidgetDraft};

/// How long a preview page's token shows the draft: the page is made again at every visit of the
/// editor, so this only needs to cover one editing session.
pub const PREVIEW_TTL: std::time::Duration = std::time::Duration::from_secs(30 * 60);

/// The editor page's CSP: the console's, plus its own preview frame.
const EDITOR_CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self' data:; script-src 'self'; connect-src 'self'; form-action 'self'; \
                          frame-src 'self'; frame-ancestors 'none'; base-uri 'none'";
/// The preview page's CSP: the console's, framed by the console only.
const PREVIEW_CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self' data:; script-src 'self'; connect-src 'self'; form-action 'none'; \
                           frame-ancestors 'self'; base-uri 'none'";

/// The form of a draft (or of the published settings): the site's language first, then every other
/// language it has a greeting or questions in, then an empty row to add one.
fn form_of(site: &Site, d: &WidgetDraft) -> WidgetForm {
    let own = site.lang.as_str();
    let mut tags: Vec<&String> = d.greeting.keys().chain(d.questions.keys()).filter(|l| l.as_str() != own).collect();
    tags.sort();
    tags.dedup();
    let row = |lang: &str, fixed| WidgetLangRow {
        lang: lang.to_owned(),
        fixed,
        greeting: d.greeting.get(lang).cloned().unwrap_or_default(),
        questions: d.questions.get(lang).map(|q| q.join("\n")).unwrap_or_default(),
    };
    let mut languages = vec![row(own, true)];
    languages.extend(tags.into_iter().map(|l| row(l, false)));
    if languages.len() < MAX_LANGUAGES {
        languages.push(WidgetLangRow { lang: String::new(), fixed: false, greeting: String::new(), questions: String::new() });
    }
    WidgetForm {
        color: d.primary_color.as_str().to_owned(),
        position: d.position.as_str().to_owned(),
        lead_form: d.lead_form,
        origins: d.allowed_origins.iter().map(Origin::as_str).collect::<Vec<_>>().join("\n"),
        languages,
    }
}

/// The sent form as shown again with an error (every row as sent).
fn form_as_sent(site: &Site, fields: &[(String, String)]) -> WidgetForm {
    let languages = rows(fields)
        .into_iter()
        .map(|i| {
            let lang = field(fields, &format!("lang_{i}")).to_owned();
            WidgetLangRow {
                fixed: i == 0 && lang == site.lang.as_str(),
                lang,
                greeting: field(fields, &format!("greeting_{i}")).to_owned(),
                questions: field(fields, &format!("questions_{i}")).to_owned(),
            }
        })
        .collect();
    WidgetForm {
        color: field(fields, "color").to_owned(),
        position: field(fields, "position").to_owned(),
        lead_form: field(fields, "lead_form") == "on",
        origins: field(fields, "origins").to_owned(),
        languages,
    }
}

/// The indices of the language rows sent (`lang_{i}`), in order, at most one more than a widget may have.
fn rows(fields: &[(String, String)]) -> Vec<usize> {
    let mut out: Vec<usize> = fields.iter().filter_map(|(k, _)| k.strip_prefix("lang_")?.parse().ok()).filter(|i| *i <= MAX_LANGUAGES).collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The sent form as a draft, or the first thing wrong with it (its label, then the reason).
fn parse(t: &Texts, fields: &[(String, String)]) -> Result<WidgetDraft, String> {
    let why = |label: &str, reason: String| format!("{label}: {reason}");
    let color = HexColor::parse(field(fields, "color")).map_err(|e| why(t.widget_color, e.0))?;
    let position = WidgetPosition::parse(field(fields, "position").trim()).map_err(|e| why(t.widget_position, e.0))?;
    let mut languages = Vec::new();
    for i in rows(fields) {
        let (tag, greeting) = (field(fields, &format!("lang_{i}")).trim(), field(fields, &format!("greeting_{i}")));
        let questions: Vec<String> = field(fields, &format!("questions_{i}")).lines().map(str::to_owned).collect();
        if tag.is_empty() {
            if greeting.trim().is_empty() && questions.iter().all(|q| q.trim().is_empty()) {
                continue;
            }
            return Err(why(t.widget_language, "give a language tag such as fr or de-CH".into()));
        }
        let lang = Lang::parse(tag).map_err(|e| why(t.widget_language, e.0))?;
        languages.push(LanguageEntry { lang, greeting: greeting.to_owned(), questions });
    }
    let mut origins = Vec::new();
    for line in field(fields, "origins").lines().map(str::trim).filter(|l| !l.is_empty()) {
        let origin = Origin::parse(line).map_err(|e| why(t.widget_origins, e.0))?;
        // The console asks for https: a page served over plain HTTP is no place for a visitor's questions.
        if !origin.as_str().starts_with("https://") {
            return Err(why(t.widget_origins, format!("`{line}` is not an https origin")));
        }
        origins.push(origin);
    }
    WidgetDraft::check(color, position, languages, field(fields, "lead_form") == "on", origins).map_err(|DraftError { field, reason }| {
        let label = match field {
            "greeting" => t.widget_greeting,
            "questions" => t.widget_questions,
            "origins" => t.widget_origins,
            _ => t.widget_languages,
        };
        why(label, reason)
    })
}

fn when(at: Timestamp) -> String {
    at.rfc3339().replace('T', " ").trim_end_matches('Z').chars().take(16).collect::<String>() + " UTC"
}

/// The embed tag, for the origin this console is served from.
fn snippet(req: &Request, site: &Site) -> String {
    let host = req.headers().get(header::HOST).and_then(|v| v.to_str().ok()).or_else(|| req.uri().authority().map(|a| a.as_str())).unwrap_or("sitebot.example");
    format!("<script src=\"https://{host}/v1/widget.js\" data-site-id=\"{}\" async></script>", site.id)
}

/// What the page says above the form (what just happened, or what was refused) and its status.
struct Said<'a> {
    done: Option<&'a str>,
    error: Option<String>,
    status: StatusCode,
}

impl Said<'_> {
    fn ok(done: Option<&str>) -> Said<'_> {
        Said { done, error: None, status: StatusCode::OK }
    }

    fn refused(error: String, status: StatusCode) -> Said<'static> {
        Said { done: None, error: Some(error), status }
    }
}

fn page(req: &Request, t: &'static Texts, me: &Me, site: Site, draft: Option<&SavedDraft>, form: WidgetForm, said: Said<'_>) -> Response {
    let mut preview_langs: Vec<String> = form.languages.iter().map(|r| r.lang.clone()).filter(|l| Lang::parse(l).is_ok()).collect();
    preview_langs.dedup();
    let snippet = snippet(req, &site);
    let draft = draft.map(|d| format!("({} · {})", when(d.at), d.by));
    let nav = views::site_nav(site, crate::domain::SiteRole::Owner, "widget");
    let body =
        pages::WidgetEditor { t, me: Some(views::header_of(me)), nav, csrf: &me.csrf, form, error: said.error, done: said.done, draft, preview_langs, snippet };
    let mut resp = views::render(said.status, body);
    resp.headers_mut().insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(EDITOR_CSP));
    resp
}

/// The page with the site's draft (or what is published), and what just happened.
async fn current(state: &AppState, req: &Request, t: &'static Texts, me: &Me, site: Site, said: Said<'_>) -> Response {
    let id = site.id;
    let read = state.store.run(move |s| Ok((s.site(id).widget().draft()?, s.site(id).widget().published()?))).await;
    let (draft, published) = match read {
        Ok(v) => v,
        Err(e) => return views::failed(t, Some(me), e),
    };
    let form = form_of(&site, draft.as_ref().map_or(&published, |d| &d.draft));
    page(req, t, me, site, draft.as_ref(), form, said)
}

fn flag(req: &Request, name: &str) -> bool {
    req.uri().query().is_some_and(|q| q.split('&').any(|p| p.strip_prefix(name) == Some("=1")))
}

#[handler]
pub async fn editor(req: &Request, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, site) = match managed_site(state, req, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let done = [("saved", t.widget_draft_saved), ("published", t.widget_published), ("discarded", t.widget_discarded)]
        .into_iter()
        .find(|(name, _)| flag(req, name))
        .map(|(_, text)| text);
    current(state, req, t, &me, site, Said::ok(done)).await
}

#[handler]
pub async fn save(req: &Request, body: Body, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, fields, site) = match views::owner_post(state, req, body, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let draft = match parse(t, &fields) {
        Ok(d) => d,
        Err(error) => {
            let id = site.id;
            let saved = state.store.run(move |s| s.site(id).widget().draft()).await.ok().flatten();
            let form = form_as_sent(&site, &fields);
            return page(req, t, &me, site, saved.as_ref(), form, Said::refused(error, StatusCode::UNPROCESSABLE_ENTITY));
        }
    };
    let (id, by, kept) = (site.id, me.email.clone(), draft.clone());
    if let Err(e) = state.store.run(move |s| s.site(id).widget().save_draft(&kept, &by)).await {
        return views::failed(t, Some(&me), e);
    }
    views::audit(state, &me.email, Some(id), "widget_draft_saved", serde_json::to_value(&draft).unwrap_or_default()).await;
    see_other(&format!("/console/sites/{id}/widget?saved=1"))
}

#[handler]
pub async fn publish(req: &Request, body: Body, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, _, site) = match views::owner_post(state, req, body, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let id = site.id;
    match state.store.run(move |s| s.site(id).widget().publish()).await {
        Ok(published) => {
            views::audit(state, &me.email, Some(id), "widget_published", serde_json::to_value(&published).unwrap_or_default()).await;
            see_other(&format!("/console/sites/{id}/widget?published=1"))
        }
        Err(crate::store::StoreError::NotFound) => {
            current(state, req, t, &me, site, Said::refused(t.widget_nothing_to_publish.into(), StatusCode::CONFLICT)).await
        }
        Err(e) => views::failed(t, Some(&me), e),
    }
}

#[handler]
pub async fn discard(req: &Request, body: Body, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, _, site) = match views::owner_post(state, req, body, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let id = site.id;
    match state.store.run(move |s| s.site(id).widget().discard()).await {
        Ok(()) => {
            views::audit(state, &me.email, Some(id), "widget_draft_discarded", serde_json::json!({})).await;
            see_other(&format!("/console/sites/{id}/widget?discarded=1"))
        }
        Err(crate::store::StoreError::NotFound) => {
            current(state, req, t, &me, site, Said::refused(t.widget_nothing_to_publish.into(), StatusCode::CONFLICT)).await
        }
        Err(e) => views::failed(t, Some(&me), e),
    }
}

/// The preview frame's page: the real widget, showing the draft through a token made for this page.
#[handler]
pub async fn preview(req: &Request, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (_, site) = match managed_site(state, req, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let asked = req.uri().query().and_then(|q| url::form_urlencoded::parse(q.as_bytes()).find(|(k, _)| k == "lang").map(|(_, v)| v.into_owned()));
    let lang = asked.and_then(|l| Lang::parse(&l).ok()).unwrap_or_else(|| site.lang.clone());
    let id = site.id;
    let expires = Timestamp::from_millis(Timestamp::now().as_millis() + PREVIEW_TTL.as_millis() as i64);
    let token = match state.store.run(move |s| Ok(s.site(id).widget().preview_token(expires))).await {
        Ok(token) => token,
        Err(e) => return views::failed(t, None, e),
    };
    let body = pages::WidgetPreview { t, lang: lang.as_str().to_owned(), site_id: id.to_string(), site_name: site.name, token };
    let mut resp = views::render(StatusCode::OK, body);
    let h = resp.headers_mut();
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(PREVIEW_CSP));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("SAMEORIGIN"));
    resp
}
