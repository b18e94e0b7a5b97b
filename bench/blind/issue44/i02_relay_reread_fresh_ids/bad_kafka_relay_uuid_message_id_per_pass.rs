// Bad (MA002): the relay re-selects rows with `sent_at IS NULL` every pass; a row whose send
// failed is skipped and picked up again next pass, with a new `Uuid::new_v4()` as its
// `message-id` header. SPEC: "A relay's poll loop that selects the rows not yet marked as sent
// re-sends a row whose last pass failed: for those rows each pass is an attempt, so an id minted
// per row per pass (`Uuid::new_v4`, a `now()`-based id) instead of the row's stored id is MA002."
use std::time::Duration;

use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{FutureProducer, FutureRecord};
use sqlx::{PgPool, Row};
use tracing::warn;
use uuid::Uuid;

pub async fn run_relay(pool: PgPool, producer: FutureProducer) -> anyhow::Result<()> {
    loop {
        let rows = sqlx::query(
            "SELECT id, topic, aggregate_id, payload FROM event_outbox WHERE sent_at IS NULL ORDER BY id LIMIT 50",
        )
        .fetch_all(&pool)
        .await?;

        for row in rows {
            let id: i64 = row.get("id");
            let topic: String = row.get("topic");
            let aggregate_id: String = row.get("aggregate_id");
            let payload: Vec<u8> = row.get("payload");
            let message_id = Uuid::new_v4().to_string(); //~ MA002

            let headers = OwnedHeaders::new().insert(Header { key: "message-id", value: Some(&message_id) });
            let record = FutureRecord::to(&topic).key(&aggregate_id).payload(&payload).headers(headers);
            if let Err((e, _)) = producer.send(record, Duration::from_secs(5)).await {
                warn!(error = %e, id, "send failed, will retry next pass");
                continue;
            }
            sqlx::query("UPDATE event_outbox SET sent_at = now() WHERE id = $1").bind(id).execute(&pool).await?;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
