// MA008: Kinesis `put_records` reports throttled records through `failed_record_count` and each
// record's `error_code`; this producer reads neither and no progress record follows, so throttled
// records vanish silently: MA008 at the `put_records` call.
use aws_sdk_kinesis::primitives::Blob;
use aws_sdk_kinesis::types::PutRecordsRequestEntry;
use aws_sdk_kinesis::Client as KinesisClient;

pub struct Click {
    pub session_id: String,
    pub json: String,
}

pub async fn ship_clicks(kinesis: &KinesisClient, stream: &str, clicks: Vec<Click>) -> anyhow::Result<()> {
    let records = clicks
        .into_iter()
        .map(|c| {
            PutRecordsRequestEntry::builder()
                .partition_key(c.session_id)
                .data(Blob::new(c.json.into_bytes()))
                .build()
        })
        .collect::<Result<Vec<_>, _>>()?;

    let _resp = kinesis.put_records().stream_name(stream).set_records(Some(records)).send().await?; //~ MA008
    Ok(())
}
