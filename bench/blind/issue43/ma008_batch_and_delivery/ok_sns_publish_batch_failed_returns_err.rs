// OK: after SNS `publish_batch` the caller checks `out.failed()` and returns an error when any
// entry was rejected, so the caller (or its scheduler) retries: returning an error acts on the
// per-entry failures ("Batch calls with per-entry results").
use aws_sdk_sns::types::PublishBatchRequestEntry;
use aws_sdk_sns::Client as SnsClient;

pub async fn publish_digest(sns: &SnsClient, topic_arn: &str, items: &[(String, String)]) -> anyhow::Result<()> {
    let entries = items
        .iter()
        .map(|(id, body)| PublishBatchRequestEntry::builder().id(id).message(body).build())
        .collect::<Result<Vec<_>, _>>()?;
    let out = sns.publish_batch().topic_arn(topic_arn).set_publish_batch_request_entries(Some(entries)).send().await?;
    if !out.failed().is_empty() {
        let ids: Vec<&str> = out.failed().iter().map(|f| f.id()).collect();
        return Err(anyhow::anyhow!("publish_batch rejected entries {ids:?}"));
    }
    Ok(())
}
