// OK: the same facade (`pub use store::profiles;` over the renamed `acme-storage` dependency),
// but `save_email` propagates the UPDATE's error; `?` leaves the loop before the ack and the
// message is redelivered. SPEC MA014 concerns only paths "where its effect failed" that still ack.
use async_nats::jetstream::{self, consumer::PullConsumer};
use futures::StreamExt;
use platform::profiles;
use serde::Deserialize;
use sqlx::PgPool;

#[derive(Deserialize)]
struct EmailChanged {
    user_id: i64,
    email: String,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let pool = PgPool::connect(&std::env::var("DATABASE_URL")?).await?;
    let js = jetstream::new(async_nats::connect("nats://nats:4222").await?);
    let consumer: PullConsumer = js.get_stream("USERS").await?.get_consumer("profile-sync").await?;
    let mut messages = consumer.messages().await?;
    while let Some(msg) = messages.next().await {
        let msg = msg.map_err(|e| anyhow::anyhow!(e))?;
        let ev: EmailChanged = serde_json::from_slice(&msg.payload)?;
        profiles::save_email(&pool, ev.user_id, &ev.email).await?;
        msg.ack().await.map_err(|e| anyhow::anyhow!(e))?;
    }
    Ok(())
}
