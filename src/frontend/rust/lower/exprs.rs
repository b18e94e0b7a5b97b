//! Expressions: the dispatch over syn's expression kinds, paths and fields.

use std::collections::HashMap;

use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Expr, Pat};

use super::outcome::{
    catch_all_binding, catch_all_err, ends_in_fallible, ends_in_task_outcome, guard_ignores_error,
    hides_failure, is_call_chain, result_pattern, task_outcome_pattern,
};
use super::recorded::keeps_failure;
use super::spans::expr_span;
use super::{
    ends_in_call, failed_then_return, is_branching, is_message_role, result_kind, short_text,
    strip, tail_value, Info, Lowerer,
};
use crate::frontend::rust::types::{bounded_generic, impl_arg};
use crate::ir::{ClosureRun, Event, EventKind, ExitKind, Node, ValueId};

/// The terminal a builder awaited as it is reaches (a pack's `terminals`).
const AWAIT_TERMINAL: &str = "await";

impl<'a, 'b> Lowerer<'a, 'b> {
    pub(super) fn expr(&mut self, e: &Expr, out: &mut Vec<Node>) -> Info {
        match e {
            Expr::Path(p) => self.path_expr(&p.path),
            Expr::Lit(l) => match &l.lit {
                syn::Lit::Str(s) => Info {
                    str_lit: Some(s.value()),
                    constant: true,
                    ..Info::default()
                },
                _ => Info {
                    constant: true,
                    ..Info::default()
                },
            },
            Expr::Reference(r) => {
                let info = self.expr(&r.expr, out);
                if r.mutability.is_some() {
                    self.lend_builder(&info);
                }
                info
            }
            Expr::Paren(p) => self.expr(&p.expr, out),
            Expr::Group(g) => self.expr(&g.expr, out),
            Expr::Unary(u) => self.expr(&u.expr, out),
            Expr::Cast(c) => self.expr(&c.expr, out),
            Expr::Await(a) => self.await_expr(a, out),
            Expr::Try(t) => self.try_expr(t, out),
            Expr::Field(f) => {
                let base = self.expr(&f.base, out);
                let name = match &f.member {
                    syn::Member::Named(id) => id.to_string(),
                    syn::Member::Unnamed(i) => i.index.to_string(),
                };
                self.field(&base, &name)
            }
            Expr::MethodCall(mc) => {
                let info = self.method_call(mc, out);
                self.batch_keep(mc, out);
                info
            }
            Expr::Call(c) => {
                let info = self.call(c, out);
                self.batch_ack(e, out);
                info
            }
            Expr::Macro(m) => self.mac(&m.mac, out),
            Expr::Block(b) => self.block_value(&b.block, out),
            Expr::Unsafe(b) => self.block_value(&b.block, out),
            Expr::Const(b) => self.block_value(&b.block, out),
            Expr::Async(a) => self.async_block(a, out),
            Expr::Closure(c) => {
                self.closure(c, ClosureRun::Now, None, out);
                Info::default()
            }
            Expr::If(i) => self.if_expr(i, out),
            Expr::Match(m) => self.match_expr(m, out),
            Expr::While(_) | Expr::ForLoop(_) | Expr::Loop(_) => self.loop_expr(e, out),
            Expr::Break(b) => {
                if let Some(v) = &b.expr {
                    self.expr(v, out);
                }
                let label = self.find_label(b.label.as_ref());
                out.push(Node::Exit(ExitKind::Break { label }));
                Info::default()
            }
            Expr::Continue(c) => {
                let label = self.find_label(c.label.as_ref());
                out.push(Node::Exit(ExitKind::Continue { label }));
                Info::default()
            }
            Expr::Return(r) => {
                let err = (r.expr.as_deref()).and_then(|v| result_kind(v, &self.cx.index.outcomes));
                if let Some(v) = &r.expr {
                    let was = self.in_return;
                    self.in_return = self.closure_depth == 0;
                    let start = out.len();
                    let info = self.expr(v, out);
                    self.note_returned_client(&info, false);
                    self.in_return = was;
                    if self.closure_depth == 0 && !self.propagate_outcome(v, out) {
                        // `return h(p).await`: the callee's failure is the function's.
                        self.returned_call(tail_value(v), start, out);
                    }
                    self.note_false_returned(v, out);
                }
                out.push(Node::Exit(ExitKind::Return { err }));
                Info::default()
            }
            Expr::Let(l) => {
                // Only reached outside `if`/`while` conditions (let chains inside `&&`).
                let info = self.expr(&l.expr, out);
                self.bind_pattern(&l.pat, &info);
                Info::default()
            }
            Expr::Assign(a) => self.assign_expr(a, out),
            Expr::Binary(b) => {
                let l = self.expr(&b.left, out);
                let r = self.expr(&b.right, out);
                let mut info = Info::default();
                info.absorb(&l);
                info.absorb(&r);
                // `id.to_string() + "-" + &stamp`: a string concatenated with a clock
                // reading is an id, as one `format!`ted is.
                // (Not a calendar bucket: `"p-".to_string() + &now.format("%Y").to_string()`.)
                let plain = |e: &Expr| super::calls::plain_chain(e);
                if matches!(b.op, syn::BinOp::Add(_))
                    && info.fresh.is_none()
                    && plain(&b.left)
                    && plain(&b.right)
                    && (l.str_lit.is_some()
                        || r.str_lit.is_some()
                        || self.renders(&b.left)
                        || self.renders(&b.right))
                {
                    info.fresh = self.clock_in(&info.mentions);
                }
                info
            }
            Expr::Index(i) => {
                let base = self.expr(&i.expr, out);
                self.expr(&i.index, out);
                let mut info = self.derived(&base);
                // An element of a collection of a crate type (`table[topic]`) is one.
                if base.outside {
                    info.crate_type = base.crate_type;
                }
                info
            }
            Expr::Tuple(t) => self.tuple_expr(t, out),
            Expr::Array(a) => self.collect(a.elems.iter(), out),
            Expr::Struct(s) => self.struct_expr(s, out),
            Expr::Range(r) => {
                let mut info = Info::default();
                for e in r.start.iter().chain(r.end.iter()) {
                    let i = self.expr(e, out);
                    info.absorb(&i);
                }
                info
            }
            Expr::Repeat(r) => self.expr(&r.expr, out),
            Expr::TryBlock(t) => self.try_block(t, out),
            _ => Info::default(),
        }
    }

