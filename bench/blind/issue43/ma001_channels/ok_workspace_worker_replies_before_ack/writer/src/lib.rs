// Worker member crate: owns the receiver, upserts each tariff and replies on the job's oneshot
// only after the write returned.
use serde::Deserialize;
use sqlx::PgPool;
use tokio::sync::{mpsc, oneshot};

#[derive(Debug, Deserialize)]
pub struct Tariff {
    pub zone: String,
    pub cents_per_kwh: i32,
}

pub struct WriteJob {
    pub tariff: Tariff,
    pub done: oneshot::Sender<Result<(), sqlx::Error>>,
}

pub async fn serve(mut jobs: mpsc::Receiver<WriteJob>, pool: PgPool) {
    while let Some(job) = jobs.recv().await {
        let res = sqlx::query("INSERT INTO tariffs (zone, cents_per_kwh) VALUES ($1, $2) ON CONFLICT (zone) DO UPDATE SET cents_per_kwh = EXCLUDED.cents_per_kwh")
            .bind(&job.tariff.zone)
            .bind(job.tariff.cents_per_kwh)
            .execute(&pool)
            .await
            .map(|_| ());
        let _ = job.done.send(res);
    }
}
