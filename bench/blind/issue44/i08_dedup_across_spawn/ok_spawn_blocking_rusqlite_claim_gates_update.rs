// OK: the handler hands the write to `spawn_blocking` and awaits it before committing the offset.
// Inside the task, a rusqlite transaction claims the event id (`INSERT OR IGNORE`) and only
// decrements stock when the claim inserted a row. The claim inside the awaited task gates the
// UPDATE, so there is a dedup record (no MA011) and the commit is ordered after it (no MA001).
// SPEC MA011: "with no dedup record at all"; MA001 decision: only "without awaiting its handle".
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
            let claimed = tx.execute("INSERT OR IGNORE INTO processed_events (event_id) VALUES (?1)", params![ev.event_id])?;
            if claimed == 1 {
                tx.execute("UPDATE stock SET on_hand = on_hand - ?1 WHERE sku = ?2", params![ev.qty, ev.sku])?;
            }
            tx.commit()?;
            Ok(())
        })
        .await??;
        consumer.commit_message(&msg, CommitMode::Async)?;
    }
}
