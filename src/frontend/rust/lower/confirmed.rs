//! The awaited confirmation of a confirmable publish, matched by its arms
//! (`match confirm.await { Ok(Confirmation::Ack(_)) => .., Ok(other) => warn!(..),
//! Err(e) => warn!(..) }`): an arm on the await's error or on a variant the packs do
//! not name as `confirmed` (lapin `Nack`, `NotRequested`) is on the publish's failure
//! side, and code that goes on from it goes on after a failed publish.

use syn::spanned::Spanned;
use syn::{Expr, Pat};

use super::outcome::{block_hides_failure, hides_failure, std_side};
use super::{strip, Lowerer};
use crate::ir::{Event, EventKind, Loc, Node};

/// Which side of a confirmation an arm's pattern takes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Taken,
    Failed,
    /// A binding or `_`: whatever the arms before it left.
    Rest,
    /// An or-pattern taking a confirmation and a failure (`Ack(_) | NotRequested`).
    Both,
}

impl<'a, 'b> Lowerer<'a, 'b> {
    /// Whether the `match` scrutinee `e` (lowered to `scr_nodes`) is a publish's
    /// awaited confirmation: `confirm.await` on a binding of a confirmable publish,
    /// `….basic_publish(..).await?.await`, or a binding of either. `Some((true, ..))`
    /// when a `?` takes the await's error first (`confirm.await?`): the arms match
    /// the confirmation itself. The second part is the publish's place, when known.
    fn awaited_confirmation(&self, e: &Expr, scr_nodes: &[Node]) -> Option<(bool, Option<Loc>)> {
        if self.cx.apis.confirmed.is_empty() {
            return None;
        }
        // `let confirmation = publish.await?.await?; match confirmation { .. }`.
        if let Some(v) = self.path_value(e) {
            if let Some((_, loc)) = self.confirmed_values.iter().find(|(c, _)| *c == v) {
                return Some((true, loc.clone()));
            }
        }
        let (awaited, tried) = match strip(e) {
            Expr::Try(t) => (strip(&t.expr), true),
            other => (other, false),
        };
        // `let outcome = pending.await; match outcome { .. }`.
        if let Some(v) = self.path_value(awaited) {
            if let Some((_, loc)) = self.confirmations.iter().find(|(c, _)| *c == v) {
                return Some((tried, loc.clone()));
            }
        }
        let Expr::Await(a) = awaited else {
            return None;
        };
        let bound = self
            .path_value(&a.base)
            .and_then(|v| self.bound_publishes.iter().find(|(b, _)| *b == v));
        if let Some((_, loc)) = bound {
            return Some((tried, Some(loc.clone())));
        }
        if !matches!(super::super::chain::settled(&a.base), Expr::MethodCall(_))
            || !matches!(strip(&a.base), Expr::Try(_) | Expr::Await(_))
        {
            return None;
        }
        let publish = scr_nodes.iter().flat_map(Node::each_event).find(|ev| {
            matches!(
                ev.kind,
                EventKind::Publish {
                    confirm: Some(_),
                    ..
                }
            ) && self.confirmable.contains(&ev.loc)
        })?;
        Some((tried, Some(publish.loc.clone())))
    }

    /// The publish whose awaited confirmation a `let` binds itself (`let c =
    /// pending.await;`, not through a `?`): a `match` on the binding is one on the
    /// confirmation. The inner option is the publish's place, when known.
    pub(super) fn confirmation_bound(&self, init: &Expr, nodes: &[Node]) -> Option<Option<Loc>> {
        match self.awaited_confirmation(init, nodes) {
            Some((false, loc)) => Some(loc),
            _ => None,
        }
    }

    /// The publish whose confirmation a `let` binds, the await's error taken by a
    /// `?` (`let c = pending.await?;`, `..basic_publish(..).await?.await?`).
    pub(super) fn confirmation_taken(&self, init: &Expr, nodes: &[Node]) -> Option<Option<Loc>> {
        match self.awaited_confirmation(init, nodes) {
            Some((true, loc)) => Some(loc),
            _ => None,
        }
    }

    /// A failure side of a publish's confirmation that hides the failure (it logs
    /// and goes on): the publish's confirmation is not checked there.
    fn note_confirm_ignored(&mut self, publish: &Option<Loc>, told: bool) {
        if let (Some(loc), false) = (publish, told) {
            if !self.confirms_ignored.contains(loc) {
                self.confirms_ignored.push(loc.clone());
            }
        }
    }

    /// An `if` testing a publish's confirmation with one of the packs'
    /// `confirmed_tests` (`if !c.is_ack() { warn!(..) }`, `if pending.await?.is_ack()
    /// { .. } else { .. }`): the side where the broker did not take the message is
    /// the publish's failure side, opened with its error handled.
    pub(super) fn confirmation_test(
        &mut self,
        cond: &Expr,
        cond_nodes: &[Node],
        then: &mut Vec<Node>,
        els: &mut Vec<Node>,
        i: &syn::ExprIf,
    ) {
        let tests = &self.cx.apis.confirmed_tests;
        if tests.is_empty() {
            return;
        }
        let (mut c, mut negated) = (strip(cond), false);
        while let Expr::Unary(u) = c {
            if !matches!(u.op, syn::UnOp::Not(_)) {
                return;
            }
            negated = !negated;
            c = strip(&u.expr);
        }
        let Expr::MethodCall(m) = c else { return };
        let Some(holds) = tests.get(&m.method.to_string()) else {
            return;
        };
        let publish = match self.awaited_confirmation(&m.receiver, cond_nodes) {
            Some((true, publish)) => publish,
            _ => return,
        };
        // The test holds when confirmed (`is_ack`, or `!is_nack`): the failure is on
        // the other side.
        let failed_then = *holds == negated;
        let sp = m.method.span();
        if failed_then {
            let told = !block_hides_failure(&i.then_branch);
            self.note_confirm_ignored(&publish, told);
            then.insert(0, self.error_ignored(sp, "if !confirmed", told));
        } else {
            let told = i
                .else_branch
                .as_ref()
                .is_some_and(|(_, e)| !hides_failure(e));
            self.note_confirm_ignored(&publish, told);
            els.insert(0, self.error_ignored(sp, "if !confirmed", told));
        }
    }

