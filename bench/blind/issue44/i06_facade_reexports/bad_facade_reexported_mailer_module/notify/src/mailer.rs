// The real definition behind `platform::mailer`: sends the receipt e-mail with lettre.
use lettre::message::header::ContentType;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

pub async fn send_receipt(
    smtp: &AsyncSmtpTransport<Tokio1Executor>,
    to: &str,
    order_id: i64,
    total: &str,
) -> anyhow::Result<()> {
    let email = Message::builder()
        .from("Acme Shop <orders@acme.example>".parse()?)
        .to(to.parse()?)
        .subject(format!("Your receipt for order {order_id}"))
        .header(ContentType::TEXT_PLAIN)
        .body(format!("Thanks for your order {order_id}. Total: {total}"))?;
    smtp.send(email).await?;
    Ok(())
}
