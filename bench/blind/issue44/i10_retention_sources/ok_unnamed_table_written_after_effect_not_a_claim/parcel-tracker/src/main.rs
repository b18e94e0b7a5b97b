// The consumer: the effect is a keyed update; afterwards it writes a `message_log` row
// (`ON CONFLICT DO NOTHING`). That insert runs after the effect and gates nothing: an idempotent
// write, not a claim.
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::message::Message;
use serde::Deserialize;
use sqlx::PgPool;

mod housekeeping;

#[derive(Deserialize)]
struct Shipment {
    event_id: String,
    parcel_id: String,
    status: String,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let pool = PgPool::connect(&std::env::var("DATABASE_URL")?).await?;
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", "kafka:9092")
        .set("group.id", "parcel-tracker")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.subscribe(&["parcel.events"])?;
    loop {
        let msg = consumer.recv().await?;
        let s: Shipment = serde_json::from_slice(msg.payload().unwrap_or_default())?;
        let mut tx = pool.begin().await?;
        sqlx::query("UPDATE parcels SET status = $1 WHERE id = $2")
            .bind(&s.status)
            .bind(&s.parcel_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("INSERT INTO message_log (msg_id, logged_at) VALUES ($1, now()) ON CONFLICT (msg_id) DO NOTHING")
            .bind(&s.event_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        consumer.commit_message(&msg, CommitMode::Async)?;
    }
}
