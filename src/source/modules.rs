//! Which files of a crate its targets declare (docs/what-is-analyzed.md: a crate is
//! a Cargo target "with the modules they declare"). From each target's root file,
//! `mod name;` declarations are followed to `name.rs` or `name/mod.rs` (in the
//! directory of a `mod.rs` or root file, in `stem/` beside any other file, inside
//! the directories of inline `mod a { .. }` blocks), `#[path = ".."]` to the path it
//! names and `include!("..")` to the file it pastes in. A file of the crate that
//! none of these reach is not part of it: a module commented out
//! (`// pub mod azure_adapter;`) or left behind is analyzed as a crate by itself,
//! so its types never stand in for the crate's own.
//!
//! The scan is lexical and generous: comments, strings and character literals are
//! skipped, but declarations are taken wherever they are written, inside macro
//! bodies (`cfg_if!`) and `#[cfg]`-gated items included. A crate whose root file
//! is not among the files read keeps all its files.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

/// A token of Rust text, as far as declarations need: identifiers, string
/// literals (their raw text between the quotes) and single punctuation bytes.
#[derive(Debug, PartialEq, Eq)]
enum Tok<'a> {
    Ident(&'a str),
    Str(&'a str),
    Punct(u8),
}

/// Splits Rust text into [`Tok`]s, skipping whitespace, comments, character
/// literals, lifetimes and numbers. Never fails: an unterminated comment or
/// string ends the text.
struct Lexer<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Lexer<'a> {
    fn new(text: &'a str) -> Self {
        Lexer { text, at: 0 }
    }

    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    fn peek(&self, ahead: usize) -> Option<u8> {
        self.bytes().get(self.at + ahead).copied()
    }

    /// Skips a (nested) block comment starting at `self.at`.
    fn block_comment(&mut self) {
        let b = self.bytes();
        let mut depth = 0usize;
        while self.at < b.len() {
            if b[self.at] == b'/' && self.peek(1) == Some(b'*') {
                depth += 1;
                self.at += 2;
            } else if b[self.at] == b'*' && self.peek(1) == Some(b'/') {
                depth -= 1;
                self.at += 2;
                if depth == 0 {
                    return;
                }
            } else {
                self.at += 1;
            }
        }
    }

    /// A quoted string whose opening `"` is at `self.at`; `raw` is the number of
    /// `#` of a raw string (`None`: escapes apply).
    fn string(&mut self, raw: Option<usize>) -> &'a str {
        let b = self.bytes();
        self.at += 1;
        let start = self.at;
        while self.at < b.len() {
            match (b[self.at], raw) {
                (b'\\', None) => self.at += 2,
                (b'"', None) => {
                    self.at += 1;
                    return &self.text[start..self.at - 1];
                }
                (b'"', Some(n))
                    if b[self.at + 1..]
                        .iter()
                        .take(n)
                        .filter(|&&c| c == b'#')
                        .count()
                        == n =>
                {
                    let end = self.at;
                    self.at += 1 + n;
                    return &self.text[start..end];
                }
                _ => self.at += 1,
            }
        }
        self.at = b.len();
        self.text.get(start..).unwrap_or("")
    }

    /// A character literal or a lifetime whose `'` is at `self.at`.
    fn quote(&mut self) {
        let b = self.bytes();
        if self.peek(1) == Some(b'\\') {
            // An escaped character: up to the closing quote.
            self.at += 2;
            while self.at < b.len() && b[self.at] != b'\'' && b[self.at] != b'\n' {
                self.at += 1;
            }
            self.at += 1;
            return;
        }
        let Some(c) = self.text.get(self.at + 1..).and_then(|s| s.chars().next()) else {
            self.at = b.len();
            return;
        };
        let after = self.at + 1 + c.len_utf8();
        self.at = if b.get(after) == Some(&b'\'') {
            after + 1
        } else {
            // A lifetime or a label: its name is read as an identifier next.
            self.at + 1
        };
    }

    fn ident(&mut self) -> &'a str {
        let b = self.bytes();
        let start = self.at;
        while self.at < b.len()
            && (b[self.at].is_ascii_alphanumeric() || b[self.at] == b'_' || b[self.at] >= 0x80)
        {
            // Non-ASCII identifier characters are taken byte by byte: the
            // boundaries are whole characters because ASCII bytes end them.
            self.at += 1;
        }
        &self.text[start..self.at]
    }
}

