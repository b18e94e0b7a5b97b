//! Vector `sources.<id>` / `sinks.<id>` of `type: kafka` (librdkafka, offsets managed
//! by Vector). `librdkafka_options` carries raw librdkafka keys; `group_id`,
//! `bootstrap_servers`, `topics` (sources) and `topic` (sinks) are Vector's own.

use super::tree::Node;
use super::{kafka_props, Ctx};
use crate::apis::Role;
use crate::ir::{ClientFamily, ConfigFormat};

pub fn lower(doc: &Node, ctx: &mut Ctx) {
    for (section, role) in [
        ("sources", Role::KafkaConsumer.name()),
        ("sinks", Role::KafkaProducer.name()),
    ] {
        let Some(components) = doc.get(section) else {
            continue;
        };
        for e in components.entries() {
            let block = &e.value;
            if block.get("type").and_then(Node::as_str) != Some("kafka") {
                continue;
            }
            ctx.claim(block);
            let mut client = ctx.client(e.key.span, ClientFamily::Librdkafka, true);
            client.role = Some(role.into());
            for f in block.entries() {
                let Some(k) = f.key.as_str() else { continue };
                match k {
                    "group_id" | "bootstrap_servers" => ctx.prop(&mut client, k, &f.value),
                    "topics" | "topic" => client.topics = kafka_props::topics(&f.value),
                    "librdkafka_options" => {
                        ctx.claim(&f.value);
                        client.insert = ctx.insertion(
                            Some(&f.key),
                            &f.value,
                            super::insert::Keys {
                                keys: Vec::new(),
                                prefix: Some(String::new()),
                            },
                        );
                        for o in f.value.entries() {
                            if let Some(ok) = o.key.as_str() {
                                ctx.prop(&mut client, ok, &o.value);
                            }
                        }
                    }
                    _ => {}
                }
            }
            ctx.push(client, ConfigFormat::Vector);
        }
    }
}
