// SARIF of suppressed findings (tests/sarif_multitool.rs): `reserve` commits the offset
// before the transaction (MA001) under a `msgaudit:allow` comment with a reason, so SARIF
// keeps that finding as a suppressed result; `release` does the same without the comment
// and is reported.
use anyhow::Context;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::message::{BorrowedMessage, Message};
use serde::Deserialize;
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::{Postgres, Transaction};

#[derive(Debug, Deserialize)]
struct Reservation {
    order_id: i64,
    sku: String,
    quantity: i32,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let pool: PgPool = PgPoolOptions::new()
        .max_connections(8)
        .connect(&std::env::var("DATABASE_URL")?)
        .await?;

    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", "kafka:9092")
        .set("group.id", "inventory-reservations")
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .create()
        .context("creating kafka consumer")?;
    consumer.subscribe(&["inventory.reservations", "inventory.releases"])?;

    loop {
        let msg: BorrowedMessage<'_> = consumer.recv().await?;
        let handled = if msg.topic() == "inventory.releases" {
            release(&consumer, &pool, &msg).await
        } else {
            reserve(&consumer, &pool, &msg).await
        };
        if let Err(err) = handled {
            tracing::error!(offset = msg.offset(), "reservation failed: {err:#}");
        }
    }
}

async fn reserve(
    consumer: &StreamConsumer,
    pool: &PgPool,
    msg: &BorrowedMessage<'_>,
) -> anyhow::Result<()> {
    let payload: &[u8] = msg.payload().context("empty reservation message")?;
    let reservation: Reservation = serde_json::from_slice(payload)?;

    let mut tx: Transaction<'_, Postgres> = pool.begin().await?;
    sqlx::query(
        "INSERT INTO reservations (order_id, sku, quantity) VALUES ($1, $2, $3) \
         ON CONFLICT (order_id, sku) DO UPDATE SET quantity = EXCLUDED.quantity",
    )
    .bind(reservation.order_id)
    .bind(&reservation.sku)
    .bind(reservation.quantity)
    .execute(&mut *tx)
    .await?;
    sqlx::query("UPDATE orders SET status = 'reserved' WHERE id = $1")
        .bind(reservation.order_id)
        .execute(&mut *tx)
        .await?;

    // msgaudit:allow(MA001) reservations are re-derived nightly from the orders table
    consumer.commit_message(msg, CommitMode::Async)?;
    tx.commit().await?;
    Ok(())
}

async fn release(
    consumer: &StreamConsumer,
    pool: &PgPool,
    msg: &BorrowedMessage<'_>,
) -> anyhow::Result<()> {
    let payload: &[u8] = msg.payload().context("empty release message")?;
    let reservation: Reservation = serde_json::from_slice(payload)?;

    let mut tx: Transaction<'_, Postgres> = pool.begin().await?;
    sqlx::query("DELETE FROM reservations WHERE order_id = $1 AND sku = $2")
        .bind(reservation.order_id)
        .bind(&reservation.sku)
        .execute(&mut *tx)
        .await?;
    consumer.commit_message(msg, CommitMode::Async)?;
    tx.commit().await?;
    Ok(())
}
