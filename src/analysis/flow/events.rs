//! One event of a path: what it does to the abstract state, and the facts it records
//! with what the path did before it. [`Interp::event`] dispatches by the event's kind;
//! each kind has its own method below.

use super::state::{error_result, join_opt, Applied, Failure, List, Pending, Retiring, State, Tx};
use super::{finish_tasks, Frame, Interp, Outcome, Val, MAX_CALL_DEPTH};
use crate::analysis::flow::facts::{
    AckAfterFailure, EffectKind, EvRef, Relation, WriteAfterFailure,
};
use crate::ir::{
    ClientRef, Event, EventKind, ExternalKind, Node, Origin, SqlFacts, SqlKind, ValueId,
};

impl<'c> Interp<'c> {
    pub(super) fn event(&mut self, e: &'c Event, mut st: State, fr: &Frame<'c>) -> Outcome {
        // What the operation just before failed with, if it failed: only the error
        // handling right after it reads it (acks after a failure).
        let cause = st.cause.take();
        let new_cause = match &e.kind {
            EventKind::Receive {
                msg,
                element,
                client,
            } => {
                self.receive(&mut st, fr, *msg, *element, client.as_ref());
                None
            }
            // A consumer's offsets committed with no message named (a partition list,
            // the consumer's position), on a path that received none: the records
            // reached this code another way, and what runs after it (a caller going on
            // to start a server) belongs to no message it confirms. Acks before
            // effects and repeatable effects concern handlers (docs/what-is-analyzed.md).
            EventKind::Ack {
                msg: None,
                offsets: true,
                ..
            } if !st.received => None,
            EventKind::Ack {
                msg,
                offsets,
                store,
            } => {
                self.ack(e, &mut st, fr, *msg, (*offsets).then_some(*store));
                None
            }
            EventKind::Begin { tx, fresh, used } => {
                self.begin(e, &mut st, fr.val(*tx), *fresh && !*used);
                None
            }
            EventKind::Write { .. } => self.write(e, &mut st, fr),
            EventKind::Buffered { sent } => buffer(&mut st, self.evref(e), *sent, cause),
            EventKind::Commit { tx, acks } => self.commit_event(e, &mut st, fr.val(*tx), *acks),
            EventKind::Rollback { tx } => {
                rollback(&mut st, fr.val(*tx));
                None
            }
            EventKind::Publish {
                non_idempotent,
                capped,
                rows,
                ..
            } => self.publish(e, &mut st, *non_idempotent, *capped, rows),
            // A request carrying an idempotency key (its header, or a keyed client)
            // is deduplicated by the receiver.
            EventKind::External {
                non_idempotent,
                kind,
                idempotency_key,
            } => self.external(e, &mut st, *non_idempotent && !*idempotency_key, kind),
            EventKind::BrokerBegin => {
                self.broker_begin(e, &mut st);
                None
            }
            // Committing a producer transaction flushes its sends and fails if one was
            // not delivered: their reports are read.
            EventKind::BrokerCommit => {
                st.broker_open = None;
                if st.failed.as_ref().is_some_and(|f| f.delivery) {
                    st.failed = None;
                }
                None
            }
            EventKind::BrokerAbort => {
                st.broker_open = None;
                None
            }
            EventKind::AwaitHandle { handle } => awaited(&mut st, handle.map(|h| fr.val(h)), cause),
            EventKind::ChannelSend { chan } => {
                self.hand_to_workers(e, chan, &mut st);
                None
            }
            EventKind::ChannelRecv { .. } => {
                st.before_recv = false;
                None
            }
            EventKind::Call(c) => return self.call(e, c, st, fr),
            EventKind::CallValue { callee } => {
                if let Some(cl) = fr.closures.get(callee).cloned() {
                    if self.stack.len() <= MAX_CALL_DEPTH {
                        return self.call_closure(e, &cl, st);
                    }
                }
                None
            }
            // Reading the claim's result is no operation: the claim's own failure
            // is still the one the code after it handles (`let r = claim.await;
            // if let Err(e) = r { … }`).
            EventKind::ClaimTested { claim } => {
                st.unchecked.retain(|c| c.loc != *claim);
                cause
            }
            EventKind::ErrorPropagated { handled, err } => {
                propagated(&mut st, handled, *err);
                None
            }
            EventKind::FailureTold => told(&mut st),
            EventKind::RowsGated { handled, on } => {
                if let Some(f) = st.failed.as_mut() {
                    if f.handled.as_ref().is_some_and(|h| handled.contains(h)) {
                        f.rows_gated = *on;
                    }
                }
                None
            }
            // A nack, a reject or a delayed redelivery keeps the failed message.
            EventKind::Nack { .. } => {
                st.failed = None;
                None
            }
            EventKind::Failed { what } => {
                self.failed(e, &mut st, what);
                None
            }
            EventKind::EntriesUnread { what, delivery } => {
                self.entries_unread(e, &mut st, what, *delivery);
                // The request's own failure is still the call's.
                cause
            }
            // Where a batch's entries failed, a write records the failure.
            EventKind::EntriesFailed => entries_failed(self.evref(e), &mut st, cause),
            EventKind::ErrorIgnored { told, arm } => {
                error_ignored(e, &mut st, cause, *told, *arm);
                None
            }
            EventKind::Read { tables } => {
                read(&mut st, tables);
                None
            }
            EventKind::IdGen { .. }
            | EventKind::BrokerOffsets
            | EventKind::ChannelOpen { .. }
            | EventKind::ConfirmSelect { .. } => None,
            // Waiting for the confirmations serves the delivery reports not read yet;
            // the wait fails when a send was not delivered, the failure the error
            // handling right after it reads.
            EventKind::ConfirmsWaited { .. } => confirms_waited(&mut st),
        };
        st.cause = new_cause;
        Outcome {
            fall: Some(st),
            ..Outcome::default()
        }
    }

