//! End to end on real analysis results: exit codes, selection, suppressions, bad
//! input next to good input, and snapshots of every format on the bundled demo.

mod common;
use common::msgaudit;

use std::fs;
use std::path::Path;

use serde_json::Value;

fn run(args: &[&str]) -> (i32, String) {
    let out = msgaudit().args(args).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
    )
}

fn json(args: &[&str]) -> (i32, Value) {
    let mut full = vec!["check", "--format", "json"];
    full.extend_from_slice(args);
    let (code, out) = run(&full);
    (code, serde_json::from_str(&out).unwrap())
}

const BAD: &str = "fixtures/ma001_ack_before_commit/bad_commit_message_before_tx_commit.rs";
const OK: &str = "fixtures/ma001_ack_before_commit/ok_commit_message_after_tx_commit.rs";

#[test]
fn findings_exit_1_clean_exit_0() {
    assert_eq!(run(&["check", BAD]).0, 1);
    assert_eq!(run(&["check", OK]).0, 0);
    assert_eq!(run(&["check", "--fail-on", "never", BAD]).0, 0);
    assert_eq!(run(&["check", "--fail-on", "error", BAD]).0, 1);
    assert_eq!(run(&["check", "--ignore", "MA001", BAD]).0, 0);
    assert_eq!(run(&["check", "--ignore", "ack-before-commit", BAD]).0, 0);
    assert_eq!(run(&["check", "--select", "MA002", BAD]).0, 0);
    assert_eq!(run(&["check", "--select", "ack-before-commit", BAD]).0, 1);
}

