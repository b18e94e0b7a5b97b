//! How a call's outcome is matched and how an error is handled, as the lowering
//! reads it: `Ok`/`Err` patterns, `is_ok`/`is_err` tests, arms that take every
//! error or hide it, and what ends in a panic or a propagation (acks after a failure).

use std::collections::HashMap;

use proc_macro2::Span as PmSpan;
use syn::{Expr, Pat, Stmt};

use super::strip;
use crate::apis::{builtin_std, ResultSide, ResultSpec};
use crate::frontend::rust::CrateIndex;
use crate::ir::{ClosureRun, Event, EventKind, Node};

/// The runtime pack's `[results]`: `Ok`, `Err`, `is_err`, `unwrap`, `map_err`.
pub(super) fn results() -> &'static ResultSpec {
    &builtin_std().results
}

/// The runtime pack's side of a path's last segment (`Ok` -> `Some(true)`,
/// `result::Result::Err` -> `Some(false)`, other names -> `None`).
pub(super) fn std_side(path: &syn::Path) -> Option<bool> {
    results().side(&path.segments.last()?.ident.to_string())
}

/// The crate's outcome enums (`CrateIndex::outcomes`): variants by enum, each with
/// whether it carries an error.
pub(super) type Outcomes = HashMap<String, HashMap<String, bool>>;

/// The side of an outcome enum's variant named by `path` (`Outcome::Failed` ->
/// `Some(false)`, `Outcome::Applied` -> `Some(true)`); `None` for other paths.
pub(super) fn variant_side(outcomes: &Outcomes, path: &syn::Path) -> Option<bool> {
    let [.., ty, variant] = path.segments.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    let fails = outcomes
        .get(&ty.ident.to_string())?
        .get(&variant.ident.to_string())?;
    Some(!fails)
}

/// `Ok(..)` -> `Some(true)`, `Err(..)` -> `Some(false)`, an outcome enum's variant
/// by its side ([`variant_side`]), other patterns -> `None`.
/// A success pattern around another outcome's pattern (`Ok(Err(e))` on a joined
/// task's outcome, `Result<Result<T, E>, JoinError>`, or a timeout's) has the inner
/// outcome's side: the task ran, and its own operation failed or succeeded.
pub(super) fn result_pattern(p: &Pat, outcomes: &Outcomes) -> Option<bool> {
    match p {
        Pat::TupleStruct(ts) => {
            let side = std_side(&ts.path).or_else(|| variant_side(outcomes, &ts.path));
            match (side, ts.elems.first()) {
                (Some(true), Some(inner)) if ts.elems.len() == 1 => {
                    result_pattern(inner, outcomes).or(side)
                }
                _ => side,
            }
        }
        Pat::Path(pp) => variant_side(outcomes, &pp.path),
        Pat::Struct(ps) => variant_side(outcomes, &ps.path),
        Pat::Paren(p) => result_pattern(&p.pat, outcomes),
        Pat::Tuple(t) => tuple_side(t, |p| result_pattern(p, outcomes)),
        _ => None,
    }
}

/// A tuple carrying one outcome beside plain values (`(receipt, Err(e))`, `(id,
/// Ok(_))`: a task or a join that gives back its item with its result): that
/// outcome's side, when exactly one element has one.
fn tuple_side(t: &syn::PatTuple, side: impl Fn(&Pat) -> Option<bool>) -> Option<bool> {
    let mut sides = t.elems.iter().filter_map(side);
    let first = sides.next()?;
    sides.next().is_none().then_some(first)
}

/// `Some(x)` (the runtime pack's `some` names), through parentheses.
pub(super) fn some_pattern(p: &Pat) -> bool {
    match p {
        Pat::TupleStruct(ts) => {
            ts.elems.len() == 1
                && ts
                    .path
                    .segments
                    .last()
                    .is_some_and(|s| results().some.iter().any(|n| s.ident == n))
        }
        Pat::Paren(p) => some_pattern(&p.pat),
        _ => false,
    }
}

