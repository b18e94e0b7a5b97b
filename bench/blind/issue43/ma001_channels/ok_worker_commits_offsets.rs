// OK: the poll loop only forwards a `Work` struct (payload plus topic/partition/offset) to a
// worker task; the worker shares the consumer through an Arc, upserts the row and then commits
// that message's offset itself. The sender never acks, so progress follows the effect
// ("offsets stored or committed by the worker").
use std::sync::Arc;

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::{Message, Offset, TopicPartitionList};
use serde::Deserialize;
use sqlx::PgPool;
use tokio::sync::mpsc;

#[derive(Debug, Deserialize)]
struct UserRenamed {
    user_id: String,
    name: String,
}

struct Work {
    event: UserRenamed,
    topic: String,
    partition: i32,
    offset: i64,
}

async fn rename_worker(
    mut rx: mpsc::Receiver<Work>,
    consumer: Arc<StreamConsumer>,
    pool: PgPool,
) -> anyhow::Result<()> {
    while let Some(work) = rx.recv().await {
        sqlx::query("INSERT INTO user_names (user_id, name) VALUES ($1, $2) ON CONFLICT (user_id) DO UPDATE SET name = EXCLUDED.name")
            .bind(&work.event.user_id)
            .bind(&work.event.name)
            .execute(&pool)
            .await?;
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset(&work.topic, work.partition, Offset::Offset(work.offset + 1))?;
        consumer.commit(&tpl, CommitMode::Async)?;
    }
    Ok(())
}

pub async fn run(brokers: &str, pool: PgPool) -> anyhow::Result<()> {
    let consumer: Arc<StreamConsumer> = Arc::new(
        ClientConfig::new()
            .set("bootstrap.servers", brokers)
            .set("group.id", "user-names")
            .set("enable.auto.commit", "false")
            .create()?,
    );
    consumer.subscribe(&["users.renamed"])?;

    let (tx, rx) = mpsc::channel::<Work>(1);
    tokio::spawn(rename_worker(rx, Arc::clone(&consumer), pool));

    loop {
        let msg = consumer.recv().await?;
        let Some(Ok(event)) = msg.payload().map(serde_json::from_slice::<UserRenamed>) else {
            continue;
        };
        tx.send(Work {
            event,
            topic: msg.topic().to_owned(),
            partition: msg.partition(),
            offset: msg.offset(),
        })
        .await?;
    }
}
