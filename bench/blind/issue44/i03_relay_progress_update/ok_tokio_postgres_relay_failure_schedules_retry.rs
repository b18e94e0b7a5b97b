// OK: on a failed publish the relay only records the error and a `next_attempt_at` (the row stays
// 'queued'); `status = 'sent'` is written on the success arm. SPEC MA014 exemption: "a retry
// scheduled (a delayed re-publish, a `retry_at` row), a failure record written"; outbox decision:
// MA014 is "marking them after a publish whose failure it ignores".
use async_nats::jetstream;
use tokio_postgres::Client;
use tracing::warn;

pub async fn relay_batch(pg: &Client, js: &jetstream::Context) -> anyhow::Result<u64> {
    let rows = pg
        .query(
            "SELECT id, subject, body FROM webhook_outbox WHERE status = 'queued' AND next_attempt_at <= now() ORDER BY id LIMIT 50",
            &[],
        )
        .await?;
    let mut n = 0;
    for row in rows {
        let id: i64 = row.get("id");
        let subject: String = row.get("subject");
        let body: Vec<u8> = row.get("body");
        let published = async { js.publish(subject, body.into()).await?.await }.await;
        match published {
            Ok(_) => {
                pg.execute("UPDATE webhook_outbox SET status = 'sent', sent_at = now() WHERE id = $1", &[&id]).await?;
                n += 1;
            }
            Err(e) => {
                warn!(error = %e, id, "publish failed, rescheduling");
                pg.execute(
                    "UPDATE webhook_outbox SET last_error = $2, next_attempt_at = now() + interval '30 seconds' WHERE id = $1",
                    &[&id, &e.to_string()],
                )
                .await?;
            }
        }
    }
    Ok(n)
}
