// MA011: each loyalty event consumed from Kafka adds its points with `$inc`. Applied
// twice, the update adds twice: a crash before the offset commit replays the record and
// the customer is credited again. Nothing records which events were applied.
use anyhow::Context;
use mongodb::bson::{doc, Document};
use mongodb::Collection;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::message::Message;
use serde::Deserialize;

#[derive(Deserialize)]
struct PointsEarned {
    customer_id: String,
    points: i64,
}

pub async fn run(balances: Collection<Document>, brokers: &str) -> anyhow::Result<()> {
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .set("group.id", "loyalty")
        .set("enable.auto.commit", "false")
        .create()
        .context("creating consumer")?;
    consumer.subscribe(&["loyalty.points"])?;

    loop {
        let msg = consumer.recv().await?;
        let ev: PointsEarned = serde_json::from_slice(msg.payload().context("empty message")?)?;

        balances
            .update_one( //~ MA011
                doc! { "_id": &ev.customer_id },
                doc! { "$inc": { "points": ev.points } },
            )
            .upsert(true)
            .await?;

        consumer.commit_message(&msg, CommitMode::Async)?;
    }
}
