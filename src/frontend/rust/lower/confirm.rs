//! Where a channel can be put in confirm mode, and where a publish can await its
//! confirmation (the unconfirmed-publish rule's unsafe fix, docs/getting-started.md): the positions
//! of the simple `let` statements that make channels the packs say how to confirm,
//! how the option type's name reaches the function's module, and the statements
//! that await a confirmable publish once. The rule decides whether to offer the fix.

use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Expr, Pat};

use super::FileCx;
use crate::diagnostic::Span;
use crate::ir::{ConfirmAt, ConfirmAwait, Loc, OptionsImport};

/// The channels of `opens` (call's place, statement, option type's path) made by a
/// simple `let` of the function's own body.
pub(super) fn confirm_ats(
    cx: &FileCx,
    sig: &syn::Signature,
    block: &syn::Block,
    items: &[syn::Item],
    opens: &[(Loc, String, String)],
) -> Vec<ConfirmAt> {
    if opens.is_empty() {
        return Vec::new();
    }
    let mut lets = Lets {
        cx,
        opens,
        found: Vec::new(),
    };
    lets.visit_block(block);
    let returns_result = match &sig.output {
        syn::ReturnType::Type(_, ty) => match ty.as_ref() {
            // `Result`, `io::Result`, `AppResult`: the runtime pack's result wrappers.
            syn::Type::Path(p) => p.path.segments.last().is_some_and(|s| {
                let name = s.ident.to_string();
                cx.apis
                    .std
                    .wrapper_suffixes
                    .iter()
                    .any(|w| name.ends_with(w.as_str()))
            }),
            _ => false,
        },
        syn::ReturnType::Default => false,
    };
    lets.found
        .into_iter()
        .map(|mut at| {
            at.returns_result = returns_result;
            at.import = import(cx, items, &at.options);
            at
        })
        .collect()
}

/// The statements `….await?;` that await a publish of `once` once.
pub(super) fn confirm_awaits(
    cx: &FileCx,
    block: &syn::Block,
    once: &foldhash::HashSet<Loc>,
) -> Vec<ConfirmAwait> {
    if once.is_empty() {
        return Vec::new();
    }
    let mut awaits = Awaits {
        cx,
        once,
        found: Vec::new(),
    };
    awaits.visit_block(block);
    awaits.found
}

/// The method call `e` is, awaited once and tried (`x.m(..).await?`), with its place.
fn awaited_call<'e>(cx: &FileCx, e: &'e Expr) -> Option<(&'e syn::ExprMethodCall, Loc)> {
    let Expr::Try(t) = e else { return None };
    let Expr::Await(a) = t.expr.as_ref() else {
        return None;
    };
    let Expr::MethodCall(mc) = a.base.as_ref() else {
        return None;
    };
    Some((mc, cx.loc(mc.method.span(), mc.paren_token.span.close())))
}

fn same(a: &Loc, b: &Loc) -> bool {
    a.span.byte_start == b.span.byte_start && a.span.byte_end == b.span.byte_end
}

struct Lets<'c, 'a, 'o> {
    cx: &'c FileCx<'a>,
    opens: &'o [(Loc, String, String)],
    found: Vec<ConfirmAt>,
}

impl<'ast> Visit<'ast> for Lets<'_, '_, '_> {
    // A `?` inside these returns from them, not from the function.
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    fn visit_expr_async(&mut self, _: &'ast syn::ExprAsync) {}
    fn visit_expr_try_block(&mut self, _: &'ast syn::ExprTryBlock) {}
    fn visit_item(&mut self, _: &'ast syn::Item) {}

    fn visit_local(&mut self, local: &'ast syn::Local) {
        self.candidate(local);
        syn::visit::visit_local(self, local);
    }
}

impl Lets<'_, '_, '_> {
    fn candidate(&mut self, local: &syn::Local) {
        let Some(init) = &local.init else { return };
        if init.diverge.is_some() || !local.attrs.is_empty() {
            return;
        }
        let pat = match &local.pat {
            Pat::Type(t) => t.pat.as_ref(),
            p => p,
        };
        let Pat::Ident(pi) = pat else { return };
        if pi.by_ref.is_some() || pi.subpat.is_some() {
            return;
        }
        let Some((_, loc)) = awaited_call(self.cx, &init.expr) else {
            return;
        };
        let Some((open, statement, options)) = self.opens.iter().find(|(o, ..)| same(o, &loc))
        else {
            return;
        };
        let cx = self.cx;
        let stmt = cx.span(local.span(), local.span());
        let text = cx.lines.text();
        let line_start = text[..stmt.byte_start].rfind('\n').map_or(0, |i| i + 1);
        let indent = &text[line_start..stmt.byte_start];
        if !indent.chars().all(|c| c == ' ' || c == '\t') {
            return;
        }
        // Only blanks or a line comment after it on its last line.
        let rest = &text[stmt.byte_end..];
        let Some(nl) = rest.find('\n') else { return };
        let tail = rest[..nl]
            .trim_end_matches('\r')
            .trim_start_matches([' ', '\t']);
        if !tail.is_empty() && !tail.starts_with("//") {
            return;
        }
        let newline = if rest[..nl].ends_with('\r') {
            "\r\n"
        } else {
            "\n"
        };
        self.found.push(ConfirmAt {
            open: open.clone(),
            binding: pi.ident.to_string(),
            after: cx.point(stmt.byte_end + nl + 1),
            indent: indent.to_string(),
            newline: newline.to_string(),
            returns_result: false,
            statement: statement.clone(),
            options: options.clone(),
            import: OptionsImport::FullPath,
        });
    }
}

struct Awaits<'c, 'a, 'o> {
    cx: &'c FileCx<'a>,
    once: &'o foldhash::HashSet<Loc>,
    found: Vec<ConfirmAwait>,
}

