// OK: each SQS record's effect is gated by a claim made and tested in the same SQL statement
// (`WITH first_delivery AS (INSERT INTO processed_events ... ON CONFLICT DO NOTHING RETURNING ...)
// UPDATE ... FROM first_delivery`), keyed by the stable SQS message id: the seed's form, clean for
// MA003, MA005 and MA011.
use aws_lambda_events::event::sqs::SqsEvent;
use lambda_runtime::{run, service_fn, Error, LambdaEvent};
use serde::Deserialize;
use sqlx::PgPool;

#[derive(Deserialize)]
struct PointsEarned {
    member_id: String,
    points: i64,
}

const CLAIM_AND_APPLY: &str = "WITH first_delivery AS (INSERT INTO processed_events (event_id) VALUES ($1) ON CONFLICT DO NOTHING RETURNING event_id) UPDATE loyalty SET points = points + $3 FROM first_delivery WHERE loyalty.member_id = $2";

async fn apply(pool: &PgPool, event: LambdaEvent<SqsEvent>) -> Result<(), Error> {
    for record in event.payload.records {
        let message_id = record.message_id.clone().ok_or("record without message id")?;
        let earned: PointsEarned = serde_json::from_str(record.body.as_deref().unwrap_or_default())?;
        sqlx::query(CLAIM_AND_APPLY)
            .bind(&message_id)
            .bind(&earned.member_id)
            .bind(earned.points)
            .execute(pool)
            .await?;
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let pool = PgPool::connect(&std::env::var("DATABASE_URL")?).await?;
    let pool = &pool;
    run(service_fn(move |event: LambdaEvent<SqsEvent>| async move { apply(pool, event).await })).await
}
