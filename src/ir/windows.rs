//! Dedup retention and replay windows, pipeline stages, and serverless event
//! sources: what configuration and code say about how long records are kept and
//! how batches reach a handler.

use super::Loc;

/// How long a dedup store keeps its records (to compare with the replay window): a
/// cleanup `DELETE … interval` on a dedup table, the TTL of a Redis dedup claim, or a
/// pipeline description's `dedup.retention`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DedupRetention {
    /// Milliseconds (`crate::support::duration`).
    pub millis: u64,
    /// The literal that holds the retention: a `const`'s value, the interval in the
    /// cleanup SQL, the TTL argument, the YAML value.
    pub loc: Loc,
    /// The dedup write that the retention applies to (the cleanup statement, the
    /// claim with its TTL).
    pub write: Loc,
    /// How messages name the store: ``the cleanup of `processed_events` ``.
    pub store: String,
}

/// How far back a source can replay (what dedup retention must cover): a topic's
/// `retention.ms`, or a replay window declared in a pipeline description. Queue message
/// TTLs are not windows.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReplayWindow {
    /// The topic; `None` for a window declared for a pipeline stage as a whole.
    pub topic: Option<String>,
    /// Milliseconds; `crate::support::duration::UNLIMITED` for `retention.ms: -1`.
    pub millis: u64,
    /// The value as written.
    pub loc: Loc,
    /// Where it is stated, for labels: `` `retention.ms` ``, `the pipeline description`.
    pub source: String,
}

/// A stage of a msgaudit pipeline description (`msgaudit-pipeline.yml`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PipelineStage {
    pub name: String,
    /// Display paths of the stage's code (crates or directories).
    pub paths: Vec<String>,
    /// Topics the stage consumes.
    pub consumes: Vec<String>,
    /// A replay window declared for the stage itself.
    pub replay_window: Option<ReplayWindow>,
    /// The stage's dedup store, when the description states its retention.
    pub dedup: Option<DedupRetention>,
}

/// What the Rust front end finds about dedup retention in one crate (to compare with
/// the replay windows).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct RetentionFacts {
    pub dedup: Vec<DedupRetention>,
    /// Topic retention set in code (rdkafka `NewTopic::new(..).set("retention.ms", ..)`).
    pub windows: Vec<ReplayWindow>,
    /// Topics the crate's consumers subscribe to (`subscribe(&["orders"])`).
    pub consumer_topics: Vec<String>,
    /// Cleanups of tables whose name does not say they hold dedup records, with the
    /// table: a dedup store when the crate uses the table as a claim (`claim_tables`).
    pub cleanups: Vec<(String, DedupRetention)>,
    /// Tables the crate's analysis saw used as claims that gate an effect (filled
    /// after the analysis).
    pub claim_tables: Vec<String>,
}

/// The kind of records a serverless batch carries (docs/what-is-analyzed.md, serverless event sources):
/// what links an event source mapping to a handler when no binary name does.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum BatchSource {
    Sqs,
    Kinesis,
    DynamoDb,
    Kafka,
}

impl BatchSource {
    /// The word the API packs and messages use (`sqs`, `kinesis`, `dynamodb`, `kafka`).
    pub fn name(self) -> &'static str {
        match self {
            BatchSource::Sqs => "sqs",
            BatchSource::Kinesis => "kinesis",
            BatchSource::DynamoDb => "dynamodb",
            BatchSource::Kafka => "kafka",
        }
    }

    pub fn from_name(name: &str) -> Option<BatchSource> {
        [
            BatchSource::Sqs,
            BatchSource::Kinesis,
            BatchSource::DynamoDb,
            BatchSource::Kafka,
        ]
        .into_iter()
        .find(|s| s.name() == name)
    }

    /// How messages name the service's source.
    pub fn describe(self) -> &'static str {
        match self {
            BatchSource::Sqs => "SQS",
            BatchSource::Kinesis => "Kinesis",
            BatchSource::DynamoDb => "DynamoDB Streams",
            BatchSource::Kafka => "Kafka",
        }
    }
}

/// An event source mapping read from deploy YAML (AWS SAM, CloudFormation, the
/// Serverless Framework): a serverless function triggered by batches of records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventSourceMapping {
    /// The event's block: its `Properties:` key (SAM, CloudFormation) or its
    /// `sqs:`/`stream:` entry (Serverless).
    pub loc: Loc,
    /// The records' source, when the YAML tells it.
    pub source: Option<BatchSource>,
    /// `FunctionResponseTypes: [ReportBatchItemFailures]` (`functionResponseType`).
    pub reports_failures: bool,
    /// The names that link it to a Rust binary: the function's `CodeUri` (last path
    /// component), `Metadata.BuildProperties.Binary`, `Handler`, the Serverless
    /// `handler`; the function's logical name last.
    pub names: Vec<String>,
    /// How the function is named in messages (its logical id or key).
    pub function: String,
    /// What the YAML names the source by, as written (tags dropped): a queue's or
    /// stream's `!GetAtt Q.Arn` reads `Q.Arn`, an ARN, a `!Ref`'s logical id, Kafka
    /// topics joined by `, `.
    pub reference: Option<String>,
}

/// A serverless batch handler of a crate: a function handed to the Lambda runtime
/// whose event is a batch of records.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BatchHandler {
    pub name: String,
    pub loc: Loc,
    pub source: BatchSource,
    /// Where it returns a partial-batch response (the per-record failures), if it does.
    pub partial_return: Option<Loc>,
    /// The names of the crate it is built into: its Cargo target, its package and the
    /// package's `[[bin]]` names (what a deploy file names it by).
    pub names: Vec<String>,
}
