//! `--format rustc-json`: one cargo `compiler-message` per line, as `cargo check
//! --message-format=json` prints them (`reason`, `package_id`, `manifest_path`,
//! `target`, and the rustc diagnostic in `message`), so that rust-analyzer's
//! `check.overrideCommand`, cargo_metadata and VS Code's `$rustc-json` matcher read
//! them, and rust-analyzer keeps the compiler's diagnostics beside msgaudit's.
//!
//! A finding carries the package whose directory holds its file
//! (`Report::cargo`, found by [`crate::source::cargo`]); a finding or an input
//! error outside every package is left out, since a message without a package
//! makes rust-analyzer clear the whole workspace's diagnostics.
//!
//! Each finding is a diagnostic with `code: {"code": "msgaudit::ack_before_commit"}`
//! (rust-analyzer shows source `msgaudit`, code `ack_before_commit`), a primary
//! span labelled with the boundary, a secondary span per label (in the same or
//! another file), a `note` child with the failure window and a `help` child.
//! Lines and columns are 1-based, columns count characters, ends are exclusive;
//! byte offsets are into the file as it is on disk, as rustc's are (a UTF-8 BOM
//! counts its 3 bytes, though the analysis works on the text without it). The
//! `rendered` text escapes what it quotes from the analyzed tree
//! ([`text`]), as terminal output. Input errors are `error`
//! diagnostics with the code `msgaudit::input_error` (a primary span only when
//! they have a position: rust-analyzer drops the others).

use serde::Serialize;

use super::escape::text;
use super::{tool_code, Sources};
use crate::diagnostic::{Finding, InputError, Severity, Span};
use crate::report::Report;
use crate::source::cargo::CargoTarget;

/// The envelope cargo puts around each compiler diagnostic.
#[derive(Serialize)]
pub struct CompilerMessage<'a> {
    pub reason: &'static str,
    pub package_id: &'a str,
    pub manifest_path: &'a str,
    pub target: &'a CargoTarget,
    pub message: RustcDiagnostic<'a>,
}

#[derive(Serialize)]
pub struct RustcDiagnostic<'a> {
    /// `"diagnostic"` on the top-level diagnostic, as rustc writes it; absent on
    /// children.
    #[serde(rename = "$message_type", skip_serializing_if = "Option::is_none")]
    pub message_type: Option<&'static str>,
    pub message: String,
    pub code: Option<RustcCode>,
    pub level: &'static str,
    pub spans: Vec<RustcSpan<'a>>,
    pub children: Vec<RustcDiagnostic<'a>>,
    pub rendered: Option<String>,
}

#[derive(Serialize)]
pub struct RustcCode {
    pub code: String,
    pub explanation: Option<String>,
}

#[derive(Serialize)]
pub struct RustcSpan<'a> {
    pub file_name: &'a str,
    pub byte_start: usize,
    pub byte_end: usize,
    pub line_start: u32,
    pub line_end: u32,
    pub column_start: u32,
    pub column_end: u32,
    pub is_primary: bool,
    pub text: Vec<RustcSpanLine<'a>>,
    pub label: Option<String>,
    pub suggested_replacement: Option<String>,
    pub suggestion_applicability: Option<String>,
    pub expansion: Option<()>,
}

#[derive(Serialize)]
pub struct RustcSpanLine<'a> {
    pub text: &'a str,
    pub highlight_start: u32,
    pub highlight_end: u32,
}

/// A child (`note`, `help`) without spans.
fn child(level: &'static str, message: String) -> RustcDiagnostic<'static> {
    RustcDiagnostic {
        message_type: None,
        message,
        code: None,
        level,
        spans: Vec::new(),
        children: Vec::new(),
        rendered: None,
    }
}

/// The span of `span` in `path`; `None` when the position is unknown (line 0).
fn span<'a>(
    sources: &mut Sources<'a>,
    path: &'a str,
    span: &Span,
    is_primary: bool,
    label: Option<String>,
) -> Option<RustcSpan<'a>> {
    if span.line == 0 {
        return None;
    }
    let column_start = span.column.max(1);
    let (line_end, column_end) = if span.end_line == 0 {
        (span.line, column_start)
    } else {
        (span.end_line.max(span.line), span.end_column.max(1))
    };
    let full = Span {
        line: span.line,
        column: column_start,
        end_line: line_end,
        end_column: column_end,
        ..*span
    };
    let (byte_start, byte_end) = sources
        .byte_range(path, &full)
        .unwrap_or((span.byte_start, span.byte_end));
    let bom = sources.bom_len(path);
    let (byte_start, byte_end) = (byte_start + bom, byte_end + bom);
    let mut text = Vec::new();
    for line in span.line..=line_end {
        let Some(line_text) = sources.line(path, line) else {
            break;
        };
        let highlight_start = if line == span.line { column_start } else { 1 };
        let highlight_end = if line == line_end {
            column_end
        } else {
            line_text.chars().count() as u32 + 1
        };
        text.push(RustcSpanLine {
            text: line_text,
            highlight_start,
            highlight_end,
        });
    }
    Some(RustcSpan {
        file_name: path,
        byte_start,
        byte_end,
        line_start: span.line,
        line_end,
        column_start,
        column_end,
        is_primary,
        text,
        label,
        suggested_replacement: None,
        suggestion_applicability: None,
        expansion: None,
    })
}

