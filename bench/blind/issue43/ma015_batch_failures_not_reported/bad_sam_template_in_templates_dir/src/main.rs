// MA015 (Rust half): Kinesis handler of `fraud-screen` returning KinesisEventResponse. Its SAM
// template lives in `templates/` with no Chart.yaml beside it, so it is read like any YAML, and
// the Kinesis event there lacks FunctionResponseTypes.
use std::collections::HashMap;

use aws_lambda_events::event::kinesis::KinesisEvent;
use aws_lambda_events::event::streams::{KinesisBatchItemFailure, KinesisEventResponse};
use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_dynamodb::Client as DynamoClient;
use lambda_runtime::{run, service_fn, Error, LambdaEvent};
use serde::Deserialize;

#[derive(Deserialize)]
struct CardAuth {
    auth_id: String,
    card_hash: String,
    score: f32,
}

async fn screen(ddb: &DynamoClient, event: LambdaEvent<KinesisEvent>) -> Result<KinesisEventResponse, Error> {
    let mut response = KinesisEventResponse::default();
    for record in &event.payload.records {
        let failed = KinesisBatchItemFailure { item_identifier: record.kinesis.sequence_number.clone() };
        let Ok(auth) = serde_json::from_slice::<CardAuth>(&record.kinesis.data.0) else {
            response.batch_item_failures.push(failed);
            continue;
        };
        let mut item = HashMap::new();
        item.insert("auth_id".to_string(), AttributeValue::S(auth.auth_id));
        item.insert("card_hash".to_string(), AttributeValue::S(auth.card_hash));
        item.insert("score".to_string(), AttributeValue::N(auth.score.to_string()));
        if ddb.put_item().table_name("fraud_scores").set_item(Some(item)).send().await.is_err() {
            response.batch_item_failures.push(failed);
        }
    }
    Ok(response)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let config = aws_config::load_from_env().await;
    let ddb = DynamoClient::new(&config);
    let ddb = &ddb;
    run(service_fn(move |event: LambdaEvent<KinesisEvent>| async move { screen(ddb, event).await })).await
}
