// MA001: the poll loop hands the decoded order to a tokio mpsc channel and commits the offset
// right away; the receiver is moved into a `tokio::spawn`ed worker that does the upsert. Nothing
// orders the commit after the worker's write (no oneshot reply, no join), so a crash after the
// commit and before the upsert loses the order ("Work handed to another task").
use std::time::Duration;

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::Message;
use serde::Deserialize;
use sqlx::PgPool;
use tokio::sync::mpsc;

#[derive(Debug, Deserialize)]
struct OrderPlaced {
    order_id: String,
    customer_id: String,
    total_cents: i64,
}

pub async fn run(brokers: &str, pool: PgPool) -> anyhow::Result<()> {
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .set("group.id", "order-projector")
        .set("enable.auto.commit", "false")
        .set("session.timeout.ms", "10000")
        .create()?;
    consumer.subscribe(&["orders.placed"])?;

    let (tx, mut rx) = mpsc::channel::<OrderPlaced>(256);

    let worker_pool = pool.clone();
    tokio::spawn(async move {
        while let Some(order) = rx.recv().await {
            let res = sqlx::query("INSERT INTO orders (order_id, customer_id, total_cents) VALUES ($1, $2, $3) ON CONFLICT (order_id) DO UPDATE SET customer_id = EXCLUDED.customer_id, total_cents = EXCLUDED.total_cents")
                .bind(&order.order_id)
                .bind(&order.customer_id)
                .bind(order.total_cents)
                .execute(&worker_pool)
                .await;
            if let Err(err) = res {
                tracing::error!(order_id = %order.order_id, %err, "order upsert failed");
            }
        }
    });

    loop {
        let msg = consumer.recv().await?;
        let Some(payload) = msg.payload() else {
            continue;
        };
        let order: OrderPlaced = match serde_json::from_slice(payload) {
            Ok(o) => o,
            Err(err) => {
                tracing::warn!(%err, "skipping undecodable order");
                continue;
            }
        };
        if tx.send(order).await.is_err() {
            tokio::time::sleep(Duration::from_millis(50)).await;
            anyhow::bail!("order worker has stopped");
        }
        consumer.commit_message(&msg, CommitMode::Async)?; //~ MA001
    }
}
