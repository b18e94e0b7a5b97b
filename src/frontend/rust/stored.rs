//! Closures stored in a struct (dispatch tables of closures): a field whose type holds
//! callables (`audit: Box<dyn Fn(&Event) -> Result<()>>`, `hooks: Vec<Hook>`,
//! `routes: HashMap<String, Box<dyn Fn(..) -> BoxFuture<..>>>`) is a *slot*, named
//! `Type::field` ([`slot_name`]); the index types the field by it. The closures the
//! crate puts there where it builds the struct (in the struct literal, through a local
//! bound first, `Box::new(..)`, `vec![..]`, `map.insert(k, Box::new(..))`,
//! `v.push(..)`) become functions of their own, named `Type::field::{closure}`,
//! lowered with the slot as their self type, so that a call of the slot's value
//! (`(self.audit)(..)`, `hook(..)` over `&self.hooks`, a `routes.get(k)` value called)
//! reaches each of them. This pass only reads syntax.

use std::collections::{BTreeMap, BTreeSet};

use syn::visit::Visit;

use super::worker::{block_of, future_body};
use super::{is_test_attr, untyped, CrateIndex};
use crate::apis::Apis;

/// The name of the slot a struct's callable field is: `Type::field`.
pub(crate) fn slot_name(ty: &str, field: &str) -> String {
    format!("{ty}::{field}")
}

/// Whether a crate type name is a slot's ([`slot_name`]): crate type names are one
/// identifier.
pub(crate) fn is_slot(crate_type: &str) -> bool {
    crate_type.contains("::")
}

/// The name a slot's stored closures are called by (an identifier no code can write).
pub(crate) const CLOSURE_IDENT: &str = "{closure}";

/// The slot a value of the crate's fn-pointer alias `type HandlerFn = fn(..)` is:
/// `HandlerFn::fn`. The functions cast to the alias (`on_paid as HandlerFn`) or put
/// where a value of it is declared (`let t: [(&str, HandlerFn); 2] = [("a", on_a), ..]`)
/// are stored there, as closures calling them.
pub(crate) fn fn_alias_slot(alias: &str) -> String {
    slot_name(alias, "fn")
}

/// Whether a slot is a fn-pointer alias's ([`fn_alias_slot`]; no field is named `fn`).
pub(crate) fn is_fn_alias_slot(slot: &str) -> bool {
    slot.ends_with("::fn")
}

/// Whether the text of a type alias (as the index keeps it, a token stream's text)
/// is a fn-pointer type: `fn (..) -> ..`, `for < 'a > fn (..)`, `unsafe fn`,
/// `extern "C" fn`.
pub(crate) fn is_fn_pointer_text(text: &str) -> bool {
    ["fn (", "for <", "unsafe fn", "unsafe extern", "extern "]
        .iter()
        .any(|p| text.starts_with(p))
}

/// The crate's fn-pointer aliases ([`is_fn_pointer_text`]) and how many parameters
/// each takes.
pub(crate) fn fn_aliases(index: &CrateIndex) -> BTreeMap<String, usize> {
    (index.aliases.iter())
        .filter(|(_, text)| is_fn_pointer_text(text))
        .filter_map(
            |(name, text)| match syn::parse_str::<syn::Type>(text).ok()? {
                syn::Type::BareFn(f) => Some((name.clone(), f.inputs.len())),
                _ => None,
            },
        )
        .collect()
}

/// A closure stored in a slot, as a free function to lower.
pub(crate) struct StoredClosure {
    /// The inline modules of the file it is written in.
    pub module: Vec<String>,
    /// Where the function it is written in has its body open (line, 0-based column).
    pub outer_body: (usize, usize),
    /// The slot (`Type::field`).
    pub slot: String,
    /// The closure as a function.
    pub item: syn::ItemFn,
}

