// OK: the same handler; the row count of the `idempotency_keys` insert is tested and a replayed
// key returns 200 without moving money. SPEC §1: "The result of the dedup claim ... must gate the
// effect."
use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use serde::Deserialize;
use tokio::sync::Mutex;
use tokio_postgres::Client;

#[derive(Deserialize)]
pub struct Transfer {
    from: i64,
    to: i64,
    cents: i64,
}

pub async fn transfer(
    State(db): State<Arc<Mutex<Client>>>,
    headers: HeaderMap,
    Json(t): Json<Transfer>,
) -> Result<StatusCode, StatusCode> {
    let key = headers
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .ok_or(StatusCode::BAD_REQUEST)?
        .to_owned();
    let mut client = db.lock().await;
    let tx = client.transaction().await.map_err(|_| StatusCode::SERVICE_UNAVAILABLE)?;
    let inserted = tx
        .execute("INSERT INTO idempotency_keys (key) VALUES ($1) ON CONFLICT DO NOTHING", &[&key])
        .await
        .map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)?;
    if inserted == 0 {
        tx.rollback().await.map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)?;
        return Ok(StatusCode::OK);
    }
    tx.execute("UPDATE accounts SET cents = cents - $1 WHERE id = $2", &[&t.cents, &t.from])
        .await
        .map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)?;
    tx.execute("UPDATE accounts SET cents = cents + $1 WHERE id = $2", &[&t.cents, &t.to])
        .await
        .map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)?;
    tx.commit().await.map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)?;
    Ok(StatusCode::CREATED)
}
