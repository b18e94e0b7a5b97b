// MA001: the channel carries a `Job` struct that holds the Kafka message's key, payload and
// offset (a value derived from the message). The worker thread that owns the std::sync::mpsc
// receiver upserts the row but never commits offsets; the poll loop commits the next offset
// right after the send, before the worker's write: message lost on a crash in between.
use std::sync::mpsc;
use std::thread;

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::{Offset, TopicPartitionList};
use rdkafka::Message;
use rusqlite::{params, Connection};

struct Job {
    key: String,
    payload: Vec<u8>,
    partition: i32,
    offset: i64,
}

fn start_worker(rx: mpsc::Receiver<Job>, path: String) {
    thread::spawn(move || {
        let conn = Connection::open(path).expect("open");
        while let Ok(job) = rx.recv() {
            conn.execute(
                "INSERT INTO profiles (user_key, doc, src_partition, src_offset) VALUES (?1, ?2, ?3, ?4) ON CONFLICT(user_key) DO UPDATE SET doc = excluded.doc, src_partition = excluded.src_partition, src_offset = excluded.src_offset",
                params![job.key, job.payload, job.partition, job.offset],
            )
            .expect("upsert profile");
        }
    });
}

pub fn run(brokers: &str, path: String) -> anyhow::Result<()> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .set("group.id", "profile-sync")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.subscribe(&["profiles"])?;

    let (tx, rx) = mpsc::channel::<Job>();
    start_worker(rx, path);

    for result in consumer.iter() {
        let msg = result?;
        let key = match msg.key_view::<str>() {
            Some(Ok(k)) => k.to_owned(),
            _ => continue,
        };
        let job = Job {
            key,
            payload: msg.payload().unwrap_or_default().to_vec(),
            partition: msg.partition(),
            offset: msg.offset(),
        };
        tx.send(job)?;
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset(msg.topic(), msg.partition(), Offset::Offset(msg.offset() + 1))?;
        consumer.commit(&tpl, CommitMode::Sync)?; //~ MA001
    }
    Ok(())
}
