//! Issue 15, "Never lose a run": regression tests for runs that lost findings or
//! printed them wrong. Every input is generated at test time.

mod common;
use common::{check_output, git, git_repo, msgaudit, sarif_schema_errors, write};

use std::fs;
use std::path::Path;

use cargo_metadata::diagnostic::Diagnostic;
use serde_json::Value;

/// A pulsar consumer that acks (line 8) before it inserts into the table whose
/// quoted SQL identifier is `ident`, written as the inside of a Rust string
/// literal (`\n` in `ident` is a newline in the identifier). `before_ack` is
/// Rust put on the line of the ack, before the call (`consumer.ack` starts at
/// column 9 + its length in characters). MA001 at 8:18 plus that.
fn handler(ident: &str, before_ack: &str) -> String {
    format!(
        r#"use futures::StreamExt;
use pulsar::{{Consumer, Pulsar, TokioExecutor}};
use sqlx::PgPool;

pub async fn run(pulsar: Pulsar<TokioExecutor>, pool: PgPool) -> anyhow::Result<()> {{
    let mut consumer: Consumer<Vec<u8>, TokioExecutor> = pulsar.consumer().build().await?;
    while let Some(msg) = consumer.try_next().await? {{
        {before_ack}consumer.ack(&msg).await?;
        sqlx::query("INSERT INTO \"{ident}\" (a) VALUES (1)")
            .execute(&pool)
            .await?;
    }}
    Ok(())
}}
"#
    )
}

/// `msgaudit check --format FORMAT ARGS` in `dir`: exit code and stdout.
fn check(dir: &Path, format: &str, args: &[&str]) -> (i32, String) {
    let out = msgaudit()
        .current_dir(dir)
        .args(["check", "--format", format])
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
    )
}

fn json(dir: &Path, args: &[&str]) -> Value {
    let out = check_output(dir, args);
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn human_snippet_header_counts_characters() {
    let dir = tempfile::tempdir().unwrap();
    // 7 characters, 19 bytes: `let é = "日本語"; ` before the ack.
    let before = "let é = \"日本語\"; ";
    write(dir.path(), "src/lib.rs", handler("events", before));
    let v = json(dir.path(), &["."]);
    let f = &v["findings"][0];
    let column = 18 + before.chars().count() as u64;
    assert_eq!(
        (f["line"].as_u64(), f["column"].as_u64()),
        (Some(8), Some(column))
    );
    let (_, human) = check(dir.path(), "human", &["."]);
    assert!(
        human.starts_with(&format!("src/lib.rs:8:{column}: MA001")),
        "{human}"
    );
    assert!(
        human.contains(&format!("╭─[src/lib.rs:8:{column}]")),
        "the header's column is not {column}:\n{human}"
    );
    let (_, short) = check(dir.path(), "short", &["."]);
    assert!(short.starts_with(&format!("src/lib.rs:8:{column}: ")));
}

#[test]
fn diff_base_reads_files_that_gitattributes_mark_binary() {
    for attributes in ["*.rs -diff\n", "*.rs diff=opaque\n"] {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        git_repo(&repo);
        write(&repo, ".gitattributes", attributes);
        write(&repo, "src/lib.rs", "pub fn helper() -> u32 {\n    1\n}\n");
        git(&repo, &["config", "diff.opaque.binary", "true"]);
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "-q", "-m", "base"]);
        // The handler is appended to the tracked file: its lines are changed lines.
        let text = format!(
            "pub fn helper() -> u32 {{\n    1\n}}\n{}",
            handler("events", "")
        );
        write(&repo, "src/lib.rs", text);
        let diff = git(&repo, &["diff", "HEAD"]);
        assert!(diff.contains("Binary files"), "{attributes}: {diff}");
        let v = json(&repo, &[".", "--diff-base", "HEAD"]);
        let lines: Vec<u64> = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["line"].as_u64().unwrap())
            .collect();
        assert_eq!(lines, [11], "{attributes}: {v}");
        assert_eq!(v["summary"]["outside_diff"], 0, "{attributes}");
    }
}

