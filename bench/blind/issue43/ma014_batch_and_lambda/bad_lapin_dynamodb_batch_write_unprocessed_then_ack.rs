// MA014: each RabbitMQ delivery carries a list of catalog items written with DynamoDB
// `batch_write_item`; `unprocessed_items` (throttled writes) is never read, then the delivery is
// acked. The ignored per-entry failures are a failure ignored, so the ack is MA014.
use std::collections::HashMap;

use aws_sdk_dynamodb::types::{AttributeValue, PutRequest, WriteRequest};
use aws_sdk_dynamodb::Client as DynamoClient;
use futures::StreamExt;
use lapin::options::{BasicAckOptions, BasicConsumeOptions};
use lapin::types::FieldTable;
use lapin::Channel;
use serde::Deserialize;

#[derive(Deserialize)]
struct CatalogItem {
    sku: String,
    title: String,
}

pub async fn consume(channel: Channel, ddb: DynamoClient) -> anyhow::Result<()> {
    let mut deliveries = channel
        .basic_consume("catalog.import", "catalog-writer", BasicConsumeOptions::default(), FieldTable::default())
        .await?;
    while let Some(delivery) = deliveries.next().await {
        let delivery = delivery?;
        let items: Vec<CatalogItem> = serde_json::from_slice(&delivery.data)?;
        let writes = items
            .iter()
            .map(|it| {
                let mut item = HashMap::new();
                item.insert("sku".to_string(), AttributeValue::S(it.sku.clone()));
                item.insert("title".to_string(), AttributeValue::S(it.title.clone()));
                PutRequest::builder()
                    .set_item(Some(item))
                    .build()
                    .map(|put| WriteRequest::builder().put_request(put).build())
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut request = HashMap::new();
        request.insert("catalog".to_string(), writes);
        ddb.batch_write_item().set_request_items(Some(request)).send().await?;
        delivery.ack(BasicAckOptions::default()).await?; //~ MA014
    }
    Ok(())
}
