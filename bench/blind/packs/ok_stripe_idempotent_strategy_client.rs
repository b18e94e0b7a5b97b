// Clean: the PaymentIntent is created with a client whose request strategy sends the
// renewal's stable id as Stripe's Idempotency-Key; a redelivery replays the same request
// and Stripe returns the first intent instead of charging again.
use async_nats::jetstream::{self, consumer::pull::Config};
use futures::StreamExt;
use serde::Deserialize;
use stripe::{CreatePaymentIntent, Currency, PaymentIntent, RequestStrategy};

#[derive(Deserialize)]
struct RenewalDue {
    renewal_id: String,
    amount_cents: i64,
}

pub async fn run(nats: async_nats::Client, stripe_client: stripe::Client) -> anyhow::Result<()> {
    let js = jetstream::new(nats);
    let stream = js.get_stream("SUBSCRIPTIONS").await?;
    let consumer = stream
        .get_or_create_consumer("renewal-charger", Config { durable_name: Some("renewal-charger".into()), ..Default::default() })
        .await?;
    let mut messages = consumer.messages().await?;

    while let Some(msg) = messages.next().await {
        let msg = msg?;
        let due: RenewalDue = serde_json::from_slice(&msg.payload)?;
        let client = stripe_client.clone().with_strategy(RequestStrategy::Idempotent(format!("renewal-{}", due.renewal_id)));
        let params = CreatePaymentIntent::new(due.amount_cents, Currency::EUR);
        PaymentIntent::create(&client, params).await?;
        msg.ack().await.map_err(|e| anyhow::anyhow!(e))?;
    }
    Ok(())
}