struct V<'s> {
    apis: &'s Apis,
    index: &'s CrateIndex,
    include_tests: bool,
    out: Vec<StoredClosure>,
    seen: BTreeSet<(usize, usize)>,
    /// Locals of the function being visited and the closures they hold (a closure, a
    /// boxed one, a vector or map filled with them).
    locals: BTreeMap<String, Vec<syn::ExprClosure>>,
    module: Vec<String>,
    self_ty: Option<String>,
    outer: Option<(String, (usize, usize))>,
    /// The crate's fn-pointer aliases and their arities ([`fn_aliases`]).
    fn_aliases: BTreeMap<String, usize>,
}

impl V<'_> {
    /// The closures an expression evaluates to or holds.
    fn closures_of(&self, e: &syn::Expr, out: &mut Vec<syn::ExprClosure>) {
        match e {
            syn::Expr::Closure(c) => out.push(c.clone()),
            syn::Expr::Cast(c) => self.closures_of(&c.expr, out),
            syn::Expr::Path(p) => {
                if let Some(held) = p
                    .path
                    .get_ident()
                    .and_then(|i| self.locals.get(&i.to_string()))
                {
                    out.extend(held.iter().cloned());
                }
            }
            other => each_held(other, &mut |x| self.closures_of(x, out)),
        }
    }

    fn store(&mut self, slot: String, found: Vec<syn::ExprClosure>) {
        let Some((_, at)) = &self.outer else {
            return;
        };
        for c in found {
            let s = c.or1_token.span.start();
            if self.seen.insert((s.line, s.column)) {
                self.out.push(StoredClosure {
                    module: self.module.clone(),
                    outer_body: *at,
                    slot: slot.clone(),
                    item: as_fn(&c),
                });
            }
        }
    }

    /// The slot `Type.field` is, when it is one.
    fn slot(&self, ty: &str, field: &str) -> Option<String> {
        let ct = self.index.fields.get(ty)?.get(field)?.crate_type.as_ref()?;
        is_slot(ct).then(|| ct.clone())
    }

    /// The fn-pointer alias `ty` names (`HandlerFn`, `routes::HandlerFn`), and its arity.
    fn fn_alias(&self, ty: &syn::Type) -> Option<(String, usize)> {
        let syn::Type::Path(p) = ty else {
            return None;
        };
        let last = p.path.segments.last()?;
        if !last.arguments.is_empty() {
            return None;
        }
        let name = last.ident.to_string();
        let arity = *self.fn_aliases.get(&name)?;
        Some((name, arity))
    }

    /// The fn-pointer aliases a declared type holds values of (`[(&str, HandlerFn); 2]`,
    /// `HashMap<&str, HandlerFn>`, `Option<HandlerFn>`).
    fn fn_aliases_in(&self, ty: &syn::Type, out: &mut Vec<(String, usize)>) {
        struct Types<'v, 's>(&'v V<'s>, &'v mut Vec<(String, usize)>);
        impl<'ast> Visit<'ast> for Types<'_, '_> {
            fn visit_type(&mut self, t: &'ast syn::Type) {
                if let Some(a) = self.0.fn_alias(t) {
                    if !self.1.contains(&a) {
                        self.1.push(a);
                    }
                }
                syn::visit::visit_type(self, t);
            }
        }
        Types(self, out).visit_type(ty);
    }

    /// The crate functions an expression puts in a value of a fn-pointer type, written
    /// as paths (`on_a` in `[("a", on_a), ("b", on_b)]`, `HashMap::from([..])`, `vec![..]`,
    /// `Some(on_a)`): paths whose last segment names a crate function, not a local.
    fn fn_paths_of(&self, e: &syn::Expr, out: &mut Vec<syn::ExprPath>) {
        match e {
            syn::Expr::Path(p) => {
                let named = p.path.segments.last().map(|s| s.ident.to_string());
                let local = p.path.get_ident().is_some()
                    && named.as_ref().is_some_and(|n| self.locals.contains_key(n));
                if !local && named.is_some_and(|n| self.index.fns.contains_key(&n)) {
                    out.push(p.clone());
                }
            }
            other => each_held(other, &mut |x| self.fn_paths_of(x, out)),
        }
    }

    fn in_fn(&mut self, name: String, body: &syn::Block, visit: impl FnOnce(&mut Self)) {
        let s = body.brace_token.span.open().start();
        let outer_fn = self.outer.replace((name, (s.line, s.column)));
        let locals = std::mem::take(&mut self.locals);
        visit(self);
        self.locals = locals;
        self.outer = outer_fn;
    }
}

