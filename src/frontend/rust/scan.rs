//! A lexical scan of Rust text, for deciding which files of a crate to parse
//! (the prefilter's closure, ARCHITECTURE.md "Prefilter"): the identifiers a file
//! mentions outside comments and literals, the functions and constants it defines,
//! and the types it declares at module level; also the ranges blanked before
//! parsing and the lexical tests of function bodies. It reads the tokens of the
//! shared lexer ([`super::lex`]) and never fails: an unterminated literal or
//! comment ends the scan.

/// Sets of short borrowed names, hashed with a fast non-cryptographic hash (the scan
/// inserts every identifier of every file).
type HashSet<T> = foldhash::HashSet<T>;

use super::lex::{self, Kind};

mod ignored;
mod path_mods;
mod reexports;
pub(crate) use ignored::cfg_combine;
use ignored::is_test_attr;
pub use ignored::{doc_comments, ignored_ranges, test_module_decls};
pub use path_mods::path_module_decls;
pub use reexports::{reexports, Reexport};

/// What a file mentions and defines, as borrowed slices of its text.
#[derive(Debug, Default)]
pub struct FileScan<'a> {
    /// Every identifier outside comments and literals (keywords included).
    pub idents: HashSet<&'a str>,
    /// Names after `fn`, anywhere.
    pub fns: Vec<&'a str>,
    /// Identifiers called bare: `name(`, `name::<T>(` (tuple-struct constructors
    /// and calls in macro arguments alike), not `fn name(`.
    pub calls: HashSet<&'a str>,
    /// Identifiers called through a path: `a::name(`, `Type::name::<T>(`.
    pub path_calls: HashSet<&'a str>,
    /// Methods called: `.name(`, `.name::<T>(`.
    pub method_calls: HashSet<&'a str>,
    /// Functions at module level and in `impl` and `trait` blocks, as the front
    /// end indexes them.
    pub items: Vec<FnItem<'a>>,
    /// Names after `const` and `static` (not `const fn`).
    pub consts: Vec<&'a str>,
    /// Structs, enums, unions, traits and type aliases declared at module level
    /// (also inside inline `mod m { .. }` blocks), with whether each is a trait.
    pub types: Vec<TypeItem<'a>>,
}

/// A function the front end would index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FnItem<'a> {
    pub name: &'a str,
    /// The `impl` block's type, or the trait's name for a trait's provided method.
    pub self_type: Option<&'a str>,
    pub trait_name: Option<&'a str>,
    /// The inline modules (`mod m { .. }`) it is declared in, outermost first.
    pub module: Vec<&'a str>,
    /// Its first parameter is `self` (`self`, `&self`, `&'a mut self`, `self: Box<Self>`).
    pub has_self: bool,
    /// Under `#[test]` or `#[cfg(test)]`.
    pub test: bool,
    /// Where its name starts (its signature follows).
    pub at: usize,
    /// The inside of its body's braces (none for a trait's declaration).
    pub body: Option<std::ops::Range<usize>>,
}

/// Where the scan is in the signature of the last function item, looking for `self`.
#[derive(Clone, Copy, Debug)]
enum Receiver {
    /// After the name: generic parameters (at this `<` depth), then `(`.
    Generics(usize),
    /// After `(`: `&`, a lifetime or `mut` may come before `self`.
    Params,
}

/// A type declared at module level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TypeItem<'a> {
    pub name: &'a str,
    pub is_trait: bool,
    pub test: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Tok<'a> {
    Ident(&'a str),
    Open,
    Close,
    Punct(u8),
    Other,
}

/// What an open brace opened.
#[derive(Clone, Copy, Debug)]
enum Block<'a> {
    Mod {
        name: &'a str,
        test: bool,
    },
    Impl {
        self_type: Option<&'a str>,
        trait_name: Option<&'a str>,
        test: bool,
    },
    Trait {
        name: &'a str,
        test: bool,
    },
    Other,
}

impl Block<'_> {
    fn is_test(&self) -> bool {
        matches!(
            self,
            Block::Mod { test: true, .. }
                | Block::Impl { test: true, .. }
                | Block::Trait { test: true, .. }
        )
    }
}

