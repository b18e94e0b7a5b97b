//! Blocks and statements, in order.

use std::collections::HashMap;

use syn::spanned::Spanned;
use syn::{Expr, Pat, Stmt};

use super::outcome::{ends_in_fallible, panics_or_propagates, result_pattern};
use super::spans::expr_span;
use super::{failed_then_return, is_branching, result_kind, strip, tail_value, Info, Lowerer};
use crate::frontend::rust::{untyped, TypeInfo};
use crate::ir::{Event, EventKind, ExitKind, Node};

impl<'a, 'b> Lowerer<'a, 'b> {
    /// The function's own body: its tail expression is what the function returns.
    pub(super) fn fn_body(&mut self, block: &syn::Block) -> Vec<Node> {
        self.scopes.push(HashMap::default());
        let mut out = Vec::new();
        let n = block.stmts.len();
        for (i, stmt) in block.stmts.iter().enumerate() {
            let tail = i + 1 == n && matches!(stmt, Stmt::Expr(_, None));
            self.in_return = tail;
            self.tail_arms = tail && matches!(stmt, Stmt::Expr(e, None) if is_branching(e));
            let start = out.len();
            self.stmt(stmt, &mut out);
            self.in_return = false;
            self.tail_arms = false;
            if let (true, Stmt::Expr(e, None)) = (tail, stmt) {
                self.note_false_returned(e, &mut out);
                if result_kind(e, &self.cx.index.outcomes) == Some(true) {
                    // A tail `Err(last_error)` returns that error.
                    out.push(Node::Exit(ExitKind::Return { err: Some(true) }));
                } else if !self.propagate_outcome(e, &mut out)
                    && !self.returned_call(tail_value(e), start, &mut out)
                {
                    self.returned_result(e, start, &mut out);
                }
            }
        }
        self.scopes.pop();
        out
    }

    /// `false` returned by the function itself (`return false`, a tail `false`):
    /// what failed on the path is told to the caller ([`EventKind::FailureTold`]).
    pub(super) fn note_false_returned(&self, e: &Expr, out: &mut Vec<Node>) {
        let is_false = matches!(
            strip(e),
            Expr::Lit(syn::ExprLit { lit: syn::Lit::Bool(b), .. }) if !b.value
        );
        if is_false && self.closure_depth == 0 {
            out.push(Node::Event(Event {
                kind: EventKind::FailureTold,
                loc: self.cx.loc(e.span(), e.span()),
                text: "false".into(),
                describe: "failure told to the caller".into(),
            }));
        }
    }

    /// The body's tail is an operation's result (awaited, or a blocking call),
    /// returned as it is or through methods that keep its failure
    /// (`op.send().await.map_err(..)`, `diesel::sql_query(..).execute(conn)`): the
    /// function fails when the operation does, as with `?`.
    fn returned_result(&mut self, e: &Expr, start: usize, out: &mut Vec<Node>) {
        let keeps = &self.cx.apis.std.results.keeps;
        let mut inner = e;
        while let Expr::MethodCall(mc) = inner {
            if !keeps.iter().any(|k| mc.method == k) {
                break;
            }
            inner = &mc.receiver;
        }
        // An awaited operation, or a blocking one (diesel's and rusqlite's
        // `execute(conn)`): its `Result` is the function's.
        if !matches!(inner, Expr::Await(_) | Expr::MethodCall(_) | Expr::Call(_)) {
            return;
        }
        self.keep_last_effect(e, start, out);
        let failing = matches!(
            out.last(),
            Some(Node::Event(Event {
                kind: EventKind::Commit { .. }
                    | EventKind::Write { .. }
                    | EventKind::Publish { .. }
                    | EventKind::External { .. },
                ..
            }))
        ) && out.len() > start;
        if !failing {
            return;
        }
        let Some(Node::Event(ev)) = out.pop() else {
            return;
        };
        let err = failed_then_return(&ev);
        out.push(Node::Branch(vec![Node::Seq(vec![Node::Event(ev)]), err]));
    }

