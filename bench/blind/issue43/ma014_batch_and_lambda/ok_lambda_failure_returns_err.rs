// OK: on a failed write the handler logs and returns `Err`, which makes Lambda redeliver the
// whole batch ("returning Err ... redelivers the whole batch"); only a fully successful batch
// reaches `Ok`. The write is a keyed put, so redelivery is harmless.
use aws_lambda_events::event::sqs::SqsEvent;
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::Client as S3Client;
use lambda_runtime::{run, service_fn, Error, LambdaEvent};

async fn handler(s3: &S3Client, event: LambdaEvent<SqsEvent>) -> Result<(), Error> {
    for record in event.payload.records {
        let Some(id) = record.message_id.clone() else { continue };
        let body = record.body.unwrap_or_default();
        let put = s3.put_object().bucket("receipts-archive").key(format!("receipts/{id}.json")).body(ByteStream::from(body.into_bytes())).send().await;
        if let Err(err) = put {
            tracing::error!(%id, %err, "archive failed, failing the batch");
            return Err(Box::new(err));
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let config = aws_config::load_from_env().await;
    let s3 = S3Client::new(&config);
    let s3 = &s3;
    run(service_fn(move |event: LambdaEvent<SqsEvent>| async move { handler(s3, event).await })).await
}
