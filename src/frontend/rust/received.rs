//! Receive helpers: a function that takes messages from a consumer and returns
//! them (`async fn next_batch(c: &StreamConsumer) -> Result<Vec<OwnedMessage>>`,
//! `fn poll(&self) -> Option<Delivery>`). Its callers obtain those messages: a call
//! to it is a receive where it is made, so the caller is the handler that acks
//! them (SPEC §2, what a handler is).
//!
//! Read from the body's syntax when the index is built: the returned expression,
//! through `Ok(..)`/`Some(..)`, `vec![..]`, `?`, `.await` and the packs' alias
//! methods (`detach`), is a pack's receive call, or a binding that holds one (a
//! `let`, a match arm's or `if let`'s pattern over one) or that such values are
//! pushed into (`batch.push(m.detach())`), or a value taken from one: a field (SQS
//! `out.messages`, `msg.receipt_handle`, the token its ack names), one of the
//! messages a response holds, a tuple or a struct holding it (`Ok((event,
//! handle))`). A builder receive counts through its terminal; one whose pack names
//! no message role gives an empty role. The receiver's role comes from the
//! parameters' declared types, a `let` with a type, or a field of `self` declared
//! in the same file; a receive call the packs allow on any receiver (`on = ["?"]`)
//! needs none.

use std::cell::RefCell;
use std::collections::HashMap;

use syn::visit::Visit;

use super::index::IndexCx;
use crate::apis::{ApiEvent, StdNames};

/// The fields of the structs a file declares, by struct and field name.
pub(super) type FileFields<'a> = HashMap<String, HashMap<String, &'a syn::Type>>;

