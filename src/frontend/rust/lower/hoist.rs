//! Where a fresh id minted at the top of a retry can move (the fresh-id rule's unsafe fix,
//! docs/getting-started.md): the positions of a single `let` whose value is the generator call
//! alone, first in the body of a loop or closure, and of the statement holding
//! that loop or closure. The rule decides whether to offer the move.

use super::FileCx;
use crate::diagnostic::Span;
use crate::ir::{Hoist, IdFlow, Loc};
use proc_macro2::{TokenStream, TokenTree};
use syn::spanned::Spanned;
use syn::visit::Visit;

/// `flow` with its [`Hoist`] when it sits in a retry and its binding can move.
pub(super) fn with_hoist(mut flow: IdFlow, block: &syn::Block, cx: &FileCx) -> IdFlow {
    if let Some((retry, _)) = &flow.retry {
        let mut finder = Finder {
            cx,
            idgen: flow.idgen.span,
            retry: retry.span,
            stack: Vec::new(),
            found: None,
        };
        finder.visit_block(block);
        flow.hoist = finder.found;
    }
    flow
}

struct Finder<'c, 'a, 'ast> {
    cx: &'c FileCx<'a>,
    idgen: Span,
    retry: Span,
    /// The statements being visited, innermost last: (their block, index).
    stack: Vec<(&'ast syn::Block, usize)>,
    found: Option<Hoist>,
}

impl<'ast> Visit<'ast> for Finder<'_, '_, 'ast> {
    fn visit_block(&mut self, b: &'ast syn::Block) {
        for (i, s) in b.stmts.iter().enumerate() {
            self.stack.push((b, i));
            self.visit_stmt(s);
            self.stack.pop();
        }
    }

    fn visit_expr_for_loop(&mut self, e: &'ast syn::ExprForLoop) {
        self.candidate(&e.body, names(e.pat.as_ref()));
        syn::visit::visit_expr_for_loop(self, e);
    }

    fn visit_expr_loop(&mut self, e: &'ast syn::ExprLoop) {
        self.candidate(&e.body, Vec::new());
        syn::visit::visit_expr_loop(self, e);
    }

    fn visit_expr_while(&mut self, e: &'ast syn::ExprWhile) {
        self.candidate(&e.body, names(e.cond.as_ref()));
        syn::visit::visit_expr_while(self, e);
    }

    fn visit_expr_closure(&mut self, e: &'ast syn::ExprClosure) {
        let bound: Vec<String> = e.inputs.iter().flat_map(names).collect();
        match e.body.as_ref() {
            syn::Expr::Block(b) => self.candidate(&b.block, bound),
            syn::Expr::Async(a) => self.candidate(&a.block, bound),
            _ => {}
        }
        syn::visit::visit_expr_closure(self, e);
    }
}

