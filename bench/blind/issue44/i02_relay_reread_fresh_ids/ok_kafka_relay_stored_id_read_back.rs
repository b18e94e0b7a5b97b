// OK: the same poll loop, but the `message-id` header is the `event_id` stored in the row when
// the row was written; every pass re-sends the same identity. SPEC MA002 decision: only "an id
// minted per row per pass ... instead of the row's stored id is MA002".
use std::time::Duration;

use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{FutureProducer, FutureRecord};
use sqlx::{PgPool, Row};
use tracing::warn;
use uuid::Uuid;

pub async fn run_relay(pool: PgPool, producer: FutureProducer) -> anyhow::Result<()> {
    loop {
        let rows = sqlx::query(
            "SELECT id, event_id, topic, aggregate_id, payload FROM event_outbox WHERE sent_at IS NULL ORDER BY id LIMIT 50",
        )
        .fetch_all(&pool)
        .await?;

        for row in rows {
            let id: i64 = row.get("id");
            let event_id: Uuid = row.get("event_id");
            let topic: String = row.get("topic");
            let aggregate_id: String = row.get("aggregate_id");
            let payload: Vec<u8> = row.get("payload");
            let message_id = event_id.to_string();

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
