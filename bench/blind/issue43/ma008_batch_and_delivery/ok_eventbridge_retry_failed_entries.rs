// OK: entries whose `error_code` is set are collected and sent again (bounded retries), and the
// function errors if some still fail after the last attempt: retrying the failed entries acts on
// the per-entry results.
use aws_sdk_eventbridge::types::PutEventsRequestEntry;
use aws_sdk_eventbridge::Client as EventBridgeClient;

pub async fn put_all(eb: &EventBridgeClient, mut pending: Vec<PutEventsRequestEntry>) -> anyhow::Result<()> {
    for attempt in 0..5 {
        let out = eb.put_events().set_entries(Some(pending.clone())).send().await?;
        if out.failed_entry_count() == 0 {
            return Ok(());
        }
        let mut retry = Vec::new();
        for (entry, result) in pending.iter().zip(out.entries()) {
            if result.error_code().is_some() {
                retry.push(entry.clone());
            }
        }
        tracing::info!(attempt, failed = retry.len(), "retrying rejected events");
        pending = retry;
        tokio::time::sleep(std::time::Duration::from_millis(100 << attempt)).await;
    }
    anyhow::bail!("{} events still rejected after retries", pending.len())
}