    /// A transaction begins (`idle`: a fresh one no statement has used yet).
    fn begin(&self, e: &'c Event, st: &mut State, tx: Val, idle: bool) {
        st.txs.insert(
            tx,
            Tx {
                begin: Some(self.evref(e)),
                writes: Vec::new(),
                open: true,
                idle,
                outbox: false,
                nonidem: List::default(),
                known: false,
                non_delete: false,
            },
        );
    }

    /// A transaction commits; a commit of an open transaction with writes may fail
    /// (the failure the error handling right after it reads).
    fn commit_event(
        &mut self,
        e: &'c Event,
        st: &mut State,
        tx: Val,
        acks: bool,
    ) -> Option<Failure> {
        let ev = self.evref(e);
        // Committed with the ack: a rerun repeats none of the transaction's effects.
        if acks {
            if let Some(t) = st.txs.get_mut(&tx) {
                t.nonidem.clear();
            }
        }
        self.split = None;
        let failable = st
            .txs
            .get(&tx)
            .is_some_and(|x| x.open && !x.writes.is_empty());
        let failure = failable.then(|| Failure::of(ev.clone(), false, st));
        self.commit(st, tx, ev);
        failure
    }

    /// A closure called through a value: its body runs on the path, and each of its
    /// exits (fall, return, error return) continues after the call. An error return
    /// is the call's failed outcome, for the error handling right after it (as a
    /// callee's is); a closure whose body is one call (`|| save(db, row)`) has that
    /// call's outcome, split by a `match` on it.
    fn call_closure(&mut self, e: &'c Event, cl: &(&'c Node, Frame<'c>), st: State) -> Outcome {
        let failed_before = st.failed.clone();
        self.via.push(e.loc.clone());
        let o = self.run(cl.0, st, &cl.1);
        self.via.pop();
        let mut fall = o.fall;
        if let Some(s) = o.ret {
            join_opt(&mut fall, s);
        }
        if let Some(s) = o.ret_err {
            self.split = None;
            join_opt(&mut fall, error_result(s, &failed_before));
        }
        Outcome {
            fall,
            ..Outcome::default()
        }
    }

    /// The operation `what` failed here: the failure the code after it handles.
    fn failed(&self, e: &'c Event, st: &mut State, what: &EventKind) {
        let failed = Event {
            kind: what.clone(),
            ..e.clone()
        };
        st.failed = Some(Failure::of(
            self.evref(&failed),
            matches!(*what, EventKind::Publish { .. }),
            st,
        ));
    }

    /// The Kafka clients (function, index) a message received in function `fi` comes
    /// from: one configured there, or the one each crate function making the consumer
    /// (a factory) configures and returns.
    fn client_keys(&self, fi: usize, client: Option<&ClientRef>) -> Vec<(usize, u32)> {
        match client {
            Some(ClientRef::Here(c)) => vec![(fi, *c)],
            Some(ClientRef::Made(callee)) => self
                .resolver
                .resolve_callee(&self.krate.functions[fi], callee)
                .into_iter()
                .filter_map(|g| Some((g, self.krate.functions[g].returns_kafka_client?)))
                .collect(),
            None => Vec::new(),
        }
    }