/// Scans `text`.
pub fn scan(text: &str) -> FileScan<'_> {
    let mut out = FileScan::default();
    let mut blocks: Vec<Block> = Vec::new();
    // Open blocks that are not module bodies, and open blocks under a test attribute.
    let (mut non_mod, mut test_blocks) = (0usize, 0usize);
    let mut prev: [Tok; 2] = [Tok::Other, Tok::Other];
    // The token before `prev` (what comes before an identifier in call position).
    let mut before = Tok::Other;
    // An identifier followed by `::` (a turbofish may follow), with its own `before`.
    let mut path_ident: Option<(Tok, &str)> = None;
    // An attribute being read (`#[..]`): its bracket depth and whether it names `test`.
    let mut attr: Option<(usize, Vec<Tok>)> = None;
    // The next item is under a test attribute.
    let mut pending_test = false;
    // Tokens of an item `impl` header, up to its `{`.
    let mut impl_header: Option<Vec<Tok>> = None;
    // The item keyword whose body the next `{` opens (`mod m`, `trait T`).
    let mut opener: Option<Block> = None;
    // The last function item's signature, until its receiver is known.
    let mut receiver: Option<Receiver> = None;
    // A trait's function item, until its body or its `;` (bracket depth): one
    // without a body is not a function the front end indexes.
    let mut trait_fn: Option<usize> = None;
    // The last function item's signature, until its body's `{` or its `;` (bracket
    // depth); then its body: where it starts and how many blocks are open around it.
    let mut signature: Option<usize> = None;
    let mut body: Option<(usize, usize)> = None;
    // Open parentheses and brackets: an item inside `m!( .. )` is no item to syn.
    let mut parens = 0usize;
    let mut lexer = Lexer::new(text, None);
    while let Some(tok) = lexer.next_tok() {
        match (prev, tok) {
            ([p, Tok::Ident(id)], Tok::Punct(b'(')) if p != Tok::Ident("fn") => out.called(p, id),
            // `id::` (`before` precedes `id`): a turbofish may follow.
            ([Tok::Ident(id), Tok::Punct(b':')], Tok::Punct(b':')) => {
                path_ident = Some((before, id))
            }
            ([Tok::Punct(b':'), Tok::Punct(b':')], Tok::Punct(b'<')) => {
                if let Some((p, id)) = path_ident.take() {
                    out.called(p, id);
                }
            }
            _ => {}
        }
        if let Some(r) = receiver {
            receiver = match (r, tok) {
                (Receiver::Generics(d), Tok::Punct(b'<')) => Some(Receiver::Generics(d + 1)),
                // `->` in a bound (`F: Fn() -> u8`) closes nothing.
                (Receiver::Generics(d), Tok::Punct(b'>'))
                    if d > 0 && prev[1] != Tok::Punct(b'-') =>
                {
                    Some(Receiver::Generics(d - 1))
                }
                (Receiver::Generics(0), Tok::Punct(b'(')) => Some(Receiver::Params),
                (Receiver::Generics(d), _) if d > 0 => Some(r),
                (Receiver::Params, Tok::Punct(b'&') | Tok::Other | Tok::Ident("mut")) => Some(r),
                (Receiver::Params, Tok::Ident("self")) => {
                    if let Some(f) = out.items.last_mut() {
                        f.has_self = true;
                    }
                    None
                }
                _ => None,
            };
        }
        if let Some(depth) = &mut signature {
            match tok {
                Tok::Punct(b'(' | b'[') => *depth += 1,
                Tok::Punct(b')' | b']') => *depth = depth.saturating_sub(1),
                Tok::Punct(b';') if *depth == 0 => signature = None,
                Tok::Open if *depth == 0 => {
                    body = Some((lexer.i, blocks.len()));
                    signature = None;
                }
                _ => {}
            }
        }
        if let (Tok::Close, Some((start, level))) = (tok, body) {
            if blocks.len() == level + 1 {
                if let Some(f) = out.items.last_mut() {
                    f.body = Some(start..lexer.i - 1);
                }
                body = None;
            }
        }
        if let Some(depth) = &mut trait_fn {
            match tok {
                Tok::Punct(b'(' | b'[') => *depth += 1,
                Tok::Punct(b')' | b']') => *depth = depth.saturating_sub(1),
                Tok::Punct(b';') if *depth == 0 => {
                    out.items.pop();
                    trait_fn = None;
                }
                Tok::Open | Tok::Close => trait_fn = None,
                _ => {}
            }
        }
        if let Some((depth, toks)) = &mut attr {
            match tok {
                Tok::Punct(b'[') => *depth += 1,
                Tok::Punct(b']') => *depth -= 1,
                Tok::Ident(id) => {
                    out.idents.insert(id);
                }
                _ => {}
            }
            if *depth == 0 {
                pending_test |= is_test_attr(toks);
                attr = None;
            } else {
                toks.push(tok);
            }
            before = prev[0];
            prev = [prev[1], tok];
            continue;
        }
        if let Some(h) = &mut impl_header {
            if tok != Tok::Open && tok != Tok::Punct(b';') {
                h.push(tok);
            }
        }
        // Items directly in modules (or in an impl or trait block) are indexed.
        // (Counters, not a walk of the stack: a file may nest thousands of braces.)
        let at_item_level = match blocks.last() {
            None | Some(Block::Mod { .. }) => non_mod == 0,
            Some(Block::Other) => false,
            Some(_) => non_mod == 1,
        };
        let in_test = test_blocks > 0;
        match tok {
            Tok::Punct(b'[') if prev[1] == Tok::Punct(b'#') => attr = Some((1, Vec::new())),
            Tok::Punct(b'[') if prev == [Tok::Punct(b'#'), Tok::Punct(b'!')] => {
                attr = Some((1, Vec::new()))
            }
            Tok::Ident(id) => {
                out.idents.insert(id);
                let kw = match prev[1] {
                    Tok::Ident(kw) => kw,
                    _ => "",
                };
                let test = pending_test || in_test;
                match kw {
                    "fn" => {
                        out.fns.push(id);
                        if at_item_level {
                            let (self_type, trait_name) = match blocks.last() {
                                Some(Block::Impl {
                                    self_type,
                                    trait_name,
                                    ..
                                }) => (*self_type, *trait_name),
                                Some(Block::Trait { name, .. }) => (Some(*name), Some(*name)),
                                _ => (None, None),
                            };
                            let module = blocks
                                .iter()
                                .filter_map(|b| match b {
                                    Block::Mod { name, .. } => Some(*name),
                                    _ => None,
                                })
                                .collect();
                            out.items.push(FnItem {
                                name: id,
                                self_type,
                                trait_name,
                                module,
                                has_self: false,
                                test,
                                at: raw_start(text, id),
                                body: None,
                            });
                            if parens == 0 {
                                signature = Some(0);
                            }
                            receiver = Some(Receiver::Generics(0));
                            if matches!(blocks.last(), Some(Block::Trait { .. })) {
                                trait_fn = Some(0);
                            }
                        }
                    }
                    "const" | "static" if id != "fn" && id != "mut" && id != "_" => {
                        out.consts.push(id)
                    }
                    "mut" if prev[0] == Tok::Ident("static") => out.consts.push(id),
                    "struct" | "enum" | "union" | "trait" | "type" if non_mod == 0 => {
                        out.types.push(TypeItem {
                            name: id,
                            is_trait: kw == "trait",
                            test,
                        });
                        if kw == "trait" {
                            opener = Some(Block::Trait { name: id, test });
                        }
                    }
                    "mod" => opener = Some(Block::Mod { name: id, test }),
                    _ => {}
                }
                let item_start = matches!(
                    prev[1],
                    Tok::Open | Tok::Close | Tok::Punct(b';') | Tok::Punct(b']') | Tok::Other
                ) || matches!(prev[1], Tok::Ident("unsafe" | "default" | "pub"))
                    || prev[1] == Tok::Punct(b')');
                if id == "impl" && item_start && impl_header.is_none() && at_item_level {
                    impl_header = Some(Vec::new());
                }
            }
            Tok::Open => {
                let block = if let Some(h) = impl_header.take() {
                    let (self_type, trait_name) = impl_types(&h);
                    Block::Impl {
                        self_type,
                        trait_name,
                        test: pending_test || in_test,
                    }
                } else {
                    opener.take().unwrap_or(Block::Other)
                };
                non_mod += usize::from(!matches!(block, Block::Mod { .. }));
                test_blocks += usize::from(block.is_test());
                blocks.push(block);
                pending_test = false;
                opener = None;
            }
            Tok::Close => {
                if let Some(b) = blocks.pop() {
                    non_mod -= usize::from(!matches!(b, Block::Mod { .. }));
                    test_blocks -= usize::from(b.is_test());
                }
                pending_test = false;
                opener = None;
                impl_header = None;
            }
            // (`;` inside brackets is part of a type: `impl From<X> for [u8; 4]`.)
            Tok::Punct(b';') if parens == 0 => {
                pending_test = false;
                opener = None;
                impl_header = None;
            }
            Tok::Punct(b'(' | b'[') => parens += 1,
            Tok::Punct(b')' | b']') => parens = parens.saturating_sub(1),
            _ => {}
        }
        before = prev[0];
        prev = [prev[1], tok];
    }
    out
}

