//! Shared questions about Kafka clients (rdkafka `ClientConfig` chains and YAML
//! client maps): what a client is, and what its settings amount to. Read by the
//! rules and the driver (which attributes topics sent to producers).

use crate::apis::Role;
use crate::ir::KafkaClient;

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
