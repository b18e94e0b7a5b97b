//! Spring Boot `application*.yml`: `spring.kafka.consumer`, `.producer` and
//! `.streams` (Java client, offsets managed by the listener container). Typed keys
//! use Spring's relaxed names (`isolation-level`, `enable-auto-commit`,
//! `transaction-id-prefix`); `properties.*` (under the client or under
//! `spring.kafka`) carry raw Kafka keys. Nested and dotted spellings read alike.

use super::tree::Node;
use super::{flatten, holder_span, kafka_props, Ctx};
use crate::apis::Role;
use crate::ir::{ClientFamily, ConfigFormat};

const ROLES: [(&str, Option<&str>); 3] = [
    ("consumer", Some(Role::KafkaConsumer.name())),
    ("producer", Some(Role::KafkaProducer.name())),
    // A Streams application both consumes and produces; as a consumer it reads
    // `read_committed` only with an exactly-once `processing.guarantee`.
    ("streams", Some(Role::KafkaConsumer.name())),
];

pub fn lower(doc: &Node, ctx: &mut Ctx) {
    let mut flat = Vec::new();
    flatten(doc, "", &mut flat);
    if !flat.iter().any(|(p, _)| p.starts_with("spring.kafka.")) {
        return;
    }
    for (p, e) in &flat {
        if p == "spring.kafka" || p.starts_with("spring.kafka.") {
            ctx.claim(&e.value);
        }
    }
    let shared: Vec<_> = flat
        .iter()
        .filter(|(p, e)| p.starts_with("spring.kafka.properties.") && !e.value.is_map())
        .collect();
    for (name, role) in ROLES {
        let block = format!("spring.kafka.{name}");
        let prefix = format!("{block}.");
        let own: Vec<_> = flat
            .iter()
            .filter(|(p, _)| p.starts_with(&prefix))
            .collect();
        if own.is_empty() {
            continue;
        }
        let holder = flat
            .iter()
            .find(|(p, _)| *p == block)
            .map(|(_, e)| e.key.span)
            .unwrap_or_else(|| holder_span(Some(&own[0].1.key), doc));
        let mut client = ctx.client(holder, ClientFamily::Java, true);
        client.role = role.map(str::to_string);
        for (p, e) in &shared {
            ctx.prop(
                &mut client,
                &p["spring.kafka.properties.".len()..],
                &e.value,
            );
        }
        for (p, e) in &own {
            if e.value.is_map() {
                continue;
            }
            let rel = &p[prefix.len()..];
            let key = rel.strip_prefix("properties.").unwrap_or(rel);
            ctx.prop(&mut client, key, &e.value);
        }
        if name == "producer" {
            let topic = |p: &str| {
                matches!(
                    p,
                    "spring.kafka.template.default-topic" | "spring.kafka.template.defaultTopic"
                )
            };
            if let Some((_, e)) = flat.iter().find(|(p, _)| topic(p)) {
                client.topics = kafka_props::topics(&e.value);
            }
        }
        ctx.push(client, ConfigFormat::Spring);
    }
}
