// Bad (MA014): a JetStream consumer forwards each shipment event to Kafka through
// `forward` → `produce`; `produce` logs a failed delivery and returns Ok(()), so the JetStream
// message is acked and the forward is lost. SPEC MA014: "the error is logged ... and nothing keeps
// the message"; an effect includes "a publish to a broker"; primary: the ack call.
use std::time::Duration;

use async_nats::jetstream::consumer::PullConsumer;
use futures::StreamExt;
use rdkafka::producer::{FutureProducer, FutureRecord};
use tracing::error;

pub async fn bridge(consumer: PullConsumer, producer: FutureProducer) -> anyhow::Result<()> {
    let mut messages = consumer.messages().await?;
    while let Some(msg) = messages.next().await {
        let msg = msg.map_err(|e| anyhow::anyhow!(e))?;
        let key = msg.subject.to_string();
        forward(&producer, &key, &msg.payload).await?;
        msg.ack().await.map_err(|e| anyhow::anyhow!(e))?; //~ MA014
    }
    Ok(())
}

async fn forward(producer: &FutureProducer, key: &str, payload: &[u8]) -> anyhow::Result<()> {
    let topic = "shipments.v1";
    produce(producer, topic, key, payload).await
}

async fn produce(producer: &FutureProducer, topic: &str, key: &str, payload: &[u8]) -> anyhow::Result<()> {
    let delivery = producer
        .send(FutureRecord::to(topic).key(key).payload(payload), Duration::from_secs(10))
        .await;
    match delivery {
        Ok((partition, offset)) => tracing::debug!(partition, offset, "forwarded"),
        Err((e, _)) => error!(error = %e, key, "forward to kafka failed"),
    }
    Ok(())
}
