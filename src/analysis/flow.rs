//! Abstract interpretation of the delivery model: walks a function's tree with an
//! abstract state per path (joined where paths meet), follows calls into functions
//! of the same crate (their bodies are spliced in with the caller's values bound to
//! the callee's parameters), and records *ordering facts*: an ack that runs before
//! an effect (or before the commit of the transaction holding it) on some path.
//!
//! The state per path:
//! - pending acks: progress records made on this path, with the message they confirm;
//! - transactions begun in the analyzed region: open or finished, with their writes;
//! - floating effects: effects of spawned tasks whose handle was not awaited yet.
//!
//! A `Receive` of message m ends the pending acks of m (it is a new message), and
//! acks made inside a loop body do not flow around the loop's back edge: each
//! iteration handles its own message. A transaction that is dropped or rolled back
//! never applies its writes.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::rc::Rc;

mod calls;
mod facts;
mod reach;
mod state;
mod workers;
mod writes;

pub use reach::effectful_functions;
use reach::reaches_ack;

pub use super::resolve::{Candidate, Resolver, MAX_METHOD_CANDIDATES};
pub use crate::ir::Tables;
use crate::ir::{
    Call, ClosureRun, Crate, Event, EventKind, ExitKind, ExternalKind, Loc, Node, ValueId,
};
pub use facts::{
    AckBeforeEffect, AckOnFailure, Durability, EffectKind, EvData, EvRef, Facts, PairFact, Relation,
};
use state::{
    error_result, join_opt, live_publishes, union, Applied, Failure, Floating, Joiner, List,
    Pending, State, Tx, WriteRec,
};

/// How deep calls are followed from an entry function.
pub const MAX_CALL_DEPTH: usize = 6;
/// How many calls are followed (function bodies spliced in) from one entry
/// function; later calls are treated like calls into another crate. Without it,
/// six levels of functions that each call the next four times (a 1 KB file) took
/// minutes: the state grows with every splice. The repositories and corpora
/// msgaudit is measured on stay under 500.
pub const MAX_INLINED_CALLS: u32 = 1_000;

/// How many effects after one ack are recorded from one entry function (a finding
/// shows its first labels; see [`crate::diagnostic::MAX_LABELS`]).
pub const MAX_EFFECTS_PER_ACK: usize = 64;

/// How much work the analysis of one entry function may do: nodes visited, pairs
/// of events considered (an ack with each later effect, an effect with each later
/// ack) and pending acks copied at branches. A function over it is not analyzed
/// (its facts are dropped) and is named in [`Facts::over_budget`]. Hand-written
/// functions stay far below it: the largest entry of the 46 corpus repositories
/// takes 5 700 (a `main` that wires a whole service); 10 000 receive/write/commit/ack
/// steps in one function take 190 000, 1 000 acking `if`s in a row 1.5 million
/// (0.5 s), and 4 000 of them would take 24 million.
pub const MAX_WORK_PER_ENTRY: u64 = 2_000_000;

/// A value in the analysis: (frame of the function activation, value in that function).
type Val = (u32, ValueId);

/// The success and error continuations of a call into the crate, for the
/// `ResultBranch` that matches on its result.
enum Split {
    Apart(Box<(Option<State>, Option<State>)>),
    /// Success is the state after the call, and no error reaches the caller's match.
    Fall,
}

/// The states leaving a node, by how they leave it.
#[derive(Default)]
struct Outcome {
    fall: Option<State>,
    ret_err: Option<State>,
    ret: Option<State>,
    brk: Vec<(Option<u32>, State)>,
    cont: Vec<(Option<u32>, State)>,
}

impl Outcome {
    fn absorb_exits(&mut self, o: Outcome) {
        if let Some(s) = o.ret_err {
            join_opt(&mut self.ret_err, s);
        }
        if let Some(s) = o.ret {
            join_opt(&mut self.ret, s);
        }
        self.brk.extend(o.brk);
        self.cont.extend(o.cont);
    }
}

#[derive(Clone)]
struct Frame<'c> {
    id: u32,
    fn_idx: usize,
    map: HashMap<ValueId, Val>,
    /// Closures the caller passed for parameters, with the frame they were written in.
    closures: HashMap<ValueId, Rc<(&'c Node, Frame<'c>)>>,
    /// Where the caller's arguments for parameters come from (a constant, a message).
    origins: HashMap<ValueId, crate::ir::Origin>,
}

