//! Work handed to another task over an in-process channel (docs/what-is-analyzed.md): a value sent
//! is processed by the crate's worker loops (loops that receive
//! from a channel), whose effects then float like a spawned task's until a
//! completion signal (a reply or a handle awaited) orders them before the ack.
//!
//! Which sends and receives are channel calls is pack data (`channel_send`,
//! `channel_recv`). A send is paired with the loops receiving from its channel (the
//! crate's, its workspace dependencies' included) by the keys the front end gives
//! both ends: the `channel()` call that made them (followed through bindings,
//! clones and closures in one function) and the element type (`Sender<Job>`,
//! `channel::<Job>()`, the value sent). A send whose channel matches no loop goes to
//! the crate's only worker loop when one of the two knows no channel; else it is
//! silent. Each loop is run once per entry
//! and its effects reused at every later send, so that a function with many sends
//! costs one run of each loop, not one per send.

use super::*;

/// A worker loop: the innermost loop whose body receives from a channel, the
/// function holding it, and the keys of the channels it receives from (empty when
/// none is known).
pub(super) struct Worker<'c> {
    pub(super) fn_idx: usize,
    pub(super) node: &'c Node,
    pub(super) keys: Vec<String>,
    /// The receive is in the loop's body (not `for job in rx.iter()` before it): only
    /// the effects after it on a path are the received value's.
    pub(super) recv_inside: bool,
}

/// The crate's worker loops, and how sends pair with them: channel keys that name
/// one channel are joined (the ends made by one `channel()` call, passed to a
/// parameter, stored in a field), each joined class knows the element types its
/// ends are declared with, and loops are indexed by class and by element type.
pub(super) struct Workers<'c> {
    pub(super) loops: Vec<Worker<'c>>,
    /// The class of each key that follows a value (`@site`, `A:..`, `F:..`).
    class_of: HashMap<String, usize>,
    /// The element types (`T:Job`) of each class's ends.
    class_types: Vec<Vec<String>>,
    by_class: HashMap<usize, Vec<usize>>,
    by_type: HashMap<String, Vec<usize>>,
}

fn is_type_key(k: &str) -> bool {
    k.starts_with("T:")
}

/// Union-find over key ids.
fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

pub(super) fn worker_loops(krate: &Crate) -> Workers<'_> {
    let mut loops = Vec::new();
    for (i, f) in krate.functions.iter().enumerate() {
        collect(&f.body, i, &mut loops);
    }
    // Every list of keys naming one channel: links, and the keys of each send and
    // receive (one value's).
    let mut lists: Vec<&[String]> = Vec::new();
    for f in &krate.functions {
        lists.extend(f.chan_links.iter().map(Vec::as_slice));
        let mut stack = vec![&f.body];
        while let Some(n) = stack.pop() {
            if let Node::Event(Event {
                kind: EventKind::ChannelSend { chan } | EventKind::ChannelRecv { chan },
                ..
            }) = n
            {
                lists.push(chan);
            }
            stack.extend(n.children());
        }
    }
    let mut ids: HashMap<&str, usize> = HashMap::default();
    let mut parent: Vec<usize> = Vec::new();
    for l in &lists {
        let mut first = None;
        for k in l.iter().filter(|k| !is_type_key(k)) {
            let id = *ids.entry(k.as_str()).or_insert_with(|| {
                parent.push(parent.len());
                parent.len() - 1
            });
            match first {
                None => first = Some(id),
                Some(f) => {
                    let (a, b) = (find(&mut parent, f), find(&mut parent, id));
                    parent[b] = a;
                }
            }
        }
    }
    let class_of: HashMap<String, usize> = ids
        .iter()
        .map(|(k, id)| (k.to_string(), find(&mut parent, *id)))
        .collect();
    let mut class_types: Vec<Vec<String>> = vec![Vec::new(); parent.len()];
    for l in &lists {
        let Some(c) = l.iter().find_map(|k| class_of.get(k)) else {
            continue;
        };
        for t in l.iter().filter(|k| is_type_key(k)) {
            if !class_types[*c].contains(t) {
                class_types[*c].push(t.clone());
            }
        }
    }
    let mut by_class: HashMap<usize, Vec<usize>> = HashMap::default();
    let mut by_type: HashMap<String, Vec<usize>> = HashMap::default();
    for (w, l) in loops.iter().enumerate() {
        let mut types: Vec<&String> = Vec::new();
        let mut classes: Vec<usize> = Vec::new();
        for k in &l.keys {
            if is_type_key(k) {
                types.push(k);
            } else if let Some(c) = class_of.get(k) {
                classes.push(*c);
                types.extend(class_types[*c].iter());
            }
        }
        classes.sort_unstable();
        classes.dedup();
        types.sort_unstable();
        types.dedup();
        for c in classes {
            by_class.entry(c).or_default().push(w);
        }
        for t in types {
            by_type.entry(t.clone()).or_default().push(w);
        }
    }
    Workers {
        loops,
        class_of,
        class_types,
        by_class,
        by_type,
    }
}

