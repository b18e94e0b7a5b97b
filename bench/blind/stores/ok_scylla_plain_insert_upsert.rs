// A CQL INSERT is an upsert: it overwrites the row with the same primary key, so a
// redelivered message writes the same row again and acking after it is safe.
use futures::StreamExt;
use lapin::options::{BasicAckOptions, BasicConsumeOptions};
use lapin::types::FieldTable;
use lapin::Channel;
use scylla::client::session::Session;

pub async fn run(channel: Channel, session: Session) -> anyhow::Result<()> {
    let mut consumer = channel
        .basic_consume("users.profile", "profiles", BasicConsumeOptions::default(), FieldTable::default())
        .await?;
    while let Some(delivery) = consumer.next().await {
        let delivery = delivery?;
        let user_id = std::str::from_utf8(&delivery.data)?.to_string();
        session
            .query_unpaged("INSERT INTO app.profiles (user_id, active) VALUES (?, true)", (user_id,))
            .await?;
        delivery.ack(BasicAckOptions::default()).await?;
    }
    Ok(())
}
