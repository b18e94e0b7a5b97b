// MA008 (kafka-rust): `RequiredAcks::One` confirms a send once the partition leader has the
// record; if the leader fails before a follower copies it, the audit event is gone although
// `send` returned `Ok`.
use std::time::Duration;

use kafka::producer::{Producer, Record, RequiredAcks};

pub fn audit_producer(brokers: Vec<String>) -> kafka::Result<Producer> {
    Producer::from_hosts(brokers)
        .with_ack_timeout(Duration::from_secs(5))
        .with_required_acks(RequiredAcks::One) //~ MA008
        .create()
}

pub fn publish_audit(producer: &mut Producer, entry: &str) -> kafka::Result<()> {
    producer.send(&Record::from_value("audit.entries", entry.as_bytes()))
}
