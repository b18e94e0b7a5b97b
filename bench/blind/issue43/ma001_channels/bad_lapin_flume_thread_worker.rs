// MA001: each RabbitMQ delivery's body is pushed into a flume channel and the delivery is acked
// immediately; the receiver is moved into a `std::thread::spawn`ed worker that writes the row
// with rusqlite. The ack is not ordered after the write, so a crash in between loses the reading.
use std::thread;

use futures::StreamExt;
use lapin::options::{BasicAckOptions, BasicConsumeOptions};
use lapin::types::FieldTable;
use lapin::{Connection, ConnectionProperties};
use rusqlite::{params, Connection as SqliteConnection};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct MeterReading {
    meter_id: String,
    taken_at: i64,
    kwh: f64,
}

fn spawn_writer(rx: flume::Receiver<MeterReading>, db_path: String) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        let conn = SqliteConnection::open(db_path).expect("open sqlite");
        for reading in rx.iter() {
            conn.execute(
                "INSERT INTO readings (meter_id, taken_at, kwh) VALUES (?1, ?2, ?3) ON CONFLICT(meter_id, taken_at) DO UPDATE SET kwh = excluded.kwh",
                params![reading.meter_id, reading.taken_at, reading.kwh],
            )
            .expect("write reading");
        }
    })
}

pub async fn consume(amqp_url: &str, db_path: String) -> anyhow::Result<()> {
    let conn = Connection::connect(amqp_url, ConnectionProperties::default()).await?;
    let channel = conn.create_channel().await?;
    let mut deliveries = channel
        .basic_consume(
            "meter.readings",
            "reading-writer",
            BasicConsumeOptions::default(),
            FieldTable::default(),
        )
        .await?;

    let (tx, rx) = flume::bounded::<MeterReading>(1024);
    let _writer = spawn_writer(rx, db_path);

    while let Some(delivery) = deliveries.next().await {
        let delivery = delivery?;
        let reading: MeterReading = serde_json::from_slice(&delivery.data)?;
        tx.send_async(reading).await?;
        delivery.ack(BasicAckOptions::default()).await?; //~ MA001
    }
    Ok(())
}
