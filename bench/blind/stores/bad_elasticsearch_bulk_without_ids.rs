// MA011: a batch of log lines from one SQS message is sent with `_bulk`, each operation
// an `index` with no `_id`: the server mints new ids, so a redelivered message indexes
// every line again. (`BulkOperation::index(doc).id(..)` would make it idempotent.)
use aws_sdk_sqs::Client as SqsClient;
use elasticsearch::{BulkOperation, BulkOperations, BulkParts, Elasticsearch};
use serde_json::Value;

pub async fn drain(sqs: &SqsClient, es: &Elasticsearch, queue_url: &str) -> anyhow::Result<()> {
    let out = sqs.receive_message().queue_url(queue_url).max_number_of_messages(10).send().await?;
    for m in out.messages() {
        let lines: Vec<Value> = serde_json::from_str(m.body().unwrap_or("[]"))?;
        let mut ops = BulkOperations::new();
        for line in lines {
            ops.push(BulkOperation::index(line))?;
        }
        es.bulk(BulkParts::Index("app-logs")) //~ MA011
            .body(vec![ops])
            .send()
            .await?
            .error_for_status_code()?;
        if let Some(receipt) = m.receipt_handle() {
            sqs.delete_message().queue_url(queue_url).receipt_handle(receipt).send().await?;
        }
    }
    Ok(())
}
