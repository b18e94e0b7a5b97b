// MA008 (kafka-rust): `RequiredAcks::None` does not wait for the broker at all: a record the
// broker never wrote is reported as sent.
use kafka::producer::{Producer, Record, RequiredAcks};

fn main() {
    let mut producer = Producer::from_hosts(vec!["kafka:9092".to_owned()])
        .with_required_acks(RequiredAcks::None) //~ MA008
        .create()
        .expect("producer");
    for line in std::io::stdin().lines() {
        let line = line.expect("line");
        producer
            .send(&Record::from_value("clicks", line.as_bytes()))
            .expect("send");
    }
}