    /// The value returned is a crate call's outcome, as it is or through methods that
    /// keep its failure (`h(p).await`, `self.handle(m).await.context(..)`, `route(p)`):
    /// the function fails when the callee does, as with `h(p).await?`. The call is
    /// the one lowered last from `start` on, written where `value` is; only closures
    /// without events (the adapters') may follow it. Says whether it was.
    pub(super) fn returned_call(&self, value: &Expr, start: usize, out: &mut [Node]) -> bool {
        let keeps = &self.cx.apis.std.results.keeps;
        let mut inner = strip(value);
        while let Expr::MethodCall(mc) = inner {
            if !keeps.iter().any(|k| mc.method == k) {
                break;
            }
            inner = strip(&mc.receiver);
        }
        if let Expr::Await(a) = inner {
            inner = strip(&a.base);
        }
        let close = match inner {
            Expr::Call(c) => c.paren_token.span.close(),
            Expr::MethodCall(m) => m.paren_token.span.close(),
            _ => return false,
        };
        let end = self.cx.loc(close, close).span.byte_end;
        let Some(at) = (out.len() > start)
            .then(|| {
                out[start..]
                    .iter()
                    .rposition(|n| !matches!(n, Node::Closure { .. }))
            })
            .flatten()
            .map(|i| i + start)
        else {
            return false;
        };
        if out[at + 1..].iter().any(|n| !n.events().is_empty()) {
            return false;
        }
        match &mut out[at] {
            Node::Event(Event {
                kind: EventKind::Call(c),
                loc,
                ..
            }) if loc.span.byte_end == end => {
                c.propagates_err = true;
                true
            }
            _ => false,
        }
    }

    /// An arm of the function's tail `match` / `if` whose value is `Err(..)` returns
    /// that error: `Err(e) => { warn!(..); Err(e.into()) }` fails the call. One whose
    /// value is a crate call's outcome fails when the callee does ([`Self::returned_call`]).
    pub(super) fn arm_returns(&self, returns: bool, value: &Expr, body: &mut Vec<Node>) {
        if returns && self.returned_call(tail_value(value), 0, body) {
            return;
        }
        if returns
            && result_kind(tail_value(value), &self.cx.index.outcomes) == Some(true)
            && !matches!(body.last(), Some(Node::Exit(_)))
        {
            body.push(Node::Exit(ExitKind::Return { err: Some(true) }));
        }
    }

    pub(super) fn block(&mut self, block: &syn::Block) -> Vec<Node> {
        self.scopes.push(HashMap::default());
        let mut out = Vec::new();
        for stmt in &block.stmts {
            self.stmt(stmt, &mut out);
        }
        self.scopes.pop();
        out
    }

    /// A block used as a value: its nodes go to `out`, its tail expression's info is returned.
    pub(super) fn block_value(&mut self, block: &syn::Block, out: &mut Vec<Node>) -> Info {
        self.scopes.push(HashMap::default());
        let mut info = Info::default();
        let n = block.stmts.len();
        for (i, stmt) in block.stmts.iter().enumerate() {
            match stmt {
                Stmt::Expr(e, None) if i + 1 == n => info = self.expr(e, out),
                _ => self.stmt(stmt, out),
            }
        }
        self.scopes.pop();
        info
    }

    pub(super) fn stmt(&mut self, stmt: &Stmt, out: &mut Vec<Node>) {
        let start = out.len();
        let before: Vec<u32> = self
            .bound_claims
            .iter()
            .map(|(v, _)| self.uses[*v as usize])
            .collect();
        self.stmt_inner(stmt, out);
        // `let _ = claim.await;`: a bound claim run and its result dropped, not tested.
        if let Some(v) = dropped_await(stmt).and_then(|n| self.lookup(&n)) {
            for (i, (c, _)) in self.bound_claims.iter().enumerate() {
                if *c == v && before.get(i).is_some_and(|b| *b == 0) {
                    self.uses[v as usize] = 0;
                }
            }
        }
        // A bound claim looked at for the first time: it is tested here, before what
        // the statement does.
        let mut tested = Vec::new();
        for (i, (v, loc)) in self.bound_claims.iter().enumerate() {
            if before.get(i).is_some_and(|b| *b == 0) && self.uses[*v as usize] > 0 {
                tested.push(Node::Event(Event {
                    kind: EventKind::ClaimTested { claim: loc.clone() },
                    loc: loc.clone(),
                    text: self.values[*v as usize].name.clone(),
                    describe: "claim tested".into(),
                }));
            }
        }
        if !tested.is_empty() {
            out.splice(start..start, tested);
        }
        self.gate_success_rows(stmt, out, start);
    }

