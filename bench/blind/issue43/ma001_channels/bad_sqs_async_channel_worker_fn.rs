// MA001: SQS messages are decoded and sent on an async_channel; the receiver is passed to a
// worker function that is `tokio::spawn`ed and applies the upsert. The poll loop deletes the
// message right after the send, before the worker has written anything: a crash in between loses
// the message (it was deleted, so SQS never redelivers it).
use async_channel::{Receiver, Sender};
use aws_sdk_sqs::Client as SqsClient;
use serde::Deserialize;
use sqlx::PgPool;

#[derive(Debug, Deserialize)]
struct ShipmentUpdate {
    shipment_id: String,
    status: String,
}

async fn shipment_worker(rx: Receiver<ShipmentUpdate>, pool: PgPool) -> Result<(), sqlx::Error> {
    while let Ok(update) = rx.recv().await {
        sqlx::query("INSERT INTO shipments (shipment_id, status) VALUES ($1, $2) ON CONFLICT (shipment_id) DO UPDATE SET status = EXCLUDED.status")
            .bind(&update.shipment_id)
            .bind(&update.status)
            .execute(&pool)
            .await?;
    }
    Ok(())
}

pub async fn poll(sqs: SqsClient, queue_url: String, pool: PgPool) -> anyhow::Result<()> {
    let (tx, rx): (Sender<ShipmentUpdate>, Receiver<ShipmentUpdate>) = async_channel::bounded(64);
    tokio::spawn(shipment_worker(rx, pool));

    loop {
        let out = sqs
            .receive_message()
            .queue_url(&queue_url)
            .max_number_of_messages(10)
            .wait_time_seconds(20)
            .send()
            .await?;
        for message in out.messages() {
            let Some(body) = message.body() else { continue };
            let update: ShipmentUpdate = serde_json::from_str(body)?;
            tx.send(update).await?;
            if let Some(handle) = message.receipt_handle() {
                sqs.delete_message().queue_url(&queue_url).receipt_handle(handle).send().await?; //~ MA001
            }
        }
    }
}
