// MA001: one worker task owns two tokio mpsc receivers and `tokio::select!`s over them, writing
// payments and refunds. The lapin consumer routes each delivery to one of the senders and acks
// after the match, without any completion signal: the ack can land before the worker's write,
// so a crash in between loses the payment or refund.
use futures::StreamExt;
use lapin::options::{BasicAckOptions, BasicConsumeOptions};
use lapin::types::FieldTable;
use lapin::Channel;
use serde::Deserialize;
use sqlx::PgPool;
use tokio::sync::mpsc;

#[derive(Debug, Deserialize)]
struct Payment {
    payment_id: String,
    amount_cents: i64,
}

#[derive(Debug, Deserialize)]
struct Refund {
    refund_id: String,
    payment_id: String,
    amount_cents: i64,
}

fn spawn_ledger_writer(
    mut payments: mpsc::Receiver<Payment>,
    mut refunds: mpsc::Receiver<Refund>,
    pool: PgPool,
) {
    tokio::spawn(async move {
        loop {
            tokio::select! {
                Some(p) = payments.recv() => {
                    sqlx::query("INSERT INTO ledger_payments (payment_id, amount_cents) VALUES ($1, $2) ON CONFLICT (payment_id) DO UPDATE SET amount_cents = EXCLUDED.amount_cents")
                        .bind(&p.payment_id)
                        .bind(p.amount_cents)
                        .execute(&pool)
                        .await
                        .expect("payment write");
                }
                Some(r) = refunds.recv() => {
                    sqlx::query("INSERT INTO ledger_refunds (refund_id, payment_id, amount_cents) VALUES ($1, $2, $3) ON CONFLICT (refund_id) DO UPDATE SET amount_cents = EXCLUDED.amount_cents")
                        .bind(&r.refund_id)
                        .bind(&r.payment_id)
                        .bind(r.amount_cents)
                        .execute(&pool)
                        .await
                        .expect("refund write");
                }
                else => break,
            }
        }
    });
}

pub async fn consume(channel: Channel, pool: PgPool) -> anyhow::Result<()> {
    let (pay_tx, pay_rx) = mpsc::channel::<Payment>(128);
    let (ref_tx, ref_rx) = mpsc::channel::<Refund>(128);
    spawn_ledger_writer(pay_rx, ref_rx, pool);

    let mut consumer = channel
        .basic_consume("ledger", "ledger-writer", BasicConsumeOptions::default(), FieldTable::default())
        .await?;

    while let Some(delivery) = consumer.next().await {
        let delivery = delivery?;
        let kind = delivery.routing_key.as_str().to_owned();
        match kind.as_str() {
            "payment.captured" => {
                let p: Payment = serde_json::from_slice(&delivery.data)?;
                pay_tx.send(p).await?;
            }
            "refund.issued" => {
                let r: Refund = serde_json::from_slice(&delivery.data)?;
                ref_tx.send(r).await?;
            }
            _ => {}
        }
        delivery.ack(BasicAckOptions::default()).await?; //~ MA001
    }
    Ok(())
}
