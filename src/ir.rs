//! The delivery model: what front ends produce and rules read.
//!
//! Each function, method, closure and async block of the analyzed Rust code is
//! lowered to a tree of [`Node`]s: ordered delivery [`Event`]s (receive, begin,
//! write, commit, ack, publish, ...) inside the control structure around them
//! (sequence, branches, loops, closures, exits). Values (locals, parameters,
//! fields) are numbered per function; events name the values they act on, so the
//! analysis can tell *which* transaction a write goes to and *which* message an ack
//! confirms. Anything the front end cannot resolve is left out or marked unknown:
//! rules stay silent on what the model does not know.

use std::sync::Arc;

use crate::diagnostic::Span;

mod clients;
mod dedup;
mod pass;
mod windows;
pub use clients::*;
pub use dedup::{DedupFacts, DedupId};
pub use pass::{PassIdFlow, PollLoop};
pub use windows::*;

/// A value local to one function: a binding, a parameter, `self`, a field path.
pub type ValueId = u32;

/// Where something is written: file (display path) and span.
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Loc {
    pub path: Arc<str>,
    pub span: Span,
}

/// What a SQL string does, from parsing it (sqlparser); `Unknown` when it does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SqlKind {
    Read,
    Write,
    Begin,
    Commit,
    Rollback,
    Unknown,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlFacts {
    pub kind: SqlKind,
    /// Statement keyword for messages: `INSERT`, `UPDATE`, ...
    pub verb: String,
    /// Tables written (lower case, unqualified).
    pub tables: Vec<String>,
    /// `ON CONFLICT DO NOTHING`, `INSERT OR IGNORE`, `INSERT IGNORE`, Redis `SET NX`:
    /// the statement is a claim.
    pub ignores_conflict: bool,
    /// `ON CONFLICT … DO UPDATE`, `ON DUPLICATE KEY UPDATE`, `INSERT OR REPLACE`.
    pub upsert: bool,
    pub returning: bool,
    /// `SET n = n + …`: the new value depends on the old one (not idempotent).
    pub self_referencing: bool,
    /// The statement claims its own dedup record in a CTE before its effect.
    pub guarded: bool,
    /// Number of columns an INSERT writes data to: those it names, less those a
    /// single `VALUES` row sets to a constant (0 when unknown or not an INSERT).
    pub columns: usize,
    /// The INSERT's rows come from a query or from several `VALUES` rows
    /// (`INSERT … SELECT … FROM UNNEST($1)`): a batch, not one message's claim. An
    /// `UPDATE` or `DELETE` whose `WHERE` picks rows from a set of keys (`id =
    /// ANY($1)`, `id IN (…)`), or that has no `WHERE`.
    pub many_rows: bool,
    /// An `UPDATE` that marks its rows done (`SET status = 'sent'`, `sent_at = now()`,
    /// `processed = true`) and records no failure (no error, attempt or retry column).
    pub marks_done: bool,
    /// A `DELETE` whose `WHERE` keeps only rows already marked done (`status =
    /// 'complete'`, `sent = true`, `sent_at IS NOT NULL`, with anything else ANDed): a
    /// clean-up of retired rows, not a record of the rows a relay read.
    pub clears_done: bool,
    /// A `DELETE` whose `WHERE` compares a column with the current time (`seen_at <
    /// now() - interval '7 days'`, `expires_at < unixepoch()`): a sweep of expired
    /// rows, by their age.
    pub sweeps_by_age: bool,
    /// The INSERT's rows carry their own unique key (a MongoDB document's `_id`): a
    /// repeat is refused by the key, not applied twice.
    pub keyed: bool,
}

impl SqlFacts {
    /// A dedup claim by shape: an insert of one row that ignores conflicts and writes
    /// only a key (and perhaps a timestamp), as opposed to an idempotent insert of
    /// business data, or of many rows (lookup rows made sure of in bulk).
    pub fn is_claim_shape(&self) -> bool {
        self.ignores_conflict && (1..=2).contains(&self.columns) && !self.many_rows
    }
}

impl SqlFacts {
    pub fn unknown() -> SqlFacts {
        SqlFacts {
            kind: SqlKind::Unknown,
            verb: String::new(),
            tables: Vec::new(),
            ignores_conflict: false,
            upsert: false,
            returning: false,
            self_referencing: false,
            guarded: false,
            columns: 0,
            many_rows: false,
            marks_done: false,
            clears_done: false,
            sweeps_by_age: false,
            keyed: false,
        }
    }

