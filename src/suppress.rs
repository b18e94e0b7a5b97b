//! `// msgaudit:allow(CODE) reason` suppressions and the unused-suppression check.
//!
//! A suppression is a comment (`//`, `///`, `//!` or `/* .. */` in Rust; `#` in
//! YAML) whose text starts with `msgaudit:allow(` (whitespace allowed around the `:`
//! and before the `(`) followed by a comma-separated list of rule codes or names and
//! `)`; the rest of the comment is the reason. It covers findings whose primary line
//! is one of the comment's lines or the next one. A comment that starts like one but
//! is not (`msgaudit allow(..)`, `msgaudit:alow(..)`, `MSGAUDIT:allow(..)`, a
//! missing `)`) suppresses nothing and is reported by the unused-suppression rule with the right spelling.
//! Rust text is read with the front end's lexer (`frontend::rust::lex`), which
//! tells comments from string and char literals; in YAML a `#` starts a comment
//! at a line's start or after whitespace, outside quotes.

use crate::diagnostic::{Finding, Severity, Span, Suppressed};
use crate::frontend::rust::lex::{Kind, Lexer};
use crate::rules::UNUSED_SUPPRESSION;
use crate::source::{FileKind, SourceFile};
use crate::support::lines::line_col;

/// The rule a suppression names, by any name a finding shows: its code (`MA0NN`, any
/// case), its name (`ack-before-commit`), the snake_case name rustc-json and
/// rust-analyzer show (`ack_before_commit`), or rustc-json's whole code
/// (`msgaudit::ack_before_commit`).
pub fn rule_named(written: &str) -> Option<&'static crate::rules::RuleMeta> {
    let key = written.trim();
    crate::rules::lookup(key).or_else(|| {
        let name = key.strip_prefix("msgaudit::").unwrap_or(key);
        crate::rules::lookup(&name.replace('_', "-"))
    })
}

/// One rule named in a suppression comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suppression {
    /// The code or name as written.
    pub written: String,
    /// The resolved rule code, `None` when no rule has that code or name.
    pub code: Option<&'static str>,
    /// 1-based line of the comment.
    pub line: u32,
    /// Span of the comment, from its `//` or `#` to the end of its text.
    pub span: Span,
    /// The comment's text after the `)`, trimmed: why the finding is accepted.
    pub reason: String,
}

/// Comments of a Rust text: (byte offset of the `//` or `/*`, byte offset of the
/// comment's end, whether it is a block comment), from the front end's lexer, so that
/// `"// msgaudit:allow(..)"` in a string (raw, byte, char literals alike) is not a comment.
fn rust_comments(text: &str) -> Vec<(usize, usize, bool)> {
    Lexer::new(text)
        .filter_map(|t| match t.kind {
            Kind::LineComment { .. } => Some((t.start, t.end, false)),
            Kind::BlockComment { .. } => Some((t.start, t.end, true)),
            _ => None,
        })
        .collect()
}

/// Comments of a YAML text: a `#` at the start of a line or after whitespace,
/// outside a quoted scalar on that line.
fn yaml_comments(text: &str) -> Vec<(usize, usize, bool)> {
    let mut out = Vec::new();
    let mut line_start = 0;
    for line in text.split('\n') {
        let mut quote: Option<u8> = None;
        let bytes = line.as_bytes();
        for (k, &c) in bytes.iter().enumerate() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (None, b'"' | b'\'') if k == 0 || b" \t:[{,-".contains(&bytes[k - 1]) => {
                    quote = Some(c)
                }
                (None, b'#') if k == 0 || bytes[k - 1] == b' ' || bytes[k - 1] == b'\t' => {
                    out.push((line_start + k, line_start + line.len(), false));
                    break;
                }
                _ => {}
            }
        }
        line_start += line.len() + 1;
    }
    out
}

/// Whether a text mentions `msgaudit` in any case: only then can it hold a suppression
/// or a malformed one.
fn mentions_msgaudit(text: &str) -> bool {
    text.as_bytes()
        .windows(8)
        .any(|w| w.eq_ignore_ascii_case(b"msgaudit"))
}

/// A comment that was meant as a suppression but is not one: what is wrong and how
/// to write it. It suppresses nothing and is reported by the unused-suppression rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Malformed {
    /// 1-based line of the comment.
    pub line: u32,
    /// Span of the comment.
    pub span: Span,
    /// What is wrong, e.g. "unknown directive `alow`".
    pub problem: String,
    /// The comment as it should be written.
    pub suggestion: String,
}