impl<'ast> Visit<'ast> for V<'_> {
    fn visit_expr_struct(&mut self, s: &'ast syn::ExprStruct) {
        syn::visit::visit_expr_struct(self, s);
        let Some(last) = s.path.segments.last() else {
            return;
        };
        let ty = match last.ident.to_string() {
            t if t == "Self" => match &self.self_ty {
                Some(t) => t.clone(),
                None => return,
            },
            t => t,
        };
        for f in &s.fields {
            let syn::Member::Named(name) = &f.member else {
                continue;
            };
            if let Some(slot) = self.slot(&ty, &name.to_string()) {
                let mut found = Vec::new();
                self.closures_of(&f.expr, &mut found);
                self.store(slot, found);
            }
        }
    }
    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        syn::visit::visit_expr_method_call(self, m);
        // `routes.insert(k, Box::new(|..| ..))`, `hooks.push(..)` (the packs'
        // `store_methods`): the local holds them.
        let fills = self.apis.std.store_methods.contains(&m.method.to_string());
        let syn::Expr::Path(p) = &*m.receiver else {
            return;
        };
        let Some(name) = p.path.get_ident().map(|i| i.to_string()) else {
            return;
        };
        if fills {
            let mut found = Vec::new();
            for a in &m.args {
                self.closures_of(a, &mut found);
            }
            if !found.is_empty() {
                self.locals.entry(name).or_default().extend(found);
            }
        }
    }
    fn visit_expr_cast(&mut self, c: &'ast syn::ExprCast) {
        syn::visit::visit_expr_cast(self, c);
        // `on_paid as HandlerFn`, `(|c, e| ..) as HandlerFn`.
        let Some((alias, arity)) = self.fn_alias(&c.ty) else {
            return;
        };
        let slot = fn_alias_slot(&alias);
        let mut found = Vec::new();
        self.closures_of(&c.expr, &mut found);
        if found.is_empty() {
            let mut paths = Vec::new();
            self.fn_paths_of(&c.expr, &mut paths);
            found.extend(paths.iter().map(|p| forwarding(p, arity)));
        }
        self.store(slot, found);
    }
    fn visit_local(&mut self, l: &'ast syn::Local) {
        syn::visit::visit_local(self, l);
        // `let table: [(&str, HandlerFn); 2] = [("a", on_a), ("b", on_b)];`: the crate
        // functions written there are coerced to the alias.
        if let (syn::Pat::Type(pt), Some(init)) = (&l.pat, &l.init) {
            let mut aliases = Vec::new();
            self.fn_aliases_in(&pt.ty, &mut aliases);
            if let [(alias, arity)] = &aliases[..] {
                let slot = fn_alias_slot(alias);
                let mut paths = Vec::new();
                self.fn_paths_of(&init.expr, &mut paths);
                let found = paths.iter().map(|p| forwarding(p, *arity)).collect();
                self.store(slot, found);
            }
        }
        if let syn::Pat::Ident(i) = untyped(&l.pat) {
            let name = i.ident.to_string();
            let mut found = Vec::new();
            if let Some(init) = &l.init {
                self.closures_of(&init.expr, &mut found);
            }
            // A later `let` of the same name shadows what the earlier one held.
            if found.is_empty() {
                self.locals.remove(&name);
            } else {
                self.locals.insert(name, found);
            }
        }
    }
    visit_named_fns!();
}

