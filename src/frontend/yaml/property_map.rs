//! Generic Kafka property maps anywhere in a document: a map with
//! `bootstrap.servers` and `group.id` (a consumer), `transactional.id` (a
//! transactional producer), a producer-only key such as `acks` or
//! `value.serializer` (a producer) or `application.id` (a Kafka Streams application), in
//! any spelling [`kafka_props::canonical`] knows (`bootstrap-servers`,
//! `KAFKA_BOOTSTRAP_SERVERS`, …). This covers Helm values, plain client property
//! files and the `data` of a Kubernetes `ConfigMap`. The client behind such a map
//! is unknown, and nothing manages its offsets: it is a raw client.

use super::tree::Node;
use super::{holder_span, kafka_props, Ctx};
use crate::apis::Role;
use crate::ir::{ClientFamily, ConfigFormat};

pub fn lower(doc: &Node, ctx: &mut Ctx) {
    walk(None, doc, ctx, 0);
}

fn walk(holder: Option<&Node>, node: &Node, ctx: &mut Ctx, depth: usize) {
    if depth > 64 || ctx.is_claimed(node) {
        return;
    }
    if node.is_map() {
        client(holder, node, ctx);
    }
    for e in node.entries() {
        walk(Some(&e.key), &e.value, ctx, depth + 1);
    }
    for i in node.items() {
        walk(None, i, ctx, depth + 1);
    }
}

fn client(holder: Option<&Node>, map: &Node, ctx: &mut Ctx) {
    let keys: Vec<String> = map
        .entries()
        .iter()
        .filter_map(|e| e.key.as_str())
        .map(kafka_props::canonical)
        .collect();
    let has = |k: &str| keys.iter().any(|x| x == k);
    if !has("bootstrap.servers") {
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
            "topic" | "topics" => client.topics = kafka_props::topics(&e.value),
            _ => ctx.prop(&mut client, k, &e.value),
        }
    }
    ctx.push(client, ConfigFormat::PropertyMap);
}
