//! The Rust lexer the lexical passes share: the pre-parse guard (`guard.rs`), the
//! prefilter's scan and the blanking of ignored ranges (`scan.rs`), and the
//! suppression comments (`crate::suppress`). It imports nothing of the crate.
//!
//! It knows what the Rust lexer knows about comments (line and nested block
//! comments, doc comments), string, raw string, byte, C string and char literals,
//! lifetimes, raw identifiers and numbers, so that a quote inside a comment or a
//! char literal (`'"'`) cannot hide the code that follows, and yields every token
//! with its byte range. It never fails: an unterminated literal or block comment
//! runs to the end of the text (`closed` is false), any other byte that is not
//! whitespace is punctuation. Bytes from 0x80 up are identifier bytes, so every
//! range starts and ends on a character boundary.
//!
//! Numbers: digits and the identifier bytes after them (`0x1F`, `1e5`, `8u8`),
//! with one fractional part (`1.5`) except after a `.`: there digits are a tuple
//! index, and `m.0.0` is two field accesses (though rustc lexes `0.0` as one
//! float and its parser splits it).

/// One token: what it is and where (`start..end`, byte offsets into the text).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
    /// False for a literal or block comment that the text ends inside.
    pub closed: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An identifier or keyword.
    Ident,
    /// A raw identifier (`r#type`): its name is `start + 2..end`, empty for a
    /// lone `r#`.
    RawIdent,
    /// A lifetime or label (`'a`, `'static`), or a `'` that starts no char literal.
    Lifetime,
    Literal(Lit),
    /// `(`, `[` or `{`.
    Open(u8),
    /// `)`, `]` or `}`.
    Close(u8),
    /// Any other byte outside literals and comments that is not whitespace.
    Punct(u8),
    /// `// ..` up to the line break (not included); `doc`: `///` (not `////`) or `//!`.
    LineComment {
        doc: bool,
    },
    /// `/* .. */`, nested; `doc`: `/** .. */` (not `/***` or `/**/`) or `/*! .. */`.
    BlockComment {
        doc: bool,
    },
}

/// A literal's kind; its prefix (`b`, `c`, `r`, `br`, `cr`) is its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lit {
    /// `".."`, `b".."`, `c".."`.
    Str,
    /// `r".."`, `r#".."#`, `br".."`, `cr#".."#`.
    RawStr,
    /// `'x'`, `'\n'`, `'\u{..}'`, `b'x'`.
    Char,
    Number,
}

/// Whether `b` may be part of an identifier (any byte from 0x80 up is taken for one).
#[inline]
pub fn is_ident_byte(b: u8) -> bool {
    IDENT_BYTES[usize::from(b)]
}

/// [`is_ident_byte`] as a table (the lexer's innermost loop).
static IDENT_BYTES: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80;
        b += 1;
    }
    t
};

/// The tokens of a text, in order, comments included.
#[derive(Clone, Debug)]
pub struct Lexer<'a> {
    b: &'a [u8],
    i: usize,
    /// The last token other than a comment was a `.` (the next digits are a tuple index).
    after_dot: bool,
}

impl<'a> Lexer<'a> {
    pub fn new(text: &'a str) -> Self {
        Lexer {
            b: text.as_bytes(),
            i: 0,
            after_dot: false,
        }
    }

    /// Goes back (or on) to `at`, where a token started or ended, as if the text
    /// began there.
    pub fn seek(&mut self, at: usize) {
        self.i = at;
        self.after_dot = false;
    }
}

