//! The side of a test where a batch call's entries failed (docs/what-is-analyzed.md,
//! "Batch calls with per-entry results"): `let out = client.put_events()…send().await?;
//! if out.failed_entry_count() > 0 { … }`. The packs name the response's accessors
//! that hold failed entries only (`only_failures`: a count, or the list of the
//! failures); a test that any is there (`> 0`, `!= 0`, `!is_empty()`, `is_some()`)
//! opens that side on its `then` branch, a test that none is (`== 0`,
//! `is_empty()`, `is_none()`) on its `else` branch. A view bound first (`let failed
//! = out.failed_record_count().unwrap_or(0); if failed > 0 { … }`) is followed too.
//!
//! On that side some entries failed: a write there records the failure
//! (compensation), it is no dual write with the batch.

use proc_macro2::Span as PmSpan;
use syn::{BinOp, Expr, Lit, Stmt, UnOp};

use super::batch::binding;
use crate::apis::Apis;

/// An `if` (its `if` token) whose one side is where a batch call (its method
/// name) had failed entries: `true` the `then` side, `false` the `else` side.
pub(super) type FailureSide = (PmSpan, PmSpan, bool);

/// The `if` statements among `later` (the statements after the binding of `name` to
/// the batch call at `batch`, with response accessors `fields`) that test its failed
/// entries, up to the first that binds the name anew.
pub(super) fn failure_sides(
    apis: &Apis,
    later: &[Stmt],
    name: &str,
    batch: PmSpan,
    fields: &[String],
    out: &mut Vec<FailureSide>,
) {
    let only: Vec<&String> = fields
        .iter()
        .filter(|f| apis.only_failures.contains(*f))
        .collect();
    if only.is_empty() {
        return;
    }
    let t = Tests {
        apis,
        name,
        only: &only,
        views: std::cell::RefCell::new(Vec::new()),
    };
    for s in later {
        match s {
            Stmt::Local(l) => {
                let bound = binding(&l.pat).flatten();
                if bound.as_deref() == Some(name) {
                    return;
                }
                let view = l.init.as_ref().filter(|i| i.diverge.is_none());
                match (bound, view) {
                    (Some(b), Some(init)) if t.reads(&init.expr) => t.views.borrow_mut().push(b),
                    (Some(b), _) => t.views.borrow_mut().retain(|v| *v != b),
                    _ => {}
                }
            }
            Stmt::Expr(Expr::If(i), _) => {
                if let Some(side) = t.test(&i.cond) {
                    out.push((i.if_token.span, batch, side));
                }
            }
            _ => {}
        }
    }
}

struct Tests<'a> {
    apis: &'a Apis,
    name: &'a str,
    only: &'a [&'a String],
    /// Names bound to a view of the failed entries (`let failed = out.failed()`).
    views: std::cell::RefCell<Vec<String>>,
}

impl Tests<'_> {
    /// Which side of `cond` is where some entries failed (`true`: where it holds).
    fn test(&self, cond: &Expr) -> Option<bool> {
        match cond {
            Expr::Paren(p) => self.test(&p.expr),
            Expr::Unary(u) if matches!(u.op, UnOp::Not(_)) => self.test(&u.expr).map(|s| !s),
            Expr::Binary(b) => {
                let (l, r) = (int(&b.left), int(&b.right));
                let (reads_l, reads_r) = (self.reads(&b.left), self.reads(&b.right));
                match b.op {
                    BinOp::Gt(_) if reads_l && r == Some(0) => Some(true),
                    BinOp::Lt(_) if reads_r && l == Some(0) => Some(true),
                    BinOp::Ge(_) if reads_l && r == Some(1) => Some(true),
                    BinOp::Ne(_) if (reads_l && r == Some(0)) || (reads_r && l == Some(0)) => {
                        Some(true)
                    }
                    BinOp::Eq(_) if (reads_l && r == Some(0)) || (reads_r && l == Some(0)) => {
                        Some(false)
                    }
                    _ => None,
                }
            }
            Expr::MethodCall(m) if m.args.is_empty() && self.reads(&m.receiver) => {
                match m.method.to_string().as_str() {
                    "is_some" => Some(true),
                    "is_empty" | "is_none" => Some(false),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Whether `e` is a count or list of the failed entries: an accessor holding
    /// only failures on the response (through `&`, parentheses, casts and the
    /// standard methods that keep what it says: `.unwrap_or(0)`, `.len()`, the
    /// runtime pack's aliases and standard methods taking no argument but a
    /// default), or a view of one.
    fn reads(&self, e: &Expr) -> bool {
        match e {
            Expr::Paren(p) => self.reads(&p.expr),
            Expr::Reference(r) => self.reads(&r.expr),
            Expr::Cast(c) => self.reads(&c.expr),
            Expr::Path(p) => p
                .path
                .get_ident()
                .is_some_and(|i| self.views.borrow().iter().any(|v| i == v)),
            Expr::Field(f) => match &f.member {
                syn::Member::Named(m) if self.only.iter().any(|o| m == *o) => {
                    is_name(&f.base, self.name)
                }
                _ => false,
            },
            Expr::MethodCall(m) => {
                let method = m.method.to_string();
                if self.only.iter().any(|o| **o == method) && m.args.is_empty() {
                    is_name(&m.receiver, self.name)
                } else if self.keeps(&method, m.args.len()) {
                    self.reads(&m.receiver)
                } else {
                    false
                }
            }
            _ => false,
        }
    }
}

impl Tests<'_> {
    /// A standard method that keeps the count or list it is called on (`len`,
    /// `unwrap_or(0)`): no argument, or only the default of an `unwrap_or`.
    fn keeps(&self, method: &str, args: usize) -> bool {
        let std = &self.apis.std;
        let known = std.aliases.contains(method) || std.methods.contains(method);
        known && (args == 0 || (args == 1 && method.starts_with("unwrap_or")))
    }
}

fn is_name(e: &Expr, name: &str) -> bool {
    match e {
        Expr::Paren(p) => is_name(&p.expr, name),
        Expr::Reference(r) => is_name(&r.expr, name),
        Expr::Path(p) => p.path.is_ident(name),
        _ => false,
    }
}

/// An integer literal's value.
fn int(e: &Expr) -> Option<u64> {
    match e {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => i.base10_parse().ok(),
            _ => None,
        },
        Expr::Paren(p) => int(&p.expr),
        _ => None,
    }
}
