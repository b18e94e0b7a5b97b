// Bad (MA012): `message_log` is the consumer's claim table (recognized by its shape, not its
// name) and is trimmed to two hours, while `parcel.events` keeps seven days. SPEC: "A dedup record
// is recognized by its table's name ... or by its shape: an insert that ignores conflicts ...
// keyed by a value taken from the message, which runs before the effect it gates"; MA012 primary:
// "the interval in the cleanup SQL".
use sqlx::PgPool;

pub async fn trim_message_log(pool: &PgPool) -> anyhow::Result<u64> {
    let res = sqlx::query("DELETE FROM message_log WHERE logged_at < now() - interval '2 hours'") //~ MA012
        .execute(pool)
        .await?;
    Ok(res.rows_affected())
}