impl Workers<'_> {
    /// The loops a send on a channel of keys `send` hands its value to: those
    /// receiving from its channel as followed by value (the same `channel()` call,
    /// through parameters and fields); failing that, those receiving its element
    /// type; failing that, the crate's only worker loop when the send or that loop
    /// knows nothing of its channel. Otherwise none: the receiving loop is not found
    /// (docs/what-is-analyzed.md: silent).
    pub(super) fn paired(&self, send: &[String]) -> Vec<usize> {
        let classes: Vec<usize> = send
            .iter()
            .filter_map(|k| self.class_of.get(k))
            .copied()
            .collect();
        let mut out: Vec<usize> = classes
            .iter()
            .filter_map(|c| self.by_class.get(c))
            .flatten()
            .copied()
            .collect();
        if out.is_empty() {
            let types = send
                .iter()
                .filter(|k| is_type_key(k))
                .chain(classes.iter().flat_map(|c| self.class_types[*c].iter()));
            out.extend(types.filter_map(|t| self.by_type.get(t)).flatten().copied());
        }
        out.sort_unstable();
        out.dedup();
        if out.is_empty()
            && self.loops.len() == 1
            && (send.is_empty() || self.loops[0].keys.is_empty())
        {
            out.push(0);
        }
        out
    }
}

/// Whether `n` receives from a channel somewhere inside (the keys of the channels it
/// receives from); pushes the innermost loops that do.
fn collect<'c>(n: &'c Node, fn_idx: usize, out: &mut Vec<Worker<'c>>) -> Option<Vec<String>> {
    if let Node::Event(Event {
        kind: EventKind::ChannelRecv { chan },
        ..
    }) = n
    {
        return Some(chan.clone());
    }
    let before = out.len();
    let mut recv: Option<Vec<String>> = None;
    // `for job in rx.iter()`: the receive is lowered just before the loop over it.
    let mut last_recv: Option<Vec<String>> = None;
    for k in n.children() {
        let mark = out.len();
        let r = collect(k, fn_idx, out);
        if let Some(keys) = last_recv.take() {
            if out.len() == mark && matches!(k, Node::Loop { .. }) {
                out.push(Worker {
                    fn_idx,
                    node: k,
                    keys,
                    recv_inside: false,
                });
            }
        }
        if let Some(keys) = &r {
            if matches!(k, Node::Event(_)) {
                last_recv = Some(keys.clone());
            }
            let all = recv.get_or_insert_with(Vec::new);
            for key in keys {
                if !all.contains(key) {
                    all.push(key.clone());
                }
            }
        }
    }
    if let Some(keys) = &recv {
        if matches!(n, Node::Loop { .. }) && out.len() == before {
            out.push(Worker {
                fn_idx,
                node: n,
                keys: keys.clone(),
                recv_inside: true,
            });
        }
    }
    recv
}

impl<'c> Interp<'c> {
    /// A value sent on a channel: the worker loops' effects float from here, like a
    /// spawned task's with no handle.
    pub(super) fn hand_to_workers(&mut self, e: &Event, chan: &[String], st: &mut State) {
        for w in self.workers.paired(chan) {
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
            // An ack on this path before the send ran before whatever the worker
            // applies for what was sent (`msg.ack().await?; tx.send(job).await?`).
            let pend: Vec<Pending> = st.acks.values().cloned().collect();
            for p in &pend {
                for f in &made {
                    let send = e.loc.clone();
                    self.fact(p, f.effect.clone(), EffectKind::Handed { send });
                }
            }
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
        let (fn_idx, node) = (self.workers.loops[w].fn_idx, self.workers.loops[w].node);
        let Node::Loop { body, .. } = node else {
            return Vec::new();
        };
        let frame = Frame {
            id: self.next_frame,
            fn_idx,
            map: HashMap::default(),
            closures: HashMap::default(),
            origins: HashMap::default(),
            rows: HashMap::default(),
            fields: HashMap::default(),
            stores: HashMap::default(),
        };
        self.next_frame += 1;
        let mut inner = st.clone();
        // Acks before the send are not ordered against the worker (docs/what-is-analyzed.md: the ack
        // after the send is the one in question); nor are failures before it its own.
        inner.acks.clear();
        inner.failed = None;
        // What the sender did to its message (writes, publishes, reads, an open
        // transaction) pairs with nothing the worker does: the worker's effects
        // are the message's only where an ack orders them.
        inner.forget_message_effects();
        inner.txs.clear();
        inner.read_tables.clear();
        inner.early_offsets.clear();
        inner.broker_open = None;
        inner.broker_seen = None;
        inner.effects.clear();
        inner.before_recv = self.workers.loops[w].recv_inside;
        // (Run for a send made inside a fed worker loop, a reply sent back: the
        // worker's own effects are collected all the same.)
        let fed = std::mem::take(&mut self.fed_workers);
        self.tasks += 1;
        let o = self.run(body, inner, &frame);
        self.tasks -= 1;
        self.fed_workers = fed;
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
