//! Control flow: loops (and which are retries), `if`, labels, closures and the
//! closures and tasks passed as arguments.

use std::collections::HashMap;

use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Expr, Stmt};

use super::outcome::{
    block_hides_failure, catch_all_err, ends_in_fallible, ends_in_task_outcome, hides_failure,
    is_call_chain, outcome_receiver, outcome_test, result_pattern, task_outcome_pattern,
};
use super::recorded::keeps_failure;
use super::spans::{closure_span, expr_span};
use super::{
    contains_event, contains_receive, ends_in_call, is_box_pin, is_branching, may_poll, pat_name,
    strip, Info, Lowerer, RetryText,
};
use crate::apis::Role;
use crate::frontend::rust::TypeInfo;
use crate::ir::{
    ClosureRun, Event, EventKind, ExitKind, IdFlow, Node, PassIdFlow, PollLoop, ValueId,
};

impl<'a, 'b> Lowerer<'a, 'b> {
    /// A loop; a retry loop (one that re-runs a failing step: its text names attempts,
    /// retries or backoff and it handles an error) is a retry scope (for fresh ids per
    /// attempt).
    pub(super) fn loop_expr(&mut self, e: &Expr, out: &mut Vec<Node>) -> Info {
        let retry = self.is_retry_loop(e);
        // A loop that may be a relay's poll loop (outside any retry): it is one if a
        // pass reads rows and publishes them (decided once it is lowered).
        let poll = !retry && self.retry_scopes.is_empty() && may_poll(e);
        if retry || poll {
            self.next_scope += 1;
            let sp = expr_span(e);
            let loc = self.cx.loc(sp, sp);
            let text = self.cx.text_of(sp).chars().take(40).collect();
            self.retry_scopes.push((self.next_scope, loc, text));
            if poll {
                self.poll_scopes.push(self.next_scope);
            }
        }
        let start = out.len();
        let info = self.loop_inner(e, out);
        if retry || poll {
            if let Some((id, loc, text)) = self.retry_scopes.pop() {
                let body = &out[start..];
                // A loop that receives messages is a consume loop, not a retry, and
                // one that takes the next job from an in-process channel is a worker
                // loop. A poll loop that re-reads rows and publishes them re-sends a
                // row whose publish failed on the next pass: each pass is an attempt.
                let receives = contains_receive(body)
                    || contains_event(body, &|k| matches!(k, EventKind::ChannelRecv { .. }));
                // (A fetch from an external source is no re-read of unsent rows.)
                let relay = contains_event(
                    body,
                    &|k| matches!(k, EventKind::Read { tables } if !tables.iter().all(|t| t.starts_with(crate::apis::FETCHED))),
                ) && contains_event(body, &|k| matches!(k, EventKind::Publish { .. }));
                if receives || (poll && !relay) {
                    self.id_flows.retain(|(scope, _)| *scope != Some(id));
                    // What the flows would have been outside any retry.
                    for (s, f) in std::mem::take(&mut self.poll_fallbacks) {
                        if s != id {
                            self.poll_fallbacks.push((s, f));
                        } else if !self.id_flows.iter().any(|(_, x)| *x == f) {
                            self.id_flows.push((None, f));
                        }
                    }
                } else if retry {
                    self.retry_scope_closed(loc.clone(), text.clone(), &out[start..]);
                }
                if poll {
                    self.poll_scopes.retain(|s| *s != id);
                    self.poll_fallbacks.retain(|(s, _)| *s != id);
                    let sends: Vec<IdFlow> = {
                        let (mine, rest) = std::mem::take(&mut self.poll_sends)
                            .into_iter()
                            .partition(|(s, _)| *s == id);
                        self.poll_sends = rest;
                        mine.into_iter().map(|(_, f)| f).collect()
                    };
                    // A loop that runs pass after pass and receives nothing: whether
                    // a pass re-reads rows and sends them may show only in what it
                    // calls (the analysis decides); its fresh ids are new per pass then.
                    if !receives && !relay {
                        for flow in sends {
                            let poll = Some(loc.clone());
                            if !self.pass_id_flows.iter().any(|p| p.flow == flow) {
                                self.pass_id_flows.push(PassIdFlow { flow, poll });
                            }
                        }
                    }
                }
                // A retry loop around a pass is a poll loop as well: the functions it
                // calls may re-read unsent rows and send them.
                if !receives {
                    self.poll_loops.push(PollLoop {
                        loc,
                        text,
                        body: Node::Seq(out[start..].to_vec()),
                    });
                }
            }
        }
        info
    }

