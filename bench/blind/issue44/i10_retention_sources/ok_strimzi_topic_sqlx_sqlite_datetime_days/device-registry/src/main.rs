// The consumer: sqlx on SQLite; claim and effect in one transaction, the claim gates the effect,
// the offset is committed after the transaction.
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::message::Message;
use serde::Deserialize;
use sqlx::SqlitePool;

mod cleanup;

#[derive(Deserialize)]
struct Telemetry {
    event_id: String,
    device_id: String,
    firmware: String,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let pool = SqlitePool::connect("sqlite:///data/devices.db").await?;
    let janitor = tokio::spawn(cleanup::run(pool.clone()));
    let result = consume(pool).await;
    janitor.abort();
    result
}

async fn consume(pool: SqlitePool) -> anyhow::Result<()> {
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", "kafka:9092")
        .set("group.id", "device-registry")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.subscribe(&["device.telemetry"])?;
    loop {
        let msg = consumer.recv().await?;
        let t: Telemetry = serde_json::from_slice(msg.payload().unwrap_or_default())?;
        let mut tx = pool.begin().await?;
        let claimed = sqlx::query("INSERT INTO dedup_events (event_id, created_at) VALUES (?, datetime('now')) ON CONFLICT DO NOTHING")
            .bind(&t.event_id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if claimed == 1 {
            sqlx::query("UPDATE devices SET firmware = ? WHERE id = ?")
                .bind(&t.firmware)
                .bind(&t.device_id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        consumer.commit_message(&msg, CommitMode::Async)?;
    }
}
