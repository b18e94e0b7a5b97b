// OK: a block indexer fetches each block over HTTP GET, publishes its transfers to Kafka, and
// then stores the block number it has published up to. SPEC MA006 decision: "Not a business
// change either: a relay's or tailer's progress cursor (the block, LSN, offset or sequence number
// it has published up to), written after the publish; it is the relay's progress record".
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
    from: String,
    to: String,
    amount: String,
}

pub async fn index(pool: PgPool, http: reqwest::Client, producer: FutureProducer, node: &str) -> anyhow::Result<()> {
    let mut next: i64 = sqlx::query_scalar("SELECT last_block + 1 FROM indexer_cursor WHERE name = 'transfers'")
        .fetch_one(&pool)
        .await?;
    loop {
        let resp = http.get(format!("{node}/blocks/{next}")).send().await?;
        if resp.status() == reqwest::StatusCode::NOT_FOUND {
            tokio::time::sleep(Duration::from_secs(2)).await;
            continue;
        }
        let block: Block = resp.error_for_status()?.json().await?;
        for t in &block.transfers {
            let body = serde_json::to_vec(t)?;
            producer
                .send(FutureRecord::to("chain.transfers").key(&t.tx_hash).payload(&body), Duration::from_secs(10))
                .await
                .map_err(|(e, _)| e)?;
        }
        sqlx::query("UPDATE indexer_cursor SET last_block = $1 WHERE name = 'transfers'")
            .bind(block.number)
            .execute(&pool)
            .await?;
        next = block.number + 1;
    }
}
