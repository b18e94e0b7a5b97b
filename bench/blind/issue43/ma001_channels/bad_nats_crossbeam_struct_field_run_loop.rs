// MA001: the JetStream consumer pushes each decoded event into a crossbeam channel whose receiver
// is held in the `Indexer` struct's field; `Indexer::run` loops over that field and writes the
// document. The pull loop acks the message right after the send, so the ack is not ordered after
// the worker's write: a crash in between loses the event.
use std::thread;

use async_nats::jetstream::{self, consumer::PullConsumer};
use crossbeam_channel::{bounded, Receiver, Sender};
use futures::StreamExt;
use rusqlite::{params, Connection};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct ArticlePublished {
    article_id: String,
    title: String,
    body: String,
}

struct Indexer {
    inbox: Receiver<ArticlePublished>,
    conn: Connection,
}

impl Indexer {
    fn new(inbox: Receiver<ArticlePublished>, path: &str) -> rusqlite::Result<Self> {
        Ok(Self { inbox, conn: Connection::open(path)? })
    }

    fn run(self) {
        while let Ok(article) = self.inbox.recv() {
            if let Err(err) = self.conn.execute(
                "INSERT INTO search_docs (article_id, title, body) VALUES (?1, ?2, ?3) ON CONFLICT(article_id) DO UPDATE SET title = excluded.title, body = excluded.body",
                params![article.article_id, article.title, article.body],
            ) {
                eprintln!("index write failed for {}: {err}", article.article_id);
            }
        }
    }
}

pub async fn consume(nats: async_nats::Client, index_path: &str) -> anyhow::Result<()> {
    let (tx, rx): (Sender<ArticlePublished>, Receiver<ArticlePublished>) = bounded(512);
    let indexer = Indexer::new(rx, index_path)?;
    thread::spawn(move || indexer.run());

    let consumer: PullConsumer = jetstream::new(nats)
        .get_stream("ARTICLES")
        .await?
        .get_consumer("search-indexer")
        .await?;
    let mut messages = consumer.messages().await?;

    while let Some(message) = messages.next().await {
        let message = message?;
        let article: ArticlePublished = serde_json::from_slice(&message.payload)?;
        tx.send(article)?;
        message.ack().await.map_err(|e| anyhow::anyhow!(e))?; //~ MA001
    }
    Ok(())
}
