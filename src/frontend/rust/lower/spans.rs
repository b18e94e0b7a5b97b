//! Spans of expressions without printing them to tokens (see [`expr_span`]).

use proc_macro2::Span as PmSpan;
use syn::spanned::Spanned;
use syn::Expr;

/// The span of an expression as `Spanned::span` gives it (its first token to its
/// last), without printing the expression to tokens, which costs as much as the
/// expression is long and is repeated at every level of a method chain or nested
/// loop. Expressions whose ends are not read here cheaply fall back to `span()`.
pub(super) fn expr_span(e: &Expr) -> PmSpan {
    match (first_token(e), last_token(e)) {
        (Some(a), Some(b)) => a.join(b).unwrap_or_else(|| e.span()),
        _ => e.span(),
    }
}

/// The span of the first token of `e` (outer attributes make it unknown here).
pub(super) fn first_token(e: &Expr) -> Option<PmSpan> {
    let path_start = |p: &syn::Path| match &p.leading_colon {
        Some(c) => Some(c.spans[0]),
        None => p.segments.first().map(|s| s.ident.span()),
    };
    match e {
        Expr::MethodCall(m) if m.attrs.is_empty() => first_token(&m.receiver),
        Expr::Field(f) if f.attrs.is_empty() => first_token(&f.base),
        Expr::Call(c) if c.attrs.is_empty() => first_token(&c.func),
        Expr::Await(a) if a.attrs.is_empty() => first_token(&a.base),
        Expr::Try(t) if t.attrs.is_empty() => first_token(&t.expr),
        Expr::Index(i) if i.attrs.is_empty() => first_token(&i.expr),
        Expr::Binary(b) if b.attrs.is_empty() => first_token(&b.left),
        Expr::Cast(c) if c.attrs.is_empty() => first_token(&c.expr),
        Expr::Path(p) if p.attrs.is_empty() && p.qself.is_none() => path_start(&p.path),
        Expr::Macro(m) if m.attrs.is_empty() => path_start(&m.mac.path),
        Expr::Lit(l) if l.attrs.is_empty() => Some(l.lit.span()),
        Expr::Reference(r) if r.attrs.is_empty() => Some(r.and_token.span),
        Expr::Paren(p) if p.attrs.is_empty() => Some(p.paren_token.span.open()),
        Expr::Block(b) if b.attrs.is_empty() && b.label.is_none() => {
            Some(b.block.brace_token.span.open())
        }
        Expr::Async(a) if a.attrs.is_empty() => Some(a.async_token.span),
        Expr::ForLoop(f) if f.attrs.is_empty() && f.label.is_none() => Some(f.for_token.span),
        Expr::Loop(l) if l.attrs.is_empty() && l.label.is_none() => Some(l.loop_token.span),
        Expr::While(w) if w.attrs.is_empty() && w.label.is_none() => Some(w.while_token.span),
        Expr::If(i) if i.attrs.is_empty() => Some(i.if_token.span),
        Expr::Match(m) if m.attrs.is_empty() => Some(m.match_token.span),
        Expr::Unary(u) if u.attrs.is_empty() => Some(match u.op {
            syn::UnOp::Deref(t) => t.span,
            syn::UnOp::Not(t) => t.span,
            syn::UnOp::Neg(t) => t.span,
            _ => return None,
        }),
        Expr::Closure(c) => closure_first_token(c),
        _ => None,
    }
}

pub(super) fn closure_first_token(c: &syn::ExprClosure) -> Option<PmSpan> {
    if !c.attrs.is_empty() || c.lifetimes.is_some() || c.constness.is_some() {
        return None;
    }
    Some(match (&c.movability, &c.asyncness, &c.capture) {
        (Some(s), _, _) => s.span,
        (None, Some(a), _) => a.span,
        (None, None, Some(m)) => m.span,
        (None, None, None) => c.or1_token.span,
    })
}

/// [`expr_span`] of a closure.
pub(super) fn closure_span(c: &syn::ExprClosure) -> PmSpan {
    match (closure_first_token(c), last_token(&c.body)) {
        (Some(a), Some(b)) => a.join(b).unwrap_or_else(|| c.span()),
        _ => c.span(),
    }
}

/// The span of the last token of `e`.
pub(super) fn last_token(e: &Expr) -> Option<PmSpan> {
    let delim = |d: &syn::MacroDelimiter| match d {
        syn::MacroDelimiter::Paren(p) => p.span.close(),
        syn::MacroDelimiter::Brace(b) => b.span.close(),
        syn::MacroDelimiter::Bracket(b) => b.span.close(),
    };
    match e {
        Expr::MethodCall(m) => Some(m.paren_token.span.close()),
        Expr::Call(c) => Some(c.paren_token.span.close()),
        Expr::Field(f) => Some(match &f.member {
            syn::Member::Named(id) => id.span(),
            syn::Member::Unnamed(i) => i.span,
        }),
        Expr::Await(a) => Some(a.await_token.span),
        Expr::Try(t) => Some(t.question_token.span),
        Expr::Index(i) => Some(i.bracket_token.span.close()),
        Expr::Binary(b) => last_token(&b.right),
        Expr::Path(p) if p.qself.is_none() => p
            .path
            .segments
            .last()
            .filter(|s| s.arguments.is_none())
            .map(|s| s.ident.span()),
        Expr::Macro(m) => Some(delim(&m.mac.delimiter)),
        Expr::Lit(l) => Some(l.lit.span()),
        Expr::Reference(r) => last_token(&r.expr),
        Expr::Unary(u) => last_token(&u.expr),
        Expr::Paren(p) => Some(p.paren_token.span.close()),
        Expr::Block(b) => Some(b.block.brace_token.span.close()),
        Expr::Async(a) => Some(a.block.brace_token.span.close()),
        Expr::ForLoop(f) => Some(f.body.brace_token.span.close()),
        Expr::Loop(l) => Some(l.body.brace_token.span.close()),
        Expr::While(w) => Some(w.body.brace_token.span.close()),
        Expr::If(i) => match &i.else_branch {
            Some((_, e)) => last_token(e),
            None => Some(i.then_branch.brace_token.span.close()),
        },
        Expr::Match(m) => Some(m.brace_token.span.close()),
        Expr::Closure(c) => last_token(&c.body),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use proc_macro2::Span as PmSpan;
    use syn::spanned::Spanned;
    use syn::Expr;

    use super::{closure_span, expr_span};

    /// `expr_span` agrees with `Spanned::span` on every expression of this crate's
    /// sources and fixtures (start and end positions).
    #[test]
    fn cheap_expression_spans_are_those_syn_gives() {
        use syn::visit::Visit;
        struct V(usize);
        impl<'ast> Visit<'ast> for V {
            fn visit_expr(&mut self, e: &'ast Expr) {
                let (a, b) = (expr_span(e), e.span());
                let pos = |s: PmSpan| (s.start(), s.end());
                assert_eq!(pos(a), pos(b), "{}", quote::quote!(#e));
                if let Expr::Closure(c) = e {
                    assert_eq!(pos(closure_span(c)), pos(b));
                }
                self.0 += 1;
                syn::visit::visit_expr(self, e);
            }
        }
        let mut v = V(0);
        for root in ["src", "fixtures", "tests"] {
            for e in ignore::WalkBuilder::new(root).build().flatten() {
                if e.path().extension().is_some_and(|x| x == "rs") {
                    let text = std::fs::read_to_string(e.path()).unwrap_or_default();
                    if let Ok(file) = syn::parse_file(&text) {
                        v.visit_file(&file);
                    }
                }
            }
        }
        assert!(v.0 > 10_000, "{} expressions", v.0);
    }
}
