// MA001 across workspace members: the receiver is moved into `tokio::spawn(ledger_worker::run(..))`,
// a member crate found by `path`, whose loop writes the invoice. The poll loop commits the offset
// right after `tx.send`, with no completion signal, so the commit is not ordered after the write
// ("calls into a dependency that is in the analyzed tree are followed").
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::Message;
use sqlx::postgres::PgPoolOptions;
use tokio::sync::mpsc;

use ledger_worker::InvoiceIssued;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let pool = PgPoolOptions::new()
        .max_connections(8)
        .connect(&std::env::var("DATABASE_URL")?)
        .await?;

    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", &std::env::var("KAFKA_BROKERS")?)
        .set("group.id", "invoice-ledger")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.subscribe(&["billing.invoices"])?;

    let (tx, rx) = mpsc::channel::<InvoiceIssued>(500);
    tokio::spawn(ledger_worker::run(rx, pool));

    loop {
        let msg = consumer.recv().await?;
        let Some(bytes) = msg.payload() else { continue };
        let invoice: InvoiceIssued = match serde_json::from_slice(bytes) {
            Ok(inv) => inv,
            Err(_) => continue,
        };
        tx.send(invoice).await?;
        consumer.commit_message(&msg, CommitMode::Async)?; //~ MA001
    }
}
