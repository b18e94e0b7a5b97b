// MA014: a DynamoDB Streams handler passed straight to `run(handler)` turns each failed search
// index write into `None` with `.ok()` and then returns `Ok(())`; the failed record is acked with
// the batch and never retried: MA014 at the final `Ok`.
use aws_lambda_events::event::dynamodb::Event as DynamoDbEvent;
use lambda_runtime::{run, Error, LambdaEvent};
use serde_json::json;

async fn handler(event: LambdaEvent<DynamoDbEvent>) -> Result<(), Error> {
    let http = reqwest::Client::new();
    let base = std::env::var("SEARCH_URL")?;
    for record in event.payload.records {
        let keys = serde_json::to_value(&record.change.keys)?;
        let Some(doc_id) = keys["doc_id"]["S"].as_str().map(str::to_owned) else { continue };
        let body = json!({ "event": record.event_name, "doc_id": doc_id });
        let url = format!("{base}/docs/_doc/{doc_id}");
        http.put(url).json(&body).send().await.and_then(|r| r.error_for_status()).ok();
    }
    Ok(()) //~ MA014
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    run(handler).await
}
