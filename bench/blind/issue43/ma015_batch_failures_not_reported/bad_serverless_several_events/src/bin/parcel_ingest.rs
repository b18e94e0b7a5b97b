// MA015 (Rust half): SQS batch handler (bin `parcel-ingest`) returning SqsBatchResponse. It is
// wired to two SQS queues in serverless.yml; one `sqs` event sets functionResponseType and the
// other does not.
use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse, SqsEventObj};
use lambda_runtime::{run, service_fn, Error, LambdaEvent};
use serde::Deserialize;
use sqlx::PgPool;

#[derive(Deserialize, Clone)]
struct ParcelScan {
    parcel_id: String,
    depot: String,
    scanned_at: i64,
}

async fn handler(pool: &PgPool, event: LambdaEvent<SqsEventObj<ParcelScan>>) -> Result<SqsBatchResponse, Error> {
    let mut batch_item_failures = Vec::new();
    for record in event.payload.records {
        let scan = record.body;
        let res = sqlx::query("INSERT INTO parcel_scans (parcel_id, depot, scanned_at) VALUES ($1, $2, $3) ON CONFLICT (parcel_id, scanned_at) DO UPDATE SET depot = EXCLUDED.depot")
            .bind(&scan.parcel_id)
            .bind(&scan.depot)
            .bind(scan.scanned_at)
            .execute(pool)
            .await;
        if res.is_err() {
            batch_item_failures.push(BatchItemFailure { item_identifier: record.message_id.unwrap_or_default() });
        }
    }
    Ok(SqsBatchResponse { batch_item_failures })
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let pool = PgPool::connect(&std::env::var("DATABASE_URL")?).await?;
    let pool = &pool;
    run(service_fn(move |event: LambdaEvent<SqsEventObj<ParcelScan>>| async move { handler(pool, event).await })).await
}
