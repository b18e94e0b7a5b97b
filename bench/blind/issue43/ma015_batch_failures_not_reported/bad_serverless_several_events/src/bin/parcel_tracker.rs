// Kinesis batch handler (bin `parcel-tracker`) returning KinesisEventResponse; its `stream` event
// in serverless.yml sets functionResponseType: ReportBatchItemFailures, so it is clean.
use aws_lambda_events::event::kinesis::KinesisEvent;
use aws_lambda_events::event::streams::{KinesisBatchItemFailure, KinesisEventResponse};
use lambda_runtime::{run, service_fn, Error, LambdaEvent};
use sqlx::PgPool;

async fn handler(pool: &PgPool, event: LambdaEvent<KinesisEvent>) -> Result<KinesisEventResponse, Error> {
    let mut resp = KinesisEventResponse::default();
    for r in &event.payload.records {
        let status = String::from_utf8_lossy(&r.kinesis.data.0).into_owned();
        if sqlx::query("INSERT INTO parcel_status (parcel_id, status) VALUES ($1, $2) ON CONFLICT (parcel_id) DO UPDATE SET status = EXCLUDED.status")
            .bind(&r.kinesis.partition_key)
            .bind(&status)
            .execute(pool)
            .await
            .is_err()
        {
            resp.batch_item_failures.push(KinesisBatchItemFailure { item_identifier: r.kinesis.sequence_number.clone() });
        }
    }
    Ok(resp)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let pool = PgPool::connect(&std::env::var("DATABASE_URL")?).await?;
    let pool = &pool;
    run(service_fn(move |event: LambdaEvent<KinesisEvent>| async move { handler(pool, event).await })).await
}
