// MA014: a Kafka-to-Kinesis bridge sends each polled message with `put_records`, logs
// `failed_record_count`, and commits the Kafka offset. Logging the count is not acting on it, so
// a throttled record's offset is committed anyway and the record is lost: MA014 at the commit.
use aws_sdk_kinesis::primitives::Blob;
use aws_sdk_kinesis::types::PutRecordsRequestEntry;
use aws_sdk_kinesis::Client as KinesisClient;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::Message;

pub async fn bridge(brokers: &str, kinesis: KinesisClient, stream: &str) -> anyhow::Result<()> {
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .set("group.id", "kinesis-bridge")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.subscribe(&["telemetry"])?;

    loop {
        let msg = consumer.recv().await?;
        let Some(payload) = msg.payload() else { continue };
        let key = String::from_utf8_lossy(msg.key().unwrap_or(b"none")).into_owned();
        let entry = PutRecordsRequestEntry::builder().partition_key(key).data(Blob::new(payload.to_vec())).build()?;
        let out = kinesis.put_records().stream_name(stream).records(entry).send().await?;
        if let Some(failed) = out.failed_record_count() {
            tracing::warn!(failed, offset = msg.offset(), "kinesis rejected records");
        }
        consumer.commit_message(&msg, CommitMode::Async)?; //~ MA014
    }
}
