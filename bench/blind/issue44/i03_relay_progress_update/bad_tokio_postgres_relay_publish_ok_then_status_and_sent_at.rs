// Bad (MA014): the JetStream publish and its stream ack are turned into an Option with `.ok()`
// and never looked at; the row is then marked `status = 'sent', sent_at = now()`.
// SPEC MA014: failure ignored by "`.ok()`"; outbox decision: "marking them after a publish whose
// failure it ignores is MA014".
use async_nats::jetstream;
use tokio_postgres::Client;

pub async fn relay_batch(pg: &Client, js: &jetstream::Context) -> anyhow::Result<u64> {
    let rows = pg
        .query("SELECT id, subject, body FROM webhook_outbox WHERE status = 'queued' ORDER BY id LIMIT 50", &[])
        .await?;
    let mut n = 0;
    for row in rows {
        let id: i64 = row.get("id");
        let subject: String = row.get("subject");
        let body: Vec<u8> = row.get("body");
        let _ack = match js.publish(subject, body.into()).await.ok() {
            Some(pending) => pending.await.ok(),
            None => None,
        };
        pg.execute("UPDATE webhook_outbox SET status = 'sent', sent_at = now() WHERE id = $1", &[&id]).await?; //~ MA014
        n += 1;
    }
    Ok(n)
}
