// OK (silent): a DynamoDB Streams handler returning DynamoDbEventResponse with
// batch_item_failures, but there is no deploy YAML for it in the fixture, so no event source
// mapping can be read: "with no deploy YAML in the tree ... MA015 is silent".
use aws_lambda_events::event::dynamodb::Event as DynamoDbEvent;
use aws_lambda_events::event::streams::{DynamoDbBatchItemFailure, DynamoDbEventResponse};
use lambda_runtime::{run, service_fn, Error, LambdaEvent};
use sqlx::PgPool;

async fn handler(pool: &PgPool, event: LambdaEvent<DynamoDbEvent>) -> Result<DynamoDbEventResponse, Error> {
    let mut response = DynamoDbEventResponse::default();
    for record in event.payload.records {
        let keys = serde_json::to_value(&record.change.keys)?;
        let sku = keys["sku"]["S"].as_str().unwrap_or_default().to_owned();
        let res = sqlx::query("INSERT INTO sku_changes (sku, last_event) VALUES ($1, $2) ON CONFLICT (sku) DO UPDATE SET last_event = EXCLUDED.last_event")
            .bind(&sku)
            .bind(&record.event_name)
            .execute(pool)
            .await;
        if res.is_err() {
            response.batch_item_failures.push(DynamoDbBatchItemFailure { item_identifier: record.change.sequence_number.clone() });
        }
    }
    Ok(response)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let pool = PgPool::connect(&std::env::var("DATABASE_URL")?).await?;
    let pool = &pool;
    run(service_fn(move |event: LambdaEvent<DynamoDbEvent>| async move { handler(pool, event).await })).await
}
