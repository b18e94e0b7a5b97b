//! Serverless batch handlers (docs/what-is-analyzed.md, serverless event sources): a function handed to
//! the Lambda runtime (`run(handler)`, `run(service_fn(handler))`, a closure calling it)
//! whose event parameter is a batch event (`LambdaEvent<SqsEvent>`), with the place
//! where it builds a partial-batch response when its return type is one. Every name
//! comes from the packs (`[lambda]`, `[[batch_events]]`); this pass only reads syntax
//! and states what it finds: the rules link handlers to the deploy YAML's event
//! source mappings.

use std::collections::BTreeSet;
use std::sync::Arc;

use syn::spanned::Spanned;
use syn::visit::Visit;

use super::{collect_uses, is_test_attr, resolve_path, segments, UseMap};
use crate::apis::serverless::Serverless;
use crate::apis::Apis;
use crate::ir::{BatchHandler, BatchSource, Loc};
use crate::source::SourceFile;
use crate::support::lines::LineIndex;

/// The batch handlers the crate's files hand to the runtime, in file order; `names`
/// is left empty (the driver knows the crate's Cargo targets).
pub fn batch_handlers(files: &[&SourceFile], apis: &Apis) -> Vec<BatchHandler> {
    let sl = &apis.serverless;
    if sl.runtime.event_wrappers.is_empty() {
        return Vec::new();
    }
    // A handler may be defined in another file than the one handing it to the
    // runtime (`service_fn(|e| handler::handle(&state, e))` in main.rs): the crate's
    // candidates are matched with every name handed over in it.
    let (mut candidates_all, mut run_all) = (Vec::new(), BTreeSet::new());
    // A file that defines a handler names its event wrapper; one that hands a
    // handler over names the runtime's crate or its wrapper.
    let rt = &sl.runtime;
    let runs = rt.runs.iter().filter_map(|r| r.split("::").next());
    let marks: Vec<&str> = (rt.event_wrappers.iter().chain(&rt.handler_wrappers))
        .map(String::as_str)
        .chain(runs)
        .collect();
    for f in files {
        if !marks.iter().any(|w| f.text.contains(w)) {
            continue;
        }
        // Input the front end refuses (too deep for syn's recursion) is reported there.
        if super::guard::scan(&f.text).is_some() {
            continue;
        }
        let Ok(ast) = syn::parse_file(&f.text) else {
            continue;
        };
        let mut uses = UseMap::new();
        collect_uses(&ast.items, false, &mut uses);
        let lines = LineIndex::new(&f.text);
        let mut walk = Walk {
            sl,
            uses: &uses,
            lines: &lines,
            path: Arc::from(f.path.as_str()),
            candidates: Vec::new(),
            run: BTreeSet::new(),
        };
        walk.visit_file(&ast);
        let Walk {
            candidates, run, ..
        } = walk;
        candidates_all.extend(candidates);
        run_all.extend(run);
    }
    candidates_all
        .into_iter()
        .filter(|h| run_all.contains(&h.name))
        .collect()
}

struct Walk<'a> {
    sl: &'a Serverless,
    uses: &'a UseMap,
    lines: &'a LineIndex<'a>,
    path: Arc<str>,
    /// Functions whose event is a batch event.
    candidates: Vec<BatchHandler>,
    /// Names of the functions handed to the runtime.
    run: BTreeSet<String>,
}

