//! Shared questions about Kafka clients (rdkafka `ClientConfig` chains and YAML
//! client maps): what a client is, and what its settings amount to. Read by the
//! rules and the driver (which attributes topics sent to producers).

use std::collections::HashMap;

use crate::analysis::resolve::Resolver;
use crate::apis::Role;
use crate::ir::{Crate, KafkaClient};

pub fn is_consumer(c: &KafkaClient) -> bool {
    match c.role.as_deref().and_then(Role::of) {
        Some(Role::KafkaConsumer) => true,
        Some(Role::KafkaProducer) => false,
        _ => c.prop("group.id").is_some() && c.prop("transactional.id").is_none(),
    }
}

pub fn is_producer(c: &KafkaClient) -> bool {
    match c.role.as_deref().and_then(Role::of) {
        Some(Role::KafkaProducer) => true,
        Some(Role::KafkaConsumer) => false,
        _ => c.prop("group.id").is_none(),
    }
}

pub fn is_transactional_producer(c: &KafkaClient) -> bool {
    is_producer(c) && c.prop("transactional.id").is_some()
}

/// The literal value of `key`, lower-cased; `None` when unset or not a literal.
pub fn value(c: &KafkaClient, key: &str) -> Option<String> {
    c.prop(key)
        .and_then(|p| p.value.as_ref())
        .map(|v| v.trim().to_ascii_lowercase())
}

/// How many helpers deep a configuration is followed (`consumer_config` calling
/// `base_config` calling ..); deeper, or a cycle, stays unknown.
const MAX_HELPER_DEPTH: usize = 4;

/// Applies the client configurations crate functions return (`fn consumer_config(..)
/// -> ClientConfig`, a settings method) where they are called: a chain that goes on
/// from a helper's call (`consumer_config(&s).set(..).create()`) takes the helper's
/// settings, then its own, and starts where the helper's chain starts. A helper that
/// does not resolve to one function returning a configuration leaves the client
/// `dynamic` (silent), never guessed.
pub fn apply_config_helpers(krate: &mut Crate) {
    let mut updates = Vec::new();
    {
        let resolver = Resolver::new(krate);
        let mut memo = HashMap::new();
        for (fi, f) in krate.functions.iter().enumerate() {
            for (ci, c) in f.kafka_clients.iter().enumerate() {
                if c.from.is_some() {
                    let resolved = resolve_config(krate, &resolver, &mut memo, fi, c, 0);
                    updates.push((fi, ci, resolved));
                }
            }
        }
    }
    for (fi, ci, c) in updates {
        krate.functions[fi].kafka_clients[ci] = c;
    }
}

/// Topics subscribed on a client a crate function made and returned (a factory:
/// `let consumer = cfg.consumer()?; consumer.subscribe(&[..])`) are that client's.
pub fn apply_factory_topics(krate: &mut Crate) {
    if krate
        .functions
        .iter()
        .all(|f| f.made_client_topics.is_empty())
    {
        return;
    }
    let mut updates = Vec::new();
    {
        let resolver = Resolver::new(krate);
        for f in &krate.functions {
            for (callee, topics) in &f.made_client_topics {
                if let [g] = resolver.resolve_callee(f, callee).as_slice() {
                    if let Some(ci) = krate.functions[*g].returns_kafka_client {
                        updates.push((*g, ci as usize, topics.clone()));
                    }
                }
            }
        }
    }
    for (g, ci, topics) in updates {
        if let Some(c) = krate.functions[g].kafka_clients.get_mut(ci) {
            for t in topics {
                if !c.topics.contains(&t) {
                    c.topics.push(t);
                }
            }
        }
    }
}

/// `c` (configured in function `fi`) with the configuration of the helper it goes on
/// from, if any.
fn resolve_config(
    krate: &Crate,
    resolver: &Resolver,
    memo: &mut HashMap<usize, Option<KafkaClient>>,
    fi: usize,
    c: &KafkaClient,
    depth: usize,
) -> KafkaClient {
    let mut out = c.clone();
    let Some(callee) = out.from.take() else {
        return out;
    };
    let base = match resolver
        .resolve_callee(&krate.functions[fi], &callee)
        .as_slice()
    {
        [g] if depth < MAX_HELPER_DEPTH => helper_config(krate, resolver, memo, *g, depth + 1),
        _ => None,
    };
    let Some(base) = base else {
        out.dynamic = true;
        return out;
    };
    let mut props = base.props;
    let base_len = props.len();
    props.append(&mut out.props);
    let mut topics = base.topics;
    topics.append(&mut out.topics);
    KafkaClient {
        new_loc: base.new_loc,
        family: base.family,
        framework: base.framework || out.framework,
        dynamic: base.dynamic || out.dynamic,
        // The call site's settings come after the helper's.
        settled_from: if out.dynamic {
            base_len + out.settled_from
        } else {
            base.settled_from
        },
        // A setting the call site leaves out goes into the helper's chain, unless the
        // call site adds to it.
        insert: if c.props.is_empty() {
            base.insert
        } else {
            out.insert
        },
        library: base.library.or(out.library),
        props,
        topics,
        role: out.role,
        runs: out.runs,
        from: None,
    }
}

/// The configuration function `g` returns, its own helpers applied.
fn helper_config(
    krate: &Crate,
    resolver: &Resolver,
    memo: &mut HashMap<usize, Option<KafkaClient>>,
    g: usize,
    depth: usize,
) -> Option<KafkaClient> {
    if let Some(known) = memo.get(&g) {
        return known.clone();
    }
    let resolved = krate.functions[g]
        .returns_kafka_config
        .as_deref()
        .map(|c| resolve_config(krate, resolver, memo, g, c, depth));
    memo.insert(g, resolved.clone());
    resolved
}
