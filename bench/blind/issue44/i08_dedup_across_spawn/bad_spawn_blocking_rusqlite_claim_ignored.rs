// Bad (MA005): the same awaited `spawn_blocking` task, but the claim's changed-row count is thrown
// away and the decrement runs on every delivery. SPEC MA005: "the dedup claim's result (rows
// affected ...) is ignored and the effect runs anyway"; primary: "the dedup claim". (There is a
// dedup record, so this is MA005, not MA011.)
use std::sync::{Arc, Mutex};

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::message::Message;
use rusqlite::{params, Connection};
use serde::Deserialize;

#[derive(Deserialize)]
struct Picked {
    event_id: String,
    sku: String,
    qty: i64,
}

pub async fn run(db: Arc<Mutex<Connection>>) -> anyhow::Result<()> {
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", "kafka:9092")
        .set("group.id", "warehouse-stock")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.subscribe(&["warehouse.picked"])?;
    loop {
        let msg = consumer.recv().await?;
        let ev: Picked = serde_json::from_slice(msg.payload().unwrap_or_default())?;
        let db = db.clone();
        tokio::task::spawn_blocking(move || -> anyhow::Result<()> {
            let mut conn = db.lock().unwrap();
            let tx = conn.transaction()?;
            tx.execute("INSERT OR IGNORE INTO processed_events (event_id) VALUES (?1)", params![ev.event_id])?; //~ MA005
            tx.execute("UPDATE stock SET on_hand = on_hand - ?1 WHERE sku = ?2", params![ev.qty, ev.sku])?;
            tx.commit()?;
            Ok(())
        })
        .await??;
        consumer.commit_message(&msg, CommitMode::Async)?;
    }
}
