// OK: the BaseProducer's record is flushed (which serves delivery reports and fails if they do not
// arrive in time) before the source offset is committed: the ack waits for the broker's
// acceptance, so no MA008.
use std::time::Duration;

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::Message;

pub fn run(brokers: &str) -> anyhow::Result<()> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .set("group.id", "audit-mirror-safe")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.subscribe(&["audit.events"])?;
    let producer: BaseProducer = ClientConfig::new().set("bootstrap.servers", brokers).create()?;

    loop {
        let Some(result) = consumer.poll(Duration::from_millis(500)) else { continue };
        let msg = result?;
        let Some(payload) = msg.payload() else { continue };
        producer.send(BaseRecord::to("audit.mirror").key(msg.key().unwrap_or_default()).payload(payload)).map_err(|(e, _)| e)?;
        producer.flush(Duration::from_secs(10))?;
        consumer.commit_message(&msg, CommitMode::Sync)?;
    }
}
