//! The facts the flow analysis reports to the rules: events as the facts refer to
//! them, acks before effects, and pairs of events on one path.

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::Loc;

/// An event as the facts refer to it (shared: the analysis states that hold it are
/// copied at every branch).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct EvRef(std::sync::Arc<EvData>);

// The same allocation is the same event without comparing its text (states share
// their events, and joins compare them often).
impl PartialEq for EvRef {
    fn eq(&self, other: &EvRef) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
            || (self.0.loc.span == other.0.loc.span && self.0 == other.0)
    }
}

impl Eq for EvRef {}

// Consistent with `eq`: equal events are at one place.
impl std::hash::Hash for EvRef {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.0.loc.hash(h);
    }
}

impl PartialOrd for EvRef {
    fn partial_cmp(&self, other: &EvRef) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for EvRef {
    fn cmp(&self, other: &EvRef) -> std::cmp::Ordering {
        if std::sync::Arc::ptr_eq(&self.0, &other.0) {
            std::cmp::Ordering::Equal
        } else {
            self.0.cmp(&other.0)
        }
    }
}

impl EvRef {
    pub fn new(data: EvData) -> EvRef {
        EvRef(std::sync::Arc::new(data))
    }

    /// Whether the two events can happen in one run: not when they were reached
    /// through calls on one receiver value that chose different implementations
    /// (`sink.write(..)` of one writer, `sink.flush()` of another): one value is one
    /// implementation.
    pub fn compatible(&self, other: &EvRef) -> bool {
        self.dispatch.iter().all(|(a, v, t)| {
            other
                .dispatch
                .iter()
                .all(|(b, w, u)| a != b || v != w || t == u)
        })
    }
}

impl std::ops::Deref for EvRef {
    type Target = EvData;
    fn deref(&self) -> &EvData {
        &self.0
    }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct EvData {
    pub loc: Loc,
    pub text: String,
    pub describe: String,
    /// What the event does, as a verb phrase: ``runs the INSERT into `orders` ``.
    pub phrase: String,
    /// Call sites (outermost first) through which the event was reached from the entry.
    pub via: Vec<Loc>,
    /// The implementation chosen at each call on the way that fans out over several
    /// (`sink.write(..)` on a `dyn Sink`): the receiver's value (activation, value)
    /// and the chosen method's self type.
    #[serde(default)]
    pub dispatch: Vec<(u32, u32, String)>,
    /// A publish into a capped log (old entries dropped by design).
    pub capped: bool,
}

/// What the ack ran before.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum EffectKind {
    /// An effect that applies immediately (autocommit write, publish, HTTP, e-mail).
    Immediate,
    /// A write inside a transaction that commits after the ack.
    Committed {
        begin: Option<Box<EvRef>>,
        commit: Box<EvRef>,
    },
    /// Rows written into a client's buffer (clickhouse `Inserter::commit` below its
    /// limits) that may be sent only after the ack, or never.
    Buffered,
    /// An effect in a spawned task that may run after the ack.
    Spawned { spawn: Loc },
    /// An effect of the worker loop that receives what was sent on an in-process
    /// channel at `send`: it may run after the ack.
    Handed { send: Loc },
}

/// On some path, `ack` runs before `effect` is applied.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct AckBeforeEffect {
    pub ack: EvRef,
    pub effect: EvRef,
    pub kind: EffectKind,
    /// The entry function the path starts in.
    pub entry: String,
    /// The message came from a queue deleted with the consumer's connection (declared
    /// `exclusive` or `auto_delete` where it is consumed): a crash loses its unacked
    /// messages as well, so the broker redelivers nothing either way.
    pub transient_source: bool,
}

/// On some path, `ack` confirms the message after its effect `failed` failed, with
/// the error handled at `handled` and nothing on the path keeping the message: no
/// nack, no dead-letter or retry publish, no failure record written.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct AckAfterFailure {
    pub ack: EvRef,
    pub failed: EvRef,
    pub handled: Option<Loc>,
    /// The entry function the path starts in.
    pub entry: String,
    /// What failed is a send's delivery report that nothing reads (a dropped
    /// delivery future, a report no `poll` / `flush` served), not a seen error.
    pub delivery: bool,
}

