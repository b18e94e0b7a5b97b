// Bad (MA007): an older rdkafka service consumes through `StreamConsumer::start()`; the config
// leaves `enable.auto.commit` unset (librdkafka's default: true) and the loop writes to Postgres,
// so offsets advance on a timer whether or not the writes succeed. SPEC MA007: "Kafka
// `enable.auto.commit=true` (also when unset on a raw client, whose default is true ...)"; "in
// Rust the unset default counts when the consumer's handler has side effects"; primary: "the
// `ClientConfig::new()` call of the consumer when the default applies".
use futures::StreamExt;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::message::Message;
use sqlx::PgPool;

pub async fn run(pool: PgPool) -> anyhow::Result<()> {
    let consumer: StreamConsumer = ClientConfig::new() //~ MA007
        .set("bootstrap.servers", "kafka:9092")
        .set("group.id", "geo-index")
        .set("session.timeout.ms", "6000")
        .create()?;
    consumer.subscribe(&["stores.locations"])?;

    let mut stream = consumer.start();
    while let Some(message) = stream.next().await {
        let m = message?;
        let Some(key) = m.key_view::<str>().and_then(Result::ok) else { continue };
        let body = m.payload_view::<str>().and_then(Result::ok).unwrap_or_default();
        sqlx::query(
            "INSERT INTO store_locations (store_id, geojson) VALUES ($1, $2::jsonb) \
             ON CONFLICT (store_id) DO UPDATE SET geojson = EXCLUDED.geojson",
        )
        .bind(key)
        .bind(body)
        .execute(&pool)
        .await?;
    }
    Ok(())
}
