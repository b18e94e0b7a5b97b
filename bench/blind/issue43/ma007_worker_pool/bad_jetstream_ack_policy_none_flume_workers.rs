// MA007: the JetStream pull consumer is created with `AckPolicy::None`, so the server counts each
// message delivered as done; messages are fanned out over a flume channel to worker tasks that
// write rows. Progress is decoupled from the effect: MA007 at the ack policy setting.
use async_nats::jetstream::{self, consumer::pull, consumer::AckPolicy};
use futures::StreamExt;
use serde::Deserialize;
use sqlx::PgPool;

#[derive(Debug, Deserialize)]
struct AuditEvent {
    event_id: String,
    actor: String,
    action: String,
}

pub async fn run(nats: async_nats::Client, pool: PgPool) -> anyhow::Result<()> {
    let js = jetstream::new(nats);
    let stream = js.get_stream("AUDIT").await?;
    let consumer = stream
        .get_or_create_consumer(
            "audit-archiver",
            pull::Config {
                durable_name: Some("audit-archiver".to_string()),
                ack_policy: AckPolicy::None, //~ MA007
                ..Default::default()
            },
        )
        .await?;

    let (tx, rx) = flume::bounded::<AuditEvent>(1000);
    for _ in 0..3 {
        let rx = rx.clone();
        let pool = pool.clone();
        tokio::spawn(async move {
            while let Ok(ev) = rx.recv_async().await {
                let _ = sqlx::query("INSERT INTO audit_log (event_id, actor, action) VALUES ($1, $2, $3) ON CONFLICT (event_id) DO UPDATE SET actor = EXCLUDED.actor, action = EXCLUDED.action")
                    .bind(&ev.event_id)
                    .bind(&ev.actor)
                    .bind(&ev.action)
                    .execute(&pool)
                    .await;
            }
        });
    }

    let mut messages = consumer.messages().await?;
    while let Some(message) = messages.next().await {
        let message = message?;
        if let Ok(ev) = serde_json::from_slice::<AuditEvent>(&message.payload) {
            tx.send_async(ev).await?;
        }
    }
    Ok(())
}
