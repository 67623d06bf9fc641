//! `GET /healthz` (the process answers) and `GET /readyz` (the database answers too, and the vector
//! indexes a restored node lacked are built; `storage` says whether the data directory's free space is
//! below `storage.min_free_mb`, when visitors' writes stop but answers go on, so the server stays ready).

use std::sync::Arc;

use poem::handler;
use poem::web::{Data, Json};
use serde_json::{Value, json};

use crate::app::AppState;
use crate::http::error::ApiError;

#[handler]
pub async fn healthz() -> Json<Value> {
    Json(json!({"status": "ok", "version": env!("CARGO_PKG_VERSION")}))
}

#[handler]
pub async fn readyz(Data(state): Data<&Arc<AppState>>) -> poem::Result<Json<Value>> {
    if !*state.indexes_ready.borrow() {
        return Err(ApiError::Starting.into());
    }
    state.store.run(|s| s.ping()).await.map_err(|e| ApiError::Unavailable(e.to_string()))?;
    let storage = if state.free_space.low() { "low" } else { "ok" };
    Ok(Json(json!({"status": "ready", "storage": storage})))
}
