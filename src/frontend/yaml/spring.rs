//! Spring Boot `application*.yml`: `spring.kafka.consumer`, `.producer` and
//! `.streams` (Java client, offsets managed by the listener container). Typed keys
//! use Spring's relaxed names (`isolation-level`, `enable-auto-commit`,
//! `transaction-id-prefix`); `properties.*` (under the client or under
//! `spring.kafka`) carry raw Kafka keys. Nested and dotted spellings read alike.
//!
//! Profile documents (`---` with `spring.config.activate.on-profile`, or the older
//! `spring.profiles`) are merged over the file's default documents, as Spring does
//! (docs/what-is-analyzed.md): a setting of the default holds in every profile unless the profile
//! overrides it. Each configuration (the default, and each profile) yields its
//! clients; a client that is the same in several is one client active in all of them
//! ([`KafkaClient::runs`](crate::ir::KafkaClient)).

use super::tree::{Entry, Node};
use super::{flatten, holder_span, kafka_props, Ctx};
use crate::apis::Role;
use crate::ir::{ClientFamily, ConfigFormat, KafkaClient};

const ROLES: [(&str, Option<&str>); 3] = [
    ("consumer", Some(Role::KafkaConsumer.name())),
    ("producer", Some(Role::KafkaProducer.name())),
    // A Streams application both consumes and produces; as a consumer it reads
    // `read_committed` only with an exactly-once `processing.guarantee`.
    ("streams", Some(Role::KafkaConsumer.name())),
];

/// Flattened entries of one document.
type Flat<'a> = Vec<(String, &'a Entry)>;

/// The Spring clients of every document of one file.
pub fn lower_docs(docs: &[Node], ctx: &mut Ctx) {
    let mut defaults: Vec<(&Node, Flat)> = Vec::new();
    let mut profiles: Vec<(String, &Node, Flat)> = Vec::new();
    for doc in docs {
        let mut flat = Vec::new();
        flatten(doc, "", &mut flat);
        match activation(&flat) {
            Some(name) => profiles.push((name, doc, flat)),
            None => defaults.push((doc, flat)),
        }
    }
    let kafka = |flat: &Flat| flat.iter().any(|(p, _)| p.starts_with("spring.kafka."));
    if !profiles.iter().any(|(_, _, f)| kafka(f)) {
        // No profile changes a client: each document on its own, as written.
        for (doc, flat) in &defaults {
            if kafka(flat) {
                claim(flat, ctx);
                for client in clients(flat, doc, ctx) {
                    ctx.push(client, ConfigFormat::Spring);
                }
            }
        }
        return;
    }
    let base: Flat = defaults
        .iter()
        .flat_map(|(_, f)| f.iter().cloned())
        .collect();
    let mut runs: Vec<(String, Flat)> = vec![(String::new(), base.clone())];
    for (name, _, flat) in &profiles {
        let over: Flat = match runs.iter().position(|(r, _)| r == name) {
            Some(i) => merge(&runs[i].1, flat),
            None => merge(&base, flat),
        };
        match runs.iter_mut().find(|(r, _)| r == name) {
            Some(run) => run.1 = over,
            None => runs.push((name.clone(), over)),
        }
    }
    let flats = defaults.iter().map(|(_, f)| f);
    for flat in flats.chain(profiles.iter().map(|(_, _, f)| f)) {
        if kafka(flat) {
            claim(flat, ctx);
        }
    }
    let Some(doc) = docs.first() else { return };
    let mut found: Vec<KafkaClient> = Vec::new();
    for (name, flat) in &runs {
        if !kafka(flat) {
            continue;
        }
        for client in clients(flat, doc, ctx) {
            match found.iter_mut().find(|c| same_client(c, &client)) {
                Some(c) => c.runs.push(name.clone()),
                None => {
                    let mut client = client;
                    client.runs = vec![name.clone()];
                    found.push(client);
                }
            }
        }
    }
    for client in found {
        ctx.push(client, ConfigFormat::Spring);
    }
}

/// The profile a document is active in: `spring.config.activate.on-profile` (and
/// `on-cloud-platform`), or the older `spring.profiles` when it is a name or a list
/// (`spring.profiles.active` selects profiles, it does not activate the document).
fn activation(flat: &Flat) -> Option<String> {
    let text = |path: &str| {
        flat.iter().find(|(p, _)| p == path).and_then(|(_, e)| {
            let v = &e.value;
            if let Some(s) = v.as_str() {
                return Some(s.trim().to_string());
            }
            let items: Vec<&str> = v.items().iter().filter_map(Node::as_str).collect();
            (!items.is_empty()).then(|| items.join(","))
        })
    };
    let profile = text("spring.config.activate.on-profile").or_else(|| text("spring.profiles"));
    let cloud = text("spring.config.activate.on-cloud-platform").map(|c| format!("cloud:{c}"));
    match (profile, cloud) {
        (Some(p), Some(c)) => Some(format!("{p}+{c}")),
        (p, c) => p.or(c),
    }
}

