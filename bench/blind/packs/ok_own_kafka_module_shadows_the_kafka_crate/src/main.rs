// No finding: `use kafka::Producer` names the crate's own module `kafka` (declared by `mod kafka;`),
// whose `send` only records the line in memory; it is not the kafka-rust crate's producer.
mod kafka;

use kafka::Producer;
use sqlx::PgPool;

async fn save(pool: &PgPool, producer: &Producer, id: &str) -> anyhow::Result<()> {
    let mut tx = pool.begin().await?;
    sqlx::query("INSERT INTO orders (id) VALUES ($1)").bind(id).execute(&mut *tx).await?;
    tx.commit().await?;
    producer.send(id).map_err(anyhow::Error::msg)?;
    Ok(())
}

fn main() {}
