//! `--format sarif`: one SARIF 2.1.0 log (OASIS, errata 01) with one run, for
//! GitHub code scanning (`github/codeql-action/upload-sarif`) and SARIF viewers.
//!
//! - `tool.driver` is msgaudit with its version, its home page (`informationUri`,
//!   Cargo.toml's `homepage`) and every rule of [`rules::ALL`](crate::rules::ALL) as
//!   a `reportingDescriptor`: its documentation page as `helpUri`
//!   ([`RuleMeta::doc_url`]), its explanation as `help.markdown` and as plain text
//!   in `help.text`.
//! - Each finding is a `result` with its rule, level, message and primary location;
//!   its labels are `relatedLocations` with their messages; boundary, window and
//!   help are in the result's `properties`.
//! - Findings suppressed in the source (`msgaudit:allow(…)`) are results too, with
//!   `suppressions: [{kind: inSource, justification}]` (the comment's reason), so
//!   that code scanning shows them as closed rather than forgetting them.
//! - Relative artifact URIs are relative to `%SRCROOT%` (`uriBaseId`), the
//!   directory msgaudit ran in, which `originalUriBaseIds` gives as a `file:` URI.
//! - Columns count characters (`columnKind: unicodeCodePoints`), `endColumn` is
//!   exclusive, as in SARIF.
//! - `partialFingerprints["msgaudit/v1"]` hashes the rule, the path and the
//!   finding's own source text (whitespace collapsed), plus the number of earlier
//!   findings with the same hash: it survives edits that move the finding to
//!   another line.
//! - Input errors are `toolExecutionNotifications` of the one invocation, whose
//!   `executionSuccessful` is false when there are any.

use std::collections::BTreeMap;

use serde_json::{json, Value};
use serde_sarif::sarif::{
    ArtifactLocation, Invocation, Location, Message, MultiformatMessageString, Notification,
    PhysicalLocation, PropertyBag, Region, ReportingConfiguration, ReportingDescriptor,
    Result as SarifResult, ResultLevel, Run, Sarif, Suppression, Tool, ToolComponent,
};

use super::{escape, plain, unindent, Sources};
use crate::diagnostic::{Finding, InputError, Severity, Span};
use crate::report::Report;
use crate::rules::{RuleMeta, ALL, HOMEPAGE};

/// `$schema` of the log: the official schema's `id`.
pub const SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// Key of the fingerprint in `partialFingerprints`; the suffix changes when the
/// way it is computed does.
pub const FINGERPRINT_KEY: &str = "msgaudit/v1";

/// The `uriBaseId` of relative artifact URIs: the directory msgaudit ran in, which
/// display paths are relative to.
pub const SRCROOT: &str = "%SRCROOT%";

/// The report as one pretty-printed SARIF document, with a final newline.
pub fn render(report: &Report) -> String {
    let log = escape::with_raw_paths(&report.raw_paths, || to_sarif(report));
    // Serializing these types cannot fail: every map has string keys.
    let mut s = serde_json::to_string_pretty(&log).unwrap_or_default();
    s.push('\n');
    s
}

