// MA013: a transaction is started on the session, but neither write is given the session
// (`.session(&mut session)`), and it is never committed: the delete and the insert run
// outside it, one by one, and a crash between them loses the order.
use mongodb::bson::{doc, Document};
use mongodb::Client;

pub async fn archive(client: &Client, id: &str) -> mongodb::error::Result<()> {
    let db = client.database("shop");
    let mut session = client.start_session().await?; //~ MA013
    session.start_transaction().await?;
    db.collection::<Document>("orders").delete_one(doc! { "_id": id }).await?;
    db.collection::<Document>("archive").insert_one(doc! { "_id": id }).await?;
    Ok(())
}
