// OK: the whole lapin `Delivery` (which carries its acker) is moved into the tokio mpsc channel;
// the worker writes the row and then acks, or nacks with requeue when the write fails. The sender
// never acks, so the ack follows the effect ("the message or its ack handle moved into the
// channel (the worker acks)").
use futures::StreamExt;
use lapin::message::Delivery;
use lapin::options::{BasicAckOptions, BasicConsumeOptions, BasicNackOptions};
use lapin::types::FieldTable;
use lapin::Channel;
use serde::Deserialize;
use sqlx::PgPool;
use tokio::sync::mpsc;

#[derive(Debug, Deserialize)]
struct TicketClosed {
    ticket_id: i64,
    resolution: String,
}

async fn ticket_worker(mut rx: mpsc::Receiver<Delivery>, pool: PgPool) -> anyhow::Result<()> {
    while let Some(delivery) = rx.recv().await {
        let closed: TicketClosed = match serde_json::from_slice(&delivery.data) {
            Ok(c) => c,
            Err(_) => {
                delivery.nack(BasicNackOptions { requeue: false, ..Default::default() }).await?;
                continue;
            }
        };
        let res = sqlx::query("UPDATE tickets SET status = 'closed', resolution = $2 WHERE ticket_id = $1")
            .bind(closed.ticket_id)
            .bind(&closed.resolution)
            .execute(&pool)
            .await;
        match res {
            Ok(_) => delivery.ack(BasicAckOptions::default()).await?,
            Err(err) => {
                tracing::warn!(ticket_id = closed.ticket_id, %err, "requeueing ticket");
                delivery.nack(BasicNackOptions { requeue: true, ..Default::default() }).await?;
            }
        }
    }
    Ok(())
}

pub async fn consume(channel: Channel, pool: PgPool) -> anyhow::Result<()> {
    let (tx, rx) = mpsc::channel::<Delivery>(32);
    tokio::spawn(ticket_worker(rx, pool));

    let mut consumer = channel
        .basic_consume("tickets.closed", "ticket-closer", BasicConsumeOptions::default(), FieldTable::default())
        .await?;
    while let Some(delivery) = consumer.next().await {
        tx.send(delivery?).await?;
    }
    Ok(())
}