    fn receive(
        &mut self,
        st: &mut State,
        fr: &Frame<'c>,
        msg: ValueId,
        element: bool,
        client: Option<&ClientRef>,
    ) {
        st.received = true;
        st.message = true;
        let f = &self.krate.functions[fr.fn_idx];
        st.transient_source = !f.transient_queues.is_empty() && !f.durable_queues;
        for key in self.client_keys(fr.fn_idx, client) {
            self.received_clients.insert(key);
            if !st.received_clients.contains(&key) {
                st.received_clients.insert(key);
            }
        }
        // Each message is its own path (docs/what-is-analyzed.md): a new message ends the pending acks
        // of the ones received before it, of any value; an element of a batch ends
        // only its own (the batch's ack may follow).
        let m = fr.val(msg);
        st.acks.retain(|_, p| element && p.msg != Some(m));
        // Tasks spawned before this message arrived (a background relay, a server
        // started in `main`) are not this message's effects. Nor are the effects the
        // messages before it had: they pair with no ack of this one (as at a loop's
        // back edge).
        if let Some(fl) = (st.failed.as_mut()).filter(|fl| element && !fl.batch && !fl.joined) {
            if !fl.later.contains(&m) {
                fl.later.push(m);
            }
        }
        if !element {
            st.failed = None;
            st.forget_message_effects();
        }
    }

    fn ack(
        &mut self,
        e: &'c Event,
        st: &mut State,
        fr: &Frame<'c>,
        msg: Option<ValueId>,
        // A Kafka consumer's offsets: `Some(store)`, `store` when the call only
        // stores them for the client's auto commit.
        offsets: Option<bool>,
    ) {
        self.progress_seen = true;
        let store = offsets == Some(true);
        let offsets = offsets.is_some();
        let ev = self.evref(e);
        // Acked where its effect failed, nothing keeping it.
        if let Some(f) = &st.failed {
            // The ack of a later element of the batch is not this failure's, unless
            // it is an offset commit: a later offset commits past the failed one. Nor
            // is the ack of the items a collection filled only where their operations
            // succeeded holds (`Ok(..) => done.push(receipt)`, then `for r in done`).
            let other = !offsets
                && (msg.is_some_and(|m| f.later.contains(&fr.val(m)))
                    || f.carried.is_some()
                    || f.rows_gated);
            if (f.received || msg.is_some() || !offsets) && !other {
                self.acked_on_failure(f, &ev);
            }
        }
        // A commit of offsets, not a store for the auto commit (the packs' `offset_store`).
        if offsets && !store {
            self.committed_clients
                .extend(st.received_clients.iter().copied());
        }
        if offsets {
            match st.broker_seen.clone() {
                // Consume-transform-produce with a transactional producer.
                Some(begin) => self.pair(
                    Relation::OffsetsBesideBrokerTransaction,
                    ev.clone(),
                    begin,
                    Vec::new(),
                ),
                None => {
                    st.early_offsets.insert(ev.clone());
                }
            }
        }
        // The effects a second run repeats are durable before the ack. One ack after
        // an effect is enough to tell (a later ack of the path would pair with the
        // same effects again: quadratic in a long handler); with a dedup record on
        // the path they stay, as a rollback may undo it.
        let dedup_on_path = st.has_dedup();
        let repeatable = if dedup_on_path {
            st.nonidem.clone()
        } else {
            std::mem::take(&mut st.nonidem)
        };
        for x in repeatable {
            self.pair(
                Relation::RepeatableEffectBeforeAck {
                    dedup_on_path: dedup_on_path && !x.uncovered,
                    in_broker_transaction: x.in_broker_transaction,
                },
                x.ev,
                ev.clone(),
                Vec::new(),
            );
        }
        let p = Pending {
            msg: msg.map(|m| fr.val(m)),
            ev,
            transient: st.transient_source,
        };
        for f in st.floating.clone() {
            let kind = if f.sent {
                EffectKind::Handed {
                    send: f.spawn.clone(),
                }
            } else {
                EffectKind::Spawned {
                    spawn: f.spawn.clone(),
                }
            };
            self.fact(&p, f.effect.clone(), kind);
        }
        // Rows written into a client's buffer that no call has sent yet.
        for b in st.buffered.clone() {
            self.fact(&p, b, EffectKind::Buffered);
        }
        // A message acked again: the effects that follow are after this ack; those
        // between the two were the earlier ack's.
        if let Some(m) = p.msg {
            st.acks.retain(|_, q| q.msg != Some(m));
        }
        st.acks.insert(e.loc.clone(), p);
    }

