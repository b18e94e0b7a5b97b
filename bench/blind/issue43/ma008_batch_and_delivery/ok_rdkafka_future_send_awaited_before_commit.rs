// OK: the FutureProducer's delivery future is awaited and its error propagated before the source
// offset is committed, so the commit follows the broker's acceptance of the forwarded record.
use std::time::Duration;

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::Message;

pub async fn run(brokers: &str) -> anyhow::Result<()> {
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .set("group.id", "login-router")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.subscribe(&["raw.logins"])?;
    let producer: FutureProducer = ClientConfig::new().set("bootstrap.servers", brokers).create()?;

    loop {
        let msg = consumer.recv().await?;
        let Some(body) = msg.payload() else { continue };
        let key = msg.key().unwrap_or_default();
        producer
            .send(FutureRecord::to("logins.routed").key(key).payload(body), Duration::from_secs(5))
            .await
            .map_err(|(err, _)| err)?;
        consumer.commit_message(&msg, CommitMode::Async)?;
    }
}
