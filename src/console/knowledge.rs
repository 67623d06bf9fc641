//! A site's knowledge in the console (#25): its documents here, its crawl sources in
//! [`super::knowledge_sources`], its curated answers in [`super::knowledge_answers`]. Everyone with a
//! role on the site reads these pages; editors, owners and admins change them (a viewer sees no control
//! and a viewer's POST is 403). Every change is audited.
//!
//! - `GET /console/sites/{site}/knowledge?q=&page=`: the documents (title, source, language, chunks,
//!   last change), searched by title, 50 a page.
//! - `POST /console/sites/{site}/knowledge/upload`: files as `multipart/form-data` (a plain form with
//!   several files; `upload.js` adds progress), the formats and size limit of `sitebot knowledge
//!   import`, imported by the same code (`knowledge::import`) on a blocking thread, never on the
//!   request's async thread. Each file is written to an unnamed temporary file in the data directory
//!   as it arrives and read back one at a time for its import, so an upload holds at most one file in
//!   memory whatever its size. A file over `knowledge.max_file_bytes` or of another format is a `422`
//!   page, an upload over `console.upload_bytes` in all a `413` page, and nothing is stored.
//! - `GET|POST /console/sites/{site}/knowledge/documents/{doc}/delete`: confirm, then delete.

use std::sync::Arc;

use poem::http::StatusCode;
use poem::web::{Data, Multipart, Path};
use poem::{Body, FromRequest, Request, RequestBody, Response, handler};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::pages;
use super::session::{self, Me};
use super::texts::{self, Texts};
use super::views::{self, see_other, site_for};
use crate::app::AppState;
use crate::domain::SiteRole;
use crate::knowledge::import::{self, Format, Input};
use crate::store::Site;

/// Documents on a page of the list.
const PAGE: usize = 50;
/// Files one upload takes at most.
pub const MAX_FILES: usize = 20;

/// A query string's value.
pub(super) fn query_value(req: &Request, key: &str) -> Option<String> {
    url::form_urlencoded::parse(req.uri().query().unwrap_or("").as_bytes()).find(|(k, _)| k == key).map(|(_, v)| v.into_owned())
}

/// What the documents page shows besides the list: a notice after a change, or what was wrong with an
/// upload (with the status that goes with it).
#[derive(Default)]
struct Notice {
    done: Option<String>,
    errors: Vec<String>,
    /// The status of a page with errors: 422 unless said otherwise.
    status: Option<StatusCode>,
}

async fn documents_page(state: &AppState, req: &Request, t: &'static Texts, me: &Me, site: Site, role: SiteRole, notice: Notice) -> Response {
    let q = query_value(req, "q").map(|q| q.trim().chars().take(200).collect::<String>()).unwrap_or_default();
    let page = query_value(req, "page").and_then(|p| p.parse::<usize>().ok()).filter(|p| *p >= 1 && *p <= 100_000).unwrap_or(1);
    let (id, title) = (site.id, q.clone());
    let found = super::lane::read(&state.store, move |s| s.site(id).knowledge().page_documents(&title, (page - 1) * PAGE, PAGE)).await;
    let (rows, total) = match found {
        Ok(v) => v,
        Err(e) => return views::failed(t, Some(me), e),
    };
    let pages_total = (total as usize).div_ceil(PAGE).max(1);
    let link = |p: usize| {
        let mut s = url::form_urlencoded::Serializer::new(String::new());
        if !q.is_empty() {
            s.append_pair("q", &q);
        }
        s.append_pair("page", &p.to_string());
        format!("/console/sites/{id}/knowledge?{}", s.finish())
    };
    let documents = rows
        .into_iter()
        .map(|d| pages::DocumentItem {
            source: d.url.clone().unwrap_or_else(|| d.source.clone()),
            link: d.url.as_deref().and_then(|u| url::Url::parse(u).ok()).filter(|u| matches!(u.scheme(), "http" | "https")).map(|u| u.to_string()),
            kind: if d.url.is_some() { t.kb_kind_web } else { t.kb_kind_file },
            title: d.title,
            lang: d.lang.unwrap_or_default(),
            chunks: d.chunks,
            changed: views::when(d.updated_at),
            id: d.id,
        })
        .collect();
    let status = if notice.errors.is_empty() { StatusCode::OK } else { notice.status.unwrap_or(StatusCode::UNPROCESSABLE_ENTITY) };
    let (prev, next) = ((page > 1).then(|| link(page - 1)), (page < pages_total).then(|| link(page + 1)));
    views::render(
        status,
        pages::KnowledgeDocuments {
            t,
            me: Some(views::header_of(me)),
            nav: views::site_nav(site, role, "knowledge"),
            sub: "documents",
            csrf: &me.csrf,
            edit: role.may_edit(),
            q,
            total,
            page,
            pages_total,
            prev,
            next,
            documents,
            done: notice.done,
            errors: notice.errors,
            max_size: size_text(state.config.knowledge.max_file_bytes),
            max_files: MAX_FILES,
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
        Some("deleted") => Some(t.kb_deleted.to_owned()),
        Some("uploaded") => Some(format!("{} {}", t.kb_uploaded, query_value(req, "n").and_then(|n| n.parse::<u32>().ok()).unwrap_or(0))),
        _ => None,
    };
    documents_page(state, req, t, &me, site, role, Notice { done, ..Default::default() }).await
}

/// The name an uploaded file is stored under (its document's source): the file's own name without any
/// directory a browser sent, without control characters, at most 200 characters.
fn upload_name(raw: &str) -> String {
    let base = raw.rsplit(['/', '\\']).next().unwrap_or(raw);
    base.chars().filter(|c| !c.is_control()).take(200).collect::<String>().trim().to_owned()
}

/// A size limit in words: `20 MiB`, `64 KiB`, `900 bytes`.
fn size_text(bytes: u64) -> String {
    match bytes {
        b if b >= 1024 * 1024 && b % (1024 * 1024) == 0 => format!("{} MiB", b / (1024 * 1024)),
        b if b >= 1024 => format!("{} KiB", b / 1024),
        b => format!("{b} bytes"),
    }
}

/// Why an upload is refused before anything is stored.
enum Refused {
    /// Not this session's form: 403.
    Forbidden,
    /// What is wrong with the files (422).
    Invalid(Vec<String>),
    /// More than `console.upload_bytes` in all (413).
    TooLarge(String),
}

/// A file of an upload, written to an unnamed temporary file (removed when dropped).
struct Spooled {
    name: String,
    format: Format,
    file: std::fs::File,
}

impl Spooled {
    /// The file as `knowledge::import` reads it: its bytes in memory, one file at a time.
    fn input(mut self) -> std::io::Result<Input> {
        use std::io::{Read, Seek};
        let mut bytes = Vec::new();
        self.file.rewind()?;
        self.file.read_to_end(&mut bytes)?;
        Ok(Input { name: self.name, format: self.format, bytes })
    }
}

/// Limits of one upload: each file's and the whole request's bytes, and where files are spooled.
struct UploadLimits<'a> {
    file_bytes: u64,
    total_bytes: u64,
    spool_dir: &'a std::path::Path,
}

