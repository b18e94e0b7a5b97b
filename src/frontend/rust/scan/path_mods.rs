//! The modules a file declares out of line with a `#[path]` attribute, at its top
//! level: `#[path = "../common/lib.rs"] mod common;`. Such a file belongs to the
//! module tree of the crate that declares it, wherever it sits (a directory of
//! code several examples share).

use crate::frontend::rust::lex::{Kind, Lexer, Lit};

/// `(module name, path as written)` for each top-level `#[path = ".."] mod name;`
/// of `text`, in order. Inline modules (`mod m { .. }`), a `path` inside
/// `cfg_attr` and declarations inside braces are left out (their paths are
/// reckoned from other directories). Files without the word `path` cost one search.
pub fn path_module_decls(text: &str) -> Vec<(&str, String)> {
    if !text.contains("path") {
        return Vec::new();
    }
    let toks: Vec<_> = Lexer::new(text)
        .filter(|t| !matches!(t.kind, Kind::LineComment { .. } | Kind::BlockComment { .. }))
        .collect();
    let word = |i: usize| toks.get(i).map(|t| &text[t.start..t.end]);
    let is = |i: usize, k: Kind| toks.get(i).is_some_and(|t| t.kind == k);
    let mut out = Vec::new();
    let mut depth = 0usize;
    // The path of the attribute the next item is under.
    let mut pending: Option<String> = None;
    let mut i = 0;
    while i < toks.len() {
        let t = toks[i];
        match t.kind {
            Kind::Punct(b'#') if depth == 0 && is(i + 1, Kind::Open(b'[')) => {
                // The attribute's tokens, to its matching `]`.
                let mut j = i + 2;
                let mut nest = 1usize;
                while j < toks.len() && nest > 0 {
                    match toks[j].kind {
                        Kind::Open(_) => nest += 1,
                        Kind::Close(_) => nest -= 1,
                        _ => {}
                    }
                    j += 1;
                }
                let path_attr =
                    word(i + 2) == Some("path") && is(i + 3, Kind::Punct(b'=')) && j == i + 6;
                if path_attr {
                    pending = literal_text(&text[toks[i + 4].start..toks[i + 4].end], toks[i + 4]);
                }
                i = j;
                continue;
            }
            Kind::Open(_) => {
                depth += 1;
                pending = None;
            }
            Kind::Close(_) => {
                depth = depth.saturating_sub(1);
                pending = None;
            }
            Kind::Ident if depth == 0 && pending.is_some() => match &text[t.start..t.end] {
                "pub" => {
                    // `pub(crate)`, `pub(in path)`: skip the group.
                    if is(i + 1, Kind::Open(b'(')) {
                        while i < toks.len() && !matches!(toks[i].kind, Kind::Close(b')')) {
                            i += 1;
                        }
                    }
                }
                "mod" => {
                    if let (Some(name), true) = (word(i + 1), is(i + 2, Kind::Punct(b';'))) {
                        if is(i + 1, Kind::Ident) {
                            out.push((name, pending.take().unwrap_or_default()));
                        }
                    }
                    pending = None;
                }
                _ => pending = None,
            },
            _ => pending = None,
        }
        i += 1;
    }
    out
}

/// The text of a plain or raw string literal with no escapes; `None` otherwise.
fn literal_text(src: &str, tok: crate::frontend::rust::lex::Token) -> Option<String> {
    let Kind::Literal(lit @ (Lit::Str | Lit::RawStr)) = tok.kind else {
        return None;
    };
    if matches!(lit, Lit::Str) && src.contains('\\') {
        return None;
    }
    crate::frontend::rust::lex::literal_value(src, lit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_top_level_path_modules() {
        let text = "// #[path = \"no.rs\"] mod commented;\n\
                    #[path = \"../common/lib.rs\"]\nmod common;\n\
                    #[allow(dead_code)]\n#[path = r\"x/y.rs\"]\npub(crate) mod y;\n\
                    #[path = \"inline.rs\"] mod inline { }\n\
                    #[cfg_attr(unix, path = \"u.rs\")] mod u;\n\
                    mod plain;\n\
                    #[path = \"later.rs\"] fn f() {}\nmod after_fn;\n\
                    mod outer { #[path = \"deep.rs\"] mod deep; }\n";
        assert_eq!(
            path_module_decls(text),
            vec![
                ("common", "../common/lib.rs".to_string()),
                ("y", "x/y.rs".to_string())
            ]
        );
        assert!(path_module_decls("mod a;").is_empty());
    }
}
