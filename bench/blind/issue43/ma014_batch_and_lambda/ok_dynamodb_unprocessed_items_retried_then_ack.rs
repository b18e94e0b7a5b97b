// OK: `unprocessed_items` is fed back into `batch_write_item` until it is empty (bounded, with
// backoff; an error after the last attempt), and only then is the delivery acked: retrying the
// failed entries acts on them.
use std::collections::HashMap;
use std::time::Duration;

use aws_sdk_dynamodb::types::WriteRequest;
use aws_sdk_dynamodb::Client as DynamoClient;
use futures::StreamExt;
use lapin::options::{BasicAckOptions, BasicConsumeOptions};
use lapin::types::FieldTable;
use lapin::Channel;

mod convert {
    use std::collections::HashMap;
    use aws_sdk_dynamodb::types::{AttributeValue, PutRequest, WriteRequest};

    pub fn to_writes(body: &[u8]) -> anyhow::Result<Vec<WriteRequest>> {
        let rows: Vec<HashMap<String, String>> = serde_json::from_slice(body)?;
        rows.into_iter()
            .map(|row| {
                let item = row.into_iter().map(|(k, v)| (k, AttributeValue::S(v))).collect();
                let put = PutRequest::builder().set_item(Some(item)).build()?;
                Ok(WriteRequest::builder().put_request(put).build())
            })
            .collect()
    }
}

async fn write_all(ddb: &DynamoClient, mut pending: HashMap<String, Vec<WriteRequest>>) -> anyhow::Result<()> {
    for attempt in 0..6u32 {
        let out = ddb.batch_write_item().set_request_items(Some(pending)).send().await?;
        match out.unprocessed_items() {
            Some(left) if !left.is_empty() => {
                pending = left.clone();
                tokio::time::sleep(Duration::from_millis(50 * 2u64.pow(attempt))).await;
            }
            _ => return Ok(()),
        }
    }
    anyhow::bail!("dynamodb kept items unprocessed after retries")
}

pub async fn consume(channel: Channel, ddb: DynamoClient) -> anyhow::Result<()> {
    let mut deliveries = channel
        .basic_consume("catalog.import", "catalog-writer-safe", BasicConsumeOptions::default(), FieldTable::default())
        .await?;
    while let Some(delivery) = deliveries.next().await {
        let delivery = delivery?;
        let writes = convert::to_writes(&delivery.data)?;
        let mut request = HashMap::new();
        request.insert("catalog".to_string(), writes);
        write_all(&ddb, request).await?;
        delivery.ack(BasicAckOptions::default()).await?;
    }
    Ok(())
}