    /// ``INSERT into `orders` ``, `write`: how messages name the statement.
    pub fn describe(&self) -> String {
        let prep = match self.verb.as_str() {
            "INSERT" => "into",
            "DELETE" => "from",
            _ => "of",
        };
        match (self.verb.is_empty(), self.tables.first()) {
            (false, Some(t)) => format!("{} {prep} {}", self.verb, crate::diagnostic::quoted(t)),
            (false, None) => self.verb.clone(),
            _ => "write".into(),
        }
    }
}

/// The kind of an external (non-DB, non-broker) effect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExternalKind {
    Http,
    Email,
    Payment,
    /// A cache entry (a value written with an expiry): its failure loses nothing of
    /// the message, and it is no business change.
    Cache,
    /// A write to a database outside SQL (DynamoDB), durable when the call returns:
    /// a business change like an autocommit write (named by its store).
    Store(String),
    Other(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// A message obtained from a consumer API. `element`: one item of a received batch.
    Receive {
        msg: ValueId,
        element: bool,
        /// The Kafka client the message comes from, when known: configured in this
        /// function, or by the crate function that returned the consumer.
        client: Option<ClientRef>,
    },
    /// Progress recorded: ack, offset commit or store, SQS delete, XACK.
    /// `msg` is the message confirmed, when known.
    Ack {
        msg: Option<ValueId>,
        /// A Kafka consumer's offset commit or store (as opposed to a per-message ack).
        offsets: bool,
        /// With `offsets`: a store for the client's auto commit, not a commit.
        store: bool,
    },
    /// Negative acknowledgement (redelivery requested).
    Nack {
        msg: Option<ValueId>,
    },
    /// A DB transaction begins; `tx` is the value that holds it.
    Begin {
        tx: ValueId,
        /// The begin call made the value (`pool.begin()`), rather than turning an
        /// existing connection into a transaction (`conn.execute("BEGIN")`).
        fresh: bool,
        /// The transaction value is used for something besides commit or rollback.
        used: bool,
    },
    Commit {
        tx: ValueId,
        /// The commit also acks the message (sqlxmq `complete_with_transaction`): the
        /// transaction's effects and the ack are atomic, none is repeated.
        acks: bool,
    },
    Rollback {
        tx: ValueId,
    },
    /// A DB write on `target` (a transaction, a connection or a pool; `None` = unknown).
    Write {
        target: Option<ValueId>,
        sql: SqlFacts,
        /// A claim (`ON CONFLICT DO NOTHING`) whose result is discarded.
        unchecked: bool,
        /// The values the statement is written with, and where each comes from as
        /// this function sees it (a parameter's origin is the caller's argument's).
        keyed_by: Vec<(ValueId, Origin)>,
        /// The tables whose rows, read by a query of the same function, the values
        /// it is written with are taken from (a relay's cursor set to the last row's
        /// id; docs/what-is-analyzed.md, "Outbox").
        rows: Vec<String>,
        /// The target is a pool or a connection (or another store, like Redis): unless
        /// a transaction is open on it, the write commits by itself.
        autocommit: bool,
    },
    /// Follows a write whose call keeps rows in a client-side buffer (the packs'
    /// `buffering`): `sent: false`, the rows written may stay buffered after it
    /// (an ack that follows may confirm rows not sent yet); `sent: true`, the call
    /// sends every row buffered so far.
    Buffered {
        sent: bool,
    },
    /// A query that only reads rows of `tables` (`SELECT … FROM outgoing_events`).
    /// Not a delivery event: it tells what a relay publishes (docs/what-is-analyzed.md, "Outbox").
    Read {
        tables: Vec<String>,
    },
    /// A publish to a broker; `non_idempotent`: applying it twice does harm (Redis `XADD`).
    Publish {
        non_idempotent: bool,
        /// Into a capped log (a Redis stream trimmed by `MAXLEN`/`MINID`): a lossy log
        /// by design, which no delivery guarantee rests on.
        capped: bool,
        /// For publishes that return a broker confirmation (lapin's
        /// `PublisherConfirm`): whether it is looked at (`Some(false)`: awaited once
        /// and discarded, or bound and never used).
        confirm: Option<bool>,
        /// The channel (or client) published on, when known.
        channel: Option<ValueId>,
        /// The tables whose rows, read by a query of the same function, the published
        /// values (payload, key, record) are taken from (a relay publishing what it
        /// read; docs/what-is-analyzed.md, "Outbox").
        rows: Vec<String>,
    },
    /// An HTTP call, e-mail, payment, file or store write outside the database.
    External {
        kind: ExternalKind,
        non_idempotent: bool,
        /// The request carries an idempotency-key header (`Idempotency-Key`).
        idempotency_key: bool,
    },
    /// A fresh id (`Uuid::new_v4()`), bound to `binding` when known.
    IdGen {
        binding: Option<ValueId>,
    },
    BrokerBegin,
    BrokerCommit,
    BrokerAbort,
    BrokerOffsets,
    /// A value sent on an in-process channel (`tx.send(job)`): the loops that receive
    /// from a channel process it (docs/what-is-analyzed.md, "Work handed to another task").
    /// `chan`: what identifies the channel (`@site` of the `channel()` call that made
    /// the sender, `T:Job` for its element type); empty when nothing is known.
    ChannelSend {
        chan: Vec<String>,
    },
    /// A receive from an in-process channel (`rx.recv()`): a loop holding one is a
    /// worker loop. `chan` as for a send.
    ChannelRecv {
        chan: Vec<String>,
    },
    /// A RabbitMQ channel is opened (`create_channel`): `channel` is the value made.
    ChannelOpen {
        channel: ValueId,
    },
    /// A channel is put in confirm mode (`confirm_select`).
    ConfirmSelect {
        channel: Option<ValueId>,
    },
    /// The publisher confirms still pending on a channel are awaited
    /// (`wait_for_confirms`), so confirmations dropped before it are checked.
    ConfirmsWaited {
        channel: Option<ValueId>,
    },
    /// A call to a function of the same crate, resolved by the analysis.
    Call(Call),
    /// A call of a local value or parameter (`handler(payload)`): runs the closure
    /// the caller passed for it, when known.
    CallValue {
        callee: ValueId,
    },
    /// The result of the claim written at `claim` is looked at here (a bound claim's
    /// first use): from here on the claim gates what follows.
    ClaimTested {
        claim: Loc,
    },
    /// An outcome whose error a test handled and went on (`if let Err(e) = &res {
    /// log }`) is propagated after all (`res?`, `return res`): on the `err` edge the
    /// error handled at one of `handled` is returned; on the other edge the
    /// operation succeeded.
    ErrorPropagated {
        handled: Vec<Loc>,
        err: bool,
    },
    /// Between `on` and the event with `on: false`, the statement uses a collection
    /// filled only where operations succeeded (`Ok(_) => sent.push(id)`): for the
    /// failures handled at `handled`, its writes name only rows that succeeded.
    RowsGated {
        handled: Vec<Loc>,
        on: bool,
    },
    /// The function returns `false` here: a failure the path carries (a retry loop
    /// that ran out of attempts) is told to a caller that reads the result (`if
    /// push(..).await { ack } else { nack }`), as a `false` returned in the error's
    /// own arm tells it.
    FailureTold,
    /// The error edge of `op?` on an effect (a write, a commit, a publish, an external
    /// call): on this edge the operation at the event's place failed. `what` is the
    /// failed event's kind (what it would have done).
    Failed {
        what: Box<EventKind>,
    },
    /// The error of the operation just before is handled here and the code goes on:
    /// `let _ =`, `.ok()`, `.unwrap_or_default()`, `.unwrap_or_else(..)`, the body of
    /// `if let Err(..)`, a catch-all `Err` arm. On this path the operation may have
    /// failed (an ack after a failure). `told`: the handling gives back a value that
    /// says so (`Err(_) => return false`, `=> None`), which a caller may test; `Ok(())`
    /// or `()` after logging tells nothing.
    ErrorIgnored {
        told: bool,
        /// The marker opens the failure side of a branch (an `Err` arm, an `if let
        /// Err` body, a `let Ok(..) else`): there the operation did fail. Otherwise
        /// (`let _ =`, `.ok()`) it may have.
        arm: bool,
    },
    /// A batch call (at the event's place) whose response carries per-entry failures
    /// that nothing reads to act on them (the response dropped, or only logged): on
    /// every path after it, some entries may have failed unseen. `what` is the batch
    /// call's kind (what it would have done).
    EntriesUnread {
        what: Box<EventKind>,
        /// The unread result is one send's delivery report (a delivery future
        /// dropped unawaited, a report served only by a later `poll` / `flush`),
        /// not a batch's per-entry failures. A `ConfirmsWaited` after it serves it.
        delivery: bool,
    },
    /// The side of a test of a batch call's failed entries (at the event's place)
    /// where some failed (`if out.failed_entry_count() > 0 { … }`): a write there
    /// records the failure (compensation).
    EntriesFailed,
    /// `handle.await` on the handle of a spawned task; `None`: possibly any task
    /// (`join_all(handles).await`, a handle taken from a collection).
    AwaitHandle {
        handle: Option<ValueId>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub kind: EventKind,
    pub loc: Loc,
    /// The call as written, shortened: `consumer.commit_message`, `tx.commit()`.
    pub text: String,
    /// How messages name the event: `offset committed`, `message deleted`.
    pub describe: String,
}

/// Where the Kafka client a message is received from was configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientRef {
    /// In this function (`Function::kafka_clients`).
    Here(u32),
    /// In the crate function that made the consumer (a factory), which returns its
    /// client `Function::returns_kafka_client`.
    Made(Callee),
}

