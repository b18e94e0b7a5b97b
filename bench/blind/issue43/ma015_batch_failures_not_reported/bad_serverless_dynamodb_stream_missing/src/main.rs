// MA015 (Rust half): `tenant-replicator` handles DynamoDB Streams batches through `run(handler)`
// and returns DynamoDbEventResponse; serverless.yml wires it with a `stream` event that lacks
// functionResponseType.
use aws_lambda_events::event::dynamodb::Event as DynamoDbEvent;
use aws_lambda_events::event::streams::{DynamoDbBatchItemFailure, DynamoDbEventResponse};
use lambda_runtime::{run, Error, LambdaEvent};
use sqlx::PgPool;

async fn replicate(event: LambdaEvent<DynamoDbEvent>) -> Result<DynamoDbEventResponse, Error> {
    let pool = PgPool::connect(&std::env::var("DATABASE_URL")?).await?;
    let mut response = DynamoDbEventResponse::default();
    for record in event.payload.records {
        let image = serde_json::to_value(&record.change.new_image)?;
        let tenant = image["tenant_id"]["S"].as_str().unwrap_or_default().to_owned();
        let written = sqlx::query("INSERT INTO tenants (tenant_id, doc) VALUES ($1, $2) ON CONFLICT (tenant_id) DO UPDATE SET doc = EXCLUDED.doc")
            .bind(&tenant)
            .bind(&image)
            .execute(&pool)
            .await;
        if written.is_err() {
            response.batch_item_failures.push(DynamoDbBatchItemFailure { item_identifier: record.change.sequence_number.clone() });
        }
    }
    Ok(response)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    run(replicate).await
}
