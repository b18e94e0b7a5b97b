// OK: the same adapter chain (`and_then` decodes, keeping the delivery), `no_ack` left false, and
// each delivery acked after its keyed update. SPEC MA007 lists "lapin `no_ack: true`"; with
// manual acks after the effect nothing decouples progress from processing.
use futures::{StreamExt, TryStreamExt};
use lapin::message::Delivery;
use lapin::options::{BasicAckOptions, BasicConsumeOptions};
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
            BasicConsumeOptions { no_ack: false, ..BasicConsumeOptions::default() },
            FieldTable::default(),
        )
        .await?;

    let mut events = consumer
        .map_err(anyhow::Error::from)
        .and_then(|delivery: Delivery| async move {
            let ev: PriceChanged = serde_json::from_slice(&delivery.data)?;
            Ok((delivery, ev))
        });

    while let Some(item) = events.next().await {
        let (delivery, ev) = item?;
        sqlx::query("UPDATE products SET price_cents = $1 WHERE sku = $2")
            .bind(ev.price_cents)
            .bind(&ev.sku)
            .execute(&pool)
            .await?;
        delivery.ack(BasicAckOptions::default()).await?;
    }
    Ok(())
}
