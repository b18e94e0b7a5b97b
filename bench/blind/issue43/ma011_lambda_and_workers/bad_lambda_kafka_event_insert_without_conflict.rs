// MA011: an MSK-triggered Lambda (`LambdaEvent<KafkaEvent>`) stores each record's clickstream row
// with a plain INSERT (no conflict clause, no visible unique key, no dedup record). The batch is
// redelivered when the handler fails or times out, duplicating rows: MA011 at the insert.
use aws_lambda_events::event::kafka::KafkaEvent;
use base64::Engine;
use lambda_runtime::{run, service_fn, Error, LambdaEvent};
use sqlx::PgPool;

async fn ingest(pool: PgPool, event: LambdaEvent<KafkaEvent>) -> Result<(), Error> {
    for (_topic_partition, records) in event.payload.records {
        for rec in records {
            let raw = rec.value.unwrap_or_default();
            let bytes = base64::engine::general_purpose::STANDARD.decode(raw)?;
            let line = String::from_utf8(bytes)?;
            sqlx::query("INSERT INTO click_rows (topic, kafka_offset, line) VALUES ($1, $2, $3)").bind(rec.topic.clone().unwrap_or_default()).bind(rec.offset).bind(line).execute(&pool).await?; //~ MA011
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let pool = PgPool::connect(&std::env::var("DATABASE_URL")?).await?;
    run(service_fn(move |ev| ingest(pool.clone(), ev))).await
}
