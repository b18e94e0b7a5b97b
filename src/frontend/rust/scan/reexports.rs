//! The re-exports a file makes at its top level: `pub use notify::mailer;`,
//! `pub use ledger::*;`, `pub use store::{profiles, orders as ord};`. A facade
//! crate that re-exports another crate's modules or items is read this way, without
//! parsing it, so that calls through the facade reach the real definitions
//! (docs/what-is-analyzed.md: "Paths resolve through `use`, `pub use` and glob re-exports").

use crate::frontend::rust::lex::{Kind, Lexer};

/// One re-export: the inline module it is made in (`mod api { pub use .. }`,
/// empty at the file's top level), the path as written and the name it is
/// re-exported under (`None`: a glob, every name below `path`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reexport {
    pub module: Vec<String>,
    pub path: Vec<String>,
    pub name: Option<String>,
}

/// The module-level `pub use` items of `text`, inline modules' included
/// (`pub(crate)` and the like left out: they re-export nothing outside the
/// crate), in order. Files without `pub use` cost one search.
pub fn reexports(text: &str) -> Vec<Reexport> {
    if !text.contains("pub use") {
        return Vec::new();
    }
    let toks: Vec<_> = Lexer::new(text)
        .filter(|t| !matches!(t.kind, Kind::LineComment { .. } | Kind::BlockComment { .. }))
        .collect();
    let word = |i: usize| match toks.get(i) {
        Some(t) if t.kind == Kind::Ident => Some(&text[t.start..t.end]),
        _ => None,
    };
    let mut out = Vec::new();
    let mut depth = 0usize;
    // The inline modules open, each with the depth inside its braces.
    let mut modules: Vec<(String, usize)> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let at_module_level = depth == modules.last().map_or(0, |m| m.1);
        match toks[i].kind {
            Kind::Open(_) => depth += 1,
            Kind::Close(_) => {
                if modules.last().is_some_and(|m| m.1 == depth) {
                    modules.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Kind::Ident
                if at_module_level
                    && word(i) == Some("mod")
                    && toks.get(i + 2).is_some_and(|t| t.kind == Kind::Open(b'{')) =>
            {
                if let Some(name) = word(i + 1) {
                    depth += 1;
                    modules.push((name.to_string(), depth));
                    i += 3;
                    continue;
                }
            }
            Kind::Ident
                if at_module_level && word(i) == Some("pub") && word(i + 1) == Some("use") =>
            {
                let mut j = i + 2;
                let mut found = Vec::new();
                tree(&toks, text, &mut j, &mut Vec::new(), &mut found);
                let module: Vec<String> = modules.iter().map(|m| m.0.clone()).collect();
                out.extend(found.into_iter().map(|(path, name)| Reexport {
                    module: module.clone(),
                    path,
                    name,
                }));
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Reads one use tree from `toks[*i]` on (`a::b`, `a::*`, `a::{..}`, `a as b`),
/// below `prefix`; stops at the `;`, `,` or `}` that ends it.
fn tree(
    toks: &[crate::frontend::rust::lex::Token],
    text: &str,
    i: &mut usize,
    prefix: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>)>,
) {
    let depth = prefix.len();
    let punct = |i: usize, b: u8| toks.get(i).is_some_and(|t| t.kind == Kind::Punct(b));
    // A leading `::` (2015 absolute paths).
    if punct(*i, b':') && punct(*i + 1, b':') {
        *i += 2;
    }
    while let Some(t) = toks.get(*i) {
        match t.kind {
            Kind::Ident => {
                prefix.push(text[t.start..t.end].to_string());
                *i += 1;
                if punct(*i, b':') && punct(*i + 1, b':') {
                    *i += 2;
                    continue;
                }
                let is_as = toks
                    .get(*i)
                    .is_some_and(|t| t.kind == Kind::Ident && &text[t.start..t.end] == "as");
                let name = if is_as {
                    let n = toks.get(*i + 1).map(|t| text[t.start..t.end].to_string());
                    *i += 2;
                    n
                } else {
                    prefix.last().cloned()
                };
                // `self` in a group names the group's own path.
                let mut path = prefix.clone();
                if path.last().map(String::as_str) == Some("self") {
                    path.pop();
                }
                if name.as_deref() != Some("_") && !path.is_empty() {
                    let name = match name.as_deref() {
                        Some("self") => path.last().cloned(),
                        _ => name,
                    };
                    out.push((path, name));
                }
                break;
            }
            Kind::Punct(b'*') => {
                *i += 1;
                out.push((prefix.clone(), None));
                break;
            }
            Kind::Open(b'{') => {
                *i += 1;
                loop {
                    match toks.get(*i).map(|t| t.kind) {
                        None => break,
                        Some(Kind::Close(b'}')) => {
                            *i += 1;
                            break;
                        }
                        Some(Kind::Punct(b',')) => *i += 1,
                        Some(_) => {
                            let before = *i;
                            tree(toks, text, i, prefix, out);
                            if *i == before {
                                *i += 1;
                            }
                        }
                    }
                }
                break;
            }
            _ => break,
        }
    }
    prefix.truncate(depth);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(path: &str, name: Option<&str>) -> Reexport {
        Reexport {
            module: Vec::new(),
            path: path.split("::").map(String::from).collect(),
            name: name.map(String::from),
        }
    }

    #[test]
    fn reads_module_glob_group_and_renamed_reexports() {
        let text = "//! facade\npub use notify::mailer;\npub use ledger::*;\n\
                    pub use store::{profiles, orders as ord, audit::{self, *}};\n\
                    use private::x;\npub(crate) use inner::y;\n\
                    mod m { pub use deep::z; fn f() { pub use no::w; } }\npub use ::abs::path as _;\n";
        assert_eq!(
            reexports(text),
            vec![
                r("notify::mailer", Some("mailer")),
                r("ledger", None),
                r("store::profiles", Some("profiles")),
                r("store::orders", Some("ord")),
                r("store::audit", Some("audit")),
                r("store::audit", None),
                Reexport {
                    module: vec!["m".into()],
                    ..r("deep::z", Some("z"))
                },
            ]
        );
    }

    #[test]
    fn a_file_without_pub_use_has_none() {
        assert!(reexports("use a::b;\nfn f() {}\n").is_empty());
    }
}
