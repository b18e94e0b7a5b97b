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

use std::collections::{BTreeMap, BTreeSet};

use foldhash::HashMap;
use std::rc::Rc;

mod calls;
mod events;
mod facts;
mod reach;
mod state;
mod workers;
mod writes;

pub use reach::{called_from, effectful_functions, relay_passes, retry_attempts, RelayPasses};
use reach::{node_receives, reaches_ack, receiving_functions};

pub use super::resolve::{Candidate, Resolver, MAX_METHOD_CANDIDATES};
pub use crate::ir::Tables;
use crate::ir::{
    Call, ClientRef, ClosureRun, Crate, Event, EventKind, ExitKind, ExternalKind, Loc, Node,
    ValueId,
};
pub use facts::{
    AckAfterFailure, AckBeforeEffect, Durability, EffectKind, EvData, EvRef, Facts, PairFact,
    Policy, Relation, WriteAfterFailure,
};
use state::{
    error_result, join_opt, live_publishes, union, Applied, Floating, Joiner, List, Pending,
    Retiring, State, Tx, WriteRec,
};

/// The Kafka clients (function, index) that crate functions configure and return
/// (consumer factories), received from where a factory is called: read from the
/// code, whether or not the receiving function is analyzed.
fn factory_clients_received(krate: &Crate, resolver: &Resolver) -> BTreeSet<(usize, u32)> {
    let mut out = BTreeSet::new();
    for f in &krate.functions {
        for e in f.body.each_event() {
            if let EventKind::Receive {
                client: Some(ClientRef::Made(callee)),
                ..
            } = &e.kind
            {
                for g in resolver.resolve_callee(f, callee) {
                    if let Some(ci) = krate.functions[g].returns_kafka_client {
                        out.insert((g, ci));
                    }
                }
            }
        }
    }
    out
}

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
    /// The tables whose rows the caller's arguments for parameters are taken from.
    rows: HashMap<ValueId, Vec<String>>,
    /// The caller's values of its arguments' fields, by parameter and field name
    /// (`settle(job)`, `job` a struct literal holding a task's handle in `write`).
    fields: HashMap<(ValueId, String), Val>,
    /// Whether the caller's argument for a parameter is a store whose writes commit
    /// by themselves (a pool, a connection); a parameter not here is as declared.
    /// Of a function called in the crate, entered by itself: none (its callers lend
    /// what they hold, a transaction perhaps).
    stores: HashMap<ValueId, bool>,
}

impl Frame<'_> {
    /// The frame of the function `i` entered by itself; `called`: another function
    /// of the crate calls it (its parameters hold what the callers lend).
    fn entry(i: usize, f: &crate::ir::Function, called: bool) -> Self {
        Frame {
            id: 0,
            fn_idx: i,
            map: HashMap::default(),
            closures: HashMap::default(),
            origins: HashMap::default(),
            rows: HashMap::default(),
            fields: HashMap::default(),
            stores: if called {
                f.params.iter().flatten().map(|p| (*p, false)).collect()
            } else {
                HashMap::default()
            },
        }
    }

    fn val(&self, v: ValueId) -> Val {
        self.map.get(&v).copied().unwrap_or((self.id, v))
    }

    /// The tables whose rows the values `vs` (with `local`, as the function sees
    /// them) are taken from: a parameter's, as its caller gave it.
    fn rows_of(&self, vs: impl Iterator<Item = ValueId>, local: &[String]) -> Vec<String> {
        let mut out = local.to_vec();
        for v in vs {
            for t in self.rows.get(&v).into_iter().flatten() {
                if !out.contains(t) {
                    out.push(t.clone());
                }
            }
        }
        out
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
            uncovered: false,
        };
        if !st.nonidem.contains(&applied) {
            st.nonidem.insert(applied);
        }
    }
}

