// Bad (MA003): diesel with an r2d2 pool. The claim is executed on one pooled connection in
// autocommit; the balance change runs in `transaction` on a second connection checked out
// afterwards. SPEC MA003: "written in different transactions, connections, or with one in
// autocommit"; primary: "the dedup-record write".
use diesel::pg::PgConnection;
use diesel::prelude::*;
use diesel::r2d2::{ConnectionManager, Pool};
use futures::StreamExt;
use lapin::options::{BasicAckOptions, BasicConsumeOptions};
use lapin::types::FieldTable;
use lapin::Channel;
use serde::Deserialize;

type PgPool = Pool<ConnectionManager<PgConnection>>;

diesel::table! {
    processed_messages (message_id) {
        message_id -> Text,
    }
}

diesel::table! {
    wallets (id) {
        id -> Int8,
        balance_cents -> Int8,
    }
}

#[derive(Deserialize)]
struct TopUp {
    message_id: String,
    wallet_id: i64,
    amount_cents: i64,
}

pub async fn consume(channel: Channel, pool: PgPool) -> anyhow::Result<()> {
    let mut consumer = channel
        .basic_consume("wallet.topups", "wallet-worker", BasicConsumeOptions::default(), FieldTable::default())
        .await?;
    while let Some(delivery) = consumer.next().await {
        let delivery = delivery?;
        let ev: TopUp = serde_json::from_slice(&delivery.data)?;

        let mut claim_conn = pool.get()?;
        let inserted = diesel::insert_into(processed_messages::table).values(processed_messages::message_id.eq(&ev.message_id)).on_conflict_do_nothing().execute(&mut claim_conn)?; //~ MA003

        if inserted == 1 {
            let mut conn = pool.get()?;
            conn.transaction::<_, diesel::result::Error, _>(|conn| {
                diesel::update(wallets::table.find(ev.wallet_id))
                    .set(wallets::balance_cents.eq(wallets::balance_cents + ev.amount_cents))
                    .execute(conn)?;
                Ok(())
            })?;
        }
        delivery.ack(BasicAckOptions::default()).await?;
    }
    Ok(())
}
