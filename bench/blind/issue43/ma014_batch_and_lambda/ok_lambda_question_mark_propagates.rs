// OK: every per-record effect is followed by `?`, so any failure returns `Err` from the handler
// and the whole SQS batch is redelivered; the upsert is idempotent, so redelivery is harmless
// (no MA014, no MA011).
use aws_lambda_events::event::sqs::SqsEventObj;
use lambda_runtime::{run, service_fn, Error, LambdaEvent};
use serde::Deserialize;
use sqlx::PgPool;
use tokio::sync::OnceCell;

static POOL: OnceCell<PgPool> = OnceCell::const_new();

#[derive(Deserialize, Clone)]
struct Consent {
    user_id: String,
    marketing: bool,
}

async fn handler(event: LambdaEvent<SqsEventObj<Consent>>) -> Result<(), Error> {
    let pool = POOL.get().ok_or("database pool not initialised")?;
    for record in event.payload.records {
        let consent = record.body;
        sqlx::query("INSERT INTO consents (user_id, marketing) VALUES ($1, $2) ON CONFLICT (user_id) DO UPDATE SET marketing = EXCLUDED.marketing")
            .bind(&consent.user_id)
            .bind(consent.marketing)
            .execute(pool)
            .await?;
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let pool = PgPool::connect(&std::env::var("DATABASE_URL")?).await?;
    POOL.set(pool)?;
    run(service_fn(handler)).await
}
