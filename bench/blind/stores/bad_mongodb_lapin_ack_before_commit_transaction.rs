// MA001: a shipment and its ledger entry are written in a MongoDB transaction, but the
// delivery is acked before `commit_transaction`. A crash between the two loses the
// message while the transaction is aborted: the shipment is never recorded.
use futures::StreamExt;
use lapin::options::{BasicAckOptions, BasicConsumeOptions};
use lapin::types::FieldTable;
use lapin::Channel;
use mongodb::bson::{doc, Document};
use mongodb::Client;

pub async fn run(channel: Channel, client: Client) -> anyhow::Result<()> {
    let db = client.database("logistics");
    let shipments = db.collection::<Document>("shipments");
    let ledger = db.collection::<Document>("ledger");
    let mut consumer = channel
        .basic_consume("shipments.created", "shipper", BasicConsumeOptions::default(), FieldTable::default())
        .await?;

    while let Some(delivery) = consumer.next().await {
        let delivery = delivery?;
        let order_id = std::str::from_utf8(&delivery.data)?.to_string();

        let mut session = client.start_session().await?;
        session.start_transaction().await?;
        shipments
            .replace_one(doc! { "_id": &order_id }, doc! { "_id": &order_id, "state": "created" })
            .upsert(true)
            .session(&mut session)
            .await?;
        ledger
            .replace_one(doc! { "_id": &order_id }, doc! { "_id": &order_id, "kind": "shipment" })
            .upsert(true)
            .session(&mut session)
            .await?;
        delivery.ack(BasicAckOptions::default()).await?; //~ MA001
        session.commit_transaction().await?;
    }
    Ok(())
}