/// The report as a SARIF log.
pub fn to_sarif(report: &Report) -> Sarif {
    let mut sources = Sources::new(report);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    // Reported and suppressed findings in one order (path, line, column, code), so
    // that a fingerprint's repeat count does not change when a suppression is added.
    let mut all: Vec<(&Finding, Option<&str>)> = report
        .findings
        .iter()
        .map(|f| (f, None))
        .chain(
            report
                .suppressed
                .iter()
                .map(|s| (&s.finding, Some(s.justification.as_str()))),
        )
        .collect();
    all.sort_by(|(a, _), (b, _)| a.sort_key().cmp(&b.sort_key()).then(a.span.cmp(&b.span)));
    let results: Vec<SarifResult> = all
        .into_iter()
        .map(|(f, justification)| {
            let hash = fingerprint_hash(f, &mut sources);
            let n = seen.entry(hash.clone()).or_default();
            let fingerprint = format!("{hash}:{n}");
            *n += 1;
            let mut r = result(f, fingerprint);
            if let Some(justification) = justification {
                r.suppressions = Some(vec![suppression(justification)]);
            }
            r
        })
        .collect();
    let notifications: Vec<Notification> = report.errors.iter().map(notification).collect();
    let mut summary = BTreeMap::new();
    summary.insert(
        "msgaudit/summary".to_string(),
        json!({
            "files": report.summary.files,
            "analyzed": report.summary.analyzed,
            "skipped": report.summary.skipped,
            "findings": report.summary.findings,
            "suppressed": report.summary.suppressed,
            "errors": report.summary.errors,
        }),
    );
    let mut invocation = Invocation::builder()
        .execution_successful(report.errors.is_empty())
        .properties(
            PropertyBag::builder()
                .additional_properties(summary)
                .build(),
        )
        .build();
    if !notifications.is_empty() {
        invocation.tool_execution_notifications = Some(notifications);
    }
    let driver = ToolComponent::builder()
        .name("msgaudit")
        .version(env!("CARGO_PKG_VERSION"))
        .semantic_version(env!("CARGO_PKG_VERSION"))
        .information_uri(HOMEPAGE)
        .short_description(text(env!("CARGO_PKG_DESCRIPTION")))
        .rules(ALL.iter().map(|r| descriptor(r)).collect::<Vec<_>>())
        .build();
    let mut run = Run::builder()
        .tool(Tool::builder().driver(driver).build())
        .invocations(vec![invocation])
        .results(results)
        .column_kind(json!("unicodeCodePoints"))
        .build();
    run.original_uri_base_ids = Some(BTreeMap::from([(SRCROOT.to_string(), srcroot())]));
    Sarif::builder()
        .schema(SCHEMA)
        .version(json!("2.1.0"))
        .runs(vec![run])
        .build()
}

fn text(s: &str) -> MultiformatMessageString {
    MultiformatMessageString::builder().text(s).build()
}

/// Markdown as `markdown`, and as plain text in `text`.
fn markdown(md: &str) -> MultiformatMessageString {
    let text = plain::markdown_to_text(md);
    MultiformatMessageString::builder()
        .text(text.trim_end())
        .markdown(md)
        .build()
}

/// `%SRCROOT%`: the current directory as an absolute `file:` URI ending in `/`
/// (SARIF §3.14.14); without `uri` when the directory is unknown or not UTF-8.
fn srcroot() -> ArtifactLocation {
    let dir = std::env::current_dir().ok();
    let dir = dir.as_deref().and_then(std::path::Path::to_str).map(|d| {
        let d = d.replace(std::path::MAIN_SEPARATOR, "/");
        if d.ends_with('/') {
            d
        } else {
            format!("{d}/")
        }
    });
    let mut location = ArtifactLocation::builder()
        .description(Message::from(
            "The directory msgaudit ran in: relative paths in this log are relative to it.",
        ))
        .build();
    location.uri = dir.map(|d| path_uri(&d));
    location
}

fn suppression(justification: &str) -> Suppression {
    let mut s = Suppression::builder().kind(json!("inSource")).build();
    if !justification.is_empty() {
        s.justification = Some(justification.to_string());
    }
    s
}

fn level(severity: Severity) -> ResultLevel {
    match severity {
        Severity::Error => ResultLevel::Error,
        Severity::Warning => ResultLevel::Warning,
    }
}