/// Runs the analysis from every function of the crate that can reach a delivery
/// event (an ack, a write, a publish, an external effect, a Kafka transaction).
pub fn crate_facts(krate: &Crate, tables: &Tables, policy: &Policy) -> Facts {
    let resolver = Resolver::new(krate);
    let reach = reaches_ack(krate, &resolver);
    let receiving = receiving_functions(krate, &resolver);
    let write_tables: HashMap<&Loc, &[String]> = krate
        .functions
        .iter()
        .flat_map(|f| f.body.each_event())
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
    let mut received_clients = factory_clients_received(krate, &resolver);
    let mut effect_clients = BTreeSet::new();
    let mut committed_clients = BTreeSet::new();
    let mut over_budget = Vec::new();
    let mut returned_unread = BTreeSet::new();
    let mut failed_at_exit = BTreeSet::new();
    let workers = workers::worker_loops(krate);
    let called = called_in_crate(krate, &resolver);
    let mut call_contexts: HashMap<usize, CallContexts> = HashMap::default();
    for (i, f) in krate.functions.iter().enumerate() {
        if !reach[i] || f.dependency {
            continue;
        }
        crate::support::alloc::bail_if_exhausted();
        let mut an = Interp {
            progress_seen: false,
            split: None,
            handler_effects: false,
            received_clients: BTreeSet::new(),
            effect_clients: BTreeSet::new(),
            committed_clients: BTreeSet::new(),
            pairs: Vec::new(),
            failures: Vec::new(),
            tables,
            policy,
            krate,
            resolver: &resolver,
            stack: vec![i],
            via: Vec::new(),
            dispatch: Vec::new(),
            next_frame: 1,
            facts: Vec::new(),
            tasks: 0,
            fed_workers: 0,
            effects_per_ack: HashMap::default(),
            others_per_primary: HashMap::default(),
            work: 0,
            entry: f.name.clone(),
            reach: &reach,
            receiving: &receiving,
            loops_receiving: HashMap::default(),
            relayed: BTreeSet::new(),
            claim_tables: BTreeSet::new(),
            write_tables: &write_tables,
            commit_tables: HashMap::default(),
            workers: &workers,
            worker_cache: HashMap::default(),
            in_worker: Vec::new(),
            returned_unread: BTreeSet::new(),
            call_contexts: HashMap::default(),
        };
        let frame = Frame::entry(i, f, called[i]);
        let mut start = State::new();
        start.message = f.takes_message;
        let o = an.run(&f.body, start, &frame);
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
        committed_clients.extend(an.committed_clients.iter().copied());
        facts.extend(an.facts);
        pairs.extend(an.pairs);
        failures.extend(an.failures);
        returned_unread.extend(an.returned_unread);
        if !an.progress_seen {
            failed_at_exit.extend(hidden_publishes(&o));
        }
        for (idx, c) in an.call_contexts {
            let all = call_contexts.entry(idx).or_default();
            all.in_broker_transaction |= c.in_broker_transaction;
            all.outside |= c.outside;
        }
    }
    Facts {
        acks: facts.into_iter().collect(),
        pairs: pairs.into_iter().collect(),
        failures: failures.into_iter().collect(),
        handler_effects,
        received_clients,
        effect_clients,
        committed_clients,
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
        returned_unread: returned_unread.into_iter().collect(),
        failed_at_exit,
        only_in_broker_transaction: only_in_broker_transaction(krate, &call_contexts),
    }
}

/// The publishes whose failure, handled and not told (logged, gone on from), is
/// still on a path on which the entry returns as on success: a publisher with
/// nothing to skip on failure takes it for a success.
fn hidden_publishes(o: &Outcome) -> Vec<Loc> {
    [&o.fall, &o.ret]
        .into_iter()
        .flatten()
        .filter_map(|s| s.failed.as_ref().filter(|f| f.hidden_publish()))
        .map(|f| f.effect.loc.clone())
        .collect()
}

/// The functions another function of the crate calls (a call it resolves to them).
fn called_in_crate(krate: &Crate, resolver: &Resolver) -> Vec<bool> {
    let mut called = vec![false; krate.functions.len()];
    for (i, f) in krate.functions.iter().enumerate() {
        for e in f.body.each_event() {
            if let EventKind::Call(c) = &e.kind {
                for g in resolver.resolve(f, c) {
                    if g != i {
                        called[g] = true;
                    }
                }
            }
        }
    }
    called
}

/// Whether the calls into a function reached from the entries ran with a broker
/// transaction open, without one, or both.
#[derive(Default, Clone, Copy)]
struct CallContexts {
    in_broker_transaction: bool,
    outside: bool,
}

/// The names of the functions called only with a broker transaction open: every
/// function of that name was called, and never outside one.
fn only_in_broker_transaction(
    krate: &Crate,
    contexts: &HashMap<usize, CallContexts>,
) -> BTreeSet<String> {
    let mut only = BTreeSet::new();
    let mut not = BTreeSet::new();
    for (i, f) in krate.functions.iter().enumerate() {
        match contexts.get(&i) {
            Some(c) if c.in_broker_transaction && !c.outside => only.insert(&f.name),
            _ => not.insert(&f.name),
        };
    }
    only.difference(&not).map(|n| (*n).clone()).collect()
}

