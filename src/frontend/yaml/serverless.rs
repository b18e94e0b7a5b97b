//! Serverless deploy files: the event source mappings that trigger a function with
//! batches of records (docs/what-is-analyzed.md, serverless event sources), as [`EventSourceMapping`]s:
//!
//! - AWS SAM: `AWS::Serverless::Function` resources whose `Events` have `Type: SQS`,
//!   `Kinesis`, `DynamoDB`, `MSK` or `SelfManagedKafka`, with their
//!   `Properties.FunctionResponseTypes`; the binary is named by `CodeUri` (its last
//!   path component), `Metadata.BuildProperties.Binary` or `Handler`;
//! - CloudFormation: `AWS::Lambda::EventSourceMapping` resources, the function named by
//!   `FunctionName` (`!Ref F`, `!GetAtt F.Arn`, `Fn::GetAtt: [F, Arn]`, a name or an
//!   ARN), the source told by `EventSourceArn` (the resource it names, or the ARN's
//!   service) or the Kafka keys;
//! - the Serverless Framework: `functions.<name>.events[].sqs|stream|msk|kafka` with
//!   `functionResponseType`, the binary named by `handler` (`crate.bin` with
//!   serverless-rust).
//!
//! The tree drops YAML tags (`!Ref X` reads as `X`, `!GetAtt X.Arn` as `X.Arn`), so
//! CloudFormation's short forms read as their values. A resource this reader cannot
//! read (a `Fn::Transform` in it, a block that is not a map) is counted as a note
//! (`deploy_template_not_read`), never an error.

use super::tree::Node;
use crate::ir::{BatchSource, EventSourceMapping, Loc};

/// The value that enables per-record failure reporting.
const REPORT: &str = "ReportBatchItemFailures";
/// The key that holds it in AWS SAM and CloudFormation (a list), and in the
/// Serverless Framework's `sqs:` / `stream:` events (one value). A key spelled
/// otherwise (the other tool's spelling) enables nothing.
const REPORT_KEY_CFN: &str = "FunctionResponseTypes";
const REPORT_KEY_SLS: &str = "functionResponseType";

/// Whether `node`'s entry `key` enables per-record failure reporting.
fn reports_at(node: &Node, key: &str) -> bool {
    node.get(key).is_some_and(|v| holds(v, REPORT))
}

/// What one document's deploy description holds.
#[derive(Default)]
pub struct Mappings {
    pub mappings: Vec<EventSourceMapping>,
    /// Resources or functions that could not be read.
    pub unread: usize,
}

/// Whether `lower` (the file's text, lower case) may describe event source mappings.
pub fn may_describe(lower: &str) -> bool {
    lower.contains("aws::serverless::function")
        || lower.contains("aws::lambda::eventsourcemapping")
        || (lower.contains("functions:")
            && ["sqs:", "stream:", "msk:", "kafka:"]
                .iter()
                .any(|k| lower.contains(k)))
}

pub fn lower(doc: &Node, loc: &dyn Fn(&Node) -> Loc, out: &mut Mappings) {
    if let Some(resources) = doc.get("Resources").filter(|r| r.is_map()) {
        cloudformation(resources, loc, out);
    }
    if let (Some(functions), true) = (doc.get("functions"), doc.get("service").is_some()) {
        serverless_framework(functions, loc, out);
    }
}

/// Whether `node` holds `text` anywhere (a value under `!If`, a list).
fn holds(node: &Node, text: &str) -> bool {
    match &node.value {
        super::tree::Value::Scalar(s) => s == text,
        super::tree::Value::Seq(v) => v.iter().any(|n| holds(n, text)),
        super::tree::Value::Map(m) => m.iter().any(|e| holds(&e.value, text)),
        super::tree::Value::Null => false,
    }
}

