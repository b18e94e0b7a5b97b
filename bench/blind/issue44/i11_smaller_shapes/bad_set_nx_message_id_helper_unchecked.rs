// Bad (MA005): contrast with the lock helper — here the key passed to the helper is built from
// the message's `grant_id`, so the `SET NX` is a dedup claim; the helper drops the reply and the
// caller e-mails the bonus notice on every delivery. SPEC: "A dedup record is recognized ... by
// its shape: an insert that ignores conflicts (... `SET NX`) keyed by a value taken from the
// message, which runs before the effect it gates"; MA005: "the dedup claim's result ... is ignored
// and the effect runs anyway"; primary: "the dedup claim" (in the helper, where it is written).
use lettre::{AsyncSmtpTransport, AsyncTransport, Message as Email, Tokio1Executor};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::message::Message;
use redis::aio::MultiplexedConnection;
use serde::Deserialize;

#[derive(Deserialize)]
struct BonusGranted {
    grant_id: String,
    email: String,
    coins: i64,
}

async fn remember(redis: &mut MultiplexedConnection, key: &str) -> anyhow::Result<()> {
    redis::cmd("SET").arg(key).arg(1).arg("NX").arg("EX").arg(604_800).query_async::<_, Option<String>>(redis).await?; //~ MA005
    Ok(())
}

pub async fn run(mut redis: MultiplexedConnection, mailer: AsyncSmtpTransport<Tokio1Executor>) -> anyhow::Result<()> {
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", "kafka:9092")
        .set("group.id", "bonus-mailer")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.subscribe(&["game.bonuses"])?;
    loop {
        let msg = consumer.recv().await?;
        let ev: BonusGranted = serde_json::from_slice(msg.payload().unwrap_or_default())?;
        remember(&mut redis, &format!("bonus-mail:{}", ev.grant_id)).await?;
        let email = Email::builder()
            .from("Arcade <bonus@arcade.example>".parse()?)
            .to(ev.email.parse()?)
            .subject("You received a bonus")
            .body(format!("{} coins were added to your wallet.", ev.coins))?;
        mailer.send(email).await?;
        consumer.commit_message(&msg, CommitMode::Async)?;
    }
}
