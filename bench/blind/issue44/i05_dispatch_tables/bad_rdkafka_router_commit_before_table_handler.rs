// Bad (MA001): the consume loop commits the offset, then dispatches through an
// `Arc<dyn EventHandler>` table keyed by the `event-type` header; the handler behind the table
// writes the row, after the commit. SPEC: the handlers behind a dispatch table are the
// consumer's callees ("a `dyn Trait` ... receiver goes to the implementations"); MA001 "a
// message is ... its offset committed ... before the effect runs at all"; primary: the commit.
use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::message::{Headers, Message};
use sqlx::PgPool;

#[async_trait]
pub trait EventHandler: Send + Sync {
    async fn apply(&self, payload: &[u8]) -> anyhow::Result<()>;
}

pub struct CustomerRenamed {
    pool: PgPool,
}

#[async_trait]
impl EventHandler for CustomerRenamed {
    async fn apply(&self, payload: &[u8]) -> anyhow::Result<()> {
        let ev: serde_json::Value = serde_json::from_slice(payload)?;
        sqlx::query("UPDATE customers SET name = $1 WHERE id = $2")
            .bind(ev["name"].as_str())
            .bind(ev["id"].as_i64())
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}

pub type Router = HashMap<String, Arc<dyn EventHandler>>;

pub fn build_router(pool: PgPool) -> Router {
    let mut r: Router = HashMap::new();
    r.insert("CustomerRenamed".into(), Arc::new(CustomerRenamed { pool }));
    r
}

pub async fn run(router: Router) -> anyhow::Result<()> {
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", "kafka:9092")
        .set("group.id", "crm-projection")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.subscribe(&["crm.customers"])?;
    loop {
        let msg = consumer.recv().await?;
        let event_type = msg
            .headers()
            .and_then(|h| h.iter().find(|h| h.key == "event-type"))
            .and_then(|h| h.value)
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .unwrap_or_default();
        consumer.commit_message(&msg, CommitMode::Sync)?; //~ MA001
        if let Some(handler) = router.get(&event_type) {
            handler.apply(msg.payload().unwrap_or_default()).await?;
        }
    }
}
