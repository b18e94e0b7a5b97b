// Real definition reached through `platform::postings` (glob re-export of `acme-ledger`).
use sqlx::PgPool;

pub async fn record_posting(pool: &PgPool, posting_id: &str, account: &str, amount_cents: i64) -> anyhow::Result<()> {
    sqlx::query(
        "INSERT INTO ledger_postings (posting_id, account, amount_cents) VALUES ($1, $2, $3) \
         ON CONFLICT (posting_id) DO UPDATE SET account = EXCLUDED.account, amount_cents = EXCLUDED.amount_cents",
    )
    .bind(posting_id)
    .bind(account)
    .bind(amount_cents)
    .execute(pool)
    .await?;
    Ok(())
}
