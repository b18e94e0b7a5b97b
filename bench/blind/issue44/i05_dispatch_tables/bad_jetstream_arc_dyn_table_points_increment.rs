// Bad (MA011): a JetStream consumer dispatches by subject through a table of
// `Arc<dyn Projection>` filled at start-up; the `PointsEarned` projection adds points with
// `SET points = points + $1` and no dedup record, and the loop acks after it (at-least-once).
// SPEC MA011 decision: "Non-idempotent effects are: SQL `SET x = x ± …`"; "A 'handler' is a
// function that obtains a message from a consumer API ... and everything it calls in the same
// crate"; primary: "the effect".
use std::collections::HashMap;
use std::sync::Arc;

use async_nats::jetstream::consumer::PullConsumer;
use async_trait::async_trait;
use futures::StreamExt;
use serde::Deserialize;
use sqlx::PgPool;

#[async_trait]
trait Projection: Send + Sync {
    async fn project(&self, payload: &[u8]) -> anyhow::Result<()>;
}

#[derive(Deserialize)]
struct Earned {
    member_id: i64,
    points: i64,
}

struct PointsEarned {
    pool: PgPool,
}

#[async_trait]
impl Projection for PointsEarned {
    async fn project(&self, payload: &[u8]) -> anyhow::Result<()> {
        let ev: Earned = serde_json::from_slice(payload)?;
        sqlx::query("UPDATE loyalty_accounts SET points = points + $1 WHERE member_id = $2").bind(ev.points).bind(ev.member_id).execute(&self.pool).await?; //~ MA011
        Ok(())
    }
}

struct TierChanged {
    pool: PgPool,
}

#[async_trait]
impl Projection for TierChanged {
    async fn project(&self, payload: &[u8]) -> anyhow::Result<()> {
        let ev: serde_json::Value = serde_json::from_slice(payload)?;
        sqlx::query("UPDATE loyalty_accounts SET tier = $1 WHERE member_id = $2")
            .bind(ev["tier"].as_str())
            .bind(ev["member_id"].as_i64())
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}

pub async fn run(consumer: PullConsumer, pool: PgPool) -> anyhow::Result<()> {
    let mut table: HashMap<&'static str, Arc<dyn Projection>> = HashMap::new();
    table.insert("loyalty.points_earned", Arc::new(PointsEarned { pool: pool.clone() }));
    table.insert("loyalty.tier_changed", Arc::new(TierChanged { pool }));

    let mut messages = consumer.messages().await?;
    while let Some(msg) = messages.next().await {
        let msg = msg.map_err(|e| anyhow::anyhow!(e))?;
        if let Some(p) = table.get(msg.subject.as_str()) {
            p.project(&msg.payload).await?;
        }
        msg.ack().await.map_err(|e| anyhow::anyhow!(e))?;
    }
    Ok(())
}
