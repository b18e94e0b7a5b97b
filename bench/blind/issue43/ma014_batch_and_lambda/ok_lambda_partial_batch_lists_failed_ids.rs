// OK (MA014): a Kinesis handler lists each record whose write failed (by sequence number) in the
// `KinesisEventResponse`, so the failed records are redelivered rather than acked. No deploy YAML
// is in this fixture, so MA015 is silent too.
use aws_lambda_events::event::kinesis::KinesisEvent;
use aws_lambda_events::event::streams::{KinesisBatchItemFailure, KinesisEventResponse};
use lambda_runtime::{run, service_fn, Error, LambdaEvent};
use sqlx::PgPool;

async fn handler(pool: &PgPool, event: LambdaEvent<KinesisEvent>) -> Result<KinesisEventResponse, Error> {
    let mut response = KinesisEventResponse::default();
    for record in &event.payload.records {
        let seq = record.kinesis.sequence_number.clone();
        let written = sqlx::query("INSERT INTO device_state (device_id, state) VALUES ($1, $2) ON CONFLICT (device_id) DO UPDATE SET state = EXCLUDED.state")
            .bind(&record.kinesis.partition_key)
            .bind(String::from_utf8_lossy(&record.kinesis.data.0).into_owned())
            .execute(pool)
            .await;
        if let Err(err) = written {
            tracing::warn!(%err, sequence = %seq, "device state write failed, reporting it");
            response.batch_item_failures.push(KinesisBatchItemFailure { item_identifier: Some(seq) });
        }
    }
    Ok(response)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let pool = PgPool::connect(&std::env::var("DATABASE_URL")?).await?;
    let pool = &pool;
    run(service_fn(move |event: LambdaEvent<KinesisEvent>| async move { handler(pool, event).await })).await
}
