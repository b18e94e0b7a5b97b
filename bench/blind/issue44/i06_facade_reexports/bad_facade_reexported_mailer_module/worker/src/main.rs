// Bad (MA001): the worker acks the delivery and only then sends the receipt through the facade
// `platform::mailer::send_receipt` (a `pub use notify::mailer;` in the `acme-platform` member,
// depended on as `platform` by a renamed path dependency). A crash after the ack loses the
// e-mail. SPEC: "Paths resolve through `use`, `pub use` and glob re-exports"; §3 "a package
// depends on the packages it names by `path` (workspace members included)"; MA001 primary: the ack.
use futures::StreamExt;
use lapin::options::{BasicAckOptions, BasicConsumeOptions, BasicQosOptions};
use lapin::types::FieldTable;
use lapin::{Connection, ConnectionProperties};
use lettre::{AsyncSmtpTransport, Tokio1Executor};
use serde::Deserialize;

#[derive(Deserialize)]
struct OrderPaid {
    order_id: i64,
    email: String,
    total: String,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let conn = Connection::connect(&platform::config::amqp_url(), ConnectionProperties::default()).await?;
    let channel = conn.create_channel().await?;
    channel.basic_qos(16, BasicQosOptions::default()).await?;
    let smtp = AsyncSmtpTransport::<Tokio1Executor>::relay("smtp.acme.example")?.build();

    let mut consumer = channel
        .basic_consume("orders.paid", "receipt-worker", BasicConsumeOptions::default(), FieldTable::default())
        .await?;
    while let Some(delivery) = consumer.next().await {
        let delivery = delivery?;
        let ev: OrderPaid = serde_json::from_slice(&delivery.data)?;
        delivery.ack(BasicAckOptions::default()).await?; //~ MA001
        platform::mailer::send_receipt(&smtp, &ev.email, ev.order_id, &ev.total).await?;
    }
    Ok(())
}
