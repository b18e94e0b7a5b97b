// OK: the crate defines `AuditLog::append`, a plain INSERT (non-idempotent), called only from an
// HTTP handler. The message handler calls `append` on a declared `Vec<String>` only; that must not
// be linked to the crate method. SPEC: "A receiver whose type is known and lies outside the
// analyzed code (`Vec`, `HashMap`, a library type) is never linked to a crate function of the same
// name". The handler's own write is a keyed upsert, committed before the offset.
use axum::extract::State;
use axum::Json;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::message::Message;
use serde::Deserialize;
use sqlx::PgPool;

#[derive(Clone)]
pub struct AuditLog {
    pool: PgPool,
}

impl AuditLog {
    pub async fn append(&self, actor: &str, action: &str) -> anyhow::Result<()> {
        sqlx::query("INSERT INTO audit_log (actor, action, at) VALUES ($1, $2, now())")
            .bind(actor)
            .bind(action)
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}

#[derive(Deserialize)]
pub struct AdminAction {
    actor: String,
    action: String,
}

pub async fn record_admin_action(State(log): State<AuditLog>, Json(body): Json<AdminAction>) -> Result<(), String> {
    log.append(&body.actor, &body.action).await.map_err(|e| e.to_string())
}

#[derive(Deserialize)]
struct TagsChanged {
    article_id: i64,
    added: Vec<String>,
    kept: Vec<String>,
}

pub async fn consume_tags(pool: PgPool) -> anyhow::Result<()> {
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", "kafka:9092")
        .set("group.id", "article-tags")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.subscribe(&["articles.tags"])?;
    loop {
        let msg = consumer.recv().await?;
        let mut ev: TagsChanged = serde_json::from_slice(msg.payload().unwrap_or_default())?;
        let mut tags: Vec<String> = Vec::with_capacity(ev.kept.len() + ev.added.len());
        tags.append(&mut ev.kept);
        tags.append(&mut ev.added);
        tags.sort();
        tags.dedup();
        sqlx::query(
            "INSERT INTO article_tags (article_id, tags) VALUES ($1, $2) \
             ON CONFLICT (article_id) DO UPDATE SET tags = EXCLUDED.tags",
        )
        .bind(ev.article_id)
        .bind(&tags)
        .execute(&pool)
        .await?;
        consumer.commit_message(&msg, CommitMode::Async)?;
    }
}
