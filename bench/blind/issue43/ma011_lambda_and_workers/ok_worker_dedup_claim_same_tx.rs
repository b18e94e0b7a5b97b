// OK: the at-least-once worker (oneshot reply awaited before the commit) claims the message's
// stable key in `processed_events` inside the same transaction as the increment, checks
// `rows_affected`, and skips the increment for a duplicate: the non-idempotent effect has a dedup
// record, so no MA011 (and no MA003/MA005).
use lapin::options::{BasicAckOptions, BasicConsumeOptions, BasicNackOptions};
use lapin::types::FieldTable;
use lapin::Channel;
use futures::StreamExt;
use serde::Deserialize;
use sqlx::PgPool;
use tokio::sync::{mpsc, oneshot};

#[derive(Debug, Deserialize)]
struct Like {
    like_id: String,
    post_id: i64,
}

async fn like_worker(mut rx: mpsc::Receiver<(Like, oneshot::Sender<Result<(), sqlx::Error>>)>, pool: PgPool) {
    while let Some((like, reply)) = rx.recv().await {
        let outcome = async {
            let mut tx = pool.begin().await?;
            let claimed = sqlx::query("INSERT INTO processed_events (event_id) VALUES ($1) ON CONFLICT DO NOTHING")
                .bind(&like.like_id)
                .execute(&mut *tx)
                .await?;
            if claimed.rows_affected() == 1 {
                sqlx::query("UPDATE posts SET likes = likes + 1 WHERE post_id = $1")
                    .bind(like.post_id)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await
        }
        .await;
        let _ = reply.send(outcome);
    }
}

pub async fn consume(channel: Channel, pool: PgPool) -> anyhow::Result<()> {
    let (tx, rx) = mpsc::channel(8);
    tokio::spawn(like_worker(rx, pool));
    let mut deliveries = channel
        .basic_consume("posts.likes", "like-counter", BasicConsumeOptions::default(), FieldTable::default())
        .await?;
    while let Some(delivery) = deliveries.next().await {
        let delivery = delivery?;
        let Ok(like) = serde_json::from_slice::<Like>(&delivery.data) else {
            delivery.nack(BasicNackOptions { requeue: false, ..Default::default() }).await?;
            continue;
        };
        let (done_tx, done_rx) = oneshot::channel();
        tx.send((like, done_tx)).await?;
        match done_rx.await? {
            Ok(()) => delivery.ack(BasicAckOptions::default()).await?,
            Err(err) => {
                tracing::warn!(%err, "like not applied, requeueing");
                delivery.nack(BasicNackOptions { requeue: true, ..Default::default() }).await?;
            }
        }
    }
    Ok(())
}