/// A write on a path where an effect failed and its error was handled, as the path
/// shows it. Whether such a write is the message's progress record (an ack reached on
/// the failure path) or a record of the failure is a rule's decision, asked through
/// [`Policy`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteAfterFailure<'a> {
    /// The statement's verb (`INSERT`, `UPDATE`, `DELETE`, ...).
    pub verb: &'a str,
    /// It sets a column that marks rows done (`SET sent = true`).
    pub marks_done: bool,
    /// A `DELETE` of only the rows marked done (`WHERE status = 'complete'`).
    pub clears_done: bool,
    /// It changes a table whose rows the path read before the failed effect (and did
    /// not read again after it).
    pub rows_read_before: bool,
    /// The failed effect is a publish.
    pub publish_failed: bool,
    /// What failed is a batch's entries that nothing read.
    pub batch: bool,
    /// It sets a table that holds a position by its name (`Tables::is_cursor`: a
    /// cursor, checkpoint, LSN or offset table), with `UPDATE`, `INSERT` or an upsert.
    pub advances_cursor: bool,
    /// The path had read rows of some table when the publish failed.
    pub read_any_before: bool,
    /// A loop over items went on past the failed one to later items.
    pub went_past: bool,
}

/// Decisions the path analysis asks of the rules while it walks a path, where a
/// rule's answer changes what the path holds next. The driver passes the rules' own
/// (`rules::path_policy`); the analysis names no rule.
#[derive(Clone, Copy, Debug)]
pub struct Policy {
    /// A write on a failure path records the message's progress (an ack: the failure
    /// stays on the path) rather than the failure (which it ends).
    pub progress_write: fn(&WriteAfterFailure) -> bool,
}

/// How a write becomes durable, as far as the path shows.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Durability {
    /// Inside a transaction begun on this path: durable when it commits.
    Transaction,
    /// On a pool or a connection outside any transaction: durable at once.
    Autocommit,
    /// Where the write goes is not known here (a transaction handed in by a caller).
    Unknown,
}

impl Durability {
    pub fn known(self) -> bool {
        self != Durability::Unknown
    }
}

/// How two events of one message path relate. Each relation states what the path
/// does, not whether it is a defect: the rules decide that (`src/rules/`).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Relation {
    /// `primary` (an SQL write or an external call) runs inside the broker
    /// transaction begun at `other`.
    InBrokerTransaction,
    /// `primary` (a consumer offset commit) is on a path that also begins a
    /// transaction of a transactional producer (`other`), before or after it.
    OffsetsBesideBrokerTransaction,
    /// `primary` (a publish) and `other` (a database change made durable: a commit,
    /// or a write in autocommit) are separate steps of one path, in either order.
    PublishApartFromDbChange {
        /// The database change is made inside a broker transaction open on the path.
        change_in_broker_transaction: bool,
        /// Every known statement of the database change is a `DELETE`.
        change_deletes_only: bool,
        /// The change is made durable after the publish on the path.
        change_after_publish: bool,
    },
    /// `primary` (a write that retires rows of a table the path read: a `DELETE` of
    /// them, an `UPDATE` that marks them done, or a progress cursor set to a value
    /// taken from them), made durable, runs before
    /// `other` (a publish that sends values taken from those rows): the rows are
    /// gone or marked before they are published (docs/what-is-analyzed.md, "Outbox").
    RowsRetiredBeforePublish {
        /// A `DELETE` (else an `UPDATE` that marks the rows done).
        deletes: bool,
        /// Its `WHERE` names a set of rows (`= ANY($1)`, `IN (…)`) or none.
        many_rows: bool,
        /// It writes an outbox table (by name or the config's `outbox_tables`).
        outbox_table: bool,
        /// It sets a progress cursor (a table holding a position by its name) to a
        /// value taken from the rows, rather than writing the rows themselves.
        cursor: bool,
    },
    /// `primary` (a dedup record) and `other` (an effect written to the database)
    /// are written on one path, in either order.
    DedupAndEffect {
        dedup: Durability,
        effect: Durability,
        /// Both go into the one transaction begun on this path.
        same_transaction: bool,
        /// The effect is a write guarded by a condition of its own.
        effect_guarded: bool,
        /// The effect is a row of an outbox table.
        effect_to_outbox: bool,
        /// A transaction begun on the path and used for nothing yet is open.
        idle_transaction_open: bool,
    },
    /// `primary` (a claim whose result is not yet tested) is followed by `other`
    /// (an effect).
    UntestedClaimBeforeEffect {
        /// A message is in hand on the path (received, or given to its function).
        on_message_path: bool,
        /// The claim goes into a table named as a dedup record (the config's
        /// `dedup_tables`, `processed_*`, `inbox`, ...).
        into_named_table: bool,
    },
    /// `primary` (an effect a second run repeats: not idempotent) is durable before
    /// `other` (an ack).
    RepeatableEffectBeforeAck {
        /// A dedup record is written on the path before the ack.
        dedup_on_path: bool,
        /// The effect is applied inside a broker transaction open on the path.
        in_broker_transaction: bool,
    },
}

