//! The values the retention reader evaluates: the crate's constants (carried across
//! threads as source text), numbers, durations and strings computed from
//! expressions, and the SQL text of an argument.

use super::*;

pub(super) struct ConstDef {
    expr: Expr,
    /// Span of the value expression.
    loc: Loc,
    /// Unit implied by the name (`TTL_SECS`, `RETENTION_DAYS`).
    name_unit: Option<u64>,
}

/// A value computed from an expression: a number without a unit, a duration, a string.
#[derive(Clone, Debug)]
pub(super) enum Val {
    Int(u64),
    Ms(u64),
    Str(String),
}

#[derive(Clone, Debug)]
pub(super) struct Evaled {
    pub(super) val: Val,
    /// The value of the first constant reached, when the value came from one.
    pub(super) from_const: Option<Loc>,
    pub(super) name_unit: Option<u64>,
}

impl Evaled {
    /// Milliseconds, with `unit` per bare number (the API's unit wins over the name's).
    pub(super) fn millis(&self, unit: Option<u64>) -> Option<u64> {
        match &self.val {
            Val::Ms(ms) => Some(*ms),
            Val::Int(n) => n.checked_mul(unit.or(self.name_unit)?),
            Val::Str(s) => duration::parse(s, unit.or(self.name_unit)),
        }
    }
}

fn name_unit(name: &str) -> Option<u64> {
    let n = name.to_ascii_uppercase();
    let ends = |s: &[&str]| s.iter().any(|x| n.ends_with(x));
    if ends(&["_MS", "_MILLIS", "_MILLISECONDS"]) {
        Some(1)
    } else if ends(&["_SECS", "_SECONDS", "_SEC", "_S"]) {
        Some(SECOND)
    } else if ends(&["_MINS", "_MINUTES", "_MIN"]) {
        Some(MINUTE)
    } else if ends(&["_HOURS", "_HRS", "_H"]) {
        Some(HOUR)
    } else if ends(&["_DAYS", "_D"]) {
        Some(DAY)
    } else if ends(&["_WEEKS"]) {
        Some(WEEK)
    } else {
        None
    }
}

impl Cx<'_> {
    pub(super) fn eval(&self, e: &Expr, depth: u32) -> Option<Evaled> {
        if depth > 16 {
            return None;
        }
        let plain = |val| {
            Some(Evaled {
                val,
                from_const: None,
                name_unit: None,
            })
        };
        match strip(e) {
            Expr::Lit(l) => match &l.lit {
                syn::Lit::Int(i) => plain(Val::Int(i.base10_parse().ok()?)),
                syn::Lit::Str(s) => plain(Val::Str(s.value())),
                _ => None,
            },
            Expr::Path(p) => {
                let name = last_seg(&p.path);
                let def = self.consts.get(&name)?;
                let mut v = self.eval(&def.expr, depth + 1)?;
                v.from_const = Some(def.loc.clone());
                v.name_unit = def.name_unit.or(v.name_unit);
                Some(v)
            }
            Expr::Binary(b) => {
                let l = self.eval(&b.left, depth + 1)?;
                let r = self.eval(&b.right, depth + 1)?;
                let val = match (&l.val, &r.val, &b.op) {
                    (Val::Int(a), Val::Int(c), syn::BinOp::Mul(_)) => Val::Int(a.checked_mul(*c)?),
                    (Val::Int(a), Val::Int(c), syn::BinOp::Add(_)) => Val::Int(a.checked_add(*c)?),
                    (Val::Int(a), Val::Int(c), syn::BinOp::Div(_)) if *c > 0 => Val::Int(a / c),
                    (Val::Ms(a), Val::Int(c), syn::BinOp::Mul(_))
                    | (Val::Int(c), Val::Ms(a), syn::BinOp::Mul(_)) => Val::Ms(a.checked_mul(*c)?),
                    (Val::Ms(a), Val::Ms(c), syn::BinOp::Add(_)) => Val::Ms(a.checked_add(*c)?),
                    _ => return None,
                };
                Some(Evaled {
                    val,
                    from_const: l.from_const.or(r.from_const),
                    name_unit: l.name_unit.or(r.name_unit),
                })
            }
            Expr::Call(c) => {
                let Expr::Path(p) = strip(&c.func) else {
                    return None;
                };
                let segs = crate::frontend::rust::segments(&p.path);
                let f = segs.last()?.as_str();
                let durations = &self.apis.std.durations;
                let typed = segs.iter().any(|s| durations.types.contains(s));
                let results = &self.apis.std.results;
                if results.side(f) == Some(true) || results.some.iter().any(|s| s == f) {
                    return self.eval(c.args.first()?, depth + 1);
                }
                let unit = match durations.constructors.get(f) {
                    Some(u) => *u,
                    None if typed => *durations.typed_constructors.get(f)?,
                    None => return None,
                };
                let per = unit.millis();
                let arg = self.eval(c.args.first()?, depth + 1)?;
                let Val::Int(n) = arg.val else { return None };
                Some(Evaled {
                    val: Val::Ms(n.checked_mul(per)?),
                    from_const: arg.from_const,
                    name_unit: None,
                })
            }
            Expr::MethodCall(m) => {
                let inner = self.eval(&m.receiver, depth + 1)?;
                let method = m.method.to_string();
                let std = &self.apis.std;
                let val = match (std.durations.readers.get(&method), &inner.val) {
                    _ if std.aliases.contains(&method) || std.text_methods.contains(&method) => {
                        inner.val.clone()
                    }
                    (Some(unit), Val::Ms(ms)) => Val::Int(ms / unit.millis()),
                    _ => return None,
                };
                Some(Evaled { val, ..inner })
            }
            _ => None,
        }
    }

    /// The string value of a SQL argument: a literal (with its own span) or a constant.
    pub(super) fn sql_text(&self, e: &Expr, fc: &FileCx) -> Option<SqlLit> {
        if let Some(s) = lit_str(e) {
            return Some(SqlLit {
                text: s.value(),
                loc: fc.loc(s.span(), s.span()),
                source: fc.source(s.span()),
            });
        }
        if let Expr::Path(p) = strip(e) {
            let (text, loc) = self.str_consts.get(&last_seg(&p.path))?;
            return Some(SqlLit {
                text: text.clone(),
                loc: loc.clone(),
                source: None,
            });
        }
        None
    }
}

