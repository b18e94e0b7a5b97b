use super::declare_rule;
use super::fixes;
use super::pairs::label;
use crate::analysis::kafka_clients::{is_consumer, is_transactional_producer, value};
use crate::diagnostic::Finding;
use crate::ir::{ClientFamily, KafkaClient, Prop};

declare_rule! {
    /// ## What it does
    ///
    /// Finds a Kafka consumer that reads uncommitted records from a topic a
    /// transactional producer writes: `isolation.level` set to `read_uncommitted`, or
    /// left unset on a client whose default is `read_uncommitted` (the Java client
    /// behind Spring, Kafka Connect and Strimzi; Redpanda Connect's franz-go inputs).
    /// librdkafka clients (the Rust `rdkafka` crate, Vector) default to
    /// `read_committed`, so an unset level there is clean.
    ///
    /// Consumers and producers come from Rust (rdkafka `ClientConfig` chains) and from
    /// pipeline YAML: Spring Boot (`spring.kafka.consumer`), Strimzi `KafkaConnector`
    /// sinks (`consumer.override.isolation.level`), Redpanda Connect franz-go inputs
    /// (`transaction_isolation_level`), Vector `kafka` sources (`librdkafka_options`),
    /// generic property maps and ConfigMaps. A map whose client is unknown is reported
    /// only when it sets `read_uncommitted` explicitly; a Kafka Streams application with
    /// an exactly-once `processing.guarantee` reads committed records.
    ///
    /// A consumer is linked to the producers of its topics anywhere in the analyzed
    /// tree; a consumer (or producer) whose topics are unknown is linked to the
    /// transactional producers of the same crate (Rust) or directory (YAML).
    ///
    /// ## Why is this bad?
    ///
    /// A transactional producer's records become visible to `read_uncommitted`
    /// consumers before the transaction commits, and stay visible when it aborts. The
    /// consumer acts on records that officially never existed: effects of aborted
    /// work, and duplicates of records the producer retried in a new transaction.
    ///
    /// Boundary broken: visibility of uncommitted and aborted transactional records.
    ///
    /// ## Example
    ///
    /// ```rust
    /// let consumer: StreamConsumer = ClientConfig::new()
    ///     .set("group.id", "billing")
    ///     .set("isolation.level", "read_uncommitted")
    ///     .create()?;
    /// ```
    ///
    /// ```yaml
    /// spring:
    ///   kafka:
    ///     consumer:            # isolation-level unset: the Java client reads uncommitted
    ///       group-id: ledger
    ///     producer:
    ///       transaction-id-prefix: ledger-tx-
    /// ```
    ///
    /// Use instead: remove the setting (librdkafka defaults to `read_committed`) or
    /// set `.set("isolation.level", "read_committed")`; in YAML, set
    /// `isolation-level: read_committed` (Spring), `consumer.override.isolation.level`
    /// (Kafka Connect) or `transaction_isolation_level: read_committed` (Redpanda Connect).
    ///
    /// ## Not reported
    ///
    /// - An unset `isolation.level` on a librdkafka client (the Rust `rdkafka` crate,
    ///   Vector's `librdkafka_options`): its default is `read_committed`.
    /// - A consumer linked to no transactional producer: none writes its topics, and
    ///   none is in the same crate (Rust) or directory (YAML) when its topics are unknown.
    /// - A generic property map whose client is unknown (a ConfigMap, Helm values) that
    ///   leaves the level unset: only an explicit `read_uncommitted` there is a finding.
    /// - A Kafka Streams application with an exactly-once `processing.guarantee`.
    /// - Producers: the rule is about what a consumer reads (a producer's settings
    ///   are MA008's).
    pub static MA004 = {
        code: "MA004",
        name: "missing-read-committed",
        severity: Warning,
        concern: Isolation,
        consequence: Visibility,
        summary: "A Kafka consumer of a transactionally produced topic reads uncommitted records.",
        boundary: "visibility of uncommitted/aborted transactional records",
        fix: "`isolation.level` written as `read_uncommitted` becomes `read_committed`; where the level is unset (Spring, Kafka Connect, Redpanda Connect franz-go inputs), it is added to the consumer's block as `read_committed`.",
    };
}

/// How a consumer comes to read uncommitted records: the setting that says so, or
/// the client's default (`None`: it reads committed records, or it cannot be told).
enum Uncommitted<'a> {
    Explicit(&'a Prop),
    Default(&'static str),
}

fn reads_uncommitted(c: &KafkaClient) -> Option<Uncommitted<'_>> {
    if exactly_once_streams(c) {
        return None;
    }
    match c.prop("isolation.level") {
        Some(p) => (value(c, "isolation.level").as_deref() == Some("read_uncommitted"))
            .then_some(Uncommitted::Explicit(p)),
        None => match c.family {
            ClientFamily::Java => Some(Uncommitted::Default(
                "`isolation.level` unset, and the Java client's default is `read_uncommitted`",
            )),
            ClientFamily::Franz => Some(Uncommitted::Default(
                "`transaction_isolation_level` unset, and franz-go's default is `read_uncommitted`",
            )),
            ClientFamily::Librdkafka | ClientFamily::Unknown => None,
        },
    }
}

