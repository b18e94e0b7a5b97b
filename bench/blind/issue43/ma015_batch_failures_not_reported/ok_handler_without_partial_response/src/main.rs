// OK (MA015 silent): the handler returns `Result<(), Error>` and propagates failures with `?`
// (the whole batch is retried); it does not report per-record failures, so an event without
// ReportBatchItemFailures matches it. MA015 needs a handler that returns a batch response.
use aws_lambda_events::event::sqs::SqsEvent;
use lambda_runtime::{run, service_fn, Error, LambdaEvent};
use sqlx::PgPool;

async fn handler(pool: &PgPool, event: LambdaEvent<SqsEvent>) -> Result<(), Error> {
    for record in event.payload.records {
        let address = record.body.unwrap_or_default();
        sqlx::query("INSERT INTO bounced_addresses (address) VALUES ($1) ON CONFLICT (address) DO UPDATE SET bounced_at = now()")
            .bind(address.trim())
            .execute(pool)
            .await?;
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let pool = PgPool::connect(&std::env::var("DATABASE_URL")?).await?;
    let pool = &pool;
    run(service_fn(move |event: LambdaEvent<SqsEvent>| async move { handler(pool, event).await })).await
}