/// Reads the upload: the CSRF field first (else [`Refused::Forbidden`] before any file is read), then
/// the files, each checked against the formats `knowledge import` takes and `knowledge.max_file_bytes`,
/// and written to disk as it arrives; the request as a whole stops at `console.upload_bytes`.
async fn read_upload(t: &Texts, me: &Me, req: &Request, body: Body, limits: UploadLimits<'_>) -> Result<Vec<Spooled>, Refused> {
    let max = limits.file_bytes;
    let mut total: u64 = 0;
    let mut body = RequestBody::new(body);
    let Ok(mut form) = Multipart::from_request(req, &mut body).await else { return Err(Refused::Forbidden) };
    match form.next_field().await {
        Ok(Some(f)) if f.name() == Some("csrf") => match f.text().await {
            Ok(token) if me.csrf_matches(&token) => {}
            _ => return Err(Refused::Forbidden),
        },
        _ => return Err(Refused::Forbidden),
    }
    let (mut inputs, mut errors) = (Vec::new(), Vec::new());
    loop {
        let field = match form.next_field().await {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(_) => return Err(Refused::Invalid(vec![t.kb_upload_broken.to_owned()])),
        };
        if field.name() != Some("files") {
            continue;
        }
        let name = upload_name(field.file_name().unwrap_or(""));
        if name.is_empty() {
            // A file input left empty sends a part without a name.
            continue;
        }
        if inputs.len() + errors.len() >= MAX_FILES {
            return Err(Refused::Invalid(vec![format!("{} {MAX_FILES}", t.kb_too_many_files)]));
        }
        let Some(format) = Format::from_path(std::path::Path::new(&name)) else {
            errors.push(format!("{name}: {}", t.kb_unsupported));
            continue;
        };
        let broken = || Refused::Invalid(vec![t.kb_upload_broken.to_owned()]);
        let file = tempfile::tempfile_in(limits.spool_dir).map_err(|e| {
            tracing::error!(error = %e, "cannot spool an upload in the data directory");
            broken()
        })?;
        let mut out = tokio::fs::File::from_std(file);
        let mut reader = field.into_async_read();
        let (mut size, mut buf) = (0u64, vec![0u8; 64 * 1024]);
        loop {
            let n = reader.read(&mut buf).await.map_err(|_| broken())?;
            if n == 0 {
                break;
            }
            size += n as u64;
            total += n as u64;
            if size > max {
                // The rest of the body is not read: the edge discards it.
                errors.push(format!("{name}: {} {}", t.kb_too_large, size_text(max)));
                return Err(Refused::Invalid(errors));
            }
            if total > limits.total_bytes {
                return Err(Refused::TooLarge(format!("{} {}", t.kb_upload_too_large, size_text(limits.total_bytes))));
            }
            out.write_all(&buf[..n]).await.map_err(|_| broken())?;
        }
        out.flush().await.map_err(|_| broken())?;
        inputs.push(Spooled { name, format, file: out.into_std().await });
    }
    if !errors.is_empty() {
        return Err(Refused::Invalid(errors));
    }
    if inputs.is_empty() {
        return Err(Refused::Invalid(vec![t.kb_no_files.to_owned()]));
    }
    Ok(inputs)
}

