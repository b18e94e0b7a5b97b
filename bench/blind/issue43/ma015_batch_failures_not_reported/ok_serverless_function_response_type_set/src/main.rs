// OK (MA015, Rust half): `webhook-fanout` returns SqsBatchResponse; every `sqs` event of its
// Serverless function sets functionResponseType: ReportBatchItemFailures.
use std::collections::HashMap;

use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse, SqsEvent};
use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_dynamodb::Client as DynamoClient;
use lambda_runtime::{run, service_fn, Error, LambdaEvent};

async fn handler(ddb: &DynamoClient, event: LambdaEvent<SqsEvent>) -> Result<SqsBatchResponse, Error> {
    let mut batch_item_failures = Vec::new();
    for record in event.payload.records {
        let id = record.message_id.clone().unwrap_or_default();
        let mut item = HashMap::new();
        item.insert("delivery_id".to_string(), AttributeValue::S(id.clone()));
        item.insert("payload".to_string(), AttributeValue::S(record.body.clone().unwrap_or_default()));
        if ddb.put_item().table_name("webhook_deliveries").set_item(Some(item)).send().await.is_err() {
            batch_item_failures.push(BatchItemFailure { item_identifier: id });
        }
    }
    Ok(SqsBatchResponse { batch_item_failures })
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let config = aws_config::load_from_env().await;
    let ddb = DynamoClient::new(&config);
    let ddb = &ddb;
    run(service_fn(move |event: LambdaEvent<SqsEvent>| async move { handler(ddb, event).await })).await
}
