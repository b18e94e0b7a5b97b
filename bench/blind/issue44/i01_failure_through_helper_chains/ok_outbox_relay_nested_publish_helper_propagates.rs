// OK: the same relay, but `send_record` maps the delivery error into the result and every level
// `?`s it: a failed send leaves the row unmarked for the next pass.
// SPEC outbox decision: only "marking them after a publish whose failure it ignores is MA014".
use std::time::Duration;

use rdkafka::producer::{FutureProducer, FutureRecord};
use sqlx::{PgPool, Row};

pub async fn relay_once(pool: &PgPool, producer: &FutureProducer) -> anyhow::Result<usize> {
    let rows = sqlx::query(
        "SELECT id, topic, msg_key, body FROM outbox WHERE published_at IS NULL ORDER BY id LIMIT 100",
    )
    .fetch_all(pool)
    .await?;

    for row in &rows {
        let id: i64 = row.get("id");
        publish_row(producer, row).await?;
        sqlx::query("UPDATE outbox SET published_at = now() WHERE id = $1").bind(id).execute(pool).await?;
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
    producer
        .send(record, Duration::from_secs(5))
        .await
        .map_err(|(e, _)| anyhow::anyhow!("delivery to {topic} failed: {e}"))?;
    Ok(())
}
