// OK (silent): the payload is sent on a tokio mpsc channel and the offset committed, but the
// receiver goes to `batch_sink::spawn_sink`, a crate outside the analyzed tree; no receiving loop
// can be found, so nothing is known about an effect after the commit ("A channel whose receiving
// loop cannot be found is silent").
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::Message;
use tokio::sync::mpsc;

pub async fn run(brokers: &str, sink_url: &str) -> anyhow::Result<()> {
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .set("group.id", "clickstream-forwarder")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.subscribe(&["web.clicks"])?;

    let (tx, rx) = mpsc::channel::<Vec<u8>>(4096);
    batch_sink::spawn_sink(rx, sink_url.to_owned());

    loop {
        let msg = consumer.recv().await?;
        let Some(payload) = msg.payload() else { continue };
        tx.send(payload.to_vec()).await?;
        consumer.commit_message(&msg, CommitMode::Async)?;
    }
}
