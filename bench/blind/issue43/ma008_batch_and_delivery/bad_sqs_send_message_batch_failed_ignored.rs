// MA008: a scheduled job fans reminders out with SQS `send_message_batch`; `?` only catches a
// failed request, and the response's `failed` entries are never read. No progress record follows
// the batch, so the ignored per-entry failures are an unchecked publish: MA008 at the batch call
// ("Batch calls with per-entry results").
use aws_sdk_sqs::types::SendMessageBatchRequestEntry;
use aws_sdk_sqs::Client as SqsClient;
use serde::Serialize;

#[derive(Serialize)]
pub struct Reminder {
    pub reminder_id: String,
    pub user_id: String,
    pub text: String,
}

pub async fn enqueue_reminders(sqs: &SqsClient, queue_url: &str, due: Vec<Reminder>) -> anyhow::Result<usize> {
    let mut sent = 0;
    for chunk in due.chunks(10) {
        let mut entries = Vec::with_capacity(chunk.len());
        for r in chunk {
            entries.push(
                SendMessageBatchRequestEntry::builder()
                    .id(&r.reminder_id)
                    .message_body(serde_json::to_string(r)?)
                    .build()?,
            );
        }
        let out = sqs.send_message_batch().queue_url(queue_url).set_entries(Some(entries)).send().await?; //~ MA008
        sent += out.successful().len();
    }
    Ok(sent)
}