    /// A loop that re-runs a failing step: its text names attempts, retries or backoff
    /// and it handles an error; or a `loop`/`while` (not `while let`: that iterates)
    /// that handles an `Err` and leaves on success (`break`/`return`); or `for _ in
    /// 0..n` that handles an `Err` and leaves. Loops that receive messages are consume loops.
    pub(super) fn is_retry_loop(&self, e: &Expr) -> bool {
        // `while let Some(x) = stream.next().await` takes the next item each time (a
        // stream, a channel, a queue): it iterates, whatever its body's log lines say
        // of attempts or reconnects.
        if let Expr::While(w) = e {
            if let Expr::Let(l) = &*w.cond {
                if takes_next_item(&l.pat) {
                    return false;
                }
            }
        }
        // `loop { match set.join_next().await { .. None => break } }` takes the next
        // outcome each time as well.
        if let Expr::Loop(lp) = e {
            if self.drain_loop_as_while(lp).is_some() {
                return false;
            }
        }
        // The loop's own text: an outer loop over items around an inner retry is no
        // retry itself (nor is a comment's word).
        let mut nested = NestedLoops(Vec::new());
        match e {
            Expr::Loop(l) => nested.visit_block(&l.body),
            Expr::While(w) => nested.visit_block(&w.body),
            Expr::ForLoop(f) => nested.visit_block(&f.body),
            _ => {}
        }
        let t = RetryText::of(&self.cx.text_without(expr_span(e), &nested.0));
        if t.named {
            return true;
        }
        match e {
            Expr::Loop(_) => t.handles_err && t.leaves,
            Expr::While(w) => !matches!(&*w.cond, Expr::Let(_)) && t.handles_err && t.leaves,
            // Attempts stop once one succeeds: a range loop that never leaves makes
            // every item of the range (`for i in 0..1000 { produce(i) }`).
            Expr::ForLoop(f) => {
                matches!(strip(&f.expr), Expr::Range(_)) && t.handles_err && t.leaves
            }
            _ => false,
        }
    }