/// Whether `node` has a map key `key` anywhere.
fn has_key(node: &Node, key: &str) -> bool {
    match &node.value {
        super::tree::Value::Seq(v) => v.iter().any(|n| has_key(n, key)),
        super::tree::Value::Map(m) => m
            .iter()
            .any(|e| e.key.as_str() == Some(key) || has_key(&e.value, key)),
        _ => false,
    }
}

/// The last path component of a code location (`target/lambda/orders/` -> `orders`,
/// `s3://b/orders.zip` -> `orders`).
fn last_component(path: &str) -> Option<String> {
    let last = path.trim_end_matches('/').rsplit('/').next()?;
    let stem = last.strip_suffix(".zip").unwrap_or(last);
    (!stem.is_empty() && stem != ".").then(|| stem.to_string())
}

/// The names that link a function resource to a binary, its logical id last.
fn function_names(id: &str, resource: &Node) -> Vec<String> {
    let props = resource.get("Properties");
    let mut names = Vec::new();
    let scalar = |n: Option<&Node>| n.and_then(Node::as_str).map(str::to_string);
    if let Some(p) = props {
        names.extend(scalar(p.get("CodeUri")).and_then(|c| last_component(&c)));
        names.extend(
            scalar(p.get("Code").and_then(|c| c.get("S3Key"))).and_then(|c| last_component(&c)),
        );
        names.extend(scalar(p.get("Handler")));
        names.extend(scalar(p.get("FunctionName")));
    }
    names.extend(scalar(
        resource
            .get("Metadata")
            .and_then(|m| m.get("BuildProperties"))
            .and_then(|b| b.get("Binary")),
    ));
    names.push(id.to_string());
    names.dedup();
    names
}

/// A SAM event's `Type` as a batch source.
fn sam_source(ty: &str) -> Option<BatchSource> {
    match ty {
        "SQS" => Some(BatchSource::Sqs),
        "Kinesis" => Some(BatchSource::Kinesis),
        "DynamoDB" => Some(BatchSource::DynamoDb),
        "MSK" | "SelfManagedKafka" => Some(BatchSource::Kafka),
        _ => None,
    }
}

/// A CloudFormation resource type that a mapping reads from.
fn resource_source(ty: &str) -> Option<BatchSource> {
    match ty {
        "AWS::SQS::Queue" => Some(BatchSource::Sqs),
        "AWS::Kinesis::Stream" => Some(BatchSource::Kinesis),
        "AWS::DynamoDB::Table" | "AWS::DynamoDB::GlobalTable" => Some(BatchSource::DynamoDb),
        "AWS::MSK::Cluster" | "AWS::MSK::ServerlessCluster" => Some(BatchSource::Kafka),
        _ => None,
    }
}

/// The service an ARN names (`arn:aws:sqs:…`).
fn arn_source(arn: &str) -> Option<BatchSource> {
    let service = arn.split(':').nth(2)?;
    match service {
        "sqs" => Some(BatchSource::Sqs),
        "kinesis" => Some(BatchSource::Kinesis),
        "dynamodb" => Some(BatchSource::DynamoDb),
        "kafka" => Some(BatchSource::Kafka),
        _ => None,
    }
}

/// The logical id or name a reference holds: `X` (`!Ref X`), `X.Arn` (`!GetAtt`),
/// `[X, Arn]`, `{Ref: X}`, `{Fn::GetAtt: …}`; an ARN or a plain name as written.
fn referenced(node: &Node) -> Option<String> {
    match &node.value {
        super::tree::Value::Scalar(s) => Some(s.split('.').next().unwrap_or(s).to_string()),
        super::tree::Value::Seq(v) => v.first().and_then(Node::as_str).map(str::to_string),
        super::tree::Value::Map(m) => m
            .iter()
            .find(|e| matches!(e.key.as_str(), Some("Ref" | "Fn::GetAtt")))
            .and_then(|e| referenced(&e.value)),
        super::tree::Value::Null => None,
    }
}

