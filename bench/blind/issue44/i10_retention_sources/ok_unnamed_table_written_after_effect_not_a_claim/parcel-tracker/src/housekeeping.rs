// OK (MA012): `message_log` is trimmed to two hours, but it is not a dedup store: its insert runs
// after the effect and gates nothing. SPEC: "A conflict-ignoring insert keyed by something else,
// or one that runs after the effect, is an idempotent write, not a claim."
use sqlx::PgPool;

pub async fn trim_message_log(pool: &PgPool) -> anyhow::Result<u64> {
    let res = sqlx::query("DELETE FROM message_log WHERE logged_at < now() - interval '2 hours'")
        .execute(pool)
        .await?;
    Ok(res.rows_affected())
}