/// `error[MA0NN]: message`, the location and the children, as rustc's short
/// human rendering, with the analyzed tree's text escaped ([`text`]).
fn rendered(
    level: &str,
    code: &str,
    message: &str,
    at: Option<String>,
    children: &[RustcDiagnostic],
) -> String {
    let message = text(message);
    let mut out = if code.is_empty() {
        format!("{level}: {message}\n")
    } else {
        format!("{level}[{code}]: {message}\n")
    };
    if let Some(at) = at {
        out.push_str(&format!("  --> {}\n", text(&at)));
    }
    for c in children {
        out.push_str(&format!("  = {}: {}\n", c.level, text(&c.message)));
    }
    out
}

fn finding<'a>(sources: &mut Sources<'a>, f: &'a Finding) -> RustcDiagnostic<'a> {
    let level = match f.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let primary_label = (!f.boundary.is_empty()).then(|| format!("boundary: {}", f.boundary));
    let mut spans: Vec<RustcSpan> = span(sources, &f.path, &f.span, true, primary_label)
        .into_iter()
        .collect();
    let mut children = Vec::new();
    for l in &f.labels {
        match span(sources, &l.path, &l.span, false, Some(l.message.clone())) {
            Some(s) => spans.push(s),
            None => children.push(child("note", format!("{}: {}", l.path, l.message))),
        }
    }
    if !f.window.is_empty() {
        children.push(child("note", format!("window: {}", f.window)));
    }
    if !f.help.is_empty() {
        children.push(child("help", f.help.clone()));
    }
    if let Some(fix) = &f.fix {
        // As rustc writes a suggestion: a `help` child whose spans carry the
        // replacement and how sure it is.
        let applicability = match fix.applicability {
            crate::diagnostic::Applicability::Safe => "MachineApplicable",
            crate::diagnostic::Applicability::Unsafe => "MaybeIncorrect",
        };
        let mut help = child("help", fix.title.clone());
        for e in &fix.edits {
            if let Some(mut s) = span(sources, &e.path, &e.span, true, None) {
                s.suggested_replacement = Some(e.content.clone());
                s.suggestion_applicability = Some(applicability.to_string());
                help.spans.push(s);
            }
        }
        children.push(help);
    }
    let at = format!("{}:{}:{}", f.path, f.span.line, f.span.column);
    RustcDiagnostic {
        message_type: Some("diagnostic"),
        rendered: Some(rendered(level, f.code, &f.message, Some(at), &children)),
        message: f.message.clone(),
        code: Some(RustcCode {
            code: tool_code(f.name),
            explanation: None,
        }),
        level,
        spans,
        children,
    }
}

fn input_error<'a>(sources: &mut Sources<'a>, e: &'a InputError) -> RustcDiagnostic<'a> {
    let at_span = e.line.map(|line| {
        let column = e.column.unwrap_or(1);
        Span {
            line,
            column,
            end_line: line,
            end_column: column,
            ..Span::default()
        }
    });
    let spans: Vec<RustcSpan> = at_span
        .and_then(|s| span(sources, &e.path, &s, true, None))
        .into_iter()
        .collect();
    let at = match (e.line, e.column) {
        (Some(l), Some(c)) => Some(format!("{}:{l}:{c}", e.path)),
        (Some(l), None) => Some(format!("{}:{l}", e.path)),
        _ if e.path.is_empty() => None,
        _ => Some(e.path.clone()),
    };
    RustcDiagnostic {
        message_type: Some("diagnostic"),
        rendered: Some(rendered("error", "", &e.message, at, &[])),
        message: e.message.clone(),
        code: Some(RustcCode {
            code: tool_code("input-error"),
            explanation: None,
        }),
        level: "error",
        spans,
        children: Vec::new(),
    }
}

/// Every finding, then every input error, each in a `compiler-message` of the
/// package holding its file, one compact JSON object per line; those outside
/// every package are left out.
pub fn render(report: &Report) -> String {
    let mut sources = Sources::new(report);
    let mut out = String::new();
    let mut push = |target: &CargoTarget, d: RustcDiagnostic| {
        let m = CompilerMessage {
            reason: "compiler-message",
            package_id: &target.package_id,
            manifest_path: &target.manifest_path,
            target,
            message: d,
        };
        // Serializing these types cannot fail: no maps, no custom serializers.
        out.push_str(&serde_json::to_string(&m).unwrap_or_default());
        out.push('\n');
    };
    for f in &report.findings {
        if let Some(t) = report.cargo.get(&f.path) {
            push(t, finding(&mut sources, f));
        }
    }
    for e in &report.errors {
        if let Some(t) = report.cargo.get(&e.path) {
            push(t, input_error(&mut sources, e));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_line_span_highlights_each_line() {
        let mut r = Report::default();
        r.sources
            .insert("a.rs".into(), "fn é() {\n    x();\n}\n".into());
        let mut sources = Sources::new(&r);
        let s = span(
            &mut sources,
            "a.rs",
            &Span {
                line: 1,
                column: 4,
                end_line: 2,
                end_column: 6,
                ..Span::default()
            },
            true,
            None,
        )
        .unwrap();
        // Columns count characters, bytes do not: `é` is two bytes.
        assert_eq!((s.byte_start, s.byte_end), (3, 15));
        assert_eq!(s.text.len(), 2);
        assert_eq!(
            (
                s.text[0].text,
                s.text[0].highlight_start,
                s.text[0].highlight_end
            ),
            ("fn é() {", 4, 9)
        );
        assert_eq!(
            (
                s.text[1].text,
                s.text[1].highlight_start,
                s.text[1].highlight_end
            ),
            ("    x();", 1, 6)
        );
    }

    #[test]
    fn unknown_position_has_no_span() {
        let r = Report::default();
        let mut sources = Sources::new(&r);
        assert!(span(&mut sources, "a.rs", &Span::default(), true, None).is_none());
    }
}