struct Interp<'c> {
    krate: &'c Crate,
    /// An ack, a commit or a database write ran on some path of this entry: a
    /// failure handled there may be kept by skipping it.
    progress_seen: bool,
    /// Batches whose response a callee returned and a caller left unread (with the
    /// call sites that reach them).
    returned_unread: BTreeSet<EvRef>,
    /// The contexts each function of the crate was called in from this entry.
    call_contexts: HashMap<usize, CallContexts>,
    resolver: &'c Resolver<'c>,
    stack: Vec<usize>,
    via: Vec<Loc>,
    /// The implementations chosen at the calls on the way that fan out
    /// ([`EvData::dispatch`]).
    dispatch: Vec<(u32, u32, String)>,
    next_frame: u32,
    facts: Vec<AckBeforeEffect>,
    /// How many spawned tasks' bodies are being run (their effects are collected).
    tasks: u32,
    /// How many of the crate's worker loops (loops receiving from an in-process
    /// channel) are being run inside a spawned task's body: what they do is the
    /// work of the values sent to them, followed at each send, not the spawn's.
    fed_workers: u32,
    /// The effects recorded after each ack (at most [`MAX_EFFECTS_PER_ACK`]).
    effects_per_ack: HashMap<Loc, BTreeSet<Loc>>,
    /// The other events recorded with each primary event, per relation (at most
    /// [`MAX_EFFECTS_PER_ACK`]): a finding is one per primary, and recording every
    /// pair of a long function would grow with the product of its events.
    others_per_primary: HashMap<(Relation, Loc), BTreeSet<Loc>>,
    /// The work done from this entry so far ([`MAX_WORK_PER_ENTRY`]).
    work: u64,
    pairs: Vec<PairFact>,
    failures: Vec<AckAfterFailure>,
    /// The success and error continuations of the last call into the crate.
    split: Option<Split>,
    /// Effects on a path after a receive: the crate's consumers have side effects.
    handler_effects: bool,
    received_clients: BTreeSet<(usize, u32)>,
    effect_clients: BTreeSet<(usize, u32)>,
    committed_clients: BTreeSet<(usize, u32)>,

    tables: &'c Tables,
    policy: &'c Policy,
    entry: String,
    reach: &'c [bool],
    /// Which functions receive a message, directly or through calls.
    receiving: &'c [bool],
    /// Whether each loop body seen (by address) receives.
    loops_receiving: HashMap<usize, bool>,
    /// Tables this entry relays: rows read from them, published, then marked or
    /// deleted after the publish on the same path (docs/what-is-analyzed.md, "Outbox").
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
    /// Whether a loop's body receives a message (a consume loop).
    fn loop_receives(&mut self, body: &Node, fr: &Frame<'c>) -> bool {
        let key = std::ptr::from_ref(body) as usize;
        if let Some(&r) = self.loops_receiving.get(&key) {
            return r;
        }
        let f = &self.krate.functions[fr.fn_idx];
        let r = node_receives(body, f, self.resolver, self.receiving);
        self.loops_receiving.insert(key, r);
        r
    }

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
            dispatch: self.dispatch.clone(),
            capped: matches!(e.kind, EventKind::Publish { capped: true, .. }),
        })
    }

    fn fact(&mut self, p: &Pending, effect: EvRef, kind: EffectKind) {
        self.work += 1;
        // One receiver value is one implementation ([`EvRef::compatible`]).
        if !p.ev.compatible(&effect) {
            return;
        }
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
            transient_source: p.transient,
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
        // An effect after a failed claim by shape: the claim guarded it (the effect
        // runs), it was not the message's effect.
        if st.failed.as_ref().is_some_and(|f| f.shaped_claim) {
            st.failed = None;
        }
        let pend: Vec<Pending> = st.acks.values().cloned().collect();
        for p in &pend {
            self.fact(p, ev.clone(), EffectKind::Immediate);
        }
        if self.tasks > 0 && !st.before_recv && self.fed_workers == 0 {
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
            Node::Seq(items) => self.run_seq(items, st, fr),
            Node::ResultBranch { scrutinee, ok, err } => {
                self.run_result_branch(scrutinee, ok, err, st, fr)
            }
            Node::Branch(alts) => self.run_branch(alts, st, fr),
            Node::Loop { body, label, each } => self.run_loop(body, *label, *each, st, fr),
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

    /// A sequence: each item runs on what the one before let fall through; the
    /// items' other exits (returns, breaks, continues) are the sequence's.
    fn run_seq(&mut self, items: &'c [Node], st: State, fr: &Frame<'c>) -> Outcome {
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

    /// A match on a call's result: the `ok` arm runs on the callee's success state,
    /// the `err` arm on its error state (both on the state after the call when the
    /// callee's continuations are not known apart).
    fn run_result_branch(
        &mut self,
        scrutinee: &'c Node,
        ok: &'c Node,
        err: &'c Node,
        st: State,
        fr: &Frame<'c>,
    ) -> Outcome {
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

    /// Alternatives: each runs on a copy of the state; the states leaving them the
    /// same way are joined (no alternative at all falls through unchanged).
    fn run_branch(&mut self, alts: &'c [Node], st: State, fr: &Frame<'c>) -> Outcome {
        let mut out = Outcome::default();
        let Some((last, init)) = alts.split_last() else {
            out.fall = Some(st);
            return out;
        };
        let (mut fall, mut ret, mut ret_err) =
            (Joiner::default(), Joiner::default(), Joiner::default());
        let mut absorb = |o: Outcome, out: &mut Outcome| {
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
        };
        // Copying the pending acks is the part of a branch's copy that grows with
        // the function (the other lists end with each message). The last
        // alternative takes the state itself, uncopied.
        for a in init {
            self.work += st.acks.len() as u64;
            let o = self.run(a, st.clone(), fr);
            absorb(o, &mut out);
        }
        self.work += st.acks.len() as u64;
        let o = self.run(last, st, fr);
        absorb(o, &mut out);
        out.ret = ret.finish();
        out.ret_err = ret_err.finish();
        out.fall = fall.finish();
        out
    }

    /// A loop: the body runs at most twice (a second pass sees what one iteration
    /// leaves for the next); what iterations made durable or published stays after
    /// the loop, and a failure from before a receiving loop stands again after it.
    fn run_loop(
        &mut self,
        body: &'c Node,
        label: Option<u32>,
        each: bool,
        st: State,
        fr: &Frame<'c>,
    ) -> Outcome {
        // A worker loop run as part of a task spawned once (`tokio::spawn(worker(rx))`
        // before the consume loop): its effects float at each send to it, not at the
        // spawn (flow/workers.rs); an ack that follows no send is not after them.
        let fed = self.tasks > 0
            && (self.workers.loops.iter())
                .any(|w| matches!(w.node, Node::Loop { body: b, .. } if std::ptr::eq(&**b, body)));
        self.fed_workers += u32::from(fed);
        let out = self.run_loop_passes(body, label, each, st, fr);
        self.fed_workers -= u32::from(fed);
        out
    }

    fn run_loop_passes(
        &mut self,
        body: &'c Node,
        label: Option<u32>,
        each: bool,
        st: State,
        fr: &Frame<'c>,
    ) -> Outcome {
        // A failure before the loop is no iteration's (a start-up step before
        // the consume loop): the loop's acks do not see it; it stands again
        // after the loop.
        let mut st = st;
        // (A batch's unread per-entry failures concern the items the loop
        // goes through: they stay; so do the failures of operations joined over
        // those items.)
        // A loop that receives none (a retry loop, a loop marking the rows a
        // relay read) goes on with the failure: its iterations are the same
        // message's steps.
        let outer = match &st.failed {
            Some(f) if f.batch || f.joined => None,
            Some(_) if !self.loop_receives(body, fr) => None,
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
        // Tasks an item's iteration spawned may still run after the loop
        // (`for m in &batch { tasks.spawn(apply(m)) }`): until they are awaited,
        // an ack of the batch after the loop does not follow their effects.
        // So may tasks spawned for the messages a loop received (`for _ in 0..n {
        // let m = recv().await?; set.spawn(apply(m)) }`): a commit of the consumer's
        // position after the loop covers those messages too.
        let gathers = each || self.loop_receives(body, fr);
        let mut done_floating: Vec<Floating> = Vec::new();
        for _ in 0..2 {
            let o = self.run(body, head.clone(), fr);
            let back = loop_pass_exits(o, label, &mut out, &mut after);
            // A second pass sees what one iteration leaves for the next; when
            // nothing comes back, or it adds nothing, it would find the same
            // (and nested loops would double their work at each level).
            let Some(mut b) = back else { break };
            union(&mut done_durable, &b.durable);
            union(&mut done_publishes, &b.publishes);
            if each {
                union(&mut done_nonidem, &b.nonidem);
            }
            if gathers {
                for f in &b.floating {
                    if !done_floating.contains(f) {
                        done_floating.push(f.clone());
                    }
                }
            }
            // A retry loop that runs out of attempts (`for attempt in 1..=n`,
            // `while tries < n`) leaves with what its last attempt left: a failure
            // it logged and went on from reaches the code after the loop (the
            // next attempt, which starts over, may succeed instead).
            if !each && b.failed.is_some() && exits_at_top(body) && !self.loop_receives(body, fr) {
                join_opt(&mut after, b.clone());
            }
            // Acks of this iteration's message do not carry into the next one.
            b.carry_to_next_iteration(&entry, each.then_some(std::ptr::from_ref(body) as usize));
            let before = head.clone();
            head.join(&b);
            // (A failure compares equal whatever tables were retired for it
            // since: the retired ones are compared here.)
            let retired = |s: &State| s.failed.as_ref().map_or(0, |f| f.progressed.len());
            if head == before && retired(&head) == retired(&before) {
                break;
            }
        }
        if let Some(a) = after.as_mut() {
            union(&mut a.durable, &done_durable);
            union(&mut a.publishes, &done_publishes);
            union(&mut a.nonidem, &done_nonidem);
            for f in done_floating {
                if !a.floating.contains(&f) {
                    a.floating.push(f);
                }
            }
            // A loop that awaits task handles (`for h in handles { h.await?; }`,
            // `while let Some(r) = set.join_next().await`) is there to wait for the
            // tasks spawned before it: none of them still runs after it.
            if !a.floating.is_empty() && awaits_tasks(body) {
                a.floating.retain(|f| !entry.floating.contains(f));
            }
        }
        out.fall = after;
        // Past the loop, a failure an iteration carried is the batch's again, and a
        // failure from before a receiving loop stands again.
        let key = Some(std::ptr::from_ref(body) as usize);
        for s in [&mut out.fall, &mut out.ret, &mut out.ret_err]
            .into_iter()
            .flatten()
            .chain(out.brk.iter_mut().map(|(_, s)| s))
            .chain(out.cont.iter_mut().map(|(_, s)| s))
        {
            if let Some(f) = s.failed.as_mut().filter(|f| f.carried == key) {
                f.carried = None;
            }
            if s.failed.is_none() {
                s.failed.clone_from(&outer);
            }
        }
        out
    }
}

/// Whether a loop's body awaits a spawned task's handle or joins tasks, outside
/// the closures it makes.
fn awaits_tasks(body: &Node) -> bool {
    let mut stack = vec![body];
    while let Some(n) = stack.pop() {
        match n {
            Node::Event(e) => {
                if matches!(e.kind, EventKind::AwaitHandle { .. }) {
                    return true;
                }
            }
            Node::Closure { .. } => {}
            n => stack.extend(n.children()),
        }
    }
    false
}

/// A loop whose body begins by leaving it when its condition or iterator is done
/// (`while`, `for`), as lowered: `[cond.., Branch[Break, body]]`.
fn exits_at_top(body: &Node) -> bool {
    let branch = match body {
        Node::Seq(items) => items.last(),
        b => Some(b),
    };
    matches!(branch, Some(Node::Branch(alts))
        if matches!(alts.first(), Some(Node::Exit(ExitKind::Break { .. }))))
}

/// Sorts the exits of one pass over a loop's body: falling through and continuing
/// this loop go back to its head (the joined state returned); breaking this loop
/// joins `after`; returns, and breaks and continues of outer loops, are the loop's
/// own exits in `out`.
fn loop_pass_exits(
    o: Outcome,
    label: Option<u32>,
    out: &mut Outcome,
    after: &mut Option<State>,
) -> Option<State> {
    let mut back = Joiner::default();
    if let Some(s) = o.fall {
        back.push(s);
    }
    for (l, s) in o.cont {
        if l.is_none() || l == label {
            back.push(s);
        } else {
            out.cont.push((l, s));
        }
    }
    let mut brk = Joiner::default();
    for (l, s) in o.brk {
        if l.is_none() || l == label {
            brk.push(s);
        } else {
            out.brk.push((l, s));
        }
    }
    if let Some(s) = brk.finish() {
        join_opt(after, s);
    }
    let back = back.finish();
    if let Some(s) = o.ret_err {
        join_opt(&mut out.ret_err, s);
    }
    if let Some(s) = o.ret {
        join_opt(&mut out.ret, s);
    }
    back
}
