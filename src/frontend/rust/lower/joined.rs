//! Joined outcomes kept in a local: `let results = join_all(items.map(|i| op(i))).await;`
//! (or a stream's futures run concurrently and collected), or taken one by one from a
//! collection of futures or a set of spawned tasks drained in a loop (`while let
//! Some(r) = set.join_next().await`). A failure among them is
//! handled there, and the code goes on, unless the code after it gives it back:
//!
//! - a test of the results (or of what is counted or collected from them) whose side
//!   returns an error or nacks (`if results.iter().any(|r| r.is_err()) { return
//!   Err(..) }`, the tests of lower/recorded.rs);
//! - a loop over them that propagates each (`for r in results { r?; }`): after it,
//!   none had failed;
//! - `?` on what they collect into (`results.into_iter().collect::<Result<Vec<_>,
//!   _>>()?`).
//!
//! Counting, logging or matching them with only logging hands the failures to no
//! one: an ack after it acks the message whose effect failed.

use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Expr, Pat, Stmt};

use super::outcome::{
    catch_all_err, ends_in_fallible, guard_ignores_error, panics_or_propagates, result_pattern,
    some_pattern, std_side,
};
use super::{strip, Lowerer};
use crate::frontend::rust::untyped;
use crate::ir::{Event, EventKind, ExitKind, Loc, Node, ValueId};

/// The plain local a method chain starts from (`results` in
/// `results.iter().filter(..).count()`), through references and parentheses.
pub(super) fn chain_root(e: &Expr) -> Option<String> {
    let mut e = strip(e);
    loop {
        match e {
            Expr::MethodCall(m) => e = strip(&m.receiver),
            Expr::Reference(r) => e = strip(&r.expr),
            Expr::Path(p) => return p.path.get_ident().map(|i| i.to_string()),
            _ => return None,
        }
    }
}

/// The nodes may end going on past them (not in a `return` or a panic on every path).
fn goes_on(nodes: &[Node]) -> bool {
    match nodes.last() {
        Some(Node::Exit(ExitKind::Return { .. } | ExitKind::Abort)) => false,
        Some(Node::Seq(inner)) => goes_on(inner),
        Some(Node::Branch(arms)) => arms.iter().any(|a| goes_on(std::slice::from_ref(a))),
        _ => true,
    }
}

/// The plain locals a pattern binds.
fn pattern_names(p: &Pat) -> Vec<String> {
    struct Names(Vec<String>);
    impl<'ast> Visit<'ast> for Names {
        fn visit_pat_ident(&mut self, pi: &'ast syn::PatIdent) {
            self.0.push(pi.ident.to_string());
            syn::visit::visit_pat_ident(self, pi);
        }
    }
    let mut n = Names(Vec::new());
    n.visit_pat(p);
    n.0
}

/// The plain locals an expression names.
fn named_locals(e: &Expr) -> Vec<String> {
    struct Names(Vec<String>);
    impl<'ast> Visit<'ast> for Names {
        fn visit_path(&mut self, p: &'ast syn::Path) {
            if let Some(i) = p.get_ident() {
                self.0.push(i.to_string());
            }
            syn::visit::visit_path(self, p);
        }
    }
    let mut n = Names(Vec::new());
    n.visit_expr(e);
    n.0
}

