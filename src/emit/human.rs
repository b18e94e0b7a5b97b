//! `--format human`: miette's graphical diagnostics, one per finding and input
//! error, then a one-line summary.
//!
//! The primary span is labelled with the boundary the finding breaks; secondary
//! labels in the same file are drawn in the snippet, labels in other files are
//! listed as notes, and the failure window is a note. The rendering has no
//! colour codes unless [`HumanOptions::color`] asks for them.
//!
//! Text from the analyzed tree is escaped: messages, labels, notes, help and paths
//! with [`escape::text`] (one line each), the source lines drawn with
//! [`escape::snippet`] (a control character becomes one visible character, so the
//! underlines stay aligned). Columns, in the header `╭─[path:line:col]` as
//! everywhere, count characters.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use miette::{
    Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError,
    MietteSpanContents, SourceCode, SourceSpan, SpanContents, ThemeCharacters, ThemeStyles,
};

use super::escape::{self, text};
use crate::diagnostic::{Finding, InputError, Severity};
use crate::report::Report;
use crate::support::lines::LineIndex;

/// How the human format is drawn.
#[derive(Clone, Debug)]
pub struct HumanOptions {
    /// Unicode box-drawing characters (`true`) or plain ASCII.
    pub unicode: bool,
    /// ANSI colours (only for terminals).
    pub color: bool,
    /// Width of the terminal (long lines are not wrapped: the terminal does that).
    pub width: usize,
}

impl Default for HumanOptions {
    fn default() -> Self {
        HumanOptions {
            unicode: true,
            color: false,
            width: 100,
        }
    }
}

/// A file's text, escaped for drawing ([`Drawn`]), under its escaped display path.
struct Named<'a> {
    name: Cow<'a, str>,
    text: &'a LineIndex<'a>,
}

impl<'a> Named<'a> {
    fn new(name: &'a str, text: &'a LineIndex<'a>) -> Self {
        Named {
            name: escape::text(name),
            text,
        }
    }
}

/// The texts of the files that findings and errors point into, escaped once each
/// with [`escape::snippet`] (borrowed when there is nothing to replace).
type Escaped<'a> = BTreeMap<&'a str, Cow<'a, str>>;

/// The escaped texts with their line starts ([`LineIndex`]), so that a place in one
/// is found without reading it from its start: a file with thousands of findings is
/// drawn in time linear in its size and their number.
type Drawn<'a> = BTreeMap<&'a str, LineIndex<'a>>;

fn escaped(report: &Report) -> Escaped<'_> {
    let paths = report
        .findings
        .iter()
        .map(|f| f.path.as_str())
        .chain(report.errors.iter().map(|e| e.path.as_str()));
    let mut escaped = Escaped::new();
    for path in paths {
        if let Some((path, text)) = report.sources.get_key_value(path) {
            escaped
                .entry(path.as_str())
                .or_insert_with(|| escape::snippet(text));
        }
    }
    escaped
}

/// miette's reading of `span` with its context lines, from a window of the lines
/// around it rather than from the text's start: the same contents, lines and
/// counts (miette counts the lines from the text's start), in time of the window.
fn read_window<'a>(
    lined: &LineIndex<'a>,
    span: &SourceSpan,
    before: usize,
    after: usize,
) -> Result<MietteSpanContents<'a>, MietteError> {
    let text: &'a str = lined.text();
    let (start, end) = (span.offset(), span.offset().saturating_add(span.len()));
    if end > text.len() {
        let inner = text.read_span(span, before, after)?;
        return Ok(MietteSpanContents::new(
            inner.data(),
            *inner.span(),
            inner.line(),
            inner.column(),
            inner.line_count(),
        ));
    }
    // One line of margin before, two after: miette stops reading after the
    // line break that ends the last context line, and looks one byte past it.
    // (`first` and `last` count from 0.)
    let first = (lined.line_of(start) - 1).saturating_sub(before.saturating_add(1));
    let last = (lined.line_of(end.saturating_sub(1).max(start)) - 1)
        .saturating_add(after)
        .saturating_add(2);
    let base = lined.line_start(first + 1).unwrap_or(text.len());
    let stop = lined
        .line_start(last.saturating_add(2))
        .unwrap_or(text.len())
        .max(base);
    let window = &text[base..stop];
    let local = SourceSpan::new((start - base).into(), span.len());
    let inner = window.read_span(&local, before, after)?;
    Ok(MietteSpanContents::new(
        inner.data(),
        SourceSpan::new((inner.span().offset() + base).into(), inner.span().len()),
        inner.line() + first,
        inner.column(),
        inner.line_count() + first,
    ))
}

