// Bad (MA007): `no_ack: true` on `basic_consume`; the delivery stream then goes through
// `try_filter_map` and `map` adapters before the loop that writes each decoded event to Postgres.
// The broker forgets each message as it is delivered, whatever the writes do. SPEC MA007:
// "progress advances independently of processing: ... lapin `no_ack: true`"; primary: "the
// setting".
use futures::{future, StreamExt, TryStreamExt};
use lapin::options::BasicConsumeOptions;
use lapin::types::FieldTable;
use lapin::Channel;
use serde::Deserialize;
use sqlx::PgPool;

#[derive(Deserialize)]
struct PriceChanged {
    sku: String,
    price_cents: i64,
}

pub async fn run(channel: Channel, pool: PgPool) -> anyhow::Result<()> {
    let consumer = channel
        .basic_consume(
            "catalog.prices",
            "price-projector",
            BasicConsumeOptions {
                no_ack: true, //~ MA007
                ..BasicConsumeOptions::default()
            },
            FieldTable::default(),
        )
        .await?;

    let mut events = consumer
        .try_filter_map(|delivery| future::ok(serde_json::from_slice::<PriceChanged>(&delivery.data).ok()))
        .map(|res| res.map_err(anyhow::Error::from));

    while let Some(ev) = events.next().await {
        let ev = ev?;
        sqlx::query("UPDATE products SET price_cents = $1 WHERE sku = $2")
            .bind(ev.price_cents)
            .bind(&ev.sku)
            .execute(&pool)
            .await?;
    }
    Ok(())
}
