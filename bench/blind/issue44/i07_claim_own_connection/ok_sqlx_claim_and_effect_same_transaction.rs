// OK: claim and effect on the same transaction, the claim's rows_affected gates the update, the
// offset is committed after the commit. SPEC §1: "a dedup record keyed by a *stable* event id,
// written in the *same* DB transaction as the effect".
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::message::Message;
use serde::Deserialize;
use sqlx::PgPool;

#[derive(Deserialize)]
struct StockReserved {
    event_id: String,
    sku: String,
    reserved: i64,
}

pub async fn run(pool: PgPool) -> anyhow::Result<()> {
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", "kafka:9092")
        .set("group.id", "inventory")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.subscribe(&["stock.reserved"])?;
    loop {
        let msg = consumer.recv().await?;
        let ev: StockReserved = serde_json::from_slice(msg.payload().unwrap_or_default())?;

        let mut tx = pool.begin().await?;
        let claimed = sqlx::query("INSERT INTO processed_events (event_id) VALUES ($1) ON CONFLICT DO NOTHING")
            .bind(&ev.event_id)
            .execute(&mut *tx)
            .await?;
        if claimed.rows_affected() == 1 {
            sqlx::query("UPDATE stock SET reserved = reserved + $1 WHERE sku = $2")
                .bind(ev.reserved)
                .bind(&ev.sku)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
        } else {
            tx.rollback().await?;
        }
        consumer.commit_message(&msg, CommitMode::Async)?;
    }
}
