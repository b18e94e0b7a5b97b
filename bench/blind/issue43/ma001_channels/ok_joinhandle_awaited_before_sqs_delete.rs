// OK: the effect runs in a spawned blocking task, but its JoinHandle is awaited (and the result
// propagated with `?`) before the SQS message is deleted: the delete is ordered after the write.
use aws_sdk_sqs::Client as SqsClient;
use rusqlite::{params, Connection};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Thumbnail {
    image_id: String,
    width: u32,
    height: u32,
}

pub async fn poll(sqs: SqsClient, queue_url: String, db_path: String) -> anyhow::Result<()> {
    loop {
        let out = sqs.receive_message().queue_url(&queue_url).max_number_of_messages(5).wait_time_seconds(20).send().await?;
        for message in out.messages() {
            let Some(body) = message.body() else { continue };
            let thumb: Thumbnail = serde_json::from_str(body)?;
            let path = db_path.clone();
            let handle = tokio::task::spawn_blocking(move || -> rusqlite::Result<()> {
                let conn = Connection::open(path)?;
                conn.execute(
                    "INSERT INTO thumbnails (image_id, width, height) VALUES (?1, ?2, ?3) ON CONFLICT(image_id) DO UPDATE SET width = excluded.width, height = excluded.height",
                    params![thumb.image_id, thumb.width, thumb.height],
                )?;
                Ok(())
            });
            handle.await??;
            if let Some(receipt) = message.receipt_handle() {
                sqs.delete_message().queue_url(&queue_url).receipt_handle(receipt).send().await?;
            }
        }
    }
}
