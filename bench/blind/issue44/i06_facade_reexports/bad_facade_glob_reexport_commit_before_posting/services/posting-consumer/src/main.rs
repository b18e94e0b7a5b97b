// Bad (MA001): the consumer commits the offset synchronously, then records the posting through
// `platform::postings::record_posting`; `platform` (package `acme-platform`) glob re-exports
// `acme-ledger` (`pub use ledger::*;`), where the INSERT is written. A crash after the commit
// loses the posting. SPEC: "Paths resolve through `use`, `pub use` and glob re-exports"; MA001
// primary: "the ack call".
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::message::Message;
use serde::Deserialize;
use sqlx::PgPool;

#[derive(Deserialize)]
struct Posting {
    posting_id: String,
    account: String,
    amount_cents: i64,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let pool = PgPool::connect(&std::env::var("DATABASE_URL")?).await?;
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", "kafka:9092")
        .set("group.id", "posting-consumer")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.subscribe(&["ledger.postings"])?;

    loop {
        let msg = consumer.recv().await?;
        let posting: Posting = serde_json::from_slice(msg.payload().unwrap_or_default())?;
        consumer.commit_message(&msg, CommitMode::Sync)?; //~ MA001
        platform::postings::record_posting(&pool, &posting.posting_id, &posting.account, posting.amount_cents).await?;
    }
}
