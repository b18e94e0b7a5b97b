// MA014: SQS messages are archived to Firehose with `put_record_batch`; `failed_put_count` is
// printed and the source messages are deleted in a loop anyway. The delete on the path after the
// ignored partial failure is MA014.
use aws_sdk_firehose::primitives::Blob;
use aws_sdk_firehose::types::Record;
use aws_sdk_firehose::Client as FirehoseClient;
use aws_sdk_sqs::Client as SqsClient;

pub async fn archive(sqs: &SqsClient, firehose: &FirehoseClient, queue_url: &str, stream: &str) -> anyhow::Result<()> {
    loop {
        let batch = sqs.receive_message().queue_url(queue_url).max_number_of_messages(10).wait_time_seconds(10).send().await?;
        if batch.messages().is_empty() {
            continue;
        }
        let records = batch
            .messages()
            .iter()
            .map(|m| Record::builder().data(Blob::new(m.body().unwrap_or_default().as_bytes().to_vec())).build())
            .collect::<Result<Vec<_>, _>>()?;
        let resp = firehose.put_record_batch().delivery_stream_name(stream).set_records(Some(records)).send().await?;
        println!("archived batch, failed_put_count={}", resp.failed_put_count());
        for m in batch.messages() {
            let Some(receipt) = m.receipt_handle() else { continue };
            sqs.delete_message().queue_url(queue_url).receipt_handle(receipt).send().await?; //~ MA014
        }
    }
}