#[handler]
pub async fn upload(req: &Request, body: Body, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, site, role) = match site_for(state, req, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    if !session::same_origin(req) {
        return views::message(t, Some(&me), StatusCode::FORBIDDEN, t.forbidden_title, t.forbidden);
    }
    if !role.may_edit() {
        return views::role_refused(t, &me);
    }
    let limits = UploadLimits { file_bytes: state.config.knowledge.max_file_bytes, total_bytes: state.config.console.upload_bytes, spool_dir: &state.data_dir };
    let spooled = match read_upload(t, &me, req, body, limits).await {
        Ok(i) => i,
        Err(Refused::Forbidden) => return views::message(t, Some(&me), StatusCode::FORBIDDEN, t.forbidden_title, t.forbidden),
        Err(Refused::Invalid(errors)) => return documents_page(state, req, t, &me, site, role, Notice { errors, ..Default::default() }).await,
        Err(Refused::TooLarge(error)) => {
            let notice = Notice { errors: vec![error], status: Some(StatusCode::PAYLOAD_TOO_LARGE), ..Default::default() };
            return documents_page(state, req, t, &me, site, role, notice).await;
        }
    };
    let names: Vec<String> = spooled.iter().map(|i| i.name.clone()).collect();
    let (store, knowledge, id) = (state.store.clone(), state.knowledge.clone(), site.id);
    // Parsing and embedding are CPU work: a blocking thread, the embedder's own pool bounding it. One
    // file is read back and imported at a time.
    let imported = tokio::task::spawn_blocking(move || {
        let mut report = import::ImportReport::default();
        for file in spooled {
            let input = file.input()?;
            report.add(import::import(&store, knowledge.models(), &id, std::slice::from_ref(&input), false, &|_, _| {})?);
        }
        knowledge.sync_index_blocking(&store, &id)?;
        anyhow::Ok(report)
    })
    .await;
    let report = match imported {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => return views::failed(t, Some(&me), e),
        Err(e) => return views::failed(t, Some(&me), e),
    };
    let failed: Vec<String> = report.failed.iter().map(|f| format!("{}: {}", f.path, f.reason)).collect();
    views::audit(
        state,
        &me.email,
        Some(id),
        "documents_uploaded",
        json!({"files": names, "documents": report.documents, "chunks": report.chunks,
        "unchanged": report.skipped, "failed": failed}),
    )
    .await;
    if !failed.is_empty() {
        let done = Some(format!("{} {}", t.kb_uploaded, report.documents + report.skipped));
        return documents_page(state, req, t, &me, site, role, Notice { done, errors: failed, ..Default::default() }).await;
    }
    see_other(&format!("/console/sites/{id}/knowledge?done=uploaded&n={}", report.documents + report.skipped))
}

#[handler]
pub async fn delete_form(req: &Request, Path((raw, doc)): Path<(String, String)>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, site, role, found) = match views::editor_item(state, req, &raw, move |s, id| s.site(id).knowledge().document(&doc)).await {
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
            title: t.kb_delete_document.to_owned(),
            what: found.title,
            detail: found.url.unwrap_or(found.source),
            action: format!("/console/sites/{id}/knowledge/documents/{}/delete", found.id),
            fields: vec![],
            button: t.kb_delete.to_owned(),
            back: format!("/console/sites/{id}/knowledge"),
        },
    )
}

/// A confirmation page of the knowledge pages: what is about to go, one button, a way back.
pub(super) fn confirm(t: &'static Texts, me: &Me, site: Site, role: SiteRole, c: pages::Confirm) -> Response {
    views::render(
        StatusCode::OK,
        pages::KnowledgeConfirm { t, me: Some(views::header_of(me)), nav: views::site_nav(site, role, "knowledge"), csrf: &me.csrf, c },
    )
}

#[handler]
pub async fn delete(req: &Request, body: Body, Path((raw, doc)): Path<(String, String)>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, site, _, _) = match views::editor_post(state, req, body, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let (store, knowledge, id) = (state.store.clone(), state.knowledge.clone(), site.id);
    let deleted = tokio::task::spawn_blocking(move || {
        let kb = store.site(id).knowledge();
        let Some(found) = kb.document(&doc)? else { return anyhow::Ok(None) };
        kb.delete_document(&found.id)?;
        knowledge.sync_index_blocking(&store, &id)?;
        Ok(Some(found))
    })
    .await;
    match deleted {
        Ok(Ok(Some(d))) => {
            views::audit(state, &me.email, Some(id), "document_deleted", json!({"document": d.id, "title": d.title, "source": d.source})).await;
            see_other(&format!("/console/sites/{id}/knowledge?done=deleted"))
        }
        Ok(Ok(None)) => views::not_found(t, Some(&me)),
        Ok(Err(e)) => views::failed(t, Some(&me), e),
        Err(e) => views::failed(t, Some(&me), e),
    }
}