/// How the YAML names a source, as written: a scalar as is (`Q.Arn` for
/// `!GetAtt Q.Arn`, an ARN), `{Ref: Q}` as `Q`, `{Fn::GetAtt: [Q, Arn]}` as
/// `Q.Arn`, a Serverless `{arn: …}` by its ARN, a list of names (Kafka topics)
/// joined by `, `; `None` for what it cannot say in a line (`Fn::Sub` with a map).
fn reference_text(node: &Node) -> Option<String> {
    match &node.value {
        super::tree::Value::Scalar(s) => Some(s.clone()),
        super::tree::Value::Seq(v) => {
            let parts: Vec<String> = v.iter().filter_map(reference_text).collect();
            (!parts.is_empty() && parts.len() == v.len()).then(|| parts.join(", "))
        }
        super::tree::Value::Map(m) => m.iter().find_map(|e| match e.key.as_str()? {
            "Fn::GetAtt" => match &e.value.value {
                super::tree::Value::Seq(v) => {
                    let parts: Vec<&str> = v.iter().filter_map(Node::as_str).collect();
                    (!parts.is_empty()).then(|| parts.join("."))
                }
                _ => reference_text(&e.value),
            },
            "Ref" | "Fn::ImportValue" | "Fn::Sub" | "arn" => e.value.as_str().map(str::to_string),
            _ => None,
        }),
        super::tree::Value::Null => None,
    }
}

/// The first of `keys` in `props` that names the source ([`reference_text`]).
fn reference_of(props: Option<&Node>, keys: &[&str]) -> Option<String> {
    let p = props?;
    keys.iter().find_map(|k| p.get(k)).and_then(reference_text)
}

fn cloudformation(resources: &Node, loc: &dyn Fn(&Node) -> Loc, out: &mut Mappings) {
    let type_of = |r: &Node| r.get("Type").and_then(Node::as_str).map(str::to_string);
    for e in resources.entries() {
        let (Some(id), r) = (e.key.as_str(), &e.value) else {
            continue;
        };
        let ty = type_of(r);
        let sam = ty.as_deref() == Some("AWS::Serverless::Function");
        let esm = ty.as_deref() == Some("AWS::Lambda::EventSourceMapping");
        if !sam && !esm {
            continue;
        }
        if has_key(r, "Fn::Transform") || !r.is_map() {
            out.unread += 1;
            continue;
        }
        if sam {
            let Some(events) = r.get("Properties").and_then(|p| p.get("Events")) else {
                continue;
            };
            if !events.is_map() {
                out.unread += 1;
                continue;
            }
            for ev in events.entries() {
                let Some(source) = ev
                    .value
                    .get("Type")
                    .and_then(Node::as_str)
                    .and_then(sam_source)
                else {
                    continue;
                };
                let (at, reports) = match ev.value.entry("Properties") {
                    Some(p) => (&p.key, reports_at(&p.value, REPORT_KEY_CFN)),
                    None => (&ev.key, false),
                };
                let props = ev.value.get("Properties");
                let reference = match source {
                    BatchSource::Sqs => reference_of(props, &["Queue"]),
                    BatchSource::Kinesis | BatchSource::DynamoDb => {
                        reference_of(props, &["Stream"])
                    }
                    BatchSource::Kafka => reference_of(props, &["Topics", "Stream"]),
                };
                out.mappings.push(EventSourceMapping {
                    loc: loc(at),
                    source: Some(source),
                    reports_failures: reports,
                    names: function_names(id, r),
                    function: id.to_string(),
                    reference,
                });
            }
            continue;
        }
        let Some(props) = r.entry("Properties") else {
            continue;
        };
        let p = &props.value;
        let Some(function) = p.get("FunctionName").and_then(referenced) else {
            out.unread += 1;
            continue;
        };
        // A function of the template by its logical id, or a name or ARN as written.
        let names = match resources.get(&function) {
            Some(f) => function_names(&function, f),
            None => {
                let name = function.rsplit(':').next().unwrap_or(&function).to_string();
                vec![name]
            }
        };
        let from_arn = p.get("EventSourceArn").and_then(|a| {
            let r = referenced(a)?;
            match resources.get(&r) {
                Some(res) => type_of(res).as_deref().and_then(resource_source),
                None => a.as_str().and_then(arn_source),
            }
        });
        let kafka = ["SelfManagedEventSource", "Topics"]
            .iter()
            .any(|k| p.get(k).is_some());
        let source = from_arn.or(kafka.then_some(BatchSource::Kafka));
        out.mappings.push(EventSourceMapping {
            loc: loc(&props.key),
            source,
            reports_failures: reports_at(p, REPORT_KEY_CFN),
            names,
            function: function.clone(),
            reference: reference_of(Some(p), &["EventSourceArn", "Topics"]),
        });
    }
}

