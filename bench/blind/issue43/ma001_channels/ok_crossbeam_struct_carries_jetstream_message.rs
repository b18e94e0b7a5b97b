// OK: the crossbeam channel carries an `Envelope` struct that holds the JetStream message itself;
// the worker thread writes the row and then acks that message (via the runtime handle), so the
// sender never acks before the effect ("the message or its ack handle moved into the channel").
use std::thread;

use async_nats::jetstream::{self, consumer::PullConsumer, Message};
use crossbeam_channel::{unbounded, Receiver};
use futures::StreamExt;
use rusqlite::{params, Connection};
use serde::Deserialize;
use tokio::runtime::Handle;

#[derive(Debug, Deserialize)]
struct FlagToggled {
    flag: String,
    enabled: bool,
}

struct Envelope {
    message: Message,
    flag: FlagToggled,
}

fn flag_writer(rx: Receiver<Envelope>, path: String, rt: Handle) {
    thread::spawn(move || {
        let conn = Connection::open(path).expect("open flags db");
        for env in rx.iter() {
            let written = conn.execute(
                "INSERT INTO flags (name, enabled) VALUES (?1, ?2) ON CONFLICT(name) DO UPDATE SET enabled = excluded.enabled",
                params![env.flag.flag, env.flag.enabled],
            );
            match written {
                Ok(_) => {
                    rt.block_on(env.message.ack()).expect("ack flag");
                }
                Err(err) => {
                    eprintln!("flag write failed, leaving for redelivery: {err}");
                    rt.block_on(env.message.ack_with(jetstream::AckKind::Nak(None))).expect("nak flag");
                }
            }
        }
    });
}

pub async fn consume(nats: async_nats::Client, path: String) -> anyhow::Result<()> {
    let (tx, rx) = unbounded::<Envelope>();
    flag_writer(rx, path, Handle::current());

    let consumer: PullConsumer = jetstream::new(nats)
        .get_stream("FLAGS")
        .await?
        .get_consumer("flag-store")
        .await?;
    let mut messages = consumer.messages().await?;
    while let Some(message) = messages.next().await {
        let message = message?;
        let flag: FlagToggled = serde_json::from_slice(&message.payload)?;
        tx.send(Envelope { message, flag })?;
    }
    Ok(())
}
