// Bad (MA009): consume-transform-produce with a transactional producer; the transform is looked
// up in a `HashMap<String, Box<dyn Transform>>` by topic and called between
// `begin_transaction` and `commit_transaction`. `EnrichOrder` upserts an audit row with sqlx: the
// Kafka transaction does not roll it back. SPEC MA009: "SQL writes ... inside a Kafka transaction";
// decision: "SQL, HTTP or e-mail inside a Kafka transaction is MA009, not MA006 or MA011";
// primary: "the external effect".
use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::message::Message;
use rdkafka::producer::{FutureProducer, FutureRecord, Producer};
use rdkafka::{Offset, TopicPartitionList};
use sqlx::PgPool;

#[async_trait]
trait Transform: Send + Sync {
    fn output_topic(&self) -> &str;
    async fn transform(&self, payload: &[u8]) -> anyhow::Result<Vec<u8>>;
}

struct EnrichOrder {
    pool: PgPool,
}

#[async_trait]
impl Transform for EnrichOrder {
    fn output_topic(&self) -> &str {
        "orders.enriched"
    }
    async fn transform(&self, payload: &[u8]) -> anyhow::Result<Vec<u8>> {
        let mut order: serde_json::Value = serde_json::from_slice(payload)?;
        order["enriched"] = serde_json::Value::Bool(true);
        let id = order["id"].as_i64();
        sqlx::query("INSERT INTO enrichment_audit (order_id, enriched_at) VALUES ($1, now()) ON CONFLICT (order_id) DO UPDATE SET enriched_at = now()").bind(id).execute(&self.pool).await?; //~ MA009
        Ok(serde_json::to_vec(&order)?)
    }
}

pub async fn run(pool: PgPool) -> anyhow::Result<()> {
    let mut transforms: HashMap<String, Box<dyn Transform>> = HashMap::new();
    transforms.insert("orders.raw".to_string(), Box::new(EnrichOrder { pool }));

    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", "kafka:9092")
        .set("group.id", "enricher")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.subscribe(&["orders.raw"])?;
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", "kafka:9092")
        .set("transactional.id", "enricher-1")
        .create()?;
    producer.init_transactions(Duration::from_secs(30))?;

    loop {
        let msg = consumer.recv().await?;
        let Some(t) = transforms.get(msg.topic()) else { continue };
        producer.begin_transaction()?;
        let out = t.transform(msg.payload().unwrap_or_default()).await?;
        producer
            .send(
                FutureRecord::to(t.output_topic()).key(msg.key().unwrap_or_default()).payload(&out),
                Duration::from_secs(10),
            )
            .await
            .map_err(|(e, _)| e)?;
        let mut offsets = TopicPartitionList::new();
        offsets.add_partition_offset(msg.topic(), msg.partition(), Offset::Offset(msg.offset() + 1))?;
        let meta = consumer.group_metadata().ok_or_else(|| anyhow::anyhow!("no group metadata"))?;
        producer.send_offsets_to_transaction(&offsets, &meta, Duration::from_secs(10))?;
        producer.commit_transaction(Duration::from_secs(30))?;
    }
}