/// What the lexical test of a function needs of its text (see
/// `driver::lazy::unneeded_bodies`).
#[derive(Debug, Default)]
pub struct ItemTokens {
    /// An identifier for which the predicate held (the scan stopped there).
    pub named: bool,
    /// An `.await` that may wait for a spawned task (the scan stopped there): on a
    /// plain path (`handle.await`), a parenthesized expression, or the result of a
    /// call or macro named in `joins` (`join_all(hs).await`).
    pub awaits_task: bool,
    /// Where the loops (`loop`, `while`, `for`) start, up to where it stopped.
    pub loops: Vec<usize>,
    /// A string literal that reads as SQL (the scan stopped there): the crate
    /// index reads the SQL a function returns or puts in a struct's field.
    pub sql: bool,
}

/// Keywords that may come before an expression in parentheses.
fn is_keyword(id: &str) -> bool {
    matches!(
        id,
        "return"
            | "break"
            | "in"
            | "if"
            | "match"
            | "while"
            | "else"
            | "let"
            | "mut"
            | "move"
            | "as"
            | "yield"
            | "box"
            | "unsafe"
            | "await"
    )
}

/// Where the identifier `id` (a slice of `text`) starts, `r#` included.
fn raw_start(text: &str, id: &str) -> usize {
    let at = id.as_ptr() as usize - text.as_ptr() as usize;
    if text[..at].ends_with("r#") {
        at - 2
    } else {
        at
    }
}