    /// `ack` acknowledges on the path where `f`'s effects failed (and each earlier
    /// batch whose failures nothing read): one fact per failed effect.
    fn acked_on_failure(&mut self, f: &Failure, ack: &EvRef) {
        for (failed, handled) in f.all() {
            self.failures.push(AckAfterFailure {
                ack: ack.clone(),
                failed: failed.clone(),
                handled: handled.clone(),
                entry: self.entry.clone(),
                delivery: f.delivery,
            });
        }
    }

    /// A write on a path where an effect failed: the message's progress record (the
    /// failure stays on the path, and the write is an ack reached on it) or a record of
    /// the failure (which ends it), as the policy decides.
    fn write_after_failure(&mut self, st: &mut State, sql: &SqlFacts, ev: &EvRef) {
        let Some(mut f) = st.failed.take() else {
            return;
        };
        // The write names only rows whose operation succeeded: not the failed one.
        // Nor does a later item's write in a loop over items: it is that item's
        // effect, neither a record of this failure nor its progress.
        if f.rows_gated || f.carried.is_some() {
            st.failed = Some(f);
            return;
        }
        // Rows a progress write already retired: their loss is reported there; a
        // later write of them (deleting the rows marked done) neither repeats it nor
        // records the failure.
        if sql.tables.iter().any(|t| f.progressed.contains(t)) {
            st.failed = Some(f);
            return;
        }
        let write = WriteAfterFailure {
            verb: &sql.verb,
            marks_done: sql.marks_done,
            clears_done: sql.clears_done,
            rows_read_before: sql.tables.iter().any(|t| f.read_before.contains(t)),
            publish_failed: f.publish,
            batch: f.batch,
            advances_cursor: (matches!(sql.verb.as_str(), "UPDATE" | "INSERT") || sql.upsert)
                && !sql.tables.is_empty()
                && sql.tables.iter().all(|t| self.tables.is_cursor(t)),
            read_any_before: !f.read_before.is_empty(),
            went_past: f.went_past,
        };
        if (self.policy.progress_write)(&write) {
            self.acked_on_failure(&f, ev);
            f.progressed.extend(sql.tables.iter().cloned());
            st.failed = Some(f);
        }
    }

