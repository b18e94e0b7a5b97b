// MA014 (fluvio, manual offsets): a failed insert is logged and the offset flushed anyway; the
// record is never read again and the reading is lost.
use fluvio::consumer::{ConsumerConfigExtBuilder, OffsetManagementStrategy};
use fluvio::Fluvio;
use futures::StreamExt;
use sqlx::PgPool;
use tracing::error;

pub async fn run(pool: PgPool) -> anyhow::Result<()> {
    let fluvio = Fluvio::connect().await?;
    let config = ConsumerConfigExtBuilder::default()
        .topic("readings")
        .offset_consumer("reading-store")
        .offset_strategy(OffsetManagementStrategy::Manual)
        .build()?;
    let mut stream = fluvio.consumer_with_config(config).await?;
    while let Some(Ok(record)) = stream.next().await {
        let stored = sqlx::query("INSERT INTO readings (record_offset, body) VALUES ($1, $2) ON CONFLICT DO NOTHING")
            .bind(record.offset())
            .bind(record.value().to_vec())
            .execute(&pool)
            .await;
        if let Err(e) = stored {
            error!(error = %e, "storing the reading failed");
        }
        stream.offset_commit()?;
        stream.offset_flush().await?; //~ MA014
    }
    Ok(())
}