/// Reads the tokens of `text` (a function, from its name to the end of its body)
/// outside comments and literals, until `named` holds for an identifier or an
/// `.await` may wait for a task.
pub fn item_tokens(
    text: &str,
    joins: &std::collections::HashSet<String>,
    mut named: impl FnMut(&str) -> bool,
) -> ItemTokens {
    let mut out = ItemTokens::default();
    let mut lexer = Lexer::new(text, None);
    let mut prev: [Tok; 3] = [Tok::Other; 3];
    // For each open parenthesis, the call or macro it belongs to (`None`: a
    // parenthesized expression or tuple); and that of the one closed last.
    let mut parens: Vec<Option<&str>> = Vec::new();
    let mut closed: Option<Option<&str>> = None;
    while let Some(tok) = lexer.next_tok() {
        match tok {
            Tok::Punct(b'(') => parens.push(match prev {
                // (`return (fut).await`: a keyword calls nothing.)
                [_, _, Tok::Ident(id)] if !is_keyword(id) => Some(id),
                [_, Tok::Ident(id), Tok::Punct(b'!')] => Some(id),
                _ => None,
            }),
            Tok::Punct(b')') => closed = parens.pop(),
            Tok::Ident("await") if prev[2] == Tok::Punct(b'.') => {
                let task = match prev {
                    [p, Tok::Ident(_), _] => p != Tok::Punct(b'.'),
                    [_, Tok::Punct(b')'), _] => match closed {
                        Some(Some(callee)) => joins.contains(callee),
                        _ => true,
                    },
                    _ => false,
                };
                if task {
                    out.awaits_task = true;
                    return out;
                }
            }
            Tok::Ident(id) => {
                if matches!(id, "loop" | "while" | "for") {
                    out.loops
                        .push(id.as_ptr() as usize - text.as_ptr() as usize);
                }
                if named(id) {
                    out.named = true;
                    return out;
                }
            }
            Tok::Other if literal_reads_as_sql(&text[lexer.start..lexer.i]) => {
                out.sql = true;
                return out;
            }
            _ => {}
        }
        prev = [prev[1], prev[2], tok];
    }
    out
}

