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
    let mut s = Scanner::new(text);
    let mut lexer = Lexer::new(text, None);
    while let Some(tok) = lexer.next_tok() {
        s.note_call(tok);
        s.follow_receiver(tok);
        s.follow_signature(tok, lexer.i);
        s.follow_trait_fn(tok);
        if !s.in_attribute(tok) {
            s.item_token(tok);
        }
        s.before = s.prev[0];
        s.prev = [s.prev[1], tok];
    }
    s.out
}

/// The scan's state between two tokens.
struct Scanner<'a> {
    text: &'a str,
    out: FileScan<'a>,
    blocks: Vec<Block<'a>>,
    /// Open blocks that are not module bodies.
    non_mod: usize,
    /// Open blocks under a test attribute.
    test_blocks: usize,
    prev: [Tok<'a>; 2],
    /// The token before `prev` (what comes before an identifier in call position).
    before: Tok<'a>,
    /// An identifier followed by `::` (a turbofish may follow), with its own `before`.
    path_ident: Option<(Tok<'a>, &'a str)>,
    /// An attribute being read (`#[..]`): its bracket depth and its tokens.
    attr: Option<(usize, Vec<Tok<'a>>)>,
    /// The next item is under a test attribute.
    pending_test: bool,
    /// Tokens of an item `impl` header, up to its `{`.
    impl_header: Option<Vec<Tok<'a>>>,
    /// The item keyword whose body the next `{` opens (`mod m`, `trait T`).
    opener: Option<Block<'a>>,
    /// The last function item's signature, until its receiver is known.
    receiver: Option<Receiver>,
    /// A trait's function item, until its body or its `;` (bracket depth): one
    /// without a body is not a function the front end indexes.
    trait_fn: Option<usize>,
    /// The last function item's signature, until its body's `{` or its `;` (bracket
    /// depth); then its body: where it starts and how many blocks are open around it.
    signature: Option<usize>,
    body: Option<(usize, usize)>,
    /// Open parentheses and brackets: an item inside `m!( .. )` is no item to syn.
    parens: usize,
}

impl<'a> Scanner<'a> {
    fn new(text: &'a str) -> Self {
        Scanner {
            text,
            out: FileScan::default(),
            blocks: Vec::new(),
            non_mod: 0,
            test_blocks: 0,
            prev: [Tok::Other, Tok::Other],
            before: Tok::Other,
            path_ident: None,
            attr: None,
            pending_test: false,
            impl_header: None,
            opener: None,
            receiver: None,
            trait_fn: None,
            signature: None,
            body: None,
            parens: 0,
        }
    }

    /// Calls: `name(`, `id::<T>(` (not `fn name(`).
    fn note_call(&mut self, tok: Tok<'a>) {
        match (self.prev, tok) {
            ([p, Tok::Ident(id)], Tok::Punct(b'(')) if p != Tok::Ident("fn") => {
                self.out.called(p, id)
            }
            // `id::` (`before` precedes `id`): a turbofish may follow.
            ([Tok::Ident(id), Tok::Punct(b':')], Tok::Punct(b':')) => {
                self.path_ident = Some((self.before, id))
            }
            ([Tok::Punct(b':'), Tok::Punct(b':')], Tok::Punct(b'<')) => {
                if let Some((p, id)) = self.path_ident.take() {
                    self.out.called(p, id);
                }
            }
            _ => {}
        }
    }

    /// The last function item's generics and parameters, until its receiver is
    /// known: whether its first parameter is `self`.
    fn follow_receiver(&mut self, tok: Tok<'a>) {
        let Some(r) = self.receiver else { return };
        self.receiver = match (r, tok) {
            (Receiver::Generics(d), Tok::Punct(b'<')) => Some(Receiver::Generics(d + 1)),
            // `->` in a bound (`F: Fn() -> u8`) closes nothing.
            (Receiver::Generics(d), Tok::Punct(b'>'))
                if d > 0 && self.prev[1] != Tok::Punct(b'-') =>
            {
                Some(Receiver::Generics(d - 1))
            }
            (Receiver::Generics(0), Tok::Punct(b'(')) => Some(Receiver::Params),
            (Receiver::Generics(d), _) if d > 0 => Some(r),
            (Receiver::Params, Tok::Punct(b'&') | Tok::Other | Tok::Ident("mut")) => Some(r),
            (Receiver::Params, Tok::Ident("self")) => {
                if let Some(f) = self.out.items.last_mut() {
                    f.has_self = true;
                }
                None
            }
            _ => None,
        };
    }

    /// The last function item's signature up to its body's `{` (or `;`), then its
    /// body up to its `}`: the body's range (`i` is the lexer's position after `tok`).
    fn follow_signature(&mut self, tok: Tok<'a>, i: usize) {
        if let Some(depth) = &mut self.signature {
            match tok {
                Tok::Punct(b'(' | b'[') => *depth += 1,
                Tok::Punct(b')' | b']') => *depth = depth.saturating_sub(1),
                Tok::Punct(b';') if *depth == 0 => self.signature = None,
                Tok::Open if *depth == 0 => {
                    self.body = Some((i, self.blocks.len()));
                    self.signature = None;
                }
                _ => {}
            }
        }
        if let (Tok::Close, Some((start, level))) = (tok, self.body) {
            if self.blocks.len() == level + 1 {
                if let Some(f) = self.out.items.last_mut() {
                    f.body = Some(start..i - 1);
                }
                self.body = None;
            }
        }
    }

    /// A trait's function item up to its body or its `;`: one without a body is
    /// dropped from the items.
    fn follow_trait_fn(&mut self, tok: Tok<'a>) {
        if let Some(depth) = &mut self.trait_fn {
            match tok {
                Tok::Punct(b'(' | b'[') => *depth += 1,
                Tok::Punct(b')' | b']') => *depth = depth.saturating_sub(1),
                Tok::Punct(b';') if *depth == 0 => {
                    self.out.items.pop();
                    self.trait_fn = None;
                }
                Tok::Open | Tok::Close => self.trait_fn = None,
                _ => {}
            }
        }
    }

    /// Inside an attribute (`#[..]`): its identifiers are mentioned, and at its
    /// end whether it marks the next item a test. Whether `tok` was in one.
    fn in_attribute(&mut self, tok: Tok<'a>) -> bool {
        let Some((depth, toks)) = &mut self.attr else {
            return false;
        };
        match tok {
            Tok::Punct(b'[') => *depth += 1,
            Tok::Punct(b']') => *depth -= 1,
            Tok::Ident(id) => {
                self.out.idents.insert(id);
            }
            _ => {}
        }
        if *depth == 0 {
            self.pending_test |= is_test_attr(toks);
            self.attr = None;
        } else {
            toks.push(tok);
        }
        true
    }

    /// A token outside attributes: items declared, and the blocks opened and closed.
    fn item_token(&mut self, tok: Tok<'a>) {
        if let Some(h) = &mut self.impl_header {
            if tok != Tok::Open && tok != Tok::Punct(b';') {
                h.push(tok);
            }
        }
        // Items directly in modules (or in an impl or trait block) are indexed.
        // (Counters, not a walk of the stack: a file may nest thousands of braces.)
        let at_item_level = match self.blocks.last() {
            None | Some(Block::Mod { .. }) => self.non_mod == 0,
            Some(Block::Other) => false,
            Some(_) => self.non_mod == 1,
        };
        let in_test = self.test_blocks > 0;
        let prev = self.prev;
        match tok {
            Tok::Punct(b'[') if prev[1] == Tok::Punct(b'#') => self.attr = Some((1, Vec::new())),
            Tok::Punct(b'[') if prev == [Tok::Punct(b'#'), Tok::Punct(b'!')] => {
                self.attr = Some((1, Vec::new()))
            }
            Tok::Ident(id) => self.ident(id, at_item_level, in_test),
            Tok::Open => {
                let block = if let Some(h) = self.impl_header.take() {
                    let (self_type, trait_name) = impl_types(&h);
                    Block::Impl {
                        self_type,
                        trait_name,
                        test: self.pending_test || in_test,
                    }
                } else {
                    self.opener.take().unwrap_or(Block::Other)
                };
                self.non_mod += usize::from(!matches!(block, Block::Mod { .. }));
                self.test_blocks += usize::from(block.is_test());
                self.blocks.push(block);
                self.pending_test = false;
                self.opener = None;
            }
            Tok::Close => {
                if let Some(b) = self.blocks.pop() {
                    self.non_mod -= usize::from(!matches!(b, Block::Mod { .. }));
                    self.test_blocks -= usize::from(b.is_test());
                }
                self.pending_test = false;
                self.opener = None;
                self.impl_header = None;
            }
            // (`;` inside brackets is part of a type: `impl From<X> for [u8; 4]`.)
            Tok::Punct(b';') if self.parens == 0 => {
                self.pending_test = false;
                self.opener = None;
                self.impl_header = None;
            }
            Tok::Punct(b'(' | b'[') => self.parens += 1,
            Tok::Punct(b')' | b']') => self.parens = self.parens.saturating_sub(1),
            _ => {}
        }
    }

    /// An identifier: mentioned; after `fn`, `const`, `static`, a type keyword or
    /// `mod`, the item it names; `impl` at an item's start begins an impl header.
    fn ident(&mut self, id: &'a str, at_item_level: bool, in_test: bool) {
        let prev = self.prev;
        self.out.idents.insert(id);
        let kw = match prev[1] {
            Tok::Ident(kw) => kw,
            _ => "",
        };
        let test = self.pending_test || in_test;
        match kw {
            "fn" => {
                self.out.fns.push(id);
                if at_item_level {
                    self.fn_item(id, test);
                }
            }
            "const" | "static" if id != "fn" && id != "mut" && id != "_" => {
                self.out.consts.push(id)
            }
            "mut" if prev[0] == Tok::Ident("static") => self.out.consts.push(id),
            "struct" | "enum" | "union" | "trait" | "type" if self.non_mod == 0 => {
                self.out.types.push(TypeItem {
                    name: id,
                    is_trait: kw == "trait",
                    test,
                });
                if kw == "trait" {
                    self.opener = Some(Block::Trait { name: id, test });
                }
            }
            "mod" => self.opener = Some(Block::Mod { name: id, test }),
            _ => {}
        }
        let item_start = matches!(
            prev[1],
            Tok::Open | Tok::Close | Tok::Punct(b';') | Tok::Punct(b']') | Tok::Other
        ) || matches!(prev[1], Tok::Ident("unsafe" | "default" | "pub"))
            || prev[1] == Tok::Punct(b')');
        if id == "impl" && item_start && self.impl_header.is_none() && at_item_level {
            self.impl_header = Some(Vec::new());
        }
    }

    /// A function item named `id` at item level: indexed with its impl or trait and
    /// its inline modules; its signature, receiver and body are followed next.
    fn fn_item(&mut self, id: &'a str, test: bool) {
        let (self_type, trait_name) = match self.blocks.last() {
            Some(Block::Impl {
                self_type,
                trait_name,
                ..
            }) => (*self_type, *trait_name),
            Some(Block::Trait { name, .. }) => (Some(*name), Some(*name)),
            _ => (None, None),
        };
        let module = self
            .blocks
            .iter()
            .filter_map(|b| match b {
                Block::Mod { name, .. } => Some(*name),
                _ => None,
            })
            .collect();
        self.out.items.push(FnItem {
            name: id,
            self_type,
            trait_name,
            module,
            has_self: false,
            test,
            at: raw_start(self.text, id),
            body: None,
        });
        if self.parens == 0 {
            self.signature = Some(0);
        }
        self.receiver = Some(Receiver::Generics(0));
        if matches!(self.blocks.last(), Some(Block::Trait { .. })) {
            self.trait_fn = Some(0);
        }
    }
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
    joins: &foldhash::HashSet<String>,
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
