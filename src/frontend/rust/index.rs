//! The crate index (`CrateIndex`): the names of the crate's types and traits, then each
//! file's function signatures, struct fields and the strings its constants, struct
//! literals and accessors fix. Lowering reads it; it reads no function body but for
//! what a signature's facts need (a fresh id returned, a returned text).

use super::*;

mod params;

/// The `let` bindings a visitor of one body has seen so far: a name bound by a plain
/// `let` (no `else`) to its initializer; a rebinding without one forgets it.
#[derive(Default, Clone)]
pub(super) struct Lets<'ast>(HashMap<String, &'ast syn::Expr>);

impl<'ast> Lets<'ast> {
    pub(super) fn note(&mut self, l: &'ast syn::Local) {
        if let syn::Pat::Ident(i) = untyped(&l.pat) {
            match &l.init {
                Some(init) if init.diverge.is_none() => {
                    self.0.insert(i.ident.to_string(), &init.expr);
                }
                _ => {
                    self.0.remove(&i.ident.to_string());
                }
            }
        }
    }

    /// The initializer of the local `name`.
    pub(super) fn get(&self, name: &str) -> Option<&'ast syn::Expr> {
        self.0.get(name).copied()
    }

    /// The initializer of the local a path names (`bump`), if it is one.
    pub(super) fn of_path(&self, e: &syn::Expr) -> Option<&'ast syn::Expr> {
        match e {
            syn::Expr::Path(p) => self.get(&p.path.get_ident()?.to_string()),
            _ => None,
        }
    }
}
pub(super) use params::{escaped_key, param_key, TABLE_ARG, TEXT_ARG};

pub(super) fn collect_names(
    items: &[syn::Item],
    index: &mut CrateIndex,
    include_tests: bool,
    libs: (&UseMap, &[String]),
) {
    for item in items {
        match item {
            syn::Item::Struct(s) => {
                index.type_names.insert(s.ident.to_string());
            }
            syn::Item::Enum(e) => {
                index.type_names.insert(e.ident.to_string());
                if let Some(variants) = outcome_variants(e) {
                    index.outcomes.insert(e.ident.to_string(), variants);
                }
                let wrapping = library_error_variants(e, libs);
                if !wrapping.is_empty() {
                    index.effect_errors.insert(e.ident.to_string(), wrapping);
                }
            }
            syn::Item::Trait(t) => {
                index.type_names.insert(t.ident.to_string());
                index.traits.insert(t.ident.to_string());
            }
            syn::Item::Type(t) => {
                index.type_names.insert(t.ident.to_string());
                if t.generics.params.is_empty() {
                    let text = quote::ToTokens::to_token_stream(&*t.ty).to_string();
                    index.aliases.insert(t.ident.to_string(), text);
                }
            }
            syn::Item::Mod(m) => {
                if !include_tests && is_test_attr(&m.attrs) {
                    continue;
                }
                if let Some((_, inner)) = &m.content {
                    collect_names(inner, index, include_tests, libs);
                }
            }
            _ => {}
        }
    }
}

/// An outcome enum's variants, each with whether it carries an error; `None` when
/// no variant or every variant does.
fn outcome_variants(e: &syn::ItemEnum) -> Option<HashMap<String, bool>> {
    let error_type = |ty: &syn::Type| idents_of(ty).iter().any(|w| w.ends_with("Error"));
    let variants: HashMap<String, bool> = (e.variants.iter())
        .map(|v| {
            (
                v.ident.to_string(),
                v.fields.iter().any(|f| error_type(&f.ty)),
            )
        })
        .collect();
    let failing = variants.values().filter(|f| **f).count();
    (failing > 0 && failing < variants.len()).then_some(variants)
}