    /// One statement, by kind: a `let`, an expression statement, a macro (items lower
    /// to nothing).
    pub(super) fn stmt_inner(&mut self, stmt: &Stmt, out: &mut Vec<Node>) {
        match stmt {
            Stmt::Local(local) => self.let_stmt(local, out),
            Stmt::Expr(e, semi) => self.expr_stmt(e, semi.is_some(), out),
            Stmt::Macro(m) => {
                self.mac(&m.mac, out);
            }
            Stmt::Item(_) => {}
        }
    }

    /// A `let`: lowers its initializer (a closure or async block is kept, deferred,
    /// under its name), its `else`, and binds the pattern; decides whether the
    /// binding drops an error (`let _ = op.await`), and records the claim, publish or
    /// crate call whose result the binding holds, so that an unread binding is found.
    fn let_stmt(&mut self, local: &syn::Local, out: &mut Vec<Node>) {
        let out_start = out.len();
        let mut info = Info::default();
        let mut claim_binding = None;
        let mut pending_publish = None;
        let mut confirmation = None;
        let mut confirmed_value = None;
        let mut pending_call = None;
        let mut err_made = Vec::new();
        let mut deferred_op = None;
        if let Some(init) = &local.init {
            if let (Expr::Closure(_) | Expr::Async(_), Pat::Ident(pi)) =
                (strip(&init.expr), &local.pat)
            {
                let mut tmp = Vec::new();
                self.expr(&init.expr, &mut tmp);
                let name = pi.ident.to_string();
                let v = self.new_value(&name, TypeInfo::default());
                self.values[v as usize].deferred = tmp.pop().map(Box::new);
                self.bind(&name, v);
                return;
            }
            if let (Some(_), Pat::Ident(pi)) = (&self.batch_oks, untyped(&local.pat)) {
                if self.failure_item(&init.expr) {
                    self.failure_locals.insert(pi.ident.to_string());
                }
            }
            let start = out.len();
            let err_valued = self.err_valued.len();
            info = self.expr(&init.expr, out);
            // `let ack = match op.await { Ok(f) => f.await, Err(e) => Err(e.into()) }`:
            // `ack` carries the error its arms handled.
            err_made = self.err_valued.drain(err_valued..).collect();
            if matches!(local.pat, Pat::Ident(_) | Pat::Wild(_) | Pat::Type(_)) {
                self.reset_begin_uses(&init.expr, &out[start..]);
            }
            pending_publish = self.unconfirmed_publish(&init.expr, &out[start..]);
            confirmation = self.confirmation_bound(&init.expr, &out[start..]);
            confirmed_value = self.confirmation_taken(&init.expr, &out[start..]);
            pending_call = Self::crate_call_of_statement(&init.expr, &out[start..]);
            self.note_call_awaited_once(&init.expr, &out[start..]);
            if let Some(loc) = Self::claim_of_statement(&init.expr, &out[start..]) {
                match untyped(&local.pat) {
                    Pat::Ident(pi) => claim_binding = Some((pi.ident.to_string(), loc)),
                    Pat::Wild(_) => {
                        self.unchecked.insert(loc);
                    }
                    _ => {}
                }
            }
            deferred_op = self.deferred_operation(local, claim_binding.is_some(), start, out);
            let fallible = ends_in_fallible(&out[start..]);
            if let Some((_, diverge)) = &init.diverge {
                let mut els = Vec::new();
                // `let Ok(v) = op else { … }`: the `else` is the failure path.
                if fallible && result_pattern(&local.pat, &self.cx.index.outcomes) == Some(true) {
                    els.push(self.error_ignored(local.pat.span(), "let Ok(..) = .. else", false));
                }
                self.expr(diverge, &mut els);
                out.push(Node::Branch(vec![Node::Seq(vec![]), Node::Seq(els)]));
            }
        }
        // `let _ = op.await;`: the operation's error is dropped.
        let dropped = match untyped(&local.pat) {
            Pat::Wild(_) => true,
            Pat::Ident(pi) => pi.ident.to_string().starts_with('_') && pi.subpat.is_none(),
            _ => false,
        };
        if dropped
            && local
                .init
                .as_ref()
                .is_some_and(|i| i.diverge.is_none() && !panics_or_propagates(&i.expr))
            && ends_in_fallible(out)
            && out.len() > out_start
        {
            let sp = local
                .let_token
                .span
                .join(local.pat.span())
                .unwrap_or(local.let_token.span);
            out.push(self.error_ignored(sp, "let _ =", false));
        } else if !self.note_joined_results(local, out, out_start) {
            self.note_outcome_flag(local, out, out_start);
            self.note_arms_flag(local, out, out_start);
        }
        self.note_derived_record(local);
        self.bind_pattern(&local.pat, &info);
        self.bind_deferred(local, deferred_op);
        self.note_let_literals(local);
        self.note_held_stream(local, &out[out_start..]);
        if let Some(init) = &local.init {
            self.bind_channel_ends(&local.pat, &init.expr);
        }
        if let Pat::Ident(pi) = untyped(&local.pat) {
            if let Some(v) = self.lookup(&pi.ident.to_string()) {
                self.handled_outcomes
                    .extend(err_made.into_iter().map(|l| (v, l)));
            }
        }
        match (pending_call, &local.pat) {
            (Some(loc), Pat::Ident(pi)) => {
                if let Some(v) = self.lookup(&pi.ident.to_string()) {
                    self.uses[v as usize] = 0;
                    self.bound_calls.push((v, loc));
                }
            }
            (Some(loc), Pat::Wild(_)) => {
                self.unused_calls.insert(loc);
            }
            _ => {}
        }
        if let (Expr::Await(_) | Expr::Call(_) | Expr::MethodCall(_), Pat::Ident(pi)) = (
            strip(
                local
                    .init
                    .as_ref()
                    .map(|i| &*i.expr)
                    .unwrap_or(&Expr::Verbatim(Default::default())),
            ),
            untyped(&local.pat),
        ) {
            if ends_in_fallible(out) {
                if let Some(v) = self.lookup(&pi.ident.to_string()) {
                    self.last_outcome = Some((v, out.len(), out.as_ptr() as usize));
                }
            }
        }
        self.note_confirmation_binding(local, confirmation, confirmed_value);
        if let (Some(loc), Pat::Ident(pi)) = (pending_publish, &local.pat) {
            if let Some(v) = self.lookup(&pi.ident.to_string()) {
                self.uses[v as usize] = 0;
                self.bound_publishes.push((v, loc));
            }
        }
        if let Some((name, loc)) = claim_binding {
            if let Some(v) = self.lookup(&name) {
                self.uses[v as usize] = 0;
                self.unchecked.insert(loc.clone());
                self.bound_claims.push((v, loc));
            }
        }
    }