impl Lowerer<'_, '_> {
    /// The markers of the failures recorded in the local `name`.
    pub(super) fn records_of(&self, name: &str) -> Vec<Loc> {
        self.failure_records
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, l)| l.clone())
            .collect()
    }

    /// `let results = join_all(..).await;` (the output ends with the join of a
    /// fallible closure's futures): the failures among the joined outcomes are
    /// handled here, recorded in the local. Says whether it was.
    pub(super) fn note_joined_results(
        &mut self,
        local: &syn::Local,
        out: &mut Vec<Node>,
        start: usize,
    ) -> bool {
        let Some(init) = &local.init else {
            return false;
        };
        if init.diverge.is_some() || out.len() == start || panics_or_propagates(&init.expr) {
            return false;
        }
        let joined = matches!(
            out.last(),
            Some(Node::Event(Event {
                kind: EventKind::AwaitHandle { handle: None },
                ..
            }))
        );
        let Pat::Ident(pi) = untyped(&local.pat) else {
            return false;
        };
        if !joined || !(ends_in_fallible(out) || self.joins_tasks(&init.expr)) {
            return false;
        }
        let marker = self.error_ignored(pi.ident.span(), "joined results kept", false);
        if let Node::Event(ev) = &marker {
            self.failure_records
                .push((pi.ident.to_string(), ev.loc.clone()));
        }
        out.push(marker);
        true
    }

    /// `Ok(r)` on a spawned task's join (`match handle.await { Ok(r) => .. }`): `r`
    /// is the task's own outcome, whose failure a test of it handles.
    pub(super) fn note_task_outcome(&mut self, pat: &Pat) {
        let Pat::TupleStruct(ts) = pat else {
            return;
        };
        if ts.elems.len() != 1 || std_side(&ts.path) != Some(true) {
            return;
        }
        let Pat::Ident(pi) = &ts.elems[0] else {
            return;
        };
        if let Some(v) = pi
            .subpat
            .is_none()
            .then(|| self.lookup(&pi.ident.to_string()))
            .flatten()
        {
            self.task_outcomes.push(v);
        }
    }

    /// `r`, a binding of a spawned task's own outcome ([`Self::note_task_outcome`]).
    pub(super) fn is_task_outcome(&self, e: &Expr) -> bool {
        self.path_value(e)
            .is_some_and(|v| self.task_outcomes.contains(&v))
    }

    /// `let failed = results.iter().filter(|r| r.is_err()).count();`: a local made
    /// from one that recorded failures (a method chain from it) records them too.
    pub(super) fn note_derived_record(&mut self, local: &syn::Local) {
        let (Some(init), Pat::Ident(pi)) = (&local.init, untyped(&local.pat)) else {
            return;
        };
        if init.diverge.is_some() || !matches!(strip(&init.expr), Expr::MethodCall(_)) {
            return;
        }
        let Some(root) = chain_root(&init.expr) else {
            return;
        };
        let name = pi.ident.to_string();
        for loc in self.records_of(&root) {
            if !self
                .failure_records
                .iter()
                .any(|(n, l)| *n == name && *l == loc)
            {
                self.failure_records.push((name.clone(), loc));
            }
        }
    }

    /// `join_all(handles).await` (a join, the packs' `task_joins`, of a local holding
    /// spawned tasks' handles, `handles.push(tokio::spawn(..))`): the outcomes are
    /// the tasks', and a failed effect of one of them is among them.
    fn joins_tasks(&self, e: &Expr) -> bool {
        let Expr::Await(a) = strip(e) else {
            return false;
        };
        let Expr::Call(c) = strip(&a.base) else {
            return false;
        };
        let Expr::Path(p) = strip(&c.func) else {
            return false;
        };
        let joins = p
            .path
            .segments
            .last()
            .is_some_and(|s| self.cx.apis.std.task_joins.contains(&s.ident.to_string()));
        joins
            && c.args.len() == 1
            && chain_root(&c.args[0])
                .and_then(|n| self.lookup(&n))
                .is_some_and(|v| self.task_sets.contains(&v))
    }

    /// `for r in join_all(handles).await { .. }` (the loop's iterator, lowered at
    /// `out[start..]`, is a join of fallible operations or of spawned tasks): the
    /// failures among the joined outcomes are handled there, as in a local holding
    /// them ([`Self::note_joined_results`]). Pushes the marker and gives it.
    pub(super) fn note_joined_iter(
        &mut self,
        iter: &Expr,
        out: &mut Vec<Node>,
        start: usize,
    ) -> Option<Loc> {
        let joined = matches!(
            out.last(),
            Some(Node::Event(Event {
                kind: EventKind::AwaitHandle { handle: None },
                ..
            }))
        );
        if !joined
            || out.len() == start
            || panics_or_propagates(iter)
            || !(ends_in_fallible(&out[start..]) || self.joins_tasks(iter))
        {
            return None;
        }
        let marker = self.error_ignored(iter.span(), "joined results iterated", false);
        let Node::Event(ev) = &marker else {
            return None;
        };
        let loc = ev.loc.clone();
        out.push(marker);
        Some(loc)
    }

    /// `for r in results { .. }` over a local that recorded failures (or over
    /// `joined`, the join itself): each item bound is one of those outcomes (a `r?`
    /// in the body propagates its failure). Gives the markers of the failures iterated.
    pub(super) fn loop_over_records(
        &mut self,
        f: &syn::ExprForLoop,
        joined: Option<Loc>,
    ) -> Vec<Loc> {
        let mut locs: Vec<Loc> = joined.into_iter().collect();
        for name in named_locals(&f.expr) {
            for l in self.records_of(&name) {
                if !locs.contains(&l) {
                    locs.push(l);
                }
            }
        }
        if locs.is_empty() {
            return locs;
        }
        for name in pattern_names(&f.pat) {
            if let Some(v) = self.lookup(&name) {
                self.handled_outcomes
                    .extend(locs.iter().map(|l| (v, l.clone())));
            }
        }
        locs
    }

    /// `let mut s = stream::iter(xs).map(|x| op(x)).buffer_unordered(n);` (a chain
    /// through a method that runs a stream's futures concurrently, not awaited), or
    /// `let sends = targets.iter().map(|t| op(t));` (a lazy iterator of the
    /// closure's futures): `s` holds the futures of the closure's operation, run when
    /// it is drained or joined.
    pub(super) fn note_held_stream(&mut self, local: &syn::Local, nodes: &[Node]) {
        let (Some(init), Pat::Ident(pi)) = (&local.init, untyped(&local.pat)) else {
            return;
        };
        if init.diverge.is_some() || nodes.is_empty() || !ends_in_fallible(nodes) {
            return;
        }
        let stream_joins = &self.cx.apis.std.stream_joins;
        let mut e = strip(&init.expr);
        let mut joins = false;
        while let Expr::MethodCall(m) = e {
            // `items.iter().map(|i| op(i))`: the closure's futures, made when the
            // iterator is drained (a join of the local runs them).
            joins |= stream_joins.contains(&m.method.to_string())
                || m.args.iter().any(|a| matches!(strip(a), Expr::Closure(_)));
            e = strip(&m.receiver);
        }
        if let (true, Some(v)) = (joins, self.lookup(&pi.ident.to_string())) {
            self.held_futures.push((v, nodes.to_vec()));
        }
    }

    /// `pending.push(op(x))` (a store method given the future of a fallible
    /// operation, not awaited): `pending` holds it, run when it is drained.
    pub(super) fn note_held_future(
        &mut self,
        recv: Option<ValueId>,
        args: &[&Expr],
        nodes: &[Node],
    ) {
        let (Some(v), [arg]) = (recv, args) else {
            return;
        };
        if !matches!(strip(arg), Expr::Call(_) | Expr::MethodCall(_))
            || nodes.is_empty()
            || !ends_in_fallible(nodes)
        {
            return;
        }
        match self.held_futures.iter_mut().find(|(w, _)| *w == v) {
            Some((_, held)) => held.extend(nodes.iter().cloned()),
            None => self.held_futures.push((v, nodes.to_vec())),
        }
    }

    /// `join_all(pending)` (a join, the packs' `task_joins`, of a local holding futures
    /// of fallible operations, `pending.push(op(x))`): the operations run there, as a
    /// closure run in place, so the joined outcomes are theirs.
    pub(super) fn joined_held(&self, base: &Expr) -> Option<Node> {
        let Expr::Call(c) = strip(base) else {
            return None;
        };
        let Expr::Path(p) = strip(&c.func) else {
            return None;
        };
        let callee = p.path.segments.last()?.ident.to_string();
        if c.args.len() != 1 || !self.cx.apis.std.task_joins.contains(&callee) {
            return None;
        }
        let v = self.path_value(&c.args[0])?;
        let (_, nodes) = self.held_futures.iter().find(|(w, _)| *w == v)?;
        let sp = c.args[0].span();
        Some(Node::Closure {
            body: Box::new(Node::Seq(nodes.clone())),
            run: crate::ir::ClosureRun::Now,
            param: None,
            handle: None,
            loc: self.cx.loc(sp, sp),
            text: "held futures".into(),
        })
    }

    /// `while let Some(r) = s.next().await` (a method awaited on a local holding
    /// futures of fallible operations): each `r` is one of their outcomes, taken
    /// here. The operations run and a failure among them is handled here, recorded
    /// in the item (a `r?` in the body gives it back). Pushes the operations and the
    /// marker onto the loop's body and gives the marker. With `Some(Ok(r))`, an
    /// outcome that failed ends the loop: gives the marker of that failure, handled
    /// on the loop's exit, as well.
    pub(super) fn drain_held(
        &mut self,
        cond: &Expr,
        then: &mut Vec<Node>,
    ) -> (Vec<Loc>, Option<Node>) {
        let none = (Vec::new(), None);
        let Expr::Let(l) = cond else {
            return none;
        };
        let Pat::TupleStruct(ts) = &*l.pat else {
            return none;
        };
        let outcomes = &self.cx.index.outcomes;
        let (item, ok_only) = match ts.elems.first() {
            Some(Pat::Ident(pi)) if some_pattern(&l.pat) => (pi.ident.to_string(), None),
            Some(p @ Pat::TupleStruct(ok))
                if some_pattern(&l.pat) && result_pattern(p, outcomes) == Some(true) =>
            {
                match ok.elems.first() {
                    Some(Pat::Ident(pi)) if ok.elems.len() == 1 => {
                        (pi.ident.to_string(), Some(p.span()))
                    }
                    _ => return none,
                }
            }
            _ => return none,
        };
        let Expr::Await(a) = strip(&l.expr) else {
            return none;
        };
        let Expr::MethodCall(m) = strip(&a.base) else {
            return none;
        };
        let held = match (m.args.is_empty(), self.path_value(&m.receiver)) {
            (true, Some(v)) => self.held_futures.iter().find(|(w, _)| *w == v),
            _ => None,
        };
        match held {
            Some((_, nodes)) => then.extend(nodes.iter().cloned()),
            // `while let Some(r) = set.join_next().await` draining a set of spawned
            // tasks: the tasks finished there give the outcomes (their failures are
            // the await's, analysis/flow/events.rs `awaited`).
            None if matches!(self.task_take(&a.base), Some((_, true, _))) => {}
            None => return none,
        }
        let item_sp = match ts.elems.first() {
            Some(Pat::TupleStruct(ok)) => ok.elems[0].span(),
            _ => ts.elems[0].span(),
        };
        let marker = self.error_ignored(item_sp, "joined result taken", false);
        let Node::Event(ev) = &marker else {
            return none;
        };
        let loc = ev.loc.clone();
        then.push(marker);
        if let Some(v) = self.lookup(&item) {
            self.handled_outcomes.push((v, loc.clone()));
        }
        let ends = ok_only.map(|sp| self.error_ignored(sp, "failed outcome ends the loop", false));
        (vec![loc], ends)
    }

    /// An arm of a test of `v`, an outcome taken from joined ones, that takes every
    /// failure of it (not errors its pattern or its guard picks) and goes on (logs,
    /// counts, `continue`s): the failures handled where `v` was taken are dropped
    /// there, whatever another arm gives back (a join error returned).
    pub(super) fn note_dropped_outcome(
        &mut self,
        v: ValueId,
        (pat, guard): (&Pat, Option<&Expr>),
        body: &[Node],
    ) {
        let takes_all =
            guard.is_none_or(|g| guard_ignores_error(pat, g)) && catch_all_err(pat, self.cx.index);
        if !takes_all || !goes_on(body) {
            return;
        }
        for (w, l) in &self.handled_outcomes {
            if *w == v && !self.dropped_outcomes.contains(l) {
                self.dropped_outcomes.push(l.clone());
            }
        }
    }

    /// After a loop over recorded failures whose body propagates them (`r?`): when
    /// the loop is done, none had failed. Not when an arm in the body (one of
    /// `dropped_outcomes[dropped_from..]`) drops one of them and goes on.
    pub(super) fn after_loop_over_records(
        &self,
        locs: Vec<Loc>,
        (body, dropped_from): (&Node, usize),
        sp: proc_macro2::Span,
        out: &mut Vec<Node>,
    ) {
        let propagates = body.each_event().any(|e| {
            matches!(&e.kind, EventKind::ErrorPropagated { handled, err: true }
                if handled.iter().any(|h| locs.contains(h)))
        });
        let dropped = self.dropped_outcomes[dropped_from.min(self.dropped_outcomes.len())..]
            .iter()
            .any(|l| locs.contains(l));
        if !propagates || dropped {
            return;
        }
        out.push(Node::Event(Event {
            kind: EventKind::ErrorPropagated {
                handled: locs,
                err: false,
            },
            loc: self.cx.loc(sp, sp),
            text: self.cx.text_of(sp),
            describe: "outcomes propagated, each".into(),
        }));
    }

    /// `results.into_iter().collect::<Result<Vec<_>, _>>()?`: `?` on what a local
    /// that recorded failures collects into propagates them. Pushes the two edges
    /// and says whether it did.
    pub(super) fn propagate_records(&self, e: &Expr, out: &mut Vec<Node>) -> bool {
        if !matches!(strip(e), Expr::MethodCall(_)) {
            return false;
        }
        let Some(root) = chain_root(e) else {
            return false;
        };
        let handled = self.records_of(&root);
        if handled.is_empty() {
            return false;
        }
        let loc = self.cx.loc(e.span(), e.span());
        let edge = |err: bool| {
            super::recorded::propagated(&handled, &loc, &root, "recorded failures propagated", err)
        };
        out.push(Node::Branch(vec![
            Node::Seq(vec![edge(false)]),
            Node::Seq(vec![
                edge(true),
                Node::Exit(ExitKind::Return { err: Some(true) }),
            ]),
        ]));
        true
    }
}

