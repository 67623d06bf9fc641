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
    let ok = state.store.read(|c| Ok(c.query_row("SELECT 1", [], |r| r.get::<_, i64>(0))?)).await.map_err(|e| ApiError::Unavailable(e.to_string()))?;
    if ok != 1 {
        return Err(ApiError::Unavailable("database check failed".into()).into());
    }
    Ok(Json(json!({"status": "ready"})))
}