impl SourceCode for Named<'_> {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let text: &str = self.text.text();
        let inner = read_window(self.text, span, before, after)?;
        // miette counts the column of the contents' start in bytes: count characters,
        // as every other column msgaudit prints does. (`escape::snippet` left no lone
        // `\r`, which miette would take for a line break, so lines agree.)
        let start = inner.span().offset();
        let column = text
            .get(..start)
            .map(|before| {
                let line_start = before.rfind('\n').map_or(0, |i| i + 1);
                before[line_start..].chars().count()
            })
            .unwrap_or_else(|| inner.column());
        // miette draws two labels' contexts as one snippet when the first one's line
        // plus its "line count" reaches the second's line, and it counts the lines from
        // the text's start: deep in a file, a label and another one twice as far down
        // were drawn as one snippet of every line between (a file with thousands of
        // findings printed a quadratic output). Counted from the contents instead, with
        // a margin of `MERGE_GAP` lines, labels close together still share a snippet.
        let drawn_lines = inner.data().iter().filter(|b| **b == b'\n').count();
        let line_count = inner
            .line_count()
            .min(drawn_lines.saturating_add(MERGE_GAP));
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.to_string(),
            inner.data(),
            *inner.span(),
            inner.line(),
            column,
            line_count,
        )))
    }
}

/// Labels at most this many lines apart (beyond their context lines) are drawn in
/// one snippet, with the lines between them.
const MERGE_GAP: usize = 12;

/// One diagnostic as miette wants it.
struct Diag<'a> {
    message: String,
    code: Option<String>,
    severity: miette::Severity,
    help: Option<String>,
    source: Option<Named<'a>>,
    labels: Vec<LabeledSpan>,
}

impl fmt::Debug for Diag<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Display for Diag<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Diag<'_> {}

impl Diagnostic for Diag<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        self.code
            .as_ref()
            .map(|c| Box::new(c) as Box<dyn fmt::Display>)
    }
    fn severity(&self) -> Option<miette::Severity> {
        Some(self.severity)
    }
    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        self.help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }
    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.source.as_ref().map(|s| s as &dyn SourceCode)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        if self.source.is_none() || self.labels.is_empty() {
            return None;
        }
        Some(Box::new(self.labels.iter().cloned()))
    }
}

/// Byte offset of 1-based `line` and character `column` in `text`, clamped to
/// the line's end and the text's end.
fn offset_of(text: &LineIndex, line: u32, column: u32) -> usize {
    let Some(start) = text.line_start(line.max(1) as usize) else {
        return text.text().len();
    };
    let line_text = &text.text()[start..];
    let line_end = line_text.find('\n').unwrap_or(line_text.len());
    let line_text = &line_text[..line_end];
    let col = column.max(1) as usize - 1;
    let within = line_text
        .char_indices()
        .nth(col)
        .map_or(line_text.len(), |(i, _)| i);
    start + within
}

/// The source span of `(line, column)`..`(end_line, end_column)`.
fn source_span(
    text: &LineIndex,
    line: u32,
    column: u32,
    end_line: u32,
    end_column: u32,
) -> SourceSpan {
    let start = offset_of(text, line, column);
    let end = if end_line == 0 {
        start
    } else {
        offset_of(text, end_line, end_column).max(start)
    };
    SourceSpan::new(start.into(), end - start)
}

fn finding_diag<'a>(drawn: &'a Drawn, f: &'a Finding, report: &Report) -> (Diag<'a>, Vec<String>) {
    let source = drawn.get(f.path.as_str()).map(|t| Named::new(&f.path, t));
    let mut notes = Vec::new();
    let mut labels = Vec::new();
    if let Some(source) = &source {
        let primary = if f.boundary.is_empty() {
            None
        } else {
            Some(format!("boundary: {}", text(&f.boundary)))
        };
        let s = &f.span;
        labels.push(LabeledSpan::new_primary_with_span(
            primary,
            source_span(source.text, s.line, s.column, s.end_line, s.end_column),
        ));
    } else {
        notes.push(format!(
            "at {}:{}:{}",
            text(&f.path),
            f.span.line,
            f.span.column
        ));
        if !f.boundary.is_empty() {
            notes.push(format!("boundary: {}", text(&f.boundary)));
        }
    }
    for l in &f.labels {
        match &source {
            Some(source) if l.path == f.path => {
                let s = &l.span;
                labels.push(LabeledSpan::new_with_span(
                    Some(text(&l.message).into_owned()),
                    source_span(source.text, s.line, s.column, s.end_line, s.end_column),
                ));
            }
            _ => {
                // A place in another crate of the workspace says which.
                let elsewhere = match (report.crate_of(&l.path), report.crate_of(&f.path)) {
                    (Some(theirs), Some(mine)) if mine != theirs => {
                        format!(" (in crate {})", crate::diagnostic::quoted(&text(theirs)))
                    }
                    _ => String::new(),
                };
                notes.push(format!(
                    "{}:{}:{}: {}{elsewhere}",
                    text(&l.path),
                    l.span.line,
                    l.span.column,
                    text(&l.message)
                ))
            }
        }
    }
    if !f.window.is_empty() {
        notes.push(format!("window: {}", text(&f.window)));
    }
    let diag = Diag {
        message: text(&f.message).into_owned(),
        code: Some(format!(
            "{}:{}:{}: {} {}{}",
            text(&f.path),
            f.span.line,
            f.span.column,
            f.code,
            super::fix_mark(f),
            f.name
        )),
        severity: match f.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        },
        help: (!f.help.is_empty()).then(|| text(&f.help).into_owned()),
        source,
        labels,
    };
    (diag, notes)
}

