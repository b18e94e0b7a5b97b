// Real definition behind `platform::profiles`: a failed UPDATE is logged and swallowed.
use sqlx::PgPool;
use tracing::error;

pub async fn save_email(pool: &PgPool, user_id: i64, email: &str) -> anyhow::Result<()> {
    if let Err(e) = sqlx::query("UPDATE profiles SET email = $1 WHERE user_id = $2")
        .bind(email)
        .bind(user_id)
        .execute(pool)
        .await
    {
        error!(error = %e, user_id, "profile email update failed");
    }
    Ok(())
}
