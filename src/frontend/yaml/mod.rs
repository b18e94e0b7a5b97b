//! The YAML front end: a span-keeping parse ([`tree`]), then the Kafka clients of
//! every document in the formats it knows, as [`ConfigClient`]s. Like the Rust front
//! end it never decides and never fails: a file that does not parse (or is refused:
//! alias bombs, absurd nesting) becomes an [`InputError`] with its position.
//!
//! Formats, each in its own module, tried in this order on every document; a block
//! one format claimed is not looked at again by the generic property-map walk:
//! - [`spring`]: Spring Boot `spring.kafka.consumer` / `.producer` / `.streams`;
//! - [`strimzi`]: Strimzi `KafkaConnector` (and its `KafkaConnect` worker defaults);
//! - [`vector`]: Vector `sources`/`sinks` of `type: kafka`;
//! - [`benthos`]: Redpanda Connect / Benthos `kafka`, `kafka_franz`, `redpanda` inputs
//!   and outputs;
//! - [`property_map`]: any map with `bootstrap.servers` and `group.id` or
//!   `transactional.id` (also the `data` of a Kubernetes `ConfigMap`).
//!
//! Every property key is normalized by [`kafka_props::canonical`].
//!
//! Besides Kafka clients, [`serverless`] reads the event source mappings of
//! serverless deploy files (AWS SAM, CloudFormation, the Serverless Framework).

pub mod benthos;
pub mod insert;
pub mod kafka_props;
pub mod pipeline;
pub mod property_map;
pub mod serverless;
pub mod spring;
pub mod strimzi;
pub mod topics;
pub mod tree;
pub mod vector;

use std::collections::HashSet;
use std::sync::Arc;

use crate::diagnostic::{InputError, Span};
use crate::ir::{ClientFamily, ConfigClient, ConfigFormat, KafkaClient, Loc, Prop};
use crate::source::SourceFile;
use tree::{Entry, Node, Value};

/// What the YAML front end found in one file.
#[derive(Debug, Default)]
pub struct Lowered {
    pub clients: Vec<ConfigClient>,
    pub errors: Vec<InputError>,
    /// Topic retention and declared replay windows (what dedup retention must cover).
    pub windows: Vec<crate::ir::ReplayWindow>,
    /// Stages of a msgaudit pipeline description (their replay windows and dedup
    /// retention).
    pub stages: Vec<crate::ir::PipelineStage>,
    /// Event source mappings of serverless deploy files.
    pub mappings: Vec<crate::ir::EventSourceMapping>,
    /// Deploy resources that could not be read (a note, not an error).
    pub unread_deploy: usize,
}

/// Case-insensitive words without which a YAML file cannot describe a Kafka client:
/// files with none of them are skipped unparsed (docs/what-is-analyzed.md, `no_relevant_tokens`).
const TOKENS: &[&str] = &[
    "kafka",
    "bootstrap",
    "seed_brokers",
    "redpanda",
    "isolation",
    "transactional",
];

/// Whether `text` may hold a Kafka client (a cheap scan before parsing).
pub fn is_relevant(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    TOKENS.iter().any(|t| lower.contains(t)) || serverless::may_describe(&lower)
}

/// Parses one YAML file and returns its Kafka clients, or the error that stopped it.
pub fn lower_file(file: &SourceFile) -> Lowered {
    let mut out = Lowered::default();
    let docs = match tree::parse(&file.text) {
        Ok(d) => d,
        Err(e) => {
            out.errors.push(InputError {
                path: file.path.clone(),
                line: e.line,
                column: e.column,
                message: format!("invalid YAML: {}", e.message),
            });
            return out;
        }
    };
    let dir = match file.path.rfind('/') {
        Some(i) => file.path[..i].to_string(),
        None => String::new(),
    };
    let mut ctx = Ctx {
        path: Arc::from(file.path.as_str()),
        text: Arc::from(file.text.as_str()),
        clients: Vec::new(),
        claimed: HashSet::new(),
    };
    spring::lower_docs(&docs, &mut ctx);
    for doc in &docs {
        strimzi::lower(doc, &mut ctx);
        vector::lower(doc, &mut ctx);
        benthos::lower(doc, &mut ctx);
        property_map::lower(doc, &mut ctx);
    }
    strimzi::apply_worker_defaults(&docs, &mut ctx);
    // After the defaults, which pair the file's connectors with its clients in order.
    strimzi::worker_producers(&docs, &mut ctx);
    // Dedup retention against replay: replay windows and the pipeline description.
    let mut description = pipeline::Description::default();
    for doc in &docs {
        topics::lower(doc, &ctx.path, &mut out.windows);
        pipeline::lower(doc, &file.path, &dir, &mut description);
    }
    let mut deploy = serverless::Mappings::default();
    let at = |n: &Node| ctx.loc(n.span);
    for doc in &docs {
        serverless::lower(doc, &at, &mut deploy);
    }
    out.mappings = deploy.mappings;
    out.unread_deploy = deploy.unread;
    out.windows.extend(description.windows);
    out.stages = description.stages;
    out.errors.extend(description.errors);
    out.clients = ctx
        .clients
        .into_iter()
        .map(|(client, format)| ConfigClient {
            client,
            format,
            dir: dir.clone(),
        })
        .collect();
    out
}