    fn write(&mut self, e: &'c Event, st: &mut State, fr: &Frame<'c>) -> Option<Failure> {
        self.progress_seen = true;
        let EventKind::Write {
            target,
            sql,
            unchecked,
            keyed_by,
            rows,
            autocommit,
        } = &e.kind
        else {
            return None;
        };
        // A sweep of a dedup table's expired entries (`DELETE FROM processed_events
        // WHERE seen_at < now() - ..`; a table named as one, or one this path claimed
        // into) is housekeeping: no message's effect, progress or record (its
        // retention is the dedup-retention rule's).
        let claimed_into = |t: &String| {
            (st.writes.iter().filter(|w| w.dedup)).any(|w| {
                self.write_tables
                    .get(&w.ev.loc)
                    .is_some_and(|ts| ts.contains(t))
            })
        };
        if sql.sweeps_by_age
            && !sql.tables.is_empty()
            && sql
                .tables
                .iter()
                .all(|t| self.tables.is_dedup(t) || claimed_into(t))
        {
            return None;
        }
        let ev = self.evref(e);
        self.split = None;
        self.write_after_failure(st, sql, &ev);
        // Rows read, published, then marked or deleted: a relay over the table.
        let marks = matches!(sql.verb.as_str(), "UPDATE" | "DELETE") || sql.upsert;
        if marks && !st.publishes.is_empty() {
            for t in &sql.tables {
                if st.read_tables.contains(t) {
                    self.relayed.insert(t.clone());
                }
            }
        }
        let outbox = sql.tables.iter().any(|t| self.tables.is_outbox(t));
        // A dedup record by its table's name; by its shape (a conflict-ignoring insert
        // of a key) only when no named dedup record is on the path, since then a shaped
        // insert is more likely an idempotent effect. Recording a dedup entry: an
        // insert (or upsert) into a dedup table; a cleanup `DELETE` of old entries is
        // not a dedup record.
        let named = sql.verb != "DELETE" && sql.tables.iter().any(|t| self.tables.is_dedup(t));
        let named_before = st.writes.iter().any(|w| w.named_dedup);
        // A claim by its shape is keyed by what a message brought: only on a path that
        // received one (docs/what-is-analyzed.md: elsewhere, an idempotent write). Keyed by constants
        // the caller passed, and by nothing of a message: a lock or a constant marker,
        // not a claim.
        let fixed_key = {
            let origins: Vec<_> = keyed_by.iter().map(|(v, o)| fr.origin(*v, *o)).collect();
            origins.contains(&Origin::Constant) && !origins.contains(&Origin::Message)
        };
        let claim_shape = sql.is_claim_shape() && !named_before && st.message && !fixed_key;
        let dedup = !outbox && !sql.guarded && (named || claim_shape);
        let tx_val = target
            .map(|t| fr.val(t))
            .filter(|t| st.txs.get(t).is_some_and(|x| x.open));
        let lent = target.and_then(|t| fr.stores.get(&t).copied());
        let auto = tx_val.is_none() && lent.unwrap_or(*autocommit);
        let bound_rows = fr.rows_of(keyed_by.iter().map(|(v, _)| *v), rows);
        self.retiring(st, sql, &ev, tx_val, auto);
        self.cursor_advanced(st, sql, &ev, tx_val, auto, &bound_rows);
        // A business write can fail (a named dedup record's failure is not the
        // effect's; a Redis `SET` is a cache or a lock). A claim by its shape alone is
        // the effect itself when no other effect follows it (`effect_now` ends it).
        let shaped_claim = dedup && !named;
        let failure = ((!dedup || shaped_claim) && sql.kind == SqlKind::Write && sql.verb != "SET")
            .then(|| Failure {
                shaped_claim,
                ..Failure::of(ev.clone(), false, st)
            });
        let nonidem = !outbox
            && !dedup
            && !sql.guarded
            && (sql.self_referencing
                || (sql.verb == "INSERT"
                    && !sql.ignores_conflict
                    && !sql.upsert
                    && !sql.keyed
                    && !self.tables.has_unique_key(&sql.tables)));
        let applied = Applied::new(ev.clone(), st);
        self.write_pairs(
            st,
            &ev,
            (tx_val, auto),
            (dedup, named, outbox, sql.guarded),
            *unchecked,
        );
        // A dedup record already on this path covers the effect, as one on the path
        // to the ack does: an item's effect gated by its own claim in a loop over a
        // batch (`for r in records { claim; if none { continue } effect }`) is
        // not applied again when the batch, acked after the loop, is redelivered.
        // So too in a task (a worker, a spawned task, `spawn_blocking(..).await`): a
        // claim that commits apart from the effect still refuses the repeat (the
        // window between them is a split dedup transaction, not a missing dedup record).
        let claimed = st.claimed();
        let nonidem = nonidem && !claimed;
        match tx_val.and_then(|t| st.txs.get_mut(&t)) {
            Some(tx) => {
                if nonidem {
                    tx.nonidem.insert(applied.clone());
                }
                tx.known |= sql.kind == SqlKind::Write;
                tx.non_delete |= sql.kind == SqlKind::Write && sql.verb != "DELETE";
                tx.writes.push(ev);
                tx.outbox |= outbox;
            }
            None => {
                // On a connection a caller lends (entered by itself, the function
                // does not know whether a transaction holds it): its callers say.
                if !outbox && sql.kind == SqlKind::Write && lent != Some(false) {
                    let change = applied.clone().deleting(sql.verb == "DELETE");
                    self.durable_change(st, change, &ev);
                }
                if nonidem {
                    st.nonidem.insert(applied);
                }
                self.effect_now(st, ev);
            }
        }
        failure
    }