impl Iterator for Lexer<'_> {
    type Item = Token;

    /// The next token; `None` at the end of the text. (Inlined into each of its
    /// few callers, so that turning its kinds into theirs costs no second dispatch:
    /// the lexical scan runs on every file of a tree.)
    #[inline(always)]
    fn next(&mut self) -> Option<Token> {
        let s = self.b;
        let mut i = self.i;
        loop {
            let &c = s.get(i)?;
            if matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C) {
                i += 1;
                continue;
            }
            let start = i;
            let mut closed = true;
            let kind = match c {
                b'/' if s.get(i + 1) == Some(&b'/') => {
                    i = s[i..]
                        .iter()
                        .position(|&c| c == b'\n')
                        .map_or(s.len(), |k| i + k);
                    let doc = (s.get(start + 2) == Some(&b'/') && s.get(start + 3) != Some(&b'/'))
                        || s.get(start + 2) == Some(&b'!');
                    self.i = i;
                    return Some(Token {
                        kind: Kind::LineComment { doc },
                        start,
                        end: i,
                        closed,
                    });
                }
                b'/' if s.get(i + 1) == Some(&b'*') => {
                    (i, closed) = block_comment_end(s, i);
                    let doc = match s.get(start + 2) {
                        Some(b'*') => !matches!(s.get(start + 3), Some(b'*' | b'/')),
                        Some(b'!') => true,
                        _ => false,
                    };
                    self.i = i;
                    return Some(Token {
                        kind: Kind::BlockComment { doc },
                        start,
                        end: i,
                        closed,
                    });
                }
                b'"' => {
                    (i, closed) = string_end(s, i);
                    Kind::Literal(Lit::Str)
                }
                b'\'' => {
                    let is_char;
                    (i, is_char) = quote_end(s, i);
                    if is_char {
                        Kind::Literal(Lit::Char)
                    } else {
                        Kind::Lifetime
                    }
                }
                b'0'..=b'9' => {
                    i = ident_end(s, i + 1);
                    if !self.after_dot
                        && s.get(i) == Some(&b'.')
                        && s.get(i + 1).is_some_and(u8::is_ascii_digit)
                    {
                        i = ident_end(s, i + 1);
                    }
                    Kind::Literal(Lit::Number)
                }
                _ if is_ident_byte(c) => {
                    i = ident_end(s, i + 1);
                    let word = &s[start..i];
                    match s.get(i) {
                        Some(b'"' | b'#') if matches!(word, b"r" | b"br" | b"cr") => {
                            let hashes = s[i..].iter().take_while(|&&b| b == b'#').count();
                            if s.get(i + hashes) == Some(&b'"') {
                                (i, closed) = raw_string_end(s, i + hashes + 1, hashes);
                                Kind::Literal(Lit::RawStr)
                            } else if word == b"r" {
                                i = ident_end(s, i + 1);
                                Kind::RawIdent
                            } else {
                                Kind::Ident
                            }
                        }
                        Some(b'"') if matches!(word, b"b" | b"c") => {
                            (i, closed) = string_end(s, i);
                            Kind::Literal(Lit::Str)
                        }
                        Some(b'\'') if word == b"b" => {
                            i = quote_end(s, i).0;
                            Kind::Literal(Lit::Char)
                        }
                        _ => Kind::Ident,
                    }
                }
                b'(' | b'[' | b'{' => {
                    i += 1;
                    Kind::Open(c)
                }
                b')' | b']' | b'}' => {
                    i += 1;
                    Kind::Close(c)
                }
                _ => {
                    i += 1;
                    Kind::Punct(c)
                }
            };
            self.i = i;
            self.after_dot = kind == Kind::Punct(b'.');
            return Some(Token {
                kind,
                start,
                end: i,
                closed,
            });
        }
    }
}

/// Where the identifier bytes from `j` end.
fn ident_end(s: &[u8], mut j: usize) -> usize {
    while j < s.len() && is_ident_byte(s[j]) {
        j += 1;
    }
    j
}

/// Where the block comment starting at `i` (at its `/*`) ends, and whether it is closed.
fn block_comment_end(s: &[u8], mut i: usize) -> (usize, bool) {
    let mut depth = 0usize;
    while i + 1 < s.len() {
        if s[i] == b'/' && s[i + 1] == b'*' {
            depth += 1;
            i += 2;
        } else if s[i] == b'*' && s[i + 1] == b'/' {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return (i, true);
            }
        } else {
            i += 1;
        }
    }
    (s.len(), false)
}