fn serverless_framework(functions: &Node, loc: &dyn Fn(&Node) -> Loc, out: &mut Mappings) {
    for f in functions.entries() {
        let Some(key) = f.key.as_str() else { continue };
        let Some(events) = f.value.get("events") else {
            continue;
        };
        let mut names = Vec::new();
        if let Some(h) = f.value.get("handler").and_then(Node::as_str) {
            // serverless-rust: `handler: crate-name.bin-name`, the binary last.
            names.push(h.to_string());
            names.extend(h.rsplit('.').next().map(str::to_string));
        }
        names.push(key.to_string());
        for ev in events.items() {
            for e in ev.entries() {
                let kind = e.key.as_str().unwrap_or_default();
                let source = match kind {
                    "sqs" => Some(BatchSource::Sqs),
                    "msk" | "kafka" => Some(BatchSource::Kafka),
                    "stream" => stream_source(&e.value),
                    _ => continue,
                };
                // `sqs: ARN`, `sqs: {arn: …}`, `stream: {arn: …}`, `msk: {topic: …}`.
                let reference = match e.value.get("arn").or(e.value.get("topic")) {
                    Some(n) => reference_text(n),
                    None if e.value.is_map() => None,
                    None => reference_text(&e.value),
                };
                out.mappings.push(EventSourceMapping {
                    loc: loc(&e.key),
                    source,
                    reports_failures: reports_at(&e.value, REPORT_KEY_SLS),
                    names: names.clone(),
                    function: key.to_string(),
                    reference,
                });
            }
        }
    }
}

