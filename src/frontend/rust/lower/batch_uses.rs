//! How the statements after a binding of a batch call's response use it
//! ([`Uses`], `batch.rs`): whether any of them acts on its failed entries, or only
//! logs them.

use proc_macro2::TokenTree;
use syn::visit::Visit;
use syn::{Block, Expr, Stmt};

use super::batch::{arm_holds, binding, ArmHolds};
use super::strip;
use crate::apis::{Apis, MacroKind};

/// Whether every crate function of a name only logs (or drops) the failed entries
/// of the value its argument at a place holds (the receiver of a method is place
/// 0): [`crate::frontend::rust::FnSig::logs_params`].
pub(super) type CalleeLogs<'a> = &'a dyn Fn(&str, usize) -> bool;

/// The places of the function's parameters (the receiver is place 0) whose value
/// the body looks at only to log it: it names the parameter at least once, and no
/// statement acts on the failed entries it holds ([`Uses`]; any batch's accessors).
/// A caller handing a batch's response to it does not act on the failed entries.
pub(in crate::frontend::rust) fn logged_params(
    apis: &Apis,
    sig: &syn::Signature,
    block: &Block,
) -> Vec<usize> {
    if apis.entry_failures.is_empty() {
        return Vec::new();
    }
    let mut all: Vec<String> = apis.entry_failures.values().flatten().cloned().collect();
    all.sort();
    all.dedup();
    let none = |_: &str, _: usize| false;
    let every: Vec<usize> = (0..block.stmts.len()).collect();
    let mut out = Vec::new();
    for (i, input) in sig.inputs.iter().enumerate() {
        let syn::FnArg::Typed(t) = input else {
            continue;
        };
        let Some(Some(name)) = binding(&t.pat) else {
            continue;
        };
        let u = Uses {
            apis,
            logs: &none,
            name: &name,
            fields: &all,
            derived: false,
        };
        let named = block.stmts.iter().any(|s| u.stmt_mentions(s));
        if named && !u.acts_after(&block.stmts, &every) {
            out.push(i);
        }
    }
    out
}

/// How the statements after a binding use the batch response bound to `name`.
pub(super) struct Uses<'a> {
    pub(super) apis: &'a Apis,
    pub(super) logs: CalleeLogs<'a>,
    pub(super) name: &'a str,
    pub(super) fields: &'a [String],
    /// `name` holds a view of the failed entries themselves (a count, a list), not
    /// the whole response: every use of it looks at them.
    pub(super) derived: bool,
}