/// Where the string literal whose opening quote is at `i` ends (one past the
/// closing quote), and whether it is closed.
fn string_end(s: &[u8], i: usize) -> (usize, bool) {
    let mut j = i + 1;
    while j < s.len() {
        match s[j] {
            b'\\' => j += 2,
            b'"' => return (j + 1, true),
            _ => j += 1,
        }
    }
    (s.len(), false)
}

/// Where the raw string whose text starts at `from` (after its opening quote),
/// closed by a quote and `hashes` hashes, ends, and whether it is closed.
fn raw_string_end(s: &[u8], from: usize, hashes: usize) -> (usize, bool) {
    let mut j = from;
    while j < s.len() {
        if s[j] == b'"'
            && s[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&b| b == b'#')
                .count()
                == hashes
        {
            return (j + 1 + hashes, true);
        }
        j += 1;
    }
    (s.len(), false)
}

/// Where the char literal or lifetime starting at the `'` at `i` ends, and whether
/// it is a char literal (`'x'`, `'\n'`, `'\u{1F600}'`). A `'` that starts neither
/// (`'\` with no closing quote near) is a token of its own.
fn quote_end(s: &[u8], i: usize) -> (usize, bool) {
    let next = i + 1;
    match s.get(next) {
        Some(b'\\') => {
            let from = next + 2;
            match s[from.min(s.len())..]
                .iter()
                .take(12)
                .position(|&b| b == b'\'')
            {
                Some(k) => (from + k + 1, true),
                None => (next, false),
            }
        }
        Some(&b) => {
            let len = match b {
                0x00..=0x7F => 1,
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                _ => 4,
            };
            if s.get(next + len) == Some(&b'\'') {
                (next + len + 1, true)
            } else {
                (ident_end(s, next), false)
            }
        }
        None => (next, false),
    }
}