/// A suppression directive read from a comment's text: the list of rules and the reason.
type Directive<'a> = Result<(&'a str, &'a str), String>;

/// Reads a comment's text (after its `//`, `/*` or `#` and whitespace) as a
/// suppression. `None`: the comment is not meant as one (it does not start with
/// `msgaudit` followed by `:`, or by `allow(` with the colon missing).
///
/// Accepted: `msgaudit:allow(A, B) reason`, with whitespace around the `:` and
/// before the `(` (`msgaudit: allow (CODE)`), as `# noqa:E501` and `# noqa: E501`
/// both work in ruff. Anything else that starts like one is an error: a missing
/// colon, another case (`MsgAudit:Allow`), another directive (`alow`), a missing
/// `(` or `)`, an empty list.
fn directive(body: &str) -> Option<Directive<'_>> {
    let head = body.get(..8)?;
    if !head.eq_ignore_ascii_case("msgaudit") {
        return None;
    }
    let rest = &body[8..];
    if rest.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let after = rest.trim_start();
    let colon = after.strip_prefix(':');
    let after = colon
        .unwrap_or_else(|| after.trim_start_matches(['-', '_', '.']))
        .trim_start();
    let word_len = after.find(|c: char| !is_word(c)).unwrap_or(after.len());
    let (word, after_word) = (&after[..word_len], after[word_len..].trim_start());
    let allow_like = word.eq_ignore_ascii_case("allow") || near_allow(word);
    if colon.is_none() {
        // Prose that names the tool (`// msgaudit reports this`) is not a directive.
        if !(allow_like && after_word.starts_with('(')) {
            return None;
        }
        return Some(Err("`msgaudit` is not followed by `:`".into()));
    }
    if !(allow_like || after_word.starts_with('(')) {
        // `// msgaudit: see docs/ci.md` is prose.
        return None;
    }
    if head != "msgaudit" {
        return Some(Err(format!(
            "`{head}` is written `msgaudit`, in lower case"
        )));
    }
    if word != "allow" {
        return Some(Err(if word.is_empty() {
            "no directive after `msgaudit:`".into()
        } else if word.eq_ignore_ascii_case("allow") {
            format!("`{word}` is written `allow`, in lower case")
        } else {
            format!("unknown directive `{word}` (the only one is `allow`)")
        }));
    }
    let Some(args) = after_word.strip_prefix('(') else {
        return Some(Err("`allow` is not followed by `(`".into()));
    };
    let Some(close) = args.find(')') else {
        return Some(Err("the `(` after `allow` is not closed".into()));
    };
    let list = &args[..close];
    if list.split(',').all(|i| i.trim().is_empty()) {
        return Some(Err("`allow()` names no rule".into()));
    }
    Some(Ok((list, &args[close + 1..])))
}

/// Whether a word is a misspelling of `allow` (one edit away, or two letters swapped).
fn near_allow(word: &str) -> bool {
    let w = word.to_ascii_lowercase();
    let (a, b) = (w.as_bytes(), b"allow".as_slice());
    match a.len() as isize - b.len() as isize {
        0 => {
            let diff: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
            diff.len() == 1
                || (diff.len() == 2
                    && diff[1] == diff[0] + 1
                    && a[diff[0]] == b[diff[1]]
                    && a[diff[1]] == b[diff[0]])
        }
        -1 => (0..b.len()).any(|i| [&b[..i], &b[i + 1..]].concat() == a),
        1 => (0..a.len()).any(|i| [&a[..i], &a[i + 1..]].concat() == b),
        _ => false,
    }
}

/// The rules named in a malformed comment, for its suggested spelling: what is
/// between its first `(` and `)`, or `CODE`.
fn written_list(body: &str) -> String {
    body.split_once('(')
        .and_then(|(_, a)| a.split_once(')'))
        .map(|(l, _)| l.trim())
        .filter(|l| !l.is_empty())
        .unwrap_or("CODE")
        .to_string()
}

/// Finds the suppressions in one file's text: comments (line comments, Rust block
/// comments) whose text starts with `msgaudit:allow(`.
pub fn scan(text: &str, kind: FileKind) -> Vec<Suppression> {
    scan_all(text, kind).0
}

