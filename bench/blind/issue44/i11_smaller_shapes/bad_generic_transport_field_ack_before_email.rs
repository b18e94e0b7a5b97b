// Bad (MA001): `Notifier<T: AsyncTransport>` holds the mailer in a generic field; `self.mailer.send`
// resolves through the bound to lettre's `AsyncTransport::send` (an e-mail). The handler acks the
// JetStream message first and sends the e-mail after: a crash in between loses it.
// SPEC: "a `dyn Trait`, `impl Trait` or `T: Trait` receiver goes to the implementations of that
// trait in the analyzed code" (here the trait is lettre's, known to the API knowledge: "API
// knowledge wins over bodies"); MA001: "before the effect runs at all"; primary: the ack.
use async_nats::jetstream::consumer::PullConsumer;
use futures::StreamExt;
use lettre::{AsyncTransport, Message as Email};
use serde::Deserialize;

#[derive(Deserialize)]
struct PasswordReset {
    email: String,
    link: String,
}

pub struct Notifier<T: AsyncTransport + Send + Sync> {
    mailer: T,
    from: String,
}

impl<T> Notifier<T>
where
    T: AsyncTransport + Send + Sync,
    T::Error: std::error::Error + Send + Sync + 'static,
{
    pub async fn run(&self, consumer: PullConsumer) -> anyhow::Result<()> {
        let mut messages = consumer.messages().await?;
        while let Some(msg) = messages.next().await {
            let msg = msg.map_err(|e| anyhow::anyhow!(e))?;
            let req: PasswordReset = serde_json::from_slice(&msg.payload)?;
            msg.ack().await.map_err(|e| anyhow::anyhow!(e))?; //~ MA001
            let email = Email::builder()
                .from(self.from.parse()?)
                .to(req.email.parse()?)
                .subject("Reset your password")
                .body(format!("Use this link within 30 minutes: {}", req.link))?;
            self.mailer.send(email).await?;
        }
        Ok(())
    }
}