impl Walk<'_> {
    fn loc(&self, node: &impl Spanned) -> Loc {
        let s = node.span();
        Loc {
            path: self.path.clone(),
            span: self.lines.span(s, s),
        }
    }

    fn resolved(&self, path: &syn::Path) -> Vec<String> {
        resolve_path(self.uses, &segments(path))
    }

    /// The batch source of a handler's signature: its first parameter's type is an
    /// event wrapper around a batch event.
    fn source_of(&self, sig: &syn::Signature) -> Option<BatchSource> {
        // The event is any parameter: state comes first in `handler(pool, event)`.
        sig.inputs.iter().find_map(|arg| match arg {
            syn::FnArg::Typed(arg) => self.source_of_type(&arg.ty),
            syn::FnArg::Receiver(_) => None,
        })
    }

    /// The batch source of an event parameter's type: an event wrapper around a batch
    /// event.
    fn source_of_type(&self, ty: &syn::Type) -> Option<BatchSource> {
        event_source(self.sl, self.uses, ty)
    }

    /// Whether a type names a partial-batch response (`Result<SqsBatchResponse, E>`).
    fn names_response(&self, ty: &syn::Type) -> bool {
        struct Find<'s>(&'s Serverless, bool);
        impl<'ast> Visit<'ast> for Find<'_> {
            fn visit_path_segment(&mut self, s: &'ast syn::PathSegment) {
                if self.0.is_response(&s.ident.to_string()) {
                    self.1 = true;
                }
                syn::visit::visit_path_segment(self, s);
            }
        }
        let mut f = Find(self.sl, false);
        f.visit_type(ty);
        f.1
    }

    fn function(&mut self, attrs: &[syn::Attribute], sig: &syn::Signature, body: &syn::Block) {
        if is_test_attr(attrs) {
            return;
        }
        let Some(source) = self.source_of(sig) else {
            return;
        };
        let partial_return = match &sig.output {
            syn::ReturnType::Type(_, ty) if self.names_response(ty) => {
                let mut built = Built {
                    sl: self.sl,
                    at: None,
                };
                built.visit_block(body);
                Some(match built.at {
                    Some(span) => Loc {
                        path: self.path.clone(),
                        span: self.lines.span(span, span),
                    },
                    None => self.loc(ty),
                })
            }
            _ => None,
        };
        self.candidates.push(BatchHandler {
            name: sig.ident.to_string(),
            loc: self.loc(&sig.ident),
            source,
            partial_return,
            names: Vec::new(),
        });
    }

    /// The function a runtime argument hands over: a path, a wrapper's argument, or
    /// the function a closure calls.
    fn handed(&mut self, arg: &syn::Expr) -> Option<String> {
        match arg {
            syn::Expr::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            syn::Expr::Reference(r) => self.handed(&r.expr),
            syn::Expr::Paren(p) => self.handed(&p.expr),
            syn::Expr::Call(c) => {
                let syn::Expr::Path(f) = &*c.func else {
                    return None;
                };
                if self.sl.is_handler_wrapper(&self.resolved(&f.path)) {
                    return c.args.first().and_then(|a| self.handed(a));
                }
                // A closure's body calling the handler: `|e| handler(e)`.
                f.path.segments.last().map(|s| s.ident.to_string())
            }
            syn::Expr::Closure(c) => self.closure_handed(c),
            syn::Expr::Await(a) => self.handed(&a.base),
            syn::Expr::Async(a) => a.block.stmts.last().and_then(|s| match s {
                syn::Stmt::Expr(e, None) => self.handed(e),
                _ => None,
            }),
            syn::Expr::Block(b) => b.block.stmts.last().and_then(|s| match s {
                syn::Stmt::Expr(e, None) => self.handed(e),
                _ => None,
            }),
            _ => None,
        }
    }
}

impl Walk<'_> {
    /// The function a closure handed to the runtime forwards its event to
    /// (`move |event| async move { handler(pool, event).await }`); failing that, the
    /// function its body ends by calling; failing that, a closure whose own body is
    /// the handler (its event parameter a batch event) is itself a candidate, named
    /// by its place.
    fn closure_handed(&mut self, c: &syn::ExprClosure) -> Option<String> {
        let params: Vec<String> = c.inputs.iter().filter_map(pat_ident).collect();
        let mut fwd = Forward {
            params: &params,
            callee: None,
        };
        fwd.visit_expr(&c.body);
        if let Some(name) = fwd.callee {
            return Some(name);
        }
        if let Some(name) = self.handed(&c.body) {
            return Some(name);
        }
        let source = c.inputs.iter().find_map(|p| match p {
            syn::Pat::Type(t) => self.source_of_type(&t.ty),
            _ => None,
        })?;
        let mut built = Built {
            sl: self.sl,
            at: None,
        };
        built.visit_expr(&c.body);
        let loc = self.loc(&c.or1_token);
        let name = format!("{{closure}}@{}:{}", loc.span.line, loc.span.column);
        self.candidates.push(BatchHandler {
            name: name.clone(),
            loc: loc.clone(),
            source,
            partial_return: built.at.map(|span| Loc {
                path: self.path.clone(),
                span: self.lines.span(span, span),
            }),
            names: Vec::new(),
        });
        Some(name)
    }
}

