//! Batch calls whose response carries per-entry failures (docs/what-is-analyzed.md, "Batch calls with
//! per-entry results"): which of a function's batch calls have a response nothing
//! reads to act on its failed entries. The packs say which calls are batches and
//! which accessors of their response tell the failed entries (`entry_failures`).
//!
//! The response is unread when the call's result is dropped (`batch.send().await?;`,
//! `let _ = ..`) or bound to a name whose every look at the failed entries only
//! logs: inside a logging or formatting macro, in the condition of an `if` /
//! `match` whose branches only log, in a loop over its entries whose body only logs,
//! or through a local bound to a view of them (`let n = out.failed_put_count();`)
//! used only so. Any other use (the response returned, passed to a function, its
//! failed entries iterated to retry or record them, an `if` on them that returns,
//! retries or writes) counts as acting on them: unknown means silent.

use proc_macro2::{Span as PmSpan, TokenTree};
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Block, Expr, Pat, Stmt};

use super::super::chain;
use super::batch_failed::{failure_sides, FailureSide};
use super::batch_uses::{CalleeLogs, Uses};
use crate::apis::{Apis, MacroKind, ResultSpec};

/// How a function body uses the responses of its batch calls and the results of its
/// other calls.
#[derive(Default)]
pub(super) struct BatchUses {
    /// Batch calls (method name spans) whose per-entry failures nothing acts on.
    pub(super) unread: Vec<PmSpan>,
    /// Method calls whose value a statement drops without awaiting it
    /// (`producer.send(..);`, `let _ = producer.send(..);`: a delivery future
    /// dropped, docs/what-is-analyzed.md).
    pub(super) dropped: Vec<PmSpan>,
    /// Batch calls whose response the function returns (its tail, `Ok(..)` of it,
    /// `return`): whether its failed entries are acted on is the caller's to say.
    pub(super) returned: Vec<PmSpan>,
    /// Other calls (the start of a path call, a method's name) whose result is
    /// treated as a batch response nothing acts on would be: dropped, `?`-ed, matched
    /// with `Ok(_)`, only logged. When the callee returns a batch's response, that
    /// batch's failed entries go unread here.
    pub(super) unread_calls: Vec<PmSpan>,
    /// The `if`s whose one side is where a batch call's entries failed
    /// (`batch_failed.rs`).
    pub(super) failure_sides: Vec<FailureSide>,
    /// The names the body awaits as they are (`fut.await`): a binding of an
    /// operation's future runs the operation there.
    pub(super) awaited_names: Vec<String>,
}

/// How the function body `block` uses its batch calls' responses ([`BatchUses`]).
/// `logs` says whether the crate's function of a name only logs what its argument
/// at a place holds ([`CalleeLogs`]).
pub(super) fn unread_batches(apis: &Apis, logs: CalleeLogs<'_>, block: &Block) -> BatchUses {
    // A helper's result may be any batch's response: any accessor of one reads it.
    let mut all: Vec<String> = apis.entry_failures.values().flatten().cloned().collect();
    all.sort();
    all.dedup();
    let mut v = Blocks {
        apis,
        logs,
        all: &all,
        futures: Vec::new(),
        out: BatchUses::default(),
    };
    if !apis.entry_failures.is_empty() {
        if let Some(Stmt::Expr(tail, None)) = block.stmts.last() {
            v.returned(tail);
            v.returned_binding(block, tail);
        }
    }
    v.visit_block(block);
    v.out
}

/// A batch call's method name and its response's failure accessors.
type BatchSite<'a> = (PmSpan, &'a [String]);

struct Blocks<'a> {
    apis: &'a Apis,
    logs: CalleeLogs<'a>,
    /// Every batch response's failure accessors (the packs' `entry_failures`).
    all: &'a [String],
    /// Batch calls whose future a `let` in an enclosing block holds unawaited (`let
    /// fut = client.put_record_batch()…send();`), by name: `fut.await` is the call's
    /// response, there or in a block nested below (`Box::pin(async move { fut.await })`).
    futures: Vec<(String, Option<BatchSite<'a>>)>,
    out: BatchUses,
}