/// Whether the source of a token is a string literal whose text reads as SQL
/// ([`text::looks_like_sql`], with the escapes a literal may start with).
///
/// [`text::looks_like_sql`]: super::text::looks_like_sql
fn literal_reads_as_sql(src: &str) -> bool {
    let Some(q) = src.find('"') else {
        return false;
    };
    let prefix = &src[..q];
    if !prefix
        .trim_end_matches('#')
        .chars()
        .all(|c| matches!(c, 'r' | 'b' | 'c'))
    {
        return false;
    }
    let mut body = &src[q + 1..];
    if !prefix.contains('r') {
        // `"\n  INSERT"`, `"\<newline>  INSERT"`.
        loop {
            let t = body.trim_start();
            match t.strip_prefix('\\') {
                Some(r) if r.starts_with(['n', 't', 'r']) => body = &r[1..],
                Some(r) if r.starts_with(char::is_whitespace) => body = r,
                _ => {
                    body = t;
                    break;
                }
            }
        }
    }
    super::text::looks_like_sql(body)
}

/// Whether the inside of a function body may be one expression returning a field
/// of `self` or a constant (`&self.insert`, `self.sql.as_str()`, `&*SQL`): `&` and
/// `*`, then `self` followed by `.name`s and at most one call that keeps the text
/// ([`text::keeps_text`]), or one name alone. The crate index reads what such a body
/// returns, so the prefilter parses it.
///
/// [`text::keeps_text`]: super::text::keeps_text
pub fn may_return_text(body: &str) -> bool {
    let mut lexer = Lexer::new(body, None);
    let mut tok = lexer.next_tok();
    while matches!(tok, Some(Tok::Punct(b'&' | b'*'))) {
        tok = lexer.next_tok();
    }
    match tok {
        Some(Tok::Ident("self")) => {}
        Some(Tok::Ident(_)) => return lexer.next_tok().is_none(),
        _ => return false,
    }
    let mut n = 0;
    loop {
        match lexer.next_tok() {
            None => return n > 0,
            Some(Tok::Punct(b'.')) if n < 4 => n += 1,
            _ => return false,
        }
        let Some(Tok::Ident(name)) = lexer.next_tok() else {
            return false;
        };
        let at = lexer.i;
        match lexer.next_tok() {
            Some(Tok::Punct(b'(')) => {
                return n > 1
                    && super::text::keeps_text(name)
                    && lexer.next_tok() == Some(Tok::Punct(b')'))
                    && lexer.next_tok().is_none()
            }
            _ => lexer.seek(at),
        }
    }
}

