//! Topic retention stated in YAML (the replay windows that dedup retention must cover):
//!
//! - Strimzi `KafkaTopic`: `spec.config.retention.ms` of the topic `spec.topicName`
//!   (or `metadata.name`);
//! - generic topic configuration: a map with a retention key (`retention.ms`,
//!   `retention.minutes`, `retention.hours`, or `log.retention.*` inside a topic's
//!   entry) whose topic is named by the map (`name`, `topic`, `topicName`), by the
//!   entry holding it (`topics: [{name: orders, config: {retention.ms: …}}]`), or by
//!   its key under `topics:` (`topics: {orders: {retention.ms: …}}`).
//!
//! Queue message TTLs (SQS `MessageRetentionPeriod`, RabbitMQ `x-message-ttl`) are not
//! replay windows and are not read.

use std::sync::Arc;

use super::kafka_props;
use super::tree::Node;
use crate::ir::{Loc, ReplayWindow};
use crate::support::duration::{self, HOUR, MINUTE};

/// Retention keys and the unit of a bare number.
const KEYS: &[(&str, u64)] = &[
    ("retention.ms", 1),
    ("retention.minutes", MINUTE),
    ("retention.hours", HOUR),
    ("log.retention.ms", 1),
    ("log.retention.minutes", MINUTE),
    ("log.retention.hours", HOUR),
];

/// Words that make a YAML file worth parsing for topic retention.
pub fn is_relevant(text: &str) -> bool {
    text.contains("retention.")
}

const CONFIG_KEYS: &[&str] = &[
    "config",
    "configs",
    "configuration",
    "properties",
    "settings",
];
const NAME_KEYS: &[&str] = &["topicName", "topic_name", "topic", "name"];

fn name_of(map: &Node) -> Option<String> {
    NAME_KEYS
        .iter()
        .find_map(|k| map.get(k).and_then(kafka_props::literal))
}

/// The replay windows stated in one document.
pub fn lower(doc: &Node, path: &Arc<str>, out: &mut Vec<ReplayWindow>) {
    if super::kind(doc) == Some("KafkaTopic") {
        let topic = doc
            .get("spec")
            .and_then(|s| s.get("topicName"))
            .and_then(kafka_props::literal)
            .or_else(|| {
                doc.get("metadata")
                    .and_then(|m| m.get("name"))
                    .and_then(kafka_props::literal)
            });
        if let (Some(topic), Some(cfg)) = (topic, doc.get("spec").and_then(|s| s.get("config"))) {
            windows_of(cfg, &topic, true, path, out);
        }
        return;
    }
    walk(doc, None, None, path, out, 0);
}

/// `key`: the key `node` sits under; `implied`: the topic its position names (the
/// key under `topics:`, or the name of the entry whose `config:` it is).
fn walk(
    node: &Node,
    key: Option<&str>,
    implied: Option<String>,
    path: &Arc<str>,
    out: &mut Vec<ReplayWindow>,
    depth: usize,
) {
    if depth > 64 {
        return;
    }
    if node.is_map() && KEYS.iter().any(|(k, _)| node.get(k).is_some()) {
        if let Some(topic) = name_of(node).or(implied) {
            windows_of(node, &topic, false, path, out);
        }
        return;
    }
    let under_topics = key.is_some_and(|k| k.eq_ignore_ascii_case("topics"));
    for e in node.entries() {
        let k = e.key.as_str();
        let child = if under_topics {
            k.map(String::from)
        } else if k.is_some_and(|k| CONFIG_KEYS.contains(&k)) {
            name_of(node).or_else(|| implied.clone())
        } else {
            None
        };
        walk(&e.value, k, child, path, out, depth + 1);
    }
    for i in node.items() {
        walk(i, None, None, path, out, depth + 1);
    }
}

fn windows_of(
    cfg: &Node,
    topic: &str,
    strimzi: bool,
    path: &Arc<str>,
    out: &mut Vec<ReplayWindow>,
) {
    for (k, per) in KEYS {
        if strimzi && k.starts_with("log.") {
            continue;
        }
        let Some(v) = cfg.get(k) else { continue };
        let Some(text) = kafka_props::literal(v) else {
            continue;
        };
        if let Some(millis) = duration::parse(&text, Some(*per)) {
            out.push(ReplayWindow {
                topic: Some(topic.to_string()),
                millis,
                loc: Loc {
                    path: path.clone(),
                    span: v.span,
                },
                source: format!("`{k}`"),
            });
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn windows(text: &str) -> Vec<(Option<String>, u64)> {
        let docs = super::super::tree::parse(text).unwrap();
        let path: Arc<str> = Arc::from("t.yaml");
        let mut out = Vec::new();
        for d in &docs {
            lower(d, &path, &mut out);
        }
        out.into_iter().map(|w| (w.topic, w.millis)).collect()
    }

    #[test]
    fn strimzi_and_generic_topic_config() {
        let week = 7 * duration::DAY;
        let t = Some("orders".to_string());
        assert_eq!(
            windows("kind: KafkaTopic\nmetadata:\n  name: orders\nspec:\n  config:\n    retention.ms: 604800000\n"),
            vec![(t.clone(), week)]
        );
        assert_eq!(
            windows("topics:\n  - name: orders\n    config:\n      retention.ms: \"604800000\"\n"),
            vec![(t.clone(), week)]
        );
        assert_eq!(
            windows(
                "topics:\n  orders:\n    partitions: 6\n    configs:\n      retention.hours: 168\n"
            ),
            vec![(t.clone(), week)]
        );
        assert_eq!(
            windows("topics:\n  orders:\n    retention.ms: -1\n"),
            vec![(t, duration::UNLIMITED)]
        );
        assert!(windows("Properties:\n  MessageRetentionPeriod: 1209600\n").is_empty());
    }
}
