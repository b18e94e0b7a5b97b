//! Redpanda Connect / Benthos pipelines: `kafka` (Sarama, client family unknown),
//! `kafka_franz`, `redpanda`, `redpanda_common` (franz-go) inputs and outputs,
//! wherever they sit under `input`/`output` (brokers, switch cases, resources).
//! Offsets are managed by Redpanda Connect.
//!
//! Field mapping: `topics`/`topic`; `consumer_group` → `group.id`;
//! `transaction_isolation_level` → `isolation.level` (franz-go inputs, default
//! `read_uncommitted`); `idempotent_write` → `enable.idempotence`; the Sarama
//! output's `ack_replicas: false` → `acks=1`, `true` → `acks=all`.

use super::tree::Node;
use super::{kafka_props, Ctx};
use crate::apis::Role;
use crate::ir::{ClientFamily, ConfigFormat};

#[derive(Clone, Copy, PartialEq)]
enum Side {
    Input,
    Output,
}

const FRANZ: &[&str] = &["kafka_franz", "redpanda", "redpanda_common"];

pub fn lower(doc: &Node, ctx: &mut Ctx) {
    let is_pipeline = ["input", "output", "input_resources", "output_resources"]
        .iter()
        .any(|k| doc.get(k).is_some());
    if is_pipeline {
        walk(doc, None, ctx, 0);
    }
}

fn walk(node: &Node, side: Option<Side>, ctx: &mut Ctx, depth: usize) {
    if depth > 32 {
        return;
    }
    for e in node.entries() {
        let Some(k) = e.key.as_str() else { continue };
        let side = match k {
            "input" | "inputs" | "input_resources" => Some(Side::Input),
            "output" | "outputs" | "output_resources" => Some(Side::Output),
            _ => side,
        };
        if let Some(s) = side {
            if (k == "kafka" || FRANZ.contains(&k)) && e.value.is_map() {
                client(k, &e.key, &e.value, s, ctx);
                continue;
            }
        }
        walk(&e.value, side, ctx, depth + 1);
    }
    for item in node.items() {
        walk(item, side, ctx, depth + 1);
    }
}

fn client(kind: &str, key: &Node, block: &Node, side: Side, ctx: &mut Ctx) {
    ctx.claim(block);
    let franz = FRANZ.contains(&kind);
    let family = if franz {
        ClientFamily::Franz
    } else {
        ClientFamily::Unknown
    };
    let mut client = ctx.client(key.span, family, true);
    client.role = Some(match side {
        Side::Input => Role::KafkaConsumer.name().into(),
        Side::Output => Role::KafkaProducer.name().into(),
    });
    // The fields a fix may add, as this component names them.
    let keys = match side {
        Side::Input if franz => vec![("isolation.level", "transaction_isolation_level")],
        Side::Output => vec![("enable.idempotence", "idempotent_write")],
        Side::Input => Vec::new(),
    };
    let keys = keys
        .into_iter()
        .map(|(k, w)| (k.to_string(), w.to_string()))
        .collect();
    client.insert = ctx.insertion(Some(key), block, super::insert::Keys { keys, prefix: None });
    for f in block.entries() {
        let Some(k) = f.key.as_str() else { continue };
        match (side, k) {
            (Side::Input, "topics") | (Side::Output, "topic") => {
                client.topics = kafka_props::topics(&f.value)
            }
            (Side::Input, "consumer_group") => ctx.prop(&mut client, "group.id", &f.value),
            (Side::Input, "transaction_isolation_level") if franz => {
                ctx.prop(&mut client, "isolation.level", &f.value)
            }
            (Side::Output, "idempotent_write") => {
                ctx.prop(&mut client, "enable.idempotence", &f.value)
            }
            (Side::Output, "ack_replicas") if !franz => {
                match kafka_props::literal(&f.value).as_deref() {
                    Some("false") => ctx.implied(&mut client, "acks", "1", &f.value),
                    Some("true") => ctx.implied(&mut client, "acks", "all", &f.value),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    ctx.push(client, ConfigFormat::RedpandaConnect);
}
