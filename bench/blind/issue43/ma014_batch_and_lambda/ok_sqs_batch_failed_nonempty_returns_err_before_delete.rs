// OK: the relay checks `out.failed()` after `send_message_batch` and returns an error before any
// delete, so the source messages stay in the queue and are redelivered after the visibility
// timeout: returning an error acts on the per-entry failures.
use aws_sdk_sqs::types::SendMessageBatchRequestEntry;
use aws_sdk_sqs::Client as SqsClient;

pub async fn relay_once(sqs: &SqsClient, source_url: &str, target_url: &str) -> anyhow::Result<()> {
    let received = sqs.receive_message().queue_url(source_url).max_number_of_messages(10).send().await?;
    let messages = received.messages();
    if messages.is_empty() {
        return Ok(());
    }
    let entries = messages
        .iter()
        .map(|m| SendMessageBatchRequestEntry::builder().id(m.message_id().unwrap_or_default()).message_body(m.body().unwrap_or_default()).build())
        .collect::<Result<Vec<_>, _>>()?;
    let out = sqs.send_message_batch().queue_url(target_url).set_entries(Some(entries)).send().await?;
    if !out.failed().is_empty() {
        return Err(anyhow::anyhow!("{} entries were not forwarded", out.failed().len()));
    }
    for m in messages {
        if let Some(receipt) = m.receipt_handle() {
            sqs.delete_message().queue_url(source_url).receipt_handle(receipt).send().await?;
        }
    }
    Ok(())
}