impl<'a> Iterator for Lexer<'a> {
    type Item = Tok<'a>;

    fn next(&mut self) -> Option<Tok<'a>> {
        loop {
            let b = self.bytes();
            let c = *b.get(self.at)?;
            match c {
                b'/' if self.peek(1) == Some(b'/') => {
                    while self.at < b.len() && b[self.at] != b'\n' {
                        self.at += 1;
                    }
                }
                b'/' if self.peek(1) == Some(b'*') => self.block_comment(),
                b'"' => return Some(Tok::Str(self.string(None))),
                b'\'' => self.quote(),
                c if c.is_ascii_whitespace() => self.at += 1,
                c if c.is_ascii_digit() => {
                    while self.at < b.len()
                        && (b[self.at].is_ascii_alphanumeric() || b[self.at] == b'_')
                    {
                        self.at += 1;
                    }
                }
                c if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => {
                    // Raw strings and byte/C strings: `r#".."#`, `br".."`, `b".."`, `c".."`.
                    let prefix_len = match (c, self.peek(1), self.peek(2)) {
                        (b'r', Some(b'"' | b'#'), _) => Some(1),
                        (b'b' | b'c', Some(b'r'), Some(b'"' | b'#')) => Some(2),
                        (b'b' | b'c', Some(b'"'), _) => {
                            self.at += 1;
                            return Some(Tok::Str(self.string(None)));
                        }
                        _ => None,
                    };
                    if let Some(p) = prefix_len {
                        let hashes = b[self.at + p..].iter().take_while(|&&h| h == b'#').count();
                        if b.get(self.at + p + hashes) == Some(&b'"') {
                            self.at += p + hashes;
                            return Some(Tok::Str(self.string(Some(hashes))));
                        }
                        if c == b'r' && hashes == 1 {
                            // A raw identifier (`r#type`).
                            self.at += 2;
                            return Some(Tok::Ident(self.ident()));
                        }
                    }
                    return Some(Tok::Ident(self.ident()));
                }
                _ => {
                    self.at += 1;
                    return Some(Tok::Punct(c));
                }
            }
        }
    }
}

/// A file a Rust file points at: `mod name;` inside the inline modules `inline`, or
/// a `#[path]` / `include!` path as written.
#[derive(Debug, PartialEq, Eq)]
enum Decl {
    Mod {
        inline: Vec<String>,
        name: String,
        path: Option<String>,
    },
    Include(String),
}