/// How a called function is named at the call site.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum Callee {
    /// `foo(..)`, `db::foo(..)`, `Self::foo(..)`, `Repo::foo(..)`: the path segments.
    Path(Vec<String>),
    /// `x.foo(..)`, with the receiver's declared type name when known.
    Method {
        name: String,
        receiver_type: Option<String>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    pub callee: Callee,
    /// The caller's value for the transaction the callee returns (`-> sqlx::
    /// Transaction<..>`, through `Result`/`Option`): the one the callee began and
    /// left open is that value's.
    pub returns_tx: Option<ValueId>,
    /// The receiver value (method calls), then the arguments, as values when they are.
    pub receiver: Option<ValueId>,
    pub args: Vec<Option<ValueId>>,
    /// Closures (and async blocks) passed as arguments, by argument index: they run
    /// where the callee calls the parameter, not at the call.
    pub closures: Vec<(usize, Node)>,
    /// The call's result is `?`-ed: an error return of the callee exits the caller too.
    pub propagates_err: bool,
    /// The call's result is discarded (or bound and never used).
    pub result_unused: bool,
    /// The call's result is not read as a batch response is read to act on its
    /// failed entries (dropped, `?`-ed, matched with `Ok(_)`, only logged).
    pub entries_unread: bool,
    /// The call's result is dropped after at most one await (`helper(..).await?;`,
    /// `let _c = helper(..).await?;`): a pending confirmation it returns is never
    /// awaited.
    pub confirm_unread: bool,
    /// Where each argument comes from, as the caller sees it (parallel to `args`).
    pub origins: Vec<Origin>,
    /// The tables whose rows, read by a query of the caller, each argument is taken
    /// from (parallel to `args`).
    pub rows: Vec<Vec<String>>,
    /// Whether each argument is a store whose writes commit by themselves (a pool, a
    /// connection, a key store's connection: `Some(true)`) or a transaction
    /// (`Some(false)`), as the caller sees it; `None` when not known (parallel to
    /// `args`): a callee's writes on that parameter commit so, unless a transaction
    /// is open on it.
    pub stores: Vec<Option<bool>>,
}

