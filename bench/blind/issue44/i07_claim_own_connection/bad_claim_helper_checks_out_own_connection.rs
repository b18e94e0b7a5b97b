// Bad (MA003): the handler begins a transaction for the effect, but the dedup check goes through
// `claim_event`, which checks out its own connection from the pool and inserts there in
// autocommit. SPEC MA003: "different transactions, connections, or with one in autocommit";
// "Across functions, the primary location is the offending call where it is written, even in a
// helper".
use async_nats::jetstream::consumer::PullConsumer;
use futures::StreamExt;
use serde::Deserialize;
use sqlx::PgPool;

#[derive(Deserialize)]
struct SeatBooked {
    event_id: uuid::Uuid,
    show_id: i64,
    seats: i32,
}

async fn claim_event(pool: &PgPool, event_id: uuid::Uuid) -> anyhow::Result<bool> {
    let mut conn = pool.acquire().await?;
    let res = sqlx::query("INSERT INTO inbox (event_id) VALUES ($1) ON CONFLICT (event_id) DO NOTHING").bind(event_id).execute(&mut *conn).await?; //~ MA003
    Ok(res.rows_affected() == 1)
}

pub async fn run(consumer: PullConsumer, pool: PgPool) -> anyhow::Result<()> {
    let mut messages = consumer.messages().await?;
    while let Some(msg) = messages.next().await {
        let msg = msg.map_err(|e| anyhow::anyhow!(e))?;
        let ev: SeatBooked = serde_json::from_slice(&msg.payload)?;

        let mut tx = pool.begin().await?;
        if claim_event(&pool, ev.event_id).await? {
            sqlx::query("UPDATE shows SET seats_left = seats_left - $1 WHERE id = $2")
                .bind(ev.seats)
                .bind(ev.show_id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        msg.ack().await.map_err(|e| anyhow::anyhow!(e))?;
    }
    Ok(())
}