impl Frame<'_> {
    fn val(&self, v: ValueId) -> Val {
        self.map.get(&v).copied().unwrap_or((self.id, v))
    }

    /// Where `v` comes from: as the function sees it, or (a parameter) as its caller
    /// gave it.
    fn origin(&self, v: ValueId, local: crate::ir::Origin) -> crate::ir::Origin {
        match local {
            crate::ir::Origin::Unknown => self.origins.get(&v).copied().unwrap_or(local),
            o => o,
        }
    }
}

/// Records `other` among the events seen with one primary event, unless
/// [`MAX_EFFECTS_PER_ACK`] others are already there: whether `other` is recorded.
fn within_cap(seen: &mut BTreeSet<Loc>, other: &Loc) -> bool {
    if seen.contains(other) {
        return true;
    }
    if seen.len() >= MAX_EFFECTS_PER_ACK {
        return false;
    }
    seen.insert(other.clone());
    true
}

/// Tasks awaited: their non-idempotent effects are now the path's, applied before
/// whatever acks next (non-idempotent effects).
fn finish_tasks(st: &mut State, done: Vec<Floating>) {
    for f in done {
        let Some(in_broker_transaction) = f.nonidem else {
            continue;
        };
        let applied = Applied {
            ev: f.effect,
            in_broker_transaction,
            deletes_only: false,
        };
        if !st.nonidem.contains(&applied) {
            st.nonidem.insert(applied);
        }
    }
}

/// Runs the analysis from every function of the crate that can reach a delivery
/// event (an ack, a write, a publish, an external effect, a Kafka transaction).
pub fn crate_facts(krate: &Crate, tables: &Tables) -> Facts {
    let resolver = Resolver::new(krate);
    let reach = reaches_ack(krate, &resolver);
    let write_tables: HashMap<&Loc, &[String]> = krate
        .functions
        .iter()
        .flat_map(|f| f.body.events())
        .filter_map(|e| match &e.kind {
            EventKind::Write { sql, .. } => Some((&e.loc, sql.tables.as_slice())),
            _ => None,
        })
        .collect();
    let mut facts = BTreeSet::new();
    let mut pairs = BTreeSet::new();
    let mut failures = BTreeSet::new();
    let mut handler_effects = false;
    let mut relays: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut claim_tables: BTreeSet<String> = BTreeSet::new();
    let mut durable_tables: BTreeMap<Loc, BTreeSet<String>> = write_tables
        .iter()
        .map(|(l, ts)| ((*l).clone(), ts.iter().cloned().collect()))
        .collect();
    let mut received_clients = BTreeSet::new();
    let mut effect_clients = BTreeSet::new();
    let mut over_budget = Vec::new();
    let workers = workers::worker_loops(krate);
    for (i, f) in krate.functions.iter().enumerate() {
        if !reach[i] || f.dependency {
            continue;
        }
        let mut an = Interp {
            split: None,
            handler_effects: false,
            received_clients: BTreeSet::new(),
            effect_clients: BTreeSet::new(),

            pairs: Vec::new(),
            failures: Vec::new(),
            tables,
            krate,
            resolver: &resolver,
            stack: vec![i],
            via: Vec::new(),
            next_frame: 1,
            facts: Vec::new(),
            tasks: 0,
            effects_per_ack: HashMap::new(),
            others_per_primary: HashMap::new(),
            work: 0,
            entry: f.name.clone(),
            reach: &reach,
            relayed: BTreeSet::new(),
            claim_tables: BTreeSet::new(),
            write_tables: &write_tables,
            commit_tables: HashMap::new(),
            workers: &workers,
            worker_cache: HashMap::new(),
            in_worker: Vec::new(),
        };
        let frame = Frame {
            id: 0,
            fn_idx: i,
            map: HashMap::new(),
            closures: HashMap::new(),
            origins: HashMap::new(),
        };
        let mut start = State::new();
        start.message = f.takes_message;
        an.run(&f.body, start, &frame);
        if an.work > MAX_WORK_PER_ENTRY {
            // Too many paths: what was found before the budget ran out is dropped
            // with the rest, so that a function is analyzed whole or not at all.
            over_budget.push((f.name.clone(), f.loc.clone()));
            continue;
        }
        if !an.relayed.is_empty() {
            relays
                .entry(an.entry.clone())
                .or_default()
                .extend(an.relayed.iter().cloned());
        }
        for (loc, tables) in an.commit_tables.drain() {
            durable_tables.entry(loc).or_default().extend(tables);
        }
        claim_tables.extend(an.claim_tables.iter().cloned());
        handler_effects |= an.handler_effects;
        received_clients.extend(an.received_clients.iter().copied());
        effect_clients.extend(an.effect_clients.iter().copied());
        facts.extend(an.facts);
        pairs.extend(an.pairs);
        failures.extend(an.failures);
    }
    Facts {
        acks: facts.into_iter().collect(),
        pairs: pairs.into_iter().collect(),
        failures: failures.into_iter().collect(),
        handler_effects,
        received_clients,
        effect_clients,
        effectful: effectful_functions(krate, &resolver),
        relays,
        cursor_tables: durable_tables
            .values()
            .flatten()
            .filter(|t| tables.is_cursor(t))
            .cloned()
            .collect(),
        durable_tables,
        claim_tables,
        over_budget,
    }
}

