use aws_sdk_sqs::Client;
use sqlx::PgPool;

pub async fn handle(client: &Client, pool: &PgPool, url: &str) -> anyhow::Result<()> {
    let out = client.receive_message().queue_url(url).send().await?;
    for m in out.messages() {
        client
            .delete_message()
            .queue_url(url)
            .receipt_handle(m.receipt_handle().unwrap_or_default())
            .send()
            .await?;
        sqlx::query("INSERT INTO jobs (body) VALUES ($1)")
            .bind(m.body())
            .execute(pool)
            .await?;
    }
    Ok(())
}
