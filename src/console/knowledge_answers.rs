//! A site's curated answers in the console (#25): list, add, edit, delete. Adding and editing embed the
//! question with the loaded model on a blocking thread (`knowledge::answer::curated`), as the review
//! queue's "write an answer" and `sitebot knowledge answer add` do.
//!
//! - `GET /console/sites/{site}/knowledge/answers`: the list and, for editors, the form to add one.
//! - `POST .../answers`: add; `GET|POST .../answers/{id}`: the edit form, save;
//!   `GET|POST .../answers/{id}/delete`: confirm, then delete.

use std::sync::Arc;

use poem::http::StatusCode;
use poem::web::{Data, Path};
use poem::{Body, Request, Response, handler};
use serde_json::json;

use super::knowledge::{confirm, query_value};
use super::pages::{self, AnswerForm};
use super::session::Me;
use super::texts::{self, Texts};
use super::views::{self, field, see_other, site_for};
use crate::app::AppState;
use crate::domain::SiteRole;
use crate::store::Site;

/// A curated question and answer at most (as the review queue takes them).
const MAX_QUESTION: usize = 500;
const MAX_ANSWER: usize = 4000;

fn form_of(fields: &[(String, String)]) -> AnswerForm {
    AnswerForm {
        question: field(fields, "question").trim().to_owned(),
        answer: field(fields, "answer").trim().to_owned(),
        url: field(fields, "url").trim().to_owned(),
    }
}

/// The form's link, or `Err` when the form is not a valid curated answer.
fn valid(f: &AnswerForm) -> Result<Option<String>, ()> {
    let ok = !f.question.is_empty() && f.question.chars().count() <= MAX_QUESTION && !f.answer.is_empty() && f.answer.chars().count() <= MAX_ANSWER;
    if !ok {
        return Err(());
    }
    views::link(&f.url)
}

#[allow(clippy::too_many_arguments)] // one page's parts, each needed
async fn list_page(
    state: &AppState,
    t: &'static Texts,
    me: &Me,
    site: Site,
    role: SiteRole,
    form: AnswerForm,
    error: Option<&'static str>,
    done: Option<&'static str>,
) -> Response {
    let id = site.id;
    let answers = match super::lane::read(&state.store, move |s| s.site(id).curated().list()).await {
        Ok(a) => a,
        Err(e) => return views::failed(t, Some(me), e),
    };
    let answers = answers
        .into_iter()
        .map(|a| pages::AnswerItem {
            id: a.id,
            question: a.question,
            answer: views::short(&a.answer, 300),
            url: a.url.unwrap_or_default(),
            at: views::when(a.created_at),
        })
        .collect();
    let status = if error.is_some() { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::OK };
    views::render(
        status,
        pages::KnowledgeAnswers {
            t,
            me: Some(views::header_of(me)),
            nav: views::site_nav(site, role, "knowledge"),
            sub: "answers",
            csrf: &me.csrf,
            edit: role.may_edit(),
            answers,
            form,
            error,
            done,
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
        Some("added") => Some(t.kb_answer_added),
        Some("saved") => Some(t.kb_answer_saved),
        Some("deleted") => Some(t.kb_answer_deleted),
        _ => None,
    };
    list_page(state, t, &me, site, role, AnswerForm::default(), None, done).await
}

#[handler]
pub async fn add(req: &Request, body: Body, Path(raw): Path<String>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, site, role, fields) = match views::editor_post(state, req, body, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let form = form_of(&fields);
    let Ok(link) = valid(&form) else { return list_page(state, t, &me, site, role, form, Some(t.answer_invalid), None).await };
    let (store, embedder, id, f, l) = (state.store.clone(), state.knowledge.embedder.clone(), site.id, form.clone(), link.clone());
    let added = tokio::task::spawn_blocking(move || crate::knowledge::answer::curated::add(&store, &embedder, &id, &f.question, &f.answer, l.as_deref())).await;
    let answer = match added {
        Ok(Ok(a)) => a,
        Ok(Err(e)) => return views::failed(t, Some(&me), e),
        Err(e) => return views::failed(t, Some(&me), e),
    };
    let short = |s: &str| s.chars().take(200).collect::<String>();
    views::audit(
        state,
        &me.email,
        Some(id),
        "curated_added",
        json!({"answerId": answer.id, "question": short(&form.question), "answer": short(&form.answer), "url": link}),
    )
    .await;
    see_other(&format!("/console/sites/{id}/knowledge/answers?done=added"))
}

fn edit_page(t: &'static Texts, me: &Me, site: Site, role: SiteRole, answer_id: String, form: AnswerForm, error: Option<&'static str>) -> Response {
    let status = if error.is_some() { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::OK };
    views::render(
        status,
        pages::KnowledgeAnswer {
            t,
            me: Some(views::header_of(me)),
            nav: views::site_nav(site, role, "knowledge"),
            sub: "answers",
            csrf: &me.csrf,
            answer_id,
            form,
            error,
        },
    )
}

#[handler]
pub async fn edit_form(req: &Request, Path((raw, answer)): Path<(String, String)>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, site, role, found) = match views::editor_item(state, req, &raw, move |s, id| s.site(id).curated().get(&answer)).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let form = AnswerForm { question: found.question, answer: found.answer, url: found.url.unwrap_or_default() };
    edit_page(t, &me, site, role, found.id, form, None)
}

