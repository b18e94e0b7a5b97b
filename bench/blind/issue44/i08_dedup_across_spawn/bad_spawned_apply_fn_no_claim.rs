// Bad (MA011): the spawned `apply` is awaited before the ack (at-least-once), but it increments
// the vote count with no dedup record: a redelivery after a crash between the commit and the ack
// counts the vote twice. SPEC MA011: "an at-least-once handler applies a non-idempotent effect
// (`SET n = n + ?` ...) with no dedup record at all"; primary: "the effect".
use async_nats::jetstream::consumer::PullConsumer;
use futures::StreamExt;
use serde::Deserialize;
use sqlx::PgPool;

#[derive(Deserialize)]
struct VoteCast {
    poll_id: i64,
    option_id: i64,
}

async fn apply(pool: PgPool, ev: VoteCast) -> anyhow::Result<()> {
    sqlx::query("UPDATE poll_options SET votes = votes + 1 WHERE poll_id = $1 AND id = $2").bind(ev.poll_id).bind(ev.option_id).execute(&pool).await?; //~ MA011
    Ok(())
}

pub async fn run(consumer: PullConsumer, pool: PgPool) -> anyhow::Result<()> {
    let mut messages = consumer.messages().await?;
    while let Some(msg) = messages.next().await {
        let msg = msg.map_err(|e| anyhow::anyhow!(e))?;
        let ev: VoteCast = serde_json::from_slice(&msg.payload)?;
        let handle = tokio::spawn(apply(pool.clone(), ev));
        handle.await??;
        msg.ack().await.map_err(|e| anyhow::anyhow!(e))?;
    }
    Ok(())
}