    fn publish(
        &mut self,
        e: &'c Event,
        st: &mut State,
        non_idempotent: bool,
        capped: bool,
        rows: &[String],
    ) -> Option<Failure> {
        let ev = self.evref(e);
        self.split = None;
        // A dead-letter, retry or failure publish keeps the failed message.
        st.failed = None;
        let failure = (!capped).then(|| Failure::of(ev.clone(), true, st));
        if non_idempotent {
            st.nonidem.insert(Applied::new(ev.clone(), st));
        }
        self.claims_before(st, &ev);
        // A publish inside a Kafka transaction is still a step apart from the database
        // (SQL inside that transaction is an effect in the broker transaction, not
        // counted here).
        for d in st.durable.clone() {
            self.pair(
                Relation::PublishApartFromDbChange {
                    change_in_broker_transaction: d.in_broker_transaction,
                    change_deletes_only: d.deletes_only,
                    change_after_publish: false,
                },
                ev.clone(),
                d.ev,
                Vec::new(),
            );
        }
        let open: Vec<Tx> = st
            .txs
            .values()
            .filter(|t| t.open && t.known && !t.outbox)
            .cloned()
            .collect();
        for t in open {
            let related = t
                .begin
                .iter()
                .map(|b| (b.clone(), "transaction begins here".into()))
                .collect();
            self.pair(
                Relation::PublishApartFromDbChange {
                    change_in_broker_transaction: false,
                    change_deletes_only: !t.non_delete,
                    change_after_publish: false,
                },
                ev.clone(),
                t.writes[0].clone(),
                related,
            );
        }
        // Rows read and retired before this publish (durably), which it publishes
        // (what it sends is taken from the rows read of a retired table): a relay's
        // progress record ahead of what it publishes.
        if !capped {
            let retired: Vec<Retiring> = st
                .retiring
                .iter()
                .filter(|r| r.tx.is_none() && r.tables.iter().any(|t| rows.contains(t)))
                .cloned()
                .collect();
            for r in retired {
                self.pair(
                    Relation::RowsRetiredBeforePublish {
                        deletes: r.deletes,
                        many_rows: r.many_rows,
                        outbox_table: r.outbox_table,
                        cursor: r.cursor,
                    },
                    r.ev,
                    ev.clone(),
                    Vec::new(),
                );
            }
        }
        st.publishes.insert(ev.clone());
        self.effect_now(st, ev);
        failure
    }

    /// A `DELETE` of rows of a table the path read (not a clean-up of rows already
    /// marked done), or an `UPDATE` that marks them done: written in a transaction
    /// (`tx`, durable when it commits) or in autocommit (`auto`); where it goes is
    /// unknown otherwise, and it is not followed.
    fn retiring(
        &self,
        st: &mut State,
        sql: &SqlFacts,
        ev: &EvRef,
        tx: Option<super::Val>,
        auto: bool,
    ) {
        let deletes = sql.verb == "DELETE" && !sql.clears_done;
        if !(deletes || (sql.verb == "UPDATE" && sql.marks_done)) || (tx.is_none() && !auto) {
            return;
        }
        let tables: Vec<String> = sql
            .tables
            .iter()
            .filter(|t| st.read_tables.contains(*t))
            .cloned()
            .collect();
        if tables.is_empty() {
            return;
        }
        st.retiring.insert(Retiring {
            ev: ev.clone(),
            outbox_table: tables.iter().any(|t| self.tables.is_outbox(t)),
            tables,
            tx,
            deletes,
            many_rows: sql.many_rows,
            cursor: false,
        });
    }

    /// A relay's or tailer's progress cursor (a write of a table that holds a
    /// position by its name, `Tables::is_cursor`) set from rows the path read (the
    /// last row's id, the highest sequence): it advances over those rows, written in
    /// a transaction (`tx`) or in autocommit (`auto`). Published after it, they are
    /// retired before they are published, as a `DELETE` of them would be.
    fn cursor_advanced(
        &self,
        st: &mut State,
        sql: &SqlFacts,
        ev: &EvRef,
        tx: Option<super::Val>,
        auto: bool,
        bound_rows: &[String],
    ) {
        let sets = matches!(sql.verb.as_str(), "UPDATE" | "INSERT" | "SET") || sql.upsert;
        let cursor = !sql.tables.is_empty() && sql.tables.iter().all(|t| self.tables.is_cursor(t));
        if !(sets && cursor) || (tx.is_none() && !auto) {
            return;
        }
        let tables: Vec<String> = bound_rows
            .iter()
            .filter(|t| st.read_tables.contains(*t) && !self.tables.is_cursor(t))
            .cloned()
            .collect();
        if tables.is_empty() {
            return;
        }
        st.retiring.insert(Retiring {
            ev: ev.clone(),
            outbox_table: tables.iter().any(|t| self.tables.is_outbox(t)),
            tables,
            tx,
            deletes: false,
            many_rows: true,
            cursor: true,
        });
    }

    fn external(
        &mut self,
        e: &'c Event,
        st: &mut State,
        non_idempotent: bool,
        kind: &ExternalKind,
    ) -> Option<Failure> {
        let ev = self.evref(e);
        self.split = None;
        // A cache entry that fails loses nothing of the message.
        let failure = (*kind != ExternalKind::Cache).then(|| Failure::of(ev.clone(), false, st));
        if non_idempotent {
            st.nonidem.insert(Applied::new(ev.clone(), st));
        }
        self.claims_before(st, &ev);
        if let Some(b) = st.broker_open.clone() {
            self.pair(Relation::InBrokerTransaction, ev.clone(), b, Vec::new());
        }
        if matches!(kind, ExternalKind::Store(_)) {
            self.store_write(st, &ev);
        }
        self.effect_now(st, ev);
        failure
    }

