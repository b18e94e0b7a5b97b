// OK (MA012): dedup rows are kept three days (`datetime('now', '-3 days')`), more than the one
// day the `device.telemetry` KafkaTopic retains. SPEC MA012 fires only when the retention "is
// shorter than the replay window of the source".
use std::time::Duration;

use sqlx::SqlitePool;

pub async fn run(pool: SqlitePool) {
    let mut every = tokio::time::interval(Duration::from_secs(600));
    loop {
        every.tick().await;
        let _ = sqlx::query("DELETE FROM dedup_events WHERE created_at < datetime('now', '-3 days')")
            .execute(&pool)
            .await;
    }
}
