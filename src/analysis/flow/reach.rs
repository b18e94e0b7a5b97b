//! Which functions of a crate reach a kind of event, directly or through calls: the
//! entries the interpreter starts from and the callees worth inlining.

use super::Resolver;
use crate::ir::{Crate, EventKind, Function, Node};

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