/// `c`, a client of some profiles only (Spring), beside a consumer of the same file
/// and role active in the default configuration that leaves the level unset too and
/// is linked to a transactional producer: the level `c` lacks is the default
/// document's to set.
fn inherits_unset(
    c: &KafkaClient,
    clients: &[(String, KafkaClient)],
    linked: &dyn Fn(&KafkaClient, &str) -> bool,
) -> bool {
    if c.runs.is_empty() || c.runs.iter().any(String::is_empty) {
        return false;
    }
    clients.iter().any(|(k, d)| {
        d.new_loc.path == c.new_loc.path
            && d.role == c.role
            && d.runs.iter().any(String::is_empty)
            && d.knows("isolation.level")
            && d.prop("isolation.level").is_none()
            && is_consumer(d)
            && !exactly_once_streams(d)
            && linked(d, k)
    })
}

/// A Kafka Streams application with an exactly-once `processing.guarantee` reads
/// `read_committed` whatever else is set.
fn exactly_once_streams(c: &KafkaClient) -> bool {
    value(c, "processing.guarantee").is_some_and(|g| g.starts_with("exactly_once"))
}

/// `clients`: every Kafka client of the analyzed tree, with the group whose
/// transactional producers a consumer of unknown topics is linked to (its crate in
/// Rust, its directory in YAML).
/// A wrong value is reported where it is written (SPEC §2, Spans: "the value, when
/// the value is what is wrong"); a level left unset, at the consumer's block.
pub fn check(clients: &[(String, KafkaClient)]) -> Vec<Finding> {
    let producers: Vec<&(String, KafkaClient)> = clients
        .iter()
        .filter(|(_, c)| c.knows("transactional.id") && is_transactional_producer(c))
        .collect();
    let mut out = Vec::new();
    for (krate, c) in clients {
        // Partly made at run time: only a level set after it is known.
        if !c.knows("isolation.level") || !is_consumer(c) {
            continue;
        }
        let Some(how) = reads_uncommitted(c) else {
            continue;
        };
        // docs/what-is-analyzed.md: a consumer whose topics are known links to the producers of those
        // topics anywhere in the tree; where either side's topics are unknown (read
        // from configuration, chosen at run time), to the transactional producers of
        // its own crate (or, for YAML, its directory).
        // Profiles of one file that never run together are not linked.
        let linked_to = |c: &KafkaClient, krate: &str| {
            producers.iter().find(|(pk, p)| {
                if !c.runs_with(p) {
                    false
                } else if c.topics.is_empty() || p.topics.is_empty() {
                    pk == krate
                } else {
                    c.topics.iter().any(|t| p.topics.contains(t))
                }
            })
        };
        let Some((_, p)) = linked_to(c, krate) else {
            continue;
        };
        // A profile's consumer that inherits the unset level from the file's default
        // document, whose own consumer is reported for it: one defect, fixed there.
        if matches!(how, Uncommitted::Default(_))
            && inherits_unset(c, clients, &|d, k| linked_to(d, k).is_some())
        {
            continue;
        }
        let tx = p
            .prop("transactional.id")
            .map(|x| &x.loc)
            .unwrap_or(&p.new_loc);
        let mut labels = vec![label(tx, "this producer writes the topic in transactions")];
        let fix = match &how {
            Uncommitted::Explicit(setting) => fixes::safe(
                "set `isolation.level` to `read_committed`".into(),
                vec![fixes::set_value(setting, "read_committed")],
            ),
            Uncommitted::Default(_) => fixes::safe(
                "add `isolation.level=read_committed` to the consumer's configuration".into(),
                vec![fixes::insert_setting(
                    c,
                    "isolation.level",
                    "read_committed",
                )],
            ),
        };
        let (loc, message, help) = match how {
            Uncommitted::Explicit(setting) => {
                labels.push(label(
                    &c.new_loc,
                    "the consumer's configuration starts here",
                ));
                (
                    &setting.loc,
                    "consumer reads with `isolation.level=read_uncommitted` from a topic written by a \
                     transactional producer"
                        .to_string(),
                    "use `read_committed` (librdkafka's default: remove the setting)",
                )
            }
            Uncommitted::Default(why) => (
                &c.new_loc,
                format!("consumer of a topic written by a transactional producer leaves {why}"),
                "set the consumer's isolation level to `read_committed`",
            ),
        };
        labels.sort();
        out.push(MA004.finding(
            loc,
            message,
            "records of open and aborted transactions are delivered: the consumer acts on work that \
                     was rolled back, and on duplicates the producer retried"
                .into(),
            labels,
            help.into(),
        ).with_fix(fix));
    }
    out
}

/// MA004 as the dispatcher runs it ([`super::Rule`]).
pub struct Check;

impl super::Rule for Check {
    fn meta(&self) -> &'static super::RuleMeta {
        &MA004
    }

    fn check_tree(&self, tree: &super::TreeInput) -> Vec<Finding> {
        check(tree.clients)
    }
}