/// A constant of the crate, in a form that crosses threads: its value's source text.
#[derive(Clone, Debug)]
pub struct ConstItem {
    name: String,
    expr: String,
    loc: Loc,
    str_value: Option<(String, Loc)>,
}

/// The constants of one file, in order.
pub fn file_consts(f: &FileAst, include_tests: bool) -> Vec<ConstItem> {
    let fc = FileCx {
        path: Arc::from(f.file.path.as_str()),
        lines: f.lines,
        text: &f.file.text,
    };
    let mut out = Vec::new();
    collect_consts(&f.ast.items, &fc, &mut out, include_tests);
    out
}

/// The crate's constants, the later of two with one name winning (files in path order).
pub struct Consts {
    pub(super) consts: HashMap<String, ConstDef>,
    pub(super) str_consts: HashMap<String, (String, Loc)>,
}

impl Consts {
    pub fn new(items: &[ConstItem]) -> Consts {
        let mut c = Consts {
            consts: HashMap::new(),
            str_consts: HashMap::new(),
        };
        for it in items {
            if let Some(sv) = &it.str_value {
                c.str_consts.insert(it.name.clone(), sv.clone());
            }
            // The text came from a parsed expression: it parses again.
            let Ok(expr) = syn::parse_str::<Expr>(&it.expr) else {
                c.consts.remove(&it.name);
                continue;
            };
            c.consts.insert(
                it.name.clone(),
                ConstDef {
                    expr,
                    loc: it.loc.clone(),
                    name_unit: name_unit(&it.name),
                },
            );
        }
        c
    }
}

fn collect_consts(items: &[syn::Item], fc: &FileCx, out: &mut Vec<ConstItem>, include_tests: bool) {
    let mut add = |ident: &syn::Ident, expr: &Expr| {
        let name = ident.to_string();
        let loc = fc.loc(expr.span(), expr.span());
        let str_value = lit_str(expr).map(|s| (s.value(), fc.loc(s.span(), s.span())));
        out.push(ConstItem {
            name,
            expr: quote::ToTokens::to_token_stream(expr).to_string(),
            loc,
            str_value,
        });
    };
    let mut mods = Vec::new();
    for item in items {
        match item {
            syn::Item::Const(c) => add(&c.ident, &c.expr),
            syn::Item::Static(s) => add(&s.ident, &s.expr),
            syn::Item::Impl(i) if include_tests || !is_test_attr(&i.attrs) => {
                for it in &i.items {
                    if let syn::ImplItem::Const(c) = it {
                        add(&c.ident, &c.expr);
                    }
                }
            }
            syn::Item::Mod(m) if include_tests || !is_test_attr(&m.attrs) => {
                if let Some((_, inner)) = &m.content {
                    mods.push(inner);
                }
            }
            _ => {}
        }
    }
    for inner in mods {
        collect_consts(inner, fc, out, include_tests);
    }
}