/// On some path, the two events stand in the relation `relation`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct PairFact {
    pub relation: Relation,
    pub primary: EvRef,
    pub other: EvRef,
    /// Related events with their label text (where the transaction begins, ...).
    pub related: Vec<(EvRef, String)>,
    pub entry: String,
}

/// Everything the flow analysis found in a crate.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    pub acks: Vec<AckBeforeEffect>,
    pub pairs: Vec<PairFact>,
    /// Acks on paths where the message's effect failed.
    pub failures: Vec<AckAfterFailure>,
    /// Some path applies an effect after receiving a message: the crate's consumers
    /// have side effects (what auto-ack risks).
    pub handler_effects: bool,
    /// Kafka clients (function index, client index) whose messages are received in the
    /// crate, and those followed by an effect on some path.
    pub received_clients: BTreeSet<(usize, u32)>,
    pub effect_clients: BTreeSet<(usize, u32)>,
    /// Kafka clients whose messages received on a path are followed, on that path,
    /// by an explicit offset commit (`commit_message`, `commit`, ...; a store of
    /// offsets is not a commit): turning auto commit off leaves them progressing.
    pub committed_clients: BTreeSet<(usize, u32)>,
    /// Per function: it applies an effect, directly or through calls.
    pub effectful: Vec<bool>,
    /// Per entry function: the tables it relays (rows read from them, published, then
    /// updated or deleted after the publish on the same path).
    pub relays: BTreeMap<String, BTreeSet<String>>,
    /// The tables each write, and each commit, makes durable (by the event's place).
    pub durable_tables: BTreeMap<Loc, BTreeSet<String>>,
    /// Those of them that hold a position by their name (`Tables::is_cursor`).
    pub cursor_tables: BTreeSet<String>,
    /// Tables of dedup records (by name or by shape) whose result was tested before
    /// an effect followed on the same path: claims that gate an effect.
    pub claim_tables: BTreeSet<String>,
    /// Entry functions with too many paths to analyze within the budget
    /// ([`super::MAX_WORK_PER_ENTRY`]): their facts are left out, and the run says so.
    pub over_budget: Vec<(String, Loc)>,
    /// Batch calls whose response a helper returns to a caller that does not read its
    /// failed entries (docs/what-is-analyzed.md, batch calls with per-entry results), with the call
    /// sites that reach them (`via`).
    pub returned_unread: Vec<EvRef>,
    /// Publishes whose failure was handled without being told (logged, gone on
    /// from) on a path on which an entry returns as on success.
    pub failed_at_exit: BTreeSet<Loc>,
    /// Entry functions the crate calls only while a broker (Kafka) transaction is
    /// open: every call site reached opens one first (none of them calls outside one).
    pub only_in_broker_transaction: BTreeSet<String>,
}
