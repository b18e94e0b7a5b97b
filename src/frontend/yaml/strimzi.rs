//! Strimzi `KafkaConnector` resources (Kafka Connect, Java client, offsets managed
//! by the Connect worker). A sink connector (`topics`/`topics.regex`, or a class
//! named `…Sink…`) is a consumer configured by `consumer.override.*`; a source
//! connector is a producer configured by `producer.override.*`, and writes in
//! transactions when `exactly.once.support` is `required` or `requested`.
//! `consumer.*`/`producer.*` keys of a `KafkaConnect` resource in the same file are
//! the worker's defaults for its connectors (matched by `strimzi.io/cluster`).

use super::tree::Node;
use super::{holder_span, kafka_props, kind, Ctx};
use crate::apis::Role;
use crate::ir::{ClientFamily, ConfigFormat, Prop};

pub fn lower(doc: &Node, ctx: &mut Ctx) {
    if kind(doc) != Some("KafkaConnector") {
        return;
    }
    let Some(spec) = doc.get("spec") else { return };
    let Some(config) = spec.entry("config").filter(|e| e.value.is_map()) else {
        return;
    };
    ctx.claim(&config.value);
    let class = spec.get("class").and_then(Node::as_str).unwrap_or("");
    let cfg = &config.value;
    let sink =
        cfg.get("topics").is_some() || cfg.get("topics.regex").is_some() || class.contains("Sink");
    let (prefix, role) = if sink {
        ("consumer.override.", Role::KafkaConsumer.name())
    } else {
        ("producer.override.", Role::KafkaProducer.name())
    };
    let mut client = ctx.client(
        holder_span(Some(&config.key), cfg),
        ClientFamily::Java,
        true,
    );
    client.role = Some(role.into());
    client.insert = ctx.insertion(
        Some(&config.key),
        cfg,
        super::insert::Keys {
            keys: Vec::new(),
            prefix: Some(prefix.into()),
        },
    );
    for e in cfg.entries() {
        let Some(k) = e.key.as_str() else { continue };
        if let Some(rest) = k.strip_prefix(prefix) {
            ctx.prop(&mut client, rest, &e.value);
        }
        match k {
            "topics" if sink => client.topics = kafka_props::topics(&e.value),
            "topic" | "kafka.topic" if !sink => client.topics = kafka_props::topics(&e.value),
            "exactly.once.support" if !sink => {
                let v = kafka_props::literal(&e.value).map(|v| v.to_ascii_lowercase());
                if matches!(v.as_deref(), Some("required" | "requested")) {
                    ctx.implied(&mut client, "transactional.id", "connect", &e.value);
                }
            }
            _ => {}
        }
    }
    ctx.push(client, ConfigFormat::Strimzi);
}

/// A `KafkaConnect` worker's own `producer.*` settings: the producer its source
/// connectors (and its dead-letter queues) send with, unless they override them.
pub fn worker_producers(docs: &[Node], ctx: &mut Ctx) {
    for doc in docs.iter().filter(|d| kind(d) == Some("KafkaConnect")) {
        worker_producer(doc, ctx);
    }
}

fn worker_producer(doc: &Node, ctx: &mut Ctx) {
    let Some(config) = doc
        .get("spec")
        .and_then(|s| s.entry("config"))
        .filter(|e| e.value.is_map())
    else {
        return;
    };
    let cfg = &config.value;
    let has_producer = cfg
        .entries()
        .iter()
        .any(|e| e.key.as_str().is_some_and(|k| k.starts_with("producer.")));
    if !has_producer {
        return;
    }
    let mut client = ctx.client(
        holder_span(Some(&config.key), cfg),
        ClientFamily::Java,
        true,
    );
    client.role = Role::KafkaProducer.some();
    for e in cfg.entries() {
        if let Some(rest) = e.key.as_str().and_then(|k| k.strip_prefix("producer.")) {
            ctx.prop(&mut client, rest, &e.value);
        }
    }
    ctx.push(client, ConfigFormat::Strimzi);
}

/// The `strimzi.io/cluster` label of a resource, or its name for a `KafkaConnect`.
fn cluster(doc: &Node, own_name: bool) -> Option<&str> {
    let meta = doc.get("metadata")?;
    if own_name {
        meta.get("name")?.as_str()
    } else {
        meta.get("labels")?.get("strimzi.io/cluster")?.as_str()
    }
}

/// Puts each `KafkaConnect` worker's `consumer.*`/`producer.*` defaults in front of
/// the settings of the connectors of the same file that run on it.
pub fn apply_worker_defaults(docs: &[Node], ctx: &mut Ctx) {
    let workers: Vec<(Option<&str>, &Node)> = docs
        .iter()
        .filter(|d| kind(d) == Some("KafkaConnect"))
        .filter_map(|d| Some((cluster(d, true), d.get("spec")?.get("config")?)))
        .collect();
    if workers.is_empty() {
        return;
    }
    let connectors: Vec<Option<&str>> = docs
        .iter()
        .filter(|d| {
            kind(d) == Some("KafkaConnector")
                && d.get("spec")
                    .and_then(|s| s.get("config"))
                    .is_some_and(Node::is_map)
        })
        .map(|d| cluster(d, false))
        .collect();
    let mut defaults: Vec<Vec<Prop>> = Vec::new();
    let strimzi: Vec<usize> = (0..ctx.clients.len())
        .filter(|&i| ctx.clients[i].1 == ConfigFormat::Strimzi)
        .collect();
    for (i, name) in strimzi.iter().zip(&connectors) {
        let worker =
            workers
                .iter()
                .find(|(w, _)| w.is_some() && w == name)
                .or(if workers.len() == 1 {
                    workers.first()
                } else {
                    None
                });
        let mut props = Vec::new();
        if let Some((_, config)) = worker {
            let role = ctx.clients[*i].0.role.clone();
            let prefix = if Role::KafkaConsumer.is(role.as_deref()) {
                "consumer."
            } else {
                "producer."
            };
            let mut c = ctx.client(config.span, ClientFamily::Java, true);
            for e in config.entries() {
                let Some(k) = e.key.as_str() else { continue };
                if let Some(rest) = k.strip_prefix(prefix) {
                    ctx.prop(&mut c, rest, &e.value);
                }
            }
            props = c.props;
        }
        defaults.push(props);
    }
    for (i, mut props) in strimzi.into_iter().zip(defaults) {
        let client = &mut ctx.clients[i].0;
        props.append(&mut client.props);
        client.props = props;
    }
}
