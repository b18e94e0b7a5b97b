// OK: `with_lock` takes the lock key as a parameter (a constant at the call site) and takes a
// Redis `SET key token NX PX` lease around the rebuild, releasing it afterwards. The key is not
// taken from the message and nothing is deduplicated by it: it is a lock, not a dedup record, so
// no MA003 (Redis "claim" vs Postgres effect) and no MA005. SPEC: a claim is an insert that
// ignores conflicts "keyed by a value taken from the message ... A conflict-ignoring insert keyed
// by something else ... is an idempotent write, not a claim"; locks and leases are named as
// "`SET NX` with an expiry used as a lock".
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::message::Message;
use redis::aio::MultiplexedConnection;
use serde::Deserialize;
use sqlx::PgPool;

const REBUILD_LOCK: &str = "lock:leaderboard-rebuild";

#[derive(Deserialize)]
struct ScoreSubmitted {
    player_id: i64,
    best_score: i64,
}

async fn with_lock(redis: &mut MultiplexedConnection, key: &str, token: &str) -> anyhow::Result<bool> {
    let acquired: Option<String> = redis::cmd("SET")
        .arg(key)
        .arg(token)
        .arg("NX")
        .arg("PX")
        .arg(30_000)
        .query_async(redis)
        .await?;
    Ok(acquired.is_some())
}

async fn release(redis: &mut MultiplexedConnection, key: &str) -> anyhow::Result<()> {
    redis::cmd("DEL").arg(key).query_async::<_, ()>(redis).await?;
    Ok(())
}

pub async fn run(pool: PgPool, mut redis: MultiplexedConnection, instance: String) -> anyhow::Result<()> {
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", "kafka:9092")
        .set("group.id", "leaderboard")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.subscribe(&["game.scores"])?;
    loop {
        let msg = consumer.recv().await?;
        let ev: ScoreSubmitted = serde_json::from_slice(msg.payload().unwrap_or_default())?;
        while !with_lock(&mut redis, REBUILD_LOCK, &instance).await? {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let upsert = sqlx::query(
            "INSERT INTO leaderboard (player_id, best_score) VALUES ($1, $2) \
             ON CONFLICT (player_id) DO UPDATE SET best_score = GREATEST(leaderboard.best_score, EXCLUDED.best_score)",
        )
        .bind(ev.player_id)
        .bind(ev.best_score)
        .execute(&pool)
        .await;
        release(&mut redis, REBUILD_LOCK).await?;
        upsert?;
        consumer.commit_message(&msg, CommitMode::Async)?;
    }
}
