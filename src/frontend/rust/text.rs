//! String values known without running the code: literals, `concat!` of them,
//! `include_str!` of a file in the analyzed tree, `format!` templates (each
//! placeholder filled with its argument's name, so that SQL with a table name
//! interpolated still reads as a statement), and the conversions that keep the
//! text (`.to_string()`, `String::from`, `&`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use syn::punctuated::Punctuated;
use syn::{Expr, Token};

use super::sql;
use crate::apis::MacroKind;
use crate::ir::SqlKind;
use crate::support::files::normalize_lexically;

/// The texts `include_str!` can name: the SQL files of the analyzed tree, by their
/// path on disk.
#[derive(Debug, Default)]
pub struct Included<'a> {
    files: HashMap<PathBuf, &'a str>,
}

impl<'a> Included<'a> {
    pub fn new(files: impl IntoIterator<Item = (&'a Path, &'a str)>) -> Self {
        Included {
            files: files
                .into_iter()
                .map(|(p, text)| (normalize_lexically(p), text))
                .collect(),
        }
    }

    /// The text `include_str!(arg)` names in the file at `from` (on disk): a path
    /// relative to the file's directory, or `concat!(env!("CARGO_MANIFEST_DIR"),
    /// "/x.sql")`, relative to the nearest directory above the file that holds it.
    pub fn resolve(&self, from: &Path, arg: &Expr) -> Option<&'a str> {
        let dir = from.parent()?;
        if let Some(rel) = str_lit(arg) {
            return self
                .files
                .get(&normalize_lexically(&dir.join(rel)))
                .copied();
        }
        let Expr::Macro(m) = strip(arg) else {
            return None;
        };
        if macro_kind(&m.mac) != Some(MacroKind::Concat) {
            return None;
        }
        let parts: Punctuated<Expr, Token![,]> =
            m.mac.parse_body_with(Punctuated::parse_terminated).ok()?;
        let mut parts = parts.iter();
        let manifest = parts.next().is_some_and(|p| match strip(p) {
            Expr::Macro(env) => {
                macro_kind(&env.mac) == Some(MacroKind::Env)
                    && env.mac.tokens.to_string().contains("CARGO_MANIFEST_DIR")
            }
            _ => false,
        });
        if !manifest {
            return None;
        }
        let rest = parts.map(str_lit).collect::<Option<String>>()?;
        let rest = rest.trim_start_matches('/');
        dir.ancestors()
            .find_map(|a| self.files.get(&normalize_lexically(&a.join(rest))).copied())
    }
}

/// How a `format!` argument is named in the text it fills (its source text's last
/// name: `self.table` → `table`).
pub trait ArgNames {
    fn name_of(&self, arg: &Expr) -> String;
}

impl<F: Fn(&Expr) -> String> ArgNames for F {
    fn name_of(&self, arg: &Expr) -> String {
        self(arg)
    }
}

/// What a macro does, by its last path segment (the runtime pack's `[macro_kinds]`).
pub fn macro_kind(mac: &syn::Macro) -> Option<MacroKind> {
    let name = mac.path.segments.last()?.ident.to_string();
    crate::apis::builtin_std().macro_kind(&name)
}

/// Whether a method of no argument returns its receiver's text (the runtime
/// pack's `text_methods`: `to_string`, `as_str`).
pub fn keeps_text(method: &str) -> bool {
    crate::apis::builtin_std().text_methods.contains(method)
}

/// What evaluating a string needs of its place: the file it is in, the texts it
/// may include, and how a `format!` argument is named.
pub struct Eval<'c> {
    pub from: &'c Path,
    pub included: &'c Included<'c>,
    pub name_of: &'c dyn ArgNames,
}

impl Eval<'_> {
    /// The string `e` evaluates to, when the code fixes it.
    pub fn value(&self, e: &Expr) -> Option<String> {
        match strip(e) {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            Expr::Reference(r) => self.value(&r.expr),
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => self.value(&u.expr),
            Expr::MethodCall(mc) if mc.args.is_empty() && keeps_text(&mc.method.to_string()) => {
                self.value(&mc.receiver)
            }
            Expr::Call(c) if c.args.len() == 1 => {
                let Expr::Path(p) = strip(&c.func) else {
                    return None;
                };
                let segs: Vec<String> = p
                    .path
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect();
                let conv = crate::apis::builtin_std()
                    .text_conversions
                    .iter()
                    .any(|suffix| segs.ends_with(suffix));
                conv.then(|| self.value(&c.args[0])).flatten()
            }
            Expr::Macro(m) => self.macro_value(&m.mac),
            _ => None,
        }
    }

    fn macro_value(&self, mac: &syn::Macro) -> Option<String> {
        let kind = macro_kind(mac)?;
        let args: Punctuated<Expr, Token![,]> =
            mac.parse_body_with(Punctuated::parse_terminated).ok()?;
        match kind {
            MacroKind::IncludeFile => {
                Some(self.included.resolve(self.from, args.first()?)?.to_string())
            }
            MacroKind::Concat => args.iter().map(|a| self.value(a)).collect(),
            MacroKind::Format => self.format(&args),
            _ => None,
        }
    }

    /// `format!(template, args..)` with each placeholder replaced by its argument's
    /// name; a name that is an SQL keyword (`{table}`) is tried again quoted.
    pub fn format(&self, args: &Punctuated<Expr, Token![,]>) -> Option<String> {
        let template = self.template(args.first()?)?;
        let names: Vec<String> = args
            .iter()
            .skip(1)
            .map(|e| self.name_of.name_of(e))
            .collect();
        let filled = sql::fill_placeholders(&template, &names, false);
        if sql::facts(&filled).kind == SqlKind::Unknown {
            let again = sql::fill_placeholders(&template, &names, true);
            if sql::facts(&again).kind != SqlKind::Unknown {
                return Some(again);
            }
        }
        Some(filled)
    }

    /// A `format!` template: a literal, `include_str!` or `concat!` (a macro's
    /// first argument is read before the macro runs).
    fn template(&self, e: &Expr) -> Option<String> {
        match strip(e) {
            Expr::Lit(_) => self.value(e),
            Expr::Macro(m) => match macro_kind(&m.mac) {
                Some(MacroKind::IncludeFile | MacroKind::Concat) => self.macro_value(&m.mac),
                _ => None,
            },
            _ => None,
        }
    }
}

