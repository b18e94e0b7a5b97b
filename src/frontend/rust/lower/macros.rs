//! Lowering macros: `bail!`, `panic!`, `ensure!`, `format!` (SQL templates),
//! `select!`, `join!` and the API's own macros (`sqlx::query!`).

use std::collections::HashMap;

use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, Pat, Token};

use super::spans::expr_span;
use super::{strip, Info, Lowerer};
use crate::apis::MacroKind;
use crate::ir::{ClosureRun, ExitKind, Node};

impl<'a, 'b> Lowerer<'a, 'b> {
    // ----- macros ----------------------------------------------------------------

    pub(super) fn mac(&mut self, mac: &syn::Macro, out: &mut Vec<Node>) -> Info {
        let name = macro_name(mac);
        let close = match &mac.delimiter {
            syn::MacroDelimiter::Paren(p) => p.span.close(),
            syn::MacroDelimiter::Brace(b) => b.span.close(),
            syn::MacroDelimiter::Bracket(b) => b.span.close(),
        };
        let loc = self.cx.loc(mac.path.span(), close);
        let args: Option<Punctuated<Expr, Token![,]>> =
            mac.parse_body_with(Punctuated::parse_terminated).ok();
        match self.cx.apis.std.macro_kind(&name) {
            Some(MacroKind::ErrorReturn) => {
                out.push(Node::Exit(ExitKind::Return { err: Some(true) }));
                return Info::default();
            }
            Some(MacroKind::Abort) => {
                out.push(Node::Exit(ExitKind::Abort));
                return Info::default();
            }
            Some(MacroKind::ErrorUnless) => {
                if let Some(a) = &args {
                    self.collect(a.iter().take(1), out);
                }
                out.push(Node::Branch(vec![
                    Node::Seq(vec![]),
                    Node::Exit(ExitKind::Return { err: Some(true) }),
                ]));
                return Info::default();
            }
            Some(MacroKind::Alternatives) => {
                self.select(mac, out);
                return Info::default();
            }
            // `format!("INSERT INTO {} (id) VALUES ($1)", self.table)`: SQL with names
            // filled in at run time. Each placeholder becomes an identifier (the
            // argument's last name), so the statement's verb and shape are read; a
            // statement that does not parse so stays unknown.
            Some(MacroKind::Format) => {
                if let Some(a) = &args {
                    let mut info = self.collect(a.iter().skip(1), out);
                    // Names the template captures (`format!("{key}:{nanos}")`).
                    if let Some(Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(t),
                        ..
                    })) = a.first().map(strip)
                    {
                        for name in captured_names(&t.value()) {
                            if let Some(v) = self.lookup(&name) {
                                let captured = self.value_info(v);
                                info.absorb(&captured);
                            }
                        }
                    }
                    // A clock reading formatted into the text: the text is a fresh id.
                    let clock = info
                        .fresh
                        .is_none()
                        .then(|| self.clock_in(&info.mentions))
                        .flatten();
                    if let Some(filled) = self.cx.eval().format(a) {
                        return Info {
                            str_lit: Some(filled),
                            mentions: info.mentions,
                            fresh: clock,
                            ..Info::default()
                        };
                    }
                    if clock.is_some() {
                        info.fresh = clock;
                    }
                    return info;
                }
                return Info::default();
            }
            // `include_str!("sql/insert.sql")`: a file of the analyzed tree.
            Some(MacroKind::IncludeFile | MacroKind::Concat) => {
                return Info {
                    str_lit: self.cx.eval().value(&Expr::Macro(syn::ExprMacro {
                        attrs: Vec::new(),
                        mac: mac.clone(),
                    })),
                    ..Info::default()
                };
            }
            // `tokio::try_join!(consumer.run(), relay.run())`: futures that run side by
            // side; each is analyzed on its own, not as one sequence.
            Some(MacroKind::Concurrent) => {
                if let Some(a) = &args {
                    for e in a.iter() {
                        let mut body = Vec::new();
                        self.arg(e, &mut body);
                        out.push(Node::Closure {
                            body: Box::new(Node::Seq(body)),
                            run: ClosureRun::Concurrent,
                            param: None,
                            handle: None,
                            loc: self.cx.loc(expr_span(e), expr_span(e)),
                            text: "joined future".into(),
                        });
                    }
                }
                return Info::default();
            }
            Some(MacroKind::Env | MacroKind::List) | None => {}
        }
        if let Some(specs) = self.cx.apis.macros.get(&name).cloned() {
            if let Some(spec) = specs.first() {
                let args: Vec<Expr> = args.map(|a| a.into_iter().collect()).unwrap_or_default();
                let refs: Vec<&Expr> = args.iter().collect();
                let text = mac
                    .path
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect::<Vec<_>>()
                    .join("::")
                    + "!";
                return self.api_call(spec, None, &refs, &name, loc, text, out);
            }
        }
        match args {
            Some(a) => {
                let infos: Vec<Info> = a.iter().map(|e| self.arg(e, out)).collect();
                let mut info = Info::default();
                for i in &infos {
                    info.absorb(i);
                }
                // A wrapper macro (`try_status!(client.transaction().await, "begin")`,
                // a project's `map_err` shorthand): its value is that of the one
                // argument that holds a value (`vec![a, b]` holds two: none).
                let mut valued = infos.iter().filter(|i| i.value.is_some());
                if let (Some(v), None) = (valued.next(), valued.next()) {
                    info.value = v.value;
                }
                info
            }
            None => self.opaque_tokens(mac.tokens.clone()),
        }
    }

    /// A macro body that is not a list of expressions: its identifiers that name
    /// values in scope still count as uses (a transaction used only inside it is
    /// used), though no event is read from it.
    pub(super) fn opaque_tokens(&mut self, tokens: proc_macro2::TokenStream) -> Info {
        let mut info = Info::default();
        let mut stack = vec![tokens];
        while let Some(ts) = stack.pop() {
            for tt in ts {
                match tt {
                    proc_macro2::TokenTree::Ident(id) => {
                        if let Some(v) = self.lookup(&id.to_string()) {
                            let i = self.value_info(v);
                            info.absorb(&i);
                        }
                    }
                    proc_macro2::TokenTree::Group(g) => stack.push(g.stream()),
                    _ => {}
                }
            }
        }
        info
    }

    /// `tokio::select! { pat = fut => body, ... }`: each branch is an alternative.
    pub(super) fn select(&mut self, mac: &syn::Macro, out: &mut Vec<Node>) {
        let Ok(branches) = mac.parse_body_with(parse_select) else {
            self.opaque_tokens(mac.tokens.clone());
            return;
        };
        let mut arms = Vec::new();
        for (pat, fut, body) in &branches {
            self.scopes.push(HashMap::default());
            let mut arm = Vec::new();
            let info = self.expr(fut, &mut arm);
            if let Some(p) = pat {
                self.bind_pattern(p, &info);
            }
            self.expr(body, &mut arm);
            self.scopes.pop();
            arms.push(Node::Seq(arm));
        }
        out.push(Node::Branch(arms));
    }
}

