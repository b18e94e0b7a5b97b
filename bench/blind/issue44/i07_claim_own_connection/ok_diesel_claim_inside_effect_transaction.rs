// OK: diesel; one pooled connection, one `transaction` closure holding the claim and the balance
// change, the claim's inserted count gating the change. SPEC §1: "a dedup record ... written in
// the *same* DB transaction as the effect".
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

        let mut conn = pool.get()?;
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            let inserted = diesel::insert_into(processed_messages::table)
                .values(processed_messages::message_id.eq(&ev.message_id))
                .on_conflict_do_nothing()
                .execute(conn)?;
            if inserted == 1 {
                diesel::update(wallets::table.find(ev.wallet_id))
                    .set(wallets::balance_cents.eq(wallets::balance_cents + ev.amount_cents))
                    .execute(conn)?;
            }
            Ok(())
        })?;
        delivery.ack(BasicAckOptions::default()).await?;
    }
    Ok(())
}
