// MA007: a raw rdkafka consumer with `enable.auto.commit` unset auto-commits (librdkafka's
// default); its messages are handed to a tokio mpsc worker that writes to Postgres. Effects
// reached through a channel count: auto commit in front of a worker pool is MA007, reported at
// the `ClientConfig::new()` call because the default applies.
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::Message;
use serde::Deserialize;
use sqlx::PgPool;
use tokio::sync::mpsc;

#[derive(Debug, Deserialize)]
struct ContactUpdated {
    contact_id: String,
    email: String,
}

pub async fn run(brokers: &str, pool: PgPool) -> anyhow::Result<()> {
    let consumer: StreamConsumer = ClientConfig::new() //~ MA007
        .set("bootstrap.servers", brokers)
        .set("group.id", "crm-contacts")
        .create()?;
    consumer.subscribe(&["crm.contacts"])?;

    let (tx, mut rx) = mpsc::channel::<ContactUpdated>(256);
    tokio::spawn(async move {
        while let Some(contact) = rx.recv().await {
            if let Err(err) = sqlx::query("INSERT INTO contacts (contact_id, email) VALUES ($1, $2) ON CONFLICT (contact_id) DO UPDATE SET email = EXCLUDED.email")
                .bind(&contact.contact_id)
                .bind(&contact.email)
                .execute(&pool)
                .await
            {
                tracing::error!(contact_id = %contact.contact_id, %err, "contact upsert failed");
            }
        }
    });

    loop {
        let msg = consumer.recv().await?;
        if let Some(Ok(contact)) = msg.payload().map(serde_json::from_slice::<ContactUpdated>) {
            tx.send(contact).await?;
        }
    }
}
