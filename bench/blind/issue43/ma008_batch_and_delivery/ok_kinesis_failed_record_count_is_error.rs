// OK: `failed_record_count() > 0` turns the partial failure into an error that the caller sees,
// so Kinesis throttling is not ignored (acting = "returning or raising an error").
use aws_sdk_kinesis::primitives::Blob;
use aws_sdk_kinesis::types::PutRecordsRequestEntry;
use aws_sdk_kinesis::Client as KinesisClient;

#[derive(Debug, thiserror::Error)]
pub enum ShipError {
    #[error("kinesis request failed: {0}")]
    Request(#[from] aws_sdk_kinesis::Error),
    #[error("{0} records were throttled or failed")]
    Partial(i32),
}

pub async fn ship_metrics(kinesis: &KinesisClient, stream: &str, points: Vec<(String, Vec<u8>)>) -> Result<(), ShipError> {
    let records: Vec<PutRecordsRequestEntry> = points
        .into_iter()
        .map(|(host, bytes)| PutRecordsRequestEntry::builder().partition_key(host).data(Blob::new(bytes)).build().expect("key and data set"))
        .collect();
    let out = kinesis.put_records().stream_name(stream).set_records(Some(records)).send().await.map_err(aws_sdk_kinesis::Error::from)?;
    if out.failed_record_count().unwrap_or(0) > 0 {
        return Err(ShipError::Partial(out.failed_record_count().unwrap_or(0)));
    }
    Ok(())
}
