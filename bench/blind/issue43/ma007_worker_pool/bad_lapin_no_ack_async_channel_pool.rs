// MA007: the queue is consumed with `no_ack: true`, so RabbitMQ forgets each delivery as soon as
// it is sent; the bodies go through an async_channel to four workers that write to Postgres.
// The effect is reached through the channel, so the consumer has side effects: MA007 at the
// `no_ack` setting.
use async_channel::Receiver;
use futures::StreamExt;
use lapin::options::BasicConsumeOptions;
use lapin::types::FieldTable;
use lapin::Channel;
use serde::Deserialize;
use sqlx::PgPool;

#[derive(Debug, Deserialize)]
struct GeoPing {
    vehicle_id: String,
    lat: f64,
    lon: f64,
    at: i64,
}

async fn ping_worker(rx: Receiver<GeoPing>, pool: PgPool) {
    while let Ok(ping) = rx.recv().await {
        let _ = sqlx::query("INSERT INTO vehicle_positions (vehicle_id, lat, lon, at) VALUES ($1, $2, $3, $4) ON CONFLICT (vehicle_id) DO UPDATE SET lat = EXCLUDED.lat, lon = EXCLUDED.lon, at = EXCLUDED.at")
            .bind(&ping.vehicle_id)
            .bind(ping.lat)
            .bind(ping.lon)
            .bind(ping.at)
            .execute(&pool)
            .await;
    }
}

pub async fn consume(channel: Channel, pool: PgPool) -> anyhow::Result<()> {
    let (tx, rx) = async_channel::bounded::<GeoPing>(2048);
    for _ in 0..4 {
        tokio::spawn(ping_worker(rx.clone(), pool.clone()));
    }

    let mut consumer = channel
        .basic_consume(
            "fleet.pings",
            "position-writer",
            BasicConsumeOptions {
                no_ack: true, //~ MA007
                ..BasicConsumeOptions::default()
            },
            FieldTable::default(),
        )
        .await?;

    while let Some(delivery) = consumer.next().await {
        let delivery = delivery?;
        if let Ok(ping) = serde_json::from_slice::<GeoPing>(&delivery.data) {
            tx.send(ping).await?;
        }
    }
    Ok(())
}