/// The suppressions of one file's text, and the comments meant as suppressions that
/// are malformed (see [`directive`]).
pub fn scan_all(text: &str, kind: FileKind) -> (Vec<Suppression>, Vec<Malformed>) {
    if !mentions_msgaudit(text) {
        return (Vec::new(), Vec::new());
    }
    let comments = match kind {
        FileKind::Rust => rust_comments(text),
        FileKind::Yaml => yaml_comments(text),
        FileKind::Sql => return (Vec::new(), Vec::new()),
    };
    let mut out = Vec::new();
    let mut bad = Vec::new();
    for (start, end, block) in comments {
        let comment = text[start..end].trim_end();
        let body = if block {
            // `/* .. */`, `/** .. */`, `/*! .. */`; a block comment starting `/* //`
            // holds a line comment's text, not a directive.
            let inner = comment.strip_suffix("*/").unwrap_or(comment);
            inner[2..].trim_start_matches(['*', '!']).trim()
        } else {
            comment.trim_start_matches(['/', '!', '#']).trim_start()
        };
        let Some(parsed) = directive(body) else {
            continue;
        };
        let (line, column) = line_col(text, start);
        let end = start + comment.len();
        let (end_line, end_column) = line_col(text, end);
        let span = Span {
            line,
            column,
            end_line,
            end_column,
            byte_start: start,
            byte_end: end,
        };
        let (list, reason) = match parsed {
            Ok(found) => found,
            Err(problem) => {
                let (open, close) = match (kind, block) {
                    (FileKind::Yaml, _) => ("#", ""),
                    (_, true) => ("/*", " */"),
                    _ => ("//", ""),
                };
                bad.push(Malformed {
                    line,
                    span,
                    problem,
                    suggestion: format!(
                        "{open} msgaudit:allow({}) reason{close}",
                        written_list(body)
                    ),
                });
                continue;
            }
        };
        let reason = reason.split_whitespace().collect::<Vec<_>>().join(" ");
        for item in list.split(',') {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            out.push(Suppression {
                written: item.to_string(),
                code: rule_named(item).map(|r| r.code),
                line,
                span,
                reason: reason.clone(),
            });
        }
    }
    (out, bad)
}

fn unused(file: &SourceFile, s: &Suppression, message: String) -> Finding {
    Finding {
        code: UNUSED_SUPPRESSION.code,
        name: UNUSED_SUPPRESSION.name,
        severity: Severity::Warning,
        path: file.path.clone(),
        span: s.span,
        message,
        boundary: UNUSED_SUPPRESSION.boundary.to_string(),
        window: "a stale suppression hides the next real defect written on this line".to_string(),
        labels: Vec::new(),
        help: "remove the comment".to_string(),
        fix: None,
    }
}

fn malformed(file: &SourceFile, m: &Malformed) -> Finding {
    Finding {
        code: UNUSED_SUPPRESSION.code,
        name: UNUSED_SUPPRESSION.name,
        severity: Severity::Warning,
        path: file.path.clone(),
        span: m.span,
        message: format!(
            "malformed suppression, it suppresses nothing: {}; write `{}`",
            m.problem, m.suggestion
        ),
        boundary: UNUSED_SUPPRESSION.boundary.to_string(),
        window: "the finding it was meant to accept is still reported while a reader takes it \
                 as accepted"
            .to_string(),
        labels: Vec::new(),
        help: format!("write the suppression as `{}`", m.suggestion),
        fix: None,
    }
}

