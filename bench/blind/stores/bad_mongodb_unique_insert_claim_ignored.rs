// MA005: the event id is claimed by inserting it into `processed_events`, whose `_id`
// is unique, but the result is thrown away (`let _ =`): on a redelivery the insert
// fails with a duplicate-key error, nobody looks, and the points are added again.
use futures::StreamExt;
use lapin::options::{BasicAckOptions, BasicConsumeOptions};
use lapin::types::FieldTable;
use lapin::Channel;
use mongodb::bson::{doc, Document};
use mongodb::Database;
use serde::Deserialize;

#[derive(Deserialize)]
struct PointsEarned {
    event_id: String,
    customer_id: String,
    points: i64,
}

pub async fn run(channel: Channel, db: Database) -> anyhow::Result<()> {
    let processed = db.collection::<Document>("processed_events");
    let balances = db.collection::<Document>("balances");
    let mut consumer = channel
        .basic_consume("loyalty.points", "loyalty", BasicConsumeOptions::default(), FieldTable::default())
        .await?;

    while let Some(delivery) = consumer.next().await {
        let delivery = delivery?;
        let ev: PointsEarned = serde_json::from_slice(&delivery.data)?;

        let _ = processed.insert_one(doc! { "_id": &ev.event_id }).await; //~ MA005
        balances
            .update_one(doc! { "_id": &ev.customer_id }, doc! { "$inc": { "points": ev.points } })
            .upsert(true)
            .await?;
        delivery.ack(BasicAckOptions::default()).await?;
    }
    Ok(())
}
