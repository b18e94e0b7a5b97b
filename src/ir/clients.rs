//! Kafka clients as the model holds them: built from a client config chain in Rust
//! or described by pipeline YAML, with the properties set on them, where a new
//! setting would be written, and consumer settings that turn acks off.

use super::{Callee, Loc};

/// A property set on a Kafka client config (`.set("acks", "all")`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Prop {
    pub key: String,
    /// The value when it is a literal.
    pub value: Option<String>,
    /// Rust: the `.set(..)` call. YAML: the value as written (through an alias or
    /// a merge key: where the anchor defines it), since the value is what is wrong.
    pub loc: Loc,
    /// The value's own text where a fix may replace it: inside the quotes of a string
    /// literal or a YAML scalar, or a plain YAML scalar, written in place on one line
    /// (not through an alias, a constant or an escape). `None` otherwise.
    pub value_at: Option<Loc>,
}

/// Which Kafka client library a configuration is for: it decides the defaults
/// (docs/introduction.md: librdkafka reads committed and auto-commits; the Java client reads
/// uncommitted; franz-go inputs in Redpanda Connect read uncommitted).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
)]
pub enum ClientFamily {
    /// librdkafka: the Rust `rdkafka` crate, Vector, confluent-kafka clients.
    #[default]
    Librdkafka,
    /// The Java client: Spring Kafka, Kafka Connect, Strimzi, Java property files.
    Java,
    /// franz-go, behind Redpanda Connect's `kafka_franz` input.
    Franz,
    /// A property map whose client is not known (a ConfigMap, Helm values).
    Unknown,
}

/// A Kafka client: built from an rdkafka `ClientConfig` chain in Rust, or described
/// by a block of pipeline YAML.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KafkaClient {
    /// Rust: the `ClientConfig::new()` call that starts the chain. YAML: the key that
    /// holds the client's block (`consumer:`, `kafka_franz:`), or the block's first
    /// key when the block is the document's top level.
    pub new_loc: Loc,
    pub family: ClientFamily,
    /// A framework manages offsets for it (Spring's listener container, Kafka Connect,
    /// Vector, Redpanda Connect): an unset `enable.auto.commit` does not auto-commit.
    pub framework: bool,
    pub props: Vec<Prop>,
    /// Some property comes from run time (a non-literal key, a merged map): the
    /// analysis stays silent about settings it cannot see.
    pub dynamic: bool,
    /// With `dynamic`: the properties from this index on were set after every
    /// run-time step (`cfg.set("enable.auto.commit", "true")` after a loop over a
    /// map): the last word on their keys.
    pub settled_from: usize,
    /// `kafka.consumer` or `kafka.producer` when known.
    pub role: Option<String>,
    /// Topics subscribed to (consumers) or sent to (producers), when literal.
    pub topics: Vec<String>,
    /// The configurations of one file the client is active in, when the file describes
    /// several that never run together (Spring profile documents merged over the
    /// default document: `""` is the default, otherwise the profile). Empty: always.
    pub runs: Vec<String>,
    /// The pack whose configuration calls made the client in code (`rdkafka`); none
    /// for a client described in YAML.
    pub library: Option<String>,
    /// Where and how a setting the client lacks could be added to its block (a
    /// safe fix, docs/getting-started.md); `None` when the block is not one a fix may extend.
    #[serde(default)]
    pub insert: Option<Box<Insertion>>,
    /// Rust: the crate function whose returned configuration the chain continues
    /// (`consumer_config(&s).set(..).create()`), until the crate's helpers are
    /// applied after lowering ([`crate::analysis::kafka_clients::apply_config_helpers`]):
    /// `props` are then the helper's followed by the chain's own.
    #[serde(default)]
    pub from: Option<Box<Callee>>,
}