/// The text of a string literal (its common escapes undone), `None` for a byte or C
/// string or one left open.
pub fn literal_value(lit: &str, kind: Lit) -> Option<String> {
    match kind {
        Lit::RawStr => {
            let rest = lit.strip_prefix('r')?;
            let (fence, quoted) = rest.split_at(rest.len() - rest.trim_start_matches('#').len());
            let inner = quoted.strip_prefix('"')?.strip_suffix(fence)?;
            Some(inner.strip_suffix('"')?.to_string())
        }
        _ => {
            let inner = lit.strip_prefix('"')?.strip_suffix('"')?;
            let mut out = String::with_capacity(inner.len());
            let mut chars = inner.chars().peekable();
            while let Some(c) = chars.next() {
                if c != '\\' {
                    out.push(c);
                    continue;
                }
                match chars.next() {
                    Some('n' | 't' | 'r') => out.push(' '),
                    // A line continuation: the break and the next line's indent go.
                    Some('\n') => {
                        while chars.peek().is_some_and(|c| c.is_whitespace()) {
                            chars.next();
                        }
                    }
                    Some(other) => out.push(other),
                    None => {}
                }
            }
            Some(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lex(text: &str) -> Vec<(Kind, &str, bool)> {
        let mut out = Vec::new();
        for t in Lexer::new(text) {
            out.push((t.kind, &text[t.start..t.end], t.closed));
        }
        out
    }

    fn kinds(text: &str) -> Vec<(Kind, &str)> {
        lex(text).into_iter().map(|(k, s, _)| (k, s)).collect()
    }

    use Kind::*;

    #[test]
    fn identifiers_punctuation_and_delimiters() {
        assert_eq!(
            kinds("fn r#type(x: &'a é) -> [u8; 2] {}\x0B_"),
            [
                (Ident, "fn"),
                (RawIdent, "r#type"),
                (Open(b'('), "("),
                (Ident, "x"),
                (Punct(b':'), ":"),
                (Punct(b'&'), "&"),
                (Lifetime, "'a"),
                (Ident, "é"),
                (Close(b')'), ")"),
                (Punct(b'-'), "-"),
                (Punct(b'>'), ">"),
                (Open(b'['), "["),
                (Ident, "u8"),
                (Punct(b';'), ";"),
                (Literal(Lit::Number), "2"),
                (Close(b']'), "]"),
                (Open(b'{'), "{"),
                (Close(b'}'), "}"),
                (Ident, "_"),
            ]
        );
        // `br#x` is no raw identifier; `r##x` is a lone `r#`.
        assert_eq!(
            kinds("br#x r##x"),
            [
                (Ident, "br"),
                (Punct(b'#'), "#"),
                (Ident, "x"),
                (RawIdent, "r#"),
                (Punct(b'#'), "#"),
                (Ident, "x"),
            ]
        );
    }

    #[test]
    fn literals_with_their_ranges() {
        let text = r###"".\"" b"x" c"y" r"\" r#"a"b"# br##"#"#"## cr"z" 'x' '\'' '\u{1F600}' 'é' b'\\' '"'"###;
        let got: Vec<&str> = lex(text)
            .iter()
            .map(|&(k, s, closed)| {
                assert!(matches!(k, Literal(_)) && closed, "{s}");
                s
            })
            .collect();
        assert_eq!(
            got,
            [
                "\".\\\"\"",
                "b\"x\"",
                "c\"y\"",
                "r\"\\\"",
                "r#\"a\"b\"#",
                "br##\"#\"#\"##",
                "cr\"z\"",
                "'x'",
                "'\\''",
                "'\\u{1F600}'",
                "'é'",
                "b'\\\\'",
                "'\"'"
            ]
        );
        assert_eq!(
            kinds("'static 'a: loop"),
            [
                (Lifetime, "'static"),
                (Lifetime, "'a"),
                (Punct(b':'), ":"),
                (Ident, "loop")
            ]
        );
    }

    #[test]
    fn numbers_and_tuple_indices() {
        let num = Literal(Lit::Number);
        assert_eq!(
            kinds("1.5 m.0.0 0x1F 1e5 2..3 1.max"),
            [
                (num, "1.5"),
                (Ident, "m"),
                (Punct(b'.'), "."),
                (num, "0"),
                (Punct(b'.'), "."),
                (num, "0"),
                (num, "0x1F"),
                (num, "1e5"),
                (num, "2"),
                (Punct(b'.'), "."),
                (Punct(b'.'), "."),
                (num, "3"),
                (num, "1"),
                (Punct(b'.'), "."),
                (Ident, "max"),
            ]
        );
        // A comment between `.` and the digits changes nothing.
        assert_eq!(kinds("x./* */0.1").len(), 6);
    }

    #[test]
    fn comments_and_doc_comments() {
        let text =
            "//! i\n/// o\n//// no\n// x\n/** d */ /**/ /*** no */ /*! i */ /* a /* b */ c */ x";
        let docs: Vec<(bool, &str)> = lex(text)
            .iter()
            .filter_map(|&(k, s, _)| match k {
                LineComment { doc } | BlockComment { doc } => Some((doc, s)),
                _ => None,
            })
            .collect();
        assert_eq!(
            docs,
            [
                (true, "//! i"),
                (true, "/// o"),
                (false, "//// no"),
                (false, "// x"),
                (true, "/** d */"),
                (false, "/**/"),
                (false, "/*** no */"),
                (true, "/*! i */"),
                (false, "/* a /* b */ c */"),
            ]
        );
    }

    #[test]
    fn unterminated_tokens_run_to_the_end() {
        for (text, kind) in [
            ("\"open", Literal(Lit::Str)),
            ("b\"open\\\"", Literal(Lit::Str)),
            ("r#\"open\"", Literal(Lit::RawStr)),
            ("/* a /* b */", BlockComment { doc: false }),
        ] {
            assert_eq!(lex(text), [(kind, text, false)], "{text}");
        }
        // Garbage does not panic and every byte is in some token or whitespace.
        for text in ["'", "'\\", "b'", "é'", "r#", "'\\u{", "/*/", "1.", "\\"] {
            let mut end = 0;
            for t in Lexer::new(text) {
                assert!(t.start >= end && t.end > t.start && t.end <= text.len());
                end = t.end;
            }
            assert_eq!(end, text.trim_end().len(), "{text:?}");
        }
    }
}
