// OK: the same chain as the bad case, but every helper propagates the UPSERT's error with `?`,
// so the loop returns before `commit_message` and the offset stays uncommitted.
// SPEC MA014 exemption: "a Kafka handler that stops consuming (returns the error, panics, breaks
// the loop) before committing".
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::message::Message;
use serde::Deserialize;
use sqlx::PgPool;

#[derive(Deserialize)]
struct Reading {
    sensor_id: String,
    taken_at: i64,
    celsius: f64,
}

pub async fn run(pool: PgPool) -> anyhow::Result<()> {
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", "kafka:9092")
        .set("group.id", "sensor-sink")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.subscribe(&["sensor.readings"])?;

    loop {
        let msg = consumer.recv().await?;
        let Some(payload) = msg.payload() else { continue };
        handle(&pool, payload).await?;
        consumer.commit_message(&msg, CommitMode::Async)?;
    }
}

async fn handle(pool: &PgPool, payload: &[u8]) -> anyhow::Result<()> {
    let reading: Reading = serde_json::from_slice(payload)?;
    apply(pool, &reading).await?;
    Ok(())
}

async fn apply(pool: &PgPool, reading: &Reading) -> anyhow::Result<()> {
    let bucket = reading.taken_at - reading.taken_at % 60;
    store_reading(pool, reading, bucket).await?;
    Ok(())
}

async fn store_reading(pool: &PgPool, reading: &Reading, bucket: i64) -> anyhow::Result<()> {
    sqlx::query(
        "INSERT INTO sensor_minutes (sensor_id, bucket, celsius) VALUES ($1, $2, $3) \
         ON CONFLICT (sensor_id, bucket) DO UPDATE SET celsius = EXCLUDED.celsius",
    )
    .bind(&reading.sensor_id)
    .bind(bucket)
    .bind(reading.celsius)
    .execute(pool)
    .await?;
    Ok(())
}
