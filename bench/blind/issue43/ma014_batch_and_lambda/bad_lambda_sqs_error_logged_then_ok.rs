// MA014: an SQS batch Lambda logs a failed upsert and carries on; the handler then returns
// `Ok(())`, which acks every record of the batch, including the failed one, which is not listed
// in any partial-batch response: MA014 at that `Ok` ("Serverless event sources").
use aws_lambda_events::event::sqs::SqsEvent;
use lambda_runtime::{run, service_fn, Error, LambdaEvent};
use serde::Deserialize;
use sqlx::PgPool;
use tokio::sync::OnceCell;

static POOL: OnceCell<PgPool> = OnceCell::const_new();

async fn db() -> Result<&'static PgPool, sqlx::Error> {
    POOL.get_or_try_init(|| async { PgPool::connect(&std::env::var("DATABASE_URL").unwrap_or_default()).await }).await
}

#[derive(Deserialize)]
struct ProfilePatch {
    user_id: String,
    bio: String,
}

async fn handler(event: LambdaEvent<SqsEvent>) -> Result<(), Error> {
    let pool = db().await?;
    for record in event.payload.records {
        let Ok(patch) = serde_json::from_str::<ProfilePatch>(record.body.as_deref().unwrap_or_default()) else {
            tracing::warn!(message_id = ?record.message_id, "skipping malformed patch");
            continue;
        };
        let res = sqlx::query("INSERT INTO profiles (user_id, bio) VALUES ($1, $2) ON CONFLICT (user_id) DO UPDATE SET bio = EXCLUDED.bio")
            .bind(&patch.user_id)
            .bind(&patch.bio)
            .execute(pool)
            .await;
        if let Err(err) = res {
            tracing::error!(user_id = %patch.user_id, %err, "profile upsert failed");
        }
    }
    Ok(()) //~ MA014
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    tracing_subscriber::fmt().json().init();
    run(service_fn(handler)).await
}
