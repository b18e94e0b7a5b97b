//! What a statement leaves behind: its last event, crate call, claim or
//! outcome, and the bookkeeping when a function's body is done (`finish`).

use proc_macro2::Span as PmSpan;
use syn::Expr;

use super::spans::expr_span;
use super::{strip, Lowerer};
use crate::apis::{CallSpec, Role};
use crate::ir::{Event, EventKind, ExitKind, Loc, Node, ValueId};

impl<'a, 'b> Lowerer<'a, 'b> {
    /// Settles what is known only at the end of the body: which begun transactions
    /// were used, and which claims' results were never looked at.
    pub(super) fn finish(&mut self, body: &mut Node) {
        for (v, loc) in &self.bound_claims {
            if self.returned.contains(v) && !self.returns_claims.contains(loc) {
                self.returns_claims.push(loc.clone());
            }
        }
        for (v, loc) in std::mem::take(&mut self.bound_calls) {
            if self.uses[v as usize] == 0 {
                self.unused_calls.insert(loc);
            }
        }
        self.bound_claims.clear();
        for (v, loc) in std::mem::take(&mut self.bound_publishes) {
            if self.uses[v as usize] == 0 {
                self.unconfirmed.insert(loc);
            }
        }
        for v in &self.values {
            if let (Some(i), Some(role)) = (v.kafka_client, v.role.as_deref()) {
                if matches!(
                    Role::of(role),
                    Some(Role::KafkaConsumer | Role::KafkaProducer)
                ) && self.kafka_clients[i].role.is_none()
                {
                    self.kafka_clients[i].role = Some(role.to_string());
                }
            }
        }
        let mut stack = vec![body];
        while let Some(n) = stack.pop() {
            match n {
                Node::Seq(v) | Node::Branch(v) => stack.extend(v.iter_mut()),
                Node::Loop { body, .. } | Node::Closure { body, .. } => stack.push(body),
                Node::ResultBranch { scrutinee, ok, err } => {
                    stack.push(scrutinee);
                    stack.push(ok);
                    stack.push(err);
                }
                Node::Event(e) => match &mut e.kind {
                    EventKind::Begin { tx, used, .. } => {
                        let t = *tx as usize;
                        *used = self.uses[t] > self.finishes[t];
                    }
                    EventKind::Write { unchecked, .. } => {
                        *unchecked = self.unchecked.contains(&e.loc)
                    }
                    EventKind::Publish {
                        confirm: Some(c), ..
                    } => *c = !self.unconfirmed.contains(&e.loc),
                    EventKind::Call(c) => {
                        c.result_unused = self.unused_calls.contains(&e.loc);
                        c.confirm_unread =
                            c.result_unused && self.calls_awaited_once.contains(&e.loc);
                        c.entries_unread = self
                            .unread_calls
                            .contains(&(e.loc.span.line, e.loc.span.column));
                        for (_, n) in c.closures.iter_mut() {
                            stack.push(n);
                        }
                    }
                    _ => {}
                },
                Node::Exit(_) => {}
            }
        }
    }

