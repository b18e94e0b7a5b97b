// The consumer: rusqlite transaction with the claim (`INSERT OR IGNORE INTO processed_events`),
// the claim's change count gates the effect, the offset is committed after the transaction.
use std::time::Duration;

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::message::Message;
use rusqlite::{params, Connection};
use serde::Deserialize;

mod janitor;

#[derive(Deserialize)]
struct Payment {
    event_id: String,
    merchant_id: i64,
    status: String,
}

fn main() -> anyhow::Result<()> {
    let mut conn = Connection::open("/var/lib/payments/state.db")?;
    janitor::purge_expired(&conn)?;
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", "kafka:9092")
        .set("group.id", "merchant-status")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.subscribe(&["payments"])?;

    loop {
        let Some(res) = consumer.poll(Duration::from_secs(1)) else { continue };
        let msg = res?;
        let p: Payment = serde_json::from_slice(msg.payload().unwrap_or_default())?;
        let tx = conn.transaction()?;
        let fresh = tx.execute(
            "INSERT OR IGNORE INTO processed_events (event_id, seen_at) VALUES (?1, unixepoch())",
            params![p.event_id],
        )?;
        if fresh == 1 {
            tx.execute(
                "UPDATE merchants SET last_payment_status = ?1 WHERE id = ?2",
                params![p.status, p.merchant_id],
            )?;
        }
        tx.commit()?;
        consumer.commit_message(&msg, CommitMode::Sync)?;
    }
}
