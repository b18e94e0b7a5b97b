// Bad (MA002): the relay re-reads `status = 'pending'` rows each tick; `headers_for` mints a
// `Uuid::new_v4()` per call and it becomes the `Nats-Msg-Id` header, which JetStream uses to drop
// duplicates. A row whose publish failed gets a new id on the next tick. SPEC: "an id minted per
// row per pass ... is MA002"; "Across functions, the primary location is the offending call where
// it is written, even in a helper".
use std::time::Duration;

use async_nats::jetstream;
use async_nats::HeaderMap;
use tokio_postgres::Client;
use tracing::warn;
use uuid::Uuid;

pub async fn tick_loop(pg: &Client, js: &jetstream::Context) -> anyhow::Result<()> {
    let mut interval = tokio::time::interval(Duration::from_secs(2));
    loop {
        interval.tick().await;
        let rows = pg
            .query("SELECT id, subject, body FROM notifications_outbox WHERE status = 'pending' ORDER BY id LIMIT 100", &[])
            .await?;
        for row in rows {
            let id: i64 = row.get(0);
            let subject: String = row.get(1);
            let body: Vec<u8> = row.get(2);
            let ack = match js.publish_with_headers(subject, headers_for(id), body.into()).await {
                Ok(fut) => fut.await,
                Err(e) => {
                    warn!(error = %e, id, "publish failed");
                    continue;
                }
            };
            if let Err(e) = ack {
                warn!(error = %e, id, "stream did not ack");
                continue;
            }
            pg.execute("UPDATE notifications_outbox SET status = 'sent' WHERE id = $1", &[&id]).await?;
        }
    }
}

fn headers_for(row_id: i64) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert("Nats-Msg-Id", Uuid::new_v4().to_string().as_str()); //~ MA002
    headers.insert("Outbox-Row", row_id.to_string().as_str());
    headers
}