type SelectBranch = (Option<Pat>, Expr, Expr);

/// A macro's name: its path's last segment (`select` of `tokio::select!`).
fn macro_name(mac: &syn::Macro) -> String {
    mac.path
        .segments
        .last()
        .map(|s| s.ident.to_string())
        .unwrap_or_default()
}

/// The expressions the lowering reads in a `select!` (each branch's future and body)
/// or a `join!` (its futures), for the index's visitors to see the calls there as
/// the lowering does. Empty for other macros.
pub(in crate::frontend::rust) fn body_exprs(
    apis: &crate::apis::Apis,
    mac: &syn::Macro,
) -> Vec<Expr> {
    match apis.std.macro_kind(&macro_name(mac)) {
        Some(MacroKind::Alternatives) => mac
            .parse_body_with(parse_select)
            .map(|b| {
                b.into_iter()
                    .flat_map(|(_, fut, body)| [fut, body])
                    .collect()
            })
            .unwrap_or_default(),
        Some(MacroKind::Concurrent) => mac
            .parse_body_with(Punctuated::<Expr, Token![,]>::parse_terminated)
            .map(|a| a.into_iter().collect())
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

fn parse_select(input: syn::parse::ParseStream) -> syn::Result<Vec<SelectBranch>> {
    let mut out = Vec::new();
    while !input.is_empty() {
        if input.peek(syn::Ident) && input.peek2(Token![;]) {
            input.parse::<syn::Ident>()?; // `biased;`
            input.parse::<Token![;]>()?;
            continue;
        }
        let pat = if input.peek(Token![else]) {
            input.parse::<Token![else]>()?;
            None
        } else {
            Some(Pat::parse_multi_with_leading_vert(input)?)
        };
        let fut: Expr = if pat.is_some() {
            input.parse::<Token![=]>()?;
            input.call(Expr::parse_without_eager_brace)?
        } else {
            syn::parse_quote!(())
        };
        if input.peek(Token![,]) {
            // `, if precondition`
            input.parse::<Token![,]>()?;
            input.parse::<Token![if]>()?;
            input.call(Expr::parse_without_eager_brace)?;
        }
        input.parse::<Token![=>]>()?;
        let body: Expr = input.parse()?;
        if input.peek(Token![,]) {
            input.parse::<Token![,]>()?;
        }
        out.push((pat, fut, body));
    }
    Ok(out)
}

/// The names a format template captures: `{name}` and `{name:>8}`, not `{}`, `{0}`
/// or an escaped `{{`.
fn captured_names(template: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        rest = &rest[i + 1..];
        if let Some(r) = rest.strip_prefix('{') {
            rest = r;
            continue;
        }
        let Some(end) = rest.find('}') else { break };
        let name = rest[..end].split(':').next().unwrap_or_default().trim();
        let ident = name.starts_with(|c: char| c.is_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_alphanumeric() || c == '_');
        if ident && !out.iter().any(|n: &String| n == name) {
            out.push(name.to_string());
        }
        rest = &rest[end + 1..];
    }
    out
}

#[cfg(test)]
mod captured_tests {
    #[test]
    fn names_captured_by_a_template() {
        assert_eq!(
            super::captured_names("{a}-{} {{x}} {b:>8} {0} {a}"),
            vec!["a".to_string(), "b".to_string()]
        );
    }
}
