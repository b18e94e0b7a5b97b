//! Work handed to another task over an in-process channel (SPEC §2): a value sent
//! is processed by the crate's worker loops (loops that receive
//! from a channel), whose effects then float like a spawned task's until a
//! completion signal (a reply or a handle awaited) orders them before the ack.
//!
//! Which sends and receives are channel calls is pack data (`channel_send`,
//! `channel_recv`). The sender and its receiver are not paired by value: every
//! worker loop of the crate (its workspace dependencies included) stands for the
//! receiving side; a crate with none is silent. Each loop is run once per entry
//! and its effects reused at every later send, so that a function with many sends
//! costs one run of each loop, not one per send.

use super::*;

/// The crate's worker loops: the innermost loops whose body receives from a
/// channel, with the function holding each.
pub(super) fn worker_loops(krate: &Crate) -> Vec<(usize, &Node)> {
    let mut out = Vec::new();
    for (i, f) in krate.functions.iter().enumerate() {
        collect(&f.body, i, &mut out);
    }
    out
}

/// Whether `n` receives from a channel somewhere inside; pushes the innermost
/// loops that do.
fn collect<'c>(n: &'c Node, fn_idx: usize, out: &mut Vec<(usize, &'c Node)>) -> bool {
    if let Node::Event(Event {
        kind: EventKind::ChannelRecv,
        ..
    }) = n
    {
        return true;
    }
    let before = out.len();
    let mut recv = false;
    // `for job in rx.iter()`: the receive is lowered just before the loop over it.
    let mut last_recv = false;
    for k in n.children() {
        let mark = out.len();
        let r = collect(k, fn_idx, out);
        if last_recv && out.len() == mark && matches!(k, Node::Loop { .. }) {
            out.push((fn_idx, k));
        }
        last_recv = r && matches!(k, Node::Event(_));
        recv |= r;
    }
    if recv && matches!(n, Node::Loop { .. }) && out.len() == before {
        out.push((fn_idx, n));
    }
    recv
}

impl<'c> Interp<'c> {
    /// A value sent on a channel: the worker loops' effects float from here, like a
    /// spawned task's with no handle.
    pub(super) fn hand_to_workers(&mut self, e: &Event, st: &mut State) {
        for w in 0..self.workers.len() {
            // A worker that sends on to a channel does not run itself again.
            if self.in_worker.contains(&w) {
                continue;
            }
            let made = match self.worker_cache.get(&w).cloned() {
                Some(made) => {
                    if !made.is_empty() {
                        self.note_effect(st);
                    }
                    made
                }
                None => {
                    self.in_worker.push(w);
                    let made = self.run_worker(w, e, st);
                    self.in_worker.pop();
                    self.worker_cache.insert(w, made.clone());
                    made
                }
            };
            for mut f in made {
                let known = st
                    .floating
                    .iter()
                    .any(|g| g.sent && g.handle.is_none() && g.effect == f.effect);
                if !known {
                    f.sent = true;
                    f.handle = None;
                    f.spawn = e.loc.clone();
                    st.floating.push(f);
                }
            }
        }
    }

    /// One iteration of worker loop `w` (one message received), run as a task
    /// spawned at the send: the effects it leaves floating, with whether each is a
    /// durable non-idempotent one (as `closure` does for `ClosureRun::Later`).
    fn run_worker(&mut self, w: usize, e: &Event, st: &State) -> Vec<Floating> {
        let (fn_idx, node) = self.workers[w];
        let Node::Loop { body, .. } = node else {
            return Vec::new();
        };
        let frame = Frame {
            id: self.next_frame,
            fn_idx,
            map: HashMap::new(),
            closures: HashMap::new(),
        };
        self.next_frame += 1;
        let mut inner = st.clone();
        // Acks before the send are not ordered against the worker (SPEC §2: the ack
        // after the send is the one in question); nor are failures before it its own.
        inner.acks.clear();
        inner.failed = None;
        // What the sender did to its message (writes, publishes, reads, an open
        // transaction) pairs with nothing the worker does: the worker's effects
        // are the message's only where an ack orders them.
        inner.txs.clear();
        inner.durable.clear();
        inner.publishes.clear();
        inner.failed_publishes.clear();
        inner.writes.clear();
        inner.unchecked.clear();
        inner.nonidem.clear();
        inner.read_tables.clear();
        inner.early_offsets.clear();
        inner.broker_open = None;
        inner.broker_seen = None;
        inner.floating.clear();
        inner.effects.clear();
        self.tasks += 1;
        let o = self.run(body, inner, &frame);
        self.tasks -= 1;
        let mut all = BTreeSet::new();
        let mut nonidem = BTreeSet::new();
        let ends = [o.fall, o.ret, o.ret_err]
            .into_iter()
            .flatten()
            .chain(o.brk.into_iter().map(|(_, s)| s))
            .chain(o.cont.into_iter().map(|(_, s)| s));
        for s in ends {
            all.extend(s.effects);
            nonidem.extend(s.nonidem);
        }
        all.into_iter()
            .map(|effect| {
                let mut applied = nonidem.iter().filter(|a: &&Applied| a.ev == effect);
                let first = applied.next().map(|a| a.in_broker_transaction);
                let in_broker = first.map(|b| b && applied.all(|a| a.in_broker_transaction));
                Floating {
                    handle: None,
                    spawn: e.loc.clone(),
                    effect,
                    nonidem: in_broker,
                    sent: true,
                }
            })
            .collect()
    }
}
