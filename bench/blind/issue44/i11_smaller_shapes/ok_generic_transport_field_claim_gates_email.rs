// OK: the same `Notifier<T: AsyncTransport>`; a Redis `SET NX EX` claim keyed by the message's
// `reset_id` is tested, only a first delivery sends the e-mail, and the ack comes last.
// SPEC MA011: "with no dedup record at all" (there is one, checked); MA001 "needs an effect after
// the ack" (none).
use async_nats::jetstream::consumer::PullConsumer;
use futures::StreamExt;
use lettre::{AsyncTransport, Message as Email};
use redis::aio::MultiplexedConnection;
use serde::Deserialize;

#[derive(Deserialize)]
struct PasswordReset {
    reset_id: String,
    email: String,
    link: String,
}

pub struct Notifier<T: AsyncTransport + Send + Sync> {
    mailer: T,
    redis: MultiplexedConnection,
    from: String,
}

impl<T> Notifier<T>
where
    T: AsyncTransport + Send + Sync,
    T::Error: std::error::Error + Send + Sync + 'static,
{
    pub async fn run(&mut self, consumer: PullConsumer) -> anyhow::Result<()> {
        let mut messages = consumer.messages().await?;
        while let Some(msg) = messages.next().await {
            let msg = msg.map_err(|e| anyhow::anyhow!(e))?;
            let req: PasswordReset = serde_json::from_slice(&msg.payload)?;
            let first: Option<String> = redis::cmd("SET")
                .arg(format!("reset-mail:{}", req.reset_id))
                .arg(1)
                .arg("NX")
                .arg("EX")
                .arg(86_400)
                .query_async(&mut self.redis)
                .await?;
            if first.is_some() {
                let email = Email::builder()
                    .from(self.from.parse()?)
                    .to(req.email.parse()?)
                    .subject("Reset your password")
                    .body(format!("Use this link within 30 minutes: {}", req.link))?;
                self.mailer.send(email).await?;
            }
            msg.ack().await.map_err(|e| anyhow::anyhow!(e))?;
        }
        Ok(())
    }
}