/// The variants of an enum that wrap one error of a library the packs know
/// (`libs.1`, their modules): a single field whose type path starts with the
/// library (`sqlx::Error`, `aws_sdk_sqs::Error`), or names an import of it (`Error`
/// from `use sqlx::Error`), and whose last segment is an error type.
fn library_error_variants(e: &syn::ItemEnum, libs: (&UseMap, &[String])) -> HashSet<String> {
    let (uses, modules) = libs;
    let from_library = |ty: &syn::Type| {
        let syn::Type::Path(tp) = ty else {
            return false;
        };
        let segs: Vec<String> = tp
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        let (Some(first), Some(last)) = (segs.first(), segs.last()) else {
            return false;
        };
        let root = match (segs.len(), uses.get(first)) {
            (1, Some(full)) => full.first().cloned(),
            (1, None) => None,
            _ => Some(first.clone()),
        };
        last.ends_with("Error") && root.is_some_and(|r| modules.contains(&r))
    };
    (e.variants.iter())
        .filter(|v| v.fields.len() == 1 && v.fields.iter().all(|f| from_library(&f.ty)))
        .map(|v| v.ident.to_string())
        .collect()
}

/// A function that gives back no value: no return type, `()`, or a type whose first
/// type argument is `()` (`anyhow::Result<()>`, `Result<(), E>`). Its body returns
/// no id and no stream.
pub(super) fn returns_unit(output: &syn::ReturnType) -> bool {
    let syn::ReturnType::Type(_, ty) = output else {
        return true;
    };
    let unit = |t: &syn::Type| matches!(t, syn::Type::Tuple(t) if t.elems.is_empty());
    match &**ty {
        syn::Type::Path(p) => p
            .path
            .segments
            .last()
            .is_some_and(|seg| match &seg.arguments {
                syn::PathArguments::AngleBracketed(a) => a
                    .args
                    .iter()
                    .find_map(|g| match g {
                        syn::GenericArgument::Type(t) => Some(t),
                        _ => None,
                    })
                    .is_some_and(unit),
                _ => false,
            }),
        t => unit(t),
    }
}

/// Adds the names one shard's files declare (`collect_names`) to the index.
pub(super) fn merge_names(index: &mut CrateIndex, part: CrateIndex) {
    index.type_names.extend(part.type_names);
    index.traits.extend(part.traits);
    index.aliases.extend(part.aliases);
    index.outcomes.extend(part.outcomes);
    index.effect_errors.extend(part.effect_errors);
}

pub(super) struct IndexCx<'a> {
    pub(super) apis: &'a Apis,
    pub(super) included: &'a text::Included<'a>,
    /// The file's path on disk (`include_str!` is relative to it).
    pub(super) abs: &'a std::path::Path,
    pub(super) uses: &'a UseMap,
    pub(super) index: &'a CrateIndex,
    pub(super) path: Arc<str>,
    pub(super) lines: &'a crate::support::lines::LineIndex<'a>,
}

impl text::ArgNames for IndexCx<'_> {
    fn name_of(&self, arg: &syn::Expr) -> String {
        let sp = self.lines.span(arg.span(), arg.span());
        let t = self.lines.text();
        sql::placeholder_name(t.get(sp.byte_start..sp.byte_end).unwrap_or(""))
    }
}