/// The batch source of an event parameter's type: an event wrapper around a batch
/// event (`LambdaEvent<SqsEvent>`).
pub(crate) fn event_source(sl: &Serverless, uses: &UseMap, ty: &syn::Type) -> Option<BatchSource> {
    let ty = match ty {
        syn::Type::Reference(r) => &*r.elem,
        t => t,
    };
    let syn::Type::Path(tp) = ty else {
        return None;
    };
    let last = tp.path.segments.last()?;
    if !sl.is_event_wrapper(&last.ident.to_string()) {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    let event = args.args.iter().find_map(|a| match a {
        syn::GenericArgument::Type(syn::Type::Path(p)) => Some(&p.path),
        _ => None,
    })?;
    sl.source_of_event(&resolve_path(uses, &segments(event)))
}

/// The name a closure parameter binds (`event`, `event: LambdaEvent<E>`).
fn pat_ident(p: &syn::Pat) -> Option<String> {
    match p {
        syn::Pat::Ident(i) => Some(i.ident.to_string()),
        syn::Pat::Type(t) => pat_ident(&t.pat),
        _ => None,
    }
}

/// The first function called with one of the closure's parameters as an argument.
struct Forward<'p> {
    params: &'p [String],
    callee: Option<String>,
}

impl Forward<'_> {
    fn passes_param(&self, e: &syn::Expr) -> bool {
        match e {
            syn::Expr::Path(p) => p
                .path
                .get_ident()
                .is_some_and(|i| self.params.iter().any(|n| i == n)),
            syn::Expr::Reference(r) => self.passes_param(&r.expr),
            syn::Expr::Paren(p) => self.passes_param(&p.expr),
            _ => false,
        }
    }
}

impl<'ast> Visit<'ast> for Forward<'_> {
    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        if self.callee.is_none() && c.args.iter().any(|a| self.passes_param(a)) {
            if let syn::Expr::Path(f) = &*c.func {
                self.callee = f.path.segments.last().map(|s| s.ident.to_string());
            }
        }
        syn::visit::visit_expr_call(self, c);
    }

    fn visit_expr_method_call(&mut self, c: &'ast syn::ExprMethodCall) {
        if self.callee.is_none() && c.args.iter().any(|a| self.passes_param(a)) {
            self.callee = Some(c.method.to_string());
        }
        syn::visit::visit_expr_method_call(self, c);
    }

    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

impl<'ast> Visit<'ast> for Walk<'_> {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.function(&f.attrs, &f.sig, &f.block);
        if !is_test_attr(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.function(&f.attrs, &f.sig, &f.block);
        if !is_test_attr(&f.attrs) {
            syn::visit::visit_impl_item_fn(self, f);
        }
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_test_attr(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }

    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        if let syn::Expr::Path(f) = &*c.func {
            if self.sl.is_run(&self.resolved(&f.path)) {
                if let Some(name) = c.args.first().and_then(|a| self.handed(a)) {
                    self.run.insert(name);
                }
            }
        }
        syn::visit::visit_expr_call(self, c);
    }
}

/// The first place a body builds a partial-batch response: a struct literal, or a
/// path call on the type (`SqsBatchResponse::default()`).
struct Built<'s> {
    sl: &'s Serverless,
    at: Option<proc_macro2::Span>,
}