/// The declarations of a Rust file's text, in order.
fn declarations(text: &str) -> Vec<Decl> {
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum State<'a> {
        Idle,
        Mod,
        ModName(&'a str),
        Hash,
        HashBracket,
        PathKey,
        PathEq,
        PathStr(&'a str),
        Include,
        IncludeBang,
        IncludeParen,
    }
    let mut out = Vec::new();
    // Inline modules open around the current token: (name, brace depth inside it).
    let mut inline: Vec<(&str, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut pending_path: Option<&str> = None;
    let mut state = State::Idle;
    for tok in Lexer::new(text) {
        let next = match (state, &tok) {
            (State::Mod, Tok::Ident(n)) => Some(State::ModName(n)),
            (State::ModName(n), Tok::Punct(b';')) => {
                out.push(Decl::Mod {
                    inline: inline.iter().map(|(m, _)| m.to_string()).collect(),
                    name: n.strip_prefix("r#").unwrap_or(n).to_string(),
                    path: pending_path.take().map(str::to_string),
                });
                Some(State::Idle)
            }
            (State::ModName(n), Tok::Punct(b'{')) => {
                depth += 1;
                inline.push((n, depth));
                pending_path = None;
                Some(State::Idle)
            }
            (State::Hash, Tok::Punct(b'[')) => Some(State::HashBracket),
            (State::HashBracket, Tok::Ident("path")) => Some(State::PathKey),
            (State::PathKey, Tok::Punct(b'=')) => Some(State::PathEq),
            (State::PathEq, Tok::Str(s)) => Some(State::PathStr(s)),
            (State::PathStr(s), Tok::Punct(b']')) => {
                pending_path = Some(s);
                Some(State::Idle)
            }
            (State::Include, Tok::Punct(b'!')) => Some(State::IncludeBang),
            (State::IncludeBang, Tok::Punct(b'(' | b'{' | b'[')) => Some(State::IncludeParen),
            (State::IncludeParen, Tok::Str(s)) => {
                out.push(Decl::Include(s.to_string()));
                Some(State::Idle)
            }
            _ => None,
        };
        if let Some(s) = next {
            state = s;
            continue;
        }
        state = match tok {
            Tok::Ident("mod") => State::Mod,
            Tok::Ident("include") => State::Include,
            Tok::Punct(b'#') => State::Hash,
            Tok::Punct(b'{') => {
                depth += 1;
                State::Idle
            }
            Tok::Punct(b'}') => {
                if inline.last().is_some_and(|&(_, d)| d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
                State::Idle
            }
            Tok::Punct(b';') => {
                pending_path = None;
                State::Idle
            }
            _ => State::Idle,
        };
    }
    out
}

/// `p` with `.` and `..` components resolved lexically.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Which of `files` (real paths and texts of one crate's Rust files) the crate's
/// `roots` reach through their declarations; `None` when no root is among them
/// (then the crate keeps all its files).
pub(super) fn reached(files: &[(&Path, &str)], roots: &HashSet<PathBuf>) -> Option<Vec<bool>> {
    let index: HashMap<PathBuf, usize> = files
        .iter()
        .enumerate()
        .map(|(i, (p, _))| (normalize(p), i))
        .collect();
    let mut seen = vec![false; files.len()];
    let mut queue: Vec<(usize, bool)> = Vec::new();
    for (i, (p, _)) in files.iter().enumerate() {
        if roots.contains(&normalize(p)) {
            seen[i] = true;
            queue.push((i, true));
        }
    }
    if queue.is_empty() {
        return None;
    }
    while let Some((i, root)) = queue.pop() {
        let (path, text) = files[i];
        let dir = path.parent().unwrap_or(Path::new(""));
        let mod_rs = root || path.file_name().is_some_and(|n| n == "mod.rs");
        // Where this file's `mod name;` look for `name.rs`.
        let mod_dir = match (mod_rs, path.file_stem()) {
            (false, Some(stem)) => dir.join(stem),
            _ => dir.to_path_buf(),
        };
        let mut visit = |candidate: PathBuf, is_root: bool| {
            if let Some(&j) = index.get(&normalize(&candidate)) {
                if !seen[j] {
                    seen[j] = true;
                    queue.push((j, is_root));
                }
            }
        };
        for decl in declarations(text) {
            match decl {
                Decl::Include(p) => visit(dir.join(p), false),
                Decl::Mod { inline, name, path } => {
                    let mut base = mod_dir.clone();
                    base.extend(&inline);
                    match path {
                        // Relative to this file's directory; inside inline modules
                        // rustc's rule depends on the edition: take both.
                        Some(p) => {
                            if !inline.is_empty() {
                                visit(base.join(&p), false);
                            }
                            visit(dir.join(&p), false);
                        }
                        None => {
                            visit(base.join(format!("{name}.rs")), false);
                            visit(base.join(&name).join("mod.rs"), false);
                        }
                    }
                }
            }
        }
    }
    Some(seen)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mods(text: &str) -> Vec<String> {
        declarations(text)
            .into_iter()
            .map(|d| match d {
                Decl::Mod { inline, name, path } => {
                    let mut s = inline.join("::");
                    if !s.is_empty() {
                        s.push_str("::");
                    }
                    s.push_str(&name);
                    if let Some(p) = path {
                        s.push_str(&format!(" @{p}"));
                    }
                    s
                }
                Decl::Include(p) => format!("include {p}"),
            })
            .collect()
    }

    #[test]
    fn declarations_skip_comments_strings_and_inline_bodies() {
        let text = r##"
            // pub mod commented;
            /* mod blocked; /* nested */ mod still_blocked; */
            pub mod a;
            pub(crate) mod b;
            #[cfg(test)] mod tests;
            mod inline { mod inner; fn f() { let s = "mod in_string;"; } }
            mod after;
            const R: &str = r#"mod in_raw; "quoted" "#;
            fn g<'a>(x: &'a str) -> char { let _ = b"mod bytes;"; '"' }
            mod r#type;
            #[path = "other/place.rs"]
            pub mod placed;
            cfg_if::cfg_if! { if #[cfg(unix)] { mod unix; } else { mod windows; } }
            include!("generated.rs");
            mod inline2 { #[path = "x.rs"] mod y; }
        "##;
        assert_eq!(
            mods(text),
            [
                "a",
                "b",
                "tests",
                "inline::inner",
                "after",
                "type",
                "placed @other/place.rs",
                "unix",
                "windows",
                "include generated.rs",
                "inline2::y @x.rs",
            ]
        );
    }

    #[test]
    fn declarations_survive_unterminated_input() {
        assert_eq!(mods("mod a; /* mod b;"), ["a"]);
        assert_eq!(mods("mod a; \"mod b;"), ["a"]);
        assert_eq!(mods("mod a; '"), ["a"]);
        assert_eq!(mods("mod a; r#\"mod b;"), ["a"]);
        assert!(mods("}}}} mod").is_empty());
    }

    #[test]
    fn reached_follows_cargo_module_layout() {
        let p = |s: &str| PathBuf::from(format!("/p/{s}"));
        let files = [
            (
                p("src/lib.rs"),
                "mod workers; mod util { mod deep; } #[path = \"gen/api.rs\"] mod api;",
            ),
            (p("src/workers/mod.rs"), "pub mod aws;\n// pub mod azure;\n"),
            (p("src/workers/aws.rs"), "mod receivers;"),
            (p("src/workers/aws/receivers.rs"), ""),
            (p("src/workers/azure/mod.rs"), "mod receivers;"),
            (p("src/workers/azure/receivers.rs"), ""),
            (p("src/util/deep.rs"), ""),
            (p("src/gen/api.rs"), "include!(\"../pasted.rs\");"),
            (p("src/pasted.rs"), ""),
            (p("src/main.rs"), "mod cli;"),
            (p("src/cli.rs"), ""),
            (p("src/stray.rs"), ""),
        ];
        let refs: Vec<(&Path, &str)> = files.iter().map(|(a, b)| (a.as_path(), *b)).collect();
        let roots: HashSet<PathBuf> = [p("src/lib.rs"), p("src/main.rs")].into();
        let seen = reached(&refs, &roots).unwrap();
        let orphans: Vec<&str> = files
            .iter()
            .zip(&seen)
            .filter(|(_, s)| !**s)
            .map(|((f, _), _)| f.to_str().unwrap())
            .collect();
        assert_eq!(
            orphans,
            [
                "/p/src/workers/azure/mod.rs",
                "/p/src/workers/azure/receivers.rs",
                "/p/src/stray.rs"
            ]
        );
        let none: HashSet<PathBuf> = [p("src/elsewhere.rs")].into();
        assert!(reached(&refs, &none).is_none());
    }
}
