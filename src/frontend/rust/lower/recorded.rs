//! Outcomes kept in a local rather than in a binding of the result:
//!
//! - a failure side that records the failure (`failed += 1`, `had_error = true`,
//!   `failures.push(e)`) in a local a later test reads and turns into an error
//!   (`if failed > 0 { return Err(..) }`): on the side that does not return, nothing
//!   had failed;
//! - a collection filled only on operations' success sides (`Ok(_) =>
//!   sent.push(row.id)`): a statement that uses it (`mark_sent(&pool, &sent)`) names
//!   only the rows whose operation succeeded, not the one whose failure was handled.

use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Expr, ExprMethodCall, Stmt};

use super::outcome::{ends_in_fallible, outcome_test, result_pattern, some_pattern};
use super::{FileCx, Lowerer};
use crate::apis::ResultSide;
use crate::frontend::rust::untyped;
use crate::ir::ValueId;
use crate::ir::{Event, EventKind, ExitKind, Loc, Node};
use proc_macro2::Span as PmSpan;

/// The plain locals an expression or block puts something into: assigned (`x =`,
/// `x += ..`) or filled by a store method (`x.push(..)`), with how often each is
/// filled by a store method.
pub(super) struct Recorded<'s> {
    store: &'s foldhash::HashSet<String>,
    assigned: Vec<String>,
    /// Those assigned `false` (`ok = false`).
    cleared: Vec<String>,
    filled: Vec<String>,
}

fn plain_ident(e: &Expr) -> Option<String> {
    match super::strip(e) {
        Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
        _ => None,
    }
}

impl<'ast> Visit<'ast> for Recorded<'_> {
    fn visit_expr_assign(&mut self, a: &'ast syn::ExprAssign) {
        self.assigned.extend(plain_ident(&a.left));
        if let Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Bool(b),
            ..
        }) = super::strip(&a.right)
        {
            if !b.value {
                self.cleared.extend(plain_ident(&a.left));
            }
        }
        syn::visit::visit_expr_assign(self, a);
    }
    fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
        use syn::BinOp::*;
        if matches!(
            b.op,
            AddAssign(_) | SubAssign(_) | BitOrAssign(_) | BitAndAssign(_) | MulAssign(_)
        ) {
            self.assigned.extend(plain_ident(&b.left));
        }
        syn::visit::visit_expr_binary(self, b);
    }
    fn visit_expr_method_call(&mut self, m: &'ast ExprMethodCall) {
        if self.store.contains(&m.method.to_string()) {
            self.filled.extend(plain_ident(&m.receiver));
        }
        syn::visit::visit_expr_method_call(self, m);
    }
    // What a closure or a nested function does is not this side's doing here.
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// What a test of the local `name` says of the failures recorded in it:
/// `Some(true)` when it holds exactly when one was (`failed > 0`, `had_error`,
/// `!errors.is_empty()`, `first.is_some()`, `let Some(e) = first`), `Some(false)`
/// when exactly when none was (`failed == 0`, `errors.is_empty()`); `None` for any
/// other test (`failed == total` says nothing of one failure).
fn tests_any(cond: &Expr, name: &str) -> Option<bool> {
    let is_local = |e: &Expr| plain_ident(e).is_some_and(|n| n == name);
    let results = &crate::apis::builtin_std().results;
    let from_local = |e: &Expr| super::joined::chain_root(e).is_some_and(|n| n == name);
    // `v`, `v.len()` or `v.iter().filter(|r| r.is_err()).count()`, the count of what
    // was recorded.
    let counted = |e: &Expr| match super::strip(e) {
        Expr::MethodCall(m) => {
            (m.method == "len" || results.counts.iter().any(|c| m.method == c))
                && m.args.is_empty()
                && from_local(&m.receiver)
        }
        e => is_local(e),
    };
    // `|r| r.is_err()`, `Result::is_err`: which side the test holds on.
    let item_test = |e: &Expr| match super::strip(e) {
        Expr::Closure(c) => match super::strip(&c.body) {
            Expr::MethodCall(t) if t.args.is_empty() => {
                results.tests.get(&t.method.to_string()).copied()
            }
            _ => None,
        },
        Expr::Path(p) => p
            .path
            .segments
            .last()
            .and_then(|s| results.tests.get(&s.ident.to_string()).copied()),
        _ => None,
    };
    let small = |e: &Expr| match super::strip(e) {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse::<u64>().ok().filter(|n| *n <= 1),
        _ => None,
    };
    // `results.iter().find(|r| r.is_err())`: some exactly when one failed.
    let found_failure = |e: &Expr| match super::strip(e) {
        Expr::MethodCall(m) => {
            m.args.len() == 1
                && results.finds.iter().any(|f| m.method == f)
                && from_local(&m.receiver)
                && item_test(&m.args[0]) == Some(ResultSide::Err)
        }
        _ => false,
    };
    match super::strip(cond) {
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => tests_any(&u.expr, name).map(|b| !b),
        // `let Some(e) = first`, `let Some(Err(e)) = results.into_iter().find(|r| r.is_err())`.
        Expr::Let(l) => {
            (some_pattern(&l.pat) && (is_local(&l.expr) || found_failure(&l.expr))).then_some(true)
        }
        // `results.iter().any(|r| r.is_err())`, `results.iter().all(|r| r.is_ok())`.
        Expr::MethodCall(m) if m.args.len() == 1 && from_local(&m.receiver) => {
            let method = m.method.to_string();
            match item_test(&m.args[0])? {
                ResultSide::Err if results.any_of.contains(&method) => Some(true),
                ResultSide::Ok if results.all_of.contains(&method) => Some(false),
                _ => None,
            }
        }
        Expr::MethodCall(m)
            if (is_local(&m.receiver) || found_failure(&m.receiver)) && m.args.is_empty() =>
        {
            match m.method.to_string().as_str() {
                "is_some" => Some(true),
                "is_empty" | "is_none" => Some(false),
                _ => None,
            }
        }
        Expr::Binary(b) => {
            use syn::BinOp::*;
            // Written `count OP n` or `n OP count`, turned into the first.
            let (op, n) = match (counted(&b.left), counted(&b.right)) {
                (true, false) => (b.op, small(&b.right)?),
                (false, true) => (
                    match b.op {
                        Lt(t) => Gt(syn::Token![>](t.span)),
                        Gt(t) => Lt(syn::Token![<](t.span)),
                        Le(t) => Ge(syn::Token![>=](t.spans)),
                        Ge(t) => Le(syn::Token![<=](t.spans)),
                        op => op,
                    },
                    small(&b.left)?,
                ),
                _ => return None,
            };
            match (op, n) {
                (Gt(_) | Ne(_), 0) | (Ge(_), 1) => Some(true),
                (Eq(_) | Le(_), 0) | (Lt(_), 1) => Some(false),
                _ => None,
            }
        }
        e => is_local(e).then_some(true),
    }
}

