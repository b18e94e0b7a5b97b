//! The machine formats checked by the programs that read them: SARIF against the
//! official schema, rustc-json through cargo_metadata's rustc `Diagnostic` type,
//! GitHub workflow commands line by line; and snapshots of each on the demo.

use std::collections::BTreeSet;
use std::fs;
use std::time::Duration;

use assert_cmd::Command;
use cargo_metadata::diagnostic::{Diagnostic, DiagnosticLevel};
use serde_json::Value;

mod common;
mod support;
use common::sarif_schema_errors;
use support::sarif_for_snapshot;

fn run(args: &[&str]) -> (i32, String) {
    let out = Command::cargo_bin("msgaudit")
        .unwrap()
        .timeout(Duration::from_secs(60))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
    )
}

fn check(format: &str, path: &str) -> (i32, String) {
    run(&["check", "--format", format, path])
}

/// The findings of `path` in the stable JSON format, to compare counts with.
fn json_findings(path: &str) -> Vec<Value> {
    let (_, out) = check("json", path);
    let v: Value = serde_json::from_str(&out).unwrap();
    v["findings"].as_array().unwrap().clone()
}

fn assert_valid_sarif(log: &Value) {
    let errors = sarif_schema_errors(log);
    assert!(errors.is_empty(), "invalid SARIF:\n{}", errors.join("\n"));
}

#[test]
fn the_schema_check_rejects_invalid_sarif() {
    let (_, out) = check("sarif", "fixtures/demo");
    let valid: Value = serde_json::from_str(&out).unwrap();
    assert_valid_sarif(&valid);
    let mut bad = valid.clone();
    bad["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] =
        Value::from(0);
    let mut bad_level = valid;
    bad_level["runs"][0]["results"][0]["level"] = Value::from("fatal");
    // `uri-reference` is not a draft-04 format: the schema check does not test
    // URIs (`sarif::path_uri` has unit tests for that).
    for (what, log) in [("startLine 0", bad), ("level fatal", bad_level)] {
        assert!(!sarif_schema_errors(&log).is_empty(), "accepted {what}");
    }
}

#[test]
fn sarif_of_the_fixture_tree_is_valid() {
    let (code, out) = check("sarif", "fixtures");
    assert_eq!(code, 1);
    let log: Value = serde_json::from_str(&out).unwrap();
    assert_valid_sarif(&log);

    let run = &log["runs"][0];
    assert_eq!(log["version"], "2.1.0");
    assert_eq!(run["columnKind"], "unicodeCodePoints");
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["name"], "msgaudit");
    assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
    let rules = driver["rules"].as_array().unwrap();
    assert_eq!(rules.len(), msgaudit::rules::ALL.len());
    for (r, meta) in rules.iter().zip(msgaudit::rules::ALL.iter()) {
        assert_eq!(r["id"], meta.code);
        assert_eq!(r["name"], meta.name);
        assert_eq!(r["shortDescription"]["text"], meta.summary);
        assert_eq!(
            r["defaultConfiguration"]["level"],
            meta.default_severity.as_str()
        );
        assert!(!r["fullDescription"]["text"].as_str().unwrap().is_empty());
        assert!(r["help"]["markdown"]
            .as_str()
            .unwrap()
            .contains("## What it does"));
    }
    assert_eq!(run["invocations"][0]["executionSuccessful"], true);

    let results = run["results"].as_array().unwrap();
    let findings = json_findings("fixtures");
    assert_eq!(results.len(), findings.len());
    let mut fingerprints = BTreeSet::new();
    for (r, f) in results.iter().zip(&findings) {
        assert_eq!(r["ruleId"], f["code"]);
        assert_eq!(r["level"], f["severity"]);
        assert_eq!(r["message"]["text"], f["message"]);
        let index = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], f["code"]);
        let loc = &r["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], f["path"]);
        assert_eq!(loc["region"]["startLine"], f["line"]);
        assert_eq!(loc["region"]["startColumn"], f["column"]);
        assert_eq!(loc["region"]["endLine"], f["end_line"]);
        assert_eq!(loc["region"]["endColumn"], f["end_column"]);
        let related = r["relatedLocations"].as_array().map_or(0, Vec::len);
        assert_eq!(related, f["labels"].as_array().unwrap().len());
        let fp = r["partialFingerprints"]["msgaudit/v1"].as_str().unwrap();
        assert!(fingerprints.insert(fp.to_string()), "duplicate {fp}");
    }
}