impl Finder<'_, '_, '_> {
    fn span(&self, node: &impl Spanned) -> Span {
        let s = node.span();
        self.cx.span(s, s)
    }

    /// Whether `name` occurs in `ts` outside the bytes of `body`.
    fn mentions_outside(&self, ts: TokenStream, body: Span, name: &str) -> bool {
        ts.into_iter().any(|t| {
            let s = self.cx.span(t.span(), t.span());
            let disjoint = s.byte_end <= body.byte_start || s.byte_start >= body.byte_end;
            match t {
                _ if s.byte_start >= body.byte_start && s.byte_end <= body.byte_end => false,
                TokenTree::Ident(i) => disjoint && i == name,
                TokenTree::Group(g) => self.mentions_outside(g.stream(), body, name),
                _ => false,
            }
        })
    }

    /// Whether a literal of `ts` spans lines (a string whose text holds a line break).
    fn multiline_literal(&self, ts: TokenStream) -> bool {
        ts.into_iter().any(|t| match t {
            TokenTree::Literal(l) => {
                let s = self.cx.span(l.span(), l.span());
                s.line != s.end_line
            }
            TokenTree::Group(g) => self.multiline_literal(g.stream()),
            _ => false,
        })
    }

    fn loc(&self, byte: usize) -> Loc {
        self.cx.point(byte)
    }

    /// `body` is a loop's or a closure's body, `bound` what its header binds.
    fn candidate(&mut self, body: &syn::Block, bound: Vec<String>) {
        if self.found.is_some() {
            return;
        }
        let Some(syn::Stmt::Local(local)) = body.stmts.first() else {
            return;
        };
        let Some(init) = &local.init else {
            return;
        };
        if init.diverge.is_some() || !local.attrs.is_empty() {
            return;
        }
        let pat = match &local.pat {
            syn::Pat::Type(t) => t.pat.as_ref(),
            p => p,
        };
        let syn::Pat::Ident(name) = pat else {
            return;
        };
        let name = name.ident.to_string();
        // The value is the generator call alone.
        let value = self.span(init.expr.as_ref());
        if value.byte_start != self.idgen.byte_start || value.byte_end != self.idgen.byte_end {
            return;
        }
        // Nothing it uses is bound by the loop or closure.
        let uses = quote::ToTokens::to_token_stream(init.expr.as_ref());
        if bound.iter().any(|b| mentions(&uses, b)) {
            return;
        }
        // The statement holding the loop or closure, which holds the retry.
        let Some(&(outer, at)) = self.stack.last() else {
            return;
        };
        let holder = &outer.stmts[at];
        let held = self.span(holder);
        if held.byte_start > self.retry.byte_start || held.byte_end < self.retry.byte_end {
            return;
        }
        // The name means the same wherever it is read after the move: the holder
        // reads it only inside the body, nothing after the holder reads it.
        let body_span = self.span(body);
        let outside_body =
            self.mentions_outside(quote::ToTokens::to_token_stream(holder), body_span, &name);
        let later = outer.stmts[at + 1..]
            .iter()
            .any(|s| mentions(&quote::ToTokens::to_token_stream(s), &name));
        if outside_body || later {
            return;
        }
        let text = self.cx.lines.text();
        let stmt = self.span(local);
        let (Some(remove), Some(indent)) = (
            whole_line(text, stmt.byte_start, stmt.byte_end),
            line_indent(text, held.byte_start),
        ) else {
            return;
        };
        let line_break = if text[..remove.1].ends_with("\r\n") {
            "\r\n"
        } else {
            "\n"
        };
        // A statement over several lines keeps its shape: each line moves by the
        // difference of the two indentations. A literal spanning lines would change
        // its value so, and a line indented less than the statement has no shape to
        // keep: no move.
        if self.multiline_literal(quote::ToTokens::to_token_stream(local)) {
            return;
        }
        let Some(moved) = reindent(
            text[stmt.byte_start..remove.1].trim_end(),
            &text[remove.0..stmt.byte_start],
            indent,
        ) else {
            return;
        };
        let mut remove_loc = self.loc(remove.0);
        let end = self.loc(remove.1);
        remove_loc.span.end_line = end.span.line;
        remove_loc.span.end_column = end.span.column;
        remove_loc.span.byte_end = remove.1;
        self.found = Some(Hoist {
            remove: remove_loc,
            before: self.loc(held.byte_start - indent.len()),
            text: format!("{indent}{moved}{line_break}"),
        });
    }
}

/// The names a pattern (or a `while let` condition, or a closure parameter) binds.
fn names(node: &(impl quote::ToTokens + ?Sized)) -> Vec<String> {
    crate::frontend::rust::idents_of(node)
}

fn mentions(ts: &TokenStream, name: &str) -> bool {
    ts.clone().into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == name,
        TokenTree::Group(g) => mentions(&g.stream(), name),
        _ => false,
    })
}

/// The bytes of the lines `start..end` fills alone (only blanks before it on its
/// first line, blanks or a line comment after it on its last, which moves with it),
/// from the first line's start through the last line's break; `None` when the
/// statement shares a line with other code.
fn whole_line(text: &str, start: usize, end: usize) -> Option<(usize, usize)> {
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    if !text[line_start..start]
        .chars()
        .all(|c| c == ' ' || c == '\t')
    {
        return None;
    }
    let rest = &text[end..];
    let nl = rest.find('\n')?;
    let tail = rest[..nl]
        .trim_end_matches('\r')
        .trim_start_matches([' ', '\t']);
    if !tail.is_empty() && !tail.starts_with("//") {
        return None;
    }
    Some((line_start, end + nl + 1))
}

/// The blanks before `at` on its line, when only blanks precede it there.
fn line_indent(text: &str, at: usize) -> Option<&str> {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let indent = &text[line_start..at];
    indent
        .chars()
        .all(|c| c == ' ' || c == '\t')
        .then_some(indent)
}

/// `stmt` (from its first byte, the lines after the first indented by at least
/// `from`) with every line after the first indented by `to` instead of `from`
/// (blank lines stay blank); `None` when a line after the first is indented less.
fn reindent(stmt: &str, from: &str, to: &str) -> Option<String> {
    let mut lines = stmt.split('\n');
    let mut out = lines.next()?.to_string();
    for line in lines {
        out.push('\n');
        if line.trim_end_matches('\r').trim().is_empty() {
            out.push_str(line.trim_start_matches([' ', '\t']));
            continue;
        }
        out.push_str(to);
        out.push_str(line.strip_prefix(from)?);
    }
    Some(out)
}
