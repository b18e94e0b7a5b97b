// MA015 (Rust half): this SQS batch handler reports per-record failures through
// `SqsBatchResponse.batch_item_failures`; the SAM template that deploys it (Binary: order-intake)
// does not enable ReportBatchItemFailures, so the list is ignored (see template.yaml).
use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse, SqsEvent};
use lambda_runtime::{run, service_fn, Error, LambdaEvent};
use serde::Deserialize;
use sqlx::PgPool;

#[derive(Deserialize)]
struct OrderLine {
    order_id: String,
    line_no: i32,
    sku: String,
    qty: i32,
}

async fn store(pool: &PgPool, line: &OrderLine) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO order_lines (order_id, line_no, sku, qty) VALUES ($1, $2, $3, $4) ON CONFLICT (order_id, line_no) DO UPDATE SET sku = EXCLUDED.sku, qty = EXCLUDED.qty")
        .bind(&line.order_id)
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
        let parsed = serde_json::from_str::<OrderLine>(record.body.as_deref().unwrap_or_default());
        let outcome = match parsed {
            Ok(line) => store(pool, &line).await.map_err(Error::from),
            Err(e) => Err(Error::from(e)),
        };
        if let Err(err) = outcome {
            tracing::warn!(%id, %err, "order line failed; reporting for retry");
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
