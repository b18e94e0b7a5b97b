//! Which functions of a crate reach a kind of event, directly or through calls: the
//! entries the interpreter starts from and the callees worth inlining.

use std::collections::BTreeMap;

use super::Resolver;
use crate::ir::{Crate, EventKind, Function, Loc, Node};

/// Which functions may reach a delivery event (directly or through calls).
pub(super) fn reaches_ack(krate: &Crate, resolver: &Resolver) -> Vec<bool> {
    // Any delivery event (a call itself is followed, an id generation is a fresh id's,
    // read from the model): functions without one need not be entered or inlined.
    reaches(krate, resolver, &|k| {
        !matches!(
            k,
            EventKind::Call(_)
                | EventKind::CallValue { .. }
                | EventKind::IdGen { .. }
                | EventKind::Receive { .. }
        )
    })
}

/// Which functions receive a message (directly or through calls): a loop that
/// calls one is a consume loop, whose iterations are other messages.
pub(super) fn receiving_functions(krate: &Crate, resolver: &Resolver) -> Vec<bool> {
    reaches(krate, resolver, &|k| matches!(k, EventKind::Receive { .. }))
}

/// Whether `n` receives a message: a receive event in it (closures included) or a
/// call to a function that `receiving` says receives.
pub(super) fn node_receives(n: &Node, f: &Function, r: &Resolver, receiving: &[bool]) -> bool {
    let mut direct = false;
    let mut calls = Vec::new();
    scan(
        n,
        f,
        r,
        &|k| matches!(k, EventKind::Receive { .. }),
        &mut direct,
        &mut calls,
    );
    direct || calls.iter().any(|&j| receiving[j])
}

/// Which functions apply an effect (a write, a publish, an external call),
/// directly or through calls.
pub fn effectful_functions(krate: &Crate, resolver: &Resolver) -> Vec<bool> {
    reaches(krate, resolver, &|k| {
        matches!(
            k,
            EventKind::Write { .. } | EventKind::Publish { .. } | EventKind::External { .. }
        )
    })
}

/// Which functions run when one of `starts` runs: they and their callees, through
/// calls (closures included).
pub fn called_from(krate: &Crate, resolver: &Resolver, starts: Vec<usize>) -> Vec<bool> {
    let mut seen = vec![false; krate.functions.len()];
    let mut work = starts;
    while let Some(i) = work.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        let f = &krate.functions[i];
        let mut calls = Vec::new();
        scan(&f.body, f, resolver, &|_| false, &mut false, &mut calls);
        work.extend(calls.into_iter().filter(|&j| !seen[j]));
    }
    seen
}

/// Which functions contain an event matching `pred`, directly or through calls.
fn reaches(krate: &Crate, resolver: &Resolver, pred: &dyn Fn(&EventKind) -> bool) -> Vec<bool> {
    let n = krate.functions.len();
    let mut reach = vec![false; n];
    let mut edges = vec![Vec::new(); n];
    for (i, f) in krate.functions.iter().enumerate() {
        scan(&f.body, f, resolver, pred, &mut reach[i], &mut edges[i]);
    }
    loop {
        let mut changed = false;
        for i in 0..n {
            if !reach[i] && edges[i].iter().any(|&j| reach[j]) {
                reach[i] = true;
                changed = true;
            }
        }
        if !changed {
            return reach;
        }
    }
}

fn scan(
    n: &Node,
    f: &Function,
    r: &Resolver,
    pred: &dyn Fn(&EventKind) -> bool,
    direct: &mut bool,
    calls: &mut Vec<usize>,
) {
    match n {
        Node::Seq(v) | Node::Branch(v) => v.iter().for_each(|c| scan(c, f, r, pred, direct, calls)),
        Node::Loop { body, .. } | Node::Closure { body, .. } => {
            scan(body, f, r, pred, direct, calls)
        }
        Node::ResultBranch { scrutinee, ok, err } => {
            for c in [scrutinee, ok, err] {
                scan(c, f, r, pred, direct, calls);
            }
        }
        Node::Event(e) => {
            if pred(&e.kind) {
                *direct = true;
            }
            if let EventKind::Call(c) = &e.kind {
                calls.extend(r.resolve(f, c));
                for (_, n) in &c.closures {
                    scan(n, f, r, pred, direct, calls);
                }
            }
        }
        Node::Exit(_) => {}
    }
}

