// Bad (MA002): an SQS FIFO relay builds the `message_deduplication_id` from the aggregate id and
// the current time on every pass; a row that failed is re-selected (`dispatched = 0`) and sent
// with a new deduplication id, so SQS cannot drop the duplicate. SPEC: "an id minted per row per
// pass (`Uuid::new_v4`, a `now()`-based id) instead of the row's stored id is MA002"; primary:
// "the id-generating call".
use std::time::Duration;

use aws_sdk_sqs::Client as SqsClient;
use chrono::Utc;
use rusqlite::{params, Connection};
use tracing::warn;

struct Pending {
    rowid: i64,
    aggregate_id: String,
    body: String,
}

pub async fn relay(db: &Connection, sqs: &SqsClient, queue_url: &str) -> anyhow::Result<()> {
    loop {
        let pending: Vec<Pending> = {
            let mut stmt = db.prepare(
                "SELECT rowid, aggregate_id, body FROM outgoing_messages WHERE dispatched = 0 ORDER BY rowid LIMIT 10",
            )?;
            let rows = stmt.query_map([], |r| {
                Ok(Pending { rowid: r.get(0)?, aggregate_id: r.get(1)?, body: r.get(2)? })
            })?;
            rows.collect::<Result<_, _>>()?
        };

        for p in pending {
            let dedup_id = format!("{}-{}", p.aggregate_id, Utc::now().timestamp_millis()); //~ MA002
            let sent = sqs
                .send_message()
                .queue_url(queue_url)
                .message_group_id(&p.aggregate_id)
                .message_deduplication_id(dedup_id)
                .message_body(&p.body)
                .send()
                .await;
            if let Err(e) = sent {
                warn!(error = %e, rowid = p.rowid, "sqs send failed");
                continue;
            }
            db.execute("UPDATE outgoing_messages SET dispatched = 1 WHERE rowid = ?1", params![p.rowid])?;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
