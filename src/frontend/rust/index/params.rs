//! What the crate's calls pass its functions' parameters: the collection (a value
//! naming its table, `db.collection("hog")`) or the SQL text (a literal, a constant)
//! each argument is, kept in the crate's constants by callee name, place and number
//! of arguments ([`param_key`]). A call passing anything else keeps the key empty,
//! and callers that disagree empty it too (`session.rs` clears a `.`-key whose
//! values differ): the parameter then holds what every call of the crate passes
//! there, or nothing known. A function's name passed as a value (`map(handle)`)
//! empties its [`escaped_key`]: its callers are not all seen.

use super::super::chain::settled;
use super::super::text;
use super::{IndexCx, TABLE_CONST};

/// A collection that names its table, in a [`param_key`]'s value.
pub(in crate::frontend::rust) const TABLE_ARG: &str = "T:";
/// SQL text, in a [`param_key`]'s value.
pub(in crate::frontend::rust) const TEXT_ARG: &str = "S:";

/// The key of what calls pass as argument `i` of `n` to a function `name`: called
/// by path (`helper(a, b)`, `Repo::save(&repo, a)`) or as a method (`repo.save(a)`,
/// `self` not counted).
pub(in crate::frontend::rust) fn param_key(name: &str, i: usize, n: usize, method: bool) -> String {
    let dot = if method { "." } else { "" };
    format!("{name}.({dot}{i}/{n})")
}

/// The key emptied when the function `name` is passed as a value.
pub(in crate::frontend::rust) fn escaped_key(name: &str) -> String {
    format!("{name}.(*)")
}

impl IndexCx<'_> {
    /// The arguments the calls of a function body pass (see the module's doc), as
    /// `consts` entries.
    pub(super) fn param_args(&self, block: &syn::Block, out: &mut Vec<(String, String)>) {
        struct V<'v, 'c, 'ast> {
            cx: &'v IndexCx<'c>,
            out: &'v mut Vec<(String, String)>,
            lets: super::Lets<'ast>,
        }
        impl<'ast> syn::visit::Visit<'ast> for V<'_, '_, 'ast> {
            fn visit_local(&mut self, l: &'ast syn::Local) {
                syn::visit::visit_local(self, l);
                self.lets.note(l);
            }
            fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
                if let syn::Expr::Path(p) = &*c.func {
                    if let Some(last) = p.path.segments.last() {
                        let name = last.ident.to_string();
                        self.record(&name, &c.args, false);
                    }
                }
                syn::visit::visit_expr_call(self, c);
            }
            fn visit_expr_method_call(&mut self, mc: &'ast syn::ExprMethodCall) {
                self.record(&mc.method.to_string(), &mc.args, true);
                syn::visit::visit_expr_method_call(self, mc);
            }
            // Items inside bodies are indexed on their own.
            fn visit_item(&mut self, _: &'ast syn::Item) {}
            // The calls inside `select!` / `join!`, as the lowering reads them.
            fn visit_macro(&mut self, mac: &'ast syn::Macro) {
                for e in super::super::lower::macro_body_exprs(self.cx.apis, mac) {
                    let mut inner = V {
                        cx: self.cx,
                        out: &mut *self.out,
                        lets: self.lets.clone(),
                    };
                    syn::visit::Visit::visit_expr(&mut inner, &e);
                }
            }
        }
        impl V<'_, '_, '_> {
            fn record(
                &mut self,
                name: &str,
                args: &syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>,
                method: bool,
            ) {
                let n = args.len();
                for (i, a) in args.iter().enumerate() {
                    let value = self.arg_value(a).unwrap_or_default();
                    self.out
                        .push((super::params::param_key(name, i, n, method), value));
                    // A function passed as a value: called where its callers are not seen.
                    if let syn::Expr::Path(p) = settled(a) {
                        if let Some(id) = p.path.get_ident() {
                            if self.lets.get(&id.to_string()).is_none() {
                                self.out.push((escaped_key(&id.to_string()), String::new()));
                            }
                        }
                    }
                }
            }

            /// The collection or SQL text an argument is, through `&`, `.clone()`,
            /// `.as_str()` and a local bound to it.
            fn arg_value(&self, a: &syn::Expr) -> Option<String> {
                let mut e = a;
                for _ in 0..4 {
                    e = match e {
                        syn::Expr::Reference(r) => &r.expr,
                        syn::Expr::Paren(p) => &p.expr,
                        syn::Expr::MethodCall(mc)
                            if mc.args.is_empty()
                                && (text::keeps_text(&mc.method.to_string())
                                    || self
                                        .cx
                                        .apis
                                        .std
                                        .aliases
                                        .contains(&mc.method.to_string())) =>
                        {
                            &mc.receiver
                        }
                        syn::Expr::Path(p) => {
                            if let Some(init) = self.lets.of_path(e) {
                                init
                            } else {
                                // A constant of the crate (`INSERT_SQL`, `db::INSERT_SQL`),
                                // read when lowering.
                                let last = p.path.segments.last()?.ident.to_string();
                                return last
                                    .starts_with(|c: char| c.is_ascii_uppercase())
                                    .then(|| format!("{TEXT_ARG}{TABLE_CONST}{last}"));
                            }
                        }
                        _ => break,
                    };
                }
                if let Some(t) = self.cx.named_table(e) {
                    return Some(format!("{TABLE_ARG}{t}"));
                }
                (self.cx.eval().value(e))
                    .filter(|t| text::looks_like_sql(t))
                    .map(|t| format!("{TEXT_ARG}{t}"))
            }
        }
        syn::visit::Visit::visit_block(
            &mut V {
                cx: self,
                out,
                lets: super::Lets::default(),
            },
            block,
        );
    }
}
