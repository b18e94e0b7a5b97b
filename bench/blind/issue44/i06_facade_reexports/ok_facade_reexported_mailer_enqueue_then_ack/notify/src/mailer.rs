// The real definition behind `platform::mailer`: records the receipt request (a keyed upsert);
// a separate sender drains `receipt_requests`.
use sqlx::PgPool;

pub async fn enqueue_receipt(pool: &PgPool, to: &str, order_id: i64, total: &str) -> anyhow::Result<()> {
    sqlx::query(
        "INSERT INTO receipt_requests (order_id, recipient, total) VALUES ($1, $2, $3) \
         ON CONFLICT (order_id) DO UPDATE SET recipient = EXCLUDED.recipient, total = EXCLUDED.total",
    )
    .bind(order_id)
    .bind(to)
    .bind(total)
    .execute(pool)
    .await?;
    Ok(())
}