impl IndexCx<'_> {
    fn eval(&self) -> text::Eval<'_> {
        text::Eval {
            from: self.abs,
            included: self.included,
            name_of: self,
        }
    }

    /// What a function body that is one expression returns of a string the code
    /// fixes: `&self.insert` (also `.as_str()`, `.clone()`..), `INSERT_SQL`, or SQL
    /// text (a literal, `include_str!`, `format!`). The prefilter parses such bodies
    /// ([`scan::may_return_text`], [`scan::ItemTokens::sql`]).
    fn returned_text(&self, block: &syn::Block) -> Option<ReturnedText> {
        let [syn::Stmt::Expr(e, None)] = block.stmts.as_slice() else {
            return None;
        };
        let mut e = e;
        loop {
            e = match e {
                syn::Expr::Reference(r) => &r.expr,
                syn::Expr::Paren(p) => &p.expr,
                syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => &u.expr,
                syn::Expr::MethodCall(mc)
                    if mc.args.is_empty() && text::keeps_text(&mc.method.to_string()) =>
                {
                    &mc.receiver
                }
                _ => break,
            };
        }
        match e {
            syn::Expr::Field(f) => match (&*f.base, &f.member) {
                (syn::Expr::Path(p), syn::Member::Named(name)) if p.path.is_ident("self") => {
                    Some(ReturnedText::Field(name.to_string()))
                }
                _ => None,
            },
            syn::Expr::Path(p) if p.path.segments.len() == 1 => {
                Some(ReturnedText::Const(p.path.segments[0].ident.to_string()))
            }
            _ => self
                .eval()
                .value(e)
                .filter(|t| text::looks_like_sql(t))
                .map(ReturnedText::Lit),
        }
    }

    /// The table a value made by a `sql = "table"` call names: the text of its first
    /// argument (`db.collection::<T>("processed_events")`, also through `.clone()`).
    fn named_table(&self, e: &syn::Expr) -> Option<String> {
        let mut e = e;
        loop {
            e = match e {
                syn::Expr::Paren(p) => &p.expr,
                syn::Expr::MethodCall(mc)
                    if mc.args.is_empty()
                        && self.apis.std.aliases.contains(&mc.method.to_string()) =>
                {
                    &mc.receiver
                }
                _ => break,
            };
        }
        let syn::Expr::MethodCall(mc) = e else {
            return None;
        };
        let names = self.apis.methods.get(&mc.method.to_string())?;
        if !names.iter().any(|s| s.sql.as_deref() == Some("table")) {
            return None;
        }
        let arg = mc.args.first()?;
        if let Some(t) = self.eval().value(arg) {
            return Some(t.to_ascii_lowercase());
        }
        // A constant of the crate (`db.collection(DEDUP_COLLECTION)`), read when lowering.
        match arg {
            syn::Expr::Path(p) => p
                .path
                .segments
                .last()
                .map(|s| format!("{TABLE_CONST}{}", s.ident)),
            _ => None,
        }
    }

    /// The SQL the struct literals of a function body put in fields (`Self {
    /// insert: format!(include_str!("insert.sql"), table), .. }`), as `consts`
    /// entries keyed `Type.field`; `Self` is `self_ty`.
    fn field_texts(
        &self,
        block: &syn::Block,
        self_ty: Option<&str>,
        out: &mut Vec<(String, String)>,
    ) {
        struct V<'v, 'c, 'ast> {
            cx: &'v IndexCx<'c>,
            self_ty: Option<&'v str>,
            out: &'v mut Vec<(String, String)>,
            /// The body's `let` bindings so far: a field filled from a local
            /// (`Aggregator { bump, .. }` after `let bump = session.prepare(..)`) holds
            /// what its initializer made.
            lets: Lets<'ast>,
        }
        impl<'ast> syn::visit::Visit<'ast> for V<'_, '_, 'ast> {
            fn visit_local(&mut self, l: &'ast syn::Local) {
                syn::visit::visit_local(self, l);
                self.lets.note(l);
            }
            fn visit_expr_struct(&mut self, s: &'ast syn::ExprStruct) {
                let ty = s.path.segments.last().map(|l| l.ident.to_string());
                let ty = match ty.as_deref() {
                    Some("Self") => self.self_ty.map(str::to_string),
                    _ => ty,
                };
                if let Some(ty) = ty {
                    for f in &s.fields {
                        if let syn::Member::Named(name) = &f.member {
                            // `bump` or `bump: stmt`, a local bound before: its value.
                            let expr = self.lets.of_path(&f.expr).unwrap_or(&f.expr);
                            if let Some(t) = (self.cx.eval().value(expr))
                                .or_else(|| self.cx.prepared_text(expr))
                                .filter(|t| text::looks_like_sql(t))
                            {
                                self.out.push((format!("{ty}.{name}"), t));
                            }
                            if let Some(t) = self.cx.named_table(expr) {
                                self.out.push((field_table_key(&ty, &name.to_string()), t));
                            }
                            // `topic: "orders.v1".to_string()`: a name a client may
                            // be given (a topic subscribed as `cfg.topic.as_str()`).
                            if let Some(t) =
                                (self.cx.eval().value(expr)).filter(|t| names_something(t))
                            {
                                self.out.push((field_name_key(&ty, &name.to_string()), t));
                            }
                        }
                    }
                }
                syn::visit::visit_expr_struct(self, s);
            }
            // Items inside bodies are indexed on their own.
            fn visit_item(&mut self, _: &'ast syn::Item) {}
        }
        syn::visit::Visit::visit_block(
            &mut V {
                cx: self,
                self_ty,
                out,
                lets: Lets::default(),
            },
            block,
        );
    }

    /// The tables of the `SELECT` whose rows `e` is (see [`returned_rows`]): the
    /// query's chain, `Ok(..)`/`Some(..)` of it, or a name bound to it in `lets`.
    fn rows_read_by(&self, e: &syn::Expr, lets: &Lets, depth: u8) -> Vec<String> {
        if depth > 4 {
            return Vec::new();
        }
        let mut e = e;
        loop {
            e = match chain::settled(e) {
                syn::Expr::MethodCall(mc) => {
                    // A query's own chain (`query_as(..).bind(..).fetch_all(..)`): its
                    // SQL is the first argument of its start.
                    if let Some(t) = mc.args.first().and_then(|a| self.selected(a)) {
                        return t;
                    }
                    &mc.receiver
                }
                syn::Expr::Call(c) => {
                    if let Some(t) = c.args.first().and_then(|a| self.selected(a)) {
                        return t;
                    }
                    // `Ok(rows)`, `Some(rows)`.
                    match (&*c.func, c.args.first()) {
                        (syn::Expr::Path(p), Some(a))
                            if c.args.len() == 1
                                && p.path.segments.last().is_some_and(|s| {
                                    s.ident == "Some"
                                        || self.apis.std.results.side(&s.ident.to_string())
                                            == Some(true)
                                }) =>
                        {
                            a
                        }
                        _ => return Vec::new(),
                    }
                }
                syn::Expr::Path(_) => {
                    let Some(init) = lets.of_path(e) else {
                        return Vec::new();
                    };
                    return self.rows_read_by(init, lets, depth + 1);
                }
                _ => return Vec::new(),
            };
        }
    }

    /// The tables a `SELECT` written in `arg` (a literal, a constant, `include_str!`)
    /// reads; `None` for any other text.
    fn selected(&self, arg: &syn::Expr) -> Option<Vec<String>> {
        let text = self.eval().value(arg)?;
        let facts = sql::facts(&text);
        (facts.kind == crate::ir::SqlKind::Read && !facts.tables.is_empty()).then_some(facts.tables)
    }

    /// The SQL a statement made by a pack call holds: the text of its `sql = "arg0"`
    /// argument where the call gives back a value (`session.prepare("UPDATE ..").await?`).
    fn prepared_text(&self, e: &syn::Expr) -> Option<String> {
        let syn::Expr::MethodCall(mc) = chain::settled(e) else {
            return None;
        };
        let specs = self.apis.methods.get(&mc.method.to_string())?;
        specs
            .iter()
            .any(|s| s.sql.as_deref() == Some("arg0") && s.returns.is_some())
            .then(|| self.eval().value(mc.args.first()?))
            .flatten()
    }

    /// The first fresh-id call in a function body that returns a value.
    fn fresh_id_in(
        &self,
        output: &syn::ReturnType,
        block: &syn::Block,
    ) -> Option<(crate::ir::Loc, String)> {
        use syn::visit::Visit;
        if returns_unit(output) {
            return None;
        }
        struct V<'v, 'a> {
            cx: &'v IndexCx<'a>,
            found: Option<(proc_macro2::Span, proc_macro2::Span, String)>,
        }
        impl<'ast> Visit<'ast> for V<'_, '_> {
            fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
                if self.found.is_none() {
                    if let syn::Expr::Path(p) = &*c.func {
                        let segs = segments(&p.path);
                        if self.cx.is_idgen_path(&segs) {
                            self.found =
                                Some((p.span(), c.paren_token.span.close(), segs.join("::")));
                        }
                    }
                }
                syn::visit::visit_expr_call(self, c);
            }
            fn visit_macro(&mut self, m: &'ast syn::Macro) {
                let name = m
                    .path
                    .segments
                    .last()
                    .map(|s| s.ident.to_string())
                    .unwrap_or_default();
                let idgen = self
                    .cx
                    .apis
                    .macros
                    .get(&name)
                    .is_some_and(|v| v.iter().any(|s| s.event == crate::apis::ApiEvent::Idgen));
                if self.found.is_none() && idgen {
                    self.found = Some((m.path.span(), m.path.span(), format!("{name}!")));
                }
            }
        }
        let mut v = V {
            cx: self,
            found: None,
        };
        v.visit_block(block);
        let (start, end, text) = v.found?;
        let span = self.lines.span(start, end);
        Some((
            crate::ir::Loc {
                path: self.path.clone(),
                span,
            },
            text,
        ))
    }

    /// A function that returns a consumer, or a stream derived from one through
    /// adapters (`Ok(consumer.filter_map(..).map(..).boxed())`), is a receive source
    /// for its callers whatever its declared type says (`BoxStream<'static, Job>`):
    /// its return takes the consumer's role, so what a caller takes from it is a
    /// delivery. `ret` is the declared type's; a role it has already stays.
    fn stream_source(
        &self,
        mut ret: TypeInfo,
        block: &syn::Block,
        output: &syn::ReturnType,
    ) -> TypeInfo {
        if ret.role.is_some() || returns_unit(output) {
            return ret;
        }
        let mut returned = Vec::new();
        if let Some(syn::Stmt::Expr(e, None)) = block.stmts.last() {
            returned.push(e);
        }
        struct Returns<'a>(Vec<&'a syn::Expr>);
        impl<'a> syn::visit::Visit<'a> for Returns<'a> {
            fn visit_expr_return(&mut self, r: &'a syn::ExprReturn) {
                if let Some(e) = &r.expr {
                    self.0.push(e);
                }
                syn::visit::visit_expr_return(self, r);
            }
            fn visit_expr_closure(&mut self, _: &'a syn::ExprClosure) {}
            fn visit_expr_async(&mut self, _: &'a syn::ExprAsync) {}
            fn visit_item(&mut self, _: &'a syn::Item) {}
        }
        let mut v = Returns(Vec::new());
        syn::visit::Visit::visit_block(&mut v, block);
        returned.extend(v.0);
        ret.role = returned
            .into_iter()
            .find_map(|e| self.stream_role_of(e, block, 0));
        ret
    }

    /// The stream role of a returned expression: a call the packs say makes a
    /// consumer, through `Ok(..)`, `.await`, `?` and stream adapters, or a binding of
    /// the function's body that holds one.
    fn stream_role_of(&self, e: &syn::Expr, block: &syn::Block, depth: u32) -> Option<String> {
        if depth > 8 {
            return None;
        }
        match e {
            syn::Expr::Paren(p) => self.stream_role_of(&p.expr, block, depth + 1),
            syn::Expr::Await(a) => self.stream_role_of(&a.base, block, depth + 1),
            syn::Expr::Try(t) => self.stream_role_of(&t.expr, block, depth + 1),
            // A call its one argument passes through (`Ok(stream)`, `Box::pin(stream)`).
            syn::Expr::Call(c) if c.args.len() == 1 => {
                let syn::Expr::Path(f) = &*c.func else {
                    return None;
                };
                let last = f.path.segments.last()?.ident.to_string();
                if !self.apis.std.passthrough.contains(&last) {
                    return None;
                }
                self.stream_role_of(&c.args[0], block, depth + 1)
            }
            syn::Expr::MethodCall(mc) => {
                let name = mc.method.to_string();
                if self.apis.std.stream_adapters.contains(&name) {
                    return self.stream_role_of(&mc.receiver, block, depth + 1);
                }
                self.apis.methods.get(&name)?.iter().find_map(|s| {
                    s.returns
                        .clone()
                        .filter(|r| super::lower::is_stream_role(Some(r)))
                })
            }
            syn::Expr::Path(p) => {
                let id = p.path.get_ident()?;
                let init = block.stmts.iter().rev().find_map(|st| match st {
                    syn::Stmt::Local(l) => match (&l.pat, &l.init) {
                        (syn::Pat::Ident(pi), Some(init)) if pi.ident == *id => Some(&init.expr),
                        (syn::Pat::Type(pt), Some(init)) => match &*pt.pat {
                            syn::Pat::Ident(pi) if pi.ident == *id => Some(&init.expr),
                            _ => None,
                        },
                        _ => None,
                    },
                    _ => None,
                })?;
                self.stream_role_of(init, block, depth + 1)
            }
            _ => None,
        }
    }

    /// The function returns a value and makes a client whose requests carry an
    /// idempotency key in its body (a pack's `keys_requests` method, its argument
    /// naming the keyed variant): a helper that returns the keyed client.
    fn keys_requests_in(&self, output: &syn::ReturnType, block: &syn::Block) -> bool {
        use syn::visit::Visit;
        if returns_unit(output) {
            return false;
        }
        struct V<'v, 'a> {
            cx: &'v IndexCx<'a>,
            found: bool,
        }
        fn names(ts: proc_macro2::TokenStream, words: &[String]) -> bool {
            ts.into_iter().any(|t| match t {
                proc_macro2::TokenTree::Ident(i) => words.iter().any(|w| i == w),
                proc_macro2::TokenTree::Group(g) => names(g.stream(), words),
                _ => false,
            })
        }
        impl<'ast> Visit<'ast> for V<'_, '_> {
            fn visit_expr_method_call(&mut self, mc: &'ast syn::ExprMethodCall) {
                let specs = self.cx.apis.methods.get(&mc.method.to_string());
                let keyed = specs.into_iter().flatten().any(|s| {
                    s.keys_requests
                        && mc
                            .args
                            .iter()
                            .any(|a| names(quote::ToTokens::to_token_stream(a), &s.arg_mentions))
                });
                self.found |= keyed;
                syn::visit::visit_expr_method_call(self, mc);
            }
        }
        let mut v = V {
            cx: self,
            found: false,
        };
        v.visit_block(block);
        v.found
    }

    fn is_idgen_path(&self, segs: &[String]) -> bool {
        let Some(last) = segs.last() else {
            return false;
        };
        let resolved = resolve_path(self.uses, segs);
        self.apis.paths.get(last).is_some_and(|specs| {
            specs.iter().any(|s| {
                s.event == crate::apis::ApiEvent::Idgen
                    && !s.formatted
                    && s.paths
                        .iter()
                        .any(|p| crate::apis::path_ends_with(&resolved, p))
            })
        })
    }
}

