//! Generic Kafka property maps anywhere in a document: a map with
//! `bootstrap.servers` and `group.id` (a consumer), `transactional.id` (a
//! transactional producer), a producer-only key such as `acks` or
//! `value.serializer` (a producer) or `application.id` (a Kafka Streams application), in
//! any spelling [`kafka_props::canonical`] knows (`bootstrap-servers`,
//! `KAFKA_BOOTSTRAP_SERVERS`, …). This covers Helm values, plain client property
//! files and the `data` of a Kubernetes `ConfigMap`. A container environment
//! written as a list (docker-compose's `- KAFKA_GROUP_ID=billing`, a Kubernetes
//! container's `env: [{name: KAFKA_GROUP_ID, value: billing}]`) is read as the map it
//! stands for. The servers may sit in a map around the client's (Helm values'
//! `kafka: {brokers: .., producer: {transactional.id: ..}, consumer: {group.id: ..}}`):
//! each of the nested maps is a client of them. The client behind such a map is unknown, and nothing manages its
//! offsets: it is a raw client.

use super::tree::{Entry, Node, Value};
use super::{holder_span, kafka_props, Ctx};
use crate::apis::Role;
use crate::ir::{ClientFamily, ConfigFormat};

pub fn lower(doc: &Node, ctx: &mut Ctx) {
    walk(None, doc, ctx, 0, false);
}

/// `servers`: a map around `node` names the bootstrap servers.
fn walk(holder: Option<&Node>, node: &Node, ctx: &mut Ctx, depth: usize, servers: bool) {
    if depth > 64 || ctx.is_claimed(node) {
        return;
    }
    if node.is_map() {
        client(holder, node, ctx, servers);
    }
    if let Some(map) = env_list(node) {
        client(holder, &map, ctx, servers);
        return;
    }
    let servers = servers || names_servers(node);
    for e in node.entries() {
        walk(Some(&e.key), &e.value, ctx, depth + 1, servers);
    }
    for i in node.items() {
        walk(None, i, ctx, depth + 1, servers);
    }
}

/// A map with the bootstrap servers, in any spelling, or a `brokers` list.
fn names_servers(map: &Node) -> bool {
    map.entries()
        .iter()
        .filter_map(|e| e.key.as_str())
        .any(|k| kafka_props::canonical(k) == "bootstrap.servers" || kafka_props::is_brokers_key(k))
}

fn client(holder: Option<&Node>, map: &Node, ctx: &mut Ctx, servers_around: bool) {
    let keys: Vec<String> = map
        .entries()
        .iter()
        .filter_map(|e| e.key.as_str())
        .map(kafka_props::canonical)
        .collect();
    let has = |k: &str| keys.iter().any(|x| x == k);
    if !has("bootstrap.servers") && !servers_around {
        return;
    }
    let role = match (
        has("group.id"),
        has("transactional.id"),
        has("application.id"),
    ) {
        (_, _, true) => Some(Role::KafkaConsumer.name()),
        (true, false, _) => Some(Role::KafkaConsumer.name()),
        (false, true, _) => Some(Role::KafkaProducer.name()),
        (true, true, _) => None,
        (false, false, false) if kafka_props::PRODUCER_ONLY.iter().any(|k| has(k)) => {
            Some(Role::KafkaProducer.name())
        }
        (false, false, false) => return,
    };
    ctx.claim(map);
    // A list item's map has no key of its own: point at its first key.
    let mut client = ctx.client(holder_span(holder, map), ClientFamily::Unknown, false);
    client.role = role.map(str::to_string);
    // Raw keys, when the map spells its keys as Kafka does (not `KAFKA_ACKS`).
    let dotted = map
        .entries()
        .iter()
        .filter_map(|e| e.key.as_str())
        .all(|k| kafka_props::canonical(k) == k);
    if dotted {
        client.insert = ctx.insertion(
            holder,
            map,
            super::insert::Keys {
                keys: Vec::new(),
                prefix: Some(String::new()),
            },
        );
    }
    for e in map.entries() {
        let Some(k) = e.key.as_str() else { continue };
        match k {
            k if kafka_props::is_topics_key(k) => client.topics = kafka_props::topics(&e.value),
            _ => ctx.prop(&mut client, k, &e.value),
        }
    }
    ctx.push(client, ConfigFormat::PropertyMap);
}