    /// The string literals a `let x = ..` writes, kept on `x` (a document built
    /// before the call it is given to: `let update = doc! { "$inc": .. }`), for
    /// the packs' `arg_keys`; only when some pack has them.
    fn note_let_literals(&mut self, local: &syn::Local) {
        let (Pat::Ident(pi), Some(init)) = (untyped(&local.pat), &local.init) else {
            return;
        };
        if !self.cx.apis.has_arg_keys {
            return;
        }
        let Some(v) = self.lookup(&pi.ident.to_string()) else {
            return;
        };
        let mut lits = Vec::new();
        super::token_strings(quote::ToTokens::to_token_stream(&init.expr), &mut lits);
        lits.extend(self.message_keyed_fields(&init.expr));
        // A value of the crate's type taken whole from the message, not built by
        // the type's own constructor (`Order::new(&msg)` may mint the id).
        let value = &self.values[v as usize];
        if let (Some(_), Some(ty)) = (value.msg_root, value.crate_type.clone()) {
            if !builds_type(&init.expr, &ty) {
                lits.extend(self.message_typed_fields(&ty));
            }
        }
        self.values[v as usize].lits = lits;
    }

    /// An expression statement (`semi`: ended by `;`): a dropped `op.await` result is
    /// an ignored error; a claim, publish or crate call whose result the `;` drops is
    /// recorded as unchecked.
    fn expr_stmt(&mut self, e: &Expr, semi: bool, out: &mut Vec<Node>) {
        let start = out.len();
        let info = self.expr(e, out);
        self.note_returned_client(&info, semi);
        // `op.await;`: a result dropped unread (rustc warns of an unused `Result`).
        if semi
            && matches!(strip(e), Expr::Await(_))
            && !panics_or_propagates(e)
            && out.len() > start
            && ends_in_fallible(out)
        {
            out.push(self.error_ignored(expr_span(e), "the statement", false));
        }
        if semi {
            if let Some((loc, target)) = Self::claim_target_of_statement(e, &out[start..]) {
                self.unchecked.insert(loc.clone());
                self.dropped_claims.push((target, loc));
            }
            self.reset_begin_uses(e, &out[start..]);
            if let Some(loc) = self.unconfirmed_publish(e, &out[start..]) {
                self.unconfirmed.insert(loc);
            }
            if let Some(loc) = Self::crate_call_of_statement(e, &out[start..]) {
                self.unused_calls.insert(loc);
            }
            self.note_call_awaited_once(e, &out[start..]);
        } else if self.in_return && self.closure_depth == 0 {
            // `ch.basic_publish(..).await` or `Ok(pending)` as the body's value: the
            // pending confirmation goes to the caller.
            let held = self.held_publish(e);
            if let Some(loc) = self.unconfirmed_publish(e, &out[start..]).or(held) {
                if !self.returns_confirms.contains(&loc) {
                    self.returns_confirms.push(loc);
                }
            }
        }
    }