impl Uses<'_> {
    /// Whether one of the statements `later` (indices into `stmts`, in order, each
    /// naming the response) acts on it, up to the first that binds the name anew
    /// (`let out = ..`: later statements name another value).
    pub(super) fn acts_after(&self, stmts: &[Stmt], later: &[usize]) -> bool {
        for &j in later {
            let s = &stmts[j];
            // `let failed = out.failed_record_count().unwrap_or(0);`: a view of the
            // failed entries under a new name acts only where that name does
            // (`if failed > 0 { warn!(..) }` only logs).
            if let Some(view) = self.view_binding(s) {
                let u = Uses {
                    apis: self.apis,
                    logs: self.logs,
                    name: &view,
                    fields: self.fields,
                    derived: true,
                };
                let uses: Vec<usize> = (j + 1..stmts.len())
                    .filter(|&k| u.stmt_mentions(&stmts[k]))
                    .collect();
                if u.acts_after(stmts, &uses) {
                    return true;
                }
                continue;
            }
            if self.stmt_acts(s) {
                return true;
            }
            if let Stmt::Local(l) = s {
                if binding(&l.pat).flatten().is_some_and(|n| n == self.name) {
                    return false;
                }
            }
        }
        false
    }

    /// `let n = name.accessor()…;` through standard methods (`unwrap_or(0)`, `len()`)
    /// whose arguments do not name the response: the name `n` it binds.
    fn view_binding(&self, s: &Stmt) -> Option<String> {
        let Stmt::Local(l) = s else { return None };
        let init = l.init.as_ref().filter(|i| i.diverge.is_none())?;
        let name = binding(&l.pat).flatten()?;
        let std = &self.apis.std;
        let mut e = &*init.expr;
        let mut accessor = self.derived;
        loop {
            match e {
                Expr::Paren(p) => e = &p.expr,
                Expr::MethodCall(mc) if !mc.args.iter().any(|a| self.mentions(a)) => {
                    let m = mc.method.to_string();
                    // `.map(|m| m.values().map(Vec::len).sum::<usize>())`: an adapter
                    // whose closure only computes from its own parameters.
                    let computes = std.element_closures.contains(&m)
                        && mc.args.iter().all(|a| computed(std, a));
                    if self.fields.contains(&m) {
                        accessor = true;
                    } else if !computes
                        && (!(std.methods.contains(&m) || std.aliases.contains(&m))
                            || std.element_closures.contains(&m))
                    {
                        return None;
                    }
                    e = &mc.receiver;
                }
                Expr::Path(p) if p.path.is_ident(self.name) => {
                    return (accessor && name != self.name).then_some(name)
                }
                _ => return None,
            }
        }
    }

    pub(super) fn stmt_mentions(&self, s: &Stmt) -> bool {
        let mut f = Finder {
            uses: self,
            found: false,
        };
        f.visit_stmt(s);
        f.found
    }

    pub(super) fn stmt_acts(&self, s: &Stmt) -> bool {
        // `let receipts: Vec<_> = out.successful().iter().map(|ok| ..).collect();`:
        // the entries that went through, gathered to be acked apart from the others.
        if let Stmt::Local(l) = s {
            let gathered = l.init.as_ref().and_then(|i| self.successes_chain(&i.expr));
            // Not a count or a test of them (`out.successful().len()`).
            let r = &self.apis.std.results;
            let counted =
                |m: &String| r.counts.contains(m) || r.any_of.contains(m) || r.all_of.contains(m);
            if gathered.is_some_and(|m| m.first().is_none_or(|last| !counted(last))) {
                return true;
            }
        }
        match s {
            Stmt::Local(l) => l.init.as_ref().is_some_and(|i| {
                self.expr_acts(&i.expr) || i.diverge.as_ref().is_some_and(|d| self.expr_acts(&d.1))
            }),
            Stmt::Expr(e, Some(_)) if self.dropped_view(e) => false,
            Stmt::Expr(e, _) => self.expr_acts(e),
            Stmt::Macro(m) => self.macro_acts(&m.mac),
            Stmt::Item(_) => false,
        }
    }

    /// `e` only walks the response through standard methods (`into_iter`,
    /// `collect`, `?` on each request's result) and its value is dropped: the
    /// responses are looked at for a failed request, not for failed entries.
    fn dropped_view(&self, e: &Expr) -> bool {
        let std = &self.apis.std;
        let mut e = e;
        loop {
            match e {
                Expr::Try(t) => e = &t.expr,
                Expr::Paren(p) => e = &p.expr,
                Expr::MethodCall(mc) => {
                    let m = mc.method.to_string();
                    let plain = std.element_methods.contains(&m)
                        || std.methods.contains(&m)
                        || std.aliases.contains(&m);
                    if !plain
                        || std.element_closures.contains(&m)
                        || self.fields.contains(&m)
                        || mc.args.iter().any(|a| self.mentions(a))
                    {
                        return false;
                    }
                    e = &mc.receiver;
                }
                Expr::Path(p) => return p.path.is_ident(self.name),
                _ => return false,
            }
        }
    }

    fn block_acts(&self, b: &Block) -> bool {
        b.stmts.iter().any(|s| self.stmt_acts(s))
    }

    /// Whether a use of the response in `e` acts on its failed entries.
    pub(super) fn expr_acts(&self, e: &Expr) -> bool {
        if !self.mentions(e) {
            return false;
        }
        match e {
            // `for ok in out.successful() { delete(ok) }`: what is done there is done
            // to the entries that went through only; the failed ones are left alone.
            Expr::ForLoop(f) if self.iterates_successes(&f.expr) => !self.only_logs(&f.body),
            Expr::Macro(m) => self.macro_acts(&m.mac),
            Expr::Block(b) => self.block_acts(&b.block),
            Expr::Paren(p) => self.expr_acts(&p.expr),
            Expr::If(i) => {
                if self.mentions(&i.cond) {
                    let logs = self.only_logs(&i.then_branch)
                        && i.else_branch
                            .as_ref()
                            .is_none_or(|(_, e)| self.expr_only_logs(e));
                    !logs
                } else {
                    self.block_acts(&i.then_branch)
                        || i.else_branch
                            .as_ref()
                            .is_some_and(|(_, e)| self.expr_acts(e))
                }
            }
            Expr::Match(m) => {
                if matches!(&*m.expr, Expr::Path(p) if p.path.is_ident(self.name)) {
                    // `match sent { Ok(out) => .., Err(e) => .. }`: each arm by what it binds.
                    m.arms.iter().any(|a| self.arm_acts(a))
                } else if self.mentions(&m.expr) {
                    !m.arms.iter().all(|a| self.expr_only_logs(&a.body))
                } else {
                    m.arms.iter().any(|a| self.expr_acts(&a.body))
                }
            }
            Expr::ForLoop(f) if !self.mentions(&f.expr) => self.block_acts(&f.body),
            // `for entry in out.entries() { if let Some(code) = entry.error_code() { error!(..) } }`:
            // walking the entries only to log them does not act on them.
            Expr::ForLoop(f) => !self.only_logs(&f.body),
            Expr::Loop(l) => self.block_acts(&l.body),
            Expr::Await(a) => self.expr_acts(&a.base),
            // `log_outcome(&out, n)`, `self.report(&out)`: a crate function that only
            // logs what it is handed.
            Expr::Call(c) => match &*c.func {
                Expr::Path(p) => p
                    .path
                    .segments
                    .last()
                    .is_none_or(|f| !self.callee_logs(&f.ident.to_string(), c.args.iter(), 0)),
                _ => true,
            },
            Expr::MethodCall(mc) if !self.mentions(&mc.receiver) => {
                !self.callee_logs(&mc.method.to_string(), mc.args.iter(), 1)
            }
            Expr::While(w) if !self.mentions(&w.cond) => self.block_acts(&w.body),
            _ => true,
        }
    }

    /// Every argument naming the response hands it over whole (`out`, `&out`) to a
    /// parameter the crate's function `callee` only logs (`first`: the place of the
    /// first argument).
    fn callee_logs<'e>(
        &self,
        callee: &str,
        args: impl Iterator<Item = &'e Expr>,
        first: usize,
    ) -> bool {
        let mut handed = false;
        for (i, a) in args.enumerate() {
            if !self.mentions(a) {
                continue;
            }
            let mut e = a;
            while let Expr::Reference(r) = e {
                e = &r.expr;
            }
            let whole = matches!(e, Expr::Path(p) if p.path.is_ident(self.name));
            if !whole || !(self.logs)(callee, first + i) {
                return false;
            }
            handed = true;
        }
        handed
    }

    /// An arm of a `match` on the call's result bound to `name`: an `Err(..)` arm
    /// (the request failed) and one that drops the response (`Ok(_)`, `_`) do not act
    /// on its entries; `Ok(out)` acts where `out` does; other patterns count as acting.
    fn arm_acts(&self, a: &syn::Arm) -> bool {
        match arm_holds(&self.apis.std.results, &a.pat) {
            ArmHolds::ErrSide | ArmHolds::Nothing => false,
            ArmHolds::Unknown => true,
            ArmHolds::Name(name) => {
                let u = Uses {
                    apis: self.apis,
                    logs: self.logs,
                    name: &name,
                    fields: self.fields,
                    derived: false,
                };
                a.guard.as_ref().is_some_and(|(_, g)| u.mentions(g)) || u.expr_acts(&a.body)
            }
        }
    }

    /// A macro that mentions the response: logging or formatting it does not act,
    /// an error it returns (`bail!`, `ensure!`) does.
    fn macro_acts(&self, m: &syn::Macro) -> bool {
        if !tokens_name(m.tokens.clone(), self.name) {
            return false;
        }
        self.error_macro(&macro_name(m))
    }

    fn error_macro(&self, name: &str) -> bool {
        matches!(
            self.apis.std.macro_kind(name),
            Some(MacroKind::ErrorReturn | MacroKind::ErrorUnless | MacroKind::Abort)
        ) || self.apis.std.results.error_macros.iter().any(|m| m == name)
    }

    /// The block does nothing but log (or nothing at all).
    fn only_logs(&self, b: &Block) -> bool {
        b.stmts.iter().all(|s| match s {
            Stmt::Macro(m) => !self.error_macro(&macro_name(&m.mac)),
            Stmt::Expr(e, _) => self.expr_only_logs(e),
            _ => false,
        })
    }

    fn expr_only_logs(&self, e: &Expr) -> bool {
        match e {
            Expr::Block(b) => self.only_logs(&b.block),
            Expr::Macro(m) => !self.error_macro(&macro_name(&m.mac)),
            Expr::Tuple(t) => t.elems.is_empty(),
            // A test that only logs on either side (`if n > 0 { warn!(..) }`).
            Expr::If(i) => {
                self.only_logs(&i.then_branch)
                    && i.else_branch
                        .as_ref()
                        .is_none_or(|(_, e)| self.expr_only_logs(e))
            }
            _ => false,
        }
    }

    /// `out.successful()`, `out.successful.iter().map(|e| ..)`: the response's
    /// entries that went through (the packs' `entry_successes`), through methods that
    /// name the response nowhere else.
    fn iterates_successes(&self, e: &Expr) -> bool {
        self.successes_chain(e).is_some()
    }

    /// [`Self::iterates_successes`], giving the methods of the chain after the accessor.
    fn successes_chain(&self, e: &Expr) -> Option<Vec<String>> {
        if self.derived {
            return None;
        }
        let mut methods = Vec::new();
        let successes = &self.apis.entry_successes;
        let on_response =
            |r: &Expr| matches!(strip(r), Expr::Path(p) if p.path.is_ident(self.name));
        let mut e = strip(e);
        loop {
            match e {
                Expr::MethodCall(mc) if successes.iter().any(|s| mc.method == s) => {
                    return (mc.args.is_empty() && on_response(&mc.receiver)).then_some(methods);
                }
                Expr::Field(f) => {
                    let named = matches!(&f.member, syn::Member::Named(n) if successes.iter().any(|s| n == s));
                    return (named && on_response(&f.base)).then_some(methods);
                }
                Expr::MethodCall(mc) if !mc.args.iter().any(|a| self.mentions(a)) => {
                    methods.push(mc.method.to_string());
                    e = strip(&mc.receiver);
                }
                Expr::Try(t) => e = strip(&t.expr),
                _ => return None,
            }
        }
    }

    /// `e` looks at the response's failed entries: names the response itself, other
    /// than as the receiver of an accessor of something else (`out.successful()`),
    /// or walks the entries that went through in a loop (`for ok in out.successful()`).
    pub(super) fn mentions(&self, e: &Expr) -> bool {
        let mut f = Finder {
            uses: self,
            found: false,
        };
        f.visit_expr(e);
        f.found
    }
}