    /// The event a statement's own call chain ends in (`pool.begin().await?`,
    /// `sqlx::query(..).execute(..).await?`), if it is a call chain.
    pub(super) fn last_event_of_statement<'n>(e: &Expr, nodes: &'n [Node]) -> Option<&'n Event> {
        let mut e = strip(e);
        while let Expr::Try(t) = e {
            e = strip(&t.expr);
            if let Expr::Await(a) = e {
                e = strip(&a.base);
            }
        }
        let mut awaited = false;
        if let Expr::Await(a) = e {
            e = strip(&a.base);
            awaited = true;
        }
        // (`claim.await`: a binding of an operation deferred until awaited, run here.)
        let operation = matches!(e, Expr::MethodCall(_) | Expr::Call(_) | Expr::Macro(_));
        if !(operation || (awaited && matches!(e, Expr::Path(_)))) {
            return None;
        }
        for n in nodes.iter().rev() {
            match n {
                // `op?` puts the operation on the success edge: `[op] | return Err`.
                Node::Branch(alts) => match alts.as_slice() {
                    [Node::Seq(ok), Node::Exit(_) | Node::Seq(_)] => match ok.as_slice() {
                        [Node::Event(ev)] => return Some(ev),
                        _ => continue,
                    },
                    _ => continue,
                },
                Node::Exit(_) => continue,
                // The handling of its error, right after it.
                Node::Event(Event {
                    kind: EventKind::ErrorIgnored { .. },
                    ..
                }) => continue,
                // A closure mapping its error (`.map_err(|_| StatusCode::..)`) that
                // does nothing the model sees.
                Node::Closure { body, .. } if body.is_empty() => continue,
                Node::Event(ev) => return Some(ev),
                _ => return None,
            }
        }
        None
    }

    /// A confirmable publish a statement awaits only once (`basic_publish(..).await?;`):
    /// the confirmation the first await returns is dropped.
    pub(super) fn unconfirmed_publish(&self, e: &Expr, nodes: &[Node]) -> Option<Loc> {
        let ev = Self::last_event_of_statement(e, nodes)?;
        if !matches!(ev.kind, EventKind::Publish { .. }) || !self.confirmable.contains(&ev.loc) {
            return None;
        }
        (self.awaits_of(e) < 2).then(|| ev.loc.clone())
    }

    /// The publish whose pending confirmation `e` is, as it is or in `Ok(..)`: a
    /// name bound to it (`let pending = ch.basic_publish(..).await?;`).
    pub(super) fn held_publish(&self, e: &Expr) -> Option<Loc> {
        let mut e = strip(e);
        let results = &self.cx.apis.std.results;
        while let Expr::Call(c) = e {
            let ok = matches!(strip(&c.func), Expr::Path(p) if p.path.get_ident()
                .is_some_and(|i| results.side(&i.to_string()) == Some(true)));
            match (ok, c.args.first()) {
                (true, Some(a)) if c.args.len() == 1 => e = strip(a),
                _ => return None,
            }
        }
        let Expr::Path(p) = e else { return None };
        let v = self.lookup(&p.path.get_ident()?.to_string())?;
        (self.bound_publishes.iter())
            .find(|(b, _)| *b == v)
            .map(|(_, loc)| loc.clone())
    }

    /// How many times a statement's call chain is awaited at its end (through `?`
    /// and the standard methods that keep a result).
    fn awaits_of(&self, e: &Expr) -> usize {
        let mut awaits = 0;
        let mut cur = strip(e);
        loop {
            match cur {
                Expr::Try(t) => cur = strip(&t.expr),
                Expr::Await(a) => {
                    awaits += 1;
                    cur = strip(&a.base);
                }
                Expr::MethodCall(m) if self.cx.apis.std.aliases.contains(&m.method.to_string()) => {
                    cur = strip(&m.receiver)
                }
                _ => return awaits,
            }
        }
    }

    /// The call into the crate a statement's own call chain ends in, when the
    /// statement awaits it at most once (`helper(..).await?`): noted, so that a
    /// pending confirmation it returns and the statement drops is known unread.
    pub(super) fn note_call_awaited_once(&mut self, e: &Expr, nodes: &[Node]) {
        if let Some(loc) = Self::crate_call_of_statement(e, nodes) {
            if self.awaits_of(e) < 2 {
                self.calls_awaited_once.insert(loc);
            }
        }
    }

    /// The call into the crate a statement's own call chain ends in.
    pub(super) fn crate_call_of_statement(e: &Expr, nodes: &[Node]) -> Option<Loc> {
        match Self::last_event_of_statement(e, nodes) {
            Some(ev) if matches!(ev.kind, EventKind::Call(_)) => Some(ev.loc.clone()),
            _ => None,
        }
    }

    /// `e` names the call result bound by the statement just before, with nothing
    /// emitted since: a match on it splits by the call's outcome.
    pub(super) fn bound_outcome_value(&self, e: &Expr, out: &[Node]) -> Option<ValueId> {
        let Expr::Path(p) = strip(e) else {
            return None;
        };
        let v = p
            .path
            .get_ident()
            .and_then(|id| self.lookup(&id.to_string()))?;
        (self.last_outcome == Some((v, out.len(), out.as_ptr() as usize))).then_some(v)
    }

    /// The bound outcome a method chain starts from, through the methods that map
    /// or keep a result (`r.map(..).map_err(..)`).
    pub(super) fn bound_chain_root(&self, e: &Expr, out: &[Node]) -> Option<ValueId> {
        let results = &self.cx.apis.std.results;
        let mut e = strip(e);
        while let Expr::MethodCall(mc) = e {
            let m = mc.method.to_string();
            if !results.keeps.contains(&m) {
                return None;
            }
            e = strip(&mc.receiver);
        }
        self.bound_outcome_value(e, out)
    }

    /// The error of the bound outcome `v` is handled by the marker `node` (the
    /// first node of the arm that handles it).
    pub(super) fn note_handled_outcome(&mut self, v: Option<ValueId>, node: Option<&Node>) {
        if let (Some(v), Some(Node::Event(ev))) = (v, node) {
            if matches!(ev.kind, EventKind::ErrorIgnored { .. }) {
                self.handled_outcomes.push((v, ev.loc.clone()));
            }
        }
    }

    /// `res?`, `return res` or a tail `res` (through methods that keep its failure,
    /// `res.map_err(..)?`) on an outcome whose error a test handled: the error is
    /// propagated after all. Pushes the two edges and says whether it did.
    pub(super) fn propagate_outcome(&self, e: &Expr, out: &mut Vec<Node>) -> bool {
        let keeps = &self.cx.apis.std.results.keeps;
        let mut inner = strip(e);
        while let Expr::MethodCall(mc) = inner {
            if !keeps.iter().any(|k| mc.method == k) {
                break;
            }
            inner = strip(&mc.receiver);
        }
        let Expr::Path(p) = inner else {
            return false;
        };
        let Some(v) = p
            .path
            .get_ident()
            .and_then(|id| self.lookup(&id.to_string()))
        else {
            return false;
        };
        let (Some(ok), Some(err)) = (
            self.outcome_edge(v, false, e),
            self.outcome_edge(v, true, e),
        ) else {
            return false;
        };
        out.push(Node::Branch(vec![
            Node::Seq(vec![ok]),
            Node::Seq(vec![err, Node::Exit(ExitKind::Return { err: Some(true) })]),
        ]));
        true
    }

    /// The edge of the outcome `v` holds (read at `e`) where it is an error (`err`)
    /// or a success, when a test handled its error before: `None` when none did.
    pub(super) fn outcome_edge(&self, v: ValueId, err: bool, e: &Expr) -> Option<Node> {
        let handled: Vec<Loc> = self
            .handled_outcomes
            .iter()
            .filter(|(w, _)| *w == v)
            .map(|(_, l)| l.clone())
            .collect();
        if handled.is_empty() {
            return None;
        }
        let sp = expr_span(e);
        Some(Node::Event(Event {
            kind: EventKind::ErrorPropagated { handled, err },
            loc: self.cx.loc(sp, sp),
            text: self.values[v as usize].name.clone(),
            describe: "outcome read".into(),
        }))
    }

    /// The binding a plain path names (`ack` in `match ack { .. }`, `&ack`).
    pub(super) fn path_value(&self, e: &Expr) -> Option<ValueId> {
        let Expr::Path(p) = strip(e) else {
            return None;
        };
        self.lookup(&p.path.get_ident()?.to_string())
    }

    /// The claim (`ON CONFLICT DO NOTHING`) a statement's own call chain ends in.
    pub(super) fn claim_of_statement(e: &Expr, nodes: &[Node]) -> Option<Loc> {
        Self::claim_target_of_statement(e, nodes).map(|(loc, _)| loc)
    }

    /// The claim a statement's call chain ends in, with the connection it runs on:
    /// one that says a repeat in its result (`ON CONFLICT DO NOTHING`: rows
    /// affected), or a plain insert, whose repeat is an error, when the statement
    /// neither propagates nor unwraps that error (`let _ = insert.await`,
    /// `insert.await.ok();`). Which of them write a dedup record the analysis decides.
    pub(super) fn claim_target_of_statement(
        e: &Expr,
        nodes: &[Node],
    ) -> Option<(Loc, Option<ValueId>)> {
        match Self::last_event_of_statement(e, nodes) {
            Some(ev) => match &ev.kind {
                EventKind::Write { sql, target, .. }
                    if sql.ignores_conflict
                        || (sql.verb == "INSERT"
                            && !sql.upsert
                            && !super::outcome::panics_or_propagates(e)) =>
                {
                    Some((ev.loc.clone(), *target))
                }
                _ => None,
            },
            None => None,
        }
    }

    /// A statement that begins a transaction and keeps it only in a binding (or
    /// nowhere): the transaction counts as used only if the binding is used.
    /// (Not one whose transaction is an argument of the statement's call:
    /// `save(id, t.transaction()).await?`, `save` unknown, passes it on.)
    pub(super) fn reset_begin_uses(&mut self, e: &Expr, nodes: &[Node]) {
        if let Some(Event {
            kind: EventKind::Begin {
                tx, fresh: true, ..
            },
            loc,
            ..
        }) = Self::last_event_of_statement(e, nodes)
        {
            if self.is_outer_call(e, loc) {
                self.uses[*tx as usize] = 0;
            }
        }
    }

    /// Whether the event at `loc` is the call `e` makes, through `?`, `.await` and
    /// the methods that pass a value through (`.unwrap()`, `.context(..)`).
    fn is_outer_call(&self, e: &Expr, loc: &Loc) -> bool {
        let mut e = strip(e);
        loop {
            e = match e {
                Expr::Try(t) => strip(&t.expr),
                Expr::Await(a) => strip(&a.base),
                Expr::MethodCall(m) if self.cx.apis.std.aliases.contains(&m.method.to_string()) => {
                    strip(&m.receiver)
                }
                _ => break,
            };
        }
        match e {
            Expr::MethodCall(m) => self.cx.loc(m.method.span(), m.paren_token.span.close()) == *loc,
            Expr::Call(c) => self.cx.loc(expr_span(&c.func), c.paren_token.span.close()) == *loc,
            _ => true,
        }
    }

    /// A write to a pool or connection (or to a key store, `CallSpec::store`) commits
    /// by itself unless a transaction is open on it; a transaction or unknown target
    /// may not.
    pub(super) fn autocommit_target(&self, target: Option<ValueId>, spec: &CallSpec) -> bool {
        match target {
            Some(t) => matches!(
                self.values[t as usize].role.as_deref().and_then(Role::of),
                Some(Role::DbPool | Role::DbConn | Role::RedisConn)
            ),
            None => spec.store.is_some(),
        }
    }

    /// Whether an argument is a store whose writes commit by themselves (a pool, a
    /// connection: `&pool`, `&mut conn`) or a transaction (`&mut *tx`); `None` for a
    /// value of another or an unknown role.
    pub(super) fn autocommit_store(&self, a: &super::Info) -> Option<bool> {
        let role = a
            .value
            .and_then(|v| self.values[v as usize].role.as_deref())
            .or(a.role.as_deref());
        match role.and_then(Role::of)? {
            Role::DbPool | Role::DbConn | Role::RedisConn => Some(true),
            Role::DbTx => Some(false),
            _ => None,
        }
    }

    /// The error of the operation just lowered is handled at `sp` and the code goes on.
    pub(super) fn error_ignored(&self, sp: PmSpan, how: &str, told: bool) -> Node {
        Node::Event(Event {
            kind: EventKind::ErrorIgnored {
                told,
                arm: matches!(
                    how,
                    "if let Err(..)" | "Err(..) =>" | "let Ok(..) = .. else"
                ),
            },
            loc: self.cx.loc(sp, sp),
            text: how.to_string(),
            describe: "error handled".into(),
        })
    }

    /// A `let` binding a publish's pending confirmation (`confirmation`) or the
    /// confirmation it gave (`confirmed`): the name bound is noted as such.
    pub(super) fn note_confirmation_binding(
        &mut self,
        local: &syn::Local,
        confirmation: Option<Option<Loc>>,
        confirmed: Option<Option<Loc>>,
    ) {
        let syn::Pat::Ident(pi) = crate::frontend::rust::untyped(&local.pat) else {
            return;
        };
        if let Some(v) = self.lookup(&pi.ident.to_string()) {
            if let Some(publish) = confirmation {
                self.confirmations.push((v, publish));
            }
            if let Some(publish) = confirmed {
                self.confirmed_values.push((v, publish));
            }
        }
    }

    /// The operation `deferred_operation` took out of a `let`, kept under its name.
    pub(super) fn bind_deferred(&mut self, local: &syn::Local, op: Option<Node>) {
        if let (Some(op), syn::Pat::Ident(pi)) = (op, crate::frontend::rust::untyped(&local.pat)) {
            if let Some(v) = self.lookup(&pi.ident.to_string()) {
                self.values[v as usize].deferred = Some(Box::new(op));
            }
        }
    }

    /// `let write = sqlx::query(..).execute(&pool);` … `write.await`: a write or an
    /// external call bound as its future, unawaited, to a name the body awaits as it
    /// is. A future runs when awaited: the operation's event (the last node from
    /// `start`) is taken out, to run where the name is awaited or handed to a call
    /// (`deferred`), and the error handling there is the operation's. Claims keep
    /// their own bookkeeping (`bound_claims`).
    pub(super) fn deferred_operation(
        &self,
        local: &syn::Local,
        claim: bool,
        start: usize,
        out: &mut Vec<Node>,
    ) -> Option<Node> {
        let init = local.init.as_ref().filter(|i| i.diverge.is_none())?;
        let syn::Pat::Ident(pi) = crate::frontend::rust::untyped(&local.pat) else {
            return None;
        };
        if claim
            || !self.awaited_names.contains(&pi.ident.to_string())
            || !matches!(strip(&init.expr), Expr::MethodCall(_) | Expr::Call(_))
            || super::super::chain::awaits(&init.expr)
            || out.len() != start + 1
        {
            return None;
        }
        match &out[start] {
            Node::Event(Event {
                kind: EventKind::Write { .. } | EventKind::External { .. },
                ..
            }) => out.pop(),
            _ => None,
        }
    }
}
