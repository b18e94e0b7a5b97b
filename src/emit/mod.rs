//! Output formats. Only this module knows how findings are printed, and it owns
//! the serializable types (`json.rs`, `sarif.rs`, `rustc_json.rs`), so each format
//! stays stable while the core's types change. One file per format.

pub mod checklist;
pub mod escape;
pub mod github;
pub mod human;
pub mod json;
pub mod pages;
pub mod plain;
pub mod rustc_json;
pub mod sarif;
pub mod short;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::diagnostic::{Consequence, Span};
use crate::report::Report;
use crate::rules::RuleMeta;
use crate::support::lines::LineIndex;

pub use human::HumanOptions;

/// `--format` of `msgaudit check` (the CLI's values and their help are these).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Diagnostics with source snippets and a summary line.
    Human,
    /// One `path:line:col: severity[CODE]: message` line per finding.
    Short,
    /// One JSON document (the stable machine format).
    Json,
    /// SARIF 2.1.0, for GitHub code scanning (`upload-sarif`) and SARIF viewers.
    Sarif,
    /// GitHub Actions workflow commands: annotations on the pull request.
    Github,
    /// One cargo `compiler-message` JSON object per line (as `cargo check
    /// --message-format=json`), for rust-analyzer's `check.overrideCommand`.
    RustcJson,
    /// The pull-request review checklist, as Markdown for a PR comment.
    Checklist,
}

/// `[*] ` before a finding whose fix `check --fix` applies (a safe fix), as ruff
/// marks fixable findings; nothing otherwise.
pub fn fix_mark(f: &crate::diagnostic::Finding) -> &'static str {
    match &f.fix {
        Some(fix) if fix.applicability == crate::diagnostic::Applicability::Safe => "[*] ",
        _ => "",
    }
}

/// The closing line of the human and short outputs when findings have fixes:
/// "[*] N fixable with `--fix`", and how many unsafe fixes `--unsafe-fixes` would
/// add ("(M hidden fixes can be enabled with `--unsafe-fixes`)"); empty when none.
pub fn fixable_line(report: &Report) -> String {
    use crate::diagnostic::Applicability;
    let count = |a: Applicability| {
        report
            .findings
            .iter()
            .filter(|f| f.fix.as_ref().is_some_and(|x| x.applicability == a))
            .count()
    };
    let (safe, hidden) = (count(Applicability::Safe), count(Applicability::Unsafe));
    let hidden = match hidden {
        0 => String::new(),
        1 => "(1 hidden fix can be enabled with `--unsafe-fixes`)".to_string(),
        n => format!("({n} hidden fixes can be enabled with `--unsafe-fixes`)"),
    };
    match (safe, hidden.is_empty()) {
        (0, true) => String::new(),
        (0, false) => format!("No fixes available {hidden}\n"),
        (n, true) => format!("[*] {n} fixable with `--fix`\n"),
        (n, false) => format!("[*] {n} fixable with `--fix` {hidden}\n"),
    }
}

/// Renders a finished report. `Human` uses unicode box characters without colour
/// (deterministic, for files and tests); see [`human::render`] for the options.
pub fn render(report: &Report, format: Format) -> String {
    match format {
        Format::Human => human::render(report, &HumanOptions::default()),
        Format::Short => short::render(report),
        Format::Json => json::render(report),
        Format::Sarif => sarif::render(report),
        Format::Github => github::render(report),
        Format::RustcJson => rustc_json::render(report),
        Format::Checklist => checklist::render(report),
    }
}

/// Positions in the report's source texts, for the formats that need byte offsets
/// or line text. Line indexes are built on first use, one per file.
pub(crate) struct Sources<'a> {
    report: &'a Report,
    indexes: BTreeMap<&'a str, LineIndex<'a>>,
}

impl<'a> Sources<'a> {
    pub(crate) fn new(report: &'a Report) -> Self {
        Sources {
            report,
            indexes: BTreeMap::new(),
        }
    }

    fn index(&mut self, path: &str) -> Option<&LineIndex<'a>> {
        let (key, text) = self.report.sources.get_key_value(path)?;
        Some(
            self.indexes
                .entry(key.as_str())
                .or_insert_with(|| LineIndex::new(text)),
        )
    }

    /// Byte offset of 1-based `line` and 1-based character `column` in `path`,
    /// clamped to the text; `None` when the report has no text for `path`.
    pub(crate) fn offset(&mut self, path: &str, line: u32, column: u32) -> Option<usize> {
        let index = self.index(path)?;
        Some(index.offset(line.max(1) as usize, column.max(1) as usize - 1))
    }

    /// Byte range of `span` in `path`, computed from its lines and columns (an
    /// end line of 0 means an empty span at the start).
    pub(crate) fn byte_range(&mut self, path: &str, span: &Span) -> Option<(usize, usize)> {
        let start = self.offset(path, span.line, span.column)?;
        let end = if span.end_line == 0 {
            start
        } else {
            self.offset(path, span.end_line, span.end_column)?
                .max(start)
        };
        Some((start, end))
    }

    /// Bytes on disk before the text of `path`: 3 for a UTF-8 BOM, else 0. Offsets
    /// into the file as it is on disk are offsets into the text plus this.
    pub(crate) fn bom_len(&self, path: &str) -> usize {
        if self.report.bom.contains(path) {
            3
        } else {
            0
        }
    }

    /// The source text that `span` covers in `path`.
    pub(crate) fn snippet(&mut self, path: &str, span: &Span) -> Option<&'a str> {
        let (start, end) = self.byte_range(path, span)?;
        self.report.sources.get(path)?.get(start..end)
    }

    /// The text of 1-based `line` in `path`, without its line ending (empty past
    /// the end of the text).
    pub(crate) fn line(&mut self, path: &str, line: u32) -> Option<&'a str> {
        if line == 0 {
            return None;
        }
        let start = self.offset(path, line, 1)?;
        let end = self.offset(path, line + 1, 1)?;
        let text = self.report.sources.get(path)?.get(start..end)?;
        Some(
            text.strip_suffix('\n')
                .map_or(text, |t| t.strip_suffix('\r').unwrap_or(t)),
        )
    }
}