struct Interp<'c> {
    krate: &'c Crate,
    resolver: &'c Resolver<'c>,
    stack: Vec<usize>,
    via: Vec<Loc>,
    next_frame: u32,
    facts: Vec<AckBeforeEffect>,
    /// How many spawned tasks' bodies are being run (their effects are collected).
    tasks: u32,
    /// The effects recorded after each ack (at most [`MAX_EFFECTS_PER_ACK`]).
    effects_per_ack: HashMap<Loc, BTreeSet<Loc>>,
    /// The other events recorded with each primary event, per relation (at most
    /// [`MAX_EFFECTS_PER_ACK`]): a finding is one per primary, and recording every
    /// pair of a long function would grow with the product of its events.
    others_per_primary: HashMap<(Relation, Loc), BTreeSet<Loc>>,
    /// The work done from this entry so far ([`MAX_WORK_PER_ENTRY`]).
    work: u64,
    pairs: Vec<PairFact>,
    failures: Vec<AckOnFailure>,
    /// The success and error continuations of the last call into the crate.
    split: Option<Split>,
    /// Effects on a path after a receive: the crate's consumers have side effects.
    handler_effects: bool,
    received_clients: BTreeSet<(usize, u32)>,
    effect_clients: BTreeSet<(usize, u32)>,

    tables: &'c Tables,
    entry: String,
    reach: &'c [bool],
    /// Tables this entry relays: rows read from them, published, then marked or
    /// deleted after the publish on the same path (SPEC §2, "Outbox").
    relayed: BTreeSet<String>,
    /// Tables of tested dedup records an effect followed ([`Facts::claim_tables`]).
    claim_tables: BTreeSet<String>,
    /// The tables each write event writes, and those each commit made durable.
    write_tables: &'c HashMap<&'c Loc, &'c [String]>,
    commit_tables: HashMap<Loc, BTreeSet<String>>,
    /// The crate's worker loops (loops that receive from an in-process channel),
    /// the tasks they leave floating when run once from this entry, and those
    /// being run.
    workers: &'c workers::Workers<'c>,
    worker_cache: HashMap<usize, Vec<Floating>>,
    in_worker: Vec<usize>,
}

impl<'c> Interp<'c> {
    fn evref(&self, e: &Event) -> EvRef {
        let d = if e.describe.is_empty() {
            "effect"
        } else {
            e.describe.as_str()
        };
        let phrase = match &e.kind {
            EventKind::Write { .. } => format!("runs the {d}"),
            EventKind::Publish { .. } => format!("publishes the {d}"),
            EventKind::External {
                kind: ExternalKind::Payment,
                ..
            } => format!("makes the {d}"),
            EventKind::External { .. } => format!("sends the {d}"),
            _ => d.to_string(),
        };
        EvRef::new(EvData {
            loc: e.loc.clone(),
            text: e.text.clone(),
            describe: d.to_string(),
            phrase,
            via: self.via.clone(),
            capped: matches!(e.kind, EventKind::Publish { capped: true, .. }),
        })
    }

    fn fact(&mut self, p: &Pending, effect: EvRef, kind: EffectKind) {
        self.work += 1;
        // An ack followed by thousands of effects is one finding with its first
        // effects; recording every pair would grow with their product.
        let seen = self.effects_per_ack.entry(p.ev.loc.clone()).or_default();
        if !within_cap(seen, &effect.loc) {
            return;
        }
        self.facts.push(AckBeforeEffect {
            ack: p.ev.clone(),
            effect,
            kind,
            entry: self.entry.clone(),
        });
    }

