// OK: `no_ack: true`, but the worker pool behind the channel only refreshes an in-process
// `RwLock<HashMap>` cache of exchange rates; losing a delivery costs nothing durable. With no
// side effect reached through the channel or the tasks, MA007 has nothing to report.
use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use lapin::options::BasicConsumeOptions;
use lapin::types::FieldTable;
use lapin::Channel;
use serde::Deserialize;
use tokio::sync::RwLock;

#[derive(Debug, Deserialize)]
struct Rate {
    pair: String,
    mid: f64,
}

pub async fn consume(channel: Channel, cache: Arc<RwLock<HashMap<String, f64>>>) -> anyhow::Result<()> {
    let (tx, rx) = async_channel::bounded::<Rate>(512);
    for _ in 0..2 {
        let rx = rx.clone();
        let cache = Arc::clone(&cache);
        tokio::spawn(async move {
            while let Ok(rate) = rx.recv().await {
                cache.write().await.insert(rate.pair, rate.mid);
            }
        });
    }

    let mut consumer = channel
        .basic_consume(
            "fx.rates",
            "rate-cache",
            BasicConsumeOptions { no_ack: true, ..Default::default() },
            FieldTable::default(),
        )
        .await?;
    while let Some(delivery) = consumer.next().await {
        if let Ok(rate) = serde_json::from_slice::<Rate>(&delivery?.data) {
            tx.send(rate).await?;
        }
    }
    Ok(())
}