    fn broker_begin(&mut self, e: &'c Event, st: &mut State) {
        let ev = self.evref(e);
        // Offsets committed earlier on this path, in consume-transform-produce with a
        // transactional producer, are beside its transaction too.
        for ack in std::mem::take(&mut st.early_offsets) {
            self.pair(
                Relation::OffsetsBesideBrokerTransaction,
                ack,
                ev.clone(),
                Vec::new(),
            );
        }
        st.broker_open = Some(ev.clone());
        if st.broker_seen.is_none() {
            st.broker_seen = Some(ev);
        }
    }

    /// A batch's failed entries nothing reads (a nack-like delete batch loses nothing:
    /// its failed entries come back). A delivery report nothing reads is one send's
    /// unseen outcome: it does not hide a failure the path already has.
    pub(super) fn entries_unread(
        &mut self,
        e: &'c Event,
        st: &mut State,
        what: &EventKind,
        delivery: bool,
    ) {
        let kept = delivery && st.failed.as_ref().is_some_and(|f| !f.delivery);
        if kept || !matches!(what, EventKind::Publish { .. } | EventKind::External { .. }) {
            return;
        }
        let failed = Event {
            kind: what.clone(),
            ..e.clone()
        };
        let mut f = Failure::of(
            self.evref(&failed),
            matches!(what, EventKind::Publish { .. }),
            st,
        );
        f.handled = Some(e.loc.clone());
        f.batch = true;
        f.delivery = delivery;
        // An earlier batch nothing read stays unread.
        if let Some(prev) = st.failed.as_ref().filter(|p| p.unread_batch()) {
            if f.unread_batch() {
                f.keep_batches(prev);
            }
        }
        st.failed = Some(f);
    }
}

/// A transaction rolled back: its writes (claims included) never happened.
fn rollback(st: &mut State, t: super::Val) {
    st.txs.remove(&t);
    let gone: Vec<EvRef> = st
        .writes
        .iter()
        .filter(|w| w.tx == Some(t))
        .map(|w| w.ev.clone())
        .collect();
    st.writes.retain(|w| !gone.contains(&w.ev));
    st.retiring.retain(|r| r.tx != Some(t));
    st.unchecked.retain(|c| !gone.contains(c));
}

/// An `.await` of a task handle (`None`: all of them, or a join of futures) finishes
/// the tasks it names. Awaiting a join of futures (`join_all(items.map(|i| op(i)))`)
/// gives their operations' outcomes: a failure among them is still the one the code
/// after it handles (`cause`, kept).
/// Awaiting a set of spawned tasks (`None`) with no such operation before it gives the
/// tasks' outcomes: a task that did an effect may have failed (its error, or a panic),
/// and that failure is the one the code after it handles (`while let Some(r) =
/// set.join_next().await { if let Err(e) = r { log } }`). An error handling follows
/// such an await only where its outcomes are taken (lower/joined.rs).
fn awaited(st: &mut State, handle: Option<Val>, cause: Option<Failure>) -> Option<Failure> {
    let first = await_tasks(st, handle);
    match handle {
        // A handle's own task: its failed effect is the outcome the code matches
        // (`Ok(Err(e)) =>`); read only by error handling the lowering puts there.
        Some(_) => first.map(|e| Failure::of(e, false, st)),
        // The operation run for each item, joined: one of the items failed.
        None => (cause.map(|c| Failure { joined: true, ..c }))
            .or_else(|| first.map(|e| Failure::of(e, false, st))),
    }
}

/// Awaiting a task handle (`None`: all of them) finishes the tasks it names. Gives
/// the effect of the first task finished.
fn await_tasks(st: &mut State, handle: Option<Val>) -> Option<EvRef> {
    let done = match handle {
        Some(h) => {
            let (done, left) = std::mem::take(&mut st.floating)
                .into_iter()
                .partition(|f| f.handle == Some(h));
            st.floating = left;
            done
        }
        None => std::mem::take(&mut st.floating),
    };
    let (records, left) = std::mem::take(&mut st.task_records)
        .into_iter()
        .partition(|(h, _)| handle.is_none() || *h == handle);
    st.task_records = left;
    for (_, w) in records {
        if !st.writes.contains(&w) {
            st.writes.insert(w);
        }
    }
    // (Work handed to a worker loop over a channel only when no task of its own
    // is awaited: a reply awaited, `match reply_rx.await { Ok(Err(e)) => .. }`,
    // brings back the outcome the worker sent; else its failures are the loop's.)
    let first = (done.iter().find(|f| !f.sent))
        .or_else(|| done.iter().find(|f| f.sent && handle.is_none()))
        .map(|f| f.effect.clone());
    finish_tasks(st, done);
    first
}