/// A `break` out of the innermost loop, with no label or value, alone in its block.
fn is_bare_break(e: &Expr) -> bool {
    match strip(e) {
        Expr::Break(b) => b.label.is_none() && b.expr.is_none(),
        Expr::Block(b) => match b.block.stmts.as_slice() {
            [Stmt::Expr(e, _)] => is_bare_break(e),
            _ => false,
        },
        _ => false,
    }
}

impl Lowerer<'_, '_> {
    /// `s.next().await`, `set.join_next().await`: the next outcome taken from a local
    /// holding futures of fallible operations or spawned tasks.
    fn takes_held(&self, e: &Expr) -> bool {
        let Expr::Await(a) = strip(e) else {
            return false;
        };
        let Expr::MethodCall(m) = strip(&a.base) else {
            return false;
        };
        let Some(v) = self.path_value(&m.receiver).filter(|_| m.args.is_empty()) else {
            return false;
        };
        self.held_futures.iter().any(|(w, _)| *w == v)
            || (self.cx.apis.std.task_takes.contains(&m.method.to_string())
                && self.set_pushes.iter().any(|(s, _, _)| *s == v))
    }

    /// `loop { match s.next().await { Some(r) => .., None => break } .. }`, or `loop {
    /// let Some(r) = s.next().await else { break }; .. }`, taking the outcomes held in
    /// `s`: the same loop as `while let Some(r) = s.next().await { match r { .. } .. }`
    /// (the arms without their `Some(..)`), which [`Self::drain_held`] reads.
    pub(super) fn drain_loop_as_while(&self, lp: &syn::ExprLoop) -> Option<syn::ExprWhile> {
        let (first, rest) = lp.body.stmts.split_first()?;
        let (pat, scrutinee, head) = match first {
            Stmt::Local(l) => {
                let init = l.init.as_ref()?;
                let (_, els) = init.diverge.as_ref()?;
                if !some_pattern(&l.pat) || !is_bare_break(els) {
                    return None;
                }
                (l.pat.clone(), (*init.expr).clone(), None)
            }
            Stmt::Expr(Expr::Match(m), semi) => {
                let sp = m.expr.span();
                let item = syn::Ident::new("__taken", sp);
                let mut some = None;
                let mut arms = Vec::new();
                let mut ends = 0;
                for arm in &m.arms {
                    match &arm.pat {
                        Pat::TupleStruct(ts) if some_pattern(&arm.pat) => {
                            let mut peeled = arm.clone();
                            peeled.pat = ts.elems[0].clone();
                            arms.push(peeled);
                            let mut whole = ts.clone();
                            whole.elems = std::iter::once(Pat::Ident(syn::PatIdent {
                                attrs: Vec::new(),
                                by_ref: None,
                                mutability: None,
                                ident: item.clone(),
                                subpat: None,
                            }))
                            .collect();
                            some = Some(Pat::TupleStruct(whole));
                        }
                        // `None => break`: the set is empty.
                        Pat::Ident(pi)
                            if pi.subpat.is_none()
                                && arm.guard.is_none()
                                && is_bare_break(&arm.body) =>
                        {
                            ends += 1;
                        }
                        _ => return None,
                    }
                }
                if ends != 1 {
                    return None;
                }
                let head = Expr::Match(syn::ExprMatch {
                    attrs: m.attrs.clone(),
                    match_token: m.match_token,
                    expr: Box::new(Expr::Path(syn::ExprPath {
                        attrs: Vec::new(),
                        qself: None,
                        path: syn::Path::from(item),
                    })),
                    brace_token: m.brace_token,
                    arms,
                });
                (some?, (*m.expr).clone(), Some(Stmt::Expr(head, *semi)))
            }
            _ => return None,
        };
        if !self.takes_held(&scrutinee) {
            return None;
        }
        let sp = scrutinee.span();
        let stmts = head.into_iter().chain(rest.iter().cloned()).collect();
        Some(syn::ExprWhile {
            attrs: lp.attrs.clone(),
            label: lp.label.clone(),
            while_token: syn::Token![while](lp.loop_token.span),
            cond: Box::new(Expr::Let(syn::ExprLet {
                attrs: Vec::new(),
                let_token: syn::Token![let](sp),
                pat: Box::new(pat),
                eq_token: syn::Token![=](sp),
                expr: Box::new(scrutinee),
            })),
            body: syn::Block {
                brace_token: lp.body.brace_token,
                stmts,
            },
        })
    }
}
