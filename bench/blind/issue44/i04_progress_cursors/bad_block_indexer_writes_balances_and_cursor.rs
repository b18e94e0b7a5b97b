// Bad (MA006): the same indexer also writes a business table (`wallet_balances`) in the
// transaction that advances the cursor, after publishing. The cursor alone would be progress;
// the balance rows are a durable business change committed apart from the publish.
// SPEC MA006 decision: "MA006 pairs a durable business change with a publish on one path";
// primary: "the publish call".
use std::time::Duration;

use rdkafka::producer::{FutureProducer, FutureRecord};
use serde::Deserialize;
use sqlx::PgPool;

#[derive(Deserialize)]
struct Block {
    number: i64,
    transfers: Vec<Transfer>,
}

#[derive(Deserialize, serde::Serialize)]
struct Transfer {
    tx_hash: String,
    to: String,
    balance_after: String,
}

pub async fn index(pool: PgPool, http: reqwest::Client, producer: FutureProducer, node: &str) -> anyhow::Result<()> {
    let mut next: i64 = sqlx::query_scalar("SELECT last_block + 1 FROM indexer_cursor WHERE name = 'transfers'")
        .fetch_one(&pool)
        .await?;
    loop {
        let block: Block = http.get(format!("{node}/blocks/{next}")).send().await?.error_for_status()?.json().await?;
        for t in &block.transfers {
            let body = serde_json::to_vec(t)?;
            producer
                .send(FutureRecord::to("chain.transfers").key(&t.tx_hash).payload(&body), Duration::from_secs(10)) //~ MA006
                .await
                .map_err(|(e, _)| e)?;
        }
        let mut tx = pool.begin().await?;
        for t in &block.transfers {
            sqlx::query(
                "INSERT INTO wallet_balances (address, balance) VALUES ($1, $2) \
                 ON CONFLICT (address) DO UPDATE SET balance = EXCLUDED.balance",
            )
            .bind(&t.to)
            .bind(&t.balance_after)
            .execute(&mut *tx)
            .await?;
        }
        sqlx::query("UPDATE indexer_cursor SET last_block = $1 WHERE name = 'transfers'")
            .bind(block.number)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        next = block.number + 1;
    }
}
