// MA008: a `BaseProducer::send` only enqueues the record; its delivery report arrives through
// `poll`/`flush`, and this loop calls neither before committing the source offset. A failed
// delivery is never seen: MA008 at the send ("a BaseProducer::send with no poll/flush before it").
use std::time::Duration;

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::producer::{BaseProducer, BaseRecord};
use rdkafka::Message;

pub fn run(brokers: &str) -> anyhow::Result<()> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .set("group.id", "audit-mirror")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.subscribe(&["audit.events"])?;
    let producer: BaseProducer = ClientConfig::new().set("bootstrap.servers", brokers).create()?;

    loop {
        let Some(result) = consumer.poll(Duration::from_millis(500)) else { continue };
        let msg = result?;
        let Some(payload) = msg.payload() else { continue };
        let key = msg.key().unwrap_or_default();
        producer.send(BaseRecord::to("audit.mirror").key(key).payload(payload)).map_err(|(e, _)| e)?; //~ MA008
        consumer.commit_message(&msg, CommitMode::Sync)?;
    }
}
