//! Handlers of the public API, one module per resource. Each reads its inputs through the extractors
//! of `http` (parsed, validated) and its tenant through `Data<&Tenant>`.

pub mod answer;
pub mod events;
pub mod feedback;
pub mod handoff;
pub mod health;
pub mod landing;
pub mod leads;
pub mod multimodal;
pub mod pricing;
pub mod query;
pub mod stats;
pub mod stream;
pub mod token;
pub mod widget;

use std::sync::Arc;

use poem::endpoint::make;
use poem::{EndpointExt, Route, get, post};

use crate::app::AppState;
use crate::http::edge::Edge;
use crate::http::error::ApiError;
use crate::http::openapi;
use crate::http::scope::{PublicScope, TenantScope};

/// The API's route table, behind the `Edge`. Every handler sits in a scope that decides what its
/// requests count against; the scope wraps the handler, not the route, so a wrong method is a 405 before
/// any tenant lookup.
pub fn routes(state: Arc<AppState>) -> impl poem::Endpoint<Output = poem::Response> {
    Edge::new(table().data(state.clone()), state)
}

/// The API's routes without the edge and the state, for the server to put beside the console's
/// (`server::routes`).
pub fn table() -> Route {
    const GET: &str = "GET, HEAD";
    const POST: &str = "POST";
    let multimodal = make(|req: poem::Request| async move { Err::<(), _>(multimodal::answer(&req)) });
    Route::new()
        .at("/healthz", only(GET, get(health::healthz.with(PublicScope::default()))))
        .at("/readyz", only(GET, get(health::readyz.with(PublicScope::default()))))
        .at("/v1/openapi.json", only(GET, get(openapi::serve.with(PublicScope::default()))))
        // Answers 501 to every POST within the multipart limit, whatever it holds; 413 beyond it.
        .at("/v1/query/ask-multimodal", only(POST, post(multimodal.with(PublicScope::default()))))
        .at("/v1/leads", only(POST, post(leads::create.with(TenantScope))))
        .at("/v1/query", only(POST, post(query::ask.with(TenantScope))))
        .at("/v1/query/stream", only(POST, post(stream::ask.with(TenantScope))))
        .at("/v1/conversations/:conversationId/handoff", only(POST, post(handoff::ask_person.with(TenantScope))))
        .at("/v1/conversations/:conversationId/handoff/cancel", only(POST, post(handoff::cancel.with(TenantScope))))
        .at("/v1/conversations/:conversationId/messages", only(POST, post(handoff::send_message.with(TenantScope))))
        .at("/v1/conversations/:conversationId/events", only(GET, get(handoff::event_stream.with(TenantScope))))
        .at("/v1/feedback", only(POST, post(feedback::create.with(TenantScope))))
        .at("/v1/events", only(POST, post(events::create.with(TenantScope))))
        .at("/v1/widget/config", only(GET, get(widget::config.with(TenantScope))))
        .at("/v1/widget.js", only(GET, get(widget::script.with(PublicScope::default()))))
        // Public content: no header needed, counted per client IP. The sitemap route has one segment
        // fewer than a page, so the two never compete for a path.
        .at("/v1/landing/:site/sitemap-slugs", only(GET, get(landing::sitemap.with(PublicScope::default()))))
        .at("/v1/landing/:site/:lang/:slug", only(GET, get(landing::page.with(PublicScope::default()))))
        .at("/v1/pricing/:vertical", only(GET, get(pricing::get.with(PublicScope::OPTIONAL_SITE))))
        .at("/v1/public-stats/:siteId", only(GET, get(stats::get.with(PublicScope::default()))))
}

/// A route that takes `allow` (`"GET, HEAD"`, `"POST"`): any other method is 405 with that `Allow` header
/// (RFC 9110 §15.5.6).
fn only<E: poem::Endpoint + 'static>(allow: &'static str, route: E) -> impl poem::Endpoint<Output = poem::Response> {
    route.map_to_response().around(move |ep, req| async move {
        poem::Endpoint::call(&*ep, req)
            .await
            .map_err(|e| if e.is::<poem::error::MethodNotAllowedError>() { ApiError::MethodNotAllowed { allow }.into() } else { e })
    })
}