impl<'ast> Visit<'ast> for Built<'_> {
    fn visit_expr_struct(&mut self, s: &'ast syn::ExprStruct) {
        let named = s
            .path
            .segments
            .last()
            .is_some_and(|seg| self.sl.is_response(&seg.ident.to_string()));
        if named && self.at.is_none() {
            self.at = Some(s.span());
        }
        syn::visit::visit_expr_struct(self, s);
    }

    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        if let syn::Expr::Path(f) = &*c.func {
            let segs = &f.path.segments;
            let on_type =
                segs.len() >= 2 && self.sl.is_response(&segs[segs.len() - 2].ident.to_string());
            if on_type && self.at.is_none() {
                self.at = Some(c.span());
            }
        }
        syn::visit::visit_expr_call(self, c);
    }

    // Closures and nested items build their own values.
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// Where a function's result is written: the `Ok(..)`s it returns, and the calls
/// whose result it returns (docs/what-is-analyzed.md, serverless event sources: the `Ok` that becomes
/// a batch handler's result, in a helper when the handler returns the helper's).
#[derive(Default)]
pub(crate) struct ResultSites {
    /// The `Ok(..)` expressions returned.
    pub oks: Vec<proc_macro2::Span>,
    /// The functions whose result is returned, as (owner, name): owner `""` for a
    /// free function, a type for `Type::f(..)` / `self.f(..)`, `"*"` for a method
    /// on a receiver of unknown type.
    pub calls: Vec<(String, String)>,
}

