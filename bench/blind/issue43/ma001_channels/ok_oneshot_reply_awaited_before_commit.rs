// OK: the poll loop sends the order together with a oneshot sender and awaits the reply before
// committing the offset; the worker replies only after its upsert returned. The awaited oneshot
// is a completion signal that orders the commit after the effect ("Work handed to another task").
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::Message;
use serde::Deserialize;
use sqlx::PgPool;
use tokio::sync::{mpsc, oneshot};

#[derive(Debug, Deserialize)]
struct AddressChanged {
    customer_id: String,
    line1: String,
    city: String,
}

struct Job {
    change: AddressChanged,
    done: oneshot::Sender<Result<(), sqlx::Error>>,
}

async fn address_worker(mut rx: mpsc::Receiver<Job>, pool: PgPool) {
    while let Some(job) = rx.recv().await {
        let res = sqlx::query("INSERT INTO addresses (customer_id, line1, city) VALUES ($1, $2, $3) ON CONFLICT (customer_id) DO UPDATE SET line1 = EXCLUDED.line1, city = EXCLUDED.city")
            .bind(&job.change.customer_id)
            .bind(&job.change.line1)
            .bind(&job.change.city)
            .execute(&pool)
            .await
            .map(|_| ());
        let _ = job.done.send(res);
    }
}

pub async fn run(brokers: &str, pool: PgPool) -> anyhow::Result<()> {
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .set("group.id", "address-book")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.subscribe(&["customers.addresses"])?;

    let (tx, rx) = mpsc::channel::<Job>(64);
    tokio::spawn(address_worker(rx, pool));

    loop {
        let msg = consumer.recv().await?;
        let Some(Ok(change)) = msg.payload().map(serde_json::from_slice::<AddressChanged>) else {
            continue;
        };
        let (done_tx, done_rx) = oneshot::channel();
        tx.send(Job { change, done: done_tx }).await?;
        done_rx.await??;
        consumer.commit_message(&msg, CommitMode::Async)?;
    }
}
