// Bad (MA014): `handle` `?`s `apply`, `apply` `?`s `store_reading`, but `store_reading` logs a
// failed UPSERT and returns Ok(()). The failure never reaches the loop, which commits the offset.
// SPEC MA014: "a handler acks / commits the offset ... on a path where its effect failed (the
// error is logged, matched away ...) and nothing keeps the message"; primary: "the ack call on
// the failure path".
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::message::Message;
use serde::Deserialize;
use sqlx::PgPool;
use tracing::error;

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
        consumer.commit_message(&msg, CommitMode::Async)?; //~ MA014
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
    let res = sqlx::query(
        "INSERT INTO sensor_minutes (sensor_id, bucket, celsius) VALUES ($1, $2, $3) \
         ON CONFLICT (sensor_id, bucket) DO UPDATE SET celsius = EXCLUDED.celsius",
    )
    .bind(&reading.sensor_id)
    .bind(bucket)
    .bind(reading.celsius)
    .execute(pool)
    .await;
    if let Err(e) = res {
        error!(error = %e, sensor = %reading.sensor_id, "storing reading failed");
    }
    Ok(())
}