#[test]
fn sarif_reports_input_errors_as_notifications() {
    let (code, out) = check("sarif", "tests/data");
    assert_eq!(code, 2);
    let log: Value = serde_json::from_str(&out).unwrap();
    assert_valid_sarif(&log);
    let invocation = &log["runs"][0]["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false);
    let notes = invocation["toolExecutionNotifications"].as_array().unwrap();
    assert_eq!(notes.len(), 2);
    assert_eq!(notes[0]["level"], "error");
    let loc = &notes[0]["locations"][0]["physicalLocation"];
    assert_eq!(
        loc["artifactLocation"]["uri"],
        "tests/data/broken/src/main.rs"
    );
    assert_eq!(loc["region"]["startLine"], 5);
}

#[test]
fn sarif_fingerprints_do_not_depend_on_the_line() {
    let src = "fixtures/ma001_ack_before_commit/bad_commit_message_before_tx_commit.rs";
    let dir = tempfile::tempdir().unwrap();
    let text = fs::read_to_string(src).unwrap();
    let fingerprint = |text: &str| {
        fs::write(dir.path().join("x.rs"), text).unwrap();
        let (_, out) = run(&[
            "check",
            "--format",
            "sarif",
            dir.path().join("x.rs").to_str().unwrap(),
        ]);
        let log: Value = serde_json::from_str(&out).unwrap();
        let r = &log["runs"][0]["results"][0];
        (
            r["partialFingerprints"]["msgaudit/v1"].clone(),
            r["locations"][0]["physicalLocation"]["region"]["startLine"].clone(),
        )
    };
    let (before, line_before) = fingerprint(&text);
    let (after, line_after) = fingerprint(&format!("// a new comment\n\n{text}"));
    assert!(before.is_string());
    assert_eq!(before, after);
    assert_ne!(line_before, line_after);
}

/// What rust-analyzer reads: every line is one rustc diagnostic.
fn rustc_diagnostics(path: &str) -> (i32, Vec<(Value, Diagnostic)>) {
    let (code, out) = check("rustc-json", path);
    let diagnostics = out
        .lines()
        .map(|line| {
            let value: Value = serde_json::from_str(line).unwrap();
            let d: Diagnostic = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("not a rustc diagnostic ({e}): {line}"));
            // Nothing the consumer does not know about, nothing it reads differently.
            assert_eq!(serde_json::to_value(&d).unwrap(), value, "{line}");
            (value, d)
        })
        .collect();
    (code, diagnostics)
}

#[test]
fn rustc_json_of_the_fixture_tree_parses_as_rustc_diagnostics() {
    let (code, diagnostics) = rustc_diagnostics("fixtures");
    assert_eq!(code, 1);
    let findings = json_findings("fixtures");
    assert_eq!(diagnostics.len(), findings.len());
    for ((_, d), f) in diagnostics.iter().zip(&findings) {
        let name = f["name"].as_str().unwrap().replace('-', "_");
        assert_eq!(d.code.as_ref().unwrap().code, format!("msgaudit::{name}"));
        assert_eq!(d.message, f["message"]);
        let level = match f["severity"].as_str().unwrap() {
            "error" => DiagnosticLevel::Error,
            _ => DiagnosticLevel::Warning,
        };
        assert_eq!(d.level, level);
        let primary: Vec<_> = d.spans.iter().filter(|s| s.is_primary).collect();
        assert_eq!(primary.len(), 1, "{}", d.message);
        let p = primary[0];
        assert_eq!(p.file_name, f["path"]);
        assert_eq!(p.line_start as u64, f["line"].as_u64().unwrap());
        assert_eq!(p.column_start as u64, f["column"].as_u64().unwrap());
        assert_eq!(p.line_end as u64, f["end_line"].as_u64().unwrap());
        assert_eq!(p.column_end as u64, f["end_column"].as_u64().unwrap());
        assert_eq!(d.spans.len(), 1 + f["labels"].as_array().unwrap().len());
        let levels: Vec<_> = d.children.iter().map(|c| c.level).collect();
        assert_eq!(levels, [DiagnosticLevel::Note, DiagnosticLevel::Help]);
        assert!(d.rendered.as_ref().unwrap().starts_with(&format!(
            "{}[{}]: ",
            f["severity"].as_str().unwrap(),
            f["code"].as_str().unwrap()
        )));
        for s in &d.spans {
            assert_span_matches_the_file(s);
        }
    }
}

