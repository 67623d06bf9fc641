//! `GET /v1/landing/{site}/{lang}/{slug}` and `GET /v1/landing/{site}/sitemap-slugs`: published
//! landing-page payloads and the slugs a renderer builds its sitemap from. Public, cacheable (ETag,
//! Last-Modified, `max-age=300`, 304 on `If-None-Match`). Drafts and malformed addresses are 404 alike,
//! and a malformed address never reaches the store.

use std::sync::Arc;

use poem::web::{Data, Path};
use poem::{Request, Response, handler};

use crate::app::AppState;
use crate::content::page::{LandingPayload, SitemapEntry};
use crate::domain::{Lang, Slug};
use crate::http::conditional;
use crate::http::error::ApiError;

const CACHE_CONTROL: &str = "public, max-age=300";

fn encode<T: serde::Serialize>(v: &T) -> Result<Vec<u8>, ApiError> {
    serde_json::to_vec(v).map_err(|e| ApiError::Internal(e.to_string()))
}

#[handler]
pub async fn page(req: &Request, Path((site, lang, slug)): Path<(String, String, String)>, Data(state): Data<&Arc<AppState>>) -> poem::Result<Response> {
    let (Ok(vertical), Ok(lang), Ok(slug)) = (Slug::vertical(&site), Lang::parse(&lang), Slug::parse(&slug, 128)) else {
        return Err(ApiError::NotFound.into());
    };
    let (v, l, s) = (vertical.clone(), lang.clone(), slug.clone());
    let page = state.store.run(move |st| st.content().published_page(&v, &l, &s)).await.map_err(ApiError::from)?.ok_or(ApiError::NotFound)?;
    let payload = LandingPayload::new(&vertical, &lang, &slug, page);
    Ok(conditional::json(req, encode(&payload)?, Some(payload.updated_at), CACHE_CONTROL))
}

#[handler]
pub async fn sitemap(req: &Request, Path(site): Path<String>, Data(state): Data<&Arc<AppState>>) -> poem::Result<Response> {
    let Ok(vertical) = Slug::vertical(&site) else { return Err(ApiError::NotFound.into()) };
    let (rows, last_modified) = state.store.run(move |s| s.content().sitemap(&vertical)).await.map_err(ApiError::from)?.ok_or(ApiError::NotFound)?;
    let entries: Vec<SitemapEntry> = rows.into_iter().map(SitemapEntry::from).collect();
    Ok(conditional::json(req, encode(&entries)?, Some(last_modified), CACHE_CONTROL))
}