    /// `x.await`: awaiting a deferred operation runs it here; awaiting a task handle finishes its tasks.
    fn await_expr(&mut self, a: &syn::ExprAwait, out: &mut Vec<Node>) -> Info {
        let deferred = self.deferred_of(&a.base);
        let ran = deferred.is_some();
        out.extend(deferred);
        let info = self.expr(&a.base, out);
        // A builder awaited as it is, when awaiting is one of its terminals (a
        // MongoDB write given no session: it commits by itself).
        if let Some(b) = info
            .builder
            .as_ref()
            .filter(|b| b.spec.terminals.iter().any(|t| t == AWAIT_TERMINAL))
        {
            let b = self.current_builder(b.clone());
            return self.builder_event(*b, AWAIT_TERMINAL, &[], out);
        }
        // Awaiting an async block held in a binding runs it; it joins no task.
        // `set.join_next().await` once, outside a loop draining the set, on a set
        // that may hold more than one task: the others may still run.
        let one_of_many = matches!(self.task_take(&a.base), Some((_, false, true)));
        if let Some(handle) = self
            .awaited_tasks(&a.base, &info)
            .filter(|_| !ran && !one_of_many)
        {
            if handle.is_none() {
                out.extend(self.joined_held(&a.base));
            }
            let loc = self.cx.loc(expr_span(&a.base), a.await_token.span());
            out.push(Node::Event(Event {
                kind: EventKind::AwaitHandle { handle },
                loc,
                text: format!("{}.await", short_text(&self.cx.text_of(expr_span(&a.base)))),
                describe: "task awaited".into(),
            }));
        }
        info
    }