    /// An effect applied now: every pending ack ran before it.
    /// An effect on this path: the consumers whose messages led here have side effects.
    fn note_effect(&mut self, st: &State) {
        if st.received {
            self.handler_effects = true;
        }
        self.effect_clients
            .extend(st.received_clients.iter().copied());
    }

    fn effect_now(&mut self, st: &mut State, ev: EvRef) {
        self.note_effect(st);
        let pend: Vec<Pending> = st.acks.values().cloned().collect();
        for p in &pend {
            self.fact(p, ev.clone(), EffectKind::Immediate);
        }
        if self.tasks > 0 && !st.before_recv {
            st.effects.insert(ev);
        }
    }

    fn run(&mut self, node: &'c Node, st: State, fr: &Frame<'c>) -> Outcome {
        // Over the budget every path ends here: the entry's analysis unwinds at once.
        self.work += 1;
        if self.work > MAX_WORK_PER_ENTRY {
            return Outcome::default();
        }
        match node {
            Node::Seq(items) => {
                let mut out = Outcome::default();
                let mut cur = Some(st);
                for item in items {
                    let Some(s) = cur.take() else { break };
                    let mut o = self.run(item, s, fr);
                    cur = o.fall.take();
                    out.absorb_exits(o);
                }
                out.fall = cur;
                out
            }
            Node::ResultBranch { scrutinee, ok, err } => {
                // The arms see the callee's success and error states apart. An empty
                // scrutinee matches on the result of the call just before it
                // (`let r = handle(..).await; match r { … }`).
                if !scrutinee.is_empty() {
                    self.split = None;
                }
                let mut out = self.run(scrutinee, st, fr);
                let Some(fall) = out.fall.take() else {
                    return out;
                };
                let (ok_st, err_st) = match self.split.take() {
                    Some(Split::Apart(b)) => *b,
                    Some(Split::Fall) => (Some(fall), None),
                    None => (Some(fall.clone()), Some(fall)),
                };
                let mut merged = None;
                for (arm, s) in [(ok, ok_st), (err, err_st)] {
                    let Some(s) = s else { continue };
                    let mut o = self.run(arm, s, fr);
                    if let Some(f) = o.fall.take() {
                        join_opt(&mut merged, f);
                    }
                    out.absorb_exits(o);
                }
                out.fall = merged;
                out
            }
            Node::Branch(alts) => {
                let mut out = Outcome::default();
                let (mut fall, mut ret, mut ret_err) =
                    (Joiner::default(), Joiner::default(), Joiner::default());
                for a in alts {
                    // Copying the pending acks is the part of a branch's copy that
                    // grows with the function (the other lists end with each message).
                    self.work += st.acks.len() as u64;
                    let o = self.run(a, st.clone(), fr);
                    if let Some(f) = o.fall {
                        fall.push(f);
                    }
                    if let Some(s) = o.ret {
                        ret.push(s);
                    }
                    if let Some(s) = o.ret_err {
                        ret_err.push(s);
                    }
                    out.brk.extend(o.brk);
                    out.cont.extend(o.cont);
                }
                out.ret = ret.finish();
                out.ret_err = ret_err.finish();
                out.fall = if alts.is_empty() {
                    Some(st)
                } else {
                    fall.finish()
                };
                out
            }
            Node::Loop { body, label, each } => {
                // A failure before the loop is no iteration's (a start-up step before
                // the consume loop): the loop's acks do not see it; it stands again
                // after the loop.
                let mut st = st;
                // (A batch's unread per-entry failures concern the items the loop
                // goes through: they stay.)
                let outer = match &st.failed {
                    Some(f) if f.batch => None,
                    _ => st.failed.take(),
                };
                let entry = st.clone();
                let mut head = st;
                let mut out = Outcome::default();
                let mut after: Option<State> = None;
                // What the iterations made durable or published stays so after the
                // loop, though each iteration starts over (a batch job writing in
                // a loop, then publishing once).
                let (mut done_durable, mut done_publishes) = (List::default(), List::default());
                // The non-idempotent effects of a batch's items that no ack of their own
                // took are applied again when the batch, acked after the loop, is
                // redelivered.
                let mut done_nonidem = List::default();
                for _ in 0..2 {
                    let o = self.run(body, head.clone(), fr);
                    let mut back = Joiner::default();
                    if let Some(s) = o.fall {
                        back.push(s);
                    }
                    for (l, s) in o.cont {
                        if l.is_none() || l == *label {
                            back.push(s);
                        } else {
                            out.cont.push((l, s));
                        }
                    }
                    let mut brk = Joiner::default();
                    for (l, s) in o.brk {
                        if l.is_none() || l == *label {
                            brk.push(s);
                        } else {
                            out.brk.push((l, s));
                        }
                    }
                    if let Some(s) = brk.finish() {
                        join_opt(&mut after, s);
                    }
                    let back = back.finish();
                    if let Some(s) = o.ret_err {
                        join_opt(&mut out.ret_err, s);
                    }
                    if let Some(s) = o.ret {
                        join_opt(&mut out.ret, s);
                    }
                    // A second pass sees what one iteration leaves for the next; when
                    // nothing comes back, or it adds nothing, it would find the same
                    // (and nested loops would double their work at each level).
                    let Some(mut b) = back else { break };
                    union(&mut done_durable, &b.durable);
                    union(&mut done_publishes, &b.publishes);
                    if *each {
                        union(&mut done_nonidem, &b.nonidem);
                    }
                    // Acks of this iteration's message do not carry into the next one.
                    b.carry_to_next_iteration(&entry, *each);
                    let before = head.clone();
                    head.join(&b);
                    if head == before {
                        break;
                    }
                }
                if let Some(a) = after.as_mut() {
                    union(&mut a.durable, &done_durable);
                    union(&mut a.publishes, &done_publishes);
                    union(&mut a.nonidem, &done_nonidem);
                }
                out.fall = after;
                if outer.is_some() {
                    for s in [&mut out.fall, &mut out.ret, &mut out.ret_err]
                        .into_iter()
                        .flatten()
                        .chain(out.brk.iter_mut().map(|(_, s)| s))
                        .chain(out.cont.iter_mut().map(|(_, s)| s))
                    {
                        if s.failed.is_none() {
                            s.failed.clone_from(&outer);
                        }
                    }
                }
                out
            }
            Node::Closure {
                body,
                run,
                param,
                handle,
                loc,
                text,
            } => self.closure(body, *run, *param, *handle, loc, text, st, fr),
            Node::Exit(k) => {
                let mut out = Outcome::default();
                match k {
                    ExitKind::Return { err: Some(true) } => out.ret_err = Some(st),
                    ExitKind::Return { .. } => out.ret = Some(st),
                    ExitKind::Break { label } => out.brk.push((*label, st)),
                    ExitKind::Continue { label } => out.cont.push((*label, st)),
                    ExitKind::Abort => {}
                }
                out
            }
            Node::Event(e) => self.event(e, st, fr),
        }
    }

