// MA014 in a helper: the Kinesis handler returns `apply_batch(..).await`, and the helper swallows a
// failed DynamoDB write (`let _ =`) before returning `Ok(())`. That `Ok`, written in the helper,
// becomes the handler's result and acks the whole batch: MA014 at the helper's `Ok`.
use std::collections::HashMap;

use aws_lambda_events::event::kinesis::{KinesisEvent, KinesisEventRecord};
use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_dynamodb::Client as DynamoClient;
use lambda_runtime::{run, service_fn, Error, LambdaEvent};

async fn apply_batch(ddb: &DynamoClient, records: &[KinesisEventRecord]) -> Result<(), Error> {
    for record in records {
        let reading = String::from_utf8(record.kinesis.data.0.clone())?;
        let sensor = record.kinesis.partition_key.clone();
        let mut item = HashMap::new();
        item.insert("sensor_id".to_string(), AttributeValue::S(sensor));
        item.insert("last_reading".to_string(), AttributeValue::S(reading));
        let _ = ddb.put_item().table_name("sensor_latest").set_item(Some(item)).send().await;
    }
    Ok(()) //~ MA014
}

async fn handler(ddb: &DynamoClient, event: LambdaEvent<KinesisEvent>) -> Result<(), Error> {
    tracing::debug!(n = event.payload.records.len(), "kinesis batch");
    apply_batch(ddb, &event.payload.records).await
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let config = aws_config::load_from_env().await;
    let ddb = DynamoClient::new(&config);
    let ddb = &ddb;
    run(service_fn(move |event: LambdaEvent<KinesisEvent>| async move { handler(ddb, event).await })).await
}
