// A payment row is inserted with a lightweight transaction (`IF NOT EXISTS`) keyed by
// the payment id: a redelivered message finds the row and the insert does not apply, so
// acking after the write is safe. (Without `IF NOT EXISTS` the statement is plain.)
use futures::StreamExt;
use lapin::options::{BasicAckOptions, BasicConsumeOptions};
use lapin::types::FieldTable;
use lapin::Channel;
use scylla::client::session::Session;
use serde::Deserialize;

#[derive(Deserialize)]
struct Payment {
    payment_id: String,
    account: String,
    cents: i64,
}

pub async fn run(channel: Channel, session: Session) -> anyhow::Result<()> {
    let mut consumer = channel
        .basic_consume("payments.settled", "ledger", BasicConsumeOptions::default(), FieldTable::default())
        .await?;

    while let Some(delivery) = consumer.next().await {
        let delivery = delivery?;
        let p: Payment = serde_json::from_slice(&delivery.data)?;
        session
            .query_unpaged(
                "INSERT INTO ledger.payments (payment_id, account, cents) VALUES (?, ?, ?) IF NOT EXISTS",
                (p.payment_id, p.account, p.cents),
            )
            .await?;
        delivery.ack(BasicAckOptions::default()).await?;
    }
    Ok(())
}