/// Where a value comes from, as far as the function that holds it sees.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Origin {
    #[default]
    Unknown,
    /// A literal or a constant of the code.
    Constant,
    /// Taken from a received message.
    Message,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitKind {
    /// `return`, or the error edge of `?` (`err: Some(true)`).
    Return {
        err: Option<bool>,
    },
    Break {
        label: Option<u32>,
    },
    Continue {
        label: Option<u32>,
    },
    /// `panic!`, `unreachable!`, `std::process::exit`: the path ends.
    Abort,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClosureRun {
    /// Runs where it is written (`retry(|| …)`, an `async` block that is awaited).
    Now,
    /// Spawned: not ordered before the code after it (`tokio::spawn`).
    Later,
    /// A handler callback (`set_delegate`, `try_for_each` over a message stream):
    /// analyzed as a handler of its own; its first parameter is a received message.
    Callback,
    /// The body of `transaction(|tx| …)`: begins before, commits after on success.
    Transaction,
    /// A future run beside others (`join!`, `try_join!`): analyzed on its own, as
    /// a callback is, but it is no handler (it receives nothing).
    Concurrent,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    Seq(Vec<Node>),
    /// Alternatives: `if`/`else`, `match` arms, the two edges of `?`.
    Branch(Vec<Node>),
    /// A loop body; the only ways out are `Exit` nodes (`break`, or the loop
    /// condition failing, lowered as a branch to `break`).
    Loop {
        body: Box<Node>,
        label: Option<u32>,
        /// A `for` over the items of a collection (not over a range of attempts): each
        /// iteration handles another item, and what an item's failure leaves stands for
        /// a commit of the whole batch after the loop (an ack after a failure).
        each: bool,
    },
    Closure {
        body: Box<Node>,
        run: ClosureRun,
        /// The closure's first parameter (the message of a callback, the tx of a transaction).
        param: Option<ValueId>,
        /// The value holding the spawned task's handle.
        handle: Option<ValueId>,
        loc: Loc,
        text: String,
    },
    Exit(ExitKind),
    Event(Event),
    /// `if let Err(e) = handle(..).await { … }` / `match handle(..).await { Ok(..) => …,
    /// Err(..) => … }`: the arms taken when the call in `scrutinee` succeeds or fails,
    /// so a callee's success path (its commit) does not reach its caller's error arm.
    ResultBranch {
        scrutinee: Box<Node>,
        ok: Box<Node>,
        err: Box<Node>,
    },
}

impl Node {
    pub fn is_empty(&self) -> bool {
        matches!(self, Node::Seq(v) if v.is_empty())
    }

    /// The nodes directly inside this one (closures passed to calls included).
    pub fn children(&self) -> Vec<&Node> {
        match self {
            Node::Seq(v) | Node::Branch(v) => v.iter().collect(),
            Node::Loop { body, .. } | Node::Closure { body, .. } => vec![body],
            Node::ResultBranch { scrutinee, ok, err } => vec![scrutinee, ok, err],
            Node::Event(Event {
                kind: EventKind::Call(c),
                ..
            }) => c.closures.iter().map(|(_, n)| n).collect(),
            Node::Event(_) | Node::Exit(_) => Vec::new(),
        }
    }

    /// Every event in the tree, depth first.
    pub fn events(&self) -> Vec<&Event> {
        self.each_event().collect()
    }

    /// The events of [`Node::events`], one at a time: a search that stops early
    /// neither walks the rest nor collects the whole tree.
    pub fn each_event(&self) -> EventIter<'_> {
        EventIter { stack: vec![self] }
    }
}

