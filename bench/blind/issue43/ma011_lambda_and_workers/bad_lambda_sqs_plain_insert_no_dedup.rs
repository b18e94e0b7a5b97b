// MA011: a Lambda SQS batch handler (`run(service_fn(handler))`, `LambdaEvent<SqsEvent>`) is an
// at-least-once consumer: `Ok` acks the batch and any failure redelivers the whole batch. Each
// record is a plain `INSERT` into `payments` with no conflict clause and no dedup record, so a
// redelivered batch inserts the payments again: MA011 at the insert.
use aws_lambda_events::event::sqs::SqsEvent;
use lambda_runtime::{run, service_fn, Error, LambdaEvent};
use serde::Deserialize;
use sqlx::postgres::PgPoolOptions;
use sqlx::PgPool;

#[derive(Deserialize)]
struct PaymentReceived {
    payer: String,
    amount_cents: i64,
    reference: String,
}

async fn handler(pool: &PgPool, event: LambdaEvent<SqsEvent>) -> Result<(), Error> {
    for record in event.payload.records {
        let body = record.body.as_deref().unwrap_or("{}");
        let payment: PaymentReceived = serde_json::from_str(body)?;
        sqlx::query("INSERT INTO payments (payer, amount_cents, reference) VALUES ($1, $2, $3)").bind(&payment.payer).bind(payment.amount_cents).bind(&payment.reference).execute(pool).await?; //~ MA011
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let pool = PgPoolOptions::new().max_connections(2).connect(&std::env::var("DATABASE_URL")?).await?;
    let pool = &pool;
    run(service_fn(move |event: LambdaEvent<SqsEvent>| async move { handler(pool, event).await })).await
}
