//! Job-queue workers (the packs' `[worker]`: apalis): what a chain from a builder
//! (`WorkerBuilder::new(..).backend(s).build_fn(h)`) hands over as the job handler. A
//! named function is marked in the crate's [`BatchReturned`] and lowered where it is
//! defined; a closure (`build_fn(|job: Email, db: Data<Pool>| async move { .. })`,
//! directly, through a wrapper, or bound to a local first) becomes a function of its
//! own, [`HandedClosure`], lowered like a named handler: its parameters, its body (an
//! `async` block's, or the future it returns, awaited: apalis awaits it) and its
//! return, the job's outcome. Every name comes from the packs; this pass only reads
//! syntax.

use std::collections::{BTreeMap, BTreeSet};

use syn::spanned::Spanned;
use syn::visit::Visit;

use super::lambda::{event_source, BatchReturned, HANDED};
use super::{is_test_attr, resolve_path, segments, untyped, UseMap};
use crate::apis::serverless::Serverless;

/// A closure handed to a worker as its job handler, as a free function to lower.
pub(crate) struct HandedClosure {
    /// The inline modules of the file it is written in.
    pub module: Vec<String>,
    /// The function it is written in (`Type::method` for a method).
    pub outer: String,
    /// Where that function's body opens (line, 0-based column).
    pub outer_body: (usize, usize),
    /// The closure as a function, named by [`closure_ident`], spans its own.
    pub item: syn::ItemFn,
}

/// The name under which a closure handed to a worker is marked and lowered: unique
/// in its file (its position), not a name the code can call.
fn closure_ident(c: &syn::ExprClosure) -> String {
    let s = c.or1_token.span.start();
    format!("__job_closure_{}_{}", s.line, s.column)
}

/// A function of the file that makes a closure and returns it (`fn make_handler(pool)
/// -> impl Fn(Job) -> F { move |job| async move { .. } }`): a call of it hands over
/// that closure.
struct Maker<'ast> {
    module: Vec<String>,
    /// Its name and where its body opens.
    name: String,
    body: (usize, usize),
    closure: &'ast syn::ExprClosure,
}

/// The closure a function's body ends with, if it does.
fn made_closure(block: &syn::Block) -> Option<&syn::ExprClosure> {
    match block.stmts.last()? {
        syn::Stmt::Expr(e, None) => match peel(e) {
            syn::Expr::Closure(c) => Some(c),
            syn::Expr::Block(b) if b.label.is_none() => made_closure(&b.block),
            _ => None,
        },
        _ => None,
    }
}

/// The free functions of `items` (and their inline modules) that return a closure.
fn makers<'ast>(
    items: &'ast [syn::Item],
    include_tests: bool,
    module: &mut Vec<String>,
    out: &mut BTreeMap<String, Maker<'ast>>,
) {
    for item in items {
        match item {
            syn::Item::Fn(f) if include_tests || !is_test_attr(&f.attrs) => {
                if let Some(c) = made_closure(&f.block) {
                    let s = f.block.brace_token.span.open().start();
                    let m = Maker {
                        module: module.clone(),
                        name: f.sig.ident.to_string(),
                        body: (s.line, s.column),
                        closure: c,
                    };
                    out.insert(m.name.clone(), m);
                }
            }
            syn::Item::Mod(m) if include_tests || !is_test_attr(&m.attrs) => {
                if let Some((_, inner)) = &m.content {
                    module.push(m.ident.to_string());
                    makers(inner, include_tests, module, out);
                    module.pop();
                }
            }
            _ => {}
        }
    }
}

/// What a handler argument hands over.
enum Handed<'ast> {
    /// A function by (owner, name).
    Named(String, String),
    Closure(&'ast syn::ExprClosure),
    /// A closure a maker of the file returns, by the maker's name.
    Made(String),
}

struct V<'s, 'ast> {
    sl: &'s Serverless,
    uses: &'s UseMap,
    include_tests: bool,
    out: &'s mut BatchReturned,
    /// Where closures are collected, if they are.
    closures: Option<&'s mut Vec<HandedClosure>>,
    seen: BTreeSet<String>,
    /// Locals of the function being visited that hold a builder chain
    /// (`let builder = WorkerBuilder::new(..).backend(s);`), by name.
    builders: BTreeSet<String>,
    /// Locals of the function being visited that hold a closure, by name.
    closure_locals: BTreeMap<String, &'ast syn::ExprClosure>,
    /// Locals of the function being visited that hold what a maker returned, by name:
    /// the maker's name.
    made_locals: BTreeMap<String, String>,
    /// The file's functions that return a closure, by name.
    makers: &'s BTreeMap<String, Maker<'ast>>,
    module: Vec<String>,
    self_ty: Option<String>,
    outer: Option<(String, (usize, usize))>,
}

