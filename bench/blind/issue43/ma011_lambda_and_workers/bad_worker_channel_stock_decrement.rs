// MA011: the Kafka consumer is at-least-once (it awaits the worker's oneshot reply before
// committing, so no MA001), and MA011 follows the message into the worker: the worker applies
// `SET reserved = reserved + $1` with no dedup record, so a redelivery after a crash between the
// worker's write and the commit reserves the stock twice. MA011 at the worker's update.
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::Message;
use serde::Deserialize;
use sqlx::PgPool;
use tokio::sync::{mpsc, oneshot};

#[derive(Debug, Deserialize)]
struct Reservation {
    sku: String,
    quantity: i32,
}

type Reply = oneshot::Sender<Result<(), sqlx::Error>>;

async fn reservation_worker(mut rx: mpsc::Receiver<(Reservation, Reply)>, pool: PgPool) {
    while let Some((res, reply)) = rx.recv().await {
        let outcome = sqlx::query("UPDATE inventory SET reserved = reserved + $1 WHERE sku = $2").bind(res.quantity).bind(&res.sku).execute(&pool).await.map(|_| ()); //~ MA011
        let _ = reply.send(outcome);
    }
}

pub async fn run(brokers: &str, pool: PgPool) -> anyhow::Result<()> {
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .set("group.id", "inventory-reserver")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.subscribe(&["orders.reservations"])?;

    let (tx, rx) = mpsc::channel(16);
    tokio::spawn(reservation_worker(rx, pool));

    loop {
        let msg = consumer.recv().await?;
        let Some(Ok(res)) = msg.payload().map(serde_json::from_slice::<Reservation>) else {
            continue;
        };
        let (reply_tx, reply_rx) = oneshot::channel();
        tx.send((res, reply_tx)).await?;
        reply_rx.await??;
        consumer.commit_message(&msg, CommitMode::Async)?;
    }
}
