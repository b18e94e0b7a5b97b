// MA014 (iggy, high-level consumer): a failed insert is logged and the offset stored anyway; the
// message is not polled again, so the order is lost.
use futures::StreamExt;
use iggy::prelude::*;
use sqlx::PgPool;
use tracing::warn;

pub async fn run(mut consumer: IggyConsumer, pool: PgPool) -> anyhow::Result<()> {
    consumer.init().await?;
    while let Some(received) = consumer.next().await {
        let received = received?;
        if let Err(e) = sqlx::query("INSERT INTO orders (message_id, body) VALUES ($1, $2) ON CONFLICT DO NOTHING")
            .bind(received.message.header.id.to_string())
            .bind(received.message.payload.to_vec())
            .execute(&pool)
            .await
        {
            warn!(error = %e, "order insert failed");
        }
        consumer.store_offset(received.current_offset, Some(received.partition_id)).await?; //~ MA014
    }
    Ok(())
}