/// State shared by the format modules while one file is lowered.
pub struct Ctx {
    path: Arc<str>,
    /// The file's text (for the layout of a block a fix may extend).
    text: Arc<str>,
    clients: Vec<(KafkaClient, ConfigFormat)>,
    /// Maps already turned into clients (by address: the tree outlives the walk).
    claimed: HashSet<*const Node>,
}

impl Ctx {
    pub fn loc(&self, span: Span) -> Loc {
        Loc {
            path: self.path.clone(),
            span,
        }
    }

    /// A new client whose block is held by `holder` (the key, or the block's first key).
    pub fn client(&self, holder: Span, family: ClientFamily, framework: bool) -> KafkaClient {
        KafkaClient {
            framework,
            ..KafkaClient::new(self.loc(holder), family)
        }
    }

    /// Adds `key: value` under its canonical name; the prop points at the value.
    /// Nulls are unset; collections and placeholders are set to an unknown value.
    pub fn prop(&self, client: &mut KafkaClient, key: &str, value: &Node) {
        if matches!(value.value, Value::Null) {
            return;
        }
        client.props.push(Prop {
            key: kafka_props::canonical(key),
            value: kafka_props::literal(value),
            loc: self.loc(value.span),
            value_at: value.in_place.map(|s| self.loc(s)),
        });
    }

    /// Adds a prop under a key the format implies (`ack_replicas: false` is `acks=1`).
    pub fn implied(&self, client: &mut KafkaClient, key: &str, value: &str, at: &Node) {
        client.props.push(Prop {
            key: key.to_string(),
            value: Some(value.to_string()),
            loc: self.loc(at.span),
            value_at: None,
        });
    }

    /// Where a setting the client lacks could go in `block` (held by `holder`),
    /// written as `keys` says ([`insert::block`]).
    pub fn insertion(
        &self,
        holder: Option<&Node>,
        block: &Node,
        keys: insert::Keys,
    ) -> Option<Box<crate::ir::Insertion>> {
        insert::block(&self.text, &|s| self.loc(s), holder, block, keys)
    }

    pub fn claim(&mut self, node: &Node) {
        self.claimed.insert(node as *const Node);
    }

    pub fn is_claimed(&self, node: &Node) -> bool {
        self.claimed.contains(&(node as *const Node))
    }

    pub fn push(&mut self, client: KafkaClient, format: ConfigFormat) {
        self.clients.push((client, format));
    }
}

/// The span of the key that holds a block, or of the block's first key when the
/// block is the document itself (`holder` is `None`).
pub fn holder_span(holder: Option<&Node>, block: &Node) -> Span {
    holder
        .map(|k| k.span)
        .or_else(|| block.entries().first().map(|e| e.key.span))
        .unwrap_or(block.span)
}

/// The entries of a map with nested maps flattened into dotted paths
/// (`spring: {kafka: {consumer: …}}` and `spring.kafka.consumer: …` read alike).
/// Entries whose value is a map are listed too, before their children.
pub fn flatten<'a>(node: &'a Node, prefix: &str, out: &mut Vec<(String, &'a Entry)>) {
    for e in node.entries() {
        let Some(k) = e.key.as_str() else { continue };
        let path = if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        };
        out.push((path.clone(), e));
        if e.value.is_map() {
            flatten(&e.value, &path, out);
        }
    }
}

/// `kind:` of a Kubernetes resource.
pub fn kind(doc: &Node) -> Option<&str> {
    doc.get("kind").and_then(Node::as_str)
}