    /// `x?`: the operation's error edge returns; on it the operation (a commit, write,
    /// publish, external call or ack) failed, so it did not happen there.
    fn try_expr(&mut self, t: &syn::ExprTry, out: &mut Vec<Node>) -> Info {
        let start = out.len();
        let info = self.expr(&t.expr, out);
        // `res?` after `if let Err(e) = &res { log }`.
        if self.propagate_outcome(&t.expr, out) || self.propagate_records(&t.expr, out) {
            return info;
        }
        // `op.await.map_err(|e| ..)?`: the adapters keep the operation's
        // failure; its error edge is the `?`'s.
        self.keep_last_effect(&t.expr, start, out);
        if let Some(Node::Event(Event {
            kind: EventKind::Call(c),
            ..
        })) = out.last_mut()
        {
            c.propagates_err = true;
        }
        // `tx.commit().await?`, `query.execute(..).await?`, `consumer.commit_message(..)?`:
        // on the error edge the operation failed, so it did not happen there.
        let failed_here = matches!(
            out.last(),
            Some(Node::Event(Event {
                kind: EventKind::Commit { .. }
                    | EventKind::Write { .. }
                    | EventKind::Publish { .. }
                    | EventKind::External { .. }
                    | EventKind::Ack { .. },
                ..
            }))
        );
        // A commit that also acks (sqlxmq `complete_with_transaction`): both fail
        // together, and the error edge says the commit failed.
        let acked_commit = out.len() >= 2
            && matches!(
                (&out[out.len() - 2], &out[out.len() - 1]),
                (
                    Node::Event(Event { kind: EventKind::Commit { .. }, loc: a, .. }),
                    Node::Event(Event { kind: EventKind::Ack { .. }, loc: b, .. }),
                ) if a == b
            );
        if acked_commit {
            let ack = out.pop().unwrap_or(Node::Seq(vec![]));
            let commit = out.pop().unwrap_or(Node::Seq(vec![]));
            let err = match &commit {
                Node::Event(ev) => failed_then_return(ev),
                _ => Node::Exit(ExitKind::Return { err: Some(true) }),
            };
            out.push(Node::Branch(vec![Node::Seq(vec![commit, ack]), err]));
        } else if failed_here {
            let commit = out.pop().unwrap_or(Node::Seq(vec![]));
            // The error edge says what failed, except for an ack (for acks
            // after a failure).
            let err = match &commit {
                Node::Event(ev) if !matches!(ev.kind, EventKind::Ack { .. }) => {
                    failed_then_return(ev)
                }
                _ => Node::Exit(ExitKind::Return { err: Some(true) }),
            };
            out.push(Node::Branch(vec![Node::Seq(vec![commit]), err]));
        } else {
            out.push(Node::Branch(vec![
                Node::Seq(vec![]),
                Node::Exit(ExitKind::Return { err: Some(true) }),
            ]));
        }
        info
    }

    /// `async { .. }`: a closure run here.
    fn async_block(&mut self, a: &syn::ExprAsync, out: &mut Vec<Node>) -> Info {
        let mut body = Vec::new();
        self.block_value(&a.block, &mut body);
        let sp = a.async_token.span.join(a.block.brace_token.span.close());
        let sp = sp
            .filter(|_| a.attrs.is_empty())
            .unwrap_or_else(|| a.span());
        let loc = self.cx.loc(sp, sp);
        out.push(Node::Closure {
            body: Box::new(Node::Seq(body)),
            run: ClosureRun::Now,
            param: None,
            handle: None,
            loc,
            text: "async block".into(),
        });
        Info::default()
    }