/// An expression that is a call (awaited, perhaps), not a value; or a future held
/// in a binding or a binding's field, awaited (`delivery.await`, `delivery` an async
/// block; `p.write.await`, `write` a field holding a task's handle).
pub(super) fn is_call_chain(e: &Expr) -> bool {
    let mut e = strip(e);
    let mut awaited = false;
    while let Expr::Await(a) = e {
        e = strip(&a.base);
        awaited = true;
    }
    matches!(e, Expr::Call(_) | Expr::MethodCall(_)) || (awaited && is_place(e))
}

/// A binding or a field of one (`write`, `p.write`, `self.job.write`).
fn is_place(e: &Expr) -> bool {
    match strip(e) {
        Expr::Path(_) => true,
        Expr::Field(f) => is_place(&f.base),
        _ => false,
    }
}

/// The nodes end with an operation whose failure is followed (for acks after a
/// failure): a write, a commit, a publish, an external call, or a call into the crate
/// (whose error returns say what failed in it).
/// Closures with no events after it (`.map_err(|e| …)`, `.and_then(|r|
/// r.error_for_status())`) leave its result as it is. An async block (or a closure
/// called in place) run there that holds such an operation is one (`let write =
/// async { … }; let r = write.await;`): its result is that operation's. So is a join
/// of such closures' futures.
pub(super) fn ends_in_fallible(nodes: &[Node]) -> bool {
    let quiet =
        |n: &Node| matches!(n, Node::Closure { body, .. } if body.each_event().next().is_none());
    let end = nodes.len() - nodes.iter().rev().take_while(|n| quiet(n)).count();
    let mut nodes = &nodes[..end];
    // `join_all(items.iter().map(|i| op(i))).await` (the packs' `task_joins`): the
    // joined results are the outcomes of the closure's operation, run for each item.
    if let [rest @ .., Node::Event(Event {
        kind: EventKind::AwaitHandle { handle: None },
        ..
    })] = nodes
    {
        if matches!(
            rest.last(),
            Some(Node::Closure {
                run: ClosureRun::Now,
                ..
            })
        ) {
            nodes = rest;
        }
    }
    match nodes.last() {
        Some(Node::Event(e)) => fallible(e),
        Some(Node::Closure {
            body,
            run: ClosureRun::Now,
            ..
        }) => body.each_event().any(fallible),
        _ => false,
    }
}

/// An operation that can fail with an error the code then handles.
fn fallible(e: &Event) -> bool {
    matches!(
        e.kind,
        EventKind::Write { .. }
            | EventKind::Commit { .. }
            | EventKind::Publish { .. }
            | EventKind::External { .. }
            | EventKind::Call(_)
            | EventKind::CallValue { .. }
            // A send whose delivery report comes later (`send(..).await` on a batching
            // producer): the send itself can fail; and the wait for the reports
            // (`flush`, `wait`) fails when a record was not delivered.
            | EventKind::EntriesUnread { delivery: true, .. }
            | EventKind::ConfirmsWaited { .. }
    )
}

/// `op.is_err()` (true: the `if` body is the failure side, `false` for the `else`),
/// `op.is_ok()`, `!op.is_ok()`, over a call chain; with where the test is written.
/// `bound`: the receiver may also be a binding that holds an operation's outcome
/// (`let r = op.await; if r.is_err() { … }`).
pub(super) fn outcome_test(c: &Expr, bound: bool) -> Option<(bool, PmSpan)> {
    match strip(c) {
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => {
            outcome_test(&u.expr, bound).map(|(ok, sp)| (!ok, sp))
        }
        Expr::MethodCall(m)
            if m.args.is_empty()
                && (is_call_chain(&m.receiver) || (bound && outcome_receiver(c).is_some())) =>
        {
            let side = results().tests.get(&m.method.to_string())?;
            Some((*side == ResultSide::Ok, m.method.span()))
        }
        _ => None,
    }
}

/// The binding an outcome test reads (`r` in `r.is_err()`, `!r.is_ok()`), when it
/// tests a plain binding.
pub(super) fn outcome_receiver(c: &Expr) -> Option<&Expr> {
    match strip(c) {
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => outcome_receiver(&u.expr),
        Expr::MethodCall(m)
            if m.args.is_empty()
                && matches!(strip(&m.receiver), Expr::Path(p) if p.path.get_ident().is_some())
                && results().tests.contains_key(&m.method.to_string()) =>
        {
            Some(&m.receiver)
        }
        _ => None,
    }
}