/// The rustc-style lint code of a rule: `msgaudit::ack_before_commit`.
pub(crate) fn tool_code(name: &str) -> String {
    format!("msgaudit::{}", name.replace('-', "_"))
}

/// The rule catalogue as a text table: code, name, default severity, summary.
pub fn rules_table(rules: &[&RuleMeta]) -> String {
    let name_width = rules.iter().map(|r| r.name.len()).max().unwrap_or(4).max(4);
    let mut out = format!(
        "{:<5}  {:<name_width$}  {:<8}  SUMMARY\n",
        "CODE", "NAME", "SEVERITY"
    );
    for r in rules {
        let summary = r.summary;
        out.push_str(&format!(
            "{:<5}  {:<name_width$}  {:<8}  {}\n",
            r.code,
            r.name,
            r.default_severity.as_str(),
            summary
        ));
    }
    out
}

/// `msgaudit rules --packs`: every built-in pack (client library), its broker and
/// the delivery roles it declares.
pub fn packs_table(packs: &[pages::Pack]) -> String {
    let width = packs
        .iter()
        .map(|p| p.library.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let broker_width = packs
        .iter()
        .filter_map(|p| p.broker())
        .map(str::len)
        .max()
        .unwrap_or(6)
        .max(6);
    let mut out = format!("{:<width$}  {:<broker_width$}  ROLES\n", "PACK", "BROKER");
    for p in packs {
        let roles = p.delivery_roles();
        let roles = if roles.is_empty() {
            "-".to_string()
        } else {
            roles.join(", ")
        };
        out.push_str(&format!(
            "{:<width$}  {:<broker_width$}  {roles}\n",
            p.library,
            p.broker().unwrap_or("-"),
        ));
    }
    out
}

/// `msgaudit explain`: a header line, then the rule's documentation.
pub fn explain(rule: &RuleMeta) -> String {
    let mut out = format!(
        "{} {} ({})\n\n",
        rule.code,
        rule.name,
        rule.default_severity.as_str()
    );
    if rule.consequence != Consequence::Nothing {
        let _ = writeln!(
            out,
            "Consequence: {} ({}).",
            rule.consequence.as_str(),
            rule.consequence.describe()
        );
        match rule.concern.question() {
            Some(q) => {
                let _ = writeln!(out, "Review checklist: question {q}.\n");
            }
            None => out.push('\n'),
        }
    }
    if !rule.fix.is_empty() {
        let _ = writeln!(
            out,
            "Fix (safe, applied by `msgaudit check --fix`): {}\n",
            rule.fix
        );
    }
    if !rule.unsafe_fix.is_empty() {
        let _ = writeln!(
            out,
            "Fix (unsafe, applied only with `msgaudit check --fix --unsafe-fixes`): {}\n",
            rule.unsafe_fix
        );
    }
    if rule.fix.is_empty() && rule.unsafe_fix.is_empty() && rule.consequence != Consequence::Nothing
    {
        out.push_str(
            "Fix: none; the change is a decision about the program (see the fixes page).\n\n",
        );
    }
    out.push_str(unindent(rule.doc).trim_end());
    out.push('\n');
    out
}

/// Removes the one space that `/// text` doc comments leave at the start of
/// each line, when every non-empty line has it.
fn unindent(doc: &str) -> String {
    let all_indented = doc
        .lines()
        .filter(|l| !l.trim().is_empty())
        .all(|l| l.starts_with(' '));
    if !all_indented {
        return doc.to_string();
    }
    doc.lines()
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explain_has_header() {
        let text = explain(&crate::rules::UNUSED_SUPPRESSION);
        assert!(text.starts_with("MA900 unused-suppression (warning)\n\n## What it does"));
    }

    #[test]
    fn explain_strips_doc_comment_indent() {
        assert_eq!(unindent(" ## A\n\n text\n   code"), "## A\n\ntext\n  code");
        assert_eq!(unindent("## A\n x"), "## A\n x");
    }

    #[test]
    fn rules_table_lists_every_rule() {
        let table = rules_table(&crate::rules::ALL);
        assert_eq!(table.lines().count(), crate::rules::ALL.len() + 1);
        assert!(table
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("MA001  ack-before-commit "));
    }
}