    /// `match`: the arms as branches; a match on an operation's result splits its `Ok` and
    /// `Err` arms by outcome, and arms that take every error handle it.
    fn match_expr(&mut self, m: &syn::ExprMatch, out: &mut Vec<Node>) -> Info {
        let arms_return = std::mem::take(&mut self.tail_arms);
        let mut scr_nodes = Vec::new();
        let scrut = self.expr(&m.expr, &mut scr_nodes);
        let mut arms = Vec::new();
        let mut kinds = Vec::new();
        // The roles the arms that do not diverge evaluate to.
        let mut values: Vec<(Option<String>, Option<String>)> = Vec::new();
        // The rows those values are taken from (`Some(b) => b` over a row's field).
        let mut rows = Vec::new();
        // `match handle.await { .. }`: the arms take a spawned task's outcome.
        let task_join = is_call_chain(&m.expr)
            && matches!(
                scr_nodes.last(),
                Some(Node::Event(Event {
                    kind: EventKind::AwaitHandle { .. },
                    ..
                }))
            );
        for arm in &m.arms {
            self.scopes.push(HashMap::default());
            self.bind_pattern(&arm.pat, &scrut);
            if task_join {
                self.note_task_outcome(&arm.pat);
            }
            let mut body = Vec::new();
            if let Some((_, g)) = &arm.guard {
                self.expr(g, &mut body);
            }
            self.tail_arms = arms_return && is_branching(&arm.body);
            let v = self.expr(&arm.body, &mut body);
            self.tail_arms = false;
            self.arm_returns(arms_return, &arm.body, &mut body);
            if !matches!(body.last(), Some(Node::Exit(_))) {
                super::add_rows(&mut rows, &self.rows_of(&v));
                values.push((v.role, v.crate_type));
            }
            self.scopes.pop();
            arms.push(Node::Seq(body));
            kinds.push(result_pattern(&arm.pat, &self.cx.index.outcomes));
        }
        // `let mailer = match cfg.tls { .. => SmtpTransport::relay(h)?.build(),
        // .. => SmtpTransport::unencrypted_localhost() }`: every arm that yields a
        // value yields the same kind of value.
        let agreed = match values.split_first() {
            // Messages keep their own tracking (a `match` over a receive).
            Some((first, rest))
                if (first.0.is_some() || first.1.is_some())
                    && !first.0.as_deref().is_some_and(is_message_role) =>
            {
                rest.iter().all(|v| v == first).then(|| first.clone())
            }
            _ => None,
        };
        // `match confirm.await { Ok(Confirmation::Ack(_)) => …, Ok(other) => … }`.
        let confirmation = self.confirmation_arms(m, &scr_nodes, &mut arms, &mut kinds);
        // `match handle(..).await { Ok(..) => …, Err(..) => … }`.
        let bound_v = self.bound_outcome_value(&m.expr, out);
        let bound = bound_v.is_some();
        // `match ack { Ok(_) => …, Err(e) => … }`, `ack` a value whose error was
        // handled when it was made (`let ack = match op { .., Err(e) => Err(e) }`):
        // on its `Ok` arms the operation did not fail.
        // On an arm that takes every error and gives it back (returns an error,
        // nacks: `Err(e) => return Err(e.into())`), the failure handled before is
        // propagated after all.
        if let Some(v) = self.path_value(&m.expr).filter(|_| !bound) {
            // On a joined task's outcome (an arm looks into it, `Ok(Err(e))`), the
            // arms that take the task's own failure; else those taking every error.
            let task = m.arms.iter().any(|a| task_outcome_pattern(&a.pat));
            for ((arm, k), a) in arms.iter_mut().zip(&kinds).zip(&m.arms) {
                let Node::Seq(body) = arm else { continue };
                let gives_back = *k == Some(false)
                    && a.guard.is_none()
                    && catch_all_err(&a.pat, self.cx.index)
                    && keeps_failure(body);
                let own = !task || task_outcome_pattern(&a.pat);
                if *k == Some(false) && own && !gives_back {
                    self.note_dropped_outcome(v, (&a.pat, a.guard.as_ref().map(|g| &*g.1)), body);
                }
                self.taken_outcome_arm(v, *k, gives_back, a, &m.expr, body);
            }
        }
        // The arms that take every error handle it and go on (an ack after a
        // failure): `Err(e)` (not one error variant, nor `Err(e) if …` testing the
        // error; a guard that does not look at it, `Err(e) if attempts >= 3`, still
        // takes every error on its path), or `_` beside an `Ok` arm; and a task's
        // outcome `match handle.await { Ok(Ok(_)) => .., Ok(Err(e)) => .., Err(e) => .. }`.
        let fallible = (is_call_chain(&m.expr)
            && (ends_in_fallible(&scr_nodes)
                || ends_in_task_outcome(&scr_nodes, m.arms.iter().map(|a| &a.pat))))
            || (bound && ends_in_fallible(out))
            || self.is_task_outcome(&m.expr);
        if fallible && !confirmation && kinds.contains(&Some(true)) {
            let mut markers = Vec::new();
            for (arm, body) in m.arms.iter().zip(arms.iter_mut()) {
                let takes_all = arm
                    .guard
                    .as_ref()
                    .is_none_or(|(_, g)| guard_ignores_error(&arm.pat, g))
                    && (catch_all_err(&arm.pat, self.cx.index) || catch_all_binding(&arm.pat));
                if let (true, Node::Seq(v)) = (takes_all, body) {
                    v.insert(
                        0,
                        self.error_ignored(arm.pat.span(), "Err(..) =>", !hides_failure(&arm.body)),
                    );
                    if !is_call_chain(&m.expr) {
                        self.note_handled_outcome(bound_v, v.first());
                    }
                    self.note_failure_recorded(v.first(), |r| r.visit_expr(&arm.body));
                    if let Some(Node::Event(ev)) = v.first() {
                        markers.push(ev.loc.clone());
                    }
                    if result_kind(tail_value(&arm.body), &self.cx.index.outcomes) == Some(true) {
                        if let Some(Node::Event(ev)) = v.first() {
                            self.err_valued.push(ev.loc.clone());
                        }
                    }
                }
            }
            for (arm, k) in m.arms.iter().zip(&kinds) {
                if *k == Some(true) {
                    self.note_success_filled(&markers, Some(arm), |r| r.visit_expr(&arm.body));
                }
            }
        }
        branch_by_outcome(m, arms, kinds, scr_nodes, bound, out);
        let (role, crate_type) = agreed.unwrap_or_default();
        Info {
            role,
            crate_type,
            rows,
            ..Info::default()
        }
    }