fn macro_name(m: &syn::Macro) -> String {
    m.path
        .segments
        .last()
        .map(|s| s.ident.to_string())
        .unwrap_or_default()
}

pub(super) fn tokens_name(ts: proc_macro2::TokenStream, name: &str) -> bool {
    ts.into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == name,
        TokenTree::Group(g) => tokens_name(g.stream(), name),
        _ => false,
    })
}

struct Finder<'a, 'b> {
    uses: &'a Uses<'b>,
    found: bool,
}

impl<'ast> Visit<'ast> for Finder<'_, '_> {
    fn visit_expr_for_loop(&mut self, f: &'ast syn::ExprForLoop) {
        if self.uses.iterates_successes(&f.expr) {
            self.found = true;
        }
        syn::visit::visit_expr_for_loop(self, f);
    }

    fn visit_expr_method_call(&mut self, mc: &'ast syn::ExprMethodCall) {
        let on_response = !self.uses.derived
            && matches!(&*mc.receiver, Expr::Path(p) if p.path.is_ident(self.uses.name));
        if on_response && !self.uses.fields.iter().any(|f| mc.method == f) {
            for a in &mc.args {
                self.visit_expr(a);
            }
            return;
        }
        syn::visit::visit_expr_method_call(self, mc);
    }

    fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
        if p.path.is_ident(self.uses.name) {
            self.found = true;
        }
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if tokens_name(m.tokens.clone(), self.uses.name) {
            self.found = true;
        }
    }
}

