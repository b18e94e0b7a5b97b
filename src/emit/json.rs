//! `--format json` (docs/getting-started.md) and `msgaudit rules --format json`. The types here
//! are the stable schema: fields are serialized in declaration order.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::diagnostic::{Finding, Fix, InputError, Label};
use crate::report::Report;
use crate::rules::RuleMeta;

/// The JSON format's version; bumped only on incompatible changes.
pub const VERSION: u32 = 1;

#[derive(Serialize)]
pub struct JsonReport<'a> {
    pub version: u32,
    pub findings: Vec<JsonFinding<'a>>,
    pub errors: Vec<JsonError<'a>>,
    pub summary: JsonSummary<'a>,
}

#[derive(Serialize)]
pub struct JsonFinding<'a> {
    pub code: &'a str,
    pub name: &'a str,
    pub severity: &'a str,
    pub path: &'a str,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
    /// The crate (Cargo target) the place is in; none outside every package.
    #[serde(rename = "crate", skip_serializing_if = "Option::is_none")]
    pub krate: Option<&'a str>,
    pub message: &'a str,
    pub boundary: &'a str,
    pub window: &'a str,
    pub labels: Vec<JsonLabel<'a>>,
    pub help: &'a str,
    /// The finding's fix (docs/getting-started.md), when the rule knows one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<JsonFix<'a>>,
}

#[derive(Serialize)]
pub struct JsonFix<'a> {
    pub title: &'a str,
    /// `safe` (applied by `--fix`) or `unsafe` (only with `--unsafe-fixes`).
    pub applicability: &'a str,
    pub edits: Vec<JsonEdit<'a>>,
}

/// One replacement: the text from (`line`, `column`) to (`end_line`, `end_column`),
/// end exclusive, becomes `content`.
#[derive(Serialize)]
pub struct JsonEdit<'a> {
    pub path: &'a str,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
    pub content: &'a str,
}

impl<'a> From<&'a Fix> for JsonFix<'a> {
    fn from(f: &'a Fix) -> Self {
        JsonFix {
            title: &f.title,
            applicability: f.applicability.as_str(),
            edits: f
                .edits
                .iter()
                .map(|e| JsonEdit {
                    path: &e.path,
                    line: e.span.line,
                    column: e.span.column,
                    end_line: e.span.end_line,
                    end_column: e.span.end_column,
                    content: &e.content,
                })
                .collect(),
        }
    }
}

#[derive(Serialize)]
pub struct JsonLabel<'a> {
    pub path: &'a str,
    pub line: u32,
    pub column: u32,
    pub message: &'a str,
    #[serde(rename = "crate", skip_serializing_if = "Option::is_none")]
    pub krate: Option<&'a str>,
}

#[derive(Serialize)]
pub struct JsonError<'a> {
    pub path: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    pub message: &'a str,
}

#[derive(Serialize)]
pub struct JsonSummary<'a> {
    pub files: usize,
    pub analyzed: usize,
    pub skipped: &'a BTreeMap<String, usize>,
    pub findings: usize,
    pub suppressed: usize,
    pub errors: usize,
    /// Only with `--baseline`/`--write-baseline`: findings the baseline hid.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baselined: Option<usize>,
    /// Only with `--diff-base`: findings not on a changed line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outside_diff: Option<usize>,
    /// Path dependencies outside the analyzed tree, not read (calls into them are
    /// calls into another crate); left out when there are none.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub outside_dependencies: &'a [String],
    pub crates: usize,
    pub workspaces: usize,
}

/// One entry of `msgaudit rules --format json`.
#[derive(Serialize)]
pub struct JsonRule<'a> {
    pub code: &'a str,
    pub name: &'a str,
    pub severity: &'a str,
    pub summary: &'a str,
    pub boundary: &'a str,
    /// What a crash or retry at a finding does: `loss`, `duplicate`, `visibility`.
    pub consequence: &'a str,
}

impl<'a> JsonLabel<'a> {
    fn new(l: &'a Label, r: &'a Report) -> Self {
        JsonLabel {
            path: &l.path,
            line: l.span.line,
            column: l.span.column,
            message: &l.message,
            krate: r.crate_of(&l.path),
        }
    }
}

