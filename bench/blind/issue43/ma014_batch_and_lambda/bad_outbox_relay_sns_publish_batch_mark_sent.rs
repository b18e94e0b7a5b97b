// MA014: an outbox relay publishes pending rows with SNS `publish_batch`, logs the number of
// failed entries, and then marks every row as sent. The row update is the relay's progress record;
// logging the failure count alone does not act on it, so the rows whose entries failed are marked
// sent and never re-published: MA014 at the marking update.
use aws_sdk_sns::types::PublishBatchRequestEntry;
use aws_sdk_sns::Client as SnsClient;
use sqlx::PgPool;

#[derive(sqlx::FromRow)]
struct OutboxRow {
    id: i64,
    payload: String,
}

pub async fn relay_once(pool: &PgPool, sns: &SnsClient, topic_arn: &str) -> anyhow::Result<usize> {
    let rows: Vec<OutboxRow> = sqlx::query_as("SELECT id, payload FROM outbox WHERE sent_at IS NULL ORDER BY id LIMIT 10")
        .fetch_all(pool)
        .await?;
    if rows.is_empty() {
        return Ok(0);
    }
    let entries = rows
        .iter()
        .map(|r| PublishBatchRequestEntry::builder().id(r.id.to_string()).message(&r.payload).build())
        .collect::<Result<Vec<_>, _>>()?;
    let out = sns.publish_batch().topic_arn(topic_arn).set_publish_batch_request_entries(Some(entries)).send().await?;
    tracing::info!(ok = out.successful().len(), failed = out.failed().len(), "outbox batch published");

    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
    sqlx::query("UPDATE outbox SET sent_at = now() WHERE id = ANY($1)").bind(&ids).execute(pool).await?; //~ MA014
    Ok(rows.len())
}
