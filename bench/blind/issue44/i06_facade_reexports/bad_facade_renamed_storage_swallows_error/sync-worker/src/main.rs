// Bad (MA014): `platform::profiles` is `pub use store::profiles;` where `store` is the renamed
// path dependency on `acme-storage`; its `save_email` logs a failed UPDATE and returns Ok(()), so
// the JetStream message is acked although the e-mail change was lost. SPEC MA014: "the error is
// logged ... and nothing keeps the message"; "Across functions, the primary location is the
// offending call where it is written" — the ack in the worker.
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
        msg.ack().await.map_err(|e| anyhow::anyhow!(e))?; //~ MA014
    }
    Ok(())
}
