//! Escaping of what the output quotes from the analyzed tree: identifiers, call
//! texts, SQL names, string values, file names and source lines. Findings keep the
//! text as written; each emitter escapes it for the program that reads its output,
//! with one function per kind of output:
//!
//! - [`text`]: plain-text lines (`short`, `human`, the parts of a `github`
//!   annotation, rustc-json's `rendered`): no character of the analyzed text can
//!   start a new line, move the cursor or change the terminal's state.
//! - [`snippet`]: source lines that `human` draws under a finding: one visible
//!   character for each character replaced, so that underlines stay aligned.
//! - [`markdown`] and [`markdown_code`]: the review checklist, pasted into pull
//!   requests: analyzed text renders as itself and never as Markdown structure.
//! - [`uri_path`]: a path in a URI reference (SARIF `uri`, checklist links).
//!
//! JSON and SARIF are escaped by serde; the GitHub workflow-command encoding
//! (`%0A`, ...) is applied by `github.rs` after [`text`].

use std::borrow::Cow;
use std::fmt::Write as _;

/// Characters that must not reach a line-oriented output as they are: C0 and C1
/// controls (newlines, carriage returns, escape sequences), Unicode line and
/// paragraph separators, and the bidirectional controls that reorder how a line
/// reads ("Trojan Source").
fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}'
                | '\u{2029}'
                | '\u{061C}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
        )
}

