//! The analysis state on one path: pending acks, open transactions, the current
//! message's effects; and how two states join where paths meet.

use std::collections::{BTreeMap, BTreeSet};

use super::{EvRef, Val};
use crate::ir::Loc;

/// An effect made durable on a path, and whether a broker (Kafka) transaction was
/// open around it: the rules decide what that changes (it is then the
/// transaction's to cover, or not covered by it).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) struct Applied {
    pub(super) ev: EvRef,
    pub(super) in_broker_transaction: bool,
    /// The change only deletes rows (every known statement of it is a `DELETE`).
    pub(super) deletes_only: bool,
    /// Joined from a path with no dedup record into one with: the dedup record the
    /// joined state holds is not on this effect's path.
    pub(super) uncovered: bool,
}

impl Applied {
    pub(super) fn new(ev: EvRef, st: &State) -> Applied {
        Applied {
            ev,
            in_broker_transaction: st.broker_open.is_some(),
            deletes_only: false,
            uncovered: false,
        }
    }

    /// The same change, saying whether the dedup record of the state it is in is
    /// on its path.
    fn covered(&self, covered: bool) -> Applied {
        Applied {
            uncovered: !covered,
            ..self.clone()
        }
    }

    /// The same change, saying whether it only deletes rows.
    pub(super) fn deleting(self, deletes_only: bool) -> Applied {
        Applied {
            deletes_only,
            ..self
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct WriteRec {
    pub(super) ev: EvRef,
    /// The open transaction it went into.
    pub(super) tx: Option<Val>,
    /// Not in a transaction known here, on a pool or connection: commits by itself.
    pub(super) auto: bool,
    pub(super) dedup: bool,
    pub(super) named_dedup: bool,
    pub(super) guarded: bool,
}

/// A write that retires rows of a table the path read (a `DELETE` of them, an
/// `UPDATE` that marks them done, or a progress cursor set past them): a relay's
/// progress record over those rows.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Retiring {
    pub(super) ev: EvRef,
    /// The tables read before it that it writes.
    pub(super) tables: Vec<String>,
    /// The transaction it is written in, until that commits (`None`: durable).
    pub(super) tx: Option<Val>,
    pub(super) deletes: bool,
    /// Its `WHERE` names a set of rows (`= ANY($1)`, `IN (…)`) or none.
    pub(super) many_rows: bool,
    /// It writes an outbox table (by name or the config's `outbox_tables`).
    pub(super) outbox_table: bool,
    /// It advances a progress cursor over the rows (`tables`: those the cursor's
    /// value is taken from), rather than writing them.
    pub(super) cursor: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Tx {
    pub(super) begin: Option<EvRef>,
    pub(super) writes: Vec<EvRef>,
    pub(super) open: bool,
    /// Begun and never used for anything but commit (a discarded transaction: its split writes are that).
    pub(super) idle: bool,
    /// An outbox row is written in it: its commit is not half of a dual write.
    pub(super) outbox: bool,
    /// Its non-idempotent writes, durable when it commits.
    pub(super) nonidem: List<Applied>,
    /// Some write in it has SQL the analysis could read (dual writes ignore transactions
    /// whose statements are all unknown, e.g. built at run time).
    pub(super) known: bool,
    /// Some known write in it is not a `DELETE`.
    pub(super) non_delete: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Pending {
    pub(super) msg: Option<Val>,
    pub(super) ev: EvRef,
    /// The message acked came from a queue deleted with the consumer's connection.
    pub(super) transient: bool,
}

/// An effect that failed on this path, and where its error was handled without
/// being propagated (an ack after a failure).
#[derive(Clone, Debug)]
pub(super) struct Failure {
    pub(super) effect: EvRef,
    /// Where the error is dropped or matched away; `None` while it is still being
    /// returned (the error edge of `op?`).
    pub(super) handled: Option<Loc>,
    /// The failed effect is a publish (a relay that then deletes the row it read
    /// loses the row).
    pub(super) publish: bool,
    /// The tables the path had read when the publish failed: a relay publishes rows
    /// it read before, so only a delete of one of these is its progress record.
    pub(super) read_before: Vec<String>,
    /// The elements of a received batch taken after it failed (for an earlier
    /// element): the ack of one of them is not this failure's (the batch's ack
    /// after the loop is, and so is the ack of the message whose content the loop
    /// went through).
    pub(super) later: Vec<Val>,
    /// It failed after a message was received on the path: an offset commit that
    /// names no message confirms it (a failure at start-up is no message's).
    pub(super) received: bool,
    /// The handling gave back a value that tells of the failure (`return false`): a
    /// caller that reads the result may act on it.
    pub(super) told: bool,
    /// Per-entry failures of a batch call that nothing read: they concern every
    /// entry of the batch, so a loop over the batch's items acks each failed one.
    pub(super) batch: bool,
    /// It is one send's delivery report that nothing reads (a dropped delivery
    /// future, a report no `poll` / `flush` served), not an error seen and dropped.
    pub(super) delivery: bool,
    /// With `delivery`: the send's own error was dropped too (`let _ =
    /// producer.send(..).await`, `.ok()`), here. Once a `flush` / `wait` serves the
    /// report, that failure remains: the record the send never queued is lost.
    pub(super) send_ignored: Option<Loc>,
    /// Earlier batches whose per-entry failures nothing read on this path either
    /// (with where each was seen): what confirms this failure confirms them too.
    pub(super) earlier_batches: Vec<(EvRef, Option<Loc>)>,
    /// Tables whose rows a progress write on this path already marked done or
    /// deleted: the loss is reported there, and a later write of them (a clean-up of
    /// the rows marked done) is not another progress record.
    pub(super) progressed: Vec<String>,
    /// The failed write is a dedup claim by its shape only (a conflict-ignoring
    /// insert of a key, in no table named as a dedup record): it is the message's
    /// effect unless another effect follows it (the effect it guarded), which ends
    /// this failure.
    pub(super) shaped_claim: bool,
    /// The path is in a statement that writes only the rows whose operation
    /// succeeded (`EventKind::RowsGated`): its writes do not retire the failed one.
    pub(super) rows_gated: bool,
    /// It failed in an earlier iteration of a loop over a collection's items (the
    /// loop's body, by address): a per-message ack in a later iteration acks another
    /// item, not the failed one (an offset commit, cumulative, does confirm it).
    pub(super) carried: Option<usize>,
    /// The loop over items went on past it to the next item (it was carried around a
    /// back edge at least once): what the loop did after it took the later items too.
    pub(super) went_past: bool,
    /// It is among the outcomes of operations joined over many items (`join_all`, a
    /// stream's futures run concurrently, then collected): which item failed is not
    /// known, so an item of the batch taken later may be the failed one.
    pub(super) joined: bool,
}

/// One failure whatever was read after it: `read_before` narrows as the path reads
/// tables again, and a callee that only read must not look like one that failed
/// (`error_result` compares the failure before and after the call).
impl PartialEq for Failure {
    fn eq(&self, other: &Failure) -> bool {
        self.effect == other.effect
            && self.handled == other.handled
            && self.publish == other.publish
            && self.later == other.later
            && self.rows_gated == other.rows_gated
            && self.received == other.received
            && self.told == other.told
            && self.batch == other.batch
            && self.delivery == other.delivery
            && self.send_ignored == other.send_ignored
            && self.earlier_batches == other.earlier_batches
            && self.shaped_claim == other.shaped_claim
            && self.carried == other.carried
            && self.went_past == other.went_past
            && self.joined == other.joined
    }
}

impl Failure {
    /// A publish's own failure (not a batch's entries nor a delivery report), handled
    /// where nothing tells it on (logged, gone on from).
    pub(super) fn hidden_publish(&self) -> bool {
        self.publish && self.handled.is_some() && !self.told && !self.batch && !self.delivery
    }

    /// `effect` failed (a publish when `publish`) on the path whose state is `st`;
    /// its error not handled yet.
    pub(super) fn of(effect: EvRef, publish: bool, st: &State) -> Failure {
        Failure {
            effect,
            handled: None,
            publish,
            read_before: if publish {
                st.read_tables.iter().cloned().collect()
            } else {
                Vec::new()
            },
            later: Vec::new(),
            received: st.received,
            told: false,
            batch: false,
            delivery: false,
            send_ignored: None,
            earlier_batches: Vec::new(),
            progressed: Vec::new(),
            shaped_claim: false,
            rows_gated: false,
            carried: None,
            went_past: false,
            joined: false,
        }
    }

    /// An unread batch's failure (not a delivery report).
    pub(super) fn unread_batch(&self) -> bool {
        self.batch && !self.delivery
    }

    /// Keeps `other`, an unread batch's failure as this one is, and the batches it
    /// kept, among the earlier batches.
    pub(super) fn keep_batches(&mut self, other: &Failure) {
        let more = other.earlier_batches.iter().cloned();
        for (effect, handled) in more.chain([(other.effect.clone(), other.handled.clone())]) {
            if effect != self.effect && !self.earlier_batches.iter().any(|(e, _)| *e == effect) {
                self.earlier_batches.push((effect, handled));
            }
        }
    }

    /// This failure and the earlier batches it kept, as (effect, handled).
    pub(super) fn all(&self) -> impl Iterator<Item = (&EvRef, &Option<Loc>)> {
        std::iter::once((&self.effect, &self.handled))
            .chain(self.earlier_batches.iter().map(|(e, h)| (e, h)))
    }
}

/// A list of facts on one path: in the order they happened, each once, with a
/// hash index, so that joining a long state with a short one (the error exit of
/// every `?` joined into the function's error return) costs the short one.
pub(super) type List<T> = indexmap::IndexSet<T, foldhash::fast::FixedState>;

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Floating {
    pub(super) handle: Option<Val>,
    pub(super) spawn: Loc,
    pub(super) effect: EvRef,
    /// A durable non-idempotent effect of the task (the path's once the task is
    /// awaited): whether a broker transaction was open around it.
    pub(super) nonidem: Option<bool>,
    /// Handed to a worker loop over an in-process channel (`spawn` is the send).
    pub(super) sent: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct State {
    pub(super) acks: BTreeMap<Loc, Pending>,
    pub(super) txs: BTreeMap<Val, Tx>,
    pub(super) floating: Vec<Floating>,
    /// Dedup records written by spawned tasks not awaited yet, by the task's handle
    /// (`None`: awaited as a set): awaited, they are on the path as if written in
    /// place (a claim in one `spawn_blocking(..).await`, the effect in another).
    pub(super) task_records: Vec<(Option<Val>, WriteRec)>,
    /// Effects applied on this path inside the spawned task being run.
    pub(super) effects: BTreeSet<EvRef>,
    /// In a worker loop's iteration, before the receive on this path: effects here
    /// are not the received value's (a timer's branch of a `select!`).
    pub(super) before_recv: bool,
    /// The Kafka transaction open on this path, and the first one begun on it.
    pub(super) broker_open: Option<EvRef>,
    pub(super) broker_seen: Option<EvRef>,
    /// Per message (reset at loop back edges): DB writes made durable, publishes
    /// made outside a Kafka transaction, writes with their transaction, and
    /// claims whose result was discarded.
    pub(super) durable: List<Applied>,
    pub(super) publishes: List<EvRef>,
    pub(super) writes: List<WriteRec>,
    pub(super) unchecked: List<EvRef>,
    /// Writes of the current message whose rows may still sit in a client's buffer
    /// (`EventKind::Buffered`): not sent until a call sends them.
    pub(super) buffered: List<EvRef>,
    /// Durable non-idempotent effects of the current message.
    /// Some path joined here has no dedup record though another has one.
    pub(super) dedup_partial: bool,
    pub(super) nonidem: List<Applied>,
    /// A message was received on this path (the effects that follow are a handler's).
    pub(super) received: bool,
    /// A message is in hand on this path: received on it, or given to the function
    /// the path starts in (`handle(delivery: Delivery)`).
    pub(super) message: bool,
    /// The message was received in a function that declares only queues deleted
    /// with their connection (`Function::transient_queues`): after a crash the broker
    /// has nothing to redeliver.
    pub(super) transient_source: bool,
    /// Consumer offset commits made before any Kafka transaction began on this path.
    pub(super) early_offsets: List<EvRef>,
    /// Kafka clients (function, index) whose messages were received on this path.
    pub(super) received_clients: List<(usize, u32)>,
    /// Tables whose rows were read on this path (what a relay may publish).
    pub(super) read_tables: List<String>,
    /// Rows of read tables retired (deleted, or marked done) on this path, durably
    /// or in a transaction not yet committed; a new read of the table ends them.
    pub(super) retiring: List<Retiring>,
    /// The current message's effect failed on this path and the code went on, with
    /// nothing done yet that keeps the message.
    pub(super) failed: Option<Failure>,
    /// What failed if the operation just run failed (an effect, or a call whose
    /// error returns come from a failed effect): the error handling right after it
    /// decides whether the path goes on failed. Every other event clears it.
    pub(super) cause: Option<Failure>,
    /// Publishes that failed on this path: a write after one is compensation (marking
    /// an endpoint dead, recording the failed send), not half of a dual write.
    pub(super) failed_publishes: List<EvRef>,
}

/// Adds to `mine` what `other` has that it lacks. The two states of a join mostly
/// come from one state before a branch: their common prefix is skipped (shared
/// events compare by address), and what is left is looked up in `mine`'s index, so
/// a join costs the prefix plus what `other` added, never a search of `mine`.
pub(super) fn union<T: Clone + Eq + std::hash::Hash>(mine: &mut List<T>, other: &List<T>) {
    let common = mine.iter().zip(other).take_while(|(a, b)| a == b).count();
    for x in other.iter().skip(common) {
        if !mine.contains(x) {
            mine.insert(x.clone());
        }
    }
}

impl State {
    pub(super) fn new() -> State {
        State {
            acks: BTreeMap::new(),
            txs: BTreeMap::new(),
            floating: Vec::new(),
            task_records: Vec::new(),
            effects: BTreeSet::new(),
            before_recv: false,
            broker_open: None,
            broker_seen: None,
            durable: List::default(),
            publishes: List::default(),
            writes: List::default(),
            unchecked: List::default(),
            buffered: List::default(),
            nonidem: List::default(),
            dedup_partial: false,
            received: false,
            message: false,
            transient_source: false,
            early_offsets: List::default(),
            received_clients: List::default(),
            read_tables: List::default(),
            retiring: List::default(),
            failed: None,
            cause: None,
            failed_publishes: List::default(),
        }
    }

    /// Forgets what one loop iteration did to its own message, keeping what the
    /// state held when the loop was entered.
    /// A failure is kept only around a loop over the items of a collection (`each`,
    /// a batch): the batch's ack after the loop confirms the failed item too, the
    /// ack of a later item does not (`earlier`; `Failure::carried`, `each` the
    /// loop's body by address). In other loops (a retry loop, a consume loop) the
    /// next iteration starts over.
    pub(super) fn carry_to_next_iteration(&mut self, entry: &State, each: Option<usize>) {
        match self.failed.as_mut() {
            Some(f) if each.is_some() => {
                if f.carried.is_none() {
                    f.carried = each;
                }
                f.went_past = true;
            }
            _ => self.failed.clone_from(&entry.failed),
        }
        self.cause = None;
        self.acks.retain(|k, _| entry.acks.contains_key(k));
        self.floating
            .retain(|f| entry.floating.iter().any(|g| g.effect == f.effect));
        self.task_records.retain(|r| entry.task_records.contains(r));
        self.durable.retain(|x| entry.durable.contains(x));
        self.publishes.retain(|x| entry.publishes.contains(x));
        self.failed_publishes
            .retain(|x| entry.failed_publishes.contains(x));
        self.writes.retain(|x| entry.writes.contains(x));
        self.unchecked.retain(|x| entry.unchecked.contains(x));
        self.buffered.retain(|x| entry.buffered.contains(x));
        self.nonidem.retain(|x| entry.nonidem.contains(x));
        self.early_offsets
            .retain(|x| entry.early_offsets.contains(x));
        self.retiring.retain(|x| entry.retiring.contains(x));
    }

    /// Forgets what the path did for the message before: its spawned tasks, durable
    /// changes, publishes (failed ones too), writes, untested claims and repeatable
    /// effects. A new message, or a worker taking one, starts from none of them.
    pub(super) fn forget_message_effects(&mut self) {
        self.floating.clear();
        self.task_records.clear();
        self.durable.clear();
        self.publishes.clear();
        self.failed_publishes.clear();
        self.writes.clear();
        self.unchecked.clear();
        self.buffered.clear();
        self.nonidem.clear();
    }

    /// A dedup record (a claim, a processed-id row) is written on this path.
    pub(super) fn has_dedup(&self) -> bool {
        self.writes.iter().any(|w| w.dedup)
    }

    /// A dedup record is written on every path joined here.
    pub(super) fn claimed(&self) -> bool {
        self.has_dedup() && !self.dedup_partial
    }

    /// A dedup record written now covers every path to it, and the effects on them.
    pub(super) fn dedup_written(&mut self) {
        self.dedup_partial = false;
        if self.nonidem.iter().any(|a| a.uncovered) {
            self.nonidem = self.nonidem.iter().map(|a| a.covered(true)).collect();
        }
    }

    pub(super) fn join(&mut self, other: &State) {
        // A dedup record on one of the paths only: the effects of the other are not
        // covered by it, and an effect after the join is not claimed on every path.
        let (mine, theirs) = (self.has_dedup(), other.has_dedup());
        let mut other_nonidem = std::borrow::Cow::Borrowed(&other.nonidem);
        if mine != theirs {
            self.dedup_partial = true;
            if mine {
                other_nonidem = std::borrow::Cow::Owned(
                    other.nonidem.iter().map(|a| a.covered(false)).collect(),
                );
            } else {
                self.nonidem = self.nonidem.iter().map(|a| a.covered(false)).collect();
            }
        }
        self.dedup_partial |= other.dedup_partial;
        for (k, p) in &other.acks {
            self.acks.entry(k.clone()).or_insert_with(|| p.clone());
        }
        for (k, t) in &other.txs {
            match self.txs.get_mut(k) {
                Some(mine) => {
                    mine.open |= t.open;
                    mine.idle &= t.idle;
                    mine.outbox |= t.outbox;
                    mine.known |= t.known;
                    mine.non_delete |= t.non_delete;
                    union(&mut mine.nonidem, &t.nonidem);
                    for w in &t.writes {
                        if !mine.writes.contains(w) {
                            mine.writes.push(w.clone());
                        }
                    }
                    if mine.begin.is_none() {
                        mine.begin = t.begin.clone();
                    }
                }
                None => {
                    self.txs.insert(*k, t.clone());
                }
            }
        }
        for f in &other.floating {
            if !self
                .floating
                .iter()
                .any(|x| x.effect == f.effect && x.handle == f.handle)
            {
                self.floating.push(f.clone());
            }
        }
        for r in &other.task_records {
            if !self.task_records.contains(r) {
                self.task_records.push(r.clone());
            }
        }
        self.effects.extend(other.effects.iter().cloned());
        if self.broker_open.is_none() {
            self.broker_open.clone_from(&other.broker_open);
        }
        if self.broker_seen.is_none() {
            self.broker_seen.clone_from(&other.broker_seen);
        }
        union(&mut self.durable, &other.durable);
        union(&mut self.publishes, &other.publishes);
        union(&mut self.failed_publishes, &other.failed_publishes);
        union(&mut self.writes, &other.writes);
        union(&mut self.unchecked, &other.unchecked);
        union(&mut self.buffered, &other.buffered);
        union(&mut self.nonidem, &other_nonidem);
        self.received |= other.received;
        self.before_recv &= other.before_recv;
        self.message |= other.message;
        self.transient_source |= other.transient_source;
        union(&mut self.early_offsets, &other.early_offsets);
        union(&mut self.received_clients, &other.received_clients);
        union(&mut self.read_tables, &other.read_tables);
        union(&mut self.retiring, &other.retiring);
        match (&mut self.failed, &other.failed) {
            (None, _) => self.failed.clone_from(&other.failed),
            // Batches unread on either path are unread here.
            (Some(a), Some(b)) if a.unread_batch() && b.unread_batch() => a.keep_batches(b),
            _ => {}
        }
        // Tables a progress write retired for this failure on either path (a marking
        // loop that ran, or ran zero times): their loss is reported at that write.
        if let (Some(a), Some(b)) = (&mut self.failed, &other.failed) {
            if a.effect == b.effect {
                for t in &b.progressed {
                    if !a.progressed.contains(t) {
                        a.progressed.push(t.clone());
                    }
                }
            }
        }
        if self.cause.is_none() {
            self.cause.clone_from(&other.cause);
        }
    }
}

/// Joins many states in a balanced order (a binary counter: two joined states of one
/// size become one of the next), so that the join of `n` match arms costs
/// `n log n`, not `n²`. Earlier states stay first (a join keeps the first of some
/// facts), as in a left fold.
#[derive(Default)]
pub(super) struct Joiner(Vec<(u32, State)>);

impl Joiner {
    pub(super) fn push(&mut self, mut s: State) {
        let mut level = 0;
        while self.0.last().is_some_and(|(l, _)| *l == level) {
            let (_, mut earlier) = self.0.pop().expect("checked above");
            earlier.join(&s);
            s = earlier;
            level += 1;
        }
        self.0.push((level, s));
    }

    pub(super) fn finish(self) -> Option<State> {
        let mut acc = None;
        for (_, s) in self.0 {
            join_opt(&mut acc, s);
        }
        acc
    }
}

pub(super) fn join_opt(acc: &mut Option<State>, s: State) {
    match acc {
        Some(a) => a.join(&s),
        None => *acc = Some(s),
    }
}

/// The state of an error return, as the result the caller receives: a failure the
/// error return carries (an effect that failed in the callee or closure) becomes the
/// cause of the caller's operation, for the error handling right after it to judge.
pub(super) fn error_result(mut s: State, failed_before: &Option<Failure>) -> State {
    s.cause = if s.failed != *failed_before {
        // A failed publish began by ending the failure before it (a dead-letter
        // publish keeps that message): it is not restored.
        let before = match &s.failed {
            Some(f) if f.publish && f.handled.is_none() => None,
            _ => failed_before.clone(),
        };
        std::mem::replace(&mut s.failed, before)
    } else {
        None
    };
    // On this path the publish did fail: what follows it is compensation.
    if let Some(c) = s.cause.as_ref().filter(|c| c.publish) {
        if !s.failed_publishes.contains(&c.effect) {
            s.failed_publishes.insert(c.effect.clone());
        }
    }
    s
}

/// The publishes made on this path that did not fail on it (a write after a failed
/// publish is compensation, docs/what-is-analyzed.md dual writes).
pub(super) fn live_publishes(st: &State) -> Vec<EvRef> {
    st.publishes
        .iter()
        .filter(|p| !st.failed_publishes.iter().any(|f| f.loc == p.loc))
        .cloned()
        .collect()
}
