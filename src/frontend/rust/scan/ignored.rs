//! The ranges of a file that no phase reads (doc comments, the insides of test
//! items) and the test modules it declares out of line, from the tokens of the
//! shared lexer; the test attributes and `cfg` predicates they follow.

use super::*;

/// The byte ranges of `text` that no phase of the analysis reads, in order: doc
/// comments (`///`, `//!`, `/** */`, `/*! */`: attributes no phase looks at), and,
/// unless `tests` (test items included), the insides of the braces of the
/// module-level test items the front end skips: the body of a `#[test]`
/// (`#[tokio::test]`, ..) function, the contents of a `#[cfg(test)]` module or
/// `impl` block. Parsing the text with these ranges blanked ([`blank`]) gives the
/// same syntax tree outside them, at the same positions, for a fraction of the work:
/// test code is often a third of a crate. Only attributes that `is_test_attr`
/// recognizes are followed (a subset of its cases: whatever is blanked here, every
/// phase skips).
pub fn ignored_ranges(text: &str, tests: bool) -> Vec<std::ops::Range<usize>> {
    test_items(text, tests, true).0
}

/// The modules a file declares out of line, at its top level, under a test attribute
/// (`#[cfg(test)] mod tests;`), without a `#[path]`: their files are test code. Most
/// files declare none: two byte searches decide before the lexical pass.
pub fn test_module_decls(text: &str) -> Vec<&str> {
    if !text.contains("(test") || !may_declare_module(text) {
        return Vec::new();
    }
    test_items(text, true, false).1
}

/// Whether `text` has something like `mod name;`.
fn may_declare_module(text: &str) -> bool {
    let b = text.as_bytes();
    text.match_indices("mod ").any(|(i, _)| {
        let mut j = i + 4;
        let skip = |j: &mut usize, f: fn(u8) -> bool| {
            while b.get(*j).copied().is_some_and(f) {
                *j += 1;
            }
        };
        skip(&mut j, |c| c.is_ascii_whitespace());
        let start = j;
        skip(&mut j, |c| c == b'_' || c.is_ascii_alphanumeric());
        skip(&mut j, |c| c.is_ascii_whitespace());
        j > start && b.get(j) == Some(&b';')
    })
}

/// [`ignored_ranges`] (with the doc comments when `docs`), and [`test_module_decls`].
fn test_items(text: &str, tests: bool, docs: bool) -> (Vec<std::ops::Range<usize>>, Vec<&str>) {
    let mut out = Vec::new();
    let mut decls = Vec::new();
    // The name after an item-level `mod`, and whether an attribute says `path`.
    let mut mod_name: Option<&str> = None;
    let mut pending_path = false;
    let mut lexer = Lexer::new(text, docs.then(Vec::new));
    // Open braces: whether each is a module's (items directly inside are at item
    // level), and the depth of parentheses and brackets it is in (`m!( .. )` holds
    // tokens, not items).
    let mut blocks: Vec<(bool, usize)> = Vec::new();
    let mut nest = 0usize;
    let (mut before, mut prev) = (Tok::Other, Tok::Other);
    // The next item is under a test attribute; the item keyword seen since.
    let mut pending_test = false;
    let mut keyword: Option<&str> = None;
    while let Some(tok) = lexer.next_tok() {
        let at_item_level = nest == 0 && blocks.last().is_none_or(|(m, _)| *m);
        match tok {
            // `#[..]`, and `#![..]` (never a test item's).
            Tok::Punct(b'[')
                if at_item_level
                    && (prev == Tok::Punct(b'#')
                        || (prev == Tok::Punct(b'!') && before == Tok::Punct(b'#'))) =>
            {
                let mut toks = Vec::new();
                let mut depth = 1usize;
                while let Some(t) = lexer.next_tok() {
                    match t {
                        Tok::Punct(b'[') => depth += 1,
                        Tok::Punct(b']') => depth -= 1,
                        _ => {}
                    }
                    if depth == 0 {
                        break;
                    }
                    toks.push(t);
                }
                pending_test |= prev == Tok::Punct(b'#') && is_test_attr(&toks);
                pending_path |= toks.first() == Some(&Tok::Ident("path"));
                (before, prev) = (Tok::Other, Tok::Punct(b']'));
                continue;
            }
            Tok::Ident(id @ ("mod" | "fn" | "impl")) if at_item_level && keyword.is_none() => {
                keyword = Some(id)
            }
            Tok::Ident(id) if at_item_level && keyword == Some("mod") && mod_name.is_none() => {
                mod_name = Some(id)
            }
            Tok::Ident(
                "struct" | "enum" | "union" | "trait" | "const" | "static" | "use" | "type"
                | "extern" | "macro_rules",
            ) if at_item_level && keyword.is_none() => keyword = Some(""),
            Tok::Open => {
                let start = lexer.i;
                if !tests && pending_test && at_item_level && keyword.is_some_and(|k| !k.is_empty())
                {
                    // Skip to the matching brace.
                    let mut depth = 1usize;
                    while let Some(t) = lexer.next_tok() {
                        match t {
                            Tok::Open => depth += 1,
                            Tok::Close => depth -= 1,
                            _ => {}
                        }
                        if depth == 0 {
                            out.push(start..lexer.i - 1);
                            break;
                        }
                    }
                } else {
                    blocks.push((at_item_level && keyword == Some("mod"), nest));
                    nest = 0;
                }
                (pending_test, pending_path, keyword, mod_name) = (false, false, None, None);
            }
            Tok::Close => {
                nest = blocks.pop().map_or(0, |(_, n)| n);
                (pending_test, pending_path, keyword, mod_name) = (false, false, None, None);
            }
            Tok::Punct(b'(' | b'[') => nest += 1,
            Tok::Punct(b')' | b']') => nest = nest.saturating_sub(1),
            Tok::Punct(b';') if at_item_level => {
                // (At the top of the file: a module declared in an inline one lives
                // in a directory of its own.)
                let top = blocks.is_empty();
                if let Some(name) = mod_name.filter(|_| pending_test && !pending_path && top) {
                    decls.push(name);
                }
                (pending_test, pending_path, keyword, mod_name) = (false, false, None, None);
            }
            _ => {}
        }
        (before, prev) = (prev, tok);
    }
    // Doc comments inside test items are blanked with them.
    let docs = lexer.docs.unwrap_or_default();
    let mut merged = Vec::with_capacity(out.len() + docs.len());
    let mut bodies = out.into_iter().peekable();
    for d in docs {
        while let Some(t) = bodies.next_if(|t| t.end <= d.start) {
            merged.push(t);
        }
        if bodies.peek().is_none_or(|t| d.start < t.start) {
            merged.push(d);
        }
    }
    merged.extend(bodies);
    (merged, decls)
}