    /// `x = ..`: re-assigning a name rebinds it in the scope that holds it.
    fn assign_expr(&mut self, a: &syn::ExprAssign, out: &mut Vec<Node>) -> Info {
        let rhs = self.expr(&a.right, out);
        if let Expr::Path(p) = strip(&a.left) {
            if let Some(id) = p.path.get_ident() {
                let name = id.to_string();
                let v = match rhs.value {
                    Some(v) => v,
                    None => self.value_from(&name, &rhs),
                };
                // Re-assignment rebinds the name in the scope that holds it.
                if let Some(scope) = self.scopes.iter_mut().rev().find(|s| s.contains_key(&name)) {
                    scope.insert(name, v);
                }
                return Info::default();
            }
        }
        self.expr(&a.left, out);
        Info::default()
    }

    /// A struct literal: its fields' values, and its type when it is one of the crate's.
    fn struct_expr(&mut self, s: &syn::ExprStruct, out: &mut Vec<Node>) -> Info {
        self.link_chan_fields(s);
        let mut info = Info::default();
        for f in &s.fields {
            let i = self.arg(&f.expr, out);
            if let (syn::Member::Named(n), Some(v)) = (&f.member, i.value) {
                info.field_values.push((n.to_string(), v));
            }
            if let (syn::Member::Named(n), false) = (&f.member, i.fresh_blocked) {
                let vals = i.value.iter().chain(&i.mentions).copied().collect();
                info.parts.push((n.to_string(), vals));
            }
            info.absorb(&i);
        }
        if let Some(rest) = &s.rest {
            let outer = std::mem::replace(&mut self.in_struct_rest, true);
            let r = self.expr(rest, out);
            self.in_struct_rest = outer;
            info.absorb(&r);
        }
        info.idents
            .extend(s.path.segments.iter().map(|s| s.ident.to_string()));
        self.ack_setting_in_struct(s);
        self.queue_lifetime_in_struct(s);
        if let Some(last) = s.path.segments.last() {
            let name = last.ident.to_string();
            if self.cx.index.type_names.contains(&name) {
                info.crate_type = Some(name);
            } else if name == "Self" {
                info.crate_type.clone_from(&self.self_type);
            }
        }
        info
    }

