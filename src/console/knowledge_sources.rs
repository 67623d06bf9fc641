//! A site's crawl sources in the console (#25): websites crawled into its knowledge, by the server's
//! crawler (`crawl`), under the crawl network policy of the configuration (`crawl.allow_http`,
//! `crawl.allow_private_networks`, ...), the same checks as `sitebot knowledge crawl`.
//!
//! - `GET /console/sites/{site}/knowledge/sources`: each source's state (schedule, last and next sync,
//!   pages, the last crawl's errors, the running crawl's progress) and, for editors, the form to add one.
//! - `GET /console/sites/{site}/knowledge/sources/progress`: the same state as JSON, which
//!   `knowledge.js` polls while a crawl runs (the page also shows it on a reload).
//! - `POST .../sources`: add (or update) a source; `POST .../sources/resync`: crawl it now, in a task of
//!   the server under the source's lease, never in the request and never beside a running crawl of it
//!   ("already running" instead); `GET|POST .../sources/remove`: confirm, then remove (its documents
//!   stay, as with `knowledge sources remove`).

use std::sync::Arc;
use std::time::Duration;

use poem::http::StatusCode;
use poem::web::{Data, Path};
use poem::{Body, Request, Response, handler};
use serde_json::json;

use super::knowledge::{confirm, query_value};
use super::pages::{self, SourceForm};
use super::session::Me;
use super::texts::{self, Texts};
use super::views::{self, field, see_other, site_for};
use crate::app::AppState;
use crate::config::parse_duration;
use crate::crawl::schedule::{self, Resync};
use crate::domain::{EndpointNames, NetworkPolicy, SiteRole, check_endpoint};
use crate::store::crawl::{Source, SourceOptions};
use crate::store::{Site, StoreError};

/// The shortest schedule, as `knowledge crawl --every`: a re-sync is a guest on the site too.
const MIN_EVERY: Duration = Duration::from_secs(60);
/// Patterns of a source at most, each at most this long.
const MAX_PATTERNS: usize = 50;
const MAX_PATTERN_CHARS: usize = 300;

fn schedule_text(t: &Texts, every: Option<u64>) -> String {
    match every {
        None => t.kb_on_demand.to_owned(),
        Some(s) if s % 86_400 == 0 => format!("{} {}d", t.kb_every, s / 86_400),
        Some(s) if s % 3600 == 0 => format!("{} {}h", t.kb_every, s / 3600),
        Some(s) => format!("{} {}m", t.kb_every, s / 60),
    }
}

/// The running crawl's state in words: pages done and queued, or nothing.
fn running_text(t: &Texts, s: &Source) -> Option<String> {
    s.crawling_until?;
    Some(match &s.progress {
        Some(p) => format!("{}: {} {}, {} {}", t.kb_crawling, p.done, t.kb_pages_done, p.queued, t.kb_queued),
        None => format!("{}: {}", t.kb_crawling, t.kb_starting),
    })
}

fn item(t: &Texts, site: crate::domain::SiteId, s: Source) -> pages::SourceItem {
    let summary = s.last_summary.as_ref();
    let failed: Vec<(String, String)> = summary
        .and_then(|v| v["failed"].as_array())
        .map(|f| f.iter().take(10).map(|n| (n["url"].as_str().unwrap_or("").to_owned(), n["reason"].as_str().unwrap_or("").to_owned())).collect())
        .unwrap_or_default();
    let count = |k: &str| summary.and_then(|v| v[k].as_u64()).unwrap_or(0);
    pages::SourceItem {
        running: running_text(t, &s),
        done: s.progress.as_ref().map_or(0, |p| p.done),
        schedule: schedule_text(t, s.every_secs),
        last_sync: s.last_sync_at.map(views::when).unwrap_or_else(|| t.kb_never.to_owned()),
        next_sync: s.next_sync_at.map(views::when).unwrap_or_else(|| "–".to_owned()),
        pages: s.pages,
        last: summary.map(|_| {
            format!(
                "{} {}, {} {}, {} {}, {} {}",
                count("fetched"),
                t.kb_fetched,
                count("imported"),
                t.kb_imported,
                count("updated"),
                t.kb_updated,
                count("removed"),
                t.kb_removed
            )
        }),
        failed_count: summary.and_then(|v| v["failed"].as_array()).map_or(0, Vec::len),
        failed,
        error: s.last_error,
        options: format!(
            "{} {}{}{}{}",
            t.kb_max_pages_short,
            s.options.max_pages,
            s.options.max_depth.map(|d| format!(" · {} {d}", t.kb_max_depth_short)).unwrap_or_default(),
            if s.options.include.is_empty() { String::new() } else { format!(" · {} {}", t.kb_include_short, s.options.include.join(", ")) },
            if s.options.exclude.is_empty() { String::new() } else { format!(" · {} {}", t.kb_exclude_short, s.options.exclude.join(", ")) },
        ),
        remove_link: format!(
            "/console/sites/{site}/knowledge/sources/remove?{}",
            url::form_urlencoded::Serializer::new(String::new()).append_pair("url", &s.url).finish()
        ),
        url: s.url,
    }
}