/// The events of a tree, depth first ([`Node::each_event`]).
pub struct EventIter<'a> {
    stack: Vec<&'a Node>,
}

impl<'a> Iterator for EventIter<'a> {
    type Item = &'a Event;

    fn next(&mut self) -> Option<&'a Event> {
        // The order of `children`, pushed in reverse without a vector per node.
        while let Some(n) = self.stack.pop() {
            match n {
                Node::Seq(v) | Node::Branch(v) => self.stack.extend(v.iter().rev()),
                Node::Loop { body, .. } | Node::Closure { body, .. } => self.stack.push(body),
                Node::ResultBranch { scrutinee, ok, err } => {
                    self.stack.extend([&**err, &**ok, &**scrutinee]);
                }
                Node::Event(e) => {
                    if let EventKind::Call(c) = &e.kind {
                        self.stack.extend(c.closures.iter().rev().map(|(_, n)| n));
                    }
                    return Some(e);
                }
                Node::Exit(_) => {}
            }
        }
        None
    }
}

/// Table names that mark dedup records and outbox rows (docs/what-is-analyzed.md plus the config).
#[derive(Clone, Debug, Default)]
pub struct Tables {
    pub dedup: Vec<String>,
    pub outbox: Vec<String>,
    /// Tables the analyzed schema files give a unique business key (sorted).
    pub unique: Vec<String>,
}