/// The value an error-handling arm gives back says nothing of the failure: `()`,
/// `Ok(())`, a log macro, or the arm leaves (`continue`, `break`, a bare `return`).
pub(super) fn hides_failure(e: &Expr) -> bool {
    match strip(e) {
        Expr::Block(b) => block_hides_failure(&b.block),
        Expr::Tuple(t) => t.elems.is_empty(),
        Expr::Call(c) => {
            matches!(strip(&c.func), Expr::Path(p) if p.path.get_ident()
                .is_some_and(|i| results().side(&i.to_string()) == Some(true)))
                && c.args.len() == 1
                && matches!(strip(&c.args[0]), Expr::Tuple(t) if t.elems.is_empty())
        }
        Expr::Return(r) => r.expr.as_deref().is_none_or(hides_failure),
        Expr::Macro(_) | Expr::Continue(_) | Expr::Break(_) => true,
        _ => false,
    }
}

pub(super) fn block_hides_failure(b: &syn::Block) -> bool {
    match b.stmts.last() {
        Some(Stmt::Expr(e, None)) => hides_failure(e),
        Some(Stmt::Expr(e, Some(_))) => match strip(e) {
            Expr::Return(r) => r.expr.as_deref().is_none_or(hides_failure),
            _ => true,
        },
        _ => true,
    }
}

/// A pattern that takes every error: `Err(e)`, `Err(_)`, `Err(ref e)`, `Err((e, _))`
/// (rdkafka's `send` fails with the error and the message), an outcome enum's
/// failure variant with every field bound (`Outcome::Failed(e)`, `Failed { error, .. }`),
/// and `Err(StoreError::Db(e))`, a variant of the crate's error enum that wraps a
/// library's error (`CrateIndex::effect_errors`): every failure of that library's
/// calls (a decoding error's variant beside it stays one chosen error).
pub(super) fn catch_all_err(p: &Pat, index: &CrateIndex) -> bool {
    let outcomes = &index.outcomes;
    match p {
        Pat::TupleStruct(ts) => match variant_side(outcomes, &ts.path) {
            Some(ok) => !ok && ts.elems.iter().all(irrefutable),
            None => {
                result_pattern(p, outcomes) == Some(false)
                    && ts.elems.len() == 1
                    && (irrefutable(&ts.elems[0])
                        || (std_side(&ts.path) == Some(false)
                            && wraps_library_error(&ts.elems[0], index))
                        // `Ok(Err(e))`: every error of the inner outcome.
                        || (std_side(&ts.path) == Some(true)
                            && catch_all_err(&ts.elems[0], index)))
            }
        },
        Pat::Struct(ps) => {
            variant_side(outcomes, &ps.path) == Some(false)
                && ps.fields.iter().all(|f| irrefutable(&f.pat))
        }
        Pat::Path(pp) => variant_side(outcomes, &pp.path) == Some(false),
        Pat::Paren(p) => catch_all_err(&p.pat, index),
        _ => false,
    }
}

/// A pattern that matches every value of its type: `_`, `e`, tuples of such.
fn irrefutable(p: &Pat) -> bool {
    match p {
        Pat::Wild(_) | Pat::Ident(syn::PatIdent { subpat: None, .. }) => true,
        Pat::Tuple(t) => t.elems.iter().all(irrefutable),
        Pat::Paren(p) => irrefutable(&p.pat),
        Pat::Type(t) => irrefutable(&t.pat),
        _ => false,
    }
}

/// `StoreError::Db(e)`, `StoreError::Db { source }`: a variant of the crate's error
/// enum that wraps a library's error, its field bound whole.
fn wraps_library_error(p: &Pat, index: &CrateIndex) -> bool {
    let wraps = |path: &syn::Path| {
        let [.., ty, variant] = path.segments.iter().collect::<Vec<_>>()[..] else {
            return false;
        };
        (index.effect_errors.get(&ty.ident.to_string()))
            .is_some_and(|vs| vs.contains(&variant.ident.to_string()))
    };
    match p {
        Pat::TupleStruct(ts) => wraps(&ts.path) && ts.elems.iter().all(irrefutable),
        Pat::Struct(ps) => wraps(&ps.path) && ps.fields.iter().all(|f| irrefutable(&f.pat)),
        Pat::Paren(p) => wraps_library_error(&p.pat, index),
        _ => false,
    }
}