/// Whether `e` names the plain local `name` anywhere.
struct Names<'n> {
    name: &'n str,
    found: bool,
}

impl<'ast> Visit<'ast> for Names<'_> {
    fn visit_path(&mut self, p: &'ast syn::Path) {
        if p.get_ident().is_some_and(|i| i == self.name) {
            self.found = true;
        }
        syn::visit::visit_path(self, p);
    }
}

/// The nodes end by returning an error (`return Err(..)`, a tail `Err(..)`, `bail!`).
fn ends_in_error(nodes: &[Node]) -> bool {
    match nodes.last() {
        Some(Node::Exit(ExitKind::Return { err: Some(true) })) => true,
        Some(Node::Seq(inner)) => ends_in_error(inner),
        _ => false,
    }
}

/// The nodes end by going on to the next item or leaving the loop (`continue`,
/// `break`), acking nothing after them.
fn leaves(nodes: &[Node]) -> bool {
    match nodes.last() {
        Some(Node::Exit(ExitKind::Continue { .. } | ExitKind::Break { .. })) => true,
        Some(Node::Seq(inner)) => leaves(inner),
        _ => false,
    }
}

/// The nodes keep the message whose effect failed: they return an error, or nack it.
pub(super) fn keeps_failure(nodes: &[Node]) -> bool {
    ends_in_error(nodes)
        || nodes.iter().any(|n| {
            n.each_event()
                .any(|e| matches!(e.kind, EventKind::Nack { .. }))
        })
}

/// The handling markers of a failure side (its first node, an `ErrorIgnored`).
fn marker_loc(marker: Option<&Node>) -> Option<Loc> {
    match marker {
        Some(Node::Event(Event {
            kind: EventKind::ErrorIgnored { .. },
            loc,
            ..
        })) => Some(loc.clone()),
        _ => None,
    }
}