impl<'ast> V<'_, 'ast> {
    /// Whether a chain of method calls starts with a path call on a builder type, or
    /// with a local holding such a chain.
    fn starts_at_builder(&self, e: &syn::Expr) -> bool {
        match e {
            syn::Expr::MethodCall(m) => self.starts_at_builder(&m.receiver),
            syn::Expr::Paren(p) => self.starts_at_builder(&p.expr),
            syn::Expr::Path(p) => p
                .path
                .get_ident()
                .is_some_and(|i| self.builders.contains(&i.to_string())),
            syn::Expr::Call(c) => match &*c.func {
                syn::Expr::Path(p) => p.path.segments.iter().any(|s| {
                    let s = s.ident.to_string();
                    self.sl.worker.builders.contains(&s)
                }),
                _ => false,
            },
            _ => false,
        }
    }

    /// What an argument hands over: a closure or a local holding one, a function's
    /// path, or a wrapper's argument.
    fn handler(&self, e: &'ast syn::Expr) -> Option<Handed<'ast>> {
        match e {
            syn::Expr::Reference(r) => self.handler(&r.expr),
            syn::Expr::Paren(p) => self.handler(&p.expr),
            syn::Expr::Closure(c) => Some(Handed::Closure(c)),
            syn::Expr::Path(p) => {
                if let Some(c) =
                    (p.path.get_ident()).and_then(|i| self.closure_locals.get(&i.to_string()))
                {
                    return Some(Handed::Closure(c));
                }
                if let Some(m) =
                    (p.path.get_ident()).and_then(|i| self.made_locals.get(&i.to_string()))
                {
                    return Some(Handed::Made(m.clone()));
                }
                let segs = &p.path.segments;
                let name = segs.last()?.ident.to_string();
                let owner = match segs.len() {
                    0 | 1 => String::new(),
                    n => {
                        let o = segs[n - 2].ident.to_string();
                        if o.starts_with(char::is_uppercase) {
                            o
                        } else {
                            String::new()
                        }
                    }
                };
                Some(Handed::Named(owner, name))
            }
            syn::Expr::Call(c) => {
                let syn::Expr::Path(f) = &*c.func else {
                    return None;
                };
                let last = f.path.segments.last()?.ident.to_string();
                let wraps = self.sl.worker.handler_wrappers.contains(&last);
                if wraps && c.args.len() == 1 {
                    self.handler(&c.args[0])
                } else if f.path.segments.len() == 1 && self.makers.contains_key(&last) {
                    Some(Handed::Made(last))
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// Marks a closure handed over, written in the function `outer` (its body opening
    /// at `at`) of the inner module `module`, and collects it when closures are.
    /// A closure handed to the serverless runtime (`mark` false) is not marked: its
    /// batch event parameter makes it the handler.
    fn hand_closure(
        &mut self,
        c: &syn::ExprClosure,
        module: Vec<String>,
        outer: String,
        at: (usize, usize),
        mark: bool,
    ) {
        let ident = closure_ident(c);
        if mark {
            (self.out.entry(ident.clone()).or_default()).insert(HANDED.to_string());
        }
        if let Some(found) = &mut self.closures {
            if self.seen.insert(ident.clone()) {
                found.push(HandedClosure {
                    module,
                    outer,
                    outer_body: at,
                    item: as_fn(c, &ident),
                });
            }
        }
    }

    /// The closure a call of the serverless runtime (`run(service_fn(|event:
    /// LambdaEvent<SqsEvent>| ..))`) hands over as a batch handler: written there,
    /// through the runtime's wrappers, or bound to a local first.
    fn runtime_closure(&self, e: &'ast syn::Expr) -> Option<&'ast syn::ExprClosure> {
        let c = match peel(e) {
            syn::Expr::Reference(r) => return self.runtime_closure(&r.expr),
            syn::Expr::Closure(c) => c,
            syn::Expr::Path(p) => self.closure_locals.get(&p.path.get_ident()?.to_string())?,
            syn::Expr::Call(c) if c.args.len() == 1 => {
                let syn::Expr::Path(f) = &*c.func else {
                    return None;
                };
                let segs = resolve_path(self.uses, &segments(&f.path));
                return (self.sl.is_handler_wrapper(&segs))
                    .then(|| self.runtime_closure(&c.args[0]))
                    .flatten();
            }
            _ => return None,
        };
        let batch = c.inputs.iter().any(|p| match p {
            syn::Pat::Type(t) => event_source(self.sl, self.uses, &t.ty).is_some(),
            _ => false,
        });
        batch.then_some(c)
    }

    fn in_fn(&mut self, name: String, body: &syn::Block, visit: impl FnOnce(&mut Self)) {
        let s = body.brace_token.span.open().start();
        let outer_fn = self.outer.replace((name, (s.line, s.column)));
        let builders = std::mem::take(&mut self.builders);
        let locals = std::mem::take(&mut self.closure_locals);
        let made = std::mem::take(&mut self.made_locals);
        visit(self);
        self.builders = builders;
        self.closure_locals = locals;
        self.made_locals = made;
        self.outer = outer_fn;
    }
}

impl<'ast> Visit<'ast> for V<'_, 'ast> {
    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        let method = m.method.to_string();
        if m.args.len() == 1
            && self.sl.worker.handler_methods.contains(&method)
            && self.starts_at_builder(&m.receiver)
        {
            match self.handler(&m.args[0]) {
                Some(Handed::Named(owner, name)) => {
                    (self.out.entry(name).or_default()).insert(format!("{HANDED}{owner}"));
                }
                Some(Handed::Closure(c)) => {
                    if let Some((outer, at)) = self.outer.clone() {
                        self.hand_closure(c, self.module.clone(), outer, at, true);
                    }
                }
                Some(Handed::Made(name)) => {
                    if let Some(m) = self.makers.get(&name) {
                        self.hand_closure(
                            m.closure,
                            m.module.clone(),
                            m.name.clone(),
                            m.body,
                            true,
                        );
                    }
                }
                None => {}
            }
        }
        syn::visit::visit_expr_method_call(self, m);
    }
    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        if let (syn::Expr::Path(f), Some(arg)) = (&*call.func, call.args.first()) {
            let segs = resolve_path(self.uses, &segments(&f.path));
            if self.sl.is_run(&segs) {
                if let (Some(c), Some((outer, at))) =
                    (self.runtime_closure(arg), self.outer.clone())
                {
                    self.hand_closure(c, self.module.clone(), outer, at, false);
                }
            }
        }
        syn::visit::visit_expr_call(self, call);
    }
    fn visit_local(&mut self, l: &'ast syn::Local) {
        syn::visit::visit_local(self, l);
        if let syn::Pat::Ident(i) = untyped(&l.pat) {
            let name = i.ident.to_string();
            let init = l.init.as_ref().map(|i| &*i.expr);
            // A later `let` of the same name shadows the builder or the closure.
            if init.is_some_and(|e| self.starts_at_builder(e)) {
                self.builders.insert(name.clone());
            } else {
                self.builders.remove(&name);
            }
            self.made_locals.remove(&name);
            match init.map(peel) {
                Some(syn::Expr::Closure(c)) => {
                    self.closure_locals.insert(name, c);
                }
                Some(syn::Expr::Call(call)) => {
                    self.closure_locals.remove(&name);
                    if let syn::Expr::Path(f) = &*call.func {
                        if let Some(i) = f.path.get_ident() {
                            if self.makers.contains_key(&i.to_string()) {
                                self.made_locals.insert(name, i.to_string());
                            }
                        }
                    }
                }
                _ => {
                    self.closure_locals.remove(&name);
                }
            }
        }
    }
    visit_named_fns!();
}

fn peel(e: &syn::Expr) -> &syn::Expr {
    match e {
        syn::Expr::Paren(p) => peel(&p.expr),
        e => e,
    }
}

/// Runs the pass over `items`: handlers marked in `out`, closures in `closures`.
fn visit(
    sl: &Serverless,
    uses: &UseMap,
    items: &[syn::Item],
    include_tests: bool,
    out: &mut BatchReturned,
    closures: Option<&mut Vec<HandedClosure>>,
) {
    if sl.worker.handler_methods.is_empty() && sl.runtime.runs.is_empty() {
        return;
    }
    let mut made = BTreeMap::new();
    makers(items, include_tests, &mut Vec::new(), &mut made);
    let mut v = V {
        sl,
        uses,
        include_tests,
        out,
        closures,
        seen: BTreeSet::new(),
        builders: BTreeSet::new(),
        closure_locals: BTreeMap::new(),
        made_locals: BTreeMap::new(),
        makers: &made,
        module: Vec::new(),
        self_ty: None,
        outer: None,
    };
    for item in items {
        v.visit_item(item);
    }
}

/// Adds to `out` the functions that `items` hand to a job-queue worker, each owner
/// prefixed with [`HANDED`]; a closure under its [`closure_ident`].
pub(crate) fn handed_to_workers(
    sl: &Serverless,
    uses: &UseMap,
    items: &[syn::Item],
    include_tests: bool,
    out: &mut BatchReturned,
) {
    visit(sl, uses, items, include_tests, out, None);
}

/// The closures `items` hand to a job-queue worker, or to the serverless runtime as
/// a batch handler, in source order.
pub(crate) fn handed_closures(
    sl: &Serverless,
    uses: &UseMap,
    items: &[syn::Item],
    include_tests: bool,
) -> Vec<HandedClosure> {
    let mut found = Vec::new();
    visit(
        sl,
        uses,
        items,
        include_tests,
        &mut BatchReturned::new(),
        Some(&mut found),
    );
    found
}

/// A handler closure as the `async fn` it amounts to: its parameters (an untyped one
/// typed `_`), and its body: an `async` block's statements, or, for a closure that
/// returns a future (`|job| send(job)`), that future awaited.
fn as_fn(c: &syn::ExprClosure, ident: &str) -> syn::ItemFn {
    let span = c.or1_token.span;
    let inputs = closure_inputs(c);
    let block = if c.asyncness.is_some() {
        block_of(&c.body)
    } else {
        future_body(&c.body)
    };
    syn::ItemFn {
        attrs: Vec::new(),
        vis: syn::Visibility::Inherited,
        sig: syn::Signature {
            constness: None,
            asyncness: Some(syn::Token![async](span)),
            unsafety: None,
            abi: None,
            fn_token: syn::Token![fn](span),
            ident: syn::Ident::new(ident, span),
            generics: syn::Generics::default(),
            paren_token: syn::token::Paren(span),
            inputs,
            variadic: None,
            output: c.output.clone(),
        },
        block: Box::new(block),
    }
}

/// A body as a block (an expression: a block whose tail it is).
pub(super) fn block_of(e: &syn::Expr) -> syn::Block {
    match e {
        syn::Expr::Block(b) if b.label.is_none() => b.block.clone(),
        e => syn::Block {
            brace_token: syn::token::Brace(e.span()),
            stmts: vec![syn::Stmt::Expr(e.clone(), None)],
        },
    }
}

/// The body of a closure that returns a future, run to its end: an `async` block's
/// (also under `Box::pin`), or the statements before a tail future and that future
/// awaited.
/// `fut.boxed()`, `fut.boxed_local()`: a method of the runtime pack's `future_boxes`
/// that only boxes the future it is called on.
pub(super) fn boxes_future(m: &syn::ExprMethodCall) -> bool {
    let boxes = &crate::apis::builtin_std().future_boxes;
    m.args.is_empty() && boxes.contains(&m.method.to_string())
}

pub(super) fn future_body(e: &syn::Expr) -> syn::Block {
    match e {
        syn::Expr::Paren(p) => future_body(&p.expr),
        syn::Expr::Async(a) => a.block.clone(),
        syn::Expr::Call(c)
            if c.args.len() == 1
                && matches!(&*c.func, syn::Expr::Path(p)
                    if p.path.segments.last().is_some_and(|s| s.ident == "pin")) =>
        {
            future_body(&c.args[0])
        }
        // `async move { .. }.boxed()` (the runtime pack's `future_boxes`).
        syn::Expr::MethodCall(m) if boxes_future(m) => future_body(&m.receiver),
        syn::Expr::Block(b) if b.label.is_none() => {
            let mut block = b.block.clone();
            if let Some(syn::Stmt::Expr(tail, None)) = block.stmts.pop() {
                let inner = future_body(&tail);
                block.stmts.extend(inner.stmts);
            } else {
                block = b.block.clone();
            }
            block
        }
        e => {
            let span = e.span();
            block_of(&syn::Expr::Await(syn::ExprAwait {
                attrs: Vec::new(),
                base: Box::new(e.clone()),
                dot_token: syn::Token![.](span),
                await_token: syn::Token![await](span),
            }))
        }
    }
}

/// A closure's parameters as a function's: an untyped one is typed `_`.
pub(crate) fn closure_inputs(
    c: &syn::ExprClosure,
) -> syn::punctuated::Punctuated<syn::FnArg, syn::Token![,]> {
    let span = c.or1_token.span;
    c.inputs
        .iter()
        .map(|p| match p {
            syn::Pat::Type(t) => syn::FnArg::Typed(t.clone()),
            p => syn::FnArg::Typed(syn::PatType {
                attrs: Vec::new(),
                pat: Box::new(p.clone()),
                colon_token: syn::Token![:](span),
                ty: Box::new(syn::Type::Infer(syn::TypeInfer {
                    underscore_token: syn::Token![_](span),
                })),
            }),
        })
        .collect()
}