impl<'ast> Visit<'ast> for Awaits<'_, '_, '_> {
    fn visit_stmt(&mut self, s: &'ast syn::Stmt) {
        if let syn::Stmt::Expr(e, Some(_)) = s {
            if let Some((_, loc)) = awaited_call(self.cx, e) {
                if self.once.iter().any(|o| same(o, &loc)) {
                    let end = self.cx.span(e.span(), e.span()).byte_end;
                    self.found.push(ConfirmAwait {
                        publish: loc,
                        at: self.cx.point(end),
                    });
                }
            }
        }
        syn::visit::visit_stmt(self, s);
    }
}

/// How the type at `path` (`a::b::Name`) can be named in the module of `items`.
fn import(cx: &FileCx, items: &[syn::Item], path: &str) -> OptionsImport {
    let segments: Vec<&str> = path.split("::").collect();
    let Some((name, module)) = segments.split_last() else {
        return OptionsImport::FullPath;
    };
    let mut lists = Vec::new();
    let mut in_scope = false;
    for item in items {
        if let syn::Item::Use(u) = item {
            walk(
                &u.tree,
                &mut Vec::new(),
                module,
                name,
                &mut in_scope,
                &mut lists,
            );
        }
    }
    if in_scope {
        return OptionsImport::InScope;
    }
    match lists.first() {
        Some(g) => add_to(cx, g, name),
        None => OptionsImport::FullPath,
    }
}

fn walk<'t>(
    tree: &'t syn::UseTree,
    prefix: &mut Vec<String>,
    module: &[&str],
    name: &str,
    in_scope: &mut bool,
    lists: &mut Vec<&'t syn::UseGroup>,
) {
    let at_module = prefix.len() == module.len() && prefix.iter().zip(module).all(|(a, b)| a == b);
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            walk(&p.tree, prefix, module, name, in_scope, lists);
            prefix.pop();
        }
        syn::UseTree::Name(n) => *in_scope |= at_module && n.ident == name,
        syn::UseTree::Rename(r) => *in_scope |= at_module && r.ident == name && r.rename == name,
        syn::UseTree::Glob(_) => *in_scope |= at_module,
        syn::UseTree::Group(g) => {
            if at_module {
                lists.push(g);
            }
            for t in &g.items {
                walk(t, prefix, module, name, in_scope, lists);
            }
        }
    }
}

/// The first name a list entry starts with (how a sorted list orders it).
fn key(t: &syn::UseTree) -> String {
    match t {
        syn::UseTree::Path(p) => p.ident.to_string(),
        syn::UseTree::Name(n) => n.ident.to_string(),
        syn::UseTree::Rename(r) => r.ident.to_string(),
        syn::UseTree::Glob(_) => "*".into(),
        syn::UseTree::Group(_) => "{".into(),
    }
}

/// The edit adding `name` to the list `g`: in its sorted place when the list is
/// sorted, else last, with the separator the list uses.
fn add_to(cx: &FileCx, g: &syn::UseGroup, name: &str) -> OptionsImport {
    let text = cx.lines.text();
    let spans: Vec<Span> = g
        .items
        .iter()
        .map(|t| cx.span(t.span(), t.span()))
        .collect();
    let keys: Vec<String> = g.items.iter().map(key).collect();
    if spans.is_empty() {
        let open = cx.span(g.brace_token.span.open(), g.brace_token.span.open());
        return OptionsImport::Add {
            at: cx.point(open.byte_end),
            text: name.to_string(),
        };
    }
    let n = spans.len();
    // The text between two neighbouring entries, when it is only a comma and blanks.
    let sep = |i: usize| -> String {
        if n < 2 {
            return ", ".into();
        }
        let s = &text[spans[i].byte_end..spans[i + 1].byte_start];
        if s.trim_start_matches(',').trim().is_empty() && s.starts_with(',') {
            s.to_string()
        } else {
            ", ".into()
        }
    };
    let sorted = keys.windows(2).all(|w| w[0] <= w[1]);
    let before = if sorted {
        keys.iter().position(|k| k.as_str() > name)
    } else {
        None
    };
    match before {
        Some(i) => OptionsImport::Add {
            at: cx.point(spans[i].byte_start),
            text: format!(
                "{name}{}",
                sep(i.saturating_sub(1).min(n.saturating_sub(2)))
            ),
        },
        None => OptionsImport::Add {
            at: cx.point(spans[n - 1].byte_end),
            text: format!("{}{name}", sep(n.saturating_sub(2))),
        },
    }
}