impl<'a, 'b> Lowerer<'a, 'b> {
    fn recorded(&self, visit: impl FnOnce(&mut Recorded)) -> Recorded<'a> {
        let cx: &'a FileCx<'b> = self.cx;
        let mut r = Recorded {
            store: &cx.apis.std.store_methods,
            assigned: Vec::new(),
            cleared: Vec::new(),
            filled: Vec::new(),
        };
        visit(&mut r);
        r
    }

    /// A failure side (its marker first) records the failure in the locals it
    /// assigns or fills: a later test of one of them that returns an error
    /// propagates the failure handled here.
    pub(super) fn note_failure_recorded(
        &mut self,
        marker: Option<&Node>,
        visit: impl FnOnce(&mut Recorded),
    ) {
        let Some(loc) = marker_loc(marker) else {
            return;
        };
        let r = self.recorded(visit);
        self.cleared_records.extend(r.cleared);
        // By name: an assignment rebinds the name to the value assigned.
        for name in r.assigned.into_iter().chain(r.filled) {
            if !self
                .failure_records
                .iter()
                .any(|(n, l)| *n == name && *l == loc)
            {
                self.failure_records.push((name, loc.clone()));
            }
        }
    }

    /// The failure side of a test of `v`, an outcome whose error was handled when it
    /// was taken (`while let Some(r) = set.join_next().await { if let Err(e) = r {
    /// failed = true; } }`), records that failure in the locals it assigns or fills.
    pub(super) fn note_outcome_recorded(&mut self, v: ValueId, visit: impl FnOnce(&mut Recorded)) {
        let locs: Vec<Loc> = self
            .handled_outcomes
            .iter()
            .filter(|(w, _)| *w == v)
            .map(|(_, l)| l.clone())
            .collect();
        if locs.is_empty() {
            return;
        }
        let r = self.recorded(visit);
        self.cleared_records.extend(r.cleared);
        for name in r.assigned.into_iter().chain(r.filled) {
            for loc in &locs {
                if !self
                    .failure_records
                    .iter()
                    .any(|(n, l)| *n == name && l == loc)
                {
                    self.failure_records.push((name.clone(), loc.clone()));
                }
            }
        }
    }

    /// A success side of the operations whose failure sides are `markers` fills
    /// collections: their rows are the operations that succeeded.
    pub(super) fn note_success_filled(
        &mut self,
        markers: &[Loc],
        arm: Option<&syn::Arm>,
        visit: impl FnOnce(&mut Recorded),
    ) {
        if markers.is_empty() {
            return;
        }
        if let Some(a) = arm.map(|a| std::ptr::from_ref(a) as usize) {
            if self.success_arms.contains(&a) {
                return;
            }
            self.success_arms.push(a);
        }
        let r = self.recorded(visit);
        for name in &r.filled {
            if let Some(v) = self.lookup(name) {
                match self.success_fills.iter_mut().find(|(w, _, _)| *w == v) {
                    Some((_, n, locs)) => {
                        *n += 1;
                        locs.extend(markers.iter().cloned());
                    }
                    None => self.success_fills.push((v, 1, markers.to_vec())),
                }
            }
        }
    }

    /// `let sent = op.await.is_ok();`: the outcome reduced to a flag. The error is
    /// handled here (the code goes on either way, and the flag tells of it); a later
    /// test of the flag says on which side the operation succeeded.
    pub(super) fn note_outcome_flag(
        &mut self,
        local: &syn::Local,
        out: &mut Vec<Node>,
        start: usize,
    ) {
        let Some(init) = &local.init else { return };
        if init.diverge.is_some() || out.len() == start || !ends_in_fallible(out) {
            return;
        }
        let syn::Pat::Ident(pi) = untyped(&local.pat) else {
            return;
        };
        let Some((ok, sp)) = outcome_test(&init.expr, false) else {
            return;
        };
        let marker = self.error_ignored(sp, "a flag of its outcome", true);
        if let Some(loc) = marker_loc(Some(&marker)) {
            self.outcome_flags
                .push((pi.ident.to_string(), vec![loc], ok));
        }
        out.push(marker);
    }

    /// `let ok = match r { Ok(_) => true, Err(e) => { warn!(..); false } };` (or an
    /// `if let Err(e) = r { .. false } else { true }`): the sides of an outcome turned
    /// into a flag. When every side that handles a failure (its marker, lowered into
    /// `out[start..]`) gives the same value and another side gives the other, the
    /// flag tells of the failures as `r.is_ok()` would; sides that never give a value
    /// (`continue`, `return Err(..)`) say nothing of it.
    pub(super) fn note_arms_flag(&mut self, local: &syn::Local, out: &[Node], start: usize) {
        let (Some(init), syn::Pat::Ident(pi)) = (&local.init, untyped(&local.pat)) else {
            return;
        };
        if init.diverge.is_some() {
            return;
        }
        // Each side's span and the value it gives (`None`: it never gives one).
        let mut sides: Vec<(PmSpan, Option<bool>)> = Vec::new();
        // An `if`'s condition handles the failure for the side it leads to
        // (`if let Err(e) = r`: the first; `if let Ok(_) = r`, `if r.is_ok()`: the
        // second): the value that side gives.
        let mut cond: Option<(PmSpan, Option<Option<bool>>)> = None;
        match super::strip(&init.expr) {
            Expr::Match(m) => {
                for arm in &m.arms {
                    let Some(v) = self.side_value(&arm.body) else {
                        return;
                    };
                    sides.push((arm.span(), v));
                }
            }
            Expr::If(i) => {
                let Some((_, els)) = &i.else_branch else {
                    return;
                };
                let (Some(a), Some(b)) = (self.block_flag(&i.then_branch), self.side_value(els))
                else {
                    return;
                };
                sides.push((i.then_branch.span(), a));
                sides.push((els.span(), b));
                let fails_first = match super::strip(&i.cond) {
                    Expr::Let(l) => result_pattern(&l.pat, &self.cx.index.outcomes).map(|ok| !ok),
                    c => outcome_test(c, true).map(|(ok, _)| !ok),
                };
                cond = Some((i.cond.span(), fails_first.map(|f| if f { a } else { b })));
            }
            _ => return,
        }
        let gives = |b: bool| sides.iter().any(|(_, v)| *v == Some(b));
        if !gives(true) || !gives(false) {
            return;
        }
        let bytes = |sp: PmSpan| {
            let l = self.cx.loc(sp, sp);
            (l.span.byte_start, l.span.byte_end)
        };
        let mut spans: Vec<(usize, usize, Option<Option<bool>>)> = sides
            .iter()
            .map(|(sp, v)| {
                let (s, e) = bytes(*sp);
                (s, e, Some(*v))
            })
            .collect();
        if let Some((sp, v)) = cond {
            let (s, e) = bytes(sp);
            spans.insert(0, (s, e, v));
        }
        let (mut locs, mut on) = (Vec::new(), None::<bool>);
        for ev in out[start..].iter().flat_map(|n| n.each_event()) {
            let EventKind::ErrorIgnored { .. } = ev.kind else {
                continue;
            };
            let b = ev.loc.span.byte_start;
            let Some((_, _, Some(value))) = spans.iter().find(|(s, e, _)| *s <= b && b < *e) else {
                return;
            };
            let Some(value) = value else { continue };
            if on.is_some_and(|o| o != *value) {
                return;
            }
            on = Some(*value);
            locs.push(ev.loc.clone());
        }
        // The failures give `false`: `true` says the operation succeeded.
        if let Some(failed) = on {
            self.outcome_flags
                .push((pi.ident.to_string(), locs, !failed));
        }
    }

    /// The flag value a side gives: `Some(Some(b))` for a `true`/`false` (or a
    /// block ending in one), `Some(None)` for a side that never gives a value, `None`
    /// for anything else.
    fn side_value(&self, e: &Expr) -> Option<Option<bool>> {
        match super::strip(e) {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Bool(b),
                ..
            }) => Some(Some(b.value)),
            Expr::Block(b) => self.block_flag(&b.block),
            e => super::batch::diverges(self.cx.apis, e).then_some(None),
        }
    }

    /// [`Self::side_value`] of a block: its tail's, or `Some(None)` when it ends by
    /// diverging (`continue`, `return Err(..)`, `bail!`).
    fn block_flag(&self, b: &syn::Block) -> Option<Option<bool>> {
        let apis = self.cx.apis;
        match b.stmts.last() {
            Some(Stmt::Expr(tail, None)) if !super::batch::diverges(apis, tail) => {
                self.side_value(tail)
            }
            _ => super::batch::block_diverges(apis, b).then_some(None),
        }
    }

    /// Counts a store into `v` (`v.push(..)`), wherever it is.
    pub(super) fn count_fill(&mut self, v: Option<ValueId>) {
        if let Some(v) = v {
            *self.fills.entry(v).or_default() += 1;
        }
    }

    /// `if <test of a local that recorded a failure> { .. return Err(..) } else { .. }`:
    /// on the side that returns the error the failure is propagated, on the other
    /// nothing had failed.
    pub(super) fn failure_test_edges(
        &self,
        cond: &Expr,
        then: &mut Vec<Node>,
        els: &mut Vec<Node>,
    ) {
        // `if !sent { .. }`, `sent` a flag of an operation's outcome: on the side
        // where it says the operation succeeded, it had not failed.
        for (name, locs, ok) in &self.outcome_flags {
            let Some(holds) = tests_any(cond, name) else {
                continue;
            };
            let sp = cond.span();
            let edge = Node::Event(Event {
                kind: EventKind::ErrorPropagated {
                    handled: locs.clone(),
                    err: false,
                },
                loc: self.cx.loc(sp, sp),
                text: name.clone(),
                describe: "outcome flag tested".into(),
            });
            if holds == *ok { &mut *then } else { &mut *els }.insert(0, edge);
            return;
        }
        if self.failure_records.is_empty() {
            return;
        }
        let (mut then_err, els_err) = (keeps_failure(then), keeps_failure(els));
        // `if failed > 0 { warn!(..); continue; }`: the side that leaves the message
        // as it is (no ack on it) tells the other side that nothing had failed; it
        // keeps whatever it does itself.
        let mut leaves_only = false;
        if then_err == els_err {
            let (then_leaves, els_leaves) = (leaves(then), leaves(els));
            if then_err || then_leaves == els_leaves {
                return;
            }
            then_err = then_leaves;
            leaves_only = true;
        }
        // The test holds when a failure was recorded and its side returns the error,
        // or it holds when none was and the other side returns it.
        let Some((name, _)) = self.failure_records.iter().find(|(name, _)| {
            let cleared = self.cleared_records.contains(name);
            tests_any(cond, name).map(|b| b != cleared) == Some(then_err)
        }) else {
            return;
        };
        let handled = self.records_of(name);
        let loc = self.cx.loc(cond.span(), cond.span());
        let edge = |err: bool| propagated(&handled, &loc, name, "failures recorded, tested", err);
        let (err_side, ok_side) = if then_err { (then, els) } else { (els, then) };
        // A side that keeps the failures by nacking (a loop listing the batch's failed
        // records from the one that failed on) goes on with them kept, as after a
        // nack; one that returns them gives them back.
        let returns = ends_in_error(err_side);
        let (ok, err) = (edge(false), edge(returns));
        if !leaves_only {
            err_side.insert(0, err);
        }
        ok_side.insert(0, ok);
    }

    /// A statement that uses a collection filled only on success sides (and not
    /// filled by the statement itself) is bracketed by [`EventKind::RowsGated`]: the
    /// writes in it name only the rows that succeeded.
    pub(super) fn gate_success_rows(&self, stmt: &Stmt, out: &mut Vec<Node>, start: usize) {
        if self.success_fills.is_empty() || out.len() == start {
            return;
        }
        for (v, gated, markers) in &self.success_fills {
            let name = &self.values[*v as usize].name;
            if self.fills.get(v).copied().unwrap_or(0) != *gated || self.lookup(name) != Some(*v) {
                continue;
            }
            let mut n = Names { name, found: false };
            n.visit_stmt(stmt);
            let mut r = self.recorded(|_| {});
            r.visit_stmt(stmt);
            if !n.found || r.filled.contains(name) {
                continue;
            }
            let event = |on: bool| {
                Node::Event(Event {
                    kind: EventKind::RowsGated {
                        handled: markers.clone(),
                        on,
                    },
                    loc: markers[0].clone(),
                    text: name.clone(),
                    describe: "rows that succeeded".into(),
                })
            };
            out.insert(start, event(true));
            out.push(event(false));
            return;
        }
    }
}

/// The edge of a test (or a walk) that gives back the failures handled at
/// `handled`: on `err`, they are returned; on the other side, none happened.
pub(super) fn propagated(
    handled: &[Loc],
    loc: &Loc,
    text: &str,
    describe: &str,
    err: bool,
) -> Node {
    Node::Event(Event {
        kind: EventKind::ErrorPropagated {
            handled: handled.to_vec(),
            err,
        },
        loc: loc.clone(),
        text: text.to_string(),
        describe: describe.into(),
    })
}
