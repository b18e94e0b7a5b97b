// MA015 (Rust half): DynamoDB Streams batch handler (bin `table-sync`) that returns
// DynamoDbEventResponse with batch_item_failures; its SAM event (SyncFunction in template.yaml)
// does not enable ReportBatchItemFailures.
use std::collections::HashMap;

use aws_lambda_events::event::dynamodb::Event as DynamoDbEvent;
use aws_lambda_events::event::streams::{DynamoDbBatchItemFailure, DynamoDbEventResponse};
use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_dynamodb::Client as DynamoClient;
use lambda_runtime::{run, service_fn, Error, LambdaEvent};

async fn handler(ddb: &DynamoClient, event: LambdaEvent<DynamoDbEvent>) -> Result<DynamoDbEventResponse, Error> {
    let mut response = DynamoDbEventResponse::default();
    for record in event.payload.records {
        let seq = record.change.sequence_number.clone();
        let keys = serde_json::to_value(&record.change.keys)?;
        let account = keys["account_id"]["S"].as_str().unwrap_or_default().to_owned();
        let mut item = HashMap::new();
        item.insert("account_id".to_string(), AttributeValue::S(account));
        item.insert("last_event".to_string(), AttributeValue::S(record.event_name.clone()));
        if let Err(err) = ddb.put_item().table_name("accounts_replica").set_item(Some(item)).send().await {
            tracing::warn!(?seq, %err, "replica write failed");
            response.batch_item_failures.push(DynamoDbBatchItemFailure { item_identifier: seq });
        }
    }
    Ok(response)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let config = aws_config::load_from_env().await;
    let ddb = DynamoClient::new(&config);
    let ddb = &ddb;
    run(service_fn(move |event: LambdaEvent<DynamoDbEvent>| async move { handler(ddb, event).await })).await
}
