// MA001: four worker tasks share one receiver through `Arc<Mutex<Receiver>>`; each locks it,
// takes a job and writes the stock level. The Kafka poll loop commits each message's offset as
// soon as the job is queued. No worker signals completion, so the commit may run before the write:
// a crash in between loses the stock update.
use std::sync::Arc;

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::Message;
use serde::Deserialize;
use sqlx::PgPool;
use tokio::sync::{mpsc, Mutex};

#[derive(Debug, Deserialize)]
struct StockLevel {
    sku: String,
    warehouse: String,
    on_hand: i32,
}

pub async fn run(brokers: &str, pool: PgPool) -> anyhow::Result<()> {
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .set("group.id", "stock-sync")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.subscribe(&["stock.levels"])?;

    let (tx, rx) = mpsc::channel::<StockLevel>(1000);
    let rx = Arc::new(Mutex::new(rx));

    for worker_id in 0..4 {
        let rx = Arc::clone(&rx);
        let pool = pool.clone();
        tokio::spawn(async move {
            loop {
                let next = { rx.lock().await.recv().await };
                let Some(level) = next else { break };
                let res = sqlx::query("INSERT INTO stock (sku, warehouse, on_hand) VALUES ($1, $2, $3) ON CONFLICT (sku, warehouse) DO UPDATE SET on_hand = EXCLUDED.on_hand")
                    .bind(&level.sku)
                    .bind(&level.warehouse)
                    .bind(level.on_hand)
                    .execute(&pool)
                    .await;
                if let Err(err) = res {
                    tracing::error!(worker_id, sku = %level.sku, %err, "stock write failed");
                }
            }
        });
    }

    loop {
        let msg = consumer.recv().await?;
        let level: StockLevel = match msg.payload().map(serde_json::from_slice) {
            Some(Ok(level)) => level,
            _ => continue,
        };
        tx.send(level).await?;
        consumer.commit_message(&msg, CommitMode::Async)?; //~ MA001
    }
}
