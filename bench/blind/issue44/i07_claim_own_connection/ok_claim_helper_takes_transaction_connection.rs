// OK: the claim helper takes the handler's transaction connection (`&mut PgConnection` from
// `&mut *tx`) instead of checking one out; claim and effect commit together and the claim gates
// the effect. SPEC §1: "a dedup record ... written in the *same* DB transaction as the effect".
use async_nats::jetstream::consumer::PullConsumer;
use futures::StreamExt;
use serde::Deserialize;
use sqlx::{PgConnection, PgPool};

#[derive(Deserialize)]
struct SeatBooked {
    event_id: uuid::Uuid,
    show_id: i64,
    seats: i32,
}

async fn claim_event(conn: &mut PgConnection, event_id: uuid::Uuid) -> anyhow::Result<bool> {
    let res = sqlx::query("INSERT INTO inbox (event_id) VALUES ($1) ON CONFLICT (event_id) DO NOTHING")
        .bind(event_id)
        .execute(conn)
        .await?;
    Ok(res.rows_affected() == 1)
}

pub async fn run(consumer: PullConsumer, pool: PgPool) -> anyhow::Result<()> {
    let mut messages = consumer.messages().await?;
    while let Some(msg) = messages.next().await {
        let msg = msg.map_err(|e| anyhow::anyhow!(e))?;
        let ev: SeatBooked = serde_json::from_slice(&msg.payload)?;

        let mut tx = pool.begin().await?;
        if claim_event(&mut *tx, ev.event_id).await? {
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
