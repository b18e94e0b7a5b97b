// MA008 (rusoto_sqs): reminders are fanned out with `send_message_batch`; `?` only catches a
// failed request and the result's `failed` entries are never read, so entries SQS rejected are
// dropped silently; only `result.successful` (a public field) is counted. No progress record
// follows: an unchecked publish at the batch call.
use rusoto_sqs::{SendMessageBatchRequest, SendMessageBatchRequestEntry, Sqs, SqsClient};

pub struct Reminder {
    pub id: String,
    pub text: String,
}

pub async fn enqueue_reminders(sqs: &SqsClient, queue_url: &str, due: Vec<Reminder>) -> anyhow::Result<usize> {
    let mut sent = 0;
    for chunk in due.chunks(10) {
        let entries = chunk
            .iter()
            .map(|r| SendMessageBatchRequestEntry {
                id: r.id.clone(),
                message_body: r.text.clone(),
                ..Default::default()
            })
            .collect();
        let result = sqs
            .send_message_batch(SendMessageBatchRequest { //~ MA008
                queue_url: queue_url.to_string(),
                entries,
            })
            .await?;
        sent += result.successful.len();
    }
    Ok(sent)
}
