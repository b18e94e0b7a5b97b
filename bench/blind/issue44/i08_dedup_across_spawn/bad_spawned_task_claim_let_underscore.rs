// Bad (MA005): an SQS handler spawns the work and awaits it before deleting the message; inside the
// task the `processed_messages` claim's result is bound to `_` and the credit runs anyway.
// SPEC MA005: "the dedup claim's result (rows affected, `RETURNING`, `inserted`) is ignored and the
// effect runs anyway"; primary: "the dedup claim".
use aws_sdk_sqs::Client as SqsClient;
use serde::Deserialize;
use sqlx::PgPool;

#[derive(Deserialize)]
struct Refund {
    refund_id: String,
    account_id: i64,
    cents: i64,
}

pub async fn poll(sqs: SqsClient, pool: PgPool, queue_url: String) -> anyhow::Result<()> {
    loop {
        let out = sqs.receive_message().queue_url(&queue_url).max_number_of_messages(10).wait_time_seconds(20).send().await?;
        for m in out.messages.unwrap_or_default() {
            let Some(body) = m.body() else { continue };
            let refund: Refund = serde_json::from_str(body)?;
            let pool = pool.clone();
            tokio::spawn(async move {
                let mut tx = pool.begin().await?;
                let _ = sqlx::query("INSERT INTO processed_messages (message_id) VALUES ($1) ON CONFLICT DO NOTHING").bind(&refund.refund_id).execute(&mut *tx).await?; //~ MA005
                sqlx::query("UPDATE accounts SET credit_cents = credit_cents + $1 WHERE id = $2")
                    .bind(refund.cents)
                    .bind(refund.account_id)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                anyhow::Ok(())
            })
            .await??;
            if let Some(handle) = m.receipt_handle() {
                sqs.delete_message().queue_url(&queue_url).receipt_handle(handle).send().await?;
            }
        }
    }
}