    /// `try { .. }`: a closure run here.
    fn try_block(&mut self, t: &syn::ExprTryBlock, out: &mut Vec<Node>) -> Info {
        let mut body = Vec::new();
        self.block_value(&t.block, &mut body);
        out.push(Node::Closure {
            body: Box::new(Node::Seq(body)),
            run: ClosureRun::Now,
            param: None,
            handle: None,
            loc: self.cx.loc(t.span(), t.span()),
            text: "try block".into(),
        });
        Info::default()
    }

    /// `(a, b)`: what its elements mention, and each element's own (`let (x, y) =
    /// (a, b);` binds each name to its element).
    fn tuple_expr(&mut self, t: &syn::ExprTuple, out: &mut Vec<Node>) -> Info {
        let mut info = Info::default();
        for e in &t.elems {
            let i = self.arg(e, out);
            info.absorb(&i);
            info.elems.push(i);
        }
        info
    }

    pub(super) fn collect<'e>(
        &mut self,
        es: impl Iterator<Item = &'e Expr>,
        out: &mut Vec<Node>,
    ) -> Info {
        let mut info = Info::default();
        for e in es {
            let i = self.arg(e, out);
            info.absorb(&i);
        }
        info
    }

    pub(super) fn path_expr(&mut self, path: &syn::Path) -> Info {
        if let Some(id) = path.get_ident() {
            let name = id.to_string();
            if let Some(v) = self.lookup(&name) {
                return self.value_info(v);
            }
            if let Some(s) = self.cx.const_value(&name) {
                return Info {
                    str_lit: Some(s.clone()),
                    idents: vec![name],
                    constant: true,
                    ..Info::default()
                };
            }
            return Info {
                crate_type: self.unit_struct(path),
                idents: vec![name],
                ..Info::default()
            };
        }
        let idents: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        let mut info = Info {
            crate_type: self.unit_struct(path),
            ..Info::default()
        };
        if let Some(last) = idents.last() {
            if let Some(s) = self.cx.const_value(last) {
                info.str_lit = Some(s.clone());
            }
        }
        info.idents = idents;
        info
    }

    /// A path expression naming one of the crate's structs (`Deposit`, `ops::Deposit`):
    /// a unit struct's value, whose methods are its type's (`Deposit.apply(..)`). A
    /// path through a type (`Event::Deposit`) names a variant, not the struct.
    fn unit_struct(&self, path: &syn::Path) -> Option<String> {
        let last = path.segments.last()?.ident.to_string();
        let index = self.cx.index;
        let through_type = path.segments.iter().rev().skip(1).any(|s| {
            let s = s.ident.to_string();
            s.starts_with(|c: char| c.is_ascii_uppercase()) || s == "Self"
        });
        if through_type || !index.type_names.contains(&last) || index.traits.contains(&last) {
            return None;
        }
        let ty = syn::Type::Path(syn::TypePath {
            qself: None,
            path: path.clone(),
        });
        let ti = self.type_info(&ty);
        ti.crate_type.filter(|_| !ti.outside && ti.role.is_none())
    }

    pub(super) fn field(&mut self, base: &Info, name: &str) -> Info {
        let Some(b) = base.value else {
            return self.derived(base);
        };
        // `&self.insert_sql`, set by the type's constructor.
        let text = self.values[b as usize]
            .crate_type
            .as_deref()
            .and_then(|t| self.cx.field_text(t, name));
        // `self.processed`, a collection the type's constructor made naming its table.
        let table = self.values[b as usize]
            .crate_type
            .as_deref()
            .and_then(|t| self.cx.field_table(t, name))
            .map(|t| crate::ir::SqlFacts {
                verb: super::events::TABLE_VERB.into(),
                tables: vec![t],
                ..crate::ir::SqlFacts::unknown()
            });
        if let Some(&v) = self.fields.get(&(b, name.to_string())) {
            let mut info = self.value_info(v);
            info.str_lit = text;
            if info.sql.is_none() {
                info.sql = table;
            }
            return info;
        }
        let base_val = self.values[b as usize].clone();
        let mut ti = base_val
            .crate_type
            .as_ref()
            .and_then(|t| self.cx.fields_of(t))
            .and_then(|fs| fs.get(name))
            .cloned()
            .unwrap_or_default();
        // `self.mailer` with `mailer: T` and `impl<M: AsyncTransport> Notifier<M>`.
        if let (Some(i), Some(imp)) = (ti.generic, self.impl_of) {
            if base_val.crate_type.is_some() && base_val.crate_type == self.self_type {
                // A bounded parameter of the impl, or a concrete type
                // (`impl Notifier<AsyncSmtpTransport<Tokio1Executor>>`).
                if let Some(b) = impl_arg(imp, i).and_then(|arg| {
                    bounded_generic(
                        self.cx.apis,
                        self.cx.uses,
                        &self.cx.index.traits,
                        &imp.generics,
                        arg,
                    )
                    .or_else(|| {
                        Some(self.type_info(arg))
                            .filter(|t| t.role.is_some() || t.crate_type.is_some())
                    })
                }) {
                    ti = b;
                }
            }
        }
        let chan_field = matches!(ti.role.as_deref(), Some("chan.rx" | "chan.tx"))
            .then_some(base_val.crate_type.as_ref())
            .flatten()
            .map(|t| format!("F:{t}.{name}"));
        let v = self.new_value(&format!("{}.{}", base_val.name, name), ti);
        self.values[v as usize].chan.extend(chan_field);
        self.values[v as usize].msg_root = base_val.msg_root;
        self.values[v as usize].fresh = base_val.fresh.clone();
        self.values[v as usize].rows = base_val.rows.clone();
        self.fields.insert((b, name.to_string()), v);
        self.note_source(v, b, name);
        if table.is_some() {
            self.values[v as usize].sql.clone_from(&table);
        }
        let mut info = self.value_info(v);
        info.mentions.push(b);
        info.str_lit = text;
        info
    }
}

