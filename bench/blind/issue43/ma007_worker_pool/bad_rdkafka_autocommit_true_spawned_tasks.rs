// MA007: `enable.auto.commit` is set to true explicitly and each message is processed in its own
// `tokio::spawn`ed task that upserts the balance snapshot. Offsets advance on the timer whatever
// the tasks do: a crash loses messages whose tasks had not finished. Reported at the setting.
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::Message;
use serde::Deserialize;
use sqlx::PgPool;

#[derive(Debug, Deserialize)]
struct BalanceSnapshot {
    account_id: String,
    balance_cents: i64,
    as_of: i64,
}

pub async fn run(brokers: &str, pool: PgPool) -> anyhow::Result<()> {
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .set("group.id", "balance-snapshots")
        .set("enable.auto.commit", "true") //~ MA007
        .set("auto.commit.interval.ms", "1000")
        .create()?;
    consumer.subscribe(&["ledger.balances"])?;

    loop {
        let msg = consumer.recv().await?;
        let Some(Ok(snap)) = msg.payload().map(serde_json::from_slice::<BalanceSnapshot>) else {
            continue;
        };
        let pool = pool.clone();
        tokio::spawn(async move {
            let res = sqlx::query("INSERT INTO balances (account_id, balance_cents, as_of) VALUES ($1, $2, $3) ON CONFLICT (account_id) DO UPDATE SET balance_cents = EXCLUDED.balance_cents, as_of = EXCLUDED.as_of WHERE balances.as_of < EXCLUDED.as_of")
                .bind(&snap.account_id)
                .bind(snap.balance_cents)
                .bind(snap.as_of)
                .execute(&pool)
                .await;
            if let Err(err) = res {
                tracing::error!(account_id = %snap.account_id, %err, "snapshot write failed");
            }
        });
    }
}