/// The relays' poll loops of a crate and what runs once per pass of one (SPEC §2,
/// "relay re-reads are retries"): a loop that runs pass after pass, where a pass
/// (with what it calls) reads rows and sends (a publish, an external call) and
/// receives nothing (no message, no in-process channel: those are consume and
/// worker loops). A row whose send failed is read and sent again on the next pass.
pub struct RelayPasses {
    /// The relay loops, by place, with their first characters.
    pub loops: BTreeMap<Loc, String>,
    /// Per function: the relay loop it runs under once per pass (a callee of one).
    pub per_pass: Vec<Option<(Loc, String)>>,
    /// Per function: it sends, directly or through calls.
    pub sends: Vec<bool>,
}

pub fn relay_passes(krate: &Crate, resolver: &Resolver) -> RelayPasses {
    let is_send =
        |k: &EventKind| matches!(k, EventKind::Publish { .. } | EventKind::External { .. });
    let is_read = |k: &EventKind| matches!(k, EventKind::Read { .. });
    let is_recv =
        |k: &EventKind| matches!(k, EventKind::Receive { .. } | EventKind::ChannelRecv { .. });
    let n = krate.functions.len();
    let mut out = RelayPasses {
        loops: BTreeMap::new(),
        per_pass: vec![None; n],
        sends: vec![false; n],
    };
    if krate.functions.iter().all(|f| f.poll_loops.is_empty()) {
        return out;
    }
    out.sends = reaches(krate, resolver, &is_send);
    let reads = reaches(krate, resolver, &is_read);
    let receives = reaches(krate, resolver, &is_recv);
    let mut edges: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, f) in krate.functions.iter().enumerate() {
        scan(&f.body, f, resolver, &|_| false, &mut false, &mut edges[i]);
    }
    for f in &krate.functions {
        for pl in &f.poll_loops {
            let (mut sends, mut read, mut recv) = (false, false, false);
            let mut calls = Vec::new();
            scan(&pl.body, f, resolver, &is_send, &mut sends, &mut calls);
            scan(&pl.body, f, resolver, &is_read, &mut read, &mut Vec::new());
            scan(&pl.body, f, resolver, &is_recv, &mut recv, &mut Vec::new());
            let sends = sends || calls.iter().any(|&j| out.sends[j]);
            let read = read || calls.iter().any(|&j| reads[j]);
            let recv = recv || calls.iter().any(|&j| receives[j]);
            if !(sends && read) || recv {
                continue;
            }
            out.loops.insert(pl.loc.clone(), pl.text.clone());
            let mut stack = calls;
            while let Some(j) = stack.pop() {
                if out.per_pass[j].is_some() {
                    continue;
                }
                out.per_pass[j] = Some((pl.loc.clone(), pl.text.clone()));
                stack.extend(edges[j].iter().copied());
            }
        }
    }
    out
}

/// Per function: the retry scope it runs under once per attempt, a function a retry
/// loop or a retry helper's closure calls (directly or through the functions it
/// calls), with the scope's place and first characters. A fresh id such a function
/// mints into what it sends is one per attempt. A scope that receives messages (a
/// supervisor restarting a consumer) is no retry of one send: it is left out.
pub fn retry_attempts(krate: &Crate, resolver: &Resolver) -> Vec<Option<(Loc, String)>> {
    let n = krate.functions.len();
    let mut out = vec![None; n];
    if krate.functions.iter().all(|f| f.retry_bodies.is_empty()) {
        return out;
    }
    let is_recv =
        |k: &EventKind| matches!(k, EventKind::Receive { .. } | EventKind::ChannelRecv { .. });
    let receives = reaches(krate, resolver, &is_recv);
    let mut edges: Vec<Option<Vec<usize>>> = vec![None; n];
    for f in &krate.functions {
        for rb in &f.retry_bodies {
            let (mut stack, mut recv) = (Vec::new(), false);
            scan(&rb.body, f, resolver, &is_recv, &mut recv, &mut stack);
            if recv || stack.iter().any(|&j| receives[j]) {
                continue;
            }
            while let Some(j) = stack.pop() {
                if out[j].is_some() {
                    continue;
                }
                out[j] = Some((rb.loc.clone(), rb.text.clone()));
                let callees = edges[j].get_or_insert_with(|| {
                    let g = &krate.functions[j];
                    let mut calls = Vec::new();
                    scan(&g.body, g, resolver, &|_| false, &mut false, &mut calls);
                    calls
                });
                stack.extend(callees.iter().copied());
            }
        }
    }
    out
}