    pub(super) fn loop_inner(&mut self, e: &Expr, out: &mut Vec<Node>) -> Info {
        match e {
            Expr::While(w) => {
                let label = self.push_label(w.label.as_ref());
                let mut body = Vec::new();
                self.enter_loop();
                self.scopes.push(HashMap::default());
                let mut then = Vec::new();
                self.cond(&w.cond, &mut body);
                // `while let Some(r) = s.next().await`, `s` holding futures of
                // fallible operations (lower/joined.rs).
                let (records, ends) = self.drain_held(&w.cond, &mut then);
                let dropped_from = self.dropped_outcomes.len();
                then.extend(self.block(&w.body));
                self.scopes.pop();
                self.loops.pop();
                let then = Node::Seq(then);
                let mut after = Vec::new();
                if !records.is_empty() {
                    self.after_loop_over_records(
                        records,
                        (&then, dropped_from),
                        w.cond.span(),
                        &mut after,
                    );
                }
                // `while let Some(Ok(r)) = ..`: a failed one ends the loop, its
                // failure handled there.
                let exit = Node::Exit(ExitKind::Break { label });
                let exit = match ends {
                    Some(marker) => Node::Seq(vec![marker, exit]),
                    None => exit,
                };
                body.push(Node::Branch(vec![exit, then]));
                self.pop_label(w.label.as_ref());
                out.push(Node::Loop {
                    body: Box::new(Node::Seq(body)),
                    label,
                    each: false,
                });
                out.extend(after);
                Info::default()
            }
            Expr::ForLoop(f) => {
                let start = out.len();
                let iter = self.expr(&f.expr, out);
                // `for r in join_all(handles).await { .. }` (lower/joined.rs).
                let joined = self.note_joined_iter(&f.expr, out, start);
                let label = self.push_label(f.label.as_ref());
                self.enter_loop();
                self.scopes.push(HashMap::default());
                let mut then = Vec::new();
                // Iterating over received messages: each item is a message of its own.
                // Not the crate's own values decoded from one (`for e in &batch.entries`
                // with `entries: Vec<Entry>`): a message is never of a crate type.
                let batch = iter
                    .value
                    .filter(|v| self.is_message(*v))
                    .or_else(|| iter.mentions.iter().copied().find(|m| self.is_message(*m)))
                    .filter(|_| iter.crate_type.is_none());
                match batch {
                    Some(b) => {
                        let v = self.value_from(&pat_name(&f.pat), &Info::default());
                        self.values[v as usize].msg_root = Some(v);
                        let _ = b;
                        let loc = self.cx.loc(f.pat.span(), f.pat.span());
                        then.push(Node::Event(Event {
                            kind: EventKind::Receive {
                                msg: v,
                                element: true,
                                client: None,
                            },
                            loc,
                            text: pat_name(&f.pat),
                            describe: "message taken from a batch".into(),
                        }));
                        let info = Info {
                            value: Some(v),
                            ..Info::default()
                        };
                        self.bind_pattern(&f.pat, &info);
                    }
                    // `for p in pending`: `p` holds the fields every push gave.
                    None if self.bind_element(&f.pat, &iter) => {}
                    None => {
                        let mut derived = self.derived(&iter);
                        // `for x in &self.items` (`Vec<Item>` is seen as `Item`): the element's type.
                        derived.crate_type = iter.crate_type.clone();
                        self.bind_pattern(&f.pat, &derived);
                    }
                }
                // `for r in results { r?; }`, `results` joined outcomes (lower/joined.rs).
                let records = self.loop_over_records(f, joined);
                let dropped_from = self.dropped_outcomes.len();
                then.extend(self.block(&f.body));
                self.scopes.pop();
                self.loops.pop();
                self.pop_label(f.label.as_ref());
                let body =
                    Node::Branch(vec![Node::Exit(ExitKind::Break { label }), Node::Seq(then)]);
                let mut after = Vec::new();
                if !records.is_empty() {
                    self.after_loop_over_records(
                        records,
                        (&body, dropped_from),
                        f.expr.span(),
                        &mut after,
                    );
                }
                out.push(Node::Loop {
                    body: Box::new(body),
                    label,
                    each: !matches!(strip(&f.expr), Expr::Range(_)),
                });
                out.extend(after);
                Info::default()
            }
            Expr::Loop(lp) => {
                // `loop { match set.join_next().await { Some(r) => .., None => break } }`
                // (lower/joined.rs).
                if let Some(w) = self.drain_loop_as_while(lp) {
                    return self.loop_inner(&Expr::While(w), out);
                }
                let label = self.push_label(lp.label.as_ref());
                self.enter_loop();
                let body = self.block(&lp.body);
                self.loops.pop();
                self.pop_label(lp.label.as_ref());
                out.push(Node::Loop {
                    body: Box::new(Node::Seq(body)),
                    label,
                    each: false,
                });
                Info::default()
            }
            _ => Info::default(),
        }
    }