#[test]
fn diff_base_reads_hunks_by_their_line_counts() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    git_repo(&repo);
    let filler: String = (0..10).map(|i| format!("// line {i}\n")).collect();
    write(&repo, "src/lib.rs", &filler);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    // Added lines whose text looks like file and hunk headers (`+++ b/…`,
    // `--- a/…`, `@@ … @@` in the diff), then unchanged lines, then the handler:
    // a second hunk.
    let headers = "pub const S: &str = \"\n++ b/other.rs\n-- a/other.rs\n@@ -1 +1 @@\ndiff --git a/x b/x\n\";\n";
    write(
        &repo,
        "src/lib.rs",
        format!("{headers}{filler}{}", handler("events", "")),
    );
    let diff = git(&repo, &["diff", "-U0", "HEAD"]);
    assert!(diff.contains("\n+++ b/other.rs\n"), "{diff}");
    let v = json(&repo, &[".", "--diff-base", "HEAD"]);
    let found: Vec<(String, u64)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(found, [("src/lib.rs".to_string(), 24)], "{v}");
    assert_eq!(v["summary"]["outside_diff"], 0);
}

/// Decodes `%XX` escapes (the SARIF consumer's side of `uri`).
fn percent_decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).unwrap();
            out.push(u8::from_str_radix(hex, 16).unwrap());
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

#[cfg(unix)]
#[test]
fn sarif_uris_percent_encode_file_names() {
    let dir = tempfile::tempdir().unwrap();
    let names = [
        "src/back\\slash.rs",
        "src/a b#c?d%e.rs",
        "src/x:y[z]@w;v=u&t+s,r!q$p'o(n)m*.rs",
        "src/é.rs",
        // A colon in the first segment would read as a URI scheme (or a drive).
        "c:d.rs",
        "C:/x.rs",
    ];
    for name in names {
        write(dir.path(), name, handler("events", ""));
    }
    let (code, out) = check(dir.path(), "sarif", &["."]);
    assert_eq!(code, 1);
    let log: Value = serde_json::from_str(&out).unwrap();
    let errors = sarif_schema_errors(&log);
    assert!(errors.is_empty(), "invalid SARIF:\n{}", errors.join("\n"));
    let uris: Vec<&str> = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(uris.len(), names.len(), "{uris:?}");
    assert!(uris.contains(&"src/back%5Cslash.rs"), "{uris:?}");
    let mut decoded: Vec<String> = uris
        .iter()
        .map(|u| {
            // Only unreserved characters, `/` and escapes: one segment per name.
            assert!(
                u.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-._~/%".contains(&b)),
                "{u}"
            );
            String::from_utf8(percent_decode(u)).unwrap()
        })
        .collect();
    decoded.sort();
    let mut expected: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    expected.sort();
    assert_eq!(decoded, expected);
}

#[test]
fn rustc_json_byte_offsets_count_the_bom() {
    let dir = tempfile::tempdir().unwrap();
    let text = handler("events", "");
    write(dir.path(), "plain/src/lib.rs", &text);
    write(dir.path(), "bom/src/lib.rs", format!("\u{feff}{text}"));
    write(
        dir.path(),
        "plain/Cargo.toml",
        "[package]\nname = \"plain\"\n",
    );
    write(dir.path(), "bom/Cargo.toml", "[package]\nname = \"bom\"\n");
    let spans = |path: &str| {
        let (code, out) = check(dir.path(), "rustc-json", &[path]);
        assert_eq!(code, 1, "{out}");
        let d: Diagnostic = serde_json::from_str(out.lines().next().unwrap()).unwrap();
        let raw = fs::read(dir.path().join(path).join("src/lib.rs")).unwrap();
        d.spans
            .iter()
            .map(|s| {
                // The bytes the offsets point at, in the file on disk, are the
                // span's own text.
                let first = &s.text[0];
                let chars: Vec<char> = first.text.chars().collect();
                let highlighted: String = chars
                    [first.highlight_start - 1..(first.highlight_end - 1).min(chars.len())]
                    .iter()
                    .collect();
                let on_disk =
                    String::from_utf8(raw[s.byte_start as usize..s.byte_end as usize].to_vec())
                        .unwrap();
                if s.line_start == s.line_end {
                    assert_eq!(on_disk, highlighted, "{path}: {s:?}");
                } else {
                    assert!(on_disk.starts_with(&highlighted), "{path}: {s:?}");
                }
                (s.byte_start, s.byte_end, s.line_start, s.column_start)
            })
            .collect::<Vec<_>>()
    };
    let plain = spans("plain");
    let bom = spans("bom");
    assert_eq!(plain.len(), bom.len());
    for (p, b) in plain.iter().zip(&bom) {
        assert_eq!((p.0 + 3, p.1 + 3, p.2, p.3), *b);
    }
}