/// `false` returned: the failure the path carries is told to the caller.
fn told(st: &mut State) -> Option<Failure> {
    if let Some(f) = st.failed.as_mut() {
        f.told = true;
    }
    None
}

/// The error of the operation just before (`cause`) is handled here and the code
/// goes on (`arm`: on the failure side of a branch, where it did fail).
fn error_ignored(e: &Event, st: &mut State, cause: Option<Failure>, told: bool, arm: bool) {
    // `let _ = producer.send(..).await` drops the send's error and its delivery
    // report at once: the unread report stays the failure (an unconfirmed publish)
    // until a `flush` / `wait` serves it, and then the dropped error remains.
    if let (Some(c), Some(f), false) = (&cause, st.failed.as_mut(), arm) {
        if f.delivery && f.effect == c.effect {
            f.send_ignored = Some(e.loc.clone());
            return;
        }
    }
    if let Some(mut c) = cause {
        if arm && c.publish && !st.failed_publishes.contains(&c.effect) {
            st.failed_publishes.insert(c.effect.clone());
        }
        // On the side where a write failed (an arm taking its error, not `let _ =`
        // going on either way) it changed nothing: a publish there (a dead-letter
        // publish) is made apart from no change of it, and it is not applied twice.
        if arm && !c.publish {
            st.durable.retain(|a| a.ev.loc != c.effect.loc);
            st.nonidem.retain(|a| a.ev.loc != c.effect.loc);
        }
        c.handled = Some(e.loc.clone());
        c.told = told;
        c.received |= st.received;
        st.failed = Some(c);
    }
}

/// A `flush` / `wait` serves the delivery report not read yet: a send whose own
/// error was dropped stays failed; the wait's outcome is the send's delivery (it
/// fails when the record was not delivered), for the error handling right after it.
fn confirms_waited(st: &mut State) -> Option<Failure> {
    let f = st.failed.take_if(|f| f.delivery)?;
    let mut c = f.clone();
    c.delivery = false;
    c.batch = false;
    c.handled = None;
    c.send_ignored = None;
    c.told = false;
    c.earlier_batches = Vec::new();
    if let Some(h) = f.send_ignored {
        st.failed = Some(Failure {
            handled: Some(h),
            ..c.clone()
        });
    }
    Some(c)
}

/// A failure handled at one of `handled` is propagated after all: on the error edge
/// it is being returned (as by `op?`); on the other the operation did not fail.
fn propagated(st: &mut State, handled: &[crate::ir::Loc], err: bool) {
    let ours = st
        .failed
        .as_ref()
        .is_some_and(|f| f.handled.as_ref().is_some_and(|h| handled.contains(h)));
    if !ours {
        return;
    }
    if err {
        if let Some(f) = st.failed.as_mut() {
            f.handled = None;
            f.told = false;
        }
    } else {
        st.failed = None;
    }
}

/// Rows read again after a failed publish are new rows: a delete of them is not the
/// progress record of what failed to publish.
fn read(st: &mut State, tables: &[String]) {
    if let Some(f) = st.failed.as_mut() {
        f.read_before.retain(|t| !tables.contains(t));
    }
    st.read_tables.extend(tables.iter().cloned());
    st.retiring
        .retain(|r| !r.tables.iter().any(|t| tables.contains(t)));
}

/// After a write into a client's buffer: the write stays buffered, or (`sent`) all
/// that was buffered is sent. The write's own failure is still the call's.
fn buffer(st: &mut State, write: EvRef, sent: bool, cause: Option<Failure>) -> Option<Failure> {
    if sent {
        st.buffered.clear();
    } else {
        st.buffered.insert(write);
    }
    cause
}

/// The side where a batch call's entries failed: a write there is compensation
/// (`live_publishes`). The failure of the operation before stays the cause.
fn entries_failed(failed: EvRef, st: &mut State, cause: Option<Failure>) -> Option<Failure> {
    if !st.failed_publishes.iter().any(|f| f.loc == failed.loc) {
        st.failed_publishes.insert(failed);
    }
    cause
}
