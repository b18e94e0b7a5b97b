// OK: auto commit stays on, but `enable.auto.offset.store=false` and the worker task stores each
// message's offset only after its upsert succeeded (librdkafka's at-least-once pattern, exempt
// from MA007); the sender never stores or commits, so MA001 is satisfied too ("offsets stored or
// committed by the worker").
use std::sync::Arc;

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::Message;
use serde::Deserialize;
use sqlx::PgPool;
use tokio::sync::mpsc;

#[derive(Debug, Deserialize)]
struct Subscription {
    subscription_id: String,
    plan: String,
}

struct Item {
    sub: Subscription,
    topic: String,
    partition: i32,
    offset: i64,
}

pub async fn run(brokers: &str, pool: PgPool) -> anyhow::Result<()> {
    let consumer: Arc<StreamConsumer> = Arc::new(
        ClientConfig::new()
            .set("bootstrap.servers", brokers)
            .set("group.id", "subscriptions")
            .set("enable.auto.commit", "true")
            .set("enable.auto.offset.store", "false")
            .create()?,
    );
    consumer.subscribe(&["billing.subscriptions"])?;

    let (tx, mut rx) = mpsc::channel::<Item>(1);
    let worker_consumer = Arc::clone(&consumer);
    tokio::spawn(async move {
        while let Some(item) = rx.recv().await {
            let written = sqlx::query("INSERT INTO subscriptions (subscription_id, plan) VALUES ($1, $2) ON CONFLICT (subscription_id) DO UPDATE SET plan = EXCLUDED.plan")
                .bind(&item.sub.subscription_id)
                .bind(&item.sub.plan)
                .execute(&pool)
                .await;
            match written {
                Ok(_) => {
                    worker_consumer
                        .store_offset(&item.topic, item.partition, item.offset)
                        .expect("store offset");
                }
                Err(err) => panic!("subscription write failed, stopping before the offset moves: {err}"),
            }
        }
    });

    loop {
        let msg = consumer.recv().await?;
        let Some(Ok(sub)) = msg.payload().map(serde_json::from_slice::<Subscription>) else {
            continue;
        };
        tx.send(Item { sub, topic: msg.topic().to_owned(), partition: msg.partition(), offset: msg.offset() }).await?;
    }
}
