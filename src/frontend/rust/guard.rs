//! The pre-parse scan that keeps syn from overflowing the stack.
//!
//! syn parses recursively, and the syntax tree it builds is dropped, walked and
//! lowered recursively too: a file whose expressions, types or patterns nest deep
//! enough overflows the analysis thread's stack, which aborts the whole process
//! (a stack overflow cannot be caught). Such a file is refused before parsing.
//!
//! The scan reads the tokens of the shared lexer ([`super::lex`]), which knows what
//! the Rust lexer knows about comments, string, raw string, byte and char literals
//! and lifetimes, so that a quote inside a comment or a char literal (`'"'`) cannot
//! hide the code that follows. On its tokens it measures three things:
//!
//! - bracket nesting (`(`, `[`, `{`): more than [`MAX_NESTING`] is refused;
//! - runs of prefix operators and closure bars (`!`, `-`, `*`, `&`, `|`): more than
//!   [`MAX_PREFIX_RUN`] in a row is refused;
//! - *chains*: every level of a syntax tree (a generic argument, an `else if`, a
//!   `?`, a method call, an operand, a `return` or `&mut` prefix) has at least one
//!   token of its own, so the tokens from the start of a statement up to a point,
//!   summed over the enclosing brackets, bound how deep the tree is there. Siblings
//!   do not add up: a `,` goes back to where its list started (after the innermost
//!   `(`, `[`, `{`, `<` or `|`), and `;`, `=>` and a `}` that ends a statement or
//!   item start over. More than [`MAX_CHAIN`] tokens on one such path is refused.
//!
//! The limits sit far above hand-written and generated code, and below what the
//! analysis threads' stack survives in an unoptimized build.

use super::lex::{Kind, Lexer, Token};
use crate::support::lines::line_col;

/// Deepest bracket nesting accepted before parsing; deeper files are refused
/// with an error, since syn recurses and a stack overflow cannot be caught.
pub const MAX_NESTING: usize = 200;
/// Longest run of prefix operators or closure bars accepted.
pub const MAX_PREFIX_RUN: usize = 500;
/// Most tokens accepted on one path into an expression, type or pattern (see the
/// module documentation).
pub const MAX_CHAIN: usize = 1_000;
/// Most tokens accepted in one file, an empty statement (`;` after `;`, `{` or `}`)
/// counting twice. syn allocates a node of 100 to 500 bytes for nearly every token
/// (an empty statement is a 464-byte `Stmt` of its own), and the analysis keeps the
/// trees of a crate's parsed files: at this bound the densest input measured (runs of
/// `{}`, `a;`, call arguments) peaks under 600 MiB, where ten megabytes of `;` took
/// 8.6 GB. Hand-written code averages four to five bytes a token, so this is about
/// 4 MB of ordinary Rust in one file.
pub const MAX_TOKENS: usize = 1_000_000;

/// Why a file is refused: 1-based line and column (in characters) of the token
/// over the limit, and the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub line: u32,
    pub column: u32,
    pub message: String,
}

/// The largest values the scan measured (for tests and calibration).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Measure {
    pub nesting: usize,
    pub prefix_run: usize,
    pub chain: usize,
    /// Tokens, as [`MAX_TOKENS`] counts them.
    pub tokens: usize,
}

/// Refuses `text` when a limit is exceeded; `None` when it may be parsed.
pub fn scan(text: &str) -> Option<Refusal> {
    let limits = Measure {
        nesting: MAX_NESTING,
        prefix_run: MAX_PREFIX_RUN,
        chain: MAX_CHAIN,
        tokens: MAX_TOKENS,
    };
    let (_, over) = run(text, limits);
    let (at, what) = over?;
    let (line, column) = line_col(text, at);
    let message = match what {
        Limit::Nesting => format!("nesting deeper than {MAX_NESTING} levels; file not analyzed"),
        Limit::PrefixRun => {
            format!("more than {MAX_PREFIX_RUN} operators in a row; file not analyzed")
        }
        Limit::Tokens => format!(
            "more than {MAX_TOKENS} tokens (a syntax tree too large to analyze within the \
             memory bound); file not analyzed"
        ),
        Limit::Chain => format!(
            "an expression, type or pattern nested too deeply (more than {MAX_CHAIN} tokens \
             on one path into it); file not analyzed"
        ),
    };
    Some(Refusal {
        line,
        column,
        message,
    })
}