    /// A Kafka client configured here and returned (a tail or `return` value): the
    /// function is its factory (`Function::returns_kafka_client`).
    pub(super) fn note_returned_client(&mut self, info: &Info, semi: bool) {
        if !semi && self.in_return && self.closure_depth == 0 && info.kafka_client.is_some() {
            self.returned_kafka_client = info.kafka_client;
        }
        // A configuration returned unmade (a `ClientConfig` helper); two different
        // ones (one per `return`) cannot be told apart at the call site.
        if let Some(cfg) = info.kafka_config.as_ref().filter(|_| {
            !semi && self.in_return && self.closure_depth == 0 && info.kafka_client.is_none()
        }) {
            match &mut self.returned_kafka_config {
                Some(had) if had != cfg => had.unseen_step(),
                Some(_) => {}
                None => self.returned_kafka_config = Some(cfg.clone()),
            }
        }
    }

    // ----- expressions -------------------------------------------------------
}

/// Whether `e` is a literal or a constructor of the crate's type `ty` (`Order { .. }`,
/// `Order::new(..)`, `Self::from(..)`), through `?` and `.await`.
fn builds_type(e: &Expr, ty: &str) -> bool {
    match super::super::chain::settled(e) {
        Expr::Struct(_) => true,
        Expr::Call(c) => match &c.func.as_ref() {
            Expr::Path(p) => {
                let segs = &p.path.segments;
                segs.len() >= 2
                    && segs
                        .iter()
                        .rev()
                        .nth(1)
                        .is_some_and(|s| s.ident == ty || s.ident == "Self")
            }
            _ => false,
        },
        _ => false,
    }
}

/// The binding a statement awaits and then drops the result of (`let _ = claim.await;`,
/// `claim.await;`, `claim.await.ok();`): neither propagated nor read.
fn dropped_await(stmt: &Stmt) -> Option<String> {
    let e = match stmt {
        Stmt::Local(l) if matches!(untyped(&l.pat), Pat::Wild(_)) => &*l.init.as_ref()?.expr,
        Stmt::Expr(e, Some(_)) => e,
        _ => return None,
    };
    let mut e = strip(e);
    // (Through a method that swallows the error: the runtime pack's `swallows`.)
    if let Expr::MethodCall(m) = e {
        if super::outcome::results()
            .swallows
            .contains(&m.method.to_string())
        {
            e = strip(&m.receiver);
        }
    }
    let Expr::Await(a) = e else { return None };
    match strip(&a.base) {
        Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
        _ => None,
    }
}