    pub(super) fn if_expr(&mut self, i: &syn::ExprIf, out: &mut Vec<Node>) -> Info {
        let arms_return = std::mem::take(&mut self.tail_arms);
        self.scopes.push(HashMap::default());
        let mut cond = Vec::new();
        self.cond(&i.cond, &mut cond);
        let mut then = self.block(&i.then_branch);
        if let Some(Stmt::Expr(t, None)) = i.then_branch.stmts.last() {
            self.arm_returns(arms_return, t, &mut then);
        }
        self.scopes.pop();
        let mut els = Vec::new();
        if let Some((_, e)) = &i.else_branch {
            self.tail_arms = arms_return && is_branching(e);
            self.expr(e, &mut els);
            self.tail_arms = false;
            self.arm_returns(arms_return, e, &mut els);
        }
        // `if !confirmation.is_ack() { … }`: a publish's confirmation tested.
        self.confirmation_test(&i.cond, &cond, &mut then, &mut els, i);
        // `if out.failed_entry_count() > 0 { … }`: where a batch's entries failed.
        if let Some(marker) = self.batch_failure_marker(i) {
            let (side, node) = marker;
            if side {
                then.insert(0, node)
            } else {
                els.insert(0, node)
            }
        }
        // `if let Err(e) = handle(..).await { … }`: the arms of a call's outcome.
        let bound_v = match &*i.cond {
            Expr::Let(l) => self.bound_outcome_value(&l.expr, out),
            // `let r = op.await; if r.is_err() { … }`.
            c => outcome_receiver(c).and_then(|r| self.bound_outcome_value(r, out)),
        };
        let bound = bound_v.is_some();
        // `if let Ok(..) = ack { … } else { … }`, `ack` a value whose error was
        // handled when it was made: on its `Ok` side the operation did not fail.
        // `if let Err(e) = r { return Err(e.into()) }`: on the side that takes every
        // error and gives it back, it is propagated after all.
        if let (Expr::Let(l), false) = (&*i.cond, bound) {
            let value = self.path_value(&l.expr);
            let edge = value.and_then(|v| self.outcome_edge(v, false, &l.expr));
            match (result_pattern(&l.pat, &self.cx.index.outcomes), edge) {
                (Some(true), Some(edge)) => then.insert(0, edge),
                (Some(false), Some(edge)) => {
                    els.insert(0, edge);
                    // `if let Err(e) = r { failed = true; }`: the side records the
                    // failure handled where `r` was taken.
                    if let Some(v) = value {
                        self.note_outcome_recorded(v, |r| r.visit_block(&i.then_branch));
                        // `if let Ok(Err(e)) = r { warn!(..) }`: a joined task's failure.
                        if task_outcome_pattern(&l.pat) && !keeps_failure(&then) {
                            self.note_dropped_outcome(v, (&l.pat, None), &then);
                        }
                    }
                    if catch_all_err(&l.pat, self.cx.index) && keeps_failure(&then) {
                        if let Some(err) = value.and_then(|v| self.outcome_edge(v, true, &l.expr)) {
                            then.insert(0, err);
                        }
                    }
                }
                _ => {}
            }
        }
        // `if let Err(e) = r`, `r` a spawned task's own outcome taken from its join.
        let task_bound = matches!(&*i.cond, Expr::Let(l) if self.is_task_outcome(&l.expr));
        let outcome = match &*i.cond {
            Expr::Let(l) if is_call_chain(&l.expr) || bound || task_bound => {
                result_pattern(&l.pat, &self.cx.index.outcomes)
                    .filter(|ok| *ok || catch_all_err(&l.pat, self.cx.index))
                    .map(|ok| (ok, l.pat.span()))
            }
            // `if op.await.is_err() { … }`, `if !op.await.is_ok() { … }`.
            c => outcome_test(c, bound),
        };
        // The failure side of an operation's outcome handles its error and goes on.
        if let Some((is_ok, sp)) = outcome {
            let task = task_bound
                || matches!(&*i.cond, Expr::Let(l) if ends_in_task_outcome(&cond, std::iter::once(&*l.pat)));
            if ends_in_fallible(&cond) || task || (bound && ends_in_fallible(out)) {
                let told = match (is_ok, &i.else_branch) {
                    (false, _) => !block_hides_failure(&i.then_branch),
                    (true, Some((_, e))) => !hides_failure(e),
                    (true, None) => false,
                };
                let marker = self.error_ignored(sp, "if let Err(..)", told);
                if !ends_in_fallible(&cond) {
                    self.note_handled_outcome(bound_v, Some(&marker));
                }
                // What each side records or fills (lower/recorded.rs).
                let else_expr = i.else_branch.as_ref().map(|(_, e)| &**e);
                let (failing, succeeding) = if is_ok {
                    (None, Some(&i.then_branch))
                } else {
                    (Some(&i.then_branch), None)
                };
                self.note_failure_recorded(Some(&marker), |r| match (failing, else_expr) {
                    (Some(b), _) => r.visit_block(b),
                    (None, Some(e)) => r.visit_expr(e),
                    _ => {}
                });
                if let Node::Event(ev) = &marker {
                    let markers = [ev.loc.clone()];
                    self.note_success_filled(&markers, None, |r| match (succeeding, else_expr) {
                        (Some(b), _) => r.visit_block(b),
                        (None, Some(e)) => r.visit_expr(e),
                        _ => {}
                    });
                }
                if is_ok { &mut els } else { &mut then }.insert(0, marker);
            }
        }
        match outcome.map(|(ok, _)| ok) {
            Some(is_ok) if ends_in_call(&cond) || bound => {
                let (ok, err) = if is_ok { (then, els) } else { (els, then) };
                out.push(Node::ResultBranch {
                    scrutinee: Box::new(Node::Seq(cond)),
                    ok: Box::new(Node::Seq(ok)),
                    err: Box::new(Node::Seq(err)),
                });
            }
            // `if let Some(id) = record.message_id.clone() { .. }` on a field the event
            // source always sets: the body always runs.
            _ if i.else_branch.is_none() && self.always_some(&i.cond) => {
                out.extend(cond);
                out.extend(then);
            }
            _ => {
                self.failure_test_edges(&i.cond, &mut then, &mut els);
                out.extend(cond);
                out.push(Node::Branch(vec![Node::Seq(then), Node::Seq(els)]));
            }
        }
        Info::default()
    }

