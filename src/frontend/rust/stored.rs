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
    /// Locals and parameters of the function being visited whose crate type is known
    /// ([`V::type_of`]): a setter called on one is that type's.
    local_types: BTreeMap<String, String>,
    module: Vec<String>,
    self_ty: Option<String>,
    outer: Option<(String, (usize, usize))>,
    /// The crate's fn-pointer aliases and their arities ([`fn_aliases`]).
    fn_aliases: BTreeMap<String, usize>,
    /// The parameter names of the method being visited.
    params: Vec<String>,
    /// Locals of the function being visited whose values hold one fn-pointer alias
    /// (`let mut table: HashMap<&str, HandlerFn> = HashMap::new();`), by name.
    alias_locals: BTreeMap<String, (String, usize)>,
    /// The one fn-pointer alias the visited function's return type holds
    /// (`fn table() -> HashMap<&'static str, HandlerFn>`): its locals are filled for it.
    returns_alias: Option<(String, usize)>,
    /// The crate-wide facts read ([`super::lower::IndexReads`]).
    reads: &'s std::cell::RefCell<super::lower::IndexReads>,
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

    /// The crate type an expression's value is of, when the syntax says: `self`, a
    /// local or parameter of a known type, `self.field` (a field's declared type), a
    /// struct literal, a constructor (`Router::new()`: the function's declared return
    /// type; one the crate does not write, `Router::default()` of a derive, by the
    /// runtime pack's `constructors`), a crate method's declared return type
    /// (`Router::default().route(..).route(..)`), through `&`, `?` and `.await`.
    fn type_of(&self, e: &syn::Expr) -> Option<String> {
        match e {
            syn::Expr::Paren(p) => self.type_of(&p.expr),
            syn::Expr::Group(g) => self.type_of(&g.expr),
            syn::Expr::Reference(r) => self.type_of(&r.expr),
            syn::Expr::Try(t) => self.type_of(&t.expr),
            syn::Expr::Await(a) => self.type_of(&a.base),
            syn::Expr::Path(p) if p.path.is_ident("self") => self.self_ty.clone(),
            syn::Expr::Path(p) => self
                .local_types
                .get(&p.path.get_ident()?.to_string())
                .cloned(),
            syn::Expr::Field(f) => {
                let base = self.type_of(&f.base)?;
                let syn::Member::Named(n) = &f.member else {
                    return None;
                };
                self.reads.borrow_mut().fields.insert(base.clone());
                let ti = self.index.fields.get(&base)?.get(&n.to_string())?;
                self.crate_type(ti)
            }
            syn::Expr::Struct(s) => self.type_named(s.path.segments.last()?),
            syn::Expr::Call(c) => {
                let syn::Expr::Path(p) = &*c.func else {
                    return None;
                };
                let n = p.path.segments.len();
                let ty = self.type_named(p.path.segments.iter().nth(n.checked_sub(2)?)?)?;
                let f = p.path.segments.last()?.ident.to_string();
                match self.method_ret(&ty, &f) {
                    Some(ret) => ret,
                    None => self.apis.std.constructors.contains(&f).then_some(ty),
                }
            }
            syn::Expr::MethodCall(m) => {
                let recv = self.type_of(&m.receiver)?;
                self.method_ret(&recv, &m.method.to_string())?
            }
            _ => None,
        }
    }

    /// The crate type a path segment names (`Self` in an impl), not a trait.
    fn type_named(&self, seg: &syn::PathSegment) -> Option<String> {
        let name = seg.ident.to_string();
        if name == "Self" {
            return self.self_ty.clone();
        }
        self.crate_type_name(name)
    }

    /// `name` when it is one of the crate's types, not a trait.
    fn crate_type_name(&self, name: String) -> Option<String> {
        (self.index.type_names.contains(&name) && !self.index.traits.contains(&name))
            .then_some(name)
    }

    /// The crate type a written type names (through references and wrappers,
    /// `&mut Router`, `Arc<Router>`), not a trait.
    fn declared(&self, ty: &syn::Type) -> Option<String> {
        self.crate_type_name(super::type_name(ty)?)
    }

    /// A crate type a declared type is of (not a collection of them, nor a slot).
    fn crate_type(&self, ti: &super::TypeInfo) -> Option<String> {
        let t = ti.crate_type.as_ref()?;
        (!ti.outside && !is_slot(t)).then(|| t.clone())
    }

    /// The crate type the method `name` of type `ty` returns: `None` when the crate
    /// has no such method, `Some(None)` when it has but its return type is none of
    /// the crate's.
    fn method_ret(&self, ty: &str, name: &str) -> Option<Option<String>> {
        self.reads.borrow_mut().fns.insert(name.to_string());
        let sig =
            (self.index.fns.get(name)?.iter()).find(|s| s.self_type.as_deref() == Some(ty))?;
        Some(self.crate_type(&sig.ret))
    }

    /// `router.on("subject", |body| ..)`: a call of a crate method that stores its
    /// parameter in a slot of its type (`FnSig::stores_param`) fills that slot with
    /// the closure (or the crate function, forwarded) given there. The method is the
    /// receiver's type's when that type is known and has one so named; else, by
    /// name, only when one method of the crate has the name (two types' setters of
    /// one name: a closure given to one is not stored in the other's table).
    fn setter_call(&mut self, m: &syn::ExprMethodCall) {
        let name = m.method.to_string();
        // A read of the crate's functions so named: the file is stored again when
        // their signatures change (a setter's body parsed later).
        if self.index.fns.contains_key(&name) {
            self.reads.borrow_mut().fns.insert(name.clone());
        }
        let Some(sigs) = self.index.fns.get(&name) else {
            return;
        };
        let methods: Vec<&super::FnSig> = sigs.iter().filter(|s| s.self_type.is_some()).collect();
        let recv = self.type_of(&m.receiver);
        let typed: Vec<&super::FnSig> = (methods.iter().copied())
            .filter(|s| recv.is_some() && s.self_type == recv)
            .collect();
        let called = match (typed.is_empty(), methods.len()) {
            (false, _) => typed,
            (true, 1) => methods,
            (true, _) => Vec::new(),
        };
        let setters: Vec<(String, usize, Option<usize>)> = (called.iter())
            .filter_map(|s| {
                let (field, at, arity) = s.stores_param.clone()?;
                let slot = self.slot(s.self_type.as_deref()?, &field)?;
                Some((slot, at, arity))
            })
            .collect();
        for (slot, at, arity) in setters {
            let Some(arg) = m.args.iter().nth(at) else {
                continue;
            };
            let mut found = Vec::new();
            self.closures_of(arg, &mut found);
            if let (true, Some(arity)) = (found.is_empty(), arity) {
                let mut paths = Vec::new();
                self.fn_paths_of(arg, &mut paths);
                found.extend(paths.iter().map(|p| forwarding(p, arity)));
            }
            self.store(slot, found);
        }
    }

    fn in_fn(&mut self, name: String, body: &syn::Block, visit: impl FnOnce(&mut Self)) {
        let s = body.brace_token.span.open().start();
        let outer_fn = self.outer.replace((name, (s.line, s.column)));
        let locals = std::mem::take(&mut self.locals);
        let local_types = std::mem::take(&mut self.local_types);
        visit(self);
        self.locals = locals;
        self.local_types = local_types;
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
        self.setter_call(m);
        // `routes.insert(k, Box::new(|..| ..))`, `hooks.push(..)` (the packs'
        // `store_methods`): the local holds them; `self.routes.insert(..)` in a method
        // of the slot's type fills the slot.
        let fills = self.apis.std.store_methods.contains(&m.method.to_string());
        if let (true, Some(field)) = (fills, self_field(&m.receiver)) {
            let slot = (self.self_ty.as_deref()).and_then(|t| self.slot(t, &field));
            if let Some(slot) = slot {
                let mut found = Vec::new();
                for a in &m.args {
                    self.closures_of(a, &mut found);
                }
                // A closure that only forwards to a parameter (`move |b| f(b)` in a
                // setter) holds nothing known here: the setter's callers fill the slot.
                found.retain(|c| !forwards_to_param(c, &self.params));
                self.store(slot, found);
            }
        }
        let syn::Expr::Path(p) = &*m.receiver else {
            return;
        };
        let Some(name) = p.path.get_ident().map(|i| i.to_string()) else {
            return;
        };
        // `table.insert("points.earned", credit_points)` into a local of a fn-pointer
        // alias's values: the crate functions written there are coerced to the alias.
        let alias = (self.alias_locals.get(&name).cloned()).or_else(|| self.returns_alias.clone());
        if let (true, Some((alias, arity))) = (fills, alias) {
            let mut paths = Vec::new();
            for a in &m.args {
                self.fn_paths_of(a, &mut paths);
            }
            let found = paths.iter().map(|p| forwarding(p, arity)).collect();
            self.store(fn_alias_slot(&alias), found);
        }
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
        let mut aliases = Vec::new();
        if let syn::Pat::Type(pt) = &l.pat {
            self.fn_aliases_in(&pt.ty, &mut aliases);
        }
        if let syn::Pat::Ident(i) = untyped(&l.pat) {
            let name = i.ident.to_string();
            match &aliases[..] {
                [one] => self.alias_locals.insert(name, one.clone()),
                _ => self.alias_locals.remove(&name),
            };
        }
        if let (syn::Pat::Type(_), Some(init)) = (&l.pat, &l.init) {
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
            // `let r: Router = ..`, `let mut r = Router::new();`.
            let declared = match &l.pat {
                syn::Pat::Type(pt) => self.declared(&pt.ty),
                _ => None,
            };
            let ty = declared.or_else(|| l.init.as_ref().and_then(|i| self.type_of(&i.expr)));
            match ty {
                Some(t) => self.local_types.insert(name.clone(), t),
                None => self.local_types.remove(&name),
            };
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
    fn visit_signature(&mut self, s: &'ast syn::Signature) {
        self.params = param_names(s).into_iter().map(|(n, _)| n).collect();
        self.alias_locals.clear();
        let mut aliases = Vec::new();
        if let syn::ReturnType::Type(_, ty) = &s.output {
            self.fn_aliases_in(ty, &mut aliases);
        }
        self.returns_alias = match &aliases[..] {
            [one] => Some(one.clone()),
            _ => None,
        };
        // `router: &mut Router`: a parameter of a crate type.
        for a in &s.inputs {
            let syn::FnArg::Typed(t) = a else {
                continue;
            };
            if let (syn::Pat::Ident(p), Some(ty)) = (untyped(&t.pat), self.declared(&t.ty)) {
                self.local_types.insert(p.ident.to_string(), ty);
            }
        }
        syn::visit::visit_signature(self, s);
    }
}

/// `self.field` (through parentheses and references): the field's name.
fn self_field(e: &syn::Expr) -> Option<String> {
    match e {
        syn::Expr::Paren(p) => self_field(&p.expr),
        syn::Expr::Reference(r) => self_field(&r.expr),
        syn::Expr::Field(f) => match (&*f.base, &f.member) {
            (syn::Expr::Path(p), syn::Member::Named(n)) if p.path.is_ident("self") => {
                Some(n.to_string())
            }
            _ => None,
        },
        _ => None,
    }
}

/// A function's parameters bound to a plain name (`self` not counted), with their
/// places.
fn param_names(s: &syn::Signature) -> Vec<(String, usize)> {
    (s.inputs.iter())
        .filter_map(|a| match a {
            syn::FnArg::Typed(t) => Some(t),
            syn::FnArg::Receiver(_) => None,
        })
        .enumerate()
        .filter_map(|(i, t)| match untyped(&t.pat) {
            syn::Pat::Ident(p) => Some((p.ident.to_string(), i)),
            _ => None,
        })
        .collect()
}

/// The parameters that may hold a callable: of a generic type of the function
/// (`f: F`), an `impl Trait`, or a type naming `Fn`, `FnMut` or `FnOnce`.
fn callable_params(s: &syn::Signature, index: &CrateIndex) -> Vec<(String, usize)> {
    let generic: Vec<String> = (s.generics.type_params())
        .map(|t| t.ident.to_string())
        .collect();
    let typed: Vec<&syn::PatType> = (s.inputs.iter())
        .filter_map(|a| match a {
            syn::FnArg::Typed(t) => Some(t),
            syn::FnArg::Receiver(_) => None,
        })
        .collect();
    let callable = |ty: &syn::Type| match ty {
        syn::Type::ImplTrait(_) => true,
        syn::Type::Path(p)
            if p.path
                .get_ident()
                .is_some_and(|i| generic.contains(&i.to_string())) =>
        {
            true
        }
        t => {
            let text = quote::ToTokens::to_token_stream(t).to_string();
            // A crate alias of a callable (`type Handler = Box<dyn Fn(..) -> ..>`).
            let alias = match t {
                syn::Type::Path(p) => {
                    (p.path.segments.last()).and_then(|s| index.aliases.get(&s.ident.to_string()))
                }
                _ => None,
            };
            names_callable(&text) || alias.is_some_and(|a| names_callable(a))
        }
    };
    param_names(s)
        .into_iter()
        .filter(|(_, i)| typed.get(*i).is_some_and(|t| callable(&t.ty)))
        .collect()
}

/// The traits of callables: a type naming one may hold a closure.
pub(crate) const CALLABLE_TRAITS: [&str; 3] = ["Fn", "FnMut", "FnOnce"];

/// Whether a type's text names a callable trait ([`CALLABLE_TRAITS`]).
pub(crate) fn names_callable(text: &str) -> bool {
    (text.split(|c: char| !c.is_alphanumeric() && c != '_')).any(|w| CALLABLE_TRAITS.contains(&w))
}

/// The first call of one of `params` in a closure's body (`f(b)` in `move |b|
/// Box::pin(f(b))`): the parameter and how many arguments it is given.
fn param_call(c: &syn::ExprClosure, params: &[String]) -> Option<(String, usize)> {
    struct Calls<'p>(&'p [String], Option<(String, usize)>);
    impl<'ast> Visit<'ast> for Calls<'_> {
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            if let syn::Expr::Path(p) = &*c.func {
                let named = p.path.get_ident().map(|i| i.to_string());
                if let Some(n) = named.filter(|n| self.1.is_none() && self.0.contains(n)) {
                    self.1 = Some((n, c.args.len()));
                }
            }
            syn::visit::visit_expr_call(self, c);
        }
    }
    let mut v = Calls(params, None);
    v.visit_expr(&c.body);
    v.1
}