/// For `text` starting with a loop (`loop`, `while ..`, `for .. in ..`): where its
/// body's `{` is (the first one outside brackets) and where the loop ends (after
/// its `}`); `None` when the text ends first, or when the loop's head may hold a
/// block of its own (`while unsafe { poll(..) } == -1 {`, `match`, `if`, ...).
pub fn loop_extent(text: &str) -> Option<(usize, usize)> {
    let mut lexer = Lexer::new(text, None);
    let (mut parens, mut open) = (0usize, None);
    let mut depth = 0usize;
    lexer.next_tok();
    while let Some(tok) = lexer.next_tok() {
        match (tok, open) {
            (
                Tok::Ident(
                    "unsafe" | "async" | "const" | "match" | "if" | "else" | "loop" | "while"
                    | "for" | "move",
                ),
                None,
            ) if parens == 0 => return None,
            (Tok::Punct(b'(' | b'['), None) => parens += 1,
            (Tok::Punct(b')' | b']'), None) => parens = parens.saturating_sub(1),
            (Tok::Open, None) if parens == 0 => {
                open = Some(lexer.i - 1);
                depth = 1;
            }
            (Tok::Open, Some(_)) => depth += 1,
            (Tok::Close, Some(at)) => {
                depth -= 1;
                if depth == 0 {
                    return Some((at, lexer.i));
                }
            }
            _ => {}
        }
    }
    None
}

/// Ranges to blank together: `a` and `b` merged in order, a range inside another
/// dropped (the ranges of each are in order and either disjoint or nested).
pub fn merge_ranges(
    a: Vec<std::ops::Range<usize>>,
    b: &[std::ops::Range<usize>],
) -> Vec<std::ops::Range<usize>> {
    let mut all = a;
    all.extend(b.iter().cloned());
    all.sort_by_key(|r| (r.start, std::cmp::Reverse(r.end)));
    let mut out: Vec<std::ops::Range<usize>> = Vec::with_capacity(all.len());
    for r in all {
        if out.last().is_some_and(|l| r.start < l.end) {
            continue;
        }
        out.push(r);
    }
    out
}

/// `text` with the `ranges` blanked: every character but a line break becomes a
/// space, so that every position outside them keeps its line and column.
pub fn blank(text: &str, ranges: &[std::ops::Range<usize>]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for r in ranges {
        out.push_str(&text[at..r.start]);
        for c in text[r.clone()].chars() {
            out.push(if c == '\n' { '\n' } else { ' ' });
        }
        at = r.end;
    }
    out.push_str(&text[at..]);
    out
}

impl<'a> FileScan<'a> {
    /// Records a call of `id`, preceded by the token `p`.
    fn called(&mut self, p: Tok<'a>, id: &'a str) {
        match p {
            Tok::Punct(b'.') => self.method_calls.insert(id),
            Tok::Punct(b':') => self.path_calls.insert(id),
            _ => self.calls.insert(id),
        };
    }
}

/// The self type and trait of an `impl` header (the tokens after `impl`):
/// `impl<T> Handler for Repo<T>` -> (`Repo`, `Handler`).
fn impl_types<'a>(h: &[Tok<'a>]) -> (Option<&'a str>, Option<&'a str>) {
    // Split at `for` outside angle brackets, after skipping the impl's own generics.
    let mut depth = 0i32;
    let mut parts: Vec<Vec<Tok<'a>>> = vec![Vec::new()];
    let mut started = false;
    for &t in h {
        match t {
            Tok::Punct(b'<') => depth += 1,
            Tok::Punct(b'>') => depth -= 1,
            _ => {}
        }
        if !started {
            if depth == 0 && !matches!(t, Tok::Punct(b'>')) {
                started = true;
            } else {
                continue;
            }
        }
        if depth == 0 && t == Tok::Ident("for") {
            parts.push(Vec::new());
            continue;
        }
        if let Some(p) = parts.last_mut() {
            p.push(t);
        }
    }
    let last_name = |toks: &[Tok<'a>]| -> Option<&'a str> {
        // The last identifier of the path before its generics: `crate::db::Repo<T>`.
        let mut name = None;
        let mut depth = 0i32;
        for &t in toks {
            match t {
                Tok::Punct(b'<') => depth += 1,
                Tok::Punct(b'>') => depth -= 1,
                Tok::Ident("dyn" | "mut" | "where" | "const") if depth == 0 => {}
                Tok::Ident(id) if depth == 0 => name = Some(id),
                _ => {}
            }
            if depth == 0 && t == Tok::Ident("where") {
                break;
            }
        }
        name
    };
    match parts.as_slice() {
        [ty] => (type_name(ty), None),
        [tr, ty, ..] => (type_name(ty), last_name(tr)),
        [] => (None, None),
    }
}

/// The name the front end gives a type written as `toks` (`type_name`): the last
/// segment of its path, looking through references and wrappers (`&Arc<Repo>`:
/// `Repo`); none for tuples, slices, pointers, `dyn` and `impl` types.
fn type_name<'a>(toks: &[Tok<'a>]) -> Option<&'a str> {
    let mut i = 0;
    while matches!(
        toks.get(i),
        Some(Tok::Punct(b'&') | Tok::Other | Tok::Ident("mut"))
    ) {
        i += 1;
    }
    let mut name = None;
    while let Some(t) = toks.get(i) {
        match t {
            Tok::Ident("dyn" | "impl" | "fn" | "unsafe" | "extern" | "where") => break,
            Tok::Ident(id) => name = Some(*id),
            Tok::Punct(b':') => {}
            _ => break,
        }
        i += 1;
    }
    let name = name?;
    if toks.get(i) != Some(&Tok::Punct(b'<')) || !super::is_wrapper(name) {
        return Some(name);
    }
    // The wrapper's first type argument (lifetimes are skipped).
    let mut depth = 0usize;
    let mut start = i + 1;
    for (k, &t) in toks.iter().enumerate().skip(i) {
        match t {
            Tok::Punct(b'<') => depth += 1,
            Tok::Punct(b'>') if k > 0 && toks[k - 1] == Tok::Punct(b'-') => {}
            Tok::Punct(b'>') => {
                depth -= 1;
                if depth == 0 {
                    return first_type(&toks[start..k]).or(Some(name));
                }
            }
            Tok::Punct(b',') if depth == 1 => {
                if let Some(t) = first_type(&toks[start..k]) {
                    return Some(t);
                }
                start = k + 1;
            }
            _ => {}
        }
    }
    Some(name)
}

