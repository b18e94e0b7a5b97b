// Bad (MA014): the outbox relay calls `publish_row`, which calls `send_record`; `send_record`
// logs a failed Kafka delivery and returns Ok(()). The relay then marks the row as published, so
// the event is never sent. SPEC outbox decision: "marking them after a publish whose failure it
// ignores is MA014"; "Across functions, the primary location is the offending call where it is
// written" — the progress record (the UPDATE) in the relay.
use std::time::Duration;

use rdkafka::producer::{FutureProducer, FutureRecord};
use sqlx::{PgPool, Row};
use tracing::warn;

pub async fn relay_once(pool: &PgPool, producer: &FutureProducer) -> anyhow::Result<usize> {
    let rows = sqlx::query(
        "SELECT id, topic, msg_key, body FROM outbox WHERE published_at IS NULL ORDER BY id LIMIT 100",
    )
    .fetch_all(pool)
    .await?;

    for row in &rows {
        let id: i64 = row.get("id");
        publish_row(producer, row).await?;
        sqlx::query("UPDATE outbox SET published_at = now() WHERE id = $1").bind(id).execute(pool).await?; //~ MA014
    }
    Ok(rows.len())
}

async fn publish_row(producer: &FutureProducer, row: &sqlx::postgres::PgRow) -> anyhow::Result<()> {
    let topic: String = row.get("topic");
    let key: String = row.get("msg_key");
    let body: Vec<u8> = row.get("body");
    send_record(producer, &topic, &key, &body).await?;
    Ok(())
}

async fn send_record(producer: &FutureProducer, topic: &str, key: &str, body: &[u8]) -> anyhow::Result<()> {
    let record = FutureRecord::to(topic).key(key).payload(body);
    if let Err((e, _)) = producer.send(record, Duration::from_secs(5)).await {
        warn!(error = %e, topic, key, "outbox delivery failed");
    }
    Ok(())
}
