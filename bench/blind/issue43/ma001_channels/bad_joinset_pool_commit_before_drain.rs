// MA001: each message's write is spawned into a JoinSet, but the offset is committed right after
// the spawn; the set is only drained at shutdown. A spawned task is not ordered before the code
// after the spawn, so the commit can run before the upsert: a crash in between loses it.
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::Message;
use serde::Deserialize;
use sqlx::PgPool;
use tokio::task::JoinSet;

#[derive(Debug, Deserialize)]
struct PriceChanged {
    sku: String,
    price_cents: i64,
}

pub async fn run(brokers: &str, pool: PgPool) -> anyhow::Result<()> {
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .set("group.id", "price-cache")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.subscribe(&["catalog.prices"])?;

    let mut in_flight: JoinSet<Result<(), sqlx::Error>> = JoinSet::new();

    loop {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => break,
            received = consumer.recv() => {
                let msg = received?;
                let Some(Ok(change)) = msg.payload().map(serde_json::from_slice::<PriceChanged>) else {
                    continue;
                };
                let pool = pool.clone();
                in_flight.spawn(async move {
                    sqlx::query("INSERT INTO prices (sku, price_cents) VALUES ($1, $2) ON CONFLICT (sku) DO UPDATE SET price_cents = EXCLUDED.price_cents")
                        .bind(&change.sku)
                        .bind(change.price_cents)
                        .execute(&pool)
                        .await?;
                    Ok(())
                });
                consumer.commit_message(&msg, CommitMode::Async)?; //~ MA001
            }
        }
    }

    while let Some(done) = in_flight.join_next().await {
        done??;
    }
    Ok(())
}
