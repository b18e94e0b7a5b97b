// MA014: the SQS handler returns a partial-batch response, but it lists only records that fail
// to decode; a record whose charge-status update fails is logged and not listed. The
// `Ok(SqsBatchResponse { .. })` therefore acks that record: MA014 at the `Ok`. (No deploy YAML
// is in this fixture, so MA015 is silent.)
use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse, SqsEvent};
use lambda_runtime::{run, service_fn, Error, LambdaEvent};
use serde::Deserialize;
use sqlx::PgPool;

#[derive(Deserialize)]
struct ChargeSettled {
    charge_id: String,
    status: String,
}

async fn handler(pool: &PgPool, event: LambdaEvent<SqsEvent>) -> Result<SqsBatchResponse, Error> {
    let mut failures = Vec::new();
    for record in event.payload.records {
        let id = record.message_id.clone().unwrap_or_default();
        let settled: ChargeSettled = match serde_json::from_str(record.body.as_deref().unwrap_or_default()) {
            Ok(s) => s,
            Err(_) => {
                failures.push(BatchItemFailure { item_identifier: id });
                continue;
            }
        };
        if let Err(err) = sqlx::query("UPDATE charges SET status = $2 WHERE charge_id = $1")
            .bind(&settled.charge_id)
            .bind(&settled.status)
            .execute(pool)
            .await
        {
            tracing::error!(charge_id = %settled.charge_id, %err, "status update failed");
        }
    }
    Ok(SqsBatchResponse { batch_item_failures: failures }) //~ MA014
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let pool = PgPool::connect(&std::env::var("DATABASE_URL")?).await?;
    let pool = &pool;
    run(service_fn(move |event: LambdaEvent<SqsEvent>| async move { handler(pool, event).await })).await
}