#[handler]
pub async fn save(req: &Request, body: Body, Path((raw, answer)): Path<(String, String)>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, site, role, fields) = match views::editor_post(state, req, body, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let form = form_of(&fields);
    let Ok(link) = valid(&form) else { return edit_page(t, &me, site, role, answer, form, Some(t.answer_invalid)) };
    let (store, embedder, id, f, l, a) = (state.store.clone(), state.knowledge.embedder.clone(), site.id, form.clone(), link.clone(), answer.clone());
    let saved =
        tokio::task::spawn_blocking(move || crate::knowledge::answer::curated::update(&store, &embedder, &id, &a, &f.question, &f.answer, l.as_deref())).await;
    match saved {
        Ok(Ok(_)) => {}
        Ok(Err(e)) if matches!(e.downcast_ref::<crate::store::StoreError>(), Some(crate::store::StoreError::NotFound)) => {
            return views::not_found(t, Some(&me));
        }
        Ok(Err(e)) => return views::failed(t, Some(&me), e),
        Err(e) => return views::failed(t, Some(&me), e),
    }
    let short = |s: &str| s.chars().take(200).collect::<String>();
    views::audit(
        state,
        &me.email,
        Some(id),
        "curated_edited",
        json!({"answerId": answer, "question": short(&form.question), "answer": short(&form.answer), "url": link}),
    )
    .await;
    see_other(&format!("/console/sites/{id}/knowledge/answers?done=saved"))
}

#[handler]
pub async fn delete_form(req: &Request, Path((raw, answer)): Path<(String, String)>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, site, role, found) = match views::editor_item(state, req, &raw, move |s, id| s.site(id).curated().get(&answer)).await {
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
            title: t.kb_delete_answer.to_owned(),
            what: found.question,
            detail: views::short(&found.answer, 300),
            action: format!("/console/sites/{id}/knowledge/answers/{}/delete", found.id),
            fields: vec![],
            button: t.kb_delete.to_owned(),
            back: format!("/console/sites/{id}/knowledge/answers"),
        },
    )
}

#[handler]
pub async fn delete(req: &Request, body: Body, Path((raw, answer)): Path<(String, String)>, Data(state): Data<&Arc<AppState>>) -> Response {
    let t = texts::for_request(req);
    let (me, site, _, _) = match views::editor_post(state, req, body, &raw).await {
        Ok(v) => v,
        Err(page) => return page,
    };
    let (id, a) = (site.id, answer.clone());
    match state.store.run(move |s| s.site(id).curated().delete(&a)).await {
        Ok(()) => {}
        Err(crate::store::StoreError::NotFound) => return views::not_found(t, Some(&me)),
        Err(e) => return views::failed(t, Some(&me), e),
    }
    views::audit(state, &me.email, Some(id), "curated_deleted", json!({"answerId": answer})).await;
    see_other(&format!("/console/sites/{id}/knowledge/answers?done=deleted"))
}
