// OK: the posting (a keyed upsert defined in `acme-ledger`, reached through the glob re-export in
// `acme-platform`) is recorded first; the offset is committed after it. SPEC MA001 "needs an
// effect after the ack on the same path"; the upsert on `posting_id` is idempotent (no MA011).
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
        platform::postings::record_posting(&pool, &posting.posting_id, &posting.account, posting.amount_cents).await?;
        consumer.commit_message(&msg, CommitMode::Sync)?;
    }
}