/// Byte offsets, lines, character columns and the `text` lines all point at the
/// same place in the file on disk (byte offsets count a BOM, lines and columns
/// do not).
fn assert_span_matches_the_file(s: &cargo_metadata::diagnostic::DiagnosticSpan) {
    let text = fs::read_to_string(&s.file_name).unwrap();
    let (bom, text) = match text.strip_prefix('\u{feff}') {
        Some(t) => (3, t),
        None => (0, text.as_str()),
    };
    let lines: Vec<&str> = text.split('\n').collect();
    let offset = |line: usize, column: usize| {
        let start: usize = lines[..line - 1].iter().map(|l| l.len() + 1).sum();
        bom + start
            + lines[line - 1]
                .char_indices()
                .nth(column - 1)
                .map_or(lines[line - 1].len(), |(i, _)| i)
    };
    assert_eq!(
        s.byte_start as usize,
        offset(s.line_start, s.column_start),
        "{s:?}"
    );
    assert_eq!(
        s.byte_end as usize,
        offset(s.line_end, s.column_end),
        "{s:?}"
    );
    assert_eq!(s.text.len(), s.line_end - s.line_start + 1);
    for (i, t) in s.text.iter().enumerate() {
        assert_eq!(
            t.text,
            lines[s.line_start - 1 + i].trim_end_matches('\r'),
            "{s:?}"
        );
        assert!(t.highlight_start <= t.highlight_end, "{s:?}");
    }
    assert_eq!(s.text[0].highlight_start, s.column_start);
    assert_eq!(s.text.last().unwrap().highlight_end, s.column_end);
}

#[test]
fn rustc_json_reports_input_errors_with_a_primary_span() {
    let (code, diagnostics) = rustc_diagnostics("tests/data");
    assert_eq!(code, 2);
    let errors: Vec<_> = diagnostics
        .iter()
        .map(|(_, d)| d)
        .filter(|d| d.code.as_ref().unwrap().code == "msgaudit::input_error")
        .collect();
    assert_eq!(errors.len(), 2);
    let parse = errors[0];
    assert_eq!(parse.level, DiagnosticLevel::Error);
    assert_eq!(parse.spans[0].file_name, "tests/data/broken/src/main.rs");
    assert_eq!(
        (parse.spans[0].line_start, parse.spans[0].column_start),
        (5, 13)
    );
    assert_span_matches_the_file(&parse.spans[0]);
}

#[test]
fn github_has_one_command_per_finding_and_error() {
    let (code, out) = check("github", "fixtures");
    assert_eq!(code, 1);
    let findings = json_findings("fixtures");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), findings.len());
    for (line, f) in lines.iter().zip(&findings) {
        let command = if f["severity"] == "error" {
            "::error "
        } else {
            "::warning "
        };
        let prefix = format!(
            "{command}file={},line={},col={},endLine={},endColumn={},title={} {}::",
            f["path"].as_str().unwrap(),
            f["line"],
            f["column"],
            f["end_line"],
            f["end_column"],
            f["code"].as_str().unwrap(),
            f["name"].as_str().unwrap()
        );
        assert!(line.starts_with(&prefix), "{line}\nexpected {prefix}");
    }

    let (code, out) = check("github", "tests/data");
    assert_eq!(code, 2);
    assert!(
        out.contains("::error file=tests/data/broken/src/main.rs,line=5,col=13::cannot parse Rust")
    );
}

fn demo(format: &str) -> String {
    let (code, out) = check(format, "fixtures/demo");
    assert_eq!(code, 1);
    out
}

#[test]
fn demo_snapshots() {
    insta::assert_snapshot!("demo_sarif", sarif_for_snapshot(&demo("sarif")));
    insta::assert_snapshot!("demo_github", demo("github"));
    // One object per line in the output; pretty-printed here to be reviewable.
    let rustc: Vec<String> = demo("rustc-json")
        .lines()
        .map(|l| serde_json::to_string_pretty(&serde_json::from_str::<Value>(l).unwrap()).unwrap())
        .collect();
    insta::assert_snapshot!("demo_rustc_json", rustc.join("\n"));
}
