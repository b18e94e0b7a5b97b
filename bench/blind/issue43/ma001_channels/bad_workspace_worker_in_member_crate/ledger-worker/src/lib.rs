// The worker half of the workspace: it owns the receiver and applies the effect. The consumer
// crate commits offsets without waiting for it (see consumer/src/main.rs).
use serde::Deserialize;
use sqlx::PgPool;
use tokio::sync::mpsc::Receiver;

#[derive(Debug, Deserialize)]
pub struct InvoiceIssued {
    pub invoice_id: String,
    pub account_id: String,
    pub amount_cents: i64,
}

pub async fn run(mut rx: Receiver<InvoiceIssued>, pool: PgPool) {
    while let Some(invoice) = rx.recv().await {
        let res = sqlx::query("INSERT INTO invoices (invoice_id, account_id, amount_cents) VALUES ($1, $2, $3) ON CONFLICT (invoice_id) DO UPDATE SET account_id = EXCLUDED.account_id, amount_cents = EXCLUDED.amount_cents")
            .bind(&invoice.invoice_id)
            .bind(&invoice.account_id)
            .bind(invoice.amount_cents)
            .execute(&pool)
            .await;
        if let Err(err) = res {
            tracing::error!(invoice_id = %invoice.invoice_id, %err, "invoice write failed");
        }
    }
}
