// MA011: a Kinesis batch Lambda adds each record's amount with `SET balance = balance + $1`.
// Returning `?` errors redelivers the whole batch, so records that already applied are added
// again: a non-idempotent per-record effect with no dedup record, MA011 at the update.
use aws_lambda_events::event::kinesis::KinesisEvent;
use lambda_runtime::{run, service_fn, Error, LambdaEvent};
use serde::Deserialize;
use tokio_postgres::NoTls;

#[derive(Deserialize)]
struct Deposit {
    wallet_id: String,
    amount_cents: i64,
}

async fn handle(client: &tokio_postgres::Client, event: LambdaEvent<KinesisEvent>) -> Result<(), Error> {
    for record in &event.payload.records {
        let deposit: Deposit = serde_json::from_slice(&record.kinesis.data.0)?;
        client.execute("UPDATE wallets SET balance_cents = balance_cents + $1 WHERE wallet_id = $2", &[&deposit.amount_cents, &deposit.wallet_id]).await?; //~ MA011
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let (client, connection) = tokio_postgres::connect(&std::env::var("PG_DSN")?, NoTls).await?;
    tokio::spawn(connection);
    let client = &client;
    run(service_fn(|event: LambdaEvent<KinesisEvent>| async move { handle(client, event).await })).await
}
