//! `GET /v1/pricing/{vertical}`: live prices. The price list, the rates and the site are read from the
//! store on every request (one read, three indexed lookups), so a CLI change shows on the next request.
//!
//! Language: `?lang=`, else `Accept-Language`, else the vertical's default. Currency: the site's when
//! `X-Site-Id` is sent, else `?currency=`, else the vertical's default. Responses vary on both headers
//! and carry an ETag with `Cache-Control: public, no-cache`: caches may keep them but revalidate each
//! time, which costs a 304 and never serves a stale price.

use std::sync::Arc;

use poem::http::{HeaderValue, header};
use poem::web::{Data, Path, Query};
use poem::{Request, Response, handler};
use serde::Deserialize;

use crate::app::AppState;
use crate::content::money::Rate;
use crate::content::quote::{self, QuoteError};
use crate::domain::{Currency, Lang, Slug};
use crate::http::conditional;
use crate::http::error::ApiError;
use crate::http::scope::OptionalTenant;
use crate::store::content::Vertical;
use crate::store::pricing::StoredSheet;
use crate::store::{Store, StoreError};

#[derive(Debug, Deserialize)]
pub struct PricingQuery {
    lang: Option<String>,
    currency: Option<String>,
}

/// Everything one request needs, read in one unit of work.
struct Inputs {
    vertical: Vertical,
    sheet: StoredSheet,
    base_rate: Option<Rate>,
    target_rate: Option<Rate>,
}

/// `None` when the vertical or its price list does not exist.
fn read_inputs(
    store: &Store,
    vertical: &Slug,
    target: impl FnOnce(&Vertical) -> Currency,
    reference: Currency,
) -> Result<Option<(Inputs, Currency)>, StoreError> {
    let Some(v) = store.content().vertical(vertical)? else { return Ok(None) };
    let Some(sheet) = store.pricing().sheet(vertical)? else { return Ok(None) };
    let target = target(&v);
    let base_rate = store.pricing().rate(reference, sheet.currency)?;
    let target_rate = store.pricing().rate(reference, target)?;
    Ok(Some((Inputs { vertical: v, sheet, base_rate, target_rate }, target)))
}

#[handler]
pub async fn get(
    req: &Request,
    Path(vertical): Path<String>,
    Query(q): Query<PricingQuery>,
    Data(state): Data<&Arc<AppState>>,
    Data(site): Data<&OptionalTenant>,
) -> poem::Result<Response> {
    let Ok(vertical) = Slug::vertical(&vertical) else { return Err(ApiError::NotFound.into()) };
    let mut errors = Vec::new();
    let query_lang = q.lang.as_deref().and_then(|l| Lang::parse(l).map_err(|e| errors.push(("lang", e.0))).ok());
    let query_currency = q.currency.as_deref().and_then(|c| Currency::parse(c).map_err(|e| errors.push(("currency", e.0))).ok());
    if !errors.is_empty() {
        return Err(ApiError::Validation(errors.into_iter().map(|(f, m)| crate::http::error::FieldError::new(f, m)).collect()).into());
    }
    let site_currency = site.0.as_ref().map(|t| t.site.currency);
    let reference = Currency::parse(&state.config.pricing.reference_currency).map_err(|e| ApiError::Internal(e.0))?;
    let target = move |v: &Vertical| site_currency.or(query_currency).unwrap_or(v.default_currency);
    let (inputs, target) = state.store.run(move |s| read_inputs(s, &vertical, target, reference)).await.map_err(ApiError::from)?.ok_or(ApiError::NotFound)?;
    let accept = req.headers().get(header::ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok());
    let lang = quote::choose_lang(&inputs.vertical, query_lang.as_ref(), accept).map_err(|e| ApiError::validation("lang", e.to_string()))?;
    let payload = quote::quote(&inputs.vertical, &inputs.sheet, &lang, target, inputs.base_rate, inputs.target_rate, reference).map_err(|e| match e {
        QuoteError::LangNotOffered { .. } => ApiError::validation("lang", e.to_string()),
        QuoteError::NoRate(..) | QuoteError::Overflow(_) => ApiError::validation("currency", e.to_string()),
    })?;
    let body = serde_json::to_vec(&payload).map_err(|e| ApiError::Internal(e.to_string()))?;
    let mut resp = conditional::json(req, body, None, "public, no-cache");
    let h = resp.headers_mut();
    if let Ok(v) = HeaderValue::from_str(lang.as_str()) {
        h.insert(header::CONTENT_LANGUAGE, v);
    }
    h.insert(header::VARY, HeaderValue::from_static("Accept-Language, X-Site-Id"));
    Ok(resp)
}
