// OK (MA015, Rust half): the same partial-batch SQS handler, deployed by a SAM template whose SQS
// event enables FunctionResponseTypes: [ReportBatchItemFailures] (Binary: refund-intake).
use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse, SqsEvent};
use lambda_runtime::{run, service_fn, Error, LambdaEvent};
use serde::Deserialize;
use sqlx::PgPool;

#[derive(Deserialize)]
struct RefundLine {
    refund_id: String,
    line_no: i32,
    sku: String,
    qty: i32,
}

async fn store(pool: &PgPool, line: &RefundLine) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO refund_lines (refund_id, line_no, sku, qty) VALUES ($1, $2, $3, $4) ON CONFLICT (refund_id, line_no) DO UPDATE SET sku = EXCLUDED.sku, qty = EXCLUDED.qty")
        .bind(&line.refund_id)
        .bind(line.line_no)
        .bind(&line.sku)
        .bind(line.qty)
        .execute(pool)
        .await
        .map(|_| ())
}

async fn handler(pool: &PgPool, event: LambdaEvent<SqsEvent>) -> Result<SqsBatchResponse, Error> {
    let mut batch_item_failures = Vec::new();
    for record in event.payload.records {
        let id = record.message_id.clone().unwrap_or_default();
        let parsed = serde_json::from_str::<RefundLine>(record.body.as_deref().unwrap_or_default());
        let outcome = match parsed {
            Ok(line) => store(pool, &line).await.map_err(Error::from),
            Err(e) => Err(Error::from(e)),
        };
        if let Err(err) = outcome {
            tracing::warn!(%id, %err, "refund line failed; reporting for retry");
            batch_item_failures.push(BatchItemFailure { item_identifier: id });
        }
    }
    Ok(SqsBatchResponse { batch_item_failures })
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let pool = PgPool::connect(&std::env::var("DATABASE_URL")?).await?;
    let pool = &pool;
    run(service_fn(move |event: LambdaEvent<SqsEvent>| async move { handler(pool, event).await })).await
}
