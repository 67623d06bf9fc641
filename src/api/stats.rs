//! `GET /v1/public-stats/{siteId}`: a site's public counters. One primary-key read of counters kept up
//! to date by the transactions that log queries and leads, so the cost does not grow with traffic.

use std::sync::Arc;

use poem::http::{HeaderValue, header};
use poem::web::{Data, Path};
use poem::{Response, handler};

use crate::app::AppState;
use crate::content::stats::PublicStats;
use crate::domain::SiteId;
use crate::http::error::ApiError;

#[handler]
pub async fn get(Path(id): Path<String>, Data(state): Data<&Arc<AppState>>) -> poem::Result<Response> {
    let id = SiteId::parse(&id).map_err(|e| ApiError::InvalidSiteId(e.0))?;
    let counters = state.store.run(move |s| s.site(id).counters()).await.map_err(ApiError::from)?.ok_or(ApiError::SiteNotFound)?;
    if !counters.site_enabled {
        return Err(ApiError::SiteDisabled.into());
    }
    let body = PublicStats::new(id, &counters, chrono::Utc::now().date_naive());
    let body = serde_json::to_vec(&body).map_err(|e| ApiError::Internal(e.to_string()))?;
    let mut resp = Response::builder().content_type("application/json").body(body);
    resp.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=60"));
    Ok(resp)
}
