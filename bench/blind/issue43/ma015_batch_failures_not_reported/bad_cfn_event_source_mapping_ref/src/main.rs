// MA015 (Rust half): SQS batch handler of the `audit-trail` package that writes each record to S3
// under its message id and reports failed ids in SqsBatchResponse. The CloudFormation event source
// mapping that triggers it (stack.yaml) lacks FunctionResponseTypes.
use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse, SqsEvent};
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::Client as S3Client;
use lambda_runtime::{run, service_fn, Error, LambdaEvent};

async fn archive(s3: &S3Client, event: LambdaEvent<SqsEvent>) -> Result<SqsBatchResponse, Error> {
    let bucket = std::env::var("AUDIT_BUCKET")?;
    let mut response = SqsBatchResponse::default();
    for record in event.payload.records {
        let Some(id) = record.message_id.clone() else { continue };
        let body = record.body.clone().unwrap_or_default();
        let put = s3
            .put_object()
            .bucket(&bucket)
            .key(format!("audit/{id}.json"))
            .body(ByteStream::from(body.into_bytes()))
            .send()
            .await;
        if let Err(err) = put {
            tracing::warn!(%id, %err, "audit archive failed");
            response.batch_item_failures.push(BatchItemFailure { item_identifier: id });
        }
    }
    Ok(response)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let config = aws_config::load_from_env().await;
    let s3 = S3Client::new(&config);
    let s3 = &s3;
    run(service_fn(move |event: LambdaEvent<SqsEvent>| async move { archive(s3, event).await })).await
}