/// The method calls of a chain whose value is dropped unawaited (through `?`,
/// parentheses and method calls on the result); none when the chain awaits.
fn unawaited_chain(e: &Expr, out: &mut Vec<PmSpan>) {
    if !chain::awaits(e) {
        out.extend(chain::links(e).filter_map(|l| match l {
            Expr::MethodCall(mc) => Some(mc.method.span()),
            _ => None,
        }));
    }
}

impl<'ast> Visit<'ast> for Blocks<'_> {
    fn visit_block(&mut self, b: &'ast Block) {
        for stmt in &b.stmts {
            match stmt {
                Stmt::Expr(e, semi) => {
                    if semi.is_some() {
                        unawaited_chain(e, &mut self.out.dropped);
                    }
                    self.ok_side_dropped(e);
                }
                Stmt::Local(local) => {
                    let wild = match &local.pat {
                        Pat::Wild(_) => true,
                        Pat::Ident(pi) => {
                            pi.ident.to_string().starts_with('_') && pi.subpat.is_none()
                        }
                        _ => false,
                    };
                    if let Some(init) = local.init.as_ref().filter(|i| wild && i.diverge.is_none())
                    {
                        unawaited_chain(&init.expr, &mut self.out.dropped);
                    }
                }
                _ => {}
            }
        }
        let held = self.futures.len();
        if !self.apis.entry_failures.is_empty() {
            self.batches(b);
        }
        syn::visit::visit_block(self, b);
        self.futures.truncate(held);
    }

    fn visit_expr_await(&mut self, a: &'ast syn::ExprAwait) {
        let mut base = &*a.base;
        while let Expr::Paren(p) = base {
            base = &p.expr;
        }
        if let Some(i) = match base {
            Expr::Path(p) => p.path.get_ident(),
            _ => None,
        } {
            self.out.awaited_names.push(i.to_string());
        }
        syn::visit::visit_expr_await(self, a);
    }

    // An arm whose body is a bare `match` / `if let` (no block around it).
    fn visit_arm(&mut self, a: &'ast syn::Arm) {
        if !self.apis.entry_failures.is_empty() && !matches!(&*a.body, Expr::Block(_)) {
            if let Some((span, batch)) = self.matched(&a.body) {
                self.push(span, batch);
            }
        }
        syn::visit::visit_arm(self, a);
    }

    fn visit_expr_return(&mut self, r: &'ast syn::ExprReturn) {
        if let Some(e) = &r.expr {
            self.returned(e);
        }
        syn::visit::visit_expr_return(self, r);
    }

    // Closures and nested functions return their own values.
    fn visit_expr_closure(&mut self, c: &'ast syn::ExprClosure) {
        let mut inner = Blocks {
            apis: self.apis,
            logs: self.logs,
            all: self.all,
            futures: self.futures.clone(),
            out: BatchUses::default(),
        };
        syn::visit::visit_expr_closure(&mut inner, c);
        self.out.unread.extend(inner.out.unread);
        self.out.dropped.extend(inner.out.dropped);
        self.out.unread_calls.extend(inner.out.unread_calls);
        self.out.failure_sides.extend(inner.out.failure_sides);
        self.out.awaited_names.extend(inner.out.awaited_names);
    }
}

