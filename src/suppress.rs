//! `// msgaudit:allow(CODE) reason` suppressions and the unused-suppression check.
//!
//! A suppression is a line comment (`//`, `///`, `//!` in Rust; `#` in YAML)
//! whose text starts with `msgaudit:allow(` followed by a comma-separated list
//! of rule codes or names and `)`; the rest of the comment is the reason. It
//! covers findings whose primary line is the comment's line or the next one.
//! Rust text is read with the front end's lexer (`frontend::rust::lex`), which
//! tells comments from string and char literals; in YAML a `#` starts a comment
//! at a line's start or after whitespace, outside quotes.

use crate::diagnostic::{Finding, Severity, Span, Suppressed};
use crate::frontend::rust::lex::{Kind, Lexer};
use crate::rules::UNUSED_SUPPRESSION;
use crate::source::{FileKind, SourceFile};
use crate::support::lines::line_col;

const MARKER: &str = "msgaudit:allow(";

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

/// Line comments of a Rust text: (byte offset of the `//`, byte offset of the
/// comment's end), from the front end's lexer, so that `"// msgaudit:allow(..)"`
/// in a string (raw, byte, char literals and block comments alike) is not a comment.
fn rust_line_comments(text: &str) -> Vec<(usize, usize)> {
    Lexer::new(text)
        .filter(|t| matches!(t.kind, Kind::LineComment { .. }))
        .map(|t| (t.start, t.end))
        .collect()
}

/// Comments of a YAML text: a `#` at the start of a line or after whitespace,
/// outside a quoted scalar on that line.
fn yaml_comments(text: &str) -> Vec<(usize, usize)> {
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
                    out.push((line_start + k, line_start + line.len()));
                    break;
                }
                _ => {}
            }
        }
        line_start += line.len() + 1;
    }
    out
}

/// Finds the suppressions in one file's text: comments whose text (after the
/// comment marker and whitespace) starts with `msgaudit:allow(`.
pub fn scan(text: &str, kind: FileKind) -> Vec<Suppression> {
    if !text.contains(MARKER) {
        return Vec::new();
    }
    let comments = match kind {
        FileKind::Rust => rust_line_comments(text),
        FileKind::Yaml => yaml_comments(text),
        FileKind::Sql => return Vec::new(),
    };
    let mut out = Vec::new();
    for (start, end) in comments {
        let comment = text[start..end].trim_end();
        let body = comment.trim_start_matches(['/', '!', '#']).trim_start();
        let Some(args) = body.strip_prefix(MARKER) else {
            continue;
        };
        let Some(close) = args.find(')') else {
            continue;
        };
        let (line, column) = line_col(text, start);
        let end = start + comment.len();
        let (end_line, end_column) = line_col(text, end);
        let reason = args[close + 1..].trim().to_string();
        let span = Span {
            line,
            column,
            end_line,
            end_column,
            byte_start: start,
            byte_end: end,
        };
        for item in args[..close].split(',') {
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
    out
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
        if !file.text.contains(MARKER) {
            continue;
        }
        for s in scan(&file.text, file.kind) {
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
                    && (f.span.line == s.line || f.span.line == s.line + 1)
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
    fn inactive_ma900_reports_nothing() {
        let files = [file("a.yml", FileKind::Yaml, "# msgaudit:allow(MA004)\n")];
        let mut findings = Vec::new();
        assert!(apply(&files, &mut findings, &|c, _| c != "MA900").is_empty());
        assert!(findings.is_empty());
    }
}
