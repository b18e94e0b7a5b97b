// MA014: an SQS relay forwards each received batch to a partner queue with `send_message_batch`
// and deletes the source messages; the response's `failed` entries are never read. A partially
// failed batch is a failure ignored, and the delete after it on that path is MA014 (it wins over
// MA008 for the batch: "one defect, one finding").
use aws_sdk_sqs::types::SendMessageBatchRequestEntry;
use aws_sdk_sqs::Client as SqsClient;

pub async fn relay(sqs: &SqsClient, source_url: &str, target_url: &str) -> anyhow::Result<()> {
    loop {
        let received = sqs.receive_message().queue_url(source_url).max_number_of_messages(10).wait_time_seconds(20).send().await?;
        let messages = received.messages();
        if messages.is_empty() {
            continue;
        }
        let mut entries = Vec::new();
        for m in messages {
            entries.push(
                SendMessageBatchRequestEntry::builder()
                    .id(m.message_id().unwrap_or_default())
                    .message_body(m.body().unwrap_or_default())
                    .build()?,
            );
        }
        sqs.send_message_batch().queue_url(target_url).set_entries(Some(entries)).send().await?;
        for m in messages {
            if let Some(receipt) = m.receipt_handle() {
                sqs.delete_message().queue_url(source_url).receipt_handle(receipt).send().await?; //~ MA014
            }
        }
    }
}