/// A Serverless `stream` event's source: its `type`, or its ARN's service (a
/// `StreamArn` attribute is a DynamoDB table's).
fn stream_source(node: &Node) -> Option<BatchSource> {
    if let Some(t) = node.get("type").and_then(Node::as_str) {
        return match t {
            "dynamodb" => Some(BatchSource::DynamoDb),
            "kinesis" => Some(BatchSource::Kinesis),
            _ => None,
        };
    }
    let arn = node.get("arn").unwrap_or(node);
    if holds(arn, "StreamArn") {
        return Some(BatchSource::DynamoDb);
    }
    match arn.as_str() {
        Some(a) if a.ends_with(".StreamArn") => Some(BatchSource::DynamoDb),
        Some(a) => arn_source(a),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn read(text: &str) -> Mappings {
        let docs = super::super::tree::parse(text).expect("parses");
        let path: Arc<str> = Arc::from("t.yaml");
        let loc = |n: &Node| Loc {
            path: path.clone(),
            span: n.span,
        };
        let mut out = Mappings::default();
        for d in &docs {
            lower(d, &loc, &mut out);
        }
        out
    }

    #[test]
    fn short_tags_read_as_their_values() {
        let m = read(
            "Conditions:\n  P: !Equals [!Ref Stage, prod]\nResources:\n  Fn:\n    Type: AWS::Lambda::Function\n    \
             Properties:\n      Code:\n        S3Key: !Sub 'b/${Stage}/proc.zip'\n  Q:\n    Type: AWS::SQS::Queue\n  \
             M:\n    Type: AWS::Lambda::EventSourceMapping\n    Properties:\n      FunctionName: !GetAtt Fn.Arn\n      \
             EventSourceArn: !GetAtt Q.Arn\n      FunctionResponseTypes: !If [P, [ReportBatchItemFailures], !Ref AWS::NoValue]\n",
        );
        assert_eq!(m.mappings.len(), 1);
        let e = &m.mappings[0];
        assert_eq!(e.source, Some(BatchSource::Sqs));
        assert!(e.reports_failures);
        assert_eq!(e.names, ["proc", "Fn"]);
        assert_eq!(e.loc.span.line, 13);
        assert_eq!(e.reference.as_deref(), Some("Q.Arn"));
    }

    #[test]
    fn long_forms_and_arns() {
        let m = read(
            "Resources:\n  M:\n    Type: AWS::Lambda::EventSourceMapping\n    Properties:\n      \
             FunctionName: {\"Fn::GetAtt\": [Worker, Arn]}\n      \
             EventSourceArn: arn:aws:kinesis:eu-west-1:1:stream/clicks\n  \
             K:\n    Type: AWS::Lambda::EventSourceMapping\n    Properties:\n      \
             FunctionName: arn:aws:lambda:eu-west-1:1:function:ingest\n      Topics: [t]\n",
        );
        assert_eq!(m.mappings.len(), 2);
        assert_eq!(m.mappings[0].names, ["Worker"]);
        assert_eq!(m.mappings[0].source, Some(BatchSource::Kinesis));
        assert_eq!(m.mappings[1].names, ["ingest"]);
        assert_eq!(m.mappings[1].source, Some(BatchSource::Kafka));
        assert_eq!(
            m.mappings[0].reference.as_deref(),
            Some("arn:aws:kinesis:eu-west-1:1:stream/clicks")
        );
        assert_eq!(m.mappings[1].reference.as_deref(), Some("t"));
    }

    #[test]
    fn a_transform_is_a_note() {
        let m = read(
            "Resources:\n  F:\n    Type: AWS::Serverless::Function\n    Properties:\n      \
             Fn::Transform:\n        Name: AWS::Include\n      Events:\n        Q:\n          Type: SQS\n",
        );
        assert!(m.mappings.is_empty());
        assert_eq!(m.unread, 1);
    }

    #[test]
    fn serverless_framework_events() {
        let m = read(
            "service: s\nfunctions:\n  a:\n    handler: pkg.worker\n    events:\n      - sqs: arn:aws:sqs:r:1:q\n      \
             - stream:\n          arn: arn:aws:dynamodb:r:1:table/t/stream/x\n          \
             functionResponseType: ReportBatchItemFailures\n      - http: {path: /}\n",
        );
        assert_eq!(m.mappings.len(), 2);
        assert_eq!(m.mappings[0].names, ["pkg.worker", "worker", "a"]);
        assert_eq!(m.mappings[0].loc.span.line, 6);
        assert!(!m.mappings[0].reports_failures);
        assert_eq!(m.mappings[1].source, Some(BatchSource::DynamoDb));
        assert!(m.mappings[1].reports_failures);
        assert_eq!(
            m.mappings[0].reference.as_deref(),
            Some("arn:aws:sqs:r:1:q")
        );
        assert_eq!(
            m.mappings[1].reference.as_deref(),
            Some("arn:aws:dynamodb:r:1:table/t/stream/x")
        );
    }

    #[test]
    fn sam_events_name_their_source() {
        let m = read(
            "Resources:\n  F:\n    Type: AWS::Serverless::Function\n    Properties:\n      Events:\n        \
             S:\n          Type: DynamoDB\n          Properties:\n            Stream: !GetAtt T.StreamArn\n        \
             Q:\n          Type: SQS\n          Properties:\n            Queue: {\"Fn::GetAtt\": [Jobs, Arn]}\n",
        );
        assert_eq!(m.mappings.len(), 2);
        assert_eq!(m.mappings[0].reference.as_deref(), Some("T.StreamArn"));
        assert_eq!(m.mappings[1].reference.as_deref(), Some("Jobs.Arn"));
    }
}
