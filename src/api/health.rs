//! `GET /healthz` (the process answers) and `GET /readyz` (the database answers too).

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
    state.store.run(|s| s.ping()).await.map_err(|e| ApiError::Unavailable(e.to_string()))?;
    Ok(Json(json!({"status": "ready"})))
}