/// A closure whose body calls one of the enclosing function's parameters.
fn forwards_to_param(c: &syn::ExprClosure, params: &[String]) -> bool {
    param_call(c, params).is_some()
}

/// The parameter a method stores in a field of `self` ([`super::FnSig::stores_param`]):
/// `self.field.insert(k, f)` / `.push(Box::new(f))` (the runtime pack's
/// `store_methods`) or `self.field = f`, `f` held directly or called by a closure
/// stored there (`Box::new(move |b| Box::pin(f(b)))`, whose call gives the arity).
pub(crate) fn stored_param(
    apis: &Apis,
    index: &CrateIndex,
    sig: &syn::Signature,
    body: &syn::Block,
) -> Option<(String, usize, Option<usize>)> {
    let params = callable_params(sig, index);
    if params.is_empty() || !matches!(sig.inputs.first(), Some(syn::FnArg::Receiver(_))) {
        return None;
    }
    struct Stores<'a> {
        apis: &'a Apis,
        params: &'a [(String, usize)],
        found: Option<(String, usize, Option<usize>)>,
    }
    impl Stores<'_> {
        fn held(&mut self, field: String, e: &syn::Expr) {
            if self.found.is_some() {
                return;
            }
            match e {
                syn::Expr::Path(p) => {
                    let named = p.path.get_ident().map(|i| i.to_string());
                    if let Some((_, at)) =
                        self.params.iter().find(|(n, _)| named.as_ref() == Some(n))
                    {
                        self.found = Some((field, *at, None));
                    }
                }
                syn::Expr::Closure(c) => {
                    let names: Vec<String> = self.params.iter().map(|(n, _)| n.clone()).collect();
                    if let Some((name, arity)) = param_call(c, &names) {
                        let at = self
                            .params
                            .iter()
                            .find(|(n, _)| *n == name)
                            .map(|(_, i)| *i);
                        self.found = at.map(|at| (field, at, Some(arity)));
                    }
                }
                other => each_held(other, &mut |x| self.held(field.clone(), x)),
            }
        }
    }
    impl<'ast> Visit<'ast> for Stores<'_> {
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            syn::visit::visit_expr_method_call(self, m);
            let fills = self.apis.std.store_methods.contains(&m.method.to_string());
            if let (true, Some(field)) = (fills, self_field(&m.receiver)) {
                for a in &m.args {
                    self.held(field.clone(), a);
                }
            }
        }
        fn visit_expr_assign(&mut self, a: &'ast syn::ExprAssign) {
            syn::visit::visit_expr_assign(self, a);
            if let Some(field) = self_field(&a.left) {
                self.held(field, &a.right);
            }
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut v = Stores {
        apis,
        params: &params,
        found: None,
    };
    v.visit_block(body);
    let (field, at, arity) = v.found?;
    Some((field, at, arity.or_else(|| fn_bound_arity(sig, at))))
}