    /// `let Some(..) = <record>.field` (through `clone`, `as_ref`, `as_deref`,
    /// `to_owned`, `&`) on a record field the event source always sets (the packs'
    /// `record_ids`).
    fn always_some(&self, cond: &Expr) -> bool {
        let Expr::Let(l) = cond else { return false };
        let mut e = strip(&l.expr);
        while let Expr::MethodCall(m) = e {
            if !m.args.is_empty() || !self.cx.apis.std.aliases.contains(&m.method.to_string()) {
                break;
            }
            e = strip(&m.receiver);
        }
        super::outcome::some_pattern(&l.pat)
            && matches!(e, Expr::Field(f) if matches!(&f.member,
            syn::Member::Named(n) if self.cx.apis.serverless.is_record_id(&n.to_string())))
    }

    /// A condition, with `let` patterns bound in the current (new) scope.
    pub(super) fn cond(&mut self, c: &Expr, out: &mut Vec<Node>) {
        match c {
            Expr::Let(l) => {
                let info = self.expr(&l.expr, out);
                self.bind_pattern(&l.pat, &info);
            }
            Expr::Binary(b) if matches!(b.op, syn::BinOp::And(_)) => {
                self.cond(&b.left, out);
                self.cond(&b.right, out);
            }
            Expr::Paren(p) => self.cond(&p.expr, out),
            other => {
                self.expr(other, out);
            }
        }
    }

    pub(super) fn push_label(&mut self, label: Option<&syn::Label>) -> Option<u32> {
        let l = label?;
        self.next_label += 1;
        self.labels
            .push((l.name.ident.to_string(), self.next_label));
        Some(self.next_label)
    }

    /// A loop is being lowered (`Lowerer::loops`).
    pub(super) fn enter_loop(&mut self) {
        self.loop_serial += 1;
        self.loops.push(self.loop_serial);
    }

    pub(super) fn pop_label(&mut self, label: Option<&syn::Label>) {
        if label.is_some() {
            self.labels.pop();
        }
    }

