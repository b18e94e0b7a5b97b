// Bad (MA003): the claim is written on a connection acquired from the pool (autocommit), the
// stock update on a transaction begun separately; a crash after the claim and before the
// transaction commits marks the event processed with no effect. SPEC MA003: "the dedup record and
// the effect are written in different transactions, connections, or with one in autocommit";
// primary: "the dedup-record write".
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

        let mut claim_conn = pool.acquire().await?;
        let claimed = sqlx::query("INSERT INTO processed_events (event_id) VALUES ($1) ON CONFLICT DO NOTHING").bind(&ev.event_id).execute(&mut *claim_conn).await?; //~ MA003
        drop(claim_conn);

        if claimed.rows_affected() == 1 {
            let mut tx = pool.begin().await?;
            sqlx::query("UPDATE stock SET reserved = reserved + $1 WHERE sku = $2")
                .bind(ev.reserved)
                .bind(&ev.sku)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
        }
        consumer.commit_message(&msg, CommitMode::Async)?;
    }
}