impl<'a> Blocks<'a> {
    /// `e` inside the success wrappers around it (`Ok(Ok(x))`: `x`), and whether it
    /// stopped at another call (`Ok(f(x))`: `f(x)`, false).
    fn inside_ok<'e>(&self, mut e: &'e Expr) -> (&'e Expr, bool) {
        while let Expr::Call(c) = e {
            let ok = matches!(&*c.func, Expr::Path(p) if p.path.segments.last()
                .is_some_and(|s| self.apis.std.results.side(&s.ident.to_string()) == Some(true)));
            match c.args.first() {
                Some(a) if ok && c.args.len() == 1 => e = a,
                _ => return (e, false),
            }
        }
        (e, true)
    }

    /// `e`, a value the function returns: a batch call's response (`Ok(..)` of it).
    fn returned(&mut self, e: &Expr) {
        let (e, _) = self.inside_ok(e);
        if let Some((span, _)) = batch_site(self.apis, e) {
            self.out.returned.push(span);
        }
    }

    /// `let out = client.batch()…send().await?; … Ok(out)`: the binding the body's
    /// `tail` returns holds a batch's response that nothing before reads.
    fn returned_binding(&mut self, block: &Block, tail: &Expr) {
        let (e, true) = self.inside_ok(tail) else {
            return;
        };
        let Expr::Path(p) = e else { return };
        let Some(name) = p.path.get_ident().map(|i| i.to_string()) else {
            return;
        };
        let stmts = &block.stmts[..block.stmts.len() - 1];
        let Some(i) = stmts.iter().rposition(|s| match s {
            Stmt::Local(l) => binding(&l.pat) == Some(Some(name.clone())),
            _ => false,
        }) else {
            return;
        };
        let Stmt::Local(local) = &stmts[i] else {
            return;
        };
        let Some(init) = local.init.as_ref().filter(|i| i.diverge.is_none()) else {
            return;
        };
        let Some((span, fields)) = batch_site(self.apis, &init.expr) else {
            return;
        };
        let u = Uses {
            apis: self.apis,
            logs: self.logs,
            name: &name,
            fields,
            derived: false,
        };
        if !stmts[i + 1..].iter().any(|s| u.stmt_acts(s)) {
            self.out.returned.push(span);
        }
    }

    /// The batch call, or else the other call, `e` runs as a statement's or a
    /// binding's whole value; `true` for a batch call.
    fn site(&self, e: &Expr) -> Option<(PmSpan, &'a [String], bool)> {
        if let Some((span, fields)) = batch_site(self.apis, e) {
            return Some((span, fields, true));
        }
        if let Some(held) = self.held_future(e) {
            return held.map(|(span, fields)| (span, fields, true));
        }
        call_site(self.apis, e).map(|span| (span, self.all, false))
    }

    /// `fut.await` (through `?` and parentheses) on a name a `let` bound to a batch
    /// call's unawaited future: `Some(Some(..))` that call, `Some(None)` a name bound
    /// to something else since.
    fn held_future(&self, e: &Expr) -> Option<Option<BatchSite<'a>>> {
        let mut e = e;
        loop {
            match e {
                Expr::Try(t) => e = &t.expr,
                Expr::Paren(p) => e = &p.expr,
                Expr::Await(a) => {
                    let Expr::Path(p) = &*a.base else {
                        return None;
                    };
                    let name = p.path.get_ident()?.to_string();
                    return (self.futures.iter().rev())
                        .find(|(n, _)| *n == name)
                        .map(|(_, site)| *site);
                }
                _ => return None,
            }
        }
    }

    /// A `let` binding `name` to `init`: a batch call's future held unawaited, or
    /// (shadowing it) anything else.
    fn note_future(&mut self, name: &str, init: &Expr) {
        let held = (!chain::awaits(init))
            .then(|| batch_site(self.apis, init))
            .flatten();
        if held.is_some() || self.futures.iter().any(|(n, _)| n == name) {
            self.futures.push((name.to_string(), held));
        }
    }

    fn push(&mut self, span: PmSpan, batch: bool) {
        if batch {
            self.out.unread.push(span);
        } else {
            self.out.unread_calls.push(span);
        }
    }

    fn batches(&mut self, b: &Block) {
        // Built on the first binding of a call's result: which later statements can
        // look at a name at all, so each binding reads only those (not the rest of
        // the block: a body of n bindings stays linear).
        let mut names: Option<Names> = None;
        for (i, stmt) in b.stmts.iter().enumerate() {
            match stmt {
                Stmt::Expr(e, semi) => {
                    if semi.is_some() {
                        if let Some((span, _, batch)) = self.site(e) {
                            self.push(span, batch);
                            continue;
                        }
                    }
                    if let Some((span, batch)) = self.matched(e) {
                        self.push(span, batch);
                    }
                }
                Stmt::Local(local) => {
                    let Some(init) = local.init.as_ref() else {
                        continue;
                    };
                    // `let out = match call { Ok(r) => r, Err(e) => return .. };` and
                    // `let Ok(out) = call else { return .. };`: `out` is the response,
                    // as it is after `?`.
                    let (pat, value) = match self.ok_bound(local) {
                        Some((name, scrutinee)) => (Some(Some(name)), scrutinee),
                        None if init.diverge.is_none() => (binding(&local.pat), &*init.expr),
                        None => continue,
                    };
                    let site = self.site(value);
                    if let Some(Some(name)) = &pat {
                        self.note_future(name, value);
                    }
                    let Some((span, fields, batch)) = site else {
                        continue;
                    };
                    if let (Some(Some(name)), true) = (&pat, batch) {
                        let later = &b.stmts[i + 1..];
                        failure_sides(
                            self.apis,
                            later,
                            name,
                            span,
                            fields,
                            &mut self.out.failure_sides,
                        );
                    }
                    let unread = match pat {
                        Some(None) => true,
                        Some(Some(name)) => {
                            let u = Uses {
                                apis: self.apis,
                                logs: self.logs,
                                name: &name,
                                fields,
                                derived: false,
                            };
                            let names = names.get_or_insert_with(|| Names::of(&b.stmts));
                            !u.acts_after(&b.stmts, names.after(&name, i))
                        }
                        None => false,
                    };
                    if unread {
                        self.push(span, batch);
                    }
                }
                _ => {}
            }
        }
    }
}