impl Lowerer<'_, '_> {
    /// Whether `e` renders a value as text (`x.to_string()`, `&x.to_string()`; the
    /// runtime pack's `renders`).
    fn renders(&self, e: &Expr) -> bool {
        let mut e = strip(e);
        while let Expr::Reference(r) = e {
            e = strip(&r.expr);
        }
        // (The rendered value reached through methods of no argument only: not a
        // calendar bucket, `now.format("%Y-%m").to_string()`.)
        matches!(e, Expr::MethodCall(m) if m.args.is_empty()
            && self.cx.apis.std.renders.contains(&m.method.to_string())
            && super::calls::plain_chain(&m.receiver))
    }

    /// `e` is an operation seen through methods that keep its failure (`map_err`,
    /// `context`, `map`; the packs' `results.keeps`): moves the operation's event
    /// (the last effect lowered since `start`) after what the adapters lowered, so
    /// that the `?` or the match on `e` sees it last.
    pub(super) fn keep_last_effect(&self, e: &Expr, start: usize, out: &mut [Node]) {
        let keeps = &self.cx.apis.std.results.keeps;
        let mut e = e;
        let mut adapted = false;
        while let Expr::MethodCall(mc) = e {
            if !keeps.iter().any(|k| mc.method == k) {
                break;
            }
            adapted = true;
            e = &mc.receiver;
        }
        if !adapted || out.len() <= start {
            return;
        }
        let is_effect = |n: &Node| {
            matches!(
                n,
                Node::Event(Event {
                    kind: EventKind::Commit { .. }
                        | EventKind::Write { .. }
                        | EventKind::Publish { .. }
                        | EventKind::External { .. },
                    ..
                })
            )
        };
        let Some(i) = out[start..].iter().rposition(is_effect).map(|i| i + start) else {
            return;
        };
        // Only closures (the adapters' own) after it, none with an event of its own.
        if out[i + 1..]
            .iter()
            .any(|n| !matches!(n, Node::Closure { .. }) || !n.events().is_empty())
        {
            return;
        }
        out[i..].rotate_left(1);
    }
}

