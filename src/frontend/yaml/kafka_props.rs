//! Kafka property spellings, normalized once: every format's key goes through
//! [`canonical`] before it becomes a [`crate::ir::Prop`], so rules only ever see the
//! Kafka client's own dotted names (`isolation.level`, `enable.auto.commit`).

use super::tree::{Node, Value};

/// The Kafka keys the rules ask about, in their canonical (Java/librdkafka) spelling.
const KNOWN: &[&str] = &[
    "isolation.level",
    "enable.auto.commit",
    "enable.auto.offset.store",
    "group.id",
    "transactional.id",
    "bootstrap.servers",
    "acks",
    "request.required.acks",
    "enable.idempotence",
    "max.in.flight.requests.per.connection",
    "max.in.flight",
    "processing.guarantee",
    "application.id",
    "auto.offset.reset",
    "client.id",
    "key.serializer",
    "value.serializer",
    "key.deserializer",
    "value.deserializer",
    "linger.ms",
    "batch.size",
    "compression.type",
    "retries",
    "delivery.timeout.ms",
];

/// Keys only a producer has: a property map with `bootstrap.servers` and one of
/// these is a producer even without `transactional.id`.
pub const PRODUCER_ONLY: &[&str] = &[
    "acks",
    "request.required.acks",
    "enable.idempotence",
    "max.in.flight.requests.per.connection",
    "key.serializer",
    "value.serializer",
    "linger.ms",
    "batch.size",
    "compression.type",
    "delivery.timeout.ms",
];

/// Lower-case letters and digits only: `isolation-level`, `isolationLevel`,
/// `ISOLATION_LEVEL` and `isolation.level` all squash to `isolationlevel`.
fn squash(s: &str) -> String {
    s.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// The canonical Kafka name of a property key written in any of the usual
/// spellings: dotted (`isolation.level`), Spring's relaxed names (`isolation-level`,
/// `isolationLevel`), environment style (`KAFKA_ISOLATION_LEVEL`), and Spring's
/// `transaction-id-prefix` (the producer's `transactional.id`). Unknown keys are
/// returned as written.
pub fn canonical(key: &str) -> String {
    let key = key.trim();
    let s = squash(key);
    if s == "transactionidprefix" {
        return "transactional.id".into();
    }
    let find = |s: &str| KNOWN.iter().find(|k| squash(k) == s).map(|k| k.to_string());
    if let Some(k) = find(&s) {
        return k;
    }
    // `KAFKA_ISOLATION_LEVEL` (container environment), not `kafka.topic`.
    if env_style(key) {
        if let Some(k) = s.strip_prefix("kafka").and_then(find) {
            return k;
        }
    }
    key.to_string()
}

/// A key spelled as an environment variable (`KAFKA_GROUP_ID`), where a `KAFKA`
/// prefix names the client the setting is for.
fn env_style(key: &str) -> bool {
    key.contains('_') || key.chars().all(|c| !c.is_ascii_lowercase())
}

/// A key that names a cluster's brokers beside its clients' maps (`brokers`,
/// `KAFKA_BROKERS`), not a client property itself.
pub fn is_brokers_key(key: &str) -> bool {
    let s = squash(key.trim());
    s == "brokers" || s == "kafkabrokers"
}

/// A key that names the client's topics: `topic`, `topics`, and their environment
/// spelling `KAFKA_TOPIC`, `KAFKA_TOPICS` (not `kafka.topic`, a Kafka Connect setting).
pub fn is_topics_key(key: &str) -> bool {
    let key = key.trim();
    let plain = |s: &str| s == "topic" || s == "topics";
    plain(key) || (env_style(key) && squash(key).strip_prefix("kafka").is_some_and(plain))
}

/// The literal text of a scalar value; `None` for placeholders filled in at run
/// time (`${ISOLATION}`, `$LEVEL`), nulls and collections.
pub fn literal(node: &Node) -> Option<String> {
    let s = node.as_str()?.trim();
    if s.contains("${") || s.starts_with('$') || s.contains("{{") {
        return None;
    }
    Some(s.to_string())
}

/// Topic names from a `topics:`/`topic:` value: a sequence, or a comma-separated
/// string. Placeholders and patterns are left out.
pub fn topics(node: &Node) -> Vec<String> {
    let mut out = Vec::new();
    let mut add = |s: &str| {
        for t in s.split(',') {
            let t = t.trim();
            if !t.is_empty() && !t.contains('$') && !t.contains('*') && !t.contains('{') {
                out.push(t.to_string());
            }
        }
    };
    match &node.value {
        Value::Scalar(s) => add(s),
        Value::Seq(items) => {
            for i in items {
                if let Some(s) = i.as_str() {
                    add(s);
                }
            }
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_normalize_to_one_key() {
        for k in [
            "isolation.level",
            "isolation-level",
            "isolationLevel",
            "isolation_level",
            "KAFKA_ISOLATION_LEVEL",
        ] {
            assert_eq!(canonical(k), "isolation.level", "{k}");
        }
        assert_eq!(canonical("transaction-id-prefix"), "transactional.id");
        assert_eq!(canonical("group-id"), "group.id");
        assert_eq!(
            canonical("max.in.flight.requests.per.connection"),
            "max.in.flight.requests.per.connection"
        );
        assert_eq!(canonical("kafka.topic"), "kafka.topic");
        assert_eq!(canonical("linger.ms"), "linger.ms");
    }

    #[test]
    fn topics_keys_in_every_spelling() {
        for k in [
            "topic",
            "topics",
            "KAFKA_TOPIC",
            "KAFKA_TOPICS",
            "kafka_topics",
        ] {
            assert!(is_topics_key(k), "{k}");
        }
        for k in [
            "kafka.topic",
            "KAFKA_TOPIC_PREFIX",
            "topic.regex",
            "TOPICS_DIR",
        ] {
            assert!(!is_topics_key(k), "{k}");
        }
    }
}
