//! Output formats. Only this module knows how findings are printed, and it owns
//! the serializable types (`json.rs`), so the JSON format stays stable while the
//! core's types change.

pub mod human;
pub mod json;
pub mod short;

use crate::diagnostic::Report;
use crate::rules::RuleMeta;

pub use human::HumanOptions;

/// `--format` of `msgaudit check`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// miette diagnostics with source snippets, then a summary line.
    Human,
    /// `path:line:col: severity[CODE]: message`, one line each.
    Short,
    /// The stable machine format of SPEC §5.
    Json,
}

/// Renders a finished report. `Human` uses unicode box characters without colour
/// (deterministic, for files and tests); see [`human::render`] for the options.
pub fn render(report: &Report, format: Format) -> String {
    match format {
        Format::Human => human::render(report, &HumanOptions::default()),
        Format::Short => short::render(report),
        Format::Json => json::render(report),
    }
}

/// The rule catalogue as a text table: code, name, default severity, summary.
pub fn rules_table(rules: &[&RuleMeta]) -> String {
    let name_width = rules.iter().map(|r| r.name.len()).max().unwrap_or(4).max(4);
    let mut out = format!(
        "{:<5}  {:<name_width$}  {:<8}  SUMMARY\n",
        "CODE", "NAME", "SEVERITY"
    );
    for r in rules {
        let summary = if r.implemented {
            r.summary.to_string()
        } else {
            format!("{} (not implemented yet)", r.summary)
        };
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

/// `msgaudit explain`: a header line, then the rule's documentation.
pub fn explain(rule: &RuleMeta) -> String {
    let mut out = format!(
        "{} {} ({})\n\n",
        rule.code,
        rule.name,
        rule.default_severity.as_str()
    );
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
        let text = explain(&crate::rules::MA900);
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