impl Tables {
    /// Some table written has a unique business key in the analyzed schema: a
    /// repeated insert is refused, not applied twice.
    pub fn has_unique_key(&self, tables: &[String]) -> bool {
        tables
            .iter()
            .any(|t| self.unique.binary_search(&t.to_ascii_lowercase()).is_ok())
    }

    pub fn is_dedup(&self, t: &str) -> bool {
        let t = t.to_ascii_lowercase();
        self.dedup.iter().any(|d| d.eq_ignore_ascii_case(&t))
            || t.starts_with("processed")
            || t.starts_with("dedup")
            || t.starts_with("idempotency")
            || t == "inbox"
            || t.ends_with("_inbox")
            || t == "done"
            || t.ends_with("_seen")
    }

    /// A table that holds a relay's or tailer's position (the block, LSN, offset or
    /// sequence number it has published up to) by its name: a `cursor`, `checkpoint`,
    /// `watermark`, `lsn`, `offset(s)` or `progress` word, or a `position` word that
    /// is not the whole name (`cdc_position`; `positions` alone may be a ledger's).
    pub fn is_cursor(&self, t: &str) -> bool {
        let t = t.to_ascii_lowercase();
        let words: Vec<&str> = t.split(['_', '.']).collect();
        words.iter().any(|w| {
            matches!(
                *w,
                "cursor"
                    | "cursors"
                    | "checkpoint"
                    | "checkpoints"
                    | "watermark"
                    | "watermarks"
                    | "lsn"
                    | "offset"
                    | "offsets"
                    | "progress"
            ) || (matches!(*w, "position" | "positions") && words.len() > 1)
        })
    }

    pub fn is_outbox(&self, t: &str) -> bool {
        let t = t.to_ascii_lowercase();
        self.outbox.iter().any(|d| d.eq_ignore_ascii_case(&t))
            || t.starts_with("outbox")
            || t.ends_with("_outbox")
    }
}

/// A fresh id that reaches what a retried step sends (a fresh id per attempt).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct IdFlow {
    /// Where the id is generated (`Uuid::new_v4()`), and the call as written.
    pub idgen: Loc,
    pub idgen_text: String,
    /// The call it flows into (a publish, a write, a request) and how it reads.
    pub sink: Loc,
    pub sink_text: String,
    /// The retry loop or closure both sit in; `None`: a handler run once per
    /// delivery that mints the id into its dedup record.
    pub retry: Option<(Loc, String)>,
    /// The sink is a call into the crate: it counts only if that function sends,
    /// writes or publishes something (a helper that only logs does not).
    pub sink_call: Option<Callee>,
    /// Where the id's binding can move to make it once, before the retry: set when
    /// it is a single `let` at the top of the retry loop or closure whose value is
    /// the generator call alone, using nothing bound inside.
    pub hoist: Option<Hoist>,
}

/// Moving a fresh id's `let` statement out of a retry (an unsafe fix, docs/getting-started.md): the
/// statement's lines are removed and `text` is inserted at `before`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct Hoist {
    /// The statement's whole line, its indentation and line break included.
    pub remove: Loc,
    /// The start of the line of the statement that holds the retry (empty).
    pub before: Loc,
    /// The statement as it reads there: the indentation of that line, the
    /// statement, the line break.
    pub text: String,
}

/// A channel made by a simple `let` statement of the function's own body
/// (`let channel = conn.create_channel().await?;`, not in a closure or an async
/// block, the `?` directly on the awaited call, the statement alone on its lines),
/// and what the pack says puts a channel in confirm mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfirmAt {
    /// The call that makes the channel (its `ChannelOpen` event's place).
    pub open: Loc,
    /// The name the statement binds.
    pub binding: String,
    /// An empty span at the start of the line after the statement.
    pub after: Loc,
    /// The statement's indentation and the line break that ends it.
    pub indent: String,
    pub newline: String,
    /// The function's declared return type is a `Result` (any path ending in
    /// `Result`, not `Option`, not `()`).
    pub returns_result: bool,
    /// The pack's statement (`{channel}` and `{options}` to fill) and the path of
    /// its option type.
    pub statement: String,
    pub options: String,
    /// How the option type's name reaches the function's module.
    pub import: OptionsImport,
}