pub(super) type FieldMap = HashMap<String, TypeInfo>;

/// The signature of a function with a body (a free function or a method), with the
/// facts its body gives callers (`stores_param` is set by the caller for methods).
fn body_sig(
    cx: &IndexCx,
    local: &received::FileFields,
    sig: &syn::Signature,
    block: &syn::Block,
    self_ty: Option<&str>,
    trait_name: Option<&str>,
    module: &[String],
) -> FnSig {
    FnSig {
        self_type: self_ty.map(String::from),
        trait_name: trait_name.map(String::from),
        module: module.to_vec(),
        ret: cx.stream_source(ret_type(cx, &sig.output, self_ty), block, &sig.output),
        returns_fresh: cx.fresh_id_in(&sig.output, block),
        returns_keyed: cx.keys_requests_in(&sig.output, block),
        returns_text: cx.returned_text(block),
        stores_param: None,
        returns_received: received::returned_messages(cx, local, sig, block, self_ty),
        returns_rows: returned_rows(cx, &sig.output, block),
        logs_params: super::lower::logged_params(cx.apis, sig, block),
    }
}

/// The tables a `SELECT` the function runs reads, when the function returns its rows:
/// its tail or a `return` is the query's value, or a name a `let` bound to it, through
/// `Ok(..)`, `Some(..)`, `?`, `.await` and the chain's methods
/// ([`FnSig::returns_rows`]). Empty for a function returning `()` or anything else.
pub(super) fn returned_rows(
    cx: &IndexCx,
    output: &syn::ReturnType,
    block: &syn::Block,
) -> Vec<String> {
    use syn::visit::Visit;
    if returns_unit(output) {
        return Vec::new();
    }
    #[derive(Default)]
    struct V<'ast> {
        lets: Lets<'ast>,
        returns: Vec<&'ast syn::Expr>,
    }
    impl<'ast> Visit<'ast> for V<'ast> {
        fn visit_local(&mut self, l: &'ast syn::Local) {
            syn::visit::visit_local(self, l);
            self.lets.note(l);
        }
        fn visit_expr_return(&mut self, r: &'ast syn::ExprReturn) {
            self.returns.extend(r.expr.as_deref());
            syn::visit::visit_expr_return(self, r);
        }
        // Closures, async blocks and nested items return their own values.
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_expr_async(&mut self, _: &'ast syn::ExprAsync) {}
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut v = V::default();
    v.visit_block(block);
    if let Some(syn::Stmt::Expr(tail, None)) = block.stmts.last() {
        v.returns.push(tail);
    }
    let mut out = Vec::new();
    for r in &v.returns {
        for t in cx.rows_read_by(r, &v.lets, 0) {
            if !out.contains(&t) {
                out.push(t);
            }
        }
    }
    out
}

