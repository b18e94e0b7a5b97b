// MA015 (Rust half): the `stock-feed` member crate's SQS handler (SqsEventObj<StockDelta>) returns
// SqsBatchResponse; the root template.yaml points CodeUri at this member and its SQS event has no
// FunctionResponseTypes.
use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse, SqsEventObj};
use lambda_runtime::{run, service_fn, Error, LambdaEvent};
use sqlx::PgPool;
use stock_common::{save_level, StockDelta};

async fn handler(pool: &PgPool, event: LambdaEvent<SqsEventObj<StockDelta>>) -> Result<SqsBatchResponse, Error> {
    let mut response = SqsBatchResponse::default();
    for record in event.payload.records {
        if save_level(pool, &record.body).await.is_err() {
            response.batch_item_failures.push(BatchItemFailure { item_identifier: record.message_id.clone().unwrap_or_default() });
        }
    }
    Ok(response)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let pool = PgPool::connect(&std::env::var("DATABASE_URL")?).await?;
    let pool = &pool;
    run(service_fn(move |event: LambdaEvent<SqsEventObj<StockDelta>>| async move { handler(pool, event).await })).await
}
