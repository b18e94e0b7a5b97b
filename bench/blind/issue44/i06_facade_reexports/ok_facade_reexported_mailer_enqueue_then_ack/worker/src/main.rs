// OK: the worker calls `platform::mailer::enqueue_receipt` (re-exported from the `notify` member
// through the renamed `platform` dependency), which upserts a keyed row, and acks afterwards.
// SPEC MA001 "needs an effect after the ack on the same path"; the effect is a keyed upsert, so
// no MA011 either.
use futures::StreamExt;
use lapin::options::{BasicAckOptions, BasicConsumeOptions, BasicQosOptions};
use lapin::types::FieldTable;
use lapin::{Connection, ConnectionProperties};
use serde::Deserialize;
use sqlx::PgPool;

#[derive(Deserialize)]
struct OrderPaid {
    order_id: i64,
    email: String,
    total: String,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let pool = PgPool::connect(&std::env::var("DATABASE_URL")?).await?;
    let conn = Connection::connect(&platform::config::amqp_url(), ConnectionProperties::default()).await?;
    let channel = conn.create_channel().await?;
    channel.basic_qos(16, BasicQosOptions::default()).await?;

    let mut consumer = channel
        .basic_consume("orders.paid", "receipt-worker", BasicConsumeOptions::default(), FieldTable::default())
        .await?;
    while let Some(delivery) = consumer.next().await {
        let delivery = delivery?;
        let ev: OrderPaid = serde_json::from_slice(&delivery.data)?;
        platform::mailer::enqueue_receipt(&pool, &ev.email, ev.order_id, &ev.total).await?;
        delivery.ack(BasicAckOptions::default()).await?;
    }
    Ok(())
}