/// How a type's name can be written in a module (the option type of
/// [`ConfirmAt`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptionsImport {
    /// A `use` of the module's top level brings it in already (by name, a glob, or a
    /// list holding it).
    InScope,
    /// A `use` list of its module (`use m::{A, B};`) can take it: insert `text` at
    /// `at` (keeping the list sorted when it was).
    Add { at: Loc, text: String },
    /// No such list: write the full path.
    FullPath,
}

/// A confirmable publish whose statement awaits it once (`….await?;`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfirmAwait {
    /// The publish call (its event's place).
    pub publish: Loc,
    /// An empty span just after the statement's `?`.
    pub at: Loc,
}

/// A lowered function or method.
#[derive(Clone, Debug)]
pub struct Function {
    /// `handle`, `Worker::handle`.
    pub name: String,
    pub ident: String,
    /// The `impl` type (`Worker`) for methods.
    pub self_type: Option<String>,
    /// The trait implemented, for trait impls.
    pub trait_name: Option<String>,
    /// Module path inside the crate, from the file's location (`db`, `handlers::orders`).
    pub module: Vec<String>,
    pub loc: Loc,
    /// The whole item, from `fn` to the closing brace (what a change must touch to
    /// touch this function: the checklist's `--diff-base` scope).
    pub extent: Loc,
    /// `self` first for methods, then the parameters in order (`None` for patterns).
    pub params: Vec<Option<ValueId>>,
    /// A parameter holds a message of a consumer API (`delivery: Delivery`): the
    /// function handles one it was given.
    pub takes_message: bool,
    pub has_self: bool,
    pub body: Node,
    /// Names of values, for messages (`tx`, `self.pool`).
    pub value_names: Vec<String>,
    /// Fields of values, as (value, field name, the field's value): read (`job.write`,
    /// `let InFlight { write, .. } = job`) or given by a struct literal the value was
    /// bound to (`let job = InFlight { delivery, write }`). A callee reading a field of
    /// a parameter reads the caller's value of the argument's field.
    pub fields: Vec<(ValueId, String, ValueId)>,
    /// Fresh ids that reach what a retried step sends.
    pub id_flows: Vec<IdFlow>,
    /// Fresh ids minted outside any retry into a send, and the loops that run pass
    /// after pass: a relay's re-read of unsent rows is a retry of each (a fresh id per attempt).
    pub pass_id_flows: Vec<PassIdFlow>,
    pub poll_loops: Vec<PollLoop>,
    /// The retry scopes of the function (retry loops, closures given to retry
    /// helpers) with what they run: a function they call runs once per attempt.
    pub retry_bodies: Vec<PollLoop>,
    /// Fresh ids carried into a send's dedup field, and what reaches one (a fresh id per delivery).
    pub dedup: DedupFacts,
    /// Claims whose result the function returns to its caller (whether the claim gates
    /// the effect is checked at the caller).
    pub returns_claims: Vec<Loc>,
    /// Batch calls (docs/what-is-analyzed.md, batch calls with per-entry results) whose response the
    /// function returns to its caller (whether its failed entries are acted on is
    /// checked at the caller).
    pub returns_batches: Vec<Loc>,
    /// Confirmable publishes (lapin's `basic_publish`) whose pending confirmation the
    /// function returns to its caller, awaited once (whether it is awaited is checked
    /// at the caller).
    pub returns_confirms: Vec<Loc>,
    /// Confirmable publishes whose confirmation is awaited and then let go on a side
    /// where the broker did not take the message (a `Nack` or `NotRequested` arm
    /// that logs and goes on): the confirmation is requested, never checked.
    pub confirms_ignored: Vec<Loc>,
    /// Kafka clients configured in this function.
    pub kafka_clients: Vec<KafkaClient>,
    /// The one of `kafka_clients` the function returns (a consumer factory).
    pub returns_kafka_client: Option<u32>,
    /// The client configuration the function returns unmade (a `ClientConfig` helper:
    /// `fn consumer_config(..) -> ClientConfig`), applied where it is called.
    pub returns_kafka_config: Option<Box<KafkaClient>>,
    /// The packs whose broker entries matched calls in this function (`aws_sdk_sqs`
    /// for `client.receive_message().send()`): the libraries the crate certainly uses,
    /// where a method's name alone could be two packs'.
    pub packs: Vec<String>,
    /// Topics this function sends Kafka records to.
    pub kafka_sent_topics: Vec<String>,
    /// Topics subscribed here on a Kafka client a crate function made and returned
    /// (a factory): they are that client's ([`crate::analysis::kafka_clients::apply_factory_topics`]).
    pub made_client_topics: Vec<(Callee, Vec<String>)>,
    /// Fields of the crate's types a subscription here reads its topics from
    /// (`settings.topic`, as `(type, field)`) that no struct literal parsed yet
    /// filled: the prefilter parses the bodies that may fill them.
    pub topic_fields: Vec<(String, String)>,
    /// Consumer settings that turn acknowledgement off.
    pub ack_settings: Vec<AckSetting>,
    /// Queues declared here to live only as long as their connection (the packs'
    /// `[[transient_queue]]` options: `exclusive: true`, `auto_delete: true`).
    pub transient_queues: Vec<AckSetting>,
    /// Queues declared here with options that keep them past the connection (the same
    /// options struct without those settings, or its `default()`).
    pub durable_queues: bool,
    /// Retry scopes (retry loops, closures handed to a retry API), with their text.
    pub retries: Vec<(Loc, String)>,
    /// Channel keys that name one channel (docs/what-is-analyzed.md, "Work handed to another task"): an
    /// end passed as a call's argument (`A:worker#0`, the callee's parameter) or put
    /// in a struct field (`F:Worker.rx`), with the keys of the value passed.
    pub chan_links: Vec<Vec<String>>,
    /// Where a channel this function makes can be put in confirm mode (the
    /// unconfirmed-publish rule's unsafe fix, docs/getting-started.md).
    pub confirm_ats: Vec<ConfirmAt>,
    /// Confirmable publishes awaited once by a statement of their own
    /// (`basic_publish(..).await?;`): where a second `.await?` would await the
    /// confirmation (the unconfirmed-publish rule's unsafe fix).
    pub confirm_awaits: Vec<ConfirmAwait>,
    /// A function of a dependency analyzed with the crate (docs/what-is-analyzed.md): calls are
    /// followed into it, but it is no entry of this crate's analysis (its own
    /// crate's analysis starts there).
    pub dependency: bool,
}

