//! Bad YAML: each file is a clear input error with its position, exit code 2, and
//! the other files are still analyzed and reported.

mod common;
use common::write;

use std::path::Path;
use std::time::Duration;

use assert_cmd::Command;
use serde_json::Value;

/// A file with a finding (MA007 at 4:25), reported beside every bad file.
const GOOD: &str =
    "consumer:\n  bootstrap.servers: kafka:9092\n  group.id: audit\n  enable.auto.commit: true\n";

/// `msgaudit check --format json .` in `dir`: (exit code, JSON).
fn check(dir: &Path) -> (i32, Value) {
    let out = Command::cargo_bin("msgaudit")
        .unwrap()
        .timeout(Duration::from_secs(60))
        .current_dir(dir)
        .args(["check", "--format", "json", "."])
        .output()
        .unwrap();
    let json = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: stderr {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap(), json)
}

/// Runs on a tree of `good.yaml` and `bad.yaml`; returns the one error.
fn one_error_beside_good(bad: &[u8]) -> Value {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "good.yaml", GOOD.as_bytes());
    write(t.path(), "bad.yaml", bad);
    let (code, v) = check(t.path());
    assert_eq!(code, 2, "{v:#}");
    let findings = v["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{v:#}");
    assert_eq!(findings[0]["path"], "good.yaml");
    assert_eq!(findings[0]["code"], "MA007");
    assert_eq!(
        (findings[0]["line"].clone(), findings[0]["column"].clone()),
        (4.into(), 23.into())
    );
    let errors = v["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{v:#}");
    assert_eq!(errors[0]["path"], "bad.yaml");
    assert_eq!(v["summary"]["analyzed"], 1);
    errors[0].clone()
}

#[test]
fn syntax_error_has_its_position() {
    let e = one_error_beside_good(b"kafka:\n  topics: [orders, payments\n  group.id: x\n");
    assert_eq!(e["line"], 3, "{e}");
    assert!(e["column"].is_u64(), "{e}");
    let msg = e["message"].as_str().unwrap();
    assert!(msg.starts_with("invalid YAML: "), "{msg}");
}

#[test]
fn alias_bomb_is_refused() {
    let mut bomb = String::from("kafka: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..10 {
        let refs = vec![format!("*a{}", i - 1); 10].join(", ");
        bomb.push_str(&format!("l{i}: &a{i} [{refs}]\n"));
    }
    let e = one_error_beside_good(bomb.as_bytes());
    let msg = e["message"].as_str().unwrap();
    assert!(msg.contains("alias bomb"), "{msg}");
    assert!(e["line"].is_u64(), "{e}");
}

#[test]
fn deep_block_nesting_is_refused() {
    // `- - - x`: block sequences nested on one line.
    let deep = format!("kafka:\n{}x\n", "- ".repeat(10_000));
    let e = one_error_beside_good(deep.as_bytes());
    let msg = e["message"].as_str().unwrap();
    assert!(msg.contains("nesting deeper than 64"), "{msg}");
    assert_eq!(e["line"], 2, "{e}");
}

#[test]
fn deep_flow_nesting_is_refused() {
    let deep = format!("kafka: {}{}\n", "[".repeat(10_000), "]".repeat(10_000));
    let e = one_error_beside_good(deep.as_bytes());
    let msg = e["message"].as_str().unwrap();
    assert!(msg.contains("refused: nesting"), "{msg}");
}

#[test]
fn non_utf8_is_an_error_with_its_position() {
    let e = one_error_beside_good(b"kafka:\n  group.id: caf\xE9\n");
    assert_eq!(e["line"], 2, "{e}");
    assert_eq!(e["column"], 16, "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("invalid UTF-8"),
        "{e}"
    );
}

#[test]
fn yaml_without_kafka_words_is_skipped_unparsed() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "good.yaml", GOOD.as_bytes());
    write(t.path(), "ci.yml", b"jobs: [unclosed\n");
    let (code, v) = check(t.path());
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["errors"], serde_json::json!([]));
    assert_eq!(v["summary"]["skipped"]["no_relevant_tokens"], 1);
}