/// How many arguments the callable parameter at `at` takes, by its `Fn(..)` bound:
/// in its type (`impl Fn(&[u8]) -> ..`), or on its generic type (`F: Fn(Bytes) ->
/// Fut`, also in the `where` clause).
fn fn_bound_arity(sig: &syn::Signature, at: usize) -> Option<usize> {
    fn arity_in(
        bounds: &syn::punctuated::Punctuated<syn::TypeParamBound, syn::Token![+]>,
    ) -> Option<usize> {
        bounds.iter().find_map(|b| match b {
            syn::TypeParamBound::Trait(t) => match &t.path.segments.last()?.arguments {
                syn::PathArguments::Parenthesized(p) => Some(p.inputs.len()),
                _ => None,
            },
            _ => None,
        })
    }
    let typed = (sig.inputs.iter())
        .filter_map(|a| match a {
            syn::FnArg::Typed(t) => Some(t),
            syn::FnArg::Receiver(_) => None,
        })
        .nth(at)?;
    match &*typed.ty {
        syn::Type::ImplTrait(i) => arity_in(&i.bounds),
        syn::Type::Path(p) => {
            let name = p.path.get_ident()?;
            let own = (sig.generics.type_params())
                .find(|t| t.ident == *name)
                .and_then(|t| arity_in(&t.bounds));
            own.or_else(|| {
                sig.generics
                    .where_clause
                    .as_ref()?
                    .predicates
                    .iter()
                    .find_map(|w| match w {
                        syn::WherePredicate::Type(pt) => match &pt.bounded_ty {
                            syn::Type::Path(b) if b.path.is_ident(name) => arity_in(&pt.bounds),
                            _ => None,
                        },
                        _ => None,
                    })
            })
        }
        _ => None,
    }
}

/// The closures `items` store in slots of the crate's structs, in source order.
pub(crate) fn stored_closures(
    apis: &Apis,
    index: &CrateIndex,
    reads: &std::cell::RefCell<super::lower::IndexReads>,
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
        local_types: BTreeMap::new(),
        module: Vec::new(),
        self_ty: None,
        outer: None,
        fn_aliases: fn_aliases(index),
        params: Vec::new(),
        alias_locals: BTreeMap::new(),
        returns_alias: None,
        reads,
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
        syn::Expr::MethodCall(m) => super::worker::boxes_future(m) && returns_future(&m.receiver),
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
