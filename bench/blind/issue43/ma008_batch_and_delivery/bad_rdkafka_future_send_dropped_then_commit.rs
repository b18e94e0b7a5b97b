// MA008: the enrichment consumer builds a `FutureProducer::send` future and drops it (it is
// bound to `_`), then commits the source offset. The send is never awaited before the ack, so its
// delivery report is never seen: MA008 at the send ("a FutureProducer::send / send_result future
// dropped or never awaited before the source is acked ... is MA008 at the send").
use std::time::Duration;

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::Message;

pub async fn run(brokers: &str) -> anyhow::Result<()> {
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .set("group.id", "geo-enricher")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.subscribe(&["raw.logins"])?;
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .create()?;

    loop {
        let msg = consumer.recv().await?;
        let Some(body) = msg.payload() else { continue };
        let key = msg.key().unwrap_or_default().to_vec();
        let enriched = geo::annotate(body);
        let _ = producer.send(FutureRecord::to("enriched.logins").key(&key).payload(&enriched), Duration::from_secs(5)); //~ MA008
        consumer.commit_message(&msg, CommitMode::Async)?;
    }
}

mod geo {
    pub fn annotate(body: &[u8]) -> Vec<u8> {
        let mut v = body.to_vec();
        v.extend_from_slice(b" country=unknown");
        v
    }
}
