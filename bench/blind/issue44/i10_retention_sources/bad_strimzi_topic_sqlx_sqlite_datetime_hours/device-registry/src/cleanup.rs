// Bad (MA012): the dedup rows are deleted after six hours (`datetime('now', '-6 hours')`);
// the `device.telemetry` KafkaTopic keeps one day (k8s/topics/device-telemetry.yaml). SPEC MA012:
// "the dedup store's retention ... is shorter than the replay window of the source"; primary:
// "the interval in the cleanup SQL".
use std::time::Duration;

use sqlx::SqlitePool;

pub async fn run(pool: SqlitePool) {
    let mut every = tokio::time::interval(Duration::from_secs(600));
    loop {
        every.tick().await;
        let _ = sqlx::query("DELETE FROM dedup_events WHERE created_at < datetime('now', '-6 hours')") //~ MA012
            .execute(&pool)
            .await;
    }
}