    /// Sorts the arms of a `match` on a publish's awaited confirmation (`tried`: the
    /// await's error is taken by a `?` before): the arms taking a confirmation the
    /// packs name `confirmed` are the success side, those taking the await's error or
    /// another variant (or whatever is left after a success arm) the failure side,
    /// which opens with the publish's error handled. Gives whether it was one.
    pub(super) fn confirmation_arms(
        &mut self,
        m: &syn::ExprMatch,
        scr_nodes: &[Node],
        arms: &mut [Node],
        kinds: &mut [Option<bool>],
    ) -> bool {
        let Some((tried, publish)) = self.awaited_confirmation(&m.expr, scr_nodes) else {
            return false;
        };
        let confirmed = &self.cx.apis.confirmed;
        let mut taken = false;
        let mut failed = Vec::new();
        for ((arm, body), kind) in m.arms.iter().zip(arms.iter_mut()).zip(kinds.iter_mut()) {
            let side = if tried {
                side(&arm.pat, confirmed)
            } else {
                outcome_side(&arm.pat, confirmed)
            };
            let side = match (side, arm.guard.is_some()) {
                (Side::Rest, _) if taken => Side::Failed,
                // `Ack(_) | NotRequested =>`: taken on a failure too; what it does
                // then is what it does on success.
                (Side::Both, false) => Side::Both,
                // `Ok(c) if c.is_ack() =>`: the guard decides; nothing known.
                (Side::Taken | Side::Both, true) | (Side::Rest, _) => continue,
                (s, _) => s,
            };
            if side == Side::Taken {
                taken = true;
                *kind = Some(true);
                continue;
            }
            if side == Side::Failed {
                *kind = Some(false);
            }
            if let Node::Seq(v) = body {
                let told = !hides_failure(&arm.body);
                failed.push(told);
                v.insert(0, self.error_ignored(arm.pat.span(), "Err(..) =>", told));
            }
        }
        for told in failed {
            self.note_confirm_ignored(&publish, told);
        }
        true
    }
}

/// The side of an arm on the awaited result (`Ok(<confirmation>)`, `Err(e)`).
fn outcome_side(p: &Pat, confirmed: &[String]) -> Side {
    match p {
        Pat::TupleStruct(ts) if ts.elems.len() == 1 => match std_side(&ts.path) {
            Some(true) => side(&ts.elems[0], confirmed),
            Some(false) => Side::Failed,
            None => Side::Rest,
        },
        Pat::Paren(p) => outcome_side(&p.pat, confirmed),
        Pat::Or(o) => joined(o.cases.iter().map(|c| outcome_side(c, confirmed))),
        _ => Side::Rest,
    }
}

/// The side of a pattern on the confirmation itself (`Confirmation::Ack(_)`).
fn side(p: &Pat, confirmed: &[String]) -> Side {
    let by_path = |path: &syn::Path| match path.segments.last() {
        Some(s) if confirmed.iter().any(|c| s.ident == c) => Side::Taken,
        Some(_) => Side::Failed,
        None => Side::Rest,
    };
    match p {
        Pat::TupleStruct(ts) => by_path(&ts.path),
        Pat::Path(pp) => by_path(&pp.path),
        Pat::Struct(s) => by_path(&s.path),
        Pat::Paren(p) => side(&p.pat, confirmed),
        Pat::Reference(r) => side(&r.pat, confirmed),
        Pat::Or(o) => joined(o.cases.iter().map(|c| side(c, confirmed))),
        _ => Side::Rest,
    }
}

/// The side of an or-pattern: one side when its cases agree, both when it takes a
/// confirmation and a failure, else unknown.
fn joined(sides: impl Iterator<Item = Side>) -> Side {
    let sides: Vec<Side> = sides.collect();
    let first = sides.first().copied().unwrap_or(Side::Rest);
    if sides.iter().all(|s| *s == first) {
        first
    } else if sides
        .iter()
        .all(|s| matches!(s, Side::Taken | Side::Failed | Side::Both))
    {
        Side::Both
    } else {
        Side::Rest
    }
}

impl Lowerer<'_, '_> {
    /// The marker opening the side of `i` where a batch call's entries failed
    /// (`batch_failed.rs`), and whether it is the `then` side.
    pub(super) fn batch_failure_marker(&self, i: &syn::ExprIf) -> Option<(bool, Node)> {
        let (batch, side) = self
            .batch_failure_ifs
            .get(&self.cx.line_col(i.if_token.span))?;
        let loc = self.batch_locs.get(batch)?.clone();
        let node = Node::Event(Event {
            kind: EventKind::EntriesFailed,
            loc,
            text: "failed entries tested".into(),
            describe: "entries failed".into(),
        });
        Some((*side, node))
    }
}