/// Removes suppressed findings, appends unused-suppression findings for suppressions
/// that match nothing (unless `active(code, path)` says the rule is turned off), and
/// returns the findings suppressed, each with the reason of the first comment that
/// covers it.
///
/// A suppression naming no known rule is reported as an unused suppression too, when
/// that check is active.
pub fn apply(
    files: &[SourceFile],
    findings: &mut Vec<Finding>,
    active: &dyn Fn(&str, &str) -> bool,
) -> Vec<Suppressed> {
    let mut removed: Vec<Option<String>> = vec![None; findings.len()];
    let mut stale = Vec::new();
    for file in files {
        if !mentions_msgaudit(&file.text) {
            continue;
        }
        let (found, bad) = scan_all(&file.text, file.kind);
        if active(UNUSED_SUPPRESSION.code, &file.path) {
            stale.extend(bad.iter().map(|m| malformed(file, m)));
        }
        for s in found {
            let Some(code) = s.code else {
                if active(UNUSED_SUPPRESSION.code, &file.path) {
                    stale.push(unused(
                        file,
                        &s,
                        format!(
                            "suppression of {}",
                            crate::rules::unknown_rule_message(&s.written)
                        ),
                    ));
                }
                continue;
            };
            let mut used = false;
            for (i, f) in findings.iter().enumerate() {
                if f.code == code
                    && f.path == file.path
                    && (s.line..=s.span.end_line + 1).contains(&f.span.line)
                {
                    removed[i].get_or_insert_with(|| s.reason.clone());
                    used = true;
                }
            }
            if !used && active(code, &file.path) && active(UNUSED_SUPPRESSION.code, &file.path) {
                stale.push(unused(
                    file,
                    &s,
                    format!(
                        "suppression of {} matches no finding",
                        crate::diagnostic::quoted(&s.written)
                    ),
                ));
            }
        }
    }
    let mut suppressed = Vec::new();
    let mut kept = Vec::with_capacity(findings.len());
    for (finding, reason) in std::mem::take(findings).into_iter().zip(removed) {
        match reason {
            Some(justification) => suppressed.push(Suppressed {
                finding,
                justification,
            }),
            None => kept.push(finding),
        }
    }
    kept.extend(stale);
    *findings = kept;
    suppressed
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn file(path: &str, kind: FileKind, text: &str) -> SourceFile {
        SourceFile {
            path: path.to_string(),
            abs: PathBuf::from(path),
            text: text.to_string(),
            bom: false,
            kind,
            crate_key: path.to_string(),
            package_key: path.to_string(),
        }
    }

    fn finding(code: &'static str, path: &str, line: u32) -> Finding {
        let meta = crate::rules::lookup(code).unwrap();
        Finding {
            code: meta.code,
            name: meta.name,
            severity: meta.default_severity,
            path: path.to_string(),
            span: Span {
                line,
                column: 5,
                end_line: line,
                end_column: 9,
                byte_start: 0,
                byte_end: 0,
            },
            message: "m".to_string(),
            boundary: String::new(),
            window: String::new(),
            labels: Vec::new(),
            help: String::new(),
            fix: None,
        }
    }

    #[test]
    fn scans_rust_and_yaml_comments() {
        let s = scan(
            "fn f() {\n    x(); // msgaudit:allow(MA001, dual-write) reason\n    /// msgaudit:allow(MA099)\n    let s = \"msgaudit:allow(MA001)\";\n}\n",
            FileKind::Rust,
        );
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].code, Some("MA001"));
        assert_eq!(s[1].code, Some("MA006"));
        assert_eq!(s[1].written, "dual-write");
        assert_eq!((s[0].span.line, s[0].span.column), (2, 10));
        assert_eq!(s[0].span.end_column, 53);
        assert_eq!(s[2].code, None);
        assert_eq!(s[2].line, 3);

        let y = scan(
            "a: 1\n  isolation.level: x # msgaudit:allow(missing-read-committed)\n",
            FileKind::Yaml,
        );
        assert_eq!(y.len(), 1);
        assert_eq!(y[0].code, Some("MA004"));
        assert_eq!((y[0].span.line, y[0].span.column), (2, 22));
        assert!(scan("# msgaudit:allow(MA001)\n", FileKind::Rust).is_empty());
        assert!(scan("// msgaudit:allow(MA001)\n", FileKind::Yaml).is_empty());
    }

    #[test]
    fn literals_and_prose_are_not_suppressions() {
        let text = r##"
let a = "x // msgaudit:allow(MA001)";
let b = r#"// msgaudit:allow(MA001) "quoted" "#;
let c = '"'; let d: &'static str = "a"; // msgaudit:allow(MA002)
/* // msgaudit:allow(MA003) /* nested */ still comment */ // msgaudit:allow(MA004)
/// Reports a `// msgaudit:allow(CODE)` comment
let e = b'\''; let f = br"//"; // msgaudit:allow(MA005)
"##;
        let codes: Vec<_> = scan(text, FileKind::Rust)
            .iter()
            .map(|s| (s.code.unwrap(), s.line))
            .collect();
        assert_eq!(codes, [("MA002", 4), ("MA004", 5), ("MA005", 7)]);
        // A comment right after a quote's char literal (a byte loop that took `'\'`
        // for the literal missed it).
        let s = scan("let q = '\\''// msgaudit:allow(MA001)\n", FileKind::Rust);
        assert_eq!((s.len(), s[0].span.column), (1, 13));

        let yaml =
            "a: \"# msgaudit:allow(MA001)\"\nb: x#msgaudit:allow(MA001)\n# msgaudit:allow(MA004)\n";
        let y = scan(yaml, FileKind::Yaml);
        assert_eq!(y.len(), 1);
        assert_eq!(y[0].line, 3);
    }

    #[test]
    fn suppresses_same_and_next_line_and_reports_unused() {
        let files = [file(
            "src/a.rs",
            FileKind::Rust,
            "// msgaudit:allow(ack-before-commit) reason\nack();\nx(); // msgaudit:allow(MA002)\n// msgaudit:allow(MA006)\n// msgaudit:allow(MA003)\n// msgaudit:allow(NOPE)\n",
        )];
        let mut findings = vec![
            finding("MA001", "src/a.rs", 2),
            finding("MA002", "src/a.rs", 3),
            finding("MA001", "src/b.rs", 2),
            finding("MA004", "src/a.rs", 2),
        ];
        let n = apply(&files, &mut findings, &|code, _| code != "MA003");
        let why: Vec<_> = n
            .iter()
            .map(|s| (s.finding.code, s.justification.as_str()))
            .collect();
        assert_eq!(why, [("MA001", "reason"), ("MA002", "")]);
        let left: Vec<_> = findings
            .iter()
            .map(|f| (f.code, f.path.as_str(), f.span.line))
            .collect();
        assert_eq!(
            left,
            [
                ("MA001", "src/b.rs", 2),
                ("MA004", "src/a.rs", 2),
                ("MA900", "src/a.rs", 4),
                ("MA900", "src/a.rs", 6),
            ]
        );
        assert_eq!(
            findings[2].message,
            "suppression of `MA006` matches no finding"
        );
        assert_eq!(findings[2].name, "unused-suppression");
        assert_eq!(findings[2].help, "remove the comment");
        assert_eq!(findings[3].message, "suppression of unknown rule `NOPE`");
    }

    #[test]
    fn every_name_a_finding_shows_suppresses_it() {
        for name in [
            "MA006",
            "ma006",
            "dual-write",
            "dual_write",
            "msgaudit::dual_write",
        ] {
            let text = format!("// msgaudit:allow({name}) reason\npublish();\n");
            let files = [file("src/a.rs", FileKind::Rust, &text)];
            let mut findings = vec![finding("MA006", "src/a.rs", 2)];
            assert_eq!(
                apply(&files, &mut findings, &|_, _| true).len(),
                1,
                "{name}"
            );
            assert!(findings.is_empty(), "{name}: {findings:?}");
        }
        for not_a_name in [
            "dual write",
            "msgaudit::MA006x",
            "dual__write",
            "msgaudit:dual_write",
        ] {
            assert!(rule_named(not_a_name).is_none(), "{not_a_name}");
        }
    }

    #[test]
    fn whitespace_variants_and_block_comments_suppress() {
        for (kind, text) in [
            (FileKind::Rust, "x(); // msgaudit: allow(MA001) why\n"),
            (FileKind::Rust, "x(); //msgaudit:allow(MA001) why\n"),
            (FileKind::Rust, "x(); // msgaudit : allow (MA001) why\n"),
            (FileKind::Rust, "x(); /* msgaudit:allow(MA001) why */\n"),
            (FileKind::Rust, "x(); /** msgaudit: allow(MA001)   why */\n"),
            (FileKind::Yaml, "a: 1 # msgaudit: allow(MA001) why\n"),
            (FileKind::Yaml, "a: 1 #msgaudit:allow(MA001) why\n"),
        ] {
            let (found, bad) = scan_all(text, kind);
            assert!(bad.is_empty(), "{text}: {bad:?}");
            let got: Vec<_> = found.iter().map(|s| (s.code, s.reason.as_str())).collect();
            assert_eq!(got, [(Some("MA001"), "why")], "{text}");
        }
        // A block comment over several lines covers its lines and the next one.
        let text = "/* msgaudit:allow(MA002) the broker\n   redelivers */\nack();\nlater();\n";
        let files = [file("src/a.rs", FileKind::Rust, text)];
        let mut findings = vec![
            finding("MA002", "src/a.rs", 2),
            finding("MA002", "src/a.rs", 3),
            finding("MA002", "src/a.rs", 4),
        ];
        let n = apply(&files, &mut findings, &|_, _| true);
        assert_eq!(n.len(), 2);
        assert_eq!(n[0].justification, "the broker redelivers");
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].span.line, 4);
    }

    #[test]
    fn malformed_suppressions_are_reported_with_the_right_spelling() {
        let cases = [
            (
                FileKind::Rust,
                "// msgaudit allow(MA001)",
                "`msgaudit` is not followed by `:`",
                "// msgaudit:allow(MA001) reason",
            ),
            (
                FileKind::Rust,
                "x(); // msgaudit:alow(MA001) why",
                "unknown directive `alow` (the only one is `allow`)",
                "// msgaudit:allow(MA001) reason",
            ),
            (
                FileKind::Rust,
                "// msgaudit:ignore(MA001)",
                "unknown directive `ignore` (the only one is `allow`)",
                "// msgaudit:allow(MA001) reason",
            ),
            (
                FileKind::Rust,
                "/* MsgAudit:allow(MA002) */",
                "`MsgAudit` is written `msgaudit`, in lower case",
                "/* msgaudit:allow(MA002) reason */",
            ),
            (
                FileKind::Rust,
                "// msgaudit:Allow(MA001)",
                "`Allow` is written `allow`, in lower case",
                "// msgaudit:allow(MA001) reason",
            ),
            (
                FileKind::Rust,
                "// msgaudit:allow MA001",
                "`allow` is not followed by `(`",
                "// msgaudit:allow(CODE) reason",
            ),
            (
                FileKind::Rust,
                "// msgaudit:allow(MA001 replayed",
                "the `(` after `allow` is not closed",
                "// msgaudit:allow(CODE) reason",
            ),
            (
                FileKind::Yaml,
                "# msgaudit:allow() why",
                "`allow()` names no rule",
                "# msgaudit:allow(CODE) reason",
            ),
            (
                FileKind::Yaml,
                "a: 1 # msgaudit-allow(MA004)",
                "`msgaudit` is not followed by `:`",
                "# msgaudit:allow(MA004) reason",
            ),
        ];
        for (kind, text, problem, suggestion) in cases {
            let (found, bad) = scan_all(text, kind);
            assert!(found.is_empty(), "{text}: {found:?}");
            assert_eq!(bad.len(), 1, "{text}");
            assert_eq!(bad[0].problem, problem, "{text}");
            assert_eq!(bad[0].suggestion, suggestion, "{text}");
            assert_eq!(bad[0].line, 1);
        }
        // Reported as MA900 at the comment, and the finding stays.
        let files = [file(
            "src/a.rs",
            FileKind::Rust,
            "ack(); // msgaudit:alow(MA001) replayed\n",
        )];
        let mut findings = vec![finding("MA001", "src/a.rs", 1)];
        assert!(apply(&files, &mut findings, &|_, _| true).is_empty());
        assert_eq!(findings.len(), 2);
        let f = &findings[1];
        assert_eq!((f.code, f.span.line, f.span.column), ("MA900", 1, 8));
        assert_eq!(
            f.message,
            "malformed suppression, it suppresses nothing: unknown directive `alow` (the \
             only one is `allow`); write `// msgaudit:allow(MA001) reason`"
        );
        assert_eq!(f.severity, Severity::Warning);
        // Off with MA900.
        let mut findings = Vec::new();
        apply(&files, &mut findings, &|c, _| c != "MA900");
        assert!(findings.is_empty());
    }

    #[test]
    fn prose_naming_the_tool_is_not_a_suppression() {
        for text in [
            "// msgaudit reports this as MA001\n",
            "// msgaudit: see docs/ci.md\n",
            "// msgauditor(x) allow(MA001)\n",
            "/// Reports a `// msgaudit:allow(CODE)` comment\n",
            "// The msgaudit:allow(MA001) comment above\n",
            "let s = \"// msgaudit allow(MA001)\";\n",
            "/* // msgaudit:alow(MA001) */\n",
        ] {
            assert_eq!(
                scan_all(text, FileKind::Rust),
                (Vec::new(), Vec::new()),
                "{text}"
            );
        }
        assert!(near_allow("alow") && near_allow("allwo") && near_allow("alloww"));
        assert!(!near_allow("all") && !near_allow("below") && !near_allow("ignore"));
    }

    #[test]
    fn inactive_ma900_reports_nothing() {
        let files = [file("a.yml", FileKind::Yaml, "# msgaudit:allow(MA004)\n")];
        let mut findings = Vec::new();
        assert!(apply(&files, &mut findings, &|c, _| c != "MA900").is_empty());
        assert!(findings.is_empty());
    }
}