/// The result sites of a body: its tail expression and every `return` (outside
/// closures, async blocks and nested items), through blocks, `if`/`else` and
/// `match` arms, and, for calls, through `.await`, `?` and the methods that keep a
/// failure (`.map_err(..)`). `self_ty`: the type of
/// the `impl` the function is in.
pub(crate) fn result_sites(body: &syn::Block, self_ty: Option<&str>) -> ResultSites {
    struct V<'s> {
        self_ty: Option<&'s str>,
        out: ResultSites,
    }
    impl V<'_> {
        fn tail(&mut self, b: &syn::Block) {
            if let Some(syn::Stmt::Expr(e, None)) = b.stmts.last() {
                self.at(e);
            }
        }
        fn at(&mut self, e: &syn::Expr) {
            let results = &crate::apis::builtin_std().results;
            match e {
                syn::Expr::Paren(p) => self.at(&p.expr),
                syn::Expr::Group(g) => self.at(&g.expr),
                syn::Expr::Await(a) => self.at(&a.base),
                syn::Expr::Try(t) => self.at(&t.expr),
                syn::Expr::Block(b) => self.tail(&b.block),
                syn::Expr::Unsafe(b) => self.tail(&b.block),
                syn::Expr::If(i) => {
                    self.tail(&i.then_branch);
                    if let Some((_, e)) = &i.else_branch {
                        self.at(e);
                    }
                }
                syn::Expr::Match(m) => {
                    for arm in &m.arms {
                        self.at(&arm.body);
                    }
                }
                syn::Expr::Call(c) => {
                    let syn::Expr::Path(p) = &*c.func else {
                        return;
                    };
                    let segs = &p.path.segments;
                    let Some(last) = segs.last() else {
                        return;
                    };
                    let name = last.ident.to_string();
                    match results.side(&name) {
                        Some(true) => self.out.oks.push(e.span()),
                        Some(false) => {}
                        None => {
                            let owner = match segs.len() {
                                0 | 1 => String::new(),
                                n => {
                                    let o = segs[n - 2].ident.to_string();
                                    if o == "Self" {
                                        self.self_ty.unwrap_or("*").to_string()
                                    } else if o.starts_with(char::is_uppercase) {
                                        o
                                    } else {
                                        String::new()
                                    }
                                }
                            };
                            self.out.calls.push((owner, name));
                        }
                    }
                }
                // `helper(..).await.map_err(Error::from)`: the helper's result, its
                // failure kept (the runtime pack's `keeps`).
                syn::Expr::MethodCall(mc) if results.keeps.iter().any(|k| mc.method == k) => {
                    self.at(&mc.receiver)
                }
                syn::Expr::MethodCall(mc) => {
                    let on_self =
                        matches!(&*mc.receiver, syn::Expr::Path(p) if p.path.is_ident("self"));
                    let owner = match (on_self, self.self_ty) {
                        (true, Some(t)) => t.to_string(),
                        _ => "*".to_string(),
                    };
                    self.out.calls.push((owner, mc.method.to_string()));
                }
                _ => {}
            }
        }
    }
    impl<'ast> Visit<'ast> for V<'_> {
        fn visit_expr_return(&mut self, r: &'ast syn::ExprReturn) {
            if let Some(e) = &r.expr {
                self.at(e);
            }
            syn::visit::visit_expr_return(self, r);
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_expr_async(&mut self, _: &'ast syn::ExprAsync) {}
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut v = V {
        self_ty,
        out: ResultSites::default(),
    };
    v.tail(body);
    v.visit_block(body);
    v.out
}

/// Functions by name, each with the owners it is meant for ([`ResultSites::calls`]).
pub type BatchReturned = std::collections::BTreeMap<String, BTreeSet<String>>;

/// The owner prefix that marks, in a [`BatchReturned`], a function handed to a
/// job-queue worker (`[worker]`) as a handler: its first parameter is the job, its
/// `Ok` return acks it.
pub(crate) const HANDED: &str = "handler:";

/// Adds to `out` the functions whose result a function of `items` returns, where
/// that function is a serverless batch handler (`of` is `None`) or one of `of`
/// (the next level); at the first level, also the functions `items` hand to a
/// job-queue worker ([`HANDED`]).
pub(crate) fn returned_by(
    sl: &Serverless,
    uses: &UseMap,
    items: &[syn::Item],
    include_tests: bool,
    of: Option<&BatchReturned>,
    out: &mut BatchReturned,
) {
    let chosen = |sig: &syn::Signature, self_ty: Option<&str>| match of {
        None => sig.inputs.iter().any(|a| match a {
            syn::FnArg::Typed(t) => event_source(sl, uses, &t.ty).is_some(),
            syn::FnArg::Receiver(_) => false,
        }),
        // A worker's handler too: the result it returns is the job's outcome.
        Some(of) => of.get(&sig.ident.to_string()).is_some_and(|o| {
            let owner = self_ty.unwrap_or("");
            o.contains(owner)
                || o.contains(&format!("{HANDED}{owner}"))
                || (self_ty.is_some() && o.contains("*"))
        }),
    };
    if of.is_none() {
        super::worker::handed_to_workers(sl, uses, items, include_tests, out);
    }
    let add = |out: &mut BatchReturned, body: &syn::Block, self_ty: Option<&str>| {
        for (owner, name) in result_sites(body, self_ty).calls {
            out.entry(name).or_default().insert(owner);
        }
    };
    for item in items {
        match item {
            syn::Item::Fn(f)
                if (include_tests || !is_test_attr(&f.attrs)) && chosen(&f.sig, None) =>
            {
                add(out, &f.block, None);
            }
            syn::Item::Impl(imp) if include_tests || !is_test_attr(&imp.attrs) => {
                let self_ty = super::type_name(&imp.self_ty);
                for it in &imp.items {
                    if let syn::ImplItem::Fn(m) = it {
                        if (include_tests || !is_test_attr(&m.attrs))
                            && chosen(&m.sig, self_ty.as_deref())
                        {
                            add(out, &m.block, self_ty.as_deref());
                        }
                    }
                }
            }
            syn::Item::Mod(m) if include_tests || !is_test_attr(&m.attrs) => {
                if let Some((_, inner)) = &m.content {
                    returned_by(sl, uses, inner, include_tests, of, out);
                }
            }
            _ => {}
        }
    }
}