    fn event(&mut self, e: &'c Event, mut st: State, fr: &Frame<'c>) -> Outcome {
        let mut out = Outcome::default();
        // What the operation just before failed with, if it failed: only the error
        // handling right after it reads it (acks after a failure).
        let cause = st.cause.take();
        let mut new_cause = None;
        match &e.kind {
            EventKind::Receive {
                msg,
                element,
                client,
            } => {
                st.received = true;
                st.message = true;
                if let Some(c) = client {
                    let key = (fr.fn_idx, *c);
                    self.received_clients.insert(key);
                    if !st.received_clients.contains(&key) {
                        st.received_clients.insert(key);
                    }
                }
                // Each message is its own path (SPEC §2): a new message ends the
                // pending acks of the ones received before it, of any value; an
                // element of a batch ends only its own (the batch's ack may follow).
                let m = fr.val(*msg);
                st.acks.retain(|_, p| *element && p.msg != Some(m));
                // Tasks spawned before this message arrived (a background relay, a
                // server started in `main`) are not this message's effects.
                // Nor are the effects the messages before it had: they pair with no ack
                // of this one (as at a loop's back edge).
                if let Some(f) = st.failed.as_mut().filter(|_| *element) {
                    f.earlier |= !f.batch;
                }
                if !*element {
                    st.failed = None;
                    st.forget_message_effects();
                }
            }
            // A consumer's offsets committed with no message named (a partition list,
            // the consumer's position), on a path that received none: the records
            // reached this code another way, and what runs after it (a caller going on
            // to start a server) belongs to no message it confirms. Acks before
            // effects and repeatable effects concern handlers (SPEC §2).
            EventKind::Ack {
                msg: None,
                offsets: true,
            } if !st.received => {}
            EventKind::Ack { msg, offsets, .. } => {
                let ev = self.evref(e);
                // Acked where its effect failed, nothing keeping it.
                if let Some(f) = &st.failed {
                    // The ack of a later element of the batch is not this failure's.
                    let other = f.earlier && msg.is_some();
                    if (f.received || msg.is_some() || !*offsets) && !other {
                        for (failed, handled) in f.all() {
                            self.failures.push(AckOnFailure {
                                ack: ev.clone(),
                                failed: failed.clone(),
                                handled: handled.clone(),
                                entry: self.entry.clone(),
                                delivery: f.delivery,
                            });
                        }
                    }
                }
                if *offsets {
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
                // The effects a second run repeats are durable before the ack. One
                // ack after an effect is enough to tell (a later ack of the path would
                // pair with the same effects again: quadratic in a long handler); with
                // a dedup record on the path they stay, as a rollback may undo it.
                let dedup_on_path = st.writes.iter().any(|w| w.dedup);
                let repeatable = if dedup_on_path {
                    st.nonidem.clone()
                } else {
                    std::mem::take(&mut st.nonidem)
                };
                for x in repeatable {
                    self.pair(
                        Relation::RepeatableEffectBeforeAck {
                            dedup_on_path,
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
                // A message acked again: the effects that follow are after this ack;
                // those between the two were the earlier ack's.
                if let Some(m) = p.msg {
                    st.acks.retain(|_, q| q.msg != Some(m));
                }
                st.acks.insert(e.loc.clone(), p);
            }
            EventKind::Begin { tx, fresh, used } => {
                st.txs.insert(
                    fr.val(*tx),
                    Tx {
                        begin: Some(self.evref(e)),
                        writes: Vec::new(),
                        open: true,
                        idle: *fresh && !*used,
                        outbox: false,
                        nonidem: List::default(),
                        known: false,
                        non_delete: false,
                    },
                );
            }
            EventKind::Write {
                target,
                sql,
                unchecked,
                keyed_by,
                autocommit,
            } => {
                let ev = self.evref(e);
                self.split = None;
                if let Some(f) = st.failed.take() {
                    // A relay deleting the row it read and whose publish failed
                    // loses it; any other write on the failure path records the
                    // failure (rows read after the failure are not what it published).
                    // (Entries of a batch that nothing read: marking the rows sent
                    // records nothing of which failed, so an update is progress too.)
                    let progress = f.publish
                        && (sql.verb == "DELETE"
                            || (sql.verb == "UPDATE" && (f.batch || sql.marks_done)))
                        && sql.tables.iter().any(|t| f.read_before.contains(t));
                    if progress {
                        for (failed, handled) in f.all() {
                            self.failures.push(AckOnFailure {
                                ack: ev.clone(),
                                failed: failed.clone(),
                                handled: handled.clone(),
                                entry: self.entry.clone(),
                                delivery: f.delivery,
                            });
                        }
                        st.failed = Some(f);
                    }
                }
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
                // A dedup record by its table's name; by its shape (a conflict-ignoring
                // insert of a key) only when no named dedup record is on the path, since
                // then a shaped insert is more likely an idempotent effect.
                // Recording a dedup entry: an insert (or upsert) into a dedup table; a
                // cleanup `DELETE` of old entries is not a dedup record.
                let named =
                    sql.verb != "DELETE" && sql.tables.iter().any(|t| self.tables.is_dedup(t));
                let named_before = st.writes.iter().any(|w| w.named_dedup);
                // A claim by its shape is keyed by what a message brought: only on a
                // path that received one (SPEC §2: elsewhere, an idempotent write).
                // Keyed by constants the caller passed, and by nothing of a message: a
                // lock or a constant marker, not a claim.
                let fixed_key = {
                    let origins: Vec<_> = keyed_by.iter().map(|(v, o)| fr.origin(*v, *o)).collect();
                    origins.contains(&crate::ir::Origin::Constant)
                        && !origins.contains(&crate::ir::Origin::Message)
                };
                let claim_shape = sql.is_claim_shape() && !named_before && st.message && !fixed_key;
                let dedup = !outbox && !sql.guarded && (named || claim_shape);
                let tx_val = target
                    .map(|t| fr.val(t))
                    .filter(|t| st.txs.get(t).is_some_and(|x| x.open));
                let auto = tx_val.is_none() && *autocommit;
                // A business write can fail (a dedup record's failure is not the
                // effect's; a Redis `SET` is a cache or a lock).
                if !dedup && sql.kind == crate::ir::SqlKind::Write && sql.verb != "SET" {
                    new_cause = Some(Failure::of(ev.clone(), false, &st));
                }
                let nonidem = !outbox
                    && !dedup
                    && !sql.guarded
                    && (sql.self_referencing
                        || (sql.verb == "INSERT"
                            && !sql.ignores_conflict
                            && !sql.upsert
                            && !self.tables.has_unique_key(&sql.tables)));
                let applied = Applied::new(ev.clone(), &st);
                self.write_pairs(
                    &mut st,
                    &ev,
                    (tx_val, auto),
                    (dedup, named, outbox, sql.guarded),
                    *unchecked,
                );
                // In a task (a worker, a spawned task), a dedup claim recorded before the
                // effect in its transaction covers it: the claim commits with it or not at
                // all, and the ack that follows the task sees neither.
                let claimed_in_task = self.tasks > 0
                    && tx_val.is_some()
                    && st.writes.iter().any(|w| w.dedup && w.tx == tx_val);
                match tx_val.and_then(|t| st.txs.get_mut(&t)) {
                    Some(tx) => {
                        if nonidem && !claimed_in_task {
                            tx.nonidem.insert(applied.clone());
                        }
                        tx.known |= sql.kind == crate::ir::SqlKind::Write;
                        tx.non_delete |=
                            sql.kind == crate::ir::SqlKind::Write && sql.verb != "DELETE";
                        tx.writes.push(ev);
                        tx.outbox |= outbox;
                    }
                    None => {
                        if !outbox && sql.kind == crate::ir::SqlKind::Write {
                            let change = applied.clone().deleting(sql.verb == "DELETE");
                            self.durable_change(&mut st, change, &ev);
                        }
                        if nonidem {
                            st.nonidem.insert(applied);
                        }
                        self.effect_now(&mut st, ev);
                    }
                }
            }
            EventKind::Commit { tx } => {
                let ev = self.evref(e);
                self.split = None;
                let t = fr.val(*tx);
                if st
                    .txs
                    .get(&t)
                    .is_some_and(|x| x.open && !x.writes.is_empty())
                {
                    new_cause = Some(Failure::of(ev.clone(), false, &st));
                }
                self.commit(&mut st, t, ev);
            }
            EventKind::Rollback { tx } => {
                let t = fr.val(*tx);
                st.txs.remove(&t);
                // Its writes (claims included) never happened.
                let gone: Vec<EvRef> = st
                    .writes
                    .iter()
                    .filter(|w| w.tx == Some(t))
                    .map(|w| w.ev.clone())
                    .collect();
                st.writes.retain(|w| !gone.contains(&w.ev));
                st.unchecked.retain(|c| !gone.contains(c));
            }
            EventKind::Publish {
                non_idempotent,
                capped,
                ..
            } => {
                let ev = self.evref(e);
                self.split = None;
                // A dead-letter, retry or failure publish keeps the failed message.
                st.failed = None;
                if !*capped {
                    new_cause = Some(Failure::of(ev.clone(), true, &st));
                }
                if *non_idempotent {
                    st.nonidem.insert(Applied::new(ev.clone(), &st));
                }
                self.claims_before(&mut st, &ev);
                // A publish inside a Kafka transaction is still a step apart from the
                // database (SQL inside that transaction is an effect in the broker
                // transaction, not counted here).
                {
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
                    st.publishes.insert(ev.clone());
                }
                self.effect_now(&mut st, ev);
            }
            EventKind::External {
                non_idempotent,
                kind,
                ..
            } => {
                let ev = self.evref(e);
                self.split = None;
                // A cache entry that fails loses nothing of the message.
                if *kind != crate::ir::ExternalKind::Cache {
                    new_cause = Some(Failure::of(ev.clone(), false, &st));
                }
                if *non_idempotent {
                    st.nonidem.insert(Applied::new(ev.clone(), &st));
                }
                self.claims_before(&mut st, &ev);
                if let Some(b) = st.broker_open.clone() {
                    self.pair(Relation::InBrokerTransaction, ev.clone(), b, Vec::new());
                }
                if matches!(kind, crate::ir::ExternalKind::Store(_)) {
                    self.store_write(&mut st, &ev);
                }
                self.effect_now(&mut st, ev);
            }
            EventKind::BrokerBegin => {
                let ev = self.evref(e);
                // Offsets committed earlier on this path, in consume-transform-produce
                // with a transactional producer, are beside its transaction too.
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
            // Committing a producer transaction flushes its sends and fails if one was
            // not delivered: their reports are read.
            EventKind::BrokerCommit => {
                st.broker_open = None;
                if st.failed.as_ref().is_some_and(|f| f.delivery) {
                    st.failed = None;
                }
            }
            EventKind::BrokerAbort => st.broker_open = None,
            EventKind::AwaitHandle {
                handle: Some(handle),
            } => {
                let h = fr.val(*handle);
                let (done, left) = std::mem::take(&mut st.floating)
                    .into_iter()
                    .partition(|f| f.handle == Some(h));
                st.floating = left;
                finish_tasks(&mut st, done);
            }
            EventKind::AwaitHandle { handle: None } => {
                let done = std::mem::take(&mut st.floating);
                finish_tasks(&mut st, done);
            }
            EventKind::ChannelSend { chan } => self.hand_to_workers(e, chan, &mut st),
            EventKind::ChannelRecv { .. } => st.before_recv = false,
            EventKind::Call(c) => return self.call(e, c, st, fr),
            EventKind::CallValue { callee } => {
                if let Some(cl) = fr.closures.get(callee).cloned() {
                    if self.stack.len() <= MAX_CALL_DEPTH {
                        self.via.push(e.loc.clone());
                        let o = self.run(cl.0, st, &cl.1);
                        self.via.pop();
                        let mut fall = o.fall;
                        for s in [o.ret, o.ret_err].into_iter().flatten() {
                            join_opt(&mut fall, s);
                        }
                        out.fall = fall;
                        return out;
                    }
                }
            }
            EventKind::ClaimTested { claim } => st.unchecked.retain(|c| c.loc != *claim),
            // A nack, a reject or a delayed redelivery keeps the failed message.
            EventKind::Nack { .. } => st.failed = None,
            EventKind::Failed { what } => {
                let failed = Event {
                    kind: (**what).clone(),
                    ..e.clone()
                };
                st.failed = Some(Failure::of(
                    self.evref(&failed),
                    matches!(**what, EventKind::Publish { .. }),
                    &st,
                ));
            }
            // A batch's failed entries nothing reads (a nack-like delete batch loses
            // nothing: its failed entries come back).
            // A delivery report nothing reads is one send's unseen outcome: it does
            // not hide a failure the path already has.
            EventKind::EntriesUnread { what, delivery } => {
                let kept = *delivery && st.failed.as_ref().is_some_and(|f| !f.delivery);
                if !kept
                    && matches!(
                        **what,
                        EventKind::Publish { .. } | EventKind::External { .. }
                    )
                {
                    let failed = Event {
                        kind: (**what).clone(),
                        ..e.clone()
                    };
                    let mut f = Failure::of(
                        self.evref(&failed),
                        matches!(**what, EventKind::Publish { .. }),
                        &st,
                    );
                    f.handled = Some(e.loc.clone());
                    f.batch = true;
                    f.delivery = *delivery;
                    // An earlier batch nothing read stays unread.
                    if let Some(prev) = st.failed.as_ref().filter(|p| p.unread_batch()) {
                        if f.unread_batch() {
                            f.keep_batches(prev);
                        }
                    }
                    st.failed = Some(f);
                }
                // The request's own failure is still the call's.
                new_cause = cause;
            }
            EventKind::ErrorIgnored { told, arm } => {
                if let Some(mut c) = cause {
                    if *arm && c.publish && !st.failed_publishes.contains(&c.effect) {
                        st.failed_publishes.insert(c.effect.clone());
                    }
                    c.handled = Some(e.loc.clone());
                    c.told = *told;
                    c.received |= st.received;
                    st.failed = Some(c);
                }
            }
            EventKind::Read { tables } => {
                // Rows read again after a failed publish are new rows: a delete of
                // them is not the progress record of what failed to publish.
                if let Some(f) = st.failed.as_mut() {
                    f.read_before.retain(|t| !tables.contains(t));
                }
                st.read_tables.extend(tables.iter().cloned())
            }
            EventKind::IdGen { .. }
            | EventKind::BrokerOffsets
            | EventKind::ChannelOpen { .. }
            | EventKind::ConfirmSelect { .. } => {}
            // Waiting for the confirmations serves the delivery reports not read yet.
            EventKind::ConfirmsWaited { .. } => {
                if st.failed.as_ref().is_some_and(|f| f.delivery) {
                    st.failed = None;
                }
            }
        }
        st.cause = new_cause;
        out.fall = Some(st);
        out
    }
}