#[allow(clippy::too_many_arguments)] // one page's parts, each needed
async fn sources_page(
    state: &AppState,
    t: &'static Texts,
    me: &Me,
    site: Site,
    role: SiteRole,
    form: SourceForm,
    error: Option<String>,
    done: Option<String>,
) -> Response {
    let id = site.id;
    let sources = match super::lane::read(&state.store, move |s| s.site(id).crawl().sources()).await {
        Ok(s) => s,
        Err(e) => return views::failed(t, Some(me), e),
    };
    let status = if error.is_some() { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::OK };
    let any_running = sources.iter().any(|s| s.crawling_until.is_some());
    let sources = sources.into_iter().map(|s| item(t, id, s)).collect();
    views::render(
        status,
        pages::KnowledgeSources {
            t,
            me: Some(views::header_of(me)),
            nav: views::site_nav(site, role, "knowledge"),
            sub: "sources",
            csrf: &me.csrf,
            edit: role.may_edit(),
            sources,
            any_running,
            form,
            error,
            done,
            default_pages: state.config.crawl.max_pages,
        },
    )
}

#[handler]
pub async fn index(req: &Request, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, site, role) = match site_for(state, req, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let done = match query_value(req, "done").as_deref() {
        Some("added") => Some(t.kb_source_added.to_owned()),
        Some("started") => Some(t.kb_resync_started.to_owned()),
        Some("running") => Some(t.kb_already_running.to_owned()),
        Some("removed") => Some(t.kb_source_removed.to_owned()),
        _ => None,
    };
    sources_page(state, t, &me, site, role, SourceForm::default(), None, done).await
}

/// The sources' state as JSON for `knowledge.js`: `{running, sources: [{url, running, done}]}`, where
/// `running` is the running crawl's state in the page's words.
#[handler]
pub async fn progress(req: &Request, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, site, _) = match site_for(state, req, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let id = site.id;
    let sources = match super::lane::read(&state.store, move |s| s.site(id).crawl().sources()).await {
        Ok(s) => s,
        Err(e) => return views::failed(t, Some(&me), e),
    };
    let rows: Vec<_> =
        sources.iter().map(|s| json!({"url": s.url, "running": running_text(t, s), "done": s.progress.as_ref().map_or(0, |p| p.done)})).collect();
    let body = json!({"running": sources.iter().any(|s| s.crawling_until.is_some()), "sources": rows});
    let mut resp = Response::builder().content_type("application/json").body(body.to_string());
    super::session::secure(&mut resp, false);
    resp
}

/// The form as a source to register, or what is wrong with it.
fn parse(t: &Texts, state: &AppState, f: &SourceForm) -> Result<(String, SourceOptions, Option<Duration>), String> {
    let why = |label: &str, reason: String| format!("{label}: {reason}");
    let checked = check_endpoint(&f.url, &NetworkPolicy::crawl(&state.config.crawl), EndpointNames::CRAWL).map_err(|e| why(t.kb_start_url, e.0))?;
    let url = crate::crawl::link::clean(checked).ok_or_else(|| why(t.kb_start_url, t.kb_not_web.to_owned()))?;
    let patterns = |raw: &str, label: &str| -> Result<Vec<String>, String> {
        let list: Vec<String> = raw.lines().flat_map(|l| l.split(',')).map(str::trim).filter(|p| !p.is_empty()).map(str::to_owned).collect();
        if list.len() > MAX_PATTERNS || list.iter().any(|p| p.chars().count() > MAX_PATTERN_CHARS) {
            return Err(why(label, format!("{MAX_PATTERNS} × {MAX_PATTERN_CHARS}")));
        }
        Ok(list)
    };
    let include = patterns(&f.include, t.kb_include)?;
    let exclude = patterns(&f.exclude, t.kb_exclude)?;
    // The operator's `crawl.max_pages` bounds what an editor may ask for.
    let most = state.config.crawl.max_pages;
    let max_pages = match f.max_pages.trim() {
        "" => most,
        n => n.parse::<usize>().ok().filter(|n| (1..=most).contains(n)).ok_or_else(|| why(t.kb_max_pages, format!("1 – {most}")))?,
    };
    let max_depth = match f.max_depth.trim() {
        "" => None,
        n => Some(n.parse::<u32>().ok().filter(|n| *n <= 100).ok_or_else(|| why(t.kb_max_depth, "0 – 100".to_owned()))?),
    };
    let every = match f.every.trim() {
        "" => None,
        e => Some(parse_duration(e).filter(|d| *d >= MIN_EVERY).ok_or_else(|| why(t.kb_schedule, t.kb_schedule_hint.to_owned()))?),
    };
    Ok((url.to_string(), SourceOptions { max_pages, max_depth, include, exclude }, every))
}