pub(super) fn collect_sigs(
    cx: &IndexCx,
    items: &[syn::Item],
    module: &[String],
    include_tests: bool,
    sigs: &mut Vec<(String, FnSig)>,
    fields: &mut Vec<(String, FieldMap)>,
    consts: &mut Vec<(String, String)>,
) {
    let local = received::file_fields(items);
    for item in items {
        match item {
            syn::Item::Fn(f) => {
                if !include_tests && is_test_attr(&f.attrs) {
                    continue;
                }
                cx.field_texts(&f.block, None, consts);
                cx.param_args(&f.block, consts);
                let sig = body_sig(cx, &local, &f.sig, &f.block, None, None, module);
                sigs.push((f.sig.ident.to_string(), sig));
            }
            syn::Item::Impl(imp) => {
                if !include_tests && is_test_attr(&imp.attrs) {
                    continue;
                }
                let self_ty = type_name(&imp.self_ty);
                let trait_name = impl_trait_name(imp);
                for it in &imp.items {
                    if let syn::ImplItem::Fn(m) = it {
                        cx.field_texts(&m.block, self_ty.as_deref(), consts);
                        cx.param_args(&m.block, consts);
                        let mut sig = body_sig(
                            cx,
                            &local,
                            &m.sig,
                            &m.block,
                            self_ty.as_deref(),
                            trait_name.as_deref(),
                            module,
                        );
                        sig.stores_param =
                            stored::stored_param(cx.apis, cx.index, &m.sig, &m.block);
                        sigs.push((m.sig.ident.to_string(), sig));
                    }
                }
            }
            syn::Item::Trait(t) => {
                for it in &t.items {
                    if let syn::TraitItem::Fn(m) = it {
                        if let Some(default) = &m.default {
                            sigs.push((
                                m.sig.ident.to_string(),
                                FnSig {
                                    self_type: Some(t.ident.to_string()),
                                    trait_name: Some(t.ident.to_string()),
                                    module: module.to_vec(),
                                    ret: ret_type(cx, &m.sig.output, None),
                                    returns_fresh: None,
                                    returns_keyed: false,
                                    returns_text: cx.returned_text(default),
                                    stores_param: None,
                                    returns_received: None,
                                    returns_rows: Vec::new(),
                                    logs_params: super::lower::logged_params(
                                        cx.apis, &m.sig, default,
                                    ),
                                },
                            ));
                        }
                    }
                }
            }
            syn::Item::Struct(s) => {
                let mut map = FieldMap::new();
                if let syn::Fields::Named(named) = &s.fields {
                    for f in &named.named {
                        if let Some(id) = &f.ident {
                            let mut ti = type_info(cx.apis, cx.uses, cx.index, &f.ty, None);
                            // `mailer: T` in `struct Notifier<T: AsyncTransport>`.
                            if ti.crate_type.is_none() && ti.role.is_none() {
                                if let Some(b) = types::bounded_generic(
                                    cx.apis,
                                    cx.uses,
                                    &cx.index.traits,
                                    &s.generics,
                                    &f.ty,
                                ) {
                                    ti = b;
                                } else if let Some(g) = types::generic_name(&f.ty) {
                                    ti.generic =
                                        s.generics.type_params().position(|p| p.ident == g);
                                }
                            }
                            // `hooks: Vec<Box<dyn Fn(..)>>`: the closures the crate
                            // stores there are its callees (`stored::slot_name`).
                            if ti.crate_type.is_none()
                                && ti.role.is_none()
                                && types::is_callable(cx.index, &f.ty)
                            {
                                ti.crate_type =
                                    Some(stored::slot_name(&s.ident.to_string(), &id.to_string()));
                                ti.outside = true;
                            }
                            ti.serialized = types::serde_rename(&f.attrs);
                            ti.optional = types::is_option(&f.ty);
                            map.insert(id.to_string(), ti);
                        }
                    }
                }
                fields.push((s.ident.to_string(), map));
            }
            // `const INSERT: &str = include_str!("sql/insert.sql");` too.
            syn::Item::Const(c) => {
                if let Some(s) = cx.eval().value(&c.expr) {
                    consts.push((c.ident.to_string(), s));
                }
            }
            syn::Item::Static(s) => {
                if let Some(v) = cx.eval().value(&s.expr) {
                    consts.push((s.ident.to_string(), v));
                }
            }
            syn::Item::Mod(m) => {
                if !include_tests && is_test_attr(&m.attrs) {
                    continue;
                }
                if let Some((_, inner)) = &m.content {
                    let mut sub = module.to_vec();
                    sub.push(m.ident.to_string());
                    collect_sigs(cx, inner, &sub, include_tests, sigs, fields, consts);
                }
            }
            _ => {}
        }
    }
}

fn ret_type(cx: &IndexCx, out: &syn::ReturnType, self_ty: Option<&str>) -> TypeInfo {
    match out {
        syn::ReturnType::Default => TypeInfo::default(),
        syn::ReturnType::Type(_, ty) => type_info(cx.apis, cx.uses, cx.index, ty, self_ty),
    }
}

/// The key of the crate constants under which a name a struct literal puts in a
/// field is kept (`Type.field#name`: a topic, a queue).
pub(super) fn field_name_key(ty: &str, field: &str) -> String {
    format!("{ty}.{field}#name")
}

/// A string that may name a topic or a queue: 1 to 249 letters, digits, `.`, `_`
/// or `-` (Kafka's limit and alphabet).
fn names_something(t: &str) -> bool {
    (1..=249).contains(&t.len())
        && t.bytes().any(|b| b.is_ascii_alphabetic())
        && t.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

/// Marks a field's table kept as the name of the constant holding it.
pub(super) const TABLE_CONST: &str = "=";

/// The key of the crate constants under which the table a field's collection names
/// is kept (`Type.field#table`).
pub(super) fn field_table_key(ty: &str, field: &str) -> String {
    format!("{ty}.{field}#table")
}
