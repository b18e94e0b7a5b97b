//! What editors read: the VS Code problem matcher shipped for `--format short`
//! (`editors/vscode/problem-matcher.json`), applied to real output.

use std::time::Duration;

use assert_cmd::Command;
use serde_json::Value;

fn run(args: &[&str]) -> String {
    let out = Command::cargo_bin("msgaudit")
        .unwrap()
        .timeout(Duration::from_secs(60))
        .args(args)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

/// The matcher's pattern, compiled (VS Code runs it as a JavaScript regular
/// expression; this one uses only syntax that both dialects read alike), and the
/// group of each field.
fn matcher() -> (regex::Regex, Value) {
    let text = std::fs::read_to_string("editors/vscode/problem-matcher.json").unwrap();
    let m: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(m["owner"], "msgaudit");
    assert_eq!(m["fileLocation"][0], "relative");
    let pattern = m["pattern"].clone();
    let re = regex::Regex::new(pattern["regexp"].as_str().unwrap()).unwrap();
    (re, pattern)
}

fn group<'a>(c: &regex::Captures<'a>, pattern: &Value, field: &str) -> Option<&'a str> {
    let i = pattern[field].as_u64().unwrap() as usize;
    c.get(i).map(|m| m.as_str())
}

#[test]
fn the_problem_matcher_reads_every_short_line() {
    let (re, pattern) = matcher();
    let short = run(&["check", "--format", "short", "fixtures"]);
    let json: Value =
        serde_json::from_str(&run(&["check", "--format", "json", "fixtures"])).unwrap();
    let findings = json["findings"].as_array().unwrap();
    assert!(findings.len() > 10);
    let lines: Vec<&str> = short.lines().collect();
    assert_eq!(lines.len(), findings.len());
    for (line, f) in lines.iter().zip(findings) {
        let c = re
            .captures(line)
            .unwrap_or_else(|| panic!("not matched: {line}"));
        assert_eq!(group(&c, &pattern, "file"), f["path"].as_str(), "{line}");
        assert_eq!(
            group(&c, &pattern, "line"),
            Some(f["line"].to_string().as_str())
        );
        assert_eq!(
            group(&c, &pattern, "column"),
            Some(f["column"].to_string().as_str())
        );
        assert_eq!(group(&c, &pattern, "severity"), f["severity"].as_str());
        assert_eq!(group(&c, &pattern, "code"), f["code"].as_str());
        let message = msgaudit::emit::escape::text(f["message"].as_str().unwrap());
        assert_eq!(group(&c, &pattern, "message"), Some(message.as_ref()));
    }

    // Input errors with a position are problems too (without a code).
    let errors = run(&["check", "--format", "short", "tests/data"]);
    let broken = errors
        .lines()
        .find(|l| l.starts_with("tests/data/broken/src/main.rs:"))
        .unwrap();
    let c = re.captures(broken).unwrap();
    assert_eq!(
        group(&c, &pattern, "file"),
        Some("tests/data/broken/src/main.rs")
    );
    assert_eq!(group(&c, &pattern, "line"), Some("5"));
    assert_eq!(group(&c, &pattern, "severity"), Some("error"));
    assert_eq!(group(&c, &pattern, "code"), None);

    // Not every line: the human format's header and its notes are not problems.
    let human = run(&["check", "fixtures/demo"]);
    assert!(human.lines().count() > 20);
    for line in human.lines() {
        assert!(!re.is_match(line), "matched a human line: {line}");
    }
}

#[test]
fn the_documented_tasks_json_uses_the_shipped_matcher() {
    let readme = std::fs::read_to_string("docs/editors.md").unwrap();
    let block = readme
        .split("```json\n")
        .skip(1)
        .filter_map(|b| b.split_once("\n```").map(|(json, _)| json))
        .find(|b| b.contains("\"problemMatcher\""))
        .expect("a tasks.json block in docs/editors.md");
    let tasks: Value = serde_json::from_str(block).unwrap();
    let shipped: Value = serde_json::from_str(
        &std::fs::read_to_string("editors/vscode/problem-matcher.json").unwrap(),
    )
    .unwrap();
    assert_eq!(tasks["tasks"][0]["problemMatcher"], shipped);
}

#[test]
fn the_vscode_extension_runs_the_server_and_contributes_the_matcher() {
    let package: Value =
        serde_json::from_str(&std::fs::read_to_string("editors/vscode/package.json").unwrap())
            .unwrap();
    let mut contributed = package["contributes"]["problemMatchers"][0].clone();
    assert_eq!(contributed["name"], "msgaudit");
    contributed.as_object_mut().unwrap().remove("name");
    let shipped: Value = serde_json::from_str(
        &std::fs::read_to_string("editors/vscode/problem-matcher.json").unwrap(),
    )
    .unwrap();
    assert_eq!(contributed, shipped);
    assert_eq!(
        package["activationEvents"],
        serde_json::json!(["onLanguage:rust", "onLanguage:yaml"])
    );
    let source = std::fs::read_to_string("editors/vscode/src/extension.ts").unwrap();
    assert!(source.contains(r#"args: ["server"]"#), "{source}");
    for setting in ["path", "debounceMs", "rulesUrl"] {
        let key = format!("msgaudit.{setting}");
        assert!(
            package["contributes"]["configuration"]["properties"][&key].is_object(),
            "{key}"
        );
        assert!(source.contains(&format!("\"{setting}\"")), "{setting}");
    }
}