/// An adapter's argument that only computes a value from the elements: a function
/// path (`Vec::len`) or a closure that names nothing but its own parameters and
/// bindings, calls no function and no macro, awaits nothing and assigns nothing
/// (its methods: standard ones, or accessors of no argument).
fn computed(std: &crate::apis::StdNames, a: &Expr) -> bool {
    match a {
        Expr::Path(p) => p.path.segments.len() > 1,
        Expr::Closure(c) => {
            let mut v = Computes {
                std,
                bound: Vec::new(),
                ok: true,
            };
            v.visit_expr_closure(c);
            v.ok
        }
        _ => false,
    }
}

struct Computes<'a> {
    std: &'a crate::apis::StdNames,
    /// The names the closure's parameters and bindings bind.
    bound: Vec<String>,
    ok: bool,
}

impl<'ast> Visit<'ast> for Computes<'_> {
    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        self.bound.push(p.ident.to_string());
        syn::visit::visit_pat_ident(self, p);
    }

    fn visit_expr(&mut self, e: &'ast Expr) {
        match e {
            Expr::Call(_) | Expr::Macro(_) | Expr::Await(_) | Expr::Assign(_) => self.ok = false,
            Expr::Path(p) => {
                if let Some(i) = p.path.get_ident() {
                    let constant = i.to_string().starts_with(char::is_uppercase);
                    if !constant && !self.bound.iter().any(|b| i == b) {
                        self.ok = false;
                    }
                }
            }
            Expr::MethodCall(mc) => {
                let m = mc.method.to_string();
                let std = self.std;
                let known = std.methods.contains(&m)
                    || std.aliases.contains(&m)
                    || std.element_methods.contains(&m);
                if !known && !mc.args.is_empty() {
                    self.ok = false;
                }
                syn::visit::visit_expr(self, e);
            }
            _ => syn::visit::visit_expr(self, e),
        }
    }
}
