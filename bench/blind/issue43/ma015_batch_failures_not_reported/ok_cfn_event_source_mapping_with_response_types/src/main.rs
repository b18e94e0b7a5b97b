// OK (MA015, Rust half): Kinesis handler of the `click-rollup` package returning
// KinesisEventResponse; the EventSourceMapping in stack.yaml enables ReportBatchItemFailures.
use aws_lambda_events::event::kinesis::KinesisEvent;
use aws_lambda_events::event::streams::{KinesisBatchItemFailure, KinesisEventResponse};
use lambda_runtime::{run, service_fn, Error, LambdaEvent};
use sqlx::PgPool;

async fn handler(pool: &PgPool, event: LambdaEvent<KinesisEvent>) -> Result<KinesisEventResponse, Error> {
    let mut failures = Vec::new();
    for record in &event.payload.records {
        let click_id = record.kinesis.sequence_number.clone();
        let page = String::from_utf8_lossy(&record.kinesis.data.0).into_owned();
        let res = sqlx::query("INSERT INTO clicks (click_id, page) VALUES ($1, $2) ON CONFLICT (click_id) DO UPDATE SET page = EXCLUDED.page")
            .bind(click_id.as_deref().unwrap_or_default())
            .bind(&page)
            .execute(pool)
            .await;
        if res.is_err() {
            failures.push(KinesisBatchItemFailure { item_identifier: click_id });
        }
    }
    Ok(KinesisEventResponse { batch_item_failures: failures })
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let pool = PgPool::connect(&std::env::var("DATABASE_URL")?).await?;
    let pool = &pool;
    run(service_fn(move |event: LambdaEvent<KinesisEvent>| async move { handler(pool, event).await })).await
}
