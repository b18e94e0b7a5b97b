// Shared store helper for the workspace's Lambda functions: an idempotent upsert keyed by SKU.
use serde::Deserialize;
use sqlx::PgPool;

#[derive(Debug, Deserialize, Clone)]
pub struct StockDelta {
    pub sku: String,
    pub on_hand: i32,
}

pub async fn save_level(pool: &PgPool, delta: &StockDelta) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO stock_levels (sku, on_hand) VALUES ($1, $2) ON CONFLICT (sku) DO UPDATE SET on_hand = EXCLUDED.on_hand")
        .bind(&delta.sku)
        .bind(delta.on_hand)
        .execute(pool)
        .await?;
    Ok(())
}
