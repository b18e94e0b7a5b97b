// MA008: Firehose `put_record_batch` returns `failed_put_count`; the response is bound and
// only debug-printed, which is logging the response, not acting on it. Nothing acks after the
// batch, so the dropped records are an unchecked publish: MA008 at the batch call.
use aws_sdk_firehose::primitives::Blob;
use aws_sdk_firehose::types::Record;
use aws_sdk_firehose::Client as FirehoseClient;

pub async fn flush_access_logs(firehose: &FirehoseClient, delivery_stream: &str, lines: &[String]) -> anyhow::Result<()> {
    let records: Vec<Record> = lines
        .iter()
        .map(|l| Record::builder().data(Blob::new(format!("{l}\n"))).build())
        .collect::<Result<_, _>>()?;
    let resp = firehose.put_record_batch().delivery_stream_name(delivery_stream).set_records(Some(records)).send().await?; //~ MA008
    tracing::debug!(?resp, "access log batch sent");
    Ok(())
}