/// The closures `items` store in slots of the crate's structs, in source order.
pub(crate) fn stored_closures(
    apis: &Apis,
    index: &CrateIndex,
    items: &[syn::Item],
    include_tests: bool,
) -> Vec<StoredClosure> {
    let mut v = V {
        apis,
        index,
        include_tests,
        out: Vec::new(),
        seen: BTreeSet::new(),
        locals: BTreeMap::new(),
        module: Vec::new(),
        self_ty: None,
        outer: None,
        fn_aliases: fn_aliases(index),
    };
    for item in items {
        v.visit_item(item);
    }
    v.out
}

/// The closure a crate function put in a fn-pointer value amounts to: `|a0, a1| f(a0, a1)`
/// (written where the function is named).
fn forwarding(f: &syn::ExprPath, arity: usize) -> syn::ExprClosure {
    let span = syn::spanned::Spanned::span(f);
    let params: Vec<syn::Ident> = (0..arity)
        .map(|i| syn::Ident::new(&format!("__fn_arg{i}"), span))
        .collect();
    syn::parse_quote_spanned!(span=> |#(#params),*| #f(#(#params),*))
}

/// A stored closure as the function it amounts to: its parameters (an untyped one
/// typed `_`), and its body; a closure that returns a future (`|p| Box::pin(handle(p))`,
/// `|p| async move { .. }`) is an `async fn` running that future to its end (the caller
/// awaits what the slot's call returns).
fn as_fn(c: &syn::ExprClosure) -> syn::ItemFn {
    let span = c.or1_token.span;
    let inputs = super::worker::closure_inputs(c);
    let future = c.asyncness.is_some() || returns_future(&c.body);
    let block = if c.asyncness.is_some() {
        block_of(&c.body)
    } else if future {
        future_body(&c.body)
    } else {
        block_of(&c.body)
    };
    syn::ItemFn {
        attrs: Vec::new(),
        vis: syn::Visibility::Inherited,
        sig: syn::Signature {
            constness: None,
            asyncness: future.then(|| syn::Token![async](span)),
            unsafety: None,
            abi: None,
            fn_token: syn::Token![fn](span),
            ident: syn::Ident::new("__stored_closure", span),
            generics: syn::Generics::default(),
            paren_token: syn::token::Paren(span),
            inputs,
            variadic: None,
            output: if future {
                syn::ReturnType::Default
            } else {
                c.output.clone()
            },
        },
        block: Box::new(block),
    }
}

/// A closure body that is a future: an `async` block, or `Box::pin(..)` of one or of a call.
fn returns_future(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::Paren(p) => returns_future(&p.expr),
        syn::Expr::Async(_) => true,
        syn::Expr::Call(c) => {
            c.args.len() == 1
                && matches!(&*c.func, syn::Expr::Path(p)
                    if p.path.segments.last().is_some_and(|s| s.ident == "pin"))
        }
        syn::Expr::Block(b) if b.label.is_none() => match b.block.stmts.last() {
            Some(syn::Stmt::Expr(tail, None)) => returns_future(tail),
            _ => false,
        },
        _ => false,
    }
}

/// The values a holder expression holds, each given to `f`: through parentheses and
/// references, the elements of an array, a tuple or `vec![..]`, the arguments of a
/// path call (`Box::new(..)`, `Arc::new(..)`, `Some(..)`, `HashMap::from([..])`), the
/// receiver of a method without arguments (`.into()`, `.collect()` of an array).
fn each_held(e: &syn::Expr, f: &mut dyn FnMut(&syn::Expr)) {
    match e {
        syn::Expr::Paren(p) => f(&p.expr),
        syn::Expr::Reference(r) => f(&r.expr),
        syn::Expr::Array(a) => a.elems.iter().for_each(f),
        syn::Expr::Tuple(t) => t.elems.iter().for_each(f),
        syn::Expr::Call(c) if matches!(&*c.func, syn::Expr::Path(_)) => c.args.iter().for_each(f),
        syn::Expr::MethodCall(m) if m.args.is_empty() => f(&m.receiver),
        syn::Expr::Macro(m) if m.mac.path.is_ident("vec") => {
            let parser = syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated;
            if let Ok(elems) = m.mac.parse_body_with(parser) {
                elems.iter().for_each(f);
            }
        }
        _ => {}
    }
}
