// Bad (MA005): an axum handler records the request's `Idempotency-Key` in `idempotency_keys`
// inside its tokio-postgres transaction but ignores the returned row count, then transfers the
// amount. A retried request moves the money twice. SPEC: "MA005 also applies in any function whose
// claim goes into a table recognized as a dedup record by its name (... `idempotency*` ...)";
// primary: "the dedup claim".
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
    tx.execute("INSERT INTO idempotency_keys (key) VALUES ($1) ON CONFLICT DO NOTHING", &[&key]).await.map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)?; //~ MA005
    tx.execute("UPDATE accounts SET cents = cents - $1 WHERE id = $2", &[&t.cents, &t.from])
        .await
        .map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)?;
    tx.execute("UPDATE accounts SET cents = cents + $1 WHERE id = $2", &[&t.cents, &t.to])
        .await
        .map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)?;
    tx.commit().await.map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)?;
    Ok(StatusCode::CREATED)
}