/// `over` merged over `base`: every entry of `base` whose path `over` does not set,
/// then the entries of `over` (later entries win).
fn merge<'a>(base: &Flat<'a>, over: &Flat<'a>) -> Flat<'a> {
    let mut out: Flat = base
        .iter()
        .filter(|(p, _)| !over.iter().any(|(q, _)| q == p))
        .cloned()
        .collect();
    out.extend(over.iter().cloned());
    out
}

fn claim(flat: &Flat, ctx: &mut Ctx) {
    for (p, e) in flat {
        if p == "spring.kafka" || p.starts_with("spring.kafka.") {
            ctx.claim(&e.value);
        }
    }
}

/// Two descriptions of one client (ignoring the configurations they are active in).
fn same_client(a: &KafkaClient, b: &KafkaClient) -> bool {
    a.new_loc == b.new_loc && a.role == b.role && a.props == b.props && a.topics == b.topics
}

/// The clients of one configuration's entries.
fn clients(flat: &Flat, doc: &Node, ctx: &Ctx) -> Vec<KafkaClient> {
    let mut out = Vec::new();
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
        // The last key holding the block: a profile's own block, when it has one.
        let holding = flat.iter().rev().find(|(p, _)| *p == block).map(|(_, e)| e);
        let holder = holding
            .map(|e| e.key.span)
            .unwrap_or_else(|| holder_span(Some(&own[0].1.key), doc));
        let mut client = ctx.client(holder, ClientFamily::Java, true);
        client.role = role.map(str::to_string);
        if let Some(e) = holding.filter(|e| e.value.is_map()) {
            client.insert = ctx.insertion(Some(&e.key), &e.value, typed_keys(name, &e.value));
        }
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
            // A typed key bound to a Java enum takes its value leniently, as Spring's
            // binder does (`read-uncommitted` is `READ_UNCOMMITTED`).
            if let Some(prop) = (client.props.last_mut())
                .filter(|p| key == rel && ENUM_KEYS.contains(&p.key.as_str()))
            {
                if let Some(v) = prop.value.as_mut() {
                    *v = v.trim().to_ascii_lowercase().replace('-', "_");
                }
            }
        }
        if name == "producer" {
            let topic = |p: &str| {
                matches!(
                    p,
                    "spring.kafka.template.default-topic" | "spring.kafka.template.defaultTopic"
                )
            };
            if let Some((_, e)) = flat.iter().rev().find(|(p, _)| topic(p)) {
                client.topics = kafka_props::topics(&e.value);
            }
        }
        out.push(client);
    }
    out
}

/// Kafka keys whose Spring typed property is a Java enum (`IsolationLevel`), bound
/// leniently: case and `-`/`_` do not matter.
const ENUM_KEYS: &[&str] = &["isolation.level"];

/// Spring's typed names of the Kafka keys a fix may add to a client's block (the
/// others belong under `properties`, which a fix does not add), in the block's
/// spelling: kebab case (`isolation-level`), or camel case when its keys are.
const TYPED: &[(&str, &str, &str)] = &[
    ("consumer", "isolation.level", "isolation-level"),
    ("consumer", "enable.auto.commit", "enable-auto-commit"),
    ("producer", "acks", "acks"),
];

fn typed_keys(role: &str, block: &Node) -> super::insert::Keys {
    let camel = block.entries().iter().any(|e| {
        e.key
            .as_str()
            .is_some_and(|k| k.chars().any(|c| c.is_ascii_uppercase()) && !k.contains('-'))
    });
    let keys = TYPED
        .iter()
        .filter(|(r, _, _)| *r == role)
        .map(|(_, k, w)| {
            let w = if camel {
                let mut parts = w.split('-');
                let head = parts.next().unwrap_or("").to_string();
                parts.fold(head, |mut acc, p| {
                    let mut cs = p.chars();
                    if let Some(c) = cs.next() {
                        acc.push(c.to_ascii_uppercase());
                        acc.push_str(cs.as_str());
                    }
                    acc
                })
            } else {
                w.to_string()
            };
            (k.to_string(), w)
        })
        .collect();
    super::insert::Keys { keys, prefix: None }
}
