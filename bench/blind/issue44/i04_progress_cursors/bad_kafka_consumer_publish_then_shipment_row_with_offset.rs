// Bad (MA006): a Kafka handler publishes a `shipment.requested` record and then commits a DB
// transaction that stores its consumer offset AND inserts the shipment row. The offset in the DB
// is progress, but the shipment row is a business change committed apart from the publish.
// SPEC: "a handler that publishes and writes a business row is still MA006" (the item under
// test); MA006 primary: "the publish call".
use std::time::Duration;

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::message::Message;
use rdkafka::producer::{FutureProducer, FutureRecord};
use serde::Deserialize;
use sqlx::PgPool;

#[derive(Deserialize)]
struct OrderPaid {
    order_id: i64,
    warehouse: String,
}

pub async fn run(pool: PgPool, producer: FutureProducer) -> anyhow::Result<()> {
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", "kafka:9092")
        .set("group.id", "fulfilment")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.subscribe(&["orders.paid"])?;

    loop {
        let msg = consumer.recv().await?;
        let ev: OrderPaid = serde_json::from_slice(msg.payload().unwrap_or_default())?;
        let key = ev.order_id.to_string();
        producer
            .send(FutureRecord::to("shipment.requested").key(&key).payload(&ev.warehouse), Duration::from_secs(5)) //~ MA006
            .await
            .map_err(|(e, _)| e)?;

        let mut tx = pool.begin().await?;
        sqlx::query(
            "INSERT INTO shipments (order_id, warehouse, status) VALUES ($1, $2, 'requested') \
             ON CONFLICT (order_id) DO UPDATE SET warehouse = EXCLUDED.warehouse",
        )
        .bind(ev.order_id)
        .bind(&ev.warehouse)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO consumer_offsets (grp, topic, part, next_offset) VALUES ('fulfilment', $1, $2, $3) \
             ON CONFLICT (grp, topic, part) DO UPDATE SET next_offset = EXCLUDED.next_offset",
        )
        .bind(msg.topic())
        .bind(msg.partition())
        .bind(msg.offset() + 1)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
    }
}
