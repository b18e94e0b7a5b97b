// OK: the `HashMap<String, Box<dyn Handler>>` table from the bad case, but every handler behind
// it writes first (a keyed update) and acks after. SPEC MA001 "needs an effect after the ack on
// the same path"; the keyed `SET status = …` updates are idempotent (no MA011).
use std::collections::HashMap;

use async_trait::async_trait;
use futures::StreamExt;
use lapin::message::Delivery;
use lapin::options::{BasicAckOptions, BasicConsumeOptions, BasicRejectOptions};
use lapin::types::FieldTable;
use lapin::Channel;
use sqlx::PgPool;

#[async_trait]
trait Handler: Send + Sync {
    async fn handle(&self, delivery: &Delivery) -> anyhow::Result<()>;
}

struct InvoicePaidHandler {
    pool: PgPool,
}

#[async_trait]
impl Handler for InvoicePaidHandler {
    async fn handle(&self, delivery: &Delivery) -> anyhow::Result<()> {
        let invoice_id: i64 = serde_json::from_slice(&delivery.data)?;
        sqlx::query("UPDATE invoices SET status = 'paid' WHERE id = $1")
            .bind(invoice_id)
            .execute(&self.pool)
            .await?;
        delivery.ack(BasicAckOptions::default()).await?;
        Ok(())
    }
}

struct InvoiceVoidedHandler {
    pool: PgPool,
}

#[async_trait]
impl Handler for InvoiceVoidedHandler {
    async fn handle(&self, delivery: &Delivery) -> anyhow::Result<()> {
        let invoice_id: i64 = serde_json::from_slice(&delivery.data)?;
        sqlx::query("UPDATE invoices SET status = 'void' WHERE id = $1")
            .bind(invoice_id)
            .execute(&self.pool)
            .await?;
        delivery.ack(BasicAckOptions::default()).await?;
        Ok(())
    }
}

fn routes(pool: &PgPool) -> HashMap<String, Box<dyn Handler>> {
    let mut table: HashMap<String, Box<dyn Handler>> = HashMap::new();
    table.insert("invoice.paid".to_string(), Box::new(InvoicePaidHandler { pool: pool.clone() }));
    table.insert("invoice.voided".to_string(), Box::new(InvoiceVoidedHandler { pool: pool.clone() }));
    table
}

pub async fn consume(channel: Channel, pool: PgPool) -> anyhow::Result<()> {
    let table = routes(&pool);
    let mut consumer = channel
        .basic_consume("billing", "billing-router", BasicConsumeOptions::default(), FieldTable::default())
        .await?;
    while let Some(delivery) = consumer.next().await {
        let delivery = delivery?;
        match table.get(delivery.routing_key.as_str()) {
            Some(handler) => handler.handle(&delivery).await?,
            None => delivery.reject(BasicRejectOptions { requeue: false }).await?,
        }
    }
    Ok(())
}
