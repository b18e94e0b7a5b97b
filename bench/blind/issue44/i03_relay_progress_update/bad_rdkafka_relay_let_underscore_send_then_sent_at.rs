// Bad (MA014): the delivery result of the awaited Kafka send is discarded with `let _ =`, then
// the row gets `sent_at = now()` in the relay's transaction. SPEC: "marking them after a publish
// whose failure it ignores is MA014"; MA014 lists "`let _ =`" among the ways a failure is ignored.
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
        let _ = producer
            .send(FutureRecord::to(&topic).key(&key).payload(&payload), Duration::from_secs(5))
            .await;
        sqlx::query("UPDATE integration_events SET sent_at = now() WHERE id = $1").bind(id).execute(&mut *tx).await?; //~ MA014
    }
    tx.commit().await?;
    Ok(())
}
