// Real definition behind `platform::profiles`: the UPDATE's error is propagated.
use sqlx::PgPool;

pub async fn save_email(pool: &PgPool, user_id: i64, email: &str) -> anyhow::Result<()> {
    sqlx::query("UPDATE profiles SET email = $1 WHERE user_id = $2")
        .bind(email)
        .bind(user_id)
        .execute(pool)
        .await?;
    Ok(())
}
