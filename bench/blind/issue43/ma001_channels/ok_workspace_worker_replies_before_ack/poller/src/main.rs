// OK across workspace members: the JetStream poller hands each tariff to `tariff_writer::serve`
// (another member crate) with a oneshot sender and awaits the reply before acking; on a failed
// write it naks for redelivery. The awaited oneshot orders the ack after the effect.
use async_nats::jetstream::{self, consumer::PullConsumer, AckKind};
use futures::StreamExt;
use sqlx::PgPool;
use tariff_writer::{Tariff, WriteJob};
use tokio::sync::{mpsc, oneshot};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let pool = PgPool::connect(&std::env::var("DATABASE_URL")?).await?;
    let nats = async_nats::connect(std::env::var("NATS_URL")?).await?;

    let (jobs_tx, jobs_rx) = mpsc::channel::<WriteJob>(32);
    tokio::spawn(tariff_writer::serve(jobs_rx, pool));

    let consumer: PullConsumer = jetstream::new(nats).get_stream("TARIFFS").await?.get_consumer("tariff-store").await?;
    let mut messages = consumer.messages().await?;
    while let Some(message) = messages.next().await {
        let message = message?;
        let tariff: Tariff = match serde_json::from_slice(&message.payload) {
            Ok(t) => t,
            Err(_) => {
                message.ack_with(AckKind::Term).await.map_err(|e| anyhow::anyhow!(e))?;
                continue;
            }
        };
        let (done, reply) = oneshot::channel();
        jobs_tx.send(WriteJob { tariff, done }).await?;
        match reply.await? {
            Ok(()) => message.ack().await.map_err(|e| anyhow::anyhow!(e))?,
            Err(_) => message.ack_with(AckKind::Nak(None)).await.map_err(|e| anyhow::anyhow!(e))?,
        }
    }
    Ok(())
}
