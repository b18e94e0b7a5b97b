// OK: the delivery error is propagated with `?`; the relay's transaction is dropped (rolled back)
// and no row of this batch is marked. SPEC outbox decision: MA014 only for "marking them after a
// publish whose failure it ignores".
use std::time::Duration;

use rdkafka::producer::{FutureProducer, FutureRecord};
use sqlx::{PgPool, Row};

pub async fn drain(pool: &PgPool, producer: &FutureProducer) -> anyhow::Result<()> {
    let mut tx = pool.begin().await?;
    let rows = sqlx::query(
        "SELECT id, topic, key, payload FROM integration_events WHERE sent_at IS NULL \
         ORDER BY id LIMIT 200 FOR UPDATE SKIP LOCKED",
    )
    .fetch_all(&mut *tx)
    .await?;

    for row in &rows {
        let id: i64 = row.get("id");
        let topic: String = row.get("topic");
        let key: String = row.get("key");
        let payload: Vec<u8> = row.get("payload");
        producer
            .send(FutureRecord::to(&topic).key(&key).payload(&payload), Duration::from_secs(5))
            .await
            .map_err(|(e, _)| e)?;
        sqlx::query("UPDATE integration_events SET sent_at = now() WHERE id = $1").bind(id).execute(&mut *tx).await?;
    }
    tx.commit().await?;
    Ok(())
}