/// `_`, or a plain binding (`other`), beside a success arm: the arm takes every
/// outcome the other arms leave, every error among them.
pub(super) fn catch_all_binding(p: &Pat) -> bool {
    match p {
        Pat::Wild(_) => true,
        Pat::Ident(pi) => {
            pi.subpat.is_none()
                && pi.by_ref.is_none()
                && pi
                    .ident
                    .to_string()
                    .starts_with(|c: char| c == '_' || c.is_lowercase())
        }
        Pat::Paren(p) => catch_all_binding(&p.pat),
        _ => false,
    }
}

/// A guard on an arm that takes every error which does not look at the error
/// (`Err(e) if attempts(&record) >= 3`, `Err(_) if last_try`): it chooses when the arm
/// runs, not which errors it takes, so on that path every kind of failure is handled
/// there. A guard that tests the error (`Err(e) if is_unique_violation(&e)`) picks
/// errors, as a variant pattern does.
pub(super) fn guard_ignores_error(p: &Pat, guard: &Expr) -> bool {
    struct Names(Vec<String>);
    impl<'ast> syn::visit::Visit<'ast> for Names {
        fn visit_pat_ident(&mut self, pi: &'ast syn::PatIdent) {
            self.0.push(pi.ident.to_string());
            syn::visit::visit_pat_ident(self, pi);
        }
    }
    let mut bound = Names(Vec::new());
    syn::visit::Visit::visit_pat(&mut bound, p);
    let used = crate::frontend::rust::idents_of(guard);
    !bound.0.iter().any(|n| used.contains(n))
}

/// The statement's error handling ends in a panic or a propagation, whatever comes
/// between (`let _ = op.await.map_err(log).unwrap();`, `op.await.context(..)?`).
pub(super) fn panics_or_propagates(e: &Expr) -> bool {
    match strip(e) {
        Expr::Try(_) => true,
        Expr::Await(a) => panics_or_propagates(&a.base),
        Expr::MethodCall(m) => {
            let method = m.method.to_string();
            let r = results();
            r.panics.contains(&method)
                || (r.keeps.contains(&method) && panics_or_propagates(&m.receiver))
        }
        _ => false,
    }
}

/// The nodes end with a task awaited (`handle.await`, a join of tasks) and one of
/// `pats` looks into the task's own outcome (`Ok(Err(e))`, `Ok(Ok(v))`): the
/// patterns match the outcome of the task's operation, which the await gives (a
/// failed effect of the task, analysis/flow/events.rs `awaited`).
pub(super) fn ends_in_task_outcome<'p>(
    nodes: &[Node],
    mut pats: impl Iterator<Item = &'p Pat>,
) -> bool {
    let awaited = matches!(
        nodes.last(),
        Some(Node::Event(Event {
            kind: EventKind::AwaitHandle { .. },
            ..
        }))
    );
    awaited && pats.any(task_outcome_pattern)
}

/// `Ok(Err(e))`, `Ok(Ok(v))`: a success pattern around another outcome's pattern.
pub(super) fn task_outcome_pattern(p: &Pat) -> bool {
    match p {
        Pat::TupleStruct(ts) => {
            ts.elems.len() == 1
                && std_side(&ts.path) == Some(true)
                && match &ts.elems[0] {
                    Pat::TupleStruct(inner) => std_side(&inner.path).is_some(),
                    Pat::Tuple(t) => tuple_side(t, |p| match p {
                        Pat::TupleStruct(inner) => std_side(&inner.path),
                        _ => None,
                    })
                    .is_some(),
                    _ => false,
                }
        }
        Pat::Paren(p) => task_outcome_pattern(&p.pat),
        Pat::Or(o) => o.cases.iter().any(task_outcome_pattern),
        _ => false,
    }
}