/// Whether a text reads as an SQL statement: its first word, after white space,
/// comments and parentheses, is a statement's verb.
pub fn looks_like_sql(text: &str) -> bool {
    let mut t = text;
    loop {
        t = t.trim_start_matches(|c: char| c.is_whitespace() || c == '(');
        if let Some(rest) = t.strip_prefix("--") {
            t = rest.split_once('\n').map_or("", |(_, r)| r);
        } else if let Some(rest) = t.strip_prefix("/*") {
            t = rest.split_once("*/").map_or("", |(_, r)| r);
        } else {
            break;
        }
    }
    let word: String = t
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect::<String>()
        .to_ascii_lowercase();
    matches!(
        word.as_str(),
        "insert" | "update" | "delete" | "upsert" | "merge" | "replace" | "with" | "select"
    ) && t[word.len()..].starts_with(|c: char| c.is_whitespace())
}

/// The value of a string literal (in parentheses too).
pub(crate) fn str_lit(e: &Expr) -> Option<String> {
    match strip(e) {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Some(s.value()),
        _ => None,
    }
}

fn strip(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip(&p.expr),
        Expr::Group(g) => strip(&g.expr),
        e => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(code: &str, files: &[(&str, &str)]) -> Option<String> {
        let owned: Vec<(PathBuf, &str)> =
            files.iter().map(|(p, t)| (PathBuf::from(p), *t)).collect();
        let included = Included::new(owned.iter().map(|(p, t)| (p.as_path(), *t)));
        let name_of =
            |e: &Expr| sql::placeholder_name(&quote::ToTokens::to_token_stream(e).to_string());
        let ev = Eval {
            from: Path::new("/w/pkg/src/store/pg.rs"),
            included: &included,
            name_of: &name_of,
        };
        ev.value(&syn::parse_str::<Expr>(code).unwrap())
    }

    #[test]
    fn literals_conversions_and_concat() {
        assert_eq!(eval(r#""a".to_string()"#, &[]).as_deref(), Some("a"));
        assert_eq!(eval(r#"String::from("a")"#, &[]).as_deref(), Some("a"));
        assert_eq!(eval(r#"&*concat!("a", "b")"#, &[]).as_deref(), Some("ab"));
        assert_eq!(eval("x.to_string()", &[]), None);
        assert_eq!(eval(r#"format!("{}", "x").len()"#, &[]), None);
    }

    #[test]
    fn include_str_relative_and_from_the_manifest_dir() {
        let files = [
            (
                "/w/pkg/src/store/sql/insert.sql",
                "INSERT INTO t (id) VALUES ($1)",
            ),
            ("/w/pkg/migrations/q.sql", "DELETE FROM t"),
        ];
        assert_eq!(
            eval(r#"include_str!("sql/insert.sql")"#, &files).as_deref(),
            Some(files[0].1)
        );
        assert_eq!(
            eval(r#"include_str!("../../migrations/q.sql")"#, &files).as_deref(),
            Some(files[1].1)
        );
        assert_eq!(
            eval(
                r#"include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/q.sql"))"#,
                &files
            )
            .as_deref(),
            Some(files[1].1)
        );
        assert_eq!(eval(r#"include_str!("missing.sql")"#, &files), None);
    }

    #[test]
    fn format_templates_fill_names_including_included_ones() {
        let files = [(
            "/w/pkg/src/store/insert.sql",
            "INSERT INTO {} (id) VALUES ($1)",
        )];
        assert_eq!(
            eval(
                r#"format!(include_str!("insert.sql"), self.orders)"#,
                &files
            )
            .as_deref(),
            Some("INSERT INTO orders (id) VALUES ($1)")
        );
        assert_eq!(
            eval(r#"format!("DELETE FROM {t} WHERE id = $1")"#, &[]).as_deref(),
            Some("DELETE FROM t WHERE id = $1")
        );
    }

    #[test]
    fn sql_looking_text() {
        assert!(looks_like_sql("  INSERT INTO t VALUES (1)"));
        assert!(looks_like_sql("-- save\n/* x */ (select 1)"));
        assert!(looks_like_sql("update\tt set a = 1"));
        assert!(!looks_like_sql("Inserted {} rows"));
        assert!(!looks_like_sql("delete"));
        assert!(!looks_like_sql("select-all"));
    }
}
