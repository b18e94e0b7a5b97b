// OK: the same service method; the claim uses `RETURNING` and the `Option` it yields decides
// whether the counter moves. SPEC §1: "The result of the dedup claim (`INSERT … ON CONFLICT DO
// NOTHING`, rows affected / `RETURNING`) must gate the effect."
use sqlx::PgPool;
use uuid::Uuid;

pub struct ReadModel {
    pool: PgPool,
}

impl ReadModel {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    pub async fn on_article_viewed(&self, event_id: Uuid, article_id: i64) -> anyhow::Result<bool> {
        let mut tx = self.pool.begin().await?;
        let first: Option<Uuid> = sqlx::query_scalar(
            "INSERT INTO processed_events (event_id) VALUES ($1) ON CONFLICT (event_id) DO NOTHING RETURNING event_id",
        )
        .bind(event_id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(_) = first else {
            tx.rollback().await?;
            return Ok(false);
        };
        sqlx::query("UPDATE article_stats SET views = views + 1 WHERE article_id = $1")
            .bind(article_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }
}