/// Whether the tokens of an attribute (inside `#[..]`) are one that the front end's
/// `is_test_attr` takes for a test attribute: a path ending in `test` (`test`,
/// `tokio::test(..)`), or `cfg(..)` whose predicate never holds outside tests
/// (`test`, `all(test, ..)`; not `not(test)` nor `any(test, feature = "..")`).
pub(super) fn is_test_attr(toks: &[Tok]) -> bool {
    let mut last = None;
    let mut i = 0;
    while let Some(Tok::Ident(id)) = toks.get(i) {
        last = Some(*id);
        i += 1;
        if toks.get(i..i + 2) == Some(&[Tok::Punct(b':'), Tok::Punct(b':')]) {
            i += 2;
        } else {
            break;
        }
    }
    if last == Some("test") {
        return true;
    }
    if i != 1 || last != Some("cfg") || toks.get(1) != Some(&Tok::Punct(b'(')) {
        return false;
    }
    matches!(
        cfg_predicate(&toks[1..]),
        Some((Some(false), rest)) if rest.is_empty()
    )
}

/// The value of the `cfg` predicate in the parenthesized group that `toks` start
/// with, where `test` is off and every other option unknown (`None`), and the
/// tokens after the group; `None` when it is not a predicate.
fn cfg_predicate<'t>(toks: &'t [Tok<'t>]) -> Option<(Option<bool>, &'t [Tok<'t>])> {
    let (inside, rest) = group(toks)?;
    let (value, after) = predicate(inside)?;
    after.is_empty().then_some((value, rest))
}

/// One predicate at the start of `toks`: its value (see [`cfg_predicate`]) and the
/// tokens after it.
fn predicate<'t>(toks: &'t [Tok<'t>]) -> Option<(Option<bool>, &'t [Tok<'t>])> {
    let Some(Tok::Ident(name)) = toks.first() else {
        return None;
    };
    let rest = &toks[1..];
    match rest.first() {
        Some(Tok::Punct(b'(')) => {
            let (inside, after) = group(rest)?;
            let mut args = Vec::new();
            let mut list = inside;
            while !list.is_empty() {
                let (v, more) = predicate(list)?;
                args.push(v);
                list = match more.split_first() {
                    Some((Tok::Punct(b','), more)) => more,
                    None => more,
                    _ => return None,
                };
            }
            Some((cfg_combine(name, &args), after))
        }
        // `feature = ".."`
        Some(Tok::Punct(b'=')) => Some((None, rest.get(2..)?)),
        _ => Some(((*name == "test").then_some(false), rest)),
    }
}

/// The value of `name(args..)` in a `cfg` predicate, from its arguments' values
/// (`None`: unknown; `not`, `all`, `any`, else unknown). The front end's
/// `is_test_attr` and the scan both evaluate with it.
pub(crate) fn cfg_combine(name: &str, args: &[Option<bool>]) -> Option<bool> {
    match name {
        "not" if args.len() == 1 => args[0].map(|v| !v),
        "all" if args.contains(&Some(false)) => Some(false),
        "all" => args.iter().all(|v| *v == Some(true)).then_some(true),
        "any" if args.contains(&Some(true)) => Some(true),
        "any" => args.iter().all(|v| *v == Some(false)).then_some(false),
        _ => None,
    }
}

/// The inside of the parenthesized group `toks` start with, and what follows it.
fn group<'t>(toks: &'t [Tok<'t>]) -> Option<(&'t [Tok<'t>], &'t [Tok<'t>])> {
    if toks.first() != Some(&Tok::Punct(b'(')) {
        return None;
    }
    let mut depth = 0usize;
    for (i, t) in toks.iter().enumerate() {
        match t {
            Tok::Punct(b'(') => depth += 1,
            Tok::Punct(b')') => {
                depth -= 1;
                if depth == 0 {
                    return Some((&toks[1..i], &toks[i + 1..]));
                }
            }
            _ => {}
        }
    }
    None
}

/// The doc comments of `text` (see [`ignored_ranges`]), in order.
pub fn doc_comments(text: &str) -> Vec<std::ops::Range<usize>> {
    lex::Lexer::new(text)
        .filter(|t| {
            matches!(
                t.kind,
                Kind::LineComment { doc: true } | Kind::BlockComment { doc: true }
            )
        })
        .map(|t| t.start..t.end)
        .collect()
}