/// A crate: its functions, for cross-function analysis.
#[derive(Clone, Debug, Default)]
pub struct Crate {
    pub key: String,
    pub functions: Vec<Function>,
    /// Functions of the files the prefilter did not parse, known by name only: a
    /// call that may reach one of them resolves as it would with the file parsed
    /// (the same candidates, the same ambiguity), without its body.
    pub unparsed: Vec<UnparsedFn>,
    /// Re-exports across the crates analyzed together (a facade's `pub use
    /// notify::mailer;`, `pub use ledger::*;`): `(facade path, real path)`, module
    /// paths as `Function::module` spells them. A call path that resolves to nothing
    /// is tried again with a facade prefix replaced by the real one.
    pub reexports: Vec<(Vec<String>, Vec<String>)>,
}

/// How many re-exports a path is followed through (a facade of a facade).
pub const MAX_REEXPORT_HOPS: usize = 4;

/// The paths `path` stands for through `reexports` (`Crate::reexports`), one per
/// re-export followed, nearest first: at each step the longest facade prefix of the
/// path is replaced by what it re-exports.
pub fn through_reexports(
    reexports: &[(Vec<String>, Vec<String>)],
    path: &[String],
) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut path = path.to_vec();
    for _ in 0..MAX_REEXPORT_HOPS {
        let hop = reexports
            .iter()
            .filter(|(from, _)| path.starts_with(from))
            .max_by_key(|(from, _)| from.len());
        let Some((from, to)) = hop else { break };
        path = to.iter().chain(&path[from.len()..]).cloned().collect();
        out.push(path.clone());
    }
    out
}

/// A function declared in a file that was not parsed (from a lexical scan).
#[derive(Clone, Debug)]
pub struct UnparsedFn {
    pub ident: String,
    pub self_type: Option<String>,
    pub trait_name: Option<String>,
    pub module: Vec<String>,
    pub has_self: bool,
    /// The file that declares it.
    pub path: String,
}
