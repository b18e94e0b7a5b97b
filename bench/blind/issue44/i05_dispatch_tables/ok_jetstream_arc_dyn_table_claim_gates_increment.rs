// OK: the same table, but `PointsEarned` claims the message's event id in `processed_events` in
// the transaction of the increment and only increments when the claim inserted a row.
// SPEC MA011: "with no dedup record at all" — here there is one, checked, in the same
// transaction (no MA003, no MA005).
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
    event_id: uuid::Uuid,
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
        let mut tx = self.pool.begin().await?;
        let claimed = sqlx::query("INSERT INTO processed_events (event_id) VALUES ($1) ON CONFLICT DO NOTHING")
            .bind(ev.event_id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if claimed == 0 {
            tx.rollback().await?;
            return Ok(());
        }
        sqlx::query("UPDATE loyalty_accounts SET points = points + $1 WHERE member_id = $2")
            .bind(ev.points)
            .bind(ev.member_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }
}

pub async fn run(consumer: PullConsumer, pool: PgPool) -> anyhow::Result<()> {
    let mut table: HashMap<&'static str, Arc<dyn Projection>> = HashMap::new();
    table.insert("loyalty.points_earned", Arc::new(PointsEarned { pool }));

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