/// A generic argument's type name; none for a lifetime.
fn first_type<'a>(arg: &[Tok<'a>]) -> Option<&'a str> {
    match arg {
        [Tok::Other] | [] => None,
        _ => type_name(arg),
    }
}

/// The shared lexer's tokens as the scan reads them: comments skipped (the doc
/// comments recorded when asked), literals, lifetimes and numbers `Other`, braces
/// `Open` and `Close`, every other delimiter punctuation.
struct Lexer<'a> {
    text: &'a str,
    lex: lex::Lexer<'a>,
    /// Where the last token ended.
    i: usize,
    /// Where the last token started.
    start: usize,
    /// Where the doc comments skipped so far are, when asked for.
    docs: Option<Vec<std::ops::Range<usize>>>,
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `text`, collecting doc comments into `docs` when given.
    fn new(text: &'a str, docs: Option<Vec<std::ops::Range<usize>>>) -> Self {
        Lexer {
            text,
            lex: lex::Lexer::new(text),
            i: 0,
            start: 0,
            docs,
        }
    }

    /// Goes back to `at`, where the last token started or ended.
    fn seek(&mut self, at: usize) {
        self.lex.seek(at);
    }

    fn next_tok(&mut self) -> Option<Tok<'a>> {
        loop {
            let t = self.lex.next()?;
            (self.start, self.i) = (t.start, t.end);
            return Some(match t.kind {
                Kind::Ident => Tok::Ident(&self.text[t.start..t.end]),
                // `r#type`: the raw identifier's name.
                Kind::RawIdent if t.end > t.start + 2 => Tok::Ident(&self.text[t.start + 2..t.end]),
                Kind::Open(b'{') => Tok::Open,
                Kind::Close(b'}') => Tok::Close,
                Kind::Open(c) | Kind::Close(c) | Kind::Punct(c) => Tok::Punct(c),
                // A char literal, or a lifetime or label (its name is not a mention).
                Kind::RawIdent | Kind::Lifetime | Kind::Literal(_) => Tok::Other,
                Kind::LineComment { doc } | Kind::BlockComment { doc } => {
                    if let Some(docs) = self.docs.as_mut().filter(|_| doc) {
                        docs.push(t.start..t.end);
                    }
                    continue;
                }
            });
        }
    }
}

#[cfg(test)]
mod tests;
