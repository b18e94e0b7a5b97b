// OK: the same shape as an auto-committing consumer in front of a worker pool, but the workers
// only fold events into an in-memory histogram and emit tracing; there is no effect anywhere on
// the path (no DB write, publish, HTTP POST, e-mail or file write), so the consumer is not "a
// consumer with side effects" and auto commit is fine (MA007).
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::Message;
use serde::Deserialize;
use tokio::sync::mpsc;

#[derive(Debug, Deserialize)]
struct Latency {
    route: String,
    millis: u64,
}

pub async fn run(brokers: &str, histogram: Arc<Mutex<HashMap<String, Vec<u64>>>>) -> anyhow::Result<()> {
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .set("group.id", "latency-dashboard")
        .set("enable.auto.commit", "true")
        .set("auto.offset.reset", "latest")
        .create()?;
    consumer.subscribe(&["edge.latency"])?;

    let (tx, mut rx) = mpsc::channel::<Latency>(10_000);
    let hist = Arc::clone(&histogram);
    tokio::spawn(async move {
        while let Some(sample) = rx.recv().await {
            let mut guard = hist.lock().unwrap();
            let bucket = guard.entry(sample.route.clone()).or_default();
            bucket.push(sample.millis);
            if bucket.len() > 5_000 {
                bucket.drain(..1_000);
            }
            tracing::trace!(route = %sample.route, millis = sample.millis, "sample folded");
        }
    });

    loop {
        let msg = consumer.recv().await?;
        if let Some(Ok(sample)) = msg.payload().map(serde_json::from_slice::<Latency>) {
            let _ = tx.try_send(sample);
        }
    }
}
