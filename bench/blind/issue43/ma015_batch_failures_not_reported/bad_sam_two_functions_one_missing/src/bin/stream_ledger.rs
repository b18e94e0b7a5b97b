// Kinesis batch handler (bin `stream-ledger`) that reports failed records by sequence number;
// its SAM event enables ReportBatchItemFailures (template.yaml, LedgerFunction): clean.
use aws_lambda_events::event::kinesis::KinesisEvent;
use aws_lambda_events::event::streams::{KinesisBatchItemFailure, KinesisEventResponse};
use lambda_runtime::{run, service_fn, Error, LambdaEvent};
use sqlx::PgPool;

async fn handler(pool: &PgPool, event: LambdaEvent<KinesisEvent>) -> Result<KinesisEventResponse, Error> {
    let mut out = KinesisEventResponse::default();
    for record in &event.payload.records {
        let entry: serde_json::Value = match serde_json::from_slice(&record.kinesis.data.0) {
            Ok(v) => v,
            Err(_) => {
                out.batch_item_failures.push(KinesisBatchItemFailure { item_identifier: Some(record.kinesis.sequence_number.clone()) });
                continue;
            }
        };
        let res = sqlx::query("INSERT INTO ledger_entries (entry_id, body) VALUES ($1, $2) ON CONFLICT (entry_id) DO UPDATE SET body = EXCLUDED.body")
            .bind(entry["entry_id"].as_str().unwrap_or_default())
            .bind(&entry)
            .execute(pool)
            .await;
        if res.is_err() {
            out.batch_item_failures.push(KinesisBatchItemFailure { item_identifier: Some(record.kinesis.sequence_number.clone()) });
        }
    }
    Ok(out)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let pool = PgPool::connect(&std::env::var("DATABASE_URL")?).await?;
    let pool = &pool;
    run(service_fn(move |event: LambdaEvent<KinesisEvent>| async move { handler(pool, event).await })).await
}