fn error_diag<'a>(drawn: &'a Drawn, e: &'a InputError) -> Diag<'a> {
    let path = text(&e.path);
    let location = match (e.line, e.column) {
        (Some(l), Some(c)) => format!("{path}:{l}:{c}"),
        (Some(l), None) => format!("{path}:{l}"),
        _ => path.into_owned(),
    };
    let (source, labels) = match (drawn.get(e.path.as_str()), e.line) {
        (Some(t), Some(line)) => {
            let source = Named::new(&e.path, t);
            let label = LabeledSpan::new_primary_with_span(
                Some("here".to_string()),
                source_span(source.text, line, e.column.unwrap_or(1), 0, 0),
            );
            (Some(source), vec![label])
        }
        _ => (None, Vec::new()),
    };
    Diag {
        message: text(&e.message).into_owned(),
        code: Some(format!("{location}: input error")),
        severity: miette::Severity::Error,
        help: None,
        source,
        labels,
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The skipped reason that counts test items (functions, modules) inside analyzed
/// files, not files.
const ITEMS: &str = "test_code_items";
/// The skipped reason that counts directories (Cargo target directories), not files.
const DIRECTORIES: &str = "cargo_target_dirs";

/// `N findings (E errors, W warnings), K input errors, F files (A analyzed, S skipped)`.
pub fn summary_line(report: &Report) -> String {
    let errors = report
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    let warnings = report.findings.len() - errors;
    // Files and test items are counted apart: the skipped files and the analyzed
    // ones add up to the files seen (less those with an input error).
    let (items, skipped) = report
        .summary
        .skipped
        .iter()
        .fold((0, 0), |(i, f), (k, n)| match k.as_str() {
            ITEMS => (i + n, f),
            DIRECTORIES => (i, f),
            _ => (i, f + n),
        });
    let mut line = format!(
        "{} ({}, {}), {}, {} ({} analyzed, {} skipped)",
        plural(report.findings.len(), "finding", "findings"),
        plural(errors, "error", "errors"),
        plural(warnings, "warning", "warnings"),
        plural(report.errors.len(), "input error", "input errors"),
        plural(report.summary.files, "file", "files"),
        report.summary.analyzed,
        skipped
    );
    if items > 0 {
        line.push_str(&format!(
            ", {} left out",
            plural(items, "test item", "test items")
        ));
    }
    if let Some(n) = report.summary.baselined {
        line.push_str(&format!(", {n} in the baseline"));
    }
    if let Some(n) = report.summary.outside_diff {
        line.push_str(&format!(", {n} outside the diff"));
    }
    if !report.summary.outside_deps.is_empty() {
        line.push_str(&format!(
            "; path dependencies outside the analyzed paths, not read: {}",
            report.summary.outside_deps.join(", ")
        ));
    }
    line
}

/// Renders every finding, then every input error, then the summary line.
pub fn render(report: &Report, options: &HumanOptions) -> String {
    let theme = GraphicalTheme {
        characters: if options.unicode {
            ThemeCharacters::unicode()
        } else {
            ThemeCharacters::ascii()
        },
        styles: if options.color {
            ThemeStyles::ansi()
        } else {
            ThemeStyles::none()
        },
    };
    let base = GraphicalReportHandler::new_themed(theme)
        .with_width(options.width)
        .with_links(false)
        .with_wrap_lines(false)
        .without_syntax_highlighting();
    let escaped = escaped(report);
    let drawn: Drawn = escaped
        .iter()
        .map(|(p, t)| (*p, LineIndex::new(t)))
        .collect();
    let mut out = String::new();
    for f in &report.findings {
        let (diag, notes) = finding_diag(&drawn, f, report);
        // Writing into a String cannot fail.
        let _ = base.render_report(&mut out, &diag);
        if !notes.is_empty() {
            out.push('\n');
            for n in notes {
                out.push_str(&format!("  note: {n}\n"));
            }
        }
        out.push('\n');
    }
    for e in &report.errors {
        let diag = error_diag(&drawn, e);
        let _ = base.render_report(&mut out, &diag);
        out.push('\n');
    }
    out.push_str(&summary_line(report));
    out.push('\n');
    out.push_str(&super::fixable_line(report));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::{Label, Span};

    #[test]
    fn offsets_count_characters_and_clamp() {
        let t = &LineIndex::new("ab\néxy\n");
        assert_eq!(offset_of(t, 1, 1), 0);
        assert_eq!(offset_of(t, 2, 2), 5);
        assert_eq!(offset_of(t, 2, 99), 7);
        assert_eq!(offset_of(t, 9, 1), t.text().len());
    }

    /// The window miette reads a span from gives what reading the whole text gives:
    /// contents, their span, line and line count, for every span and context size,
    /// with `\n` and `\r\n` line ends, empty lines and no final line break.
    #[test]
    fn window_reads_as_the_whole_text() {
        let texts = [
            "fn a() {\n    x();\n\n    y();\n}\n",
            "one\r\ntwo\r\n\r\nthree\r\nfour",
            "a\nb\nc\nd\ne\nf\ng\nh\ni\nj",
            "\n\n\nx\n\n\n",
        ];
        for t in texts {
            let lined = LineIndex::new(t);
            for start in 0..=t.len() {
                for len in 0..=(t.len() - start).min(12) {
                    for (before, after) in [(0, 0), (1, 1), (2, 2), (3, 1), (0, 3)] {
                        let span = SourceSpan::new(start.into(), len);
                        let whole = t.read_span(&span, before, after);
                        let window = read_window(&lined, &span, before, after);
                        match (whole, window) {
                            (Ok(w), Ok(v)) => {
                                let at = format!("{t:?} {start}+{len} ({before}, {after})");
                                assert_eq!(w.data(), v.data(), "{at}");
                                assert_eq!(w.span(), v.span(), "{at}");
                                assert_eq!(w.line(), v.line(), "{at}");
                                assert_eq!(w.column(), v.column(), "{at}");
                                assert_eq!(w.line_count(), v.line_count(), "{at}");
                            }
                            (Err(_), Err(_)) => {}
                            (w, v) => {
                                panic!("{t:?} {start}+{len}: {:?} vs {:?}", w.is_ok(), v.is_ok())
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn summary_counts() {
        let mut r = Report::default();
        r.summary.files = 1;
        r.summary.analyzed = 1;
        assert_eq!(
            summary_line(&r),
            "0 findings (0 errors, 0 warnings), 0 input errors, 1 file (1 analyzed, 0 skipped)"
        );
        // Test items and target directories are not files: counted apart, or not at all.
        r.summary.files = 5;
        for (k, n) in [
            ("no_relevant_tokens", 2),
            ("test_modules", 2),
            ("test_code_items", 7),
            ("cargo_target_dirs", 1),
        ] {
            r.summary.skipped.insert(k.into(), n);
        }
        assert_eq!(
            summary_line(&r),
            "0 findings (0 errors, 0 warnings), 0 input errors, 5 files (1 analyzed, 4 skipped), \
             7 test items left out"
        );
    }

    #[test]
    fn finding_without_source_names_its_location() {
        let mut r = Report::default();
        r.findings.push(Finding {
            code: "MA001",
            name: "ack-before-commit",
            severity: Severity::Error,
            path: "x.rs".into(),
            span: Span {
                line: 3,
                column: 4,
                end_line: 3,
                end_column: 9,
                byte_start: 0,
                byte_end: 0,
            },
            message: "m".into(),
            boundary: "b".into(),
            window: "w".into(),
            labels: vec![Label {
                path: "x.rs".into(),
                span: Span::default(),
                message: "l".into(),
            }],
            help: "h".into(),
            fix: None,
        });
        let out = render(&r, &HumanOptions::default());
        assert!(
            out.starts_with("x.rs:3:4: MA001 ack-before-commit\n"),
            "{out}"
        );
        assert!(out.contains("note: x.rs:0:0: l"), "{out}");
        assert!(out.contains("help: h"), "{out}");
    }
}