/// How a new setting is written into a client's block, as the front end saw the
/// block (it records; the rules decide): a YAML block map whose entries are each on
/// their own line, written in place (no alias, merge key or template in it).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Insertion {
    /// An empty span at the end of the block's last line (before its line break,
    /// after any comment): a new entry goes there, on a line of its own.
    pub at: Loc,
    /// The indentation of the block's keys.
    pub indent: String,
    /// The file's line break at that line (`\n` or `\r\n`).
    pub newline: String,
    /// The quote every sibling key is written with (`"` or `'`); none: plain.
    pub key_quote: Option<char>,
    /// The quote every sibling string value is written with; none: plain.
    pub value_quote: Option<char>,
    /// How the block's format writes a canonical key (`isolation.level` as
    /// `isolation-level` in Spring, `transaction_isolation_level` in Redpanda
    /// Connect). Checked before `prefix`.
    pub keys: Vec<(String, String)>,
    /// The block takes any raw Kafka key, written as this prefix and the canonical
    /// name (`consumer.override.` in Kafka Connect, empty in a property map).
    pub prefix: Option<String>,
    /// A Rust builder chain (rdkafka `ClientConfig`): a setting is added as a call of
    /// this method (`.set("key", "value")`), after the chain's last one; `newline`
    /// is empty when the chain is written on one line.
    pub call: Option<String>,
}

impl Insertion {
    /// How the key `canonical` is written in the block, if the format takes it.
    pub fn key(&self, canonical: &str) -> Option<String> {
        self.keys
            .iter()
            .find(|(k, _)| k == canonical)
            .map(|(_, w)| w.clone())
            .or_else(|| self.prefix.as_ref().map(|p| format!("{p}{canonical}")))
    }
}

impl KafkaClient {
    /// A client of `family` made at `new_loc`, nothing set yet.
    pub fn new(new_loc: Loc, family: ClientFamily) -> KafkaClient {
        KafkaClient {
            new_loc,
            family,
            framework: false,
            props: Vec::new(),
            dynamic: false,
            settled_from: 0,
            role: None,
            topics: Vec::new(),
            runs: Vec::new(),
            library: None,
            insert: None,
            from: None,
        }
    }

    /// Whether two clients can be active together: one of them is not tied to a
    /// configuration, or they share one.
    pub fn runs_with(&self, other: &KafkaClient) -> bool {
        self.runs.is_empty()
            || other.runs.is_empty()
            || self.new_loc.path != other.new_loc.path
            || self.runs.iter().any(|r| other.runs.contains(r))
    }

    pub fn prop(&self, key: &str) -> Option<&Prop> {
        self.props.iter().rev().find(|p| p.key == key)
    }

    /// Whether the analysis knows the key's setting: the whole configuration is
    /// seen, or the key was set after its last run-time step.
    pub fn knows(&self, key: &str) -> bool {
        !self.dynamic
            || (self.props.iter())
                .rposition(|p| p.key == key)
                .is_some_and(|i| i >= self.settled_from)
    }

    /// A step of the configuration the analysis cannot see (a non-literal key, an
    /// unknown method): what was set before it may have been overridden.
    pub fn unseen_step(&mut self) {
        self.dynamic = true;
        self.settled_from = self.props.len();
    }
}

/// The YAML format a Kafka client was described in: it decides which settings the
/// client honours (Spring and raw property maps honour `enable.auto.commit=true`;
/// Kafka Connect, Vector and Redpanda Connect manage offsets themselves).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ConfigFormat {
    /// A generic Kafka property map (`bootstrap.servers` with `group.id` or
    /// `transactional.id`), also inside a Kubernetes `ConfigMap` or Helm values.
    PropertyMap,
    /// Spring Boot `spring.kafka.consumer`/`.producer`/`.streams`.
    Spring,
    /// Redpanda Connect / Benthos `kafka`, `kafka_franz`, `redpanda` inputs and outputs.
    RedpandaConnect,
    /// Strimzi `KafkaConnector` (Kafka Connect).
    Strimzi,
    /// Vector `kafka` sources and sinks.
    Vector,
}

/// A Kafka client described by pipeline YAML.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigClient {
    pub client: KafkaClient,
    pub format: ConfigFormat,
    /// Display path of the file's directory: clients whose topics are unknown are
    /// linked within it (docs/what-is-analyzed.md, read_committed for transactional topics).
    pub dir: String,
}

/// A consumer setting that decouples progress from processing (auto-ack).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AckSetting {
    /// `no_ack: true` (lapin), `AckPolicy::None` (JetStream).
    pub what: String,
    pub loc: Loc,
}
