use super::declare_rule;
use super::kafka_clients::{is_consumer, is_transactional_producer, value};
use super::pairs::label;
use crate::diagnostic::Finding;
use crate::ir::KafkaClient;

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
    /// A consumer is linked to the producers of its topics anywhere in the analyzed
    /// tree; a consumer (or producer) whose topics are unknown is linked to the
    /// transactional producers of the same crate.
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
    /// Use instead: remove the setting (librdkafka defaults to `read_committed`) or
    /// set `.set("isolation.level", "read_committed")`.
    pub static MA004 = {
        code: "MA004",
        name: "missing-read-committed",
        severity: Warning,
        summary: "A Kafka consumer of a transactionally produced topic reads uncommitted records.",
        boundary: "visibility of uncommitted/aborted transactional records",
    };
}

/// `clients`: every Kafka client of the analyzed tree, with the crate it is in.
pub fn check(clients: &[(String, KafkaClient)]) -> Vec<Finding> {
    let producers: Vec<&(String, KafkaClient)> = clients
        .iter()
        .filter(|(_, c)| !c.dynamic && is_transactional_producer(c))
        .collect();
    let mut out = Vec::new();
    for (krate, c) in clients {
        if c.dynamic
            || !is_consumer(c)
            || value(c, "isolation.level").as_deref() != Some("read_uncommitted")
        {
            continue;
        }
        // SPEC §2: a consumer whose topics are known links to the producers of those
        // topics anywhere in the tree; where either side's topics are unknown (read
        // from configuration, chosen at run time), to the transactional producers of
        // its own crate.
        let linked = producers.iter().find(|(pk, p)| {
            if c.topics.is_empty() || p.topics.is_empty() {
                pk == krate
            } else {
                c.topics.iter().any(|t| p.topics.contains(t))
            }
        });
        let Some((_, p)) = linked else { continue };
        let Some(setting) = c.prop("isolation.level") else {
            continue;
        };
        let mut labels = vec![label(
            &c.new_loc,
            "the consumer's configuration starts here",
        )];
        let tx = p
            .prop("transactional.id")
            .map(|x| &x.loc)
            .unwrap_or(&p.new_loc);
        labels.push(label(tx, "this producer writes the topic in transactions"));
        labels.sort();
        out.push(Finding {
            code: MA004.code,
            name: MA004.name,
            severity: MA004.default_severity,
            path: setting.loc.path.to_string(),
            span: setting.loc.span,
            message: "consumer reads with `isolation.level=read_uncommitted` from a topic written by a \
                      transactional producer"
                .into(),
            boundary: MA004.boundary.to_string(),
            window: "records of open and aborted transactions are delivered: the consumer acts on work that \
                     was rolled back, and on duplicates the producer retried"
                .into(),
            labels,
            help: "use `read_committed` (librdkafka's default: remove the setting)".into(),
        });
    }
    out
}
