// The consumer: `message_log` says nothing about dedup, but it is used as a claim: an
// `ON CONFLICT DO NOTHING` insert keyed by the message's `event_id`, before the effect, whose
// rows_affected gates the effect, in the effect's transaction.
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
        let first = sqlx::query("INSERT INTO message_log (msg_id, logged_at) VALUES ($1, now()) ON CONFLICT (msg_id) DO NOTHING")
            .bind(&s.event_id)
            .execute(&mut *tx)
            .await?;
        if first.rows_affected() == 1 {
            sqlx::query("UPDATE parcels SET status = $1 WHERE id = $2")
                .bind(&s.status)
                .bind(&s.parcel_id)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
        } else {
            tx.rollback().await?;
        }
        consumer.commit_message(&msg, CommitMode::Async)?;
    }
}