    pub(super) fn find_label(&self, lt: Option<&syn::Lifetime>) -> Option<u32> {
        let name = lt?.ident.to_string();
        self.labels
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, id)| *id)
    }

    // ----- closures ----------------------------------------------------------

    /// Lowers a closure (or async block) body into a `Closure` node.
    pub(super) fn closure(
        &mut self,
        c: &syn::ExprClosure,
        run: ClosureRun,
        handle: Option<ValueId>,
        out: &mut Vec<Node>,
    ) {
        self.scopes.push(HashMap::default());
        let mut param = None;
        let hint = self.closure_param_hint.take();
        for (i, p) in c.inputs.iter().enumerate() {
            let ti = if i == 0 {
                hint.clone().unwrap_or_default()
            } else {
                TypeInfo::default()
            };
            let v = self.bind_param(p, ti);
            if i == 0 {
                param = v;
            }
        }
        let mut body = Vec::new();
        if let (ClosureRun::Callback, Some(p)) = (run, param) {
            self.values[p as usize].msg_root = Some(p);
            body.push(Node::Event(Event {
                kind: EventKind::Receive {
                    msg: p,
                    element: false,
                    client: None,
                },
                loc: self.cx.loc(c.inputs.span(), c.inputs.span()),
                text: self.values[p as usize].name.clone(),
                describe: "message delivered to the callback".into(),
            }));
        }
        if let (ClosureRun::Transaction, Some(p)) = (run, param) {
            self.values[p as usize].role = Role::DbTx.some();
        }
        let value = self.closure_body(&c.body, &mut body);
        self.closure_value = Some((value.role, value.crate_type));
        self.scopes.pop();
        let sp = closure_span(c);
        let loc = self.cx.loc(sp, sp);
        out.push(Node::Closure {
            body: Box::new(Node::Seq(body)),
            run,
            param,
            handle,
            loc,
            text: "closure".into(),
        });
    }

    /// A closure body, seeing through `async move { .. }` and `Box::pin(async move { .. })`.
    pub(super) fn closure_body(&mut self, body: &Expr, out: &mut Vec<Node>) -> Info {
        match strip(body) {
            Expr::Async(a) => {
                self.block_value(&a.block, out);
                Info::default()
            }
            Expr::Call(c) if is_box_pin(c) && c.args.len() == 1 => {
                self.closure_body(&c.args[0], out);
                Info::default()
            }
            Expr::Block(b) if b.block.stmts.len() == 1 => match &b.block.stmts[0] {
                Stmt::Expr(e @ (Expr::Async(_) | Expr::Call(_)), None) => self.closure_body(e, out),
                _ => self.block_value(&b.block, out),
            },
            other => self.expr(other, out),
        }
    }

    /// Lowers the argument `arg` that a call runs in a special way (spawn, transaction, callback).
    pub(super) fn special_arg(
        &mut self,
        arg: &Expr,
        run: ClosureRun,
        handle: Option<ValueId>,
        out: &mut Vec<Node>,
    ) -> bool {
        if let Some(Node::Closure {
            body,
            param,
            loc,
            text,
            ..
        }) = self.deferred_of(arg)
        {
            out.push(Node::Closure {
                body,
                run,
                param,
                handle,
                loc,
                text,
            });
            return true;
        }
        match strip(arg) {
            Expr::Closure(c) => {
                self.closure(c, run, handle, out);
                true
            }
            Expr::Async(a) if run != ClosureRun::Callback => {
                let mut body = Vec::new();
                self.block_value(&a.block, &mut body);
                out.push(Node::Closure {
                    body: Box::new(Node::Seq(body)),
                    run,
                    param: None,
                    handle,
                    loc: self.cx.loc(a.span(), a.span()),
                    text: "async block".into(),
                });
                true
            }
            // `tokio::spawn(process(msg))`: the call runs later.
            Expr::Call(c) if run != ClosureRun::Callback && !is_box_pin(c) => {
                self.task(arg, run, handle, out);
                true
            }
            Expr::Call(c) if is_box_pin(c) && c.args.len() == 1 => {
                self.special_arg(&c.args[0], run, handle, out)
            }
            Expr::MethodCall(_) if run == ClosureRun::Later => {
                self.task(arg, run, handle, out);
                true
            }
            // `tokio::spawn({ let tx = tx.clone(); async move { … } })`: the block's
            // statements run now, its value (the future) later.
            Expr::Block(b) if b.label.is_none() && run != ClosureRun::Callback => {
                let Some((Stmt::Expr(tail, None), init)) = b.block.stmts.split_last() else {
                    return false;
                };
                let later = match strip(tail) {
                    Expr::Async(_) | Expr::Closure(_) => true,
                    Expr::Call(c) => !is_box_pin(c),
                    _ => false,
                };
                if !later {
                    return false;
                }
                self.scopes.push(HashMap::default());
                for stmt in init {
                    self.stmt(stmt, out);
                }
                let taken = self.special_arg(tail, run, handle, out);
                self.scopes.pop();
                taken
            }
            _ => false,
        }
    }

    /// A future expression handed to a spawn (or transaction) API, as a closure node.
    pub(super) fn task(
        &mut self,
        arg: &Expr,
        run: ClosureRun,
        handle: Option<ValueId>,
        out: &mut Vec<Node>,
    ) {
        let mut body = Vec::new();
        self.expr(arg, &mut body);
        out.push(Node::Closure {
            body: Box::new(Node::Seq(body)),
            run,
            param: None,
            handle,
            loc: self.cx.loc(arg.span(), arg.span()),
            text: "task".into(),
        });
    }
}

/// A pattern that takes an item out of an `Option` (`Some(x)`, `Ok(Some(x))`): what
/// a loop over the next items of a stream or a channel binds.
fn takes_next_item(p: &syn::Pat) -> bool {
    let results = &crate::apis::builtin_std().results;
    match p {
        syn::Pat::TupleStruct(t) => match t.path.segments.last() {
            Some(seg) if results.some.contains(&seg.ident.to_string()) => true,
            Some(seg) if results.side(&seg.ident.to_string()) == Some(true) => {
                t.elems.iter().any(takes_next_item)
            }
            _ => false,
        },
        syn::Pat::Paren(p) => takes_next_item(&p.pat),
        _ => false,
    }
}

/// The spans of the loops a body holds (not those inside them).
struct NestedLoops(Vec<proc_macro2::Span>);

impl<'ast> syn::visit::Visit<'ast> for NestedLoops {
    fn visit_expr(&mut self, e: &'ast Expr) {
        match e {
            Expr::Loop(_) | Expr::While(_) | Expr::ForLoop(_) => self.0.push(expr_span(e)),
            _ => syn::visit::visit_expr(self, e),
        }
    }
}
