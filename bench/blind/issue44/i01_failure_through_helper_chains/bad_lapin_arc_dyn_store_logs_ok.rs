// Bad (MA014): the consumer holds an `Arc<dyn ProfileStore>`; the only implementation,
// `PgProfileStore::save`, matches the UPDATE's error away (logs it) and returns Ok(()). The
// handler's `?` never fires and the delivery is acked although the profile was never written.
// SPEC: "a `dyn Trait` ... receiver goes to the implementations of that trait in the analyzed
// code"; MA014 primary: "the ack call on the failure path".
use std::sync::Arc;

use async_trait::async_trait;
use futures::StreamExt;
use lapin::options::{BasicAckOptions, BasicConsumeOptions, BasicNackOptions};
use lapin::types::FieldTable;
use lapin::Channel;
use serde::Deserialize;
use sqlx::PgPool;
use tracing::error;

#[derive(Deserialize)]
pub struct ProfileUpdated {
    pub user_id: i64,
    pub display_name: String,
}

#[async_trait]
pub trait ProfileStore: Send + Sync {
    async fn save(&self, ev: &ProfileUpdated) -> anyhow::Result<()>;
}

pub struct PgProfileStore {
    pool: PgPool,
}

#[async_trait]
impl ProfileStore for PgProfileStore {
    async fn save(&self, ev: &ProfileUpdated) -> anyhow::Result<()> {
        match sqlx::query("UPDATE profiles SET display_name = $1 WHERE user_id = $2")
            .bind(&ev.display_name)
            .bind(ev.user_id)
            .execute(&self.pool)
            .await
        {
            Ok(_) => {}
            Err(e) => error!(error = %e, user = ev.user_id, "profile update failed"),
        }
        Ok(())
    }
}

pub async fn consume(channel: Channel, store: Arc<dyn ProfileStore>) -> anyhow::Result<()> {
    let mut consumer = channel
        .basic_consume("profiles", "profile-sync", BasicConsumeOptions::default(), FieldTable::default())
        .await?;
    while let Some(delivery) = consumer.next().await {
        let delivery = delivery?;
        let ev: ProfileUpdated = match serde_json::from_slice(&delivery.data) {
            Ok(ev) => ev,
            Err(_) => {
                delivery.nack(BasicNackOptions { requeue: false, ..Default::default() }).await?;
                continue;
            }
        };
        store.save(&ev).await?;
        delivery.ack(BasicAckOptions::default()).await?; //~ MA014
    }
    Ok(())
}
