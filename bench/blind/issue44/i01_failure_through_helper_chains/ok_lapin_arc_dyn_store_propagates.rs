// OK: `Arc<dyn ProfileStore>` whose only implementation propagates the UPDATE's error with `?`;
// the handler nacks with requeue when `save` fails, so the failed delivery is kept.
// SPEC MA014 exemption: "a nack/reject with requeue".
use std::sync::Arc;

use async_trait::async_trait;
use futures::StreamExt;
use lapin::options::{BasicAckOptions, BasicConsumeOptions, BasicNackOptions};
use lapin::types::FieldTable;
use lapin::Channel;
use serde::Deserialize;
use sqlx::PgPool;
use tracing::warn;

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
        sqlx::query("UPDATE profiles SET display_name = $1 WHERE user_id = $2")
            .bind(&ev.display_name)
            .bind(ev.user_id)
            .execute(&self.pool)
            .await?;
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
        if let Err(e) = store.save(&ev).await {
            warn!(error = %e, "profile update failed, requeueing");
            delivery.nack(BasicNackOptions { requeue: true, ..Default::default() }).await?;
            continue;
        }
        delivery.ack(BasicAckOptions::default()).await?;
    }
    Ok(())
}
