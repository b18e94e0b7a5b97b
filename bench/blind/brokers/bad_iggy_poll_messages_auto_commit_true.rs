// MA007 (iggy, low-level client): `poll_messages(.., true)` stores the consumer's offset on the
// server as the batch is polled, before any of its messages is processed; a crash while
// inserting loses the rest of the batch.
use iggy::clients::client::IggyClient;
use iggy::prelude::*;
use sqlx::PgPool;

pub async fn run(client: &IggyClient, pool: &PgPool) -> anyhow::Result<()> {
    let consumer = Consumer::new(Identifier::named("order-writer")?);
    let stream = Identifier::named("shop")?;
    let topic = Identifier::named("orders")?;
    loop {
        let polled = client
            .poll_messages(&stream, &topic, Some(1), &consumer, &PollingStrategy::next(), 100, true) //~ MA007
            .await?;
        for message in &polled.messages {
            sqlx::query("INSERT INTO orders (body) VALUES ($1)")
                .bind(message.payload.to_vec())
                .execute(pool)
                .await?;
        }
    }
}
