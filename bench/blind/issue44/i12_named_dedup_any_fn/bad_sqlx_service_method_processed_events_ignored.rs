// Bad (MA005): a service method (no receive anywhere in this file) claims the event in
// `processed_events` inside its transaction, discards the result, and increments the counter.
// SPEC: "MA005 also applies in any function whose claim goes into a table recognized as a dedup
// record by its name (`processed_*` ...): a claim there whose result is ignored is a bug wherever
// it is written"; primary: "the dedup claim".
use sqlx::PgPool;
use uuid::Uuid;

pub struct ReadModel {
    pool: PgPool,
}

impl ReadModel {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    pub async fn on_article_viewed(&self, event_id: Uuid, article_id: i64) -> anyhow::Result<()> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("INSERT INTO processed_events (event_id) VALUES ($1) ON CONFLICT (event_id) DO NOTHING").bind(event_id).execute(&mut *tx).await?; //~ MA005
        sqlx::query("UPDATE article_stats SET views = views + 1 WHERE article_id = $1")
            .bind(article_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }
}