#[handler]
pub async fn add(req: &Request, body: Body, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, site, role, fields) = match views::editor_post(state, req, body, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let form = SourceForm {
        url: field(&fields, "url").trim().to_owned(),
        include: field(&fields, "include").to_owned(),
        exclude: field(&fields, "exclude").to_owned(),
        max_pages: field(&fields, "max_pages").to_owned(),
        max_depth: field(&fields, "max_depth").to_owned(),
        every: field(&fields, "every").to_owned(),
    };
    let (url, options, every) = match parse(t, state, &form) {
        Ok(v) => v,
        Err(error) => return sources_page(state, t, &me, site, role, form, Some(error), None).await,
    };
    let (id, u, o, most) = (site.id, url.clone(), options.clone(), state.config.crawl.max_sources_per_site);
    match state.store.run(move |s| s.site(id).crawl().register(&u, &o, every, most)).await {
        Ok(_) => {}
        Err(StoreError::Conflict(_)) => {
            let error = format!("{} {most}", t.kb_too_many_sources);
            return sources_page(state, t, &me, site, role, form, Some(error), None).await;
        }
        Err(e) => return views::failed(t, Some(&me), e),
    }
    views::audit(state, &me.email, Some(id), "crawl_source_added", json!({"url": url, "options": options, "everySecs": every.map(|d| d.as_secs())})).await;
    see_other(&format!("/console/sites/{id}/knowledge/sources?done=added"))
}

#[handler]
pub async fn resync(req: &Request, body: Body, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, site, _, fields) = match views::editor_post(state, req, body, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let (id, url) = (site.id, field(&fields, "url").to_owned());
    let u = url.clone();
    match state.store.run(move |s| s.site(id).crawl().source(&u)).await {
        Ok(Some(_)) => {}
        Ok(None) => return views::not_found(t, Some(&me)),
        Err(e) => return views::failed(t, Some(&me), e),
    }
    let outcome = match schedule::resync_now(state.clone(), id, url.clone()).await {
        Ok(o) => o,
        Err(e) => return views::failed(t, Some(&me), e),
    };
    let done = match outcome {
        Resync::Started => "started",
        Resync::Running => "running",
    };
    views::audit(state, &me.email, Some(id), "crawl_resync_requested", json!({"url": url, "outcome": done})).await;
    see_other(&format!("/console/sites/{id}/knowledge/sources?done={done}"))
}

#[handler]
pub async fn remove_form(req: &Request, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let url = query_value(req, "url").unwrap_or_default();
    let u = url.clone();
    let (me, site, role, _) = match views::editor_item(state, req, &raw, move |s, id| s.site(id).crawl().source(&u)).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let id = site.id;
    confirm(
        t,
        &me,
        site,
        role,
        pages::Confirm {
            title: t.kb_remove_source.to_owned(),
            what: url.clone(),
            detail: t.kb_remove_source_note.to_owned(),
            action: format!("/console/sites/{id}/knowledge/sources/remove"),
            fields: vec![("url".to_owned(), url)],
            button: t.kb_remove.to_owned(),
            back: format!("/console/sites/{id}/knowledge/sources"),
        },
    )
}

#[handler]
pub async fn remove(req: &Request, body: Body, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, site, _, fields) = match views::editor_post(state, req, body, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let (id, url) = (site.id, field(&fields, "url").to_owned());
    let u = url.clone();
    match state.store.run(move |s| s.site(id).crawl().remove(&u)).await {
        Ok(()) => {}
        Err(crate::store::StoreError::NotFound) => return views::not_found(t, Some(&me)),
        Err(e) => return views::failed(t, Some(&me), e),
    }
    views::audit(state, &me.email, Some(id), "crawl_source_removed", json!({"url": url})).await;
    see_other(&format!("/console/sites/{id}/knowledge/sources?done=removed"))
}
