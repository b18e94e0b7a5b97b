// MA007 (iggy, high-level consumer): `AutoCommit::IntervalOrWhen(.., PollingMessages)` stores
// the offsets of a batch when it is polled (and every second), before its messages are
// processed; a crash while inserting loses them.
use futures::StreamExt;
use iggy::clients::client::IggyClient;
use iggy::prelude::*;
use sqlx::PgPool;

pub async fn run(client: &IggyClient, pool: PgPool) -> anyhow::Result<()> {
    let mut consumer = client
        .consumer_group("order-writer", "shop", "orders")?
        .auto_commit(AutoCommit::IntervalOrWhen(IggyDuration::ONE_SECOND, AutoCommitWhen::PollingMessages)) //~ MA007
        .create_consumer_group_if_not_exists()
        .auto_join_consumer_group()
        .polling_strategy(PollingStrategy::next())
        .build();
    consumer.init().await?;
    while let Some(received) = consumer.next().await {
        let received = received?;
        sqlx::query("INSERT INTO orders (body) VALUES ($1)")
            .bind(received.message.payload.to_vec())
            .execute(&pool)
            .await?;
    }
    Ok(())
}
