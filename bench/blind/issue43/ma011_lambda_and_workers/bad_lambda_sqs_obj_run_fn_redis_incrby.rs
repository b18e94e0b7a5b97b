// MA011: the handler is passed to `lambda_runtime::run` directly (no `service_fn`) and takes
// `LambdaEvent<SqsEventObj<Vote>>`; each vote is counted with Redis `INCRBY`. An SQS redelivery
// (any failure in the batch, or a timeout) counts the votes again: MA011 at the INCRBY.
use aws_lambda_events::event::sqs::SqsEventObj;
use lambda_runtime::{run, Error, LambdaEvent};
use redis::AsyncCommands;
use serde::Deserialize;

#[derive(Deserialize, Clone)]
struct Vote {
    poll_id: String,
    option: String,
}

async fn count_votes(event: LambdaEvent<SqsEventObj<Vote>>) -> Result<(), Error> {
    let client = redis::Client::open(std::env::var("REDIS_URL")?)?;
    let mut conn = client.get_multiplexed_async_connection().await?;
    for record in event.payload.records {
        let vote = record.body;
        let key = format!("poll:{}:{}", vote.poll_id, vote.option);
        let _: i64 = conn.incr(&key, 1).await?; //~ MA011
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    run(count_votes).await
}