/// The structs of `items` (and of inline modules) with their named fields.
pub(super) fn file_fields(items: &[syn::Item]) -> FileFields<'_> {
    let mut out: FileFields = HashMap::new();
    let mut stack: Vec<&[syn::Item]> = vec![items];
    while let Some(items) = stack.pop() {
        for item in items {
            match item {
                syn::Item::Struct(s) => {
                    let fields = out.entry(s.ident.to_string()).or_default();
                    for f in &s.fields {
                        if let Some(id) = &f.ident {
                            fields.insert(id.to_string(), &f.ty);
                        }
                    }
                }
                syn::Item::Mod(m) => {
                    if let Some((_, inner)) = &m.content {
                        stack.push(inner);
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// The role of the messages the function returns, when it returns what a pack's
/// receive call gave it (empty when the pack names none: a message of no role), or
/// a field of one (its ack token) in a tuple or a struct; `None` for a function returning `()`, a stream or a
/// consumer (a receive source, see `stream_source`), or anything else.
pub(super) fn returned_messages(
    cx: &IndexCx,
    fields: &FileFields,
    sig: &syn::Signature,
    block: &syn::Block,
    self_ty: Option<&str>,
) -> Option<String> {
    if super::index::returns_unit(&sig.output) || cx.apis.methods.is_empty() {
        return None;
    }
    let mut returned: Vec<&syn::Expr> = Vec::new();
    if let Some(syn::Stmt::Expr(e, None)) = block.stmts.last() {
        returned.push(e);
    }
    let mut v = Body {
        std: &cx.apis.std,
        cx,
        receives: false,
        returns: Vec::new(),
        lets: Vec::new(),
        matched: Vec::new(),
        pushed: Vec::new(),
    };
    v.visit_block(block);
    // Only a pack's receive call the resolver can reach gives a role: a body with
    // none returns no messages (most bodies; the search below is not cheap).
    if !v.receives {
        return None;
    }
    returned.extend(v.returns.iter().copied());
    let r = Resolver {
        cx,
        fields,
        sig,
        body: &v,
        self_ty,
        memo: RefCell::default(),
        value_memo: RefCell::default(),
    };
    returned.into_iter().find_map(|e| r.role_of(e, 0))
}

/// What the resolver reads of a body: its returns, the sources of each binding
/// name, and what is pushed into each name.
struct Body<'a> {
    std: &'a StdNames,
    cx: &'a IndexCx<'a>,
    /// The body calls a method a pack names as a receive (outside closures, async
    /// blocks and nested items), or a macro's tokens name one.
    receives: bool,
    returns: Vec<&'a syn::Expr>,
    /// A name bound by `let`, with its declared type and initializer.
    lets: Vec<(String, Option<&'a syn::Type>, Option<&'a syn::Expr>)>,
    /// A name bound by a pattern (a match arm's, `if let`'s, `while let`'s) over a
    /// value: the value, when the name sits in the pattern's success side.
    matched: Vec<(String, &'a syn::Expr)>,
    /// `name.push(x)`, `name.insert(k, x)` (the runtime pack's `store_methods`).
    pushed: Vec<(String, &'a syn::Expr)>,
}

/// The names a pattern binds on its success side (`Ok(Ok(m))`, `Some(m)`, `m`),
/// not under `Err(..)` / `None`.
fn success_names(std: &StdNames, p: &syn::Pat, out: &mut Vec<String>) {
    match p {
        syn::Pat::Ident(pi) => {
            if let Some((_, sub)) = &pi.subpat {
                success_names(std, sub, out);
            }
            out.push(pi.ident.to_string());
        }
        syn::Pat::TupleStruct(ts) => {
            let last = ts.path.segments.last().map(|s| s.ident.to_string());
            let r = &std.results;
            if last.is_some_and(|l| r.side(&l) == Some(true) || r.some.contains(&l)) {
                for e in &ts.elems {
                    success_names(std, e, out);
                }
            }
        }
        syn::Pat::Reference(r) => success_names(std, &r.pat, out),
        syn::Pat::Paren(pp) => success_names(std, &pp.pat, out),
        syn::Pat::Type(pt) => success_names(std, &pt.pat, out),
        _ => {}
    }
}

impl<'a> Visit<'a> for Body<'a> {
    fn visit_expr_return(&mut self, r: &'a syn::ExprReturn) {
        if let Some(e) = &r.expr {
            self.returns.push(e);
        }
        syn::visit::visit_expr_return(self, r);
    }
    fn visit_local(&mut self, l: &'a syn::Local) {
        let init = l.init.as_ref().map(|i| &*i.expr);
        match &l.pat {
            syn::Pat::Ident(pi) => self.lets.push((pi.ident.to_string(), None, init)),
            syn::Pat::Type(pt) => {
                if let syn::Pat::Ident(pi) = &*pt.pat {
                    self.lets.push((pi.ident.to_string(), Some(&pt.ty), init));
                }
            }
            p => {
                if let Some(init) = init {
                    let mut names = Vec::new();
                    success_names(self.std, p, &mut names);
                    self.matched.extend(names.into_iter().map(|n| (n, init)));
                }
            }
        }
        syn::visit::visit_local(self, l);
    }
    fn visit_expr_match(&mut self, m: &'a syn::ExprMatch) {
        for arm in &m.arms {
            let mut names = Vec::new();
            success_names(self.std, &arm.pat, &mut names);
            self.matched
                .extend(names.into_iter().map(|n| (n, &*m.expr)));
        }
        syn::visit::visit_expr_match(self, m);
    }
    fn visit_expr_let(&mut self, l: &'a syn::ExprLet) {
        let mut names = Vec::new();
        success_names(self.std, &l.pat, &mut names);
        self.matched
            .extend(names.into_iter().map(|n| (n, &*l.expr)));
        syn::visit::visit_expr_let(self, l);
    }
    fn visit_expr_method_call(&mut self, mc: &'a syn::ExprMethodCall) {
        if !self.receives && self.is_receive(&mc.method.to_string()) {
            self.receives = true;
        }
        if self.std.store_methods.contains(&mc.method.to_string()) {
            if let (syn::Expr::Path(p), Some(arg)) = (&*mc.receiver, mc.args.last()) {
                if let Some(id) = p.path.get_ident() {
                    self.pushed.push((id.to_string(), arg));
                }
            }
        }
        syn::visit::visit_expr_method_call(self, mc);
    }
    fn visit_macro(&mut self, m: &'a syn::Macro) {
        if !self.receives && self.names_receive(m.tokens.clone()) {
            self.receives = true;
        }
    }
    // Closures, async blocks and nested items return their own values.
    fn visit_expr_closure(&mut self, _: &'a syn::ExprClosure) {}
    fn visit_expr_async(&mut self, _: &'a syn::ExprAsync) {}
    fn visit_item(&mut self, _: &'a syn::Item) {}
}

impl Body<'_> {
    fn is_receive(&self, method: &str) -> bool {
        let specs = self.cx.apis.methods.get(method);
        specs.is_some_and(|s| s.iter().any(|s| s.event == ApiEvent::Receive))
    }

    /// Whether tokens (a macro's, `vec![rx.recv()]`) name a receive method.
    fn names_receive(&self, tokens: proc_macro2::TokenStream) -> bool {
        tokens.into_iter().any(|t| match t {
            proc_macro2::TokenTree::Ident(i) => self.is_receive(&i.to_string()),
            proc_macro2::TokenTree::Group(g) => self.names_receive(g.stream()),
            _ => false,
        })
    }
}

struct Resolver<'r, 'a> {
    cx: &'r IndexCx<'r>,
    fields: &'r FileFields<'r>,
    sig: &'r syn::Signature,
    body: &'r Body<'a>,
    self_ty: Option<&'r str>,
    /// [`Resolver::binding_role`]'s answers, by name and depth.
    memo: RefCell<HashMap<(String, u32), Option<String>>>,
    /// The same for [`Resolver::value_role`]'s bindings.
    value_memo: RefCell<HashMap<(String, u32), Option<String>>>,
}

const DEPTH: u32 = 24;

/// Steps of `Option` and iterators, besides the runtime pack's element methods, that
/// give one of the messages a response or a batch holds.
const ELEMENT_STEPS: [&str; 3] = ["next", "and_then", "pop"];

impl Resolver<'_, '_> {
    /// The message role of `e`: a receive call's result, through wrappers and
    /// bindings.
    fn role_of(&self, e: &syn::Expr, depth: u32) -> Option<String> {
        if depth > DEPTH {
            return None;
        }
        let std = &self.cx.apis.std;
        match e {
            syn::Expr::Paren(p) => self.role_of(&p.expr, depth + 1),
            syn::Expr::Await(a) => self.role_of(&a.base, depth + 1),
            syn::Expr::Try(t) => self.role_of(&t.expr, depth + 1),
            syn::Expr::Reference(r) => self.role_of(&r.expr, depth + 1),
            // A message's ack token returned beside what was decoded from it
            // (`Ok((event, msg.receipt_handle))`): the tuple holds the message.
            syn::Expr::Tuple(t) => t.elems.iter().find_map(|e| self.role_of(e, depth + 1)),
            syn::Expr::Struct(s) => s
                .fields
                .iter()
                .find_map(|f| self.role_of(&f.expr, depth + 1)),
            // A field of the response or of a message (`out.messages`,
            // `msg.receipt_handle`, the token its ack names): the message's.
            syn::Expr::Field(f) => self.role_of(&f.base, depth + 1),
            // What a branch or a block gives (`match rx.next().await { Some(Ok(d))
            // => Some(d), _ => None }`).
            syn::Expr::Block(b) => self.tail_role(&b.block, depth),
            syn::Expr::If(i) => self.tail_role(&i.then_branch, depth).or_else(|| {
                let (_, e) = i.else_branch.as_ref()?;
                self.role_of(e, depth + 1)
            }),
            syn::Expr::Match(m) => m.arms.iter().find_map(|a| self.role_of(&a.body, depth + 1)),
            syn::Expr::Call(c) => {
                let syn::Expr::Path(f) = &*c.func else {
                    return None;
                };
                let last = f.path.segments.last()?.ident.to_string();
                if std.passthrough.contains(&last) && c.args.len() == 1 {
                    self.role_of(&c.args[0], depth + 1)
                } else if std.passthrough_last.contains(&last) {
                    self.role_of(c.args.last()?, depth + 1)
                } else {
                    None
                }
            }
            syn::Expr::Macro(m) => {
                if !m.mac.path.is_ident("vec") {
                    return None;
                }
                let elems = m
                    .mac
                    .parse_body_with(
                        syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated,
                    )
                    .ok()?;
                elems.iter().find_map(|e| self.role_of(e, depth + 1))
            }
            syn::Expr::MethodCall(mc) => self.call_role(mc, None, depth),
            syn::Expr::Path(p) => {
                let name = p.path.get_ident()?.to_string();
                // A binding's role at a depth is the same wherever it is asked: the
                // bindings of a name resolve through each other (`let m = m.body`),
                // so the search would repeat each exponentially often.
                let key = (name, depth);
                if let Some(r) = self.memo.borrow().get(&key) {
                    return r.clone();
                }
                let r = self.binding_role(&key.0, depth);
                self.memo.borrow_mut().insert(key, r.clone());
                r
            }
            _ => None,
        }
    }

    /// The message role of what the bindings named `name` hold.
    fn binding_role(&self, name: &str, depth: u32) -> Option<String> {
        let b = self.body;
        let lets = b.lets.iter().filter(|(n, _, _)| *n == name);
        let from_let = lets.filter_map(|(_, _, init)| *init);
        let from_match = b
            .matched
            .iter()
            .filter(|(n, _)| *n == name)
            .map(|(_, e)| *e);
        let from_push = b.pushed.iter().filter(|(n, _)| *n == name).map(|(_, e)| *e);
        from_let
            .chain(from_match)
            .chain(from_push)
            .find_map(|e| self.role_of(e, depth + 1))
    }

    /// The message role of a method call's result: a pack's receive (for a
    /// builder, reached through its terminal: `terminal`, the method ending the
    /// chain above), or one of the messages a response holds.
    fn call_role(
        &self,
        mc: &syn::ExprMethodCall,
        terminal: Option<&str>,
        depth: u32,
    ) -> Option<String> {
        if depth > DEPTH {
            return None;
        }
        let std = &self.cx.apis.std;
        let name = mc.method.to_string();
        if terminal.is_none() && std.aliases.contains(&name) {
            return self.role_of(&mc.receiver, depth + 1);
        }
        let receiver = || self.value_role(&mc.receiver, 0);
        let specs = self.cx.apis.methods.get(&name);
        let received = specs.and_then(|specs| {
            let receiver = receiver();
            specs.iter().find_map(|s| {
                let fits = s.on.iter().any(|o| {
                    o == "?" && receiver.is_none() || receiver.as_deref() == Some(o.as_str())
                });
                let arity = s.arity.is_none_or(|a| a == mc.args.len());
                let ends = match terminal {
                    None => s.terminals.is_empty(),
                    Some(t) => s.terminals.iter().any(|x| x == t),
                };
                // A receive whose pack names no message role (SQS
                // `receive_message`: a response holding the messages): an empty role.
                (s.event == ApiEvent::Receive && fits && arity && ends)
                    .then(|| s.returns.clone().unwrap_or_default())
                    .filter(|r| !super::lower::is_stream_role(Some(r)))
            })
        });
        if received.is_some() {
            return received;
        }
        // A builder's step: the chain below may start a receive this call ends (a
        // chain of the syntax, as deep as it is written: no step counts).
        if let syn::Expr::MethodCall(inner) = &*mc.receiver {
            if let Some(r) = self.call_role(inner, terminal.or(Some(&name)), depth) {
                return Some(r);
            }
        }
        // One of the messages a response or a batch holds
        // (`out.messages.and_then(|v| v.into_iter().next())`).
        let element = std.element_methods.contains(&name)
            || std.element_accessors.contains(&name)
            || ELEMENT_STEPS.contains(&name.as_str());
        (terminal.is_none() && element)
            .then(|| self.role_of(&mc.receiver, depth + 1))
            .flatten()
    }

    fn tail_role(&self, b: &syn::Block, depth: u32) -> Option<String> {
        match b.stmts.last()? {
            syn::Stmt::Expr(e, None) => self.role_of(e, depth + 1),
            _ => None,
        }
    }

    /// The role of a value, as a method call's receiver: a parameter's or a typed
    /// `let`'s declared type, a field of `self` declared in this file, or what a
    /// binding holds, through the wrappers' accessors (`let mut guard =
    /// self.receiver.lock().await; if let Some(r) = guard.as_mut() { r.. }`).
    fn value_role(&self, e: &syn::Expr, depth: u32) -> Option<String> {
        if depth > DEPTH {
            return None;
        }
        let ty = match e {
            syn::Expr::Paren(p) => return self.value_role(&p.expr, depth + 1),
            syn::Expr::Reference(r) => return self.value_role(&r.expr, depth + 1),
            syn::Expr::Await(a) => return self.value_role(&a.base, depth + 1),
            syn::Expr::Try(t) => return self.value_role(&t.expr, depth + 1),
            syn::Expr::MethodCall(mc)
                if self.cx.apis.std.aliases.contains(&mc.method.to_string()) =>
            {
                return self.value_role(&mc.receiver, depth + 1)
            }
            syn::Expr::Path(p) => {
                let id = p.path.get_ident()?;
                let param = self.sig.inputs.iter().find_map(|a| match a {
                    syn::FnArg::Typed(pt) => match &*pt.pat {
                        syn::Pat::Ident(pi) if pi.ident == *id => Some(&*pt.ty),
                        _ => None,
                    },
                    syn::FnArg::Receiver(_) => None,
                });
                let typed_let = || {
                    self.body
                        .lets
                        .iter()
                        .find_map(|(n, t, _)| (*id == n).then_some(*t).flatten())
                };
                match param.or_else(typed_let) {
                    Some(ty) => ty,
                    None => {
                        // What the binding was given (a `let`, or a pattern's value);
                        // by name and depth, as in `role_of`.
                        let key = (id.to_string(), depth);
                        if let Some(r) = self.value_memo.borrow().get(&key) {
                            return r.clone();
                        }
                        let b = self.body;
                        let lets = b.lets.iter().filter(|(n, _, _)| *id == n);
                        let matched = b.matched.iter().filter(|(n, _)| *id == n);
                        let r = lets
                            .filter_map(|(_, _, init)| *init)
                            .chain(matched.map(|(_, e)| *e))
                            .find_map(|e| self.value_role(e, depth + 1));
                        self.value_memo.borrow_mut().insert(key, r.clone());
                        return r;
                    }
                }
            }
            syn::Expr::Field(f) => {
                let syn::Expr::Path(base) = &*f.base else {
                    return None;
                };
                if !base.path.is_ident("self") {
                    return None;
                }
                let syn::Member::Named(field) = &f.member else {
                    return None;
                };
                *self.fields.get(self.self_ty?)?.get(&field.to_string())?
            }
            _ => return None,
        };
        let cx = self.cx;
        super::types::type_info(cx.apis, cx.uses, cx.index, ty, self.self_ty).role
    }
}