/// A sequence that sets environment variables, as the map it stands for: every item
/// a `KEY=value` string (docker-compose; a bare `KEY` takes the value of the host's
/// variable, unknown here) or a `name`/`value` map (Kubernetes; `valueFrom` is an
/// unknown value). `None` for any other sequence.
fn env_list(seq: &Node) -> Option<Node> {
    let items = seq.items();
    if items.is_empty() {
        return None;
    }
    let mut entries = Vec::with_capacity(items.len());
    for item in items {
        if let Some(text) = item.as_str() {
            entries.push(assignment(item, text)?);
            continue;
        }
        let keys = item.entries();
        let name = item.get("name").filter(|n| n.as_str().is_some())?;
        if keys.is_empty()
            || !keys
                .iter()
                .all(|e| matches!(e.key.as_str(), Some("name" | "value" | "valueFrom")))
        {
            return None;
        }
        if let Some(value) = item.get("value").or_else(|| item.get("valueFrom")) {
            entries.push(Entry {
                key: name.clone(),
                value: value.clone(),
            });
        }
    }
    Some(Node {
        value: Value::Map(entries),
        span: seq.span,
        in_place: None,
    })
}

/// `KEY=value` as a key and a value, each with its own span when the item is written
/// in place on one line (else both point at the item).
fn assignment(item: &Node, text: &str) -> Option<Entry> {
    let (key, value) = match text.split_once('=') {
        Some((k, v)) => (k, Some(v)),
        None => (text, None),
    };
    let name_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
    // A variable's name (not a command-line flag: `--group-id=x`).
    let starts = key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
    if !starts || !key.chars().all(name_char) {
        return None;
    }
    let part = |from: usize, s: &str| match item.in_place {
        Some(sp) => {
            let column = sp.column + text[..from].chars().count() as u32;
            let at = crate::diagnostic::Span {
                column,
                end_column: column + s.chars().count() as u32,
                byte_start: sp.byte_start + from,
                byte_end: sp.byte_start + from + s.len(),
                ..sp
            };
            (at, (!s.is_empty()).then_some(at))
        }
        None => (item.span, None),
    };
    let (key_span, key_in_place) = part(0, key);
    let value = match value {
        Some(v) => {
            let (span, in_place) = part(key.len() + 1, v);
            Node {
                value: Value::Scalar(v.to_string()),
                span,
                in_place,
            }
        }
        // The host's variable of that name: set, to a value not known here.
        None => Node {
            value: Value::Scalar(format!("${{{key}}}")),
            span: key_span,
            in_place: None,
        },
    };
    Some(Entry {
        key: Node {
            value: Value::Scalar(key.to_string()),
            span: key_span,
            in_place: key_in_place,
        },
        value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(text: &str) -> Vec<(String, Option<String>, (u32, u32))> {
        let docs = super::super::tree::parse(text).unwrap();
        let map = env_list(docs[0].get("environment").unwrap()).unwrap();
        map.entries()
            .iter()
            .map(|e| {
                (
                    e.key.as_str().unwrap().to_string(),
                    kafka_props::literal(&e.value),
                    (e.value.span.line, e.value.span.column),
                )
            })
            .collect()
    }

    #[test]
    fn environment_lists_read_as_maps() {
        let got =
            env("environment:\n  - KAFKA_TOPIC=a,b\n  - \"KAFKA_GROUP_ID=g\"\n  - KAFKA_ACKS\n");
        assert_eq!(got[0], ("KAFKA_TOPIC".into(), Some("a,b".into()), (2, 17)));
        assert_eq!(got[1], ("KAFKA_GROUP_ID".into(), Some("g".into()), (3, 21)));
        assert_eq!(got[2].0, "KAFKA_ACKS");
        assert_eq!(got[2].1, None);
        let got = env("environment:\n  - name: KAFKA_TOPICS\n    value: t\n  - name: X\n    valueFrom: {secretKeyRef: {name: s, key: k}}\n");
        assert_eq!(got[0], ("KAFKA_TOPICS".into(), Some("t".into()), (3, 12)));
        assert_eq!(got[1].1, None);
        let docs = super::super::tree::parse(
            "ports:\n  - name: http\n    containerPort: 80\n  - 'not an env'\n",
        )
        .unwrap();
        assert!(env_list(docs[0].get("ports").unwrap()).is_none());
    }
}
