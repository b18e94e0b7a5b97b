// OK: the FIFO relay uses the row's stored `message_id` (minted once, when the row was written)
// as `message_deduplication_id`; a re-selected row carries the same identity. `Utc::now()` only
// feeds a log line. SPEC: "A fresh id that reaches only logs, tracing spans or temporary names is
// clean"; MA002 is only "an id minted per row per pass ... instead of the row's stored id".
use std::time::Duration;

use aws_sdk_sqs::Client as SqsClient;
use chrono::Utc;
use rusqlite::{params, Connection};
use tracing::{info, warn};

struct Pending {
    rowid: i64,
    message_id: String,
    aggregate_id: String,
    body: String,
}

pub async fn relay(db: &Connection, sqs: &SqsClient, queue_url: &str) -> anyhow::Result<()> {
    loop {
        let pending: Vec<Pending> = {
            let mut stmt = db.prepare(
                "SELECT rowid, message_id, aggregate_id, body FROM outgoing_messages WHERE dispatched = 0 ORDER BY rowid LIMIT 10",
            )?;
            let rows = stmt.query_map([], |r| {
                Ok(Pending { rowid: r.get(0)?, message_id: r.get(1)?, aggregate_id: r.get(2)?, body: r.get(3)? })
            })?;
            rows.collect::<Result<_, _>>()?
        };

        let pass_started = Utc::now();
        info!(%pass_started, count = pending.len(), "relay pass");
        for p in pending {
            let sent = sqs
                .send_message()
                .queue_url(queue_url)
                .message_group_id(&p.aggregate_id)
                .message_deduplication_id(&p.message_id)
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
