// Bad (MA006): a JetStream handler publishes `orders.confirmed` and then upserts the order's
// confirmation row in autocommit; a crash between them leaves an event for a confirmation that
// never committed (or, reordered, a row with no event). This is a business row, not a cursor.
// SPEC §2 (decision on progress cursors): "a handler that publishes and writes a business row is
// still MA006"; MA006 row: "commits a DB transaction and publishes to a broker as two separate
// steps (either order), with no outbox"; primary: "the publish call".
use async_nats::jetstream::{self, consumer::PullConsumer};
use futures::StreamExt;
use serde::Deserialize;
use sqlx::PgPool;

#[derive(Deserialize)]
struct PaymentCaptured {
    order_id: i64,
    amount_cents: i64,
}

pub async fn run(consumer: PullConsumer, js: jetstream::Context, pool: PgPool) -> anyhow::Result<()> {
    let mut messages = consumer.messages().await?;
    while let Some(msg) = messages.next().await {
        let msg = msg.map_err(|e| anyhow::anyhow!(e))?;
        let ev: PaymentCaptured = serde_json::from_slice(&msg.payload)?;
        let body = serde_json::to_vec(&serde_json::json!({ "order_id": ev.order_id }))?;
        js.publish("orders.confirmed", body.into()).await?.await?; //~ MA006
        sqlx::query(
            "INSERT INTO order_confirmations (order_id, amount_cents) VALUES ($1, $2) \
             ON CONFLICT (order_id) DO UPDATE SET amount_cents = EXCLUDED.amount_cents",
        )
        .bind(ev.order_id)
        .bind(ev.amount_cents)
        .execute(&pool)
        .await?;
        msg.ack().await.map_err(|e| anyhow::anyhow!(e))?;
    }
    Ok(())
}
