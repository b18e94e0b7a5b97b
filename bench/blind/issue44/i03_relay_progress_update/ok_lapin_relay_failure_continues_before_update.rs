// OK: the same relay, but a failed publish `continue`s past the UPDATE: the row stays 'pending'
// and is retried next pass. SPEC outbox decision: MA014 is "marking them after a publish whose
// failure it ignores"; here the failure skips the progress record.
use lapin::options::{BasicPublishOptions, ConfirmSelectOptions};
use lapin::{BasicProperties, Channel, Connection};
use sqlx::{PgPool, Row};
use tracing::error;

pub async fn relay(pool: &PgPool, conn: &Connection) -> anyhow::Result<()> {
    let channel = conn.create_channel().await?;
    channel.confirm_select(ConfirmSelectOptions::default()).await?;

    let rows = sqlx::query("SELECT id, routing_key, body FROM outbox_messages WHERE status = 'pending' ORDER BY id LIMIT 100")
        .fetch_all(pool)
        .await?;
    for row in rows {
        let id: i64 = row.get("id");
        let routing_key: String = row.get("routing_key");
        let body: Vec<u8> = row.get("body");
        if let Err(e) = publish(&channel, &routing_key, &body).await {
            error!(error = %e, id, "relay publish failed, leaving row pending");
            continue;
        }
        sqlx::query("UPDATE outbox_messages SET status = 'sent' WHERE id = $1").bind(id).execute(pool).await?;
    }
    Ok(())
}

async fn publish(channel: &Channel, routing_key: &str, body: &[u8]) -> anyhow::Result<()> {
    let confirm = channel
        .basic_publish("domain-events", routing_key, BasicPublishOptions::default(), body, BasicProperties::default())
        .await?
        .await?;
    if confirm.is_nack() {
        anyhow::bail!("broker nacked publish to {routing_key}");
    }
    Ok(())
}