/// The largest nesting, prefix run and chain in `text`, without limits.
pub fn measure(text: &str) -> Measure {
    run(
        text,
        Measure {
            nesting: usize::MAX,
            prefix_run: usize::MAX,
            chain: usize::MAX,
            tokens: usize::MAX,
        },
    )
    .0
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Limit {
    Tokens,
    Nesting,
    PrefixRun,
    Chain,
}

/// What the lexer found at one position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok {
    /// An identifier, keyword, literal or lifetime.
    Word(Word),
    Open(u8),
    Close(u8),
    Punct(u8),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Word {
    /// An identifier that is no keyword, or a literal. Two of them in a row never
    /// belong to one expression, type or pattern: the first ends it (or the parse
    /// fails there), so the second starts over.
    Plain,
    /// `else` and `as`, which let an expression go on after a `}`.
    ElseOrAs,
    /// Any other keyword (strict, reserved or contextual), or a lifetime.
    Keyword,
}

/// Words that may stand next to an identifier or literal inside one expression,
/// type, pattern or item header; generous on purpose (a word missing here could
/// hide a chain, one too many only counts a little more).
fn is_keyword(word: &[u8]) -> bool {
    matches!(
        word,
        b"abstract"
            | b"as"
            | b"async"
            | b"auto"
            | b"await"
            | b"become"
            | b"box"
            | b"break"
            | b"const"
            | b"continue"
            | b"crate"
            | b"default"
            | b"do"
            | b"dyn"
            | b"else"
            | b"enum"
            | b"extern"
            | b"false"
            | b"final"
            | b"fn"
            | b"for"
            | b"gen"
            | b"if"
            | b"impl"
            | b"in"
            | b"let"
            | b"loop"
            | b"macro"
            | b"macro_rules"
            | b"match"
            | b"mod"
            | b"move"
            | b"mut"
            | b"override"
            | b"priv"
            | b"pub"
            | b"raw"
            | b"ref"
            | b"return"
            | b"safe"
            | b"self"
            | b"Self"
            | b"static"
            | b"struct"
            | b"super"
            | b"trait"
            | b"true"
            | b"try"
            | b"type"
            | b"typeof"
            | b"union"
            | b"unsafe"
            | b"unsized"
            | b"use"
            | b"virtual"
            | b"where"
            | b"while"
            | b"yield"
    )
}

/// One open bracket (or the file itself).
struct Frame {
    /// Chain tokens of the enclosing frames, up to and including this bracket.
    base: usize,
    /// Chain tokens since the current statement or list element began.
    seg: usize,
    /// Index into `marks` where this frame's list starts begin.
    marks_from: usize,
    /// This frame's bracket.
    close_of: u8,
    /// The previous token closed a `{}` block: a statement or item may end here.
    after_block: bool,
    /// An attribute's brackets (`#[…]`, `#![…]`): the enclosing frame's `seg` before
    /// its `#`, restored when it closes (attributes are a list, not a nesting).
    attr_of: Option<usize>,
}

/// The scan's token for a lexed one of `s`; `None` for a comment, which counts for
/// nothing.
fn token_of(t: &Token, s: &[u8]) -> Option<Tok> {
    Some(match t.kind {
        Kind::LineComment { .. } | Kind::BlockComment { .. } => return None,
        Kind::Ident => {
            let word = &s[t.start..t.end];
            Tok::Word(if matches!(word, b"else" | b"as") {
                Word::ElseOrAs
            } else if is_keyword(word) {
                Word::Keyword
            } else {
                Word::Plain
            })
        }
        Kind::RawIdent | Kind::Literal(_) => Tok::Word(Word::Plain),
        // A lifetime or label.
        Kind::Lifetime => Tok::Word(Word::Keyword),
        Kind::Open(b) => Tok::Open(b),
        Kind::Close(b) => Tok::Close(b),
        Kind::Punct(b) => Tok::Punct(b),
    })
}

/// A closing bracket (its frame ends), or a separator that ends the current
/// statement or list element (`;`, `,`, `=>`): handled here, and counting in no
/// chain. Whether `tok` (at `start` in `s`) was one.
fn ends_element(
    frames: &mut Vec<Frame>,
    marks: &mut Vec<usize>,
    tok: Tok,
    s: &[u8],
    start: usize,
) -> bool {
    let frame = frames.last_mut().expect("the file's frame is never closed");
    match tok {
        Tok::Close(c) => {
            if frames.len() > 1 {
                let closed = frames.pop().expect("checked");
                marks.truncate(closed.marks_from);
                if let (Some(seg), Some(outer)) = (closed.attr_of, frames.last_mut()) {
                    outer.seg = seg;
                }
                if closed.close_of == b'{' && c == b'}' {
                    if let Some(outer) = frames.last_mut() {
                        outer.after_block = true;
                    }
                }
            }
        }
        Tok::Punct(b';') => {
            frame.seg = 0;
            marks.truncate(frame.marks_from);
        }
        Tok::Punct(b',') => {
            frame.seg = marks[frame.marks_from..].last().copied().unwrap_or(0);
        }
        Tok::Punct(b'>') if start > 0 && s[start - 1] == b'=' => {
            // `=>`: a match arm's body or a macro rule's expansion.
            frame.seg = 0;
            marks.truncate(frame.marks_from);
        }
        _ => return false,
    }
    true
}

/// Runs the scan; stops at the first token over one of `limits`.
fn run(text: &str, limits: Measure) -> (Measure, Option<(usize, Limit)>) {
    let s = text.as_bytes();
    let mut seen = Measure::default();
    let mut frames = vec![Frame {
        base: 0,
        seg: 0,
        marks_from: 0,
        close_of: 0,
        after_block: false,
        attr_of: None,
    }];
    // `seg` of the current frame before the last `#` (an attribute may follow).
    let mut hash_seg: Option<usize> = None;
    // Chain values where the current list elements began (after `<` and `|`).
    let mut marks: Vec<usize> = Vec::new();
    let mut run_len = 0usize;
    let mut prev = Tok::Punct(b';');
    for t in Lexer::new(text) {
        let start = t.start;
        // An unterminated literal or comment: syn refuses the file before parsing it.
        if !t.closed {
            return (seen, None);
        }
        let Some(tok) = token_of(&t, s) else {
            continue;
        };

        seen.tokens += 1;
        if tok == Tok::Punct(b';')
            && matches!(prev, Tok::Punct(b';') | Tok::Open(b'{') | Tok::Close(b'}'))
        {
            seen.tokens += 1;
        }
        if seen.tokens > limits.tokens {
            return (seen, Some((start, Limit::Tokens)));
        }

        // Prefix operators and closure bars in a row (whitespace and comments between).
        if matches!(tok, Tok::Punct(b'!' | b'-' | b'*' | b'&' | b'|')) {
            run_len += 1;
            seen.prefix_run = seen.prefix_run.max(run_len);
            if run_len > limits.prefix_run {
                return (seen, Some((start, Limit::PrefixRun)));
            }
        } else {
            run_len = 0;
        }

        let frame = frames.last_mut().expect("the file's frame is never closed");
        // A `}` followed by a word that cannot continue an expression ended a
        // statement or an item, and so does a plain word after a plain word: the
        // next one starts over.
        let after_block = std::mem::take(&mut frame.after_block);
        let plain_twice = tok == Tok::Word(Word::Plain) && prev == Tok::Word(Word::Plain);
        prev = tok;
        // (A `{` after a block is a block statement of its own: `{}{}`.)
        if plain_twice
            || after_block
                && matches!(
                    tok,
                    Tok::Word(Word::Plain | Word::Keyword) | Tok::Punct(b'#') | Tok::Open(b'{')
                )
        {
            frame.seg = 0;
            marks.truncate(frame.marks_from);
        }
        if ends_element(&mut frames, &mut marks, tok, s, start) {
            continue;
        }
        let frame = frames.last_mut().expect("the file's frame is never closed");
        let attr_of = match tok {
            Tok::Punct(b'#') => {
                hash_seg = Some(frame.seg);
                None
            }
            // `#!`: an inner attribute's `[` follows.
            Tok::Punct(b'!') if hash_seg.is_some() => None,
            Tok::Open(b'[') => hash_seg.take(),
            _ => {
                hash_seg = None;
                None
            }
        };
        frame.seg += 1;
        let chain = frame.base + frame.seg;
        seen.chain = seen.chain.max(chain);
        if chain > limits.chain {
            return (seen, Some((start, Limit::Chain)));
        }
        match tok {
            Tok::Open(o) => {
                let close_of = o;
                frames.push(Frame {
                    base: chain,
                    seg: 0,
                    marks_from: marks.len(),
                    close_of,
                    after_block: false,
                    attr_of,
                });
                let nesting = frames.len() - 1;
                seen.nesting = seen.nesting.max(nesting);
                if nesting > limits.nesting {
                    return (seen, Some((start, Limit::Nesting)));
                }
            }
            Tok::Punct(b'<' | b'|') => marks.push(frame.seg),
            // Ends the innermost list (`->` and `>=` do not). A `>` in valid code
            // closes a `<`, or follows a closure's parameters: the next `,` is in a
            // later list, which pushes its own start first.
            Tok::Punct(b'>')
                if !(start > 0 && s[start - 1] == b'-')
                    && s.get(start + 1) != Some(&b'=')
                    && marks.len() > frame.marks_from =>
            {
                marks.pop();
            }
            _ => {}
        }
    }
    (seen, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(text: &str) -> usize {
        measure(text).chain
    }

    #[test]
    fn deep_brackets_are_refused_with_their_position() {
        let text = format!("fn f() {{\n  let x = {}1; }}", "(".repeat(1000));
        let r = scan(&text).unwrap();
        assert_eq!(r.line, 2);
        // `{` of the function, then 200 parentheses: the 200th is over the limit.
        assert_eq!(r.column, 11 + 199);
        assert_eq!(
            r.message,
            "nesting deeper than 200 levels; file not analyzed"
        );
    }

    #[test]
    fn prefix_runs_are_refused_and_comments_do_not_break_them() {
        let r = scan(&format!("fn f() {{ {}x }}", "!".repeat(501))).unwrap();
        assert!(r.message.starts_with("more than 500 operators"));
        assert!(scan(&format!("fn f() {{ {}x }}", "!".repeat(500))).is_none());
        let r = scan(&format!("fn f() {{ {}x }}", "! /* */ ".repeat(501))).unwrap();
        assert!(r.message.starts_with("more than 500 operators"));
        // Operators inside comments and strings are not code.
        assert!(scan(&format!("// {}\nfn f() {{}}", "-".repeat(2000))).is_none());
        assert!(scan(&format!("const S: &str = \"{}\";", "*".repeat(2000))).is_none());
    }

    #[test]
    fn quotes_in_comments_char_literals_and_raw_strings_hide_no_code() {
        let deep = format!("{}1{}", "(".repeat(300), ")".repeat(300));
        for prefix in [
            "let q = '\"';",
            "// \"\n",
            "/* \" /* nested \" */ \" */",
            "let q = r\"\\\";",
            "let q = r#\"\"\\\"#;",
            "let q = br\"\\\";",
            "let q = b'\"';",
            "let q = '\\'';",
            "let q = \"\\\\\";",
            "let r#match = 1;",
        ] {
            let text = format!("fn f() {{ {prefix} let x = {deep}; }}");
            let r = scan(&text).unwrap_or_else(|| panic!("not refused after {prefix:?}"));
            assert!(r.message.starts_with("nesting deeper"), "{prefix:?}");
        }
        // Brackets inside literals and comments do not count.
        let text = format!(
            "const S: &str = \"{}\"; // {}",
            "(".repeat(300),
            "[".repeat(300)
        );
        assert_eq!(measure(&text).nesting, 0);
        let text = format!("const S: &str = r#\"{}\"#;", "(\"".repeat(300));
        assert_eq!(measure(&text).nesting, 0);
        // Lifetimes are not char literals.
        let text = format!("fn f<'a>(x: &'a u8) {{ let x = {deep}; }}");
        assert!(scan(&text).is_some());
    }

    #[test]
    fn chains_without_brackets_are_refused() {
        let cases = [
            format!("type T = {}u8{};", "Vec<".repeat(600), ">".repeat(600)),
            format!(
                "type T = {}u8{};",
                "HashMap<K, ".repeat(600),
                ">".repeat(600)
            ),
            format!("type T = {}u8;", "*const ".repeat(600)),
            format!(
                "type T = {}u8{};",
                "<".repeat(1100),
                " as A>::B".repeat(1100)
            ),
            format!("fn f() {{ let x = {}1; }}", "&mut ".repeat(600)),
            format!("fn f() {{ let x = y{}; }}", "?".repeat(1100)),
            format!("fn f() {{ let x = y{}; }}", ".a()".repeat(600)),
            format!("fn f() {{ let x = {}1; }}", "1 + ".repeat(600)),
            format!("fn f() {{ if a {{}} {} }}", "else if a {} ".repeat(300)),
            format!("fn f() {{ let x = {}1; }}", "return ".repeat(1100)),
            format!("fn f() {{ let x = {}1; }}", "move |a, b| ".repeat(300)),
            format!("fn f() {{ let x = {}1; }}", "!{x} + ".repeat(600)),
            format!("fn f() {{ let x = {}1; }}", "break 'a x + ".repeat(300)),
            format!("fn f() {{ let x = {}1; }}", "x as u8 + ".repeat(300)),
        ];
        for text in &cases {
            let r = scan(text).unwrap_or_else(|| panic!("not refused: {}", &text[..40]));
            assert!(
                r.message
                    .starts_with("an expression, type or pattern nested too deeply"),
                "{}",
                r.message
            );
        }
    }

    #[test]
    fn siblings_and_statements_do_not_add_up() {
        let many = |item: &str, n: usize| item.repeat(n);
        // Statements, items, list elements and match arms start over.
        assert!(
            chain(&format!(
                "fn f() {{ {} }}",
                many("let x = a.b(c) + 1; ", 5000)
            )) < 20
        );
        assert!(chain(&many("fn f() {} ", 5000)) < 20);
        assert!(chain(&many("#[test] fn f() { g(); } ", 5000)) < 20);
        assert!(chain(&format!("const A: [u8; 5000] = [{}];", many("1, ", 5000))) < 20);
        assert!(chain(&format!("fn f() {{ g({}) }}", many("a + b, ", 5000))) < 20);
        assert!(
            chain(&format!(
                "fn f() {{ match x {{ {} }} }}",
                many("A | B => {} ", 5000)
            )) < 20
        );
        assert!(
            chain(&format!(
                "fn f() {{ match x {{ {} }} }}",
                many("A(x) if x > 1 => g(x), ", 5000)
            )) < 20
        );
        assert!(chain(&format!("type T = HashMap<{}u8>;", many("Vec<u8>, ", 5000))) < 20);
        assert!(chain(&format!("fn f() {{ {} }}", many("if a { b(); } ", 5000))) < 20);
        assert!(
            chain(&format!(
                "fn f() {{ {} }}",
                many("for x in y { b(); } ", 5000)
            )) < 20
        );
        // A closure's parameters are siblings too.
        assert!(chain("let f = |a, b, c, d, e, f, g| a;") < 10);
        // The chain is the sum over the enclosing brackets.
        assert_eq!(chain("a + (c + [e + f])"), 9);
        assert_eq!(chain("a + b; c"), 3);
        assert_eq!(chain("x = {} y + z"), 3);
        assert_eq!(chain("x = {} else y"), 5);
        // Two plain words in a row: a macro's own syntax, or a parse error.
        assert_eq!(chain("m! { 0 Black (0, 0, 0) 1 Maroon (128, 0, 0) }"), 6);
        assert!(chain(&format!("m! {{ {} }}", many("0 Black (0, 0, 0) ", 5000))) < 10);
        assert_eq!(chain("break 'a x"), 3);
        assert_eq!(chain("x as u8"), 3);
        assert_eq!(chain("let r#x = y"), 4);
    }

    #[test]
    fn real_code_is_far_below_the_limits() {
        for path in [
            "src/frontend/rust/lower.rs",
            "src/analysis/flow.rs",
            "src/config.rs",
        ] {
            let text = std::fs::read_to_string(path).unwrap();
            let m = measure(&text);
            assert!(
                m.nesting < 40 && m.prefix_run < 5 && m.chain < 200,
                "{path}: {m:?}"
            );
            assert!(scan(&text).is_none());
        }
    }
}
