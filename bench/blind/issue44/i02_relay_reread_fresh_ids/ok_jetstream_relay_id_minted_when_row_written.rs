// OK: the `Nats-Msg-Id` is minted once, in the service method that writes the business row and
// the outbox row in one transaction; the relay reads it back from the row on every tick. The
// `Uuid::new_v4()` in `relay_tick` names only the tracing span. SPEC: "A fresh id that reaches
// only logs, tracing spans or temporary names is clean"; MA002 is "an id minted per row per pass
// ... instead of the row's stored id".
use async_nats::jetstream;
use async_nats::HeaderMap;
use tokio_postgres::Client;
use tracing::{info_span, warn, Instrument};
use uuid::Uuid;

pub async fn schedule_reminder(pg: &mut Client, user_id: i64, text: &str) -> anyhow::Result<()> {
    let tx = pg.transaction().await?;
    tx.execute(
        "INSERT INTO reminders (user_id, text) VALUES ($1, $2) ON CONFLICT (user_id, text) DO NOTHING",
        &[&user_id, &text],
    )
    .await?;
    let msg_id = Uuid::new_v4();
    tx.execute(
        "INSERT INTO notifications_outbox (msg_id, subject, body, status) VALUES ($1, 'reminders.created', $2, 'pending')",
        &[&msg_id, &text.as_bytes()],
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

pub async fn relay_tick(pg: &Client, js: &jetstream::Context) -> anyhow::Result<()> {
    let tick_id = Uuid::new_v4();
    async {
        let rows = pg
            .query("SELECT id, msg_id, subject, body FROM notifications_outbox WHERE status = 'pending' ORDER BY id LIMIT 100", &[])
            .await?;
        for row in rows {
            let id: i64 = row.get(0);
            let msg_id: Uuid = row.get(1);
            let subject: String = row.get(2);
            let body: Vec<u8> = row.get(3);
            let mut headers = HeaderMap::new();
            headers.insert("Nats-Msg-Id", msg_id.to_string().as_str());
            let published = async { js.publish_with_headers(subject, headers, body.into()).await?.await }.await;
            if let Err(e) = published {
                warn!(error = %e, id, "publish failed");
                continue;
            }
            pg.execute("UPDATE notifications_outbox SET status = 'sent' WHERE id = $1", &[&id]).await?;
        }
        anyhow::Ok(())
    }
    .instrument(info_span!("relay_tick", %tick_id))
    .await
}