/// The first paragraph of the rule's "What it does" section (or of its doc).
fn first_paragraph(doc: &str) -> String {
    let body = doc
        .split_once("## What it does")
        .map_or(doc, |(_, rest)| rest);
    body.trim_start()
        .split("\n\n")
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn descriptor(rule: &RuleMeta) -> ReportingDescriptor {
    let doc = unindent(rule.doc);
    let doc = doc.trim_end();
    let configuration = ReportingConfiguration::builder()
        .level(json!(rule.default_severity.as_str()))
        .build();
    let mut properties = BTreeMap::new();
    properties.insert("boundary".to_string(), json!(rule.boundary));
    properties.insert("consequence".to_string(), json!(rule.consequence.as_str()));
    properties.insert("tags".to_string(), json!(["reliability"]));
    ReportingDescriptor::builder()
        .id(rule.code)
        .name(rule.name)
        .short_description(text(rule.summary))
        .full_description(markdown(&first_paragraph(doc)))
        .help(markdown(doc))
        .help_uri(rule.doc_url())
        .default_configuration(configuration)
        .properties(
            PropertyBag::builder()
                .additional_properties(properties)
                .build(),
        )
        .build()
}

/// A relative URI reference for a display path: no leading `./`, and every byte
/// outside RFC 3986's unreserved set and the `/` separators percent-encoded
/// ([`escape::uri_path`]): a `\` is a character of a file name (display paths
/// always separate with `/`), so it is encoded, never turned into a separator.
/// Absolute paths become `file://` URIs.
pub fn path_uri(path: &str) -> String {
    let mut rest = path;
    while let Some(r) = rest.strip_prefix("./") {
        rest = r;
    }
    let bytes = rest.as_bytes();
    // `C:/x` on Windows; elsewhere `C:` is a directory name like any other.
    let drive = cfg!(windows)
        && bytes.len() >= 3
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && bytes[2] == b'/';
    let prefix = if rest.starts_with('/') {
        "file://"
    } else if drive {
        "file:///"
    } else {
        ""
    };
    format!("{prefix}{}", escape::uri_path(rest, drive.then_some(1)))
}

/// The region of a span; `None` for a span without a line (positions unknown).
fn region(span: &Span) -> Option<Region> {
    if span.line == 0 {
        return None;
    }
    let mut r = Region::builder().start_line(span.line as i64).build();
    if span.column > 0 {
        r.start_column = Some(span.column as i64);
    }
    if span.end_line >= span.line && span.end_column > 0 {
        r.end_line = Some(span.end_line as i64);
        r.end_column = Some(span.end_column as i64);
    }
    Some(r)
}

/// The location of a file by its display path: relative to `%SRCROOT%`, or an
/// absolute `file:` URI.
fn artifact(path: &str) -> ArtifactLocation {
    let uri = path_uri(path);
    let mut a = ArtifactLocation::builder().build();
    if !uri.starts_with("file:") {
        a.uri_base_id = Some(SRCROOT.to_string());
    }
    a.uri = Some(uri);
    a
}

fn physical(path: &str, region: Option<Region>) -> PhysicalLocation {
    let mut p = PhysicalLocation::builder()
        .artifact_location(artifact(path))
        .build();
    p.region = region;
    p
}

/// A finding's fix as SARIF: one `artifactChange` per file, each edit a
/// `replacement` of its `deletedRegion` by its `insertedContent`.
fn sarif_fix(fix: &crate::diagnostic::Fix) -> serde_sarif::sarif::Fix {
    use serde_sarif::sarif::{ArtifactChange, ArtifactContent, Replacement};
    let mut changes: Vec<ArtifactChange> = Vec::new();
    for e in &fix.edits {
        let Some(deleted) = region(&e.span) else {
            continue;
        };
        let replacement = Replacement::builder()
            .deleted_region(deleted)
            .inserted_content(ArtifactContent::builder().text(e.content.clone()).build())
            .build();
        let uri = artifact(&e.path);
        match changes.iter_mut().find(|c| c.artifact_location == uri) {
            Some(c) => c.replacements.push(replacement),
            None => changes.push(
                ArtifactChange::builder()
                    .artifact_location(uri)
                    .replacements(vec![replacement])
                    .build(),
            ),
        }
    }
    serde_sarif::sarif::Fix::builder()
        .description(Message::from(fix.title.as_str()))
        .artifact_changes(changes)
        .build()
}

fn result(f: &Finding, fingerprint: String) -> SarifResult {
    let rule_index = ALL.iter().position(|r| r.code == f.code);
    let location = Location::builder()
        .physical_location(physical(&f.path, region(&f.span)))
        .build();
    let related: Vec<Location> = f
        .labels
        .iter()
        .enumerate()
        .map(|(i, l)| {
            Location::builder()
                .id(i as i64 + 1)
                .physical_location(physical(&l.path, region(&l.span)))
                .message(Message::from(l.message.as_str()))
                .build()
        })
        .collect();
    let mut properties = BTreeMap::new();
    for (key, value) in [
        ("boundary", &f.boundary),
        ("window", &f.window),
        ("help", &f.help),
    ] {
        if !value.is_empty() {
            properties.insert(key.to_string(), Value::from(value.as_str()));
        }
    }
    let mut r = SarifResult::builder()
        .rule_id(f.code)
        .level(level(f.severity))
        .message(Message::from(f.message.as_str()))
        .locations(vec![location])
        .partial_fingerprints(BTreeMap::from([(FINGERPRINT_KEY.to_string(), fingerprint)]))
        .build();
    r.rule_index = rule_index.map(|i| i as i64);
    if let Some(fix) = &f.fix {
        r.fixes = Some(vec![sarif_fix(fix)]);
    }
    if !related.is_empty() {
        r.related_locations = Some(related);
    }
    if !properties.is_empty() {
        r.properties = Some(
            PropertyBag::builder()
                .additional_properties(properties)
                .build(),
        );
    }
    r
}

fn notification(e: &InputError) -> Notification {
    let span = Span {
        line: e.line.unwrap_or(0),
        column: e.column.unwrap_or(0),
        ..Span::default()
    };
    let mut n = Notification::builder()
        .message(Message::from(e.message.as_str()))
        .level(json!("error"))
        .build();
    if !e.path.is_empty() {
        n.locations = Some(vec![Location::builder()
            .physical_location(physical(&e.path, region(&span)))
            .build()]);
    }
    n
}

/// FNV-1a, 64 bits: a hash that does not change between Rust releases or runs
/// (unlike `std`'s `DefaultHasher`), which is what a fingerprint needs.
fn fnv1a(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        // A separator that cannot occur in text keeps ("ab", "c") apart from ("a", "bc").
        for b in part.bytes().chain(std::iter::once(0xff)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// Hash of rule, path and the finding's source text with whitespace collapsed
/// (the message when the report has no text for the file).
fn fingerprint_hash(f: &Finding, sources: &mut Sources) -> String {
    let snippet = sources
        .snippet(&f.path, &f.span)
        .filter(|s| !s.trim().is_empty())
        .unwrap_or(&f.message);
    let normalized = snippet.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("{:016x}", fnv1a(&[f.code, &f.path, &normalized]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Label;

    fn finding(path: &str, line: u32) -> Finding {
        Finding {
            code: "MA001",
            name: "ack-before-commit",
            severity: Severity::Error,
            path: path.into(),
            span: Span {
                line,
                column: 5,
                end_line: line,
                end_column: 12,
                ..Span::default()
            },
            message: "m".into(),
            boundary: "b".into(),
            window: "w".into(),
            labels: vec![Label {
                path: path.into(),
                span: Span::default(),
                message: "l".into(),
            }],
            help: "h".into(),
            fix: None,
        }
    }

    #[test]
    fn uris_are_relative_references_or_file_uris() {
        assert_eq!(path_uri("src/a.rs"), "src/a.rs");
        assert_eq!(path_uri("./src/a b#1.rs"), "src/a%20b%231.rs");
        assert_eq!(path_uri("src/é.rs"), "src/%C3%A9.rs");
        // A backslash is part of a file name: encoded, not a separator.
        assert_eq!(path_uri("src/back\\slash.rs"), "src/back%5Cslash.rs");
        assert_eq!(path_uri("a:b.rs"), "a%3Ab.rs");
        assert_eq!(path_uri("/tmp/x.rs"), "file:///tmp/x.rs");
        if cfg!(windows) {
            assert_eq!(path_uri("C:/x/y.rs"), "file:///C:/x/y.rs");
        } else {
            assert_eq!(path_uri("C:/x/y.rs"), "C%3A/x/y.rs");
        }
    }

    #[test]
    fn fingerprint_ignores_the_line_and_counts_repeats() {
        let text_a = "fn f() {\n    commit(m);\n}\n";
        let text_b = "// moved\n\nfn f() {\n    commit(m);\n}\n";
        let mut a = Report::default();
        a.sources.insert("x.rs".into(), text_a.into());
        a.findings.push(finding("x.rs", 2));
        let mut b = Report::default();
        b.sources.insert("x.rs".into(), text_b.into());
        b.findings.push(finding("x.rs", 4));
        b.findings.push(finding("x.rs", 4));
        let fa = to_sarif(&a).runs[0].results.as_ref().unwrap()[0]
            .partial_fingerprints
            .clone()
            .unwrap();
        let rb = to_sarif(&b).runs[0].results.clone().unwrap();
        let fb: Vec<_> = rb
            .iter()
            .map(|r| r.partial_fingerprints.as_ref().unwrap()[FINGERPRINT_KEY].clone())
            .collect();
        assert_eq!(fa[FINGERPRINT_KEY], fb[0]);
        assert!(fb[0].ends_with(":0") && fb[1].ends_with(":1"), "{fb:?}");
        assert_eq!(fb[0].split(':').next(), fb[1].split(':').next());
    }

    #[test]
    fn suppressed_findings_are_results_with_their_justification() {
        let text = "fn f() {\n    commit(m);\n    commit(m);\n}\n";
        let mut open = Report::default();
        open.sources.insert("x.rs".into(), text.into());
        open.findings.push(finding("x.rs", 2));
        open.findings.push(finding("x.rs", 3));
        let mut one_suppressed = open.clone();
        let first = one_suppressed.findings.remove(0);
        one_suppressed
            .suppressed
            .push(crate::diagnostic::Suppressed {
                finding: first,
                justification: "replayed".into(),
            });
        let a = to_sarif(&open).runs[0].results.clone().unwrap();
        let b = to_sarif(&one_suppressed).runs[0].results.clone().unwrap();
        assert_eq!(b.len(), 2);
        assert!(a.iter().all(|r| r.suppressions.is_none()));
        let s = b[0].suppressions.as_ref().unwrap();
        assert_eq!(s[0].kind, json!("inSource"));
        assert_eq!(s[0].justification.as_deref(), Some("replayed"));
        assert!(b[1].suppressions.is_none());
        // Same fingerprints, repeat counts included, with or without the suppression.
        let prints = |rs: &[SarifResult]| -> Vec<_> {
            rs.iter().map(|r| r.partial_fingerprints.clone()).collect()
        };
        assert_eq!(prints(&a), prints(&b));
        let location = &b[1].locations.as_ref().unwrap()[0];
        let artifact = location
            .physical_location
            .as_ref()
            .unwrap()
            .artifact_location
            .as_ref()
            .unwrap();
        assert_eq!(artifact.uri_base_id.as_deref(), Some(SRCROOT));
    }

    #[test]
    fn unknown_positions_have_no_region() {
        assert!(region(&Span::default()).is_none());
        let r = region(&Span {
            line: 3,
            column: 1,
            ..Span::default()
        })
        .unwrap();
        assert_eq!((r.start_line, r.end_line), (Some(3), None));
    }

    #[test]
    fn first_paragraph_of_what_it_does() {
        assert_eq!(
            first_paragraph("## What it does\n\nFinds\nthings.\n\n## Why"),
            "Finds things."
        );
    }
}
