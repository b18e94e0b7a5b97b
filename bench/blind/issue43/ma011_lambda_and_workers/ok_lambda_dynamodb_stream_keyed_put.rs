// OK: a DynamoDB Streams Lambda copies each new image into a read model with `put_item` keyed by
// the source's primary key; writing the same item again on a redelivered batch leaves the same
// state (idempotent), and `?` propagates failures (whole batch retried): no MA011, no MA014.
use std::collections::HashMap;

use aws_lambda_events::event::dynamodb::Event as DynamoDbEvent;
use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_dynamodb::Client as DynamoClient;
use lambda_runtime::{run, service_fn, Error, LambdaEvent};

async fn project(ddb: &DynamoClient, event: LambdaEvent<DynamoDbEvent>) -> Result<(), Error> {
    for record in event.payload.records {
        let keys = serde_json::to_value(&record.change.keys)?;
        let customer_id = keys["customer_id"]["S"].as_str().unwrap_or_default().to_owned();
        if customer_id.is_empty() {
            continue;
        }
        let mut item = HashMap::new();
        item.insert("customer_id".to_string(), AttributeValue::S(customer_id));
        item.insert("event_name".to_string(), AttributeValue::S(record.event_name.clone()));
        ddb.put_item().table_name("customer_read_model").set_item(Some(item)).send().await?;
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let config = aws_config::load_from_env().await;
    let ddb = DynamoClient::new(&config);
    let ddb = &ddb;
    run(service_fn(move |event: LambdaEvent<DynamoDbEvent>| async move { project(ddb, event).await })).await
}