impl<'a> JsonFinding<'a> {
    /// The finding as JSON, with the crate of each place as `r` knows it.
    pub fn new(f: &'a Finding, r: &'a Report) -> Self {
        JsonFinding {
            code: f.code,
            name: f.name,
            severity: f.severity.as_str(),
            path: &f.path,
            line: f.span.line,
            column: f.span.column,
            end_line: f.span.end_line,
            end_column: f.span.end_column,
            message: &f.message,
            krate: r.crate_of(&f.path),
            boundary: &f.boundary,
            window: &f.window,
            labels: f.labels.iter().map(|l| JsonLabel::new(l, r)).collect(),
            help: &f.help,
            fix: f.fix.as_ref().map(JsonFix::from),
        }
    }
}

impl<'a> From<&'a InputError> for JsonError<'a> {
    fn from(e: &'a InputError) -> Self {
        JsonError {
            path: &e.path,
            line: e.line,
            column: e.column,
            message: &e.message,
        }
    }
}

impl<'a> From<&'a Report> for JsonReport<'a> {
    fn from(r: &'a Report) -> Self {
        JsonReport {
            version: VERSION,
            findings: r.findings.iter().map(|f| JsonFinding::new(f, r)).collect(),
            errors: r.errors.iter().map(JsonError::from).collect(),
            summary: JsonSummary {
                files: r.summary.files,
                analyzed: r.summary.analyzed,
                skipped: &r.summary.skipped,
                findings: r.summary.findings,
                suppressed: r.summary.suppressed,
                errors: r.summary.errors,
                baselined: r.summary.baselined,
                outside_diff: r.summary.outside_diff,
                outside_dependencies: &r.summary.outside_deps,
                crates: r.summary.crates,
                workspaces: r.summary.workspaces,
            },
        }
    }
}

impl<'a> From<&'a RuleMeta> for JsonRule<'a> {
    fn from(r: &'a RuleMeta) -> Self {
        JsonRule {
            code: r.code,
            name: r.name,
            severity: r.default_severity.as_str(),
            summary: r.summary,
            boundary: r.boundary,
            consequence: r.consequence.as_str(),
        }
    }
}

fn to_pretty<T: Serialize>(value: &T) -> String {
    // Serializing these types cannot fail: no maps with non-string keys, no
    // custom serializers.
    let mut s = serde_json::to_string_pretty(value).unwrap_or_default();
    s.push('\n');
    s
}

/// The report as one pretty-printed JSON document, with a final newline.
pub fn render(report: &Report) -> String {
    to_pretty(&JsonReport::from(report))
}

/// The rule catalogue as a JSON array.
pub fn render_rules(rules: &[&RuleMeta]) -> String {
    let rules: Vec<JsonRule> = rules.iter().map(|r| JsonRule::from(*r)).collect();
    to_pretty(&rules)
}

/// One client pack, for `msgaudit rules --packs --format json`.
#[derive(Serialize)]
pub struct JsonPack {
    pub library: String,
    pub file: String,
    pub broker: Option<String>,
    pub roles: Vec<&'static str>,
    pub type_roles: Vec<String>,
}

/// `msgaudit rules --packs --format json`: every built-in pack with the delivery
/// roles it declares.
pub fn render_packs(packs: &[super::pages::Pack]) -> String {
    let packs: Vec<JsonPack> = packs
        .iter()
        .map(|p| JsonPack {
            library: p.library.clone(),
            file: p.file.clone(),
            broker: p.broker().map(str::to_string),
            roles: p.delivery_roles(),
            type_roles: p.type_roles(),
        })
        .collect();
    to_pretty(&packs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_without_position_omits_line_and_column() {
        let mut report = Report::default();
        report.errors.push(InputError {
            path: "a.rs".into(),
            line: None,
            column: None,
            message: "cannot read file".into(),
        });
        report.finish();
        let v: serde_json::Value = serde_json::from_str(&render(&report)).unwrap();
        assert_eq!(
            v["errors"][0],
            serde_json::json!({"path": "a.rs", "message": "cannot read file"})
        );
        assert_eq!(v["version"], 1);
        assert_eq!(v["summary"]["errors"], 1);
    }

    #[test]
    fn rules_json_has_every_rule() {
        let v: serde_json::Value = serde_json::from_str(&render_rules(&crate::rules::ALL)).unwrap();
        assert_eq!(v.as_array().unwrap().len(), crate::rules::ALL.len());
        assert_eq!(v[0]["code"], "MA001");
        assert_eq!(v[0]["severity"], "error");
    }
}
