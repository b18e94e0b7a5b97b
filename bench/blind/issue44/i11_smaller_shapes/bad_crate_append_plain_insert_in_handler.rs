// Bad (MA011): the handler calls `AuditLog::append` through its `AuditLog` field: a plain INSERT
// with no conflict clause (no visible unique business key) and no dedup record, in an
// at-least-once consumer (offset committed after). SPEC MA011 decision: "`INSERT` without a
// conflict clause into a table with no visible unique business key"; "Across functions, the
// primary location is the offending call where it is written, even in a helper".
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::message::Message;
use serde::Deserialize;
use sqlx::PgPool;

pub struct AuditLog {
    pool: PgPool,
}

impl AuditLog {
    pub async fn append(&self, actor: &str, action: &str) -> anyhow::Result<()> {
        sqlx::query("INSERT INTO audit_log (actor, action, at) VALUES ($1, $2, now())").bind(actor).bind(action).execute(&self.pool).await?; //~ MA011
        Ok(())
    }
}

pub struct AuditConsumer {
    log: AuditLog,
    consumer: StreamConsumer,
}

#[derive(Deserialize)]
struct UserEvent {
    actor: String,
    action: String,
}

impl AuditConsumer {
    pub fn new(pool: PgPool) -> anyhow::Result<Self> {
        let consumer: StreamConsumer = ClientConfig::new()
            .set("bootstrap.servers", "kafka:9092")
            .set("group.id", "audit")
            .set("enable.auto.commit", "false")
            .create()?;
        consumer.subscribe(&["users.activity"])?;
        Ok(Self { log: AuditLog { pool }, consumer })
    }

    pub async fn run(&self) -> anyhow::Result<()> {
        loop {
            let msg = self.consumer.recv().await?;
            let ev: UserEvent = serde_json::from_slice(msg.payload().unwrap_or_default())?;
            let mut lines: Vec<String> = Vec::new();
            lines.append(&mut vec![ev.actor.clone()]);
            self.log.append(&ev.actor, &ev.action).await?;
            self.consumer.commit_message(&msg, CommitMode::Async)?;
        }
    }
}