#[test]
fn finding_carries_spec_fields() {
    let (_, v) = json(&[BAD]);
    let f = &v["findings"][0];
    assert_eq!(f["code"], "MA001");
    assert_eq!(f["name"], "ack-before-commit");
    assert_eq!(f["severity"], "error");
    assert_eq!(f["path"], BAD);
    // The primary span starts at the method name and ends after the closing parenthesis.
    let line = fs::read_to_string(BAD)
        .unwrap()
        .lines()
        .nth(f["line"].as_u64().unwrap() as usize - 1)
        .unwrap()
        .to_string();
    let col = f["column"].as_u64().unwrap() as usize;
    let end = f["end_column"].as_u64().unwrap() as usize;
    let chars: Vec<char> = line.chars().collect();
    let spanned: String = chars[col - 1..end - 1].iter().collect();
    assert!(spanned.starts_with("commit_message("), "{spanned}");
    assert!(spanned.ends_with(')'), "{spanned}");
    let msg = f["message"].as_str().unwrap();
    assert!(
        msg.contains("`consumer.commit_message`") && msg.contains("`tx.commit()`"),
        "{msg}"
    );
    assert_eq!(f["boundary"], "effect/progress order");
    assert!(f["window"].as_str().unwrap().contains("loses the message"));
    let labels: Vec<&str> = f["labels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["message"].as_str().unwrap())
        .collect();
    assert!(labels.contains(&"transaction begins here"), "{labels:?}");
    assert!(
        labels.iter().any(|l| l.contains("commits here")),
        "{labels:?}"
    );
    assert!(!f["help"].as_str().unwrap().is_empty());
}

#[test]
fn suppression_on_the_line_before_silences_and_stale_one_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let text = fs::read_to_string(BAD).unwrap();
    let (_, v) = json(&[BAD]);
    let line = v["findings"][0]["line"].as_u64().unwrap() as usize;
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    lines.insert(
        line - 1,
        "    // msgaudit:allow(ack-before-commit) the offset store is replayed from the outbox"
            .into(),
    );
    let p = dir.path().join("handler.rs");
    fs::write(&p, lines.join("\n")).unwrap();
    let (code, v) = json(&[p.to_str().unwrap()]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["summary"]["suppressed"], 1);

    let q = dir.path().join("clean.rs");
    let ok = fs::read_to_string(OK).unwrap();
    fs::write(&q, format!("// msgaudit:allow(MA001)\n{ok}")).unwrap();
    let (code, v) = json(&[q.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(v["findings"][0]["code"], "MA900");
}

#[test]
fn malformed_suppressions_are_warnings_and_spacing_variants_suppress() {
    let dir = tempfile::tempdir().unwrap();
    let text = fs::read_to_string(BAD).unwrap();
    let (_, v) = json(&[BAD]);
    let line = v["findings"][0]["line"].as_u64().unwrap() as usize;
    for (comment, suppressed, message) in [
        ("/* msgaudit: allow(MA001) replayed */", 1, None),
        ("# msgaudit:allow(MA001)", 0, None),
        (
            "// msgaudit:alow(MA001) replayed",
            0,
            Some("malformed suppression, it suppresses nothing: unknown directive `alow` (the only one is `allow`); write `// msgaudit:allow(MA001) reason`"),
        ),
        (
            "// msgaudit:allow(MA01) replayed",
            0,
            Some("suppression of unknown rule `MA01` (did you mean `MA001`?)"),
        ),
    ] {
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        if comment.starts_with('#') {
            // Not a Rust comment: a syntax error would hide the point; put it in a string.
            lines.insert(line - 1, format!("    let _ = \"{comment}\";"));
        } else {
            lines.insert(line - 1, format!("    {comment}"));
        }
        let p = dir.path().join("handler.rs");
        fs::write(&p, lines.join("\n")).unwrap();
        let (_, v) = json(&[p.to_str().unwrap()]);
        assert_eq!(v["summary"]["suppressed"], suppressed, "{comment}: {v}");
        let ma900: Vec<_> = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["code"] == "MA900")
            .collect();
        match message {
            Some(m) => {
                assert_eq!(ma900.len(), 1, "{comment}: {v}");
                assert_eq!(ma900[0]["message"], m);
                assert_eq!(ma900[0]["line"], line as u64);
                assert_eq!(ma900[0]["severity"], "warning");
            }
            None => assert!(ma900.is_empty(), "{comment}: {v}"),
        }
    }
}

#[test]
fn unparsable_rust_is_an_error_with_position_and_the_rest_is_analyzed() {
    let (code, v) = json(&["tests/data/broken"]);
    assert_eq!(code, 2, "{v}");
    let e = &v["errors"][0];
    assert_eq!(e["path"], "tests/data/broken/src/main.rs");
    assert_eq!(e["line"], 5);
    assert!(e["column"].as_u64().is_some());
    assert_eq!(v["findings"][0]["path"], "tests/data/broken/src/handler.rs");
    assert_eq!(v["summary"]["errors"], 1);
}

#[test]
fn invalid_utf8_is_an_error() {
    let (code, v) = json(&["tests/data/invalid_utf8.rs"]);
    assert_eq!(code, 2);
    assert_eq!(v["errors"][0]["line"], 2);
}

#[test]
fn fixture_tree_is_a_clean_run_without_input_errors() {
    let (code, v) = json(&["fixtures"]);
    assert_eq!(code, 1);
    assert_eq!(v["errors"].as_array().unwrap().len(), 0, "{}", v["errors"]);
}

fn demo(format: &str) -> String {
    let (code, out) = run(&["check", "--format", format, "fixtures/demo"]);
    assert_eq!(code, 1);
    out
}

#[test]
fn demo_snapshots() {
    assert!(Path::new("fixtures/demo/Cargo.toml").exists());
    insta::assert_snapshot!("demo_short", demo("short"));
    insta::assert_snapshot!("demo_json", demo("json"));
    insta::assert_snapshot!("demo_human", demo("human"));
}

#[test]
fn explain_prints_the_rule_doc() {
    let (code, out) = run(&["explain", "MA001"]);
    assert_eq!(code, 0);
    for heading in [
        "## What it does",
        "## Why is this bad?",
        "## Example",
        "Use instead:",
    ] {
        assert!(out.contains(heading), "{heading}");
    }
}

#[test]
fn config_apis_declare_the_projects_own_wrappers() {
    let case = "fixtures/ma001_ack_before_commit/bad_config_wrapper_apis";
    let (code, v) = json(&[case]);
    assert_eq!(code, 1);
    assert_eq!(v["findings"].as_array().unwrap().len(), 1);
    // Without the `[apis]` table the wrappers mean nothing to msgaudit.
    let (code, v) = json(&["--config", "tests/data/empty.toml", case]);
    assert_eq!(code, 0, "{v}");
}

#[test]
fn an_internal_failure_loses_only_its_file() {
    // Two files of one crate, each with a finding; lowering one of them panics.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    fs::create_dir_all(&src).unwrap();
    fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"two\"\n").unwrap();
    let bad = fs::read_to_string(BAD).unwrap();
    fs::write(src.join("first.rs"), &bad).unwrap();
    fs::write(src.join("second.rs"), &bad).unwrap();
    let out = msgaudit()
        .env("MSGAUDIT_FAULT_INJECT", "src/second.rs")
        .args(["check", dir.path().to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let errors = v["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0]["path"]
        .as_str()
        .unwrap()
        .ends_with("src/second.rs"));
    assert!(errors[0]["message"]
        .as_str()
        .unwrap()
        .starts_with("internal error while analyzing this file"));
    let paths: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths.len(), 1, "{paths:?}");
    assert!(paths[0].ends_with("src/first.rs"));
}
