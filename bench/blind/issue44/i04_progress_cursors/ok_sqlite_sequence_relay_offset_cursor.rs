// OK: a relay tails an append-only `journal` table by sequence number, sends each entry to SQS,
// and then stores the sequence it has sent up to in `relay_offsets`. SPEC: "a relay that reads
// rows, publishes them, then ... advances a cursor over them after the publish is the outbox
// pattern, not MA006"; "Not a business change either: a relay's or tailer's progress cursor".
use std::time::Duration;

use aws_sdk_sqs::Client as SqsClient;
use rusqlite::{params, Connection, OptionalExtension};

pub async fn relay(db: &Connection, sqs: &SqsClient, queue_url: &str) -> anyhow::Result<()> {
    loop {
        let from: i64 = db
            .query_row("SELECT seq FROM relay_offsets WHERE relay = 'journal-sqs'", [], |r| r.get(0))
            .optional()?
            .unwrap_or(0);
        let entries: Vec<(i64, String)> = {
            let mut stmt = db.prepare("SELECT seq, body FROM journal WHERE seq > ?1 ORDER BY seq LIMIT 10")?;
            let rows = stmt.query_map(params![from], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect::<Result<_, _>>()?
        };
        if entries.is_empty() {
            tokio::time::sleep(Duration::from_secs(1)).await;
            continue;
        }
        let mut last = from;
        for (seq, body) in &entries {
            sqs.send_message().queue_url(queue_url).message_body(body).send().await?;
            last = *seq;
        }
        db.execute(
            "INSERT INTO relay_offsets (relay, seq) VALUES ('journal-sqs', ?1) \
             ON CONFLICT (relay) DO UPDATE SET seq = excluded.seq",
            params![last],
        )?;
    }
}
