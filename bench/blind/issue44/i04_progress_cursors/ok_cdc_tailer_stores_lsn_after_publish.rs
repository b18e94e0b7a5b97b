// OK: a CDC tailer peeks logical-decoding changes, publishes each to JetStream (awaiting the
// stream ack), then stores the LSN it has published up to and advances the slot. SPEC MA006
// decision: "a relay's or tailer's progress cursor (the block, LSN, offset or sequence number it
// has published up to), written after the publish" is not a business change.
use std::time::Duration;

use async_nats::jetstream;
use tokio_postgres::Client;

pub async fn tail(pg: &Client, js: &jetstream::Context, slot: &str) -> anyhow::Result<()> {
    loop {
        let changes = pg
            .query(
                "SELECT lsn::text, data FROM pg_logical_slot_peek_changes($1, NULL, 500, 'format-version', '2')",
                &[&slot],
            )
            .await?;
        if changes.is_empty() {
            tokio::time::sleep(Duration::from_millis(250)).await;
            continue;
        }
        let mut last_lsn = String::new();
        for change in &changes {
            let lsn: String = change.get(0);
            let data: String = change.get(1);
            js.publish("cdc.orders", data.into_bytes().into()).await?.await?;
            last_lsn = lsn;
        }
        pg.execute(
            "INSERT INTO cdc_position (slot, lsn) VALUES ($1, $2::pg_lsn) \
             ON CONFLICT (slot) DO UPDATE SET lsn = EXCLUDED.lsn",
            &[&slot, &last_lsn],
        )
        .await?;
        pg.query("SELECT pg_replication_slot_advance($1, $2::pg_lsn)", &[&slot, &last_lsn]).await?;
    }
}