impl Blocks<'_> {
    /// A `let` that binds the `Ok` side of a call's result and leaves the function
    /// (or the loop) otherwise, as `?` does: `let out = match call { Ok(r) => r,
    /// Err(e) => { error!(..); return .. } };`, `let Ok(out) = call else { .. };`.
    /// The name bound and the call's expression.
    fn ok_bound<'e>(&self, local: &'e syn::Local) -> Option<(String, &'e Expr)> {
        let init = local.init.as_ref()?;
        let results = &self.apis.std.results;
        if init.diverge.is_some() {
            return match arm_holds(results, &local.pat) {
                ArmHolds::Name(name) => Some((name, &*init.expr)),
                _ => None,
            };
        }
        let name = binding(&local.pat).flatten()?;
        let Expr::Match(m) = &*init.expr else {
            return None;
        };
        let mut yields = false;
        for arm in &m.arms {
            if arm.guard.is_some() {
                return None;
            }
            match arm_holds(results, &arm.pat) {
                ArmHolds::Name(inner) if yields_name(&arm.body, &inner) => yields = true,
                _ if self.diverges(&arm.body) => {}
                _ => return None,
            }
        }
        yields.then_some((name, &*m.expr))
    }

    fn diverges(&self, e: &Expr) -> bool {
        diverges(self.apis, e)
    }

    /// A statement `if let Err(..) = call { .. }`, `if call.is_err() { .. }` or
    /// `match call { .. }` whose patterns never bind the `Ok` side (`Err(e)`,
    /// `Ok(_)`, `_`): the value inside the `Ok` (a delivery future) is dropped
    /// unawaited, as a dropped statement's is.
    fn ok_side_dropped(&mut self, e: &Expr) {
        let (scrutinee, mut pats) = match e {
            Expr::If(i) => match &*i.cond {
                Expr::Let(l) => (&*l.expr, vec![&*l.pat]),
                // `if call.is_err() { .. }`: only the call's failure is read.
                cond => return unawaited_chain(cond, &mut self.out.dropped),
            },
            Expr::Match(m) => (&*m.expr, m.arms.iter().map(|a| &a.pat).collect()),
            _ => return,
        };
        if !pats.iter_mut().any(|p| self.binds_ok(p)) {
            unawaited_chain(scrutinee, &mut self.out.dropped);
        }
    }

    /// Whether a pattern may hold a result's `Ok` value by a name (unknown shapes
    /// count as holding it: unknown means silent).
    fn binds_ok(&self, pat: &Pat) -> bool {
        match pat {
            Pat::Wild(_) => false,
            Pat::Ident(pi) => !pi.ident.to_string().starts_with('_') || pi.subpat.is_some(),
            Pat::TupleStruct(ts) => {
                let Some(last) = ts.path.segments.last() else {
                    return true;
                };
                match self.apis.std.results.side(&last.ident.to_string()) {
                    Some(false) => false,
                    Some(true) => ts.elems.iter().any(|p| self.binds_ok(p)),
                    None => true,
                }
            }
            Pat::Or(o) => o.cases.iter().any(|p| self.binds_ok(p)),
            Pat::Rest(_) => false,
            _ => true,
        }
    }

    /// A `match` or `if let` on a batch call's result whose `Ok` side never acts on
    /// the response: every arm that can hold it (`Ok(..)`, `_`) drops it or only logs
    /// through the name it binds. The batch call's place then.
    fn matched(&self, e: &Expr) -> Option<(PmSpan, bool)> {
        match e {
            Expr::Match(m) => {
                let (span, fields, batch) = self.site(&m.expr)?;
                let mut holds = false;
                for arm in &m.arms {
                    let guard = arm.guard.as_ref().map(|(_, g)| &**g);
                    match self.arm_reads(&arm.pat, guard, &arm.body, fields) {
                        Some(true) => return None,
                        Some(false) => holds = true,
                        None => {}
                    }
                }
                holds.then_some((span, batch))
            }
            Expr::If(i) => {
                let Expr::Let(l) = &*i.cond else {
                    return None;
                };
                let (span, fields, batch) = self.site(&l.expr)?;
                let body = Expr::Block(syn::ExprBlock {
                    attrs: Vec::new(),
                    label: None,
                    block: i.then_branch.clone(),
                });
                match self.arm_reads(&l.pat, None, &body, fields) {
                    Some(false) => Some((span, batch)),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Whether an arm with pattern `pat` acts on the response: `None` when the
    /// pattern cannot hold it (`Err(..)`), `Some(true)` when it may act (a pattern
    /// not followed counts as acting: unknown means silent).
    fn arm_reads(
        &self,
        pat: &Pat,
        guard: Option<&Expr>,
        body: &Expr,
        fields: &[String],
    ) -> Option<bool> {
        let name = match arm_holds(&self.apis.std.results, pat) {
            ArmHolds::ErrSide => return None,
            ArmHolds::Nothing => return Some(false),
            ArmHolds::Unknown => return Some(true),
            ArmHolds::Name(name) => name,
        };
        let u = Uses {
            apis: self.apis,
            logs: self.logs,
            name: &name,
            fields,
            derived: false,
        };
        // A guard that tests the response (`Ok(out) if out.failed().is_empty()`)
        // tells the failed entries apart.
        Some(guard.is_some_and(|g| u.mentions(g)) || u.expr_acts(body))
    }
}

/// What an arm's pattern keeps of a call's result.
pub(super) enum ArmHolds {
    /// The error side (`Err(..)`): the request failed, no response.
    ErrSide,
    /// The success side dropped (`Ok(_)`, `Ok(..)`, `_`).
    Nothing,
    /// The response bound to a name (`Ok(out)`).
    Name(String),
    /// A pattern not followed (destructuring, a type of its own).
    Unknown,
}

pub(super) fn arm_holds(results: &ResultSpec, pat: &Pat) -> ArmHolds {
    let inner = match pat {
        Pat::Wild(_) => return ArmHolds::Nothing,
        Pat::TupleStruct(ts) => {
            let Some(last) = ts.path.segments.last() else {
                return ArmHolds::Unknown;
            };
            match (results.side(&last.ident.to_string()), ts.elems.first()) {
                (Some(false), _) => return ArmHolds::ErrSide,
                (Some(true), None) => return ArmHolds::Nothing,
                (Some(true), Some(p)) if ts.elems.len() == 1 => p,
                _ => return ArmHolds::Unknown,
            }
        }
        _ => return ArmHolds::Unknown,
    };
    match inner {
        Pat::Wild(_) | Pat::Rest(_) => ArmHolds::Nothing,
        Pat::Ident(pi) if pi.subpat.is_none() => ArmHolds::Name(pi.ident.to_string()),
        _ => ArmHolds::Unknown,
    }
}

/// An arm's body that is the name its pattern bound (`Ok(r) => r`, `=> { r }`).
fn yields_name(body: &Expr, name: &str) -> bool {
    match body {
        Expr::Path(p) => p.path.is_ident(name),
        Expr::Block(b) => match &b.block.stmts[..] {
            [Stmt::Expr(e, None)] => yields_name(e, name),
            _ => false,
        },
        _ => false,
    }
}

/// The name a `let` binds: `Some(None)` for `_`, `None` for a pattern that
/// destructures (not followed).
pub(super) fn binding(p: &Pat) -> Option<Option<String>> {
    match p {
        Pat::Wild(_) => Some(None),
        Pat::Ident(i) if i.subpat.is_none() => Some(Some(i.ident.to_string())),
        Pat::Type(t) => binding(&t.pat),
        _ => None,
    }
}

/// The batch call `e` runs, as a statement's or a binding's whole value: the chain
/// `client.batch()…send().await?` (through `.await`, `?` and method calls on the
/// result such as `.map_err(..)`), with the response's failure accessors.
fn batch_site<'a>(apis: &'a Apis, e: &Expr) -> Option<(PmSpan, &'a [String])> {
    for link in chain::links(e) {
        match link {
            Expr::MethodCall(mc) => {
                if let Some(fields) = apis.entry_failures.get(&mc.method.to_string()) {
                    return Some((mc.method.span(), fields));
                }
            }
            // `join_all(chunks.map(|c| client.batch()…send()))`: the joined
            // responses are the batch calls' (the packs' `task_joins`).
            Expr::Call(c) => {
                let Expr::Path(p) = &*c.func else {
                    return None;
                };
                let name = p.path.segments.last()?.ident.to_string();
                if !apis.std.task_joins.contains(&name) {
                    return None;
                }
                return c.args.iter().find_map(|a| mapped_batch(apis, a));
            }
            _ => {}
        }
    }
    None
}

/// The call `e` runs, as a statement's or a binding's whole value, through `.await`,
/// `?` and standard methods on its result (`.map_err(..)`): the start of a path
/// call, the name of a method call.
fn call_site(apis: &Apis, e: &Expr) -> Option<PmSpan> {
    let std = &apis.std;
    for link in chain::links(e) {
        match link {
            Expr::MethodCall(mc) => {
                let m = mc.method.to_string();
                if !std.methods.contains(&m) && !std.aliases.contains(&m) {
                    return Some(mc.method.span());
                }
            }
            Expr::Call(c) => return matches!(&*c.func, Expr::Path(_)).then(|| c.func.span()),
            _ => {}
        }
    }
    None
}

/// The batch call a closure of an iterator adapter (`map`; the packs'
/// `element_closures`) in the chain `e` returns.
fn mapped_batch<'a>(apis: &'a Apis, e: &Expr) -> Option<(PmSpan, &'a [String])> {
    let mut e = e;
    while let Expr::MethodCall(mc) = e {
        if apis.std.element_closures.contains(&mc.method.to_string()) {
            if let Some(Expr::Closure(c)) = mc.args.first() {
                let tail = match &*c.body {
                    Expr::Block(b) => match b.block.stmts.last() {
                        Some(Stmt::Expr(t, None)) => t,
                        _ => return None,
                    },
                    other => other,
                };
                return batch_site(apis, tail);
            }
        }
        e = &mc.receiver;
    }
    None
}

/// The statements of a block that name each identifier (anywhere in them: patterns,
/// paths, fields, macro tokens), by index in order.
struct Names {
    by_name: foldhash::HashMap<String, Vec<usize>>,
}

impl Names {
    fn of(stmts: &[Stmt]) -> Names {
        let mut c = Idents {
            by_name: Default::default(),
            buf: String::new(),
            at: 0,
        };
        for (i, s) in stmts.iter().enumerate() {
            c.at = i;
            c.visit_stmt(s);
        }
        Names { by_name: c.by_name }
    }

    /// The statements after the `i`th that name `name`.
    fn after(&self, name: &str, i: usize) -> &[usize] {
        let at = self.by_name.get(name).map_or(&[][..], Vec::as_slice);
        &at[at.partition_point(|&j| j <= i)..]
    }
}

/// Collects [`Names`]: each identifier's text is written into one reused buffer, so
/// only a name not seen before allocates.
struct Idents {
    by_name: foldhash::HashMap<String, Vec<usize>>,
    buf: String,
    /// The index of the statement being visited.
    at: usize,
}

impl Idents {
    fn note(&mut self, i: &proc_macro2::Ident) {
        use std::fmt::Write;
        self.buf.clear();
        let _ = write!(self.buf, "{i}");
        let at = match self.by_name.get_mut(self.buf.as_str()) {
            Some(at) => at,
            None => self.by_name.entry(self.buf.clone()).or_default(),
        };
        if at.last() != Some(&self.at) {
            at.push(self.at);
        }
    }

    fn tokens(&mut self, ts: proc_macro2::TokenStream) {
        for t in ts {
            match t {
                TokenTree::Ident(i) => self.note(&i),
                TokenTree::Group(g) => self.tokens(g.stream()),
                _ => {}
            }
        }
    }
}

impl<'ast> Visit<'ast> for Idents {
    fn visit_ident(&mut self, i: &'ast proc_macro2::Ident) {
        self.note(i);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.tokens(m.tokens.clone());
        syn::visit::visit_macro(self, m);
    }
}

/// Whether `e` never gives a value: `return`, `continue`, `break`, a macro that
/// returns an error or aborts, or a block ending in one.
pub(super) fn diverges(apis: &Apis, e: &Expr) -> bool {
    match e {
        Expr::Return(_) | Expr::Continue(_) | Expr::Break(_) => true,
        Expr::Macro(m) => diverging_macro(apis, &m.mac),
        Expr::Block(b) => block_diverges(apis, &b.block),
        _ => false,
    }
}

/// Whether a block ends in a statement that never gives a value (see [`diverges`]).
pub(super) fn block_diverges(apis: &Apis, b: &syn::Block) -> bool {
    match b.stmts.last() {
        Some(Stmt::Expr(e, _)) => diverges(apis, e),
        Some(Stmt::Macro(m)) => diverging_macro(apis, &m.mac),
        _ => false,
    }
}

fn diverging_macro(apis: &Apis, m: &syn::Macro) -> bool {
    let name = m.path.segments.last().map(|s| s.ident.to_string());
    matches!(
        name.and_then(|n| apis.std.macro_kind(&n)),
        Some(MacroKind::ErrorReturn | MacroKind::Abort)
    )
}
