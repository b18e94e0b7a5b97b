//! The machine formats checked by the programs that read them: SARIF against the
//! official schema, rustc-json through cargo_metadata's rustc `Diagnostic` type,
//! GitHub workflow commands line by line; and snapshots of each on the demo.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::time::Duration;

use assert_cmd::Command;
use cargo_metadata::diagnostic::{Diagnostic, DiagnosticLevel};
use cargo_metadata::Message;
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

/// What rust-analyzer and cargo_metadata read: every line is a cargo
/// `compiler-message` whose `message` is a rustc diagnostic. Returns each line's
/// JSON value with the diagnostic.
fn rustc_diagnostics(path: &str) -> (i32, Vec<(Value, Diagnostic)>) {
    let (code, out) = check("rustc-json", path);
    let messages: Vec<Message> = Message::parse_stream(out.as_bytes())
        .map(Result::unwrap)
        .collect();
    assert_eq!(messages.len(), out.lines().count());
    let diagnostics = out
        .lines()
        .zip(messages)
        .map(|(line, message)| {
            let value: Value = serde_json::from_str(line).unwrap();
            let Message::CompilerMessage(m) = message else {
                panic!("not a compiler message: {line}");
            };
            assert_eq!(value["reason"], "compiler-message");
            assert_eq!(value["package_id"], m.package_id.repr.as_str());
            let manifest = value["manifest_path"].as_str().unwrap();
            assert!(Path::new(manifest).is_absolute() && Path::new(manifest).is_file());
            // cargo prints `required-features` only when there are some.
            let mut target = serde_json::to_value(&m.target).unwrap();
            if target["required-features"] == Value::Array(Vec::new()) {
                target.as_object_mut().unwrap().remove("required-features");
            }
            assert_eq!(target, value["target"]);
            // Nothing the consumer does not know about, nothing it reads differently
            // (but rustc's `$message_type` tag, which cargo_metadata does not keep).
            let mut diagnostic = value["message"].clone();
            assert_eq!(
                diagnostic.as_object_mut().unwrap().remove("$message_type"),
                Some(Value::from("diagnostic"))
            );
            assert_eq!(
                serde_json::to_value(&m.message).unwrap(),
                diagnostic,
                "{line}"
            );
            (value, m.message)
        })
        .collect();
    (code, diagnostics)
}

/// `cargo metadata --no-deps` of the package at `dir`: its id, manifest path and
/// targets, as cargo itself names them (cargo resolves nothing with `--no-deps`).
fn cargo_metadata_of(dir: &Path) -> Vec<(String, String, Vec<Value>)> {
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--no-deps",
            "--offline",
            "--format-version",
            "1",
        ])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let targets = p["targets"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    let mut t = t.clone();
                    // Not in a compiler-message's target.
                    t.as_object_mut().unwrap().remove("required-features");
                    t
                })
                .collect();
            (
                p["id"].as_str().unwrap().to_string(),
                p["manifest_path"].as_str().unwrap().to_string(),
                targets,
            )
        })
        .collect()
}

#[test]
fn rustc_json_names_packages_and_targets_as_cargo_does() {
    // The demo (a binary), and a workspace with inherited versions, a library whose
    // name is not its directory's, binaries, tests and YAML beside the code.
    let demo = fs::canonicalize("fixtures/demo").unwrap();
    let (_, lines) = rustc_diagnostics("fixtures/demo");
    assert!(!lines.is_empty());
    let cargo = cargo_metadata_of(&demo);
    for (v, _) in &lines {
        assert_eq!(v["package_id"], cargo[0].0.as_str());
        assert_eq!(v["manifest_path"], cargo[0].1.as_str());
        assert_eq!(v["target"], cargo[0].2[0]);
    }

    let t = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(t.path()).unwrap();
    let handler = fs::read_to_string(
        "fixtures/ma001_ack_before_commit/bad_commit_message_before_tx_commit.rs",
    )
    .unwrap();
    let write = |rel: &str, text: &str| {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    };
    write(
        "Cargo.toml",
        "[workspace]\nmembers = [\"svc\", \"lib dir\"]\nresolver = \"2\"\n\
         [workspace.package]\nversion = \"2.0.1\"\nedition = \"2021\"\n",
    );
    write(
        "svc/Cargo.toml",
        "[package]\nname = \"svc\"\nversion.workspace = true\nedition.workspace = true\n",
    );
    write("svc/src/main.rs", "mod consumer;\nfn main() {}\n");
    write("svc/src/consumer.rs", &handler);
    write("svc/src/bin/replay.rs", &handler);
    write(
        "lib dir/Cargo.toml",
        "[package]\nname = \"events-lib\"\nedition = \"2018\"\n",
    );
    write("lib dir/src/lib.rs", &handler);
    write("lib dir/tests/it.rs", &handler);
    let cargo = cargo_metadata_of(&root);
    // Test targets are analyzed only with `include_tests`.
    write("msgaudit.toml", "include_tests = true\n");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_msgaudit"))
        .args(["check", "--format", "rustc-json", "."])
        .current_dir(&root)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let mut seen = BTreeSet::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let file = v["message"]["spans"][0]["file_name"].as_str().unwrap();
        let (_, manifest, targets) = cargo
            .iter()
            .find(|(id, _, _)| v["package_id"] == id.as_str())
            .unwrap_or_else(|| panic!("{file}: package not cargo's: {}", v["package_id"]));
        assert_eq!(v["manifest_path"], manifest.as_str());
        assert!(targets.contains(&v["target"]), "{file}: {}", v["target"]);
        seen.insert((
            file.to_string(),
            v["target"]["name"].as_str().unwrap().to_string(),
        ));
    }
    let expected: BTreeSet<(String, String)> = [
        ("lib dir/src/lib.rs", "events_lib"),
        ("lib dir/tests/it.rs", "it"),
        ("svc/src/bin/replay.rs", "replay"),
        ("svc/src/consumer.rs", "svc"),
    ]
    .iter()
    .map(|(f, t)| (f.to_string(), t.to_string()))
    .collect();
    assert_eq!(seen, expected, "{text}");
}

