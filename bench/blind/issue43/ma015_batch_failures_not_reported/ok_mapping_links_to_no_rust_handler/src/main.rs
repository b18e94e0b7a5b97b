// OK (MA015 silent): the `refund-router` SQS handler returns SqsBatchResponse and its own SAM
// event enables ReportBatchItemFailures. The template's other SQS event, without the setting,
// belongs to a Python function (CodeUri: legacy/) that links to no Rust handler, so it is not a
// mismatch ("a mapping that links to no handler, MA015 is silent").
use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse, SqsEvent};
use lambda_runtime::{run, service_fn, Error, LambdaEvent};
use sqlx::PgPool;

async fn route(pool: &PgPool, event: LambdaEvent<SqsEvent>) -> Result<SqsBatchResponse, Error> {
    let mut failed = Vec::new();
    for record in event.payload.records {
        let id = record.message_id.clone().unwrap_or_default();
        let res = sqlx::query("INSERT INTO refund_routes (message_id, body) VALUES ($1, $2) ON CONFLICT (message_id) DO UPDATE SET body = EXCLUDED.body")
            .bind(&id)
            .bind(record.body.as_deref().unwrap_or_default())
            .execute(pool)
            .await;
        if res.is_err() {
            failed.push(BatchItemFailure { item_identifier: id });
        }
    }
    Ok(SqsBatchResponse { batch_item_failures: failed })
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let pool = PgPool::connect(&std::env::var("DATABASE_URL")?).await?;
    let pool = &pool;
    run(service_fn(move |event: LambdaEvent<SqsEvent>| async move { route(pool, event).await })).await
}
