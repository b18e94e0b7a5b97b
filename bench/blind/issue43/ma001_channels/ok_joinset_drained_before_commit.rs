// OK: a batch of messages is fanned out to a JoinSet worker pool; every task is joined (and its
// error propagated) before the batch's offsets are committed, so the commit waits for all the
// effects ("a JoinHandle / JoinSet awaited before the ack").
use std::time::Duration;

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::Message;
use serde::Deserialize;
use sqlx::PgPool;
use tokio::task::JoinSet;

#[derive(Debug, Deserialize)]
struct SessionEnded {
    session_id: String,
    user_id: String,
    seconds: i64,
}

pub async fn run(brokers: &str, pool: PgPool) -> anyhow::Result<()> {
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .set("group.id", "session-store")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.subscribe(&["sessions.ended"])?;

    loop {
        let mut batch = Vec::with_capacity(100);
        let deadline = tokio::time::sleep(Duration::from_millis(200));
        tokio::pin!(deadline);
        while batch.len() < 100 {
            tokio::select! {
                _ = &mut deadline => break,
                m = consumer.recv() => batch.push(m?.detach()),
            }
        }
        if batch.is_empty() {
            continue;
        }

        let mut tasks = JoinSet::new();
        for msg in &batch {
            let Some(Ok(ended)) = msg.payload().map(serde_json::from_slice::<SessionEnded>) else {
                continue;
            };
            let pool = pool.clone();
            tasks.spawn(async move {
                sqlx::query("INSERT INTO sessions (session_id, user_id, seconds) VALUES ($1, $2, $3) ON CONFLICT (session_id) DO UPDATE SET seconds = EXCLUDED.seconds")
                    .bind(&ended.session_id)
                    .bind(&ended.user_id)
                    .bind(ended.seconds)
                    .execute(&pool)
                    .await
                    .map(|_| ())
            });
        }
        while let Some(joined) = tasks.join_next().await {
            joined??;
        }
        consumer.commit_consumer_state(CommitMode::Sync)?;
    }
}