#[test]
fn rustc_json_leaves_out_files_in_no_package() {
    let t = tempfile::tempdir().unwrap();
    fs::copy(
        "fixtures/ma001_ack_before_commit/bad_commit_message_before_tx_commit.rs",
        t.path().join("x.rs"),
    )
    .unwrap();
    let run = |format: &str| {
        Command::cargo_bin("msgaudit")
            .unwrap()
            .args(["check", "--format", format, "."])
            .current_dir(t.path())
            .output()
            .unwrap()
    };
    let short = run("short");
    assert_eq!(String::from_utf8(short.stdout).unwrap().lines().count(), 1);
    let rustc = run("rustc-json");
    assert_eq!(rustc.status.code(), Some(1));
    assert_eq!(String::from_utf8(rustc.stdout).unwrap(), "");
    // Said on stderr, which rust-analyzer does not read.
    let stderr = String::from_utf8(rustc.stderr).unwrap();
    assert!(
        stderr.contains("1 finding in files outside every Cargo package left out of rustc-json"),
        "{stderr}"
    );
}

#[test]
fn rustc_json_of_the_fixture_tree_parses_as_rustc_diagnostics() {
    let (code, diagnostics) = rustc_diagnostics("fixtures");
    assert_eq!(code, 1);
    // A finding in a file of no package (a workspace's virtual manifest beside a deploy
    // template) is left out of rustc-json: every other one is there, in order.
    // (The nearest manifest decides, as for Cargo.)
    let in_a_package = |path: &str| {
        Path::new(path)
            .ancestors()
            .skip(1)
            .find_map(|dir| fs::read_to_string(dir.join("Cargo.toml")).ok())
            .is_some_and(|m| m.contains("[package]"))
    };
    let all = json_findings("fixtures");
    let findings: Vec<&Value> = all
        .iter()
        .filter(|f| in_a_package(f["path"].as_str().unwrap()))
        .collect();
    assert!(
        findings.len() < all.len(),
        "the tree has a finding outside every package"
    );
    assert_eq!(diagnostics.len(), findings.len());
    for ((_, d), f) in diagnostics.iter().zip(findings) {
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
        match f.get("fix") {
            // A fix is a third child, a `help` whose spans carry the replacements
            // (SPEC §4, "Fixes"), as rustc writes a suggestion.
            Some(fix) => {
                assert_eq!(
                    levels,
                    [
                        DiagnosticLevel::Note,
                        DiagnosticLevel::Help,
                        DiagnosticLevel::Help
                    ]
                );
                let edits = fix["edits"].as_array().unwrap();
                let help = &d.children[2];
                assert_eq!(help.spans.len(), edits.len(), "{}", d.message);
                for (s, e) in help.spans.iter().zip(edits) {
                    assert_eq!(
                        s.suggested_replacement.as_deref(),
                        e["content"].as_str(),
                        "{}",
                        d.message
                    );
                    assert_eq!(s.line_start as u64, e["line"].as_u64().unwrap());
                    assert_eq!(s.column_start as u64, e["column"].as_u64().unwrap());
                    assert_span_matches_the_file(s);
                }
            }
            None => assert_eq!(levels, [DiagnosticLevel::Note, DiagnosticLevel::Help]),
        }
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
    // Absolute paths (package id, manifest, target) differ between checkouts.
    let root = fs::canonicalize(".").unwrap();
    let root = root.to_str().unwrap();
    let rustc: Vec<String> = demo("rustc-json")
        .replace(root, "[ROOT]")
        .lines()
        .map(|l| serde_json::to_string_pretty(&serde_json::from_str::<Value>(l).unwrap()).unwrap())
        .collect();
    insta::assert_snapshot!("demo_rustc_json", rustc.join("\n"));
}