impl Lowerer<'_, '_> {
    /// An arm of `match v { .. }`, `v` an outcome whose error was handled when it was
    /// taken: on an `Ok` arm (or one giving every error back) the edge saying so; an
    /// `Err(e) => failed = true` arm records the failure (as `if let Err(e) = v` does).
    fn taken_outcome_arm(
        &mut self,
        v: ValueId,
        k: Option<bool>,
        gives_back: bool,
        a: &syn::Arm,
        scrutinee: &Expr,
        body: &mut Vec<Node>,
    ) {
        if k == Some(true) || gives_back {
            if let Some(edge) = self.outcome_edge(v, gives_back, scrutinee) {
                // A success side fills collections with the items that succeeded.
                if let (
                    false,
                    Node::Event(Event {
                        kind: EventKind::ErrorPropagated { handled, .. },
                        ..
                    }),
                ) = (gives_back, &edge)
                {
                    let handled = handled.clone();
                    self.note_success_filled(&handled, Some(a), |r| r.visit_expr(&a.body));
                }
                body.insert(0, edge);
            }
        }
        if k == Some(false) && a.guard.is_none() {
            self.note_outcome_recorded(v, |r| r.visit_expr(&a.body));
        }
    }
}

/// The arms of a `match`: split by the outcome they take (a `ResultBranch`) when
/// every arm takes one side of the scrutinee's result, else a plain branch.
fn branch_by_outcome(
    m: &syn::ExprMatch,
    arms: Vec<Node>,
    kinds: Vec<Option<bool>>,
    scr_nodes: Vec<Node>,
    bound: bool,
    out: &mut Vec<Node>,
) {
    let by_outcome = ((is_call_chain(&m.expr) && ends_in_call(&scr_nodes)) || bound)
        && kinds.contains(&Some(true))
        && kinds.contains(&Some(false))
        && m.arms
            .iter()
            .zip(&kinds)
            .all(|(a, k)| k.is_some() || matches!(a.pat, Pat::Wild(_)));
    if by_outcome {
        let (mut ok, mut err) = (Vec::new(), Vec::new());
        for (arm, k) in arms.into_iter().zip(kinds) {
            match k {
                Some(true) => ok.push(arm),
                Some(false) => err.push(arm),
                None => {
                    // A `_` arm: its failure marker is for the error side.
                    let mut on_ok = arm.clone();
                    if let Node::Seq(v) = &mut on_ok {
                        if matches!(
                            v.first(),
                            Some(Node::Event(Event {
                                kind: EventKind::ErrorIgnored { .. },
                                ..
                            }))
                        ) {
                            v.remove(0);
                        }
                    }
                    ok.push(on_ok);
                    err.push(arm);
                }
            }
        }
        out.push(Node::ResultBranch {
            scrutinee: Box::new(Node::Seq(scr_nodes)),
            ok: Box::new(Node::Branch(ok)),
            err: Box::new(Node::Branch(err)),
        });
    } else {
        out.extend(scr_nodes);
        out.push(Node::Branch(arms));
    }
}