/// Plain text on one line: `\n`, `\r` and `\t` as those two characters, other
/// ASCII controls as `\xNN`, other unsafe characters (C1 controls, line and
/// paragraph separators, bidirectional controls) as `\u{NNNN}`. A backslash is
/// left as it is, as in printed paths.
pub fn text(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_ascii_control() => {
                let _ = write!(out, "\\x{:02X}", c as u32);
            }
            c if is_unsafe(c) => {
                let _ = write!(out, "\\u{{{:X}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A source text for drawing lines of it: each unsafe character except a tab, a
/// newline and the `\r` of a `\r\n` is replaced by one visible character (its
/// Unicode control picture, `␛` for ESC, `␍` for a lone carriage return; `�`
/// for the others), so that lines and character columns stay where they are.
pub fn snippet(s: &str) -> Cow<'_, str> {
    let keep = |c: char, next: Option<char>| {
        !is_unsafe(c) || c == '\t' || c == '\n' || (c == '\r' && next == Some('\n'))
    };
    let mut it = s.chars().peekable();
    let mut clean = true;
    while let Some(c) = it.next() {
        if !keep(c, it.peek().copied()) {
            clean = false;
            break;
        }
    }
    if clean {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if keep(c, it.peek().copied()) {
            out.push(c);
        } else if (c as u32) < 0x20 {
            out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{FFFD}'));
        } else if c == '\u{7F}' {
            out.push('\u{2421}');
        } else {
            out.push('\u{FFFD}');
        }
    }
    Cow::Owned(out)
}

/// Characters that Markdown (CommonMark with GitHub's extensions) may read as
/// syntax in the middle of a line: escapes, emphasis and strikethrough, links
/// (and so images: `!` needs a `[`), raw HTML and autolinks, entity references,
/// tables, math.
fn is_markdown_special(c: char) -> bool {
    matches!(
        c,
        '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '&' | '~' | '$' | '|' | '@'
    )
}

/// Text in a Markdown paragraph, as msgaudit writes messages: words with code in
/// backticks (`` `tx.commit()` ``). Unsafe characters are escaped as by [`text`],
/// so nothing starts a new line (a list item, a heading); each backtick code span
/// that CommonMark would recognize is kept as it is (its content renders
/// literally); everything else that Markdown could read as syntax, unmatched
/// backticks included, is backslash-escaped. The result renders as the text
/// itself, whatever the analyzed code put into it.
pub fn markdown(s: &str) -> String {
    let s = text(s);
    let chars: Vec<char> = s.chars().collect();
    let run_at = |i: usize| chars[i..].iter().take_while(|&&c| c == '`').count();
    let mut out = String::with_capacity(s.len() + 8);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '`' {
            let n = run_at(i);
            // The closing run: the next run of exactly `n` backticks.
            let mut j = i + n;
            let mut close = None;
            while j < chars.len() {
                if chars[j] == '`' {
                    let m = run_at(j);
                    if m == n {
                        close = Some(j);
                        break;
                    }
                    j += m;
                } else {
                    j += 1;
                }
            }
            match close {
                Some(j) => {
                    out.extend(&chars[i..j + n]);
                    i = j + n;
                }
                None => {
                    for _ in 0..n {
                        out.push_str("\\`");
                    }
                    i += n;
                }
            }
            continue;
        }
        // An underscore between two letters or digits never delimits emphasis
        // (CommonMark's flanking rules): `a_b` stays as it is.
        let intraword = c == '_'
            && i > 0
            && chars[i - 1].is_alphanumeric()
            && chars.get(i + 1).is_some_and(|n| n.is_alphanumeric());
        if is_markdown_special(c) && !intraword {
            out.push('\\');
        }
        out.push(c);
        i += 1;
    }
    out
}

/// `code` as one Markdown code span that renders exactly as `code` (after [`text`]
/// escaping): the fence is one backtick longer than the longest run of backticks
/// inside, with a space inside each end when CommonMark would otherwise read
/// the ends differently.
pub fn markdown_code(code: &str) -> String {
    let code = text(code);
    let mut longest = 0;
    let mut run = 0;
    for c in code.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat(longest + 1);
    let pad = code.starts_with('`')
        || code.ends_with('`')
        || (code.starts_with(' ') && code.ends_with(' ') && !code.trim().is_empty())
        || code.is_empty();
    if pad {
        format!("{fence} {code} {fence}")
    } else {
        format!("{fence}{code}{fence}")
    }
}

/// A path as the path of a URI reference (RFC 3986): `/` stays the separator, and
/// every byte outside the unreserved set (`A-Z a-z 0-9 - . _ ~`) is
/// percent-encoded, so that a segment never holds a reserved or unsafe character
/// (`\`, `:`, `#`, `?`, `%`, a space, ...) as itself. `keep_colon_at` keeps the
/// colon of a Windows drive (`C:`), which SARIF's `file:///C:/x` needs.
///
/// A display path that escapes bytes (`tab\x09x.rs`) is encoded from the path's own
/// bytes (`tab%09x.rs`), as [`with_raw_paths`] gives them.
pub fn uri_path(path: &str, keep_colon_at: Option<usize>) -> String {
    RAW_PATHS.with(|raw| match raw.borrow().get(path) {
        Some(bytes) => uri_bytes(bytes, keep_colon_at),
        None => uri_bytes(path.as_bytes(), keep_colon_at),
    })
}

thread_local! {
    /// The `Report::raw_paths` of the rendering under way ([`with_raw_paths`]).
    static RAW_PATHS: std::cell::RefCell<std::collections::BTreeMap<String, Vec<u8>>> =
        const { std::cell::RefCell::new(std::collections::BTreeMap::new()) };
}

/// Runs `render` with `raw` (display path -> the path's bytes) used by [`uri_path`].
pub fn with_raw_paths<T>(
    raw: &std::collections::BTreeMap<String, Vec<u8>>,
    render: impl FnOnce() -> T,
) -> T {
    let before = RAW_PATHS.with(|r| std::mem::replace(&mut *r.borrow_mut(), raw.clone()));
    let out = render();
    RAW_PATHS.with(|r| *r.borrow_mut() = before);
    out
}

/// [`uri_path`] of a path's bytes.
fn uri_bytes(path: &[u8], keep_colon_at: Option<usize>) -> String {
    let mut out = String::with_capacity(path.len());
    for (i, &b) in path.iter().enumerate() {
        let keep = b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/')
            || (b == b':' && keep_colon_at == Some(i));
        if keep {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_keeps_one_line() {
        assert_eq!(text("plain `a.b()` \\ é"), "plain `a.b()` \\ é");
        assert!(matches!(text("plain"), Cow::Borrowed(_)));
        assert_eq!(
            text("a\nb\r\nc\td\u{1b}[31m\u{0}\u{7f}"),
            "a\\nb\\r\\nc\\td\\x1B[31m\\x00\\x7F"
        );
        assert_eq!(
            text("x\u{85}y\u{2028}z\u{202E}w"),
            "x\\u{85}y\\u{2028}z\\u{202E}w"
        );
    }

    #[test]
    fn snippet_replaces_one_character_by_one() {
        let s = "a\u{1b}b\rc\r\nd\te\u{202E}f\n";
        let out = snippet(s);
        assert_eq!(out, "a\u{241B}b\u{240D}c\r\nd\te\u{FFFD}f\n");
        assert_eq!(out.chars().count(), s.chars().count());
        assert!(matches!(snippet("a\r\n\tb\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn markdown_keeps_code_spans_and_escapes_the_rest() {
        assert_eq!(
            markdown("the INSERT into `orders` by *x*"),
            "the INSERT into `orders` by \\*x\\*"
        );
        // An unmatched backtick is escaped; a matched span's content is literal.
        assert_eq!(markdown("a `b` `c"), "a `b` \\`c");
        assert_eq!(markdown("`a*b` [l](u)"), "`a*b` \\[l\\](u)");
        assert_eq!(markdown("a_b _c_ d_"), "a_b \\_c\\_ d\\_");
        assert_eq!(markdown("<b>&amp; ![i]"), "\\<b\\>\\&amp; !\\[i\\]");
        assert_eq!(markdown("`x\ny`"), "`x\\ny`");
        // Runs of different lengths do not close each other.
        assert_eq!(markdown("``a`b``"), "``a`b``");
        assert_eq!(markdown("``a`"), "\\`\\`a\\`");
    }

    #[test]
    fn markdown_code_spans_hold_any_text() {
        assert_eq!(markdown_code("tx.commit()"), "`tx.commit()`");
        assert_eq!(markdown_code("a`b"), "``a`b``");
        assert_eq!(markdown_code("`a"), "`` `a ``");
        assert_eq!(markdown_code(" a "), "`  a  `");
        assert_eq!(markdown_code("x\ny"), "`x\\ny`");
        assert_eq!(markdown_code(""), "`  `");
    }

    #[test]
    fn uri_paths_encode_everything_but_unreserved_and_slash() {
        assert_eq!(uri_path("src/a.rs", None), "src/a.rs");
        assert_eq!(uri_path("src/a b#1.rs", None), "src/a%20b%231.rs");
        assert_eq!(uri_path("src/back\\slash.rs", None), "src/back%5Cslash.rs");
        assert_eq!(uri_path("src/é.rs", None), "src/%C3%A9.rs");
        assert_eq!(
            uri_path("a:b/c?d%e(f).rs", None),
            "a%3Ab/c%3Fd%25e%28f%29.rs"
        );
        assert_eq!(uri_path("C:/x.rs", Some(1)), "C:/x.rs");
    }
}
