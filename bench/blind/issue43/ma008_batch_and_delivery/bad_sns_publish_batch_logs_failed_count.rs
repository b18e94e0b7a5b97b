// MA008: SNS `publish_batch` can reject individual entries while the request succeeds; the
// function only logs how many failed and returns Ok. Logging the response or its failure count
// alone does not act on the failures, and no progress record follows: MA008 at the publish.
use aws_sdk_sns::types::PublishBatchRequestEntry;
use aws_sdk_sns::Client as SnsClient;

pub struct PriceAlert {
    pub alert_id: String,
    pub message: String,
}

pub async fn broadcast_alerts(sns: &SnsClient, topic_arn: &str, alerts: &[PriceAlert]) -> Result<(), aws_sdk_sns::Error> {
    let entries: Vec<PublishBatchRequestEntry> = alerts
        .iter()
        .map(|a| PublishBatchRequestEntry::builder().id(&a.alert_id).message(&a.message).build().expect("id and message set"))
        .collect();

    let out = sns.publish_batch().topic_arn(topic_arn).set_publish_batch_request_entries(Some(entries)).send().await?; //~ MA008
    if !out.failed().is_empty() {
        tracing::warn!(failed = out.failed().len(), "some price alerts were not published");
    }
    Ok(())
}
