//! SARIF checked by its reference consumer: the official SARIF Multitool
//! (`npx @microsoft/sarif-multitool validate`, Microsoft's SARIF SDK, the validator
//! behind the SARIF web validator) on the demo's SARIF and on a tree with an
//! in-source suppression (`tests/data_sarif`), expecting no error and no warning.
//! Beside it, the suppressed result's shape, which only SARIF shows.
//!
//! Without `npx` on the PATH, or when npm cannot fetch the multitool, the validation
//! is skipped with a message, unless `CI` or `MSGAUDIT_REQUIRE_NPX` is set (`.ci/run`
//! installs npm and sets the latter): there it fails.

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

mod common;
use common::{msgaudit, npx_found, sarif_schema_errors, skip_npx_test};

/// The multitool, pinned so that a new release's rules show up as a deliberate
/// update rather than as a failure out of the blue.
const MULTITOOL: &str = "@microsoft/sarif-multitool@5.7.0";

fn skip(why: &str) {
    skip_npx_test(
        why,
        "install npm (apt-get install npm)",
        "install npm to run the SARIF Multitool tests",
    );
}

fn npx_available() -> bool {
    let found = npx_found();
    if !found {
        skip("npx is not installed");
    }
    found
}

/// `msgaudit check --format sarif PATH`, run from the repository root.
fn sarif_of(path: &str) -> String {
    let out = msgaudit()
        .args(["check", "--format", "sarif", path])
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// What the multitool reports on `sarif` at its default failure levels (error and
/// warning), one line per result; `None` when it could not be run.
fn multitool_findings(sarif: &str, name: &str) -> Option<Vec<String>> {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join(format!("{name}.sarif"));
    let output = dir.path().join("validation.sarif");
    fs::write(&input, sarif).unwrap();
    let out = Command::new("npx")
        .args(["--yes", MULTITOOL, "validate", "-o"])
        .arg(&output)
        .arg(&input)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let report = fs::read_to_string(&output).ok();
    let Some(report) = report else {
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        skip(&format!("the SARIF Multitool did not run:\n{text}"));
        return None;
    };
    let log: Value = serde_json::from_str(&report).unwrap();
    let run = &log["runs"][0];
    let mut found = Vec::new();
    for n in run["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .into_iter()
        .flatten()
    {
        found.push(format!("tool notification: {}", n["message"]["text"]));
    }
    for r in run["results"].as_array().into_iter().flatten() {
        // A result's level defaults to warning (SARIF §3.27.10).
        let level = r["level"].as_str().unwrap_or("warning");
        if matches!(level, "error" | "warning") {
            // The message is a `text`, or a message `id` with its `arguments`.
            found.push(format!(
                "{level} {}: {}",
                r["ruleId"].as_str().unwrap_or("?"),
                r["message"]["text"]
                    .as_str()
                    .map_or_else(|| r["message"].to_string(), str::to_string)
            ));
        }
    }
    assert!(
        out.status.success() || !found.is_empty(),
        "the multitool failed without reporting why:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    Some(found)
}

fn assert_multitool_clean(path: &str) {
    if !npx_available() {
        return;
    }
    let sarif = sarif_of(path);
    if let Some(found) = multitool_findings(&sarif, "msgaudit") {
        assert!(
            found.is_empty(),
            "the SARIF Multitool reports on the SARIF of {path}:\n{}",
            found.join("\n")
        );
    }
}

#[test]
fn the_multitool_accepts_the_demo() {
    assert_multitool_clean("fixtures/demo");
}

#[test]
fn the_multitool_accepts_suppressed_results() {
    assert_multitool_clean("tests/data_sarif");
}

/// The check is real: the multitool does report what it should (a log whose
/// driver lost its `informationUri`: SARIF2005, and a relative `%SRCROOT%`:
/// SARIF1004).
#[test]
fn the_multitool_check_rejects_a_flawed_log() {
    if !npx_available() {
        return;
    }
    let mut log: Value = serde_json::from_str(&sarif_of("fixtures/demo")).unwrap();
    let run = &mut log["runs"][0];
    run["tool"]["driver"]
        .as_object_mut()
        .unwrap()
        .remove("informationUri");
    run["originalUriBaseIds"]["%SRCROOT%"]["uri"] = Value::from("relative/");
    let text = serde_json::to_string_pretty(&log).unwrap();
    if let Some(found) = multitool_findings(&text, "flawed") {
        assert!(found.iter().any(|f| f.contains("SARIF2005")), "{found:?}");
        assert!(found.iter().any(|f| f.contains("SARIF1004")), "{found:?}");
    }
}

#[test]
fn suppressed_findings_are_kept_in_sarif_only() {
    let log: Value = serde_json::from_str(&sarif_of("tests/data_sarif")).unwrap();
    let errors = sarif_schema_errors(&log);
    assert!(errors.is_empty(), "invalid SARIF:\n{}", errors.join("\n"));
    let run = &log["runs"][0];
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{results:#?}");
    let (suppressed, open): (Vec<&Value>, Vec<&Value>) = results
        .iter()
        .partition(|r| r.get("suppressions").is_some());
    assert_eq!((suppressed.len(), open.len()), (1, 1));
    assert_eq!(
        suppressed[0]["suppressions"],
        serde_json::json!([{
            "kind": "inSource",
            "justification": "reservations are re-derived nightly from the orders table"
        }])
    );
    assert_eq!(
        suppressed[0]["locations"][0]["physicalLocation"]["region"]["startLine"],
        73
    );
    let summary = &run["invocations"][0]["properties"]["msgaudit/summary"];
    assert_eq!(
        (summary["findings"].as_u64(), summary["suppressed"].as_u64()),
        (Some(1), Some(1))
    );
    let fingerprints: Vec<&Value> = results
        .iter()
        .map(|r| &r["partialFingerprints"]["msgaudit/v1"])
        .collect();
    assert_ne!(fingerprints[0], fingerprints[1]);

    // Every other format leaves it out (and counts it).
    let out = msgaudit()
        .args(["check", "--format", "json", "tests/data_sarif"])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["findings"].as_array().unwrap().len(), 1);
    assert_eq!(json["findings"][0]["line"], 92);
    assert_eq!(json["summary"]["suppressed"], 1);
    for format in ["short", "github", "rustc-json", "human"] {
        let out = msgaudit()
            .args(["check", "--format", format, "tests/data_sarif"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            !text.contains(":73:") && !text.contains("line=73,"),
            "{format}: {text}"
        );
    }
}

#[test]
fn artifact_uris_are_relative_to_srcroot() {
    let log: Value = serde_json::from_str(&sarif_of("fixtures/demo")).unwrap();
    let run = &log["runs"][0];
    let root = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
        .as_str()
        .unwrap();
    assert!(
        root.starts_with("file:///") && root.ends_with('/'),
        "{root}"
    );
    let cwd = std::env::current_dir().unwrap();
    assert!(
        root.trim_end_matches('/')
            .ends_with(cwd.file_name().unwrap().to_str().unwrap()),
        "{root} is not {}",
        cwd.display()
    );
    for r in run["results"].as_array().unwrap() {
        let a = &r["locations"][0]["physicalLocation"]["artifactLocation"];
        assert_eq!(a["uriBaseId"], "%SRCROOT%");
        let uri = a["uri"].as_str().unwrap();
        assert!(uri.starts_with("fixtures/demo/"), "{uri}");
        assert!(Path::new(uri).exists(), "{uri}");
    }
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["informationUri"], env!("CARGO_PKG_HOMEPAGE"));
    for rule in driver["rules"].as_array().unwrap() {
        let code = rule["id"].as_str().unwrap();
        let name = ::msgaudit::rules::lookup(code).unwrap().name;
        assert_eq!(
            rule["helpUri"],
            format!(
                "{}/blob/main/docs/rules/{code}-{name}.md",
                env!("CARGO_PKG_REPOSITORY")
            )
        );
        let page = format!("docs/rules/{code}-{name}.md");
        assert!(Path::new(&page).is_file(), "{page}");
        let text = rule["help"]["text"].as_str().unwrap();
        let markdown = rule["help"]["markdown"].as_str().unwrap();
        assert!(markdown.contains("## What it does"), "{code}");
        // Code blocks become indented lines, whose text is kept as written.
        let prose: Vec<&str> = text.lines().filter(|l| !l.starts_with("    ")).collect();
        assert!(
            prose
                .iter()
                .all(|l| !l.starts_with('#') && !l.contains('`') && !l.contains("**")),
            "{code}: Markdown in help.text:\n{text}"
        );
    }
}
