//! The command line: help, explain, rules, exit codes, config errors, discovery.
//!
//! Bad inputs are generated in temporary directories. While the analysis core
//! finds nothing yet, a stale `// msgaudit:allow(MA001)` comment (reported as
//! MA900) is how these tests see that a file was read and under which path.

mod common;
use common::{check_output, msgaudit, write};

use std::fs;
use std::path::Path;
use std::time::Duration;

use predicates::prelude::*;
use serde_json::Value;

const STALE: &str = "fn f() {} // msgaudit:allow(MA001) kept on purpose\n";

/// Runs `msgaudit check --format json ARGS` in `dir`; returns (exit code, JSON).
/// A consumer that commits the offset before its insert: one MA001.
const ACK_BEFORE_INSERT: &str = "use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};\n\
     async fn run(c: StreamConsumer, pool: sqlx::PgPool) -> anyhow::Result<()> {\n\
     \x20   loop {\n\
     \x20       let m = c.recv().await?;\n\
     \x20       c.commit_message(&m, CommitMode::Async)?;\n\
     \x20       sqlx::query(\"INSERT INTO t (id) VALUES (1)\").execute(&pool).await?;\n\
     \x20   }\n\
     }\n";

fn check_json(dir: &Path, args: &[&str]) -> (i32, Value) {
    let out = check_output(dir, args);
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: stdout {:?} stderr {:?}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap(), json)
}

fn finding_paths(v: &Value) -> Vec<String> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn help_for_every_command() {
    msgaudit()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("delivery guarantees"))
        .stdout(predicate::str::contains("check"))
        .stdout(predicate::str::contains("explain"))
        .stdout(predicate::str::contains("rules"));
    msgaudit()
        .args(["check", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("--fail-on"))
        .stdout(predicate::str::contains("--select"))
        .stdout(predicate::str::contains("--config"));
    msgaudit()
        .args(["explain", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("ack-before-commit"));
    msgaudit()
        .args(["rules", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("--format"));
}

#[test]
fn explain_by_code_and_name() {
    msgaudit()
        .args(["explain", "MA001"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "MA001 ack-before-commit (error)\n",
        ));
    msgaudit()
        .args(["explain", "unused-suppression"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "MA900 unused-suppression (warning)\n\n## What it does",
        ));
    msgaudit()
        .args(["explain", "MA099"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown rule `MA099`"));
}

#[test]
fn rules_table_and_json() {
    msgaudit()
        .arg("rules")
        .assert()
        .success()
        .stdout(predicate::str::contains("MA013  discarded-transaction"));
    let out = msgaudit()
        .args(["rules", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rules = v.as_array().unwrap();
    assert_eq!(rules.len(), msgaudit::rules::ALL.len());
    let keys: Vec<&str> = rules[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for k in [
        "code",
        "name",
        "severity",
        "summary",
        "boundary",
        "consequence",
    ] {
        assert!(keys.contains(&k), "{k} missing");
    }
    assert_eq!(rules[0]["code"], "MA001");
}

/// A config error is an input error of the run (exit 2), positioned; the tree is
/// still analyzed (tests/config.rs checks with what).
fn config_error(config: &str, expected: &str) {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "msgaudit.toml", config.as_bytes());
    write(t.path(), "src/a.rs", b"fn a() {}\n");
    msgaudit()
        .current_dir(t.path())
        .args(["check", "--format", "short", "."])
        .assert()
        .code(2)
        .stdout(predicate::str::contains(expected));
}

#[test]
fn bad_config_is_exit_2_with_position() {
    config_error(
        "include_tests = true\nbogus = 1\n",
        "msgaudit.toml:2:1: error: unknown field `bogus`",
    );
    config_error(
        "[rules]\nMA001 = \"warn\"\n",
        "msgaudit.toml:2:9: error: invalid level `warn` for MA001: expected \"off\", \"warning\" or \"error\"",
    );
    config_error(
        "[rules]\nMA001 = false\n",
        "msgaudit.toml:2:9: error: invalid level `false` for MA001: expected \"off\"",
    );
    config_error(
        "[rules]\nMA099 = \"off\"\n",
        "msgaudit.toml:2:1: error: unknown rule `MA099`",
    );
    config_error("[rules\nMA001 = \"off\"\n", "msgaudit.toml:1:7: error: ");
}

#[test]
fn config_is_found_upward_and_explicit_config_must_exist() {
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir(t.path().join(".git")).unwrap();
    write(t.path(), "msgaudit.toml", b"bogus = true\n");
    write(t.path(), "a/b/x.rs", b"fn a() {}\n");
    msgaudit()
        .current_dir(t.path().join("a"))
        .args(["check", "--format", "short", "b/x.rs"])
        .assert()
        .code(2)
        .stdout(predicate::str::contains("unknown field `bogus`"));
    msgaudit()
        .current_dir(t.path())
        .args(["check", "--format", "short", "--config", "nope.toml", "a"])
        .assert()
        .code(2)
        .stdout(predicate::str::contains(
            "nope.toml: error: config file not found",
        ));
}

#[test]
fn unknown_select_is_a_usage_error() {
    msgaudit()
        .args(["check", "--select", "MA001,MA099", "."])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "unknown rule `MA099` (did you mean `MA009`?)",
        ));
    msgaudit()
        .args(["explain", "dual-writes"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did you mean `dual-write`?"));
    msgaudit()
        .args(["check", "--ignore", "no-such-rule", "."])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown rule `no-such-rule`"));
    msgaudit()
        .args(["check", "--format", "xml", "."])
        .assert()
        .code(2);
}

#[test]
fn invalid_utf8_is_an_error_with_position_and_others_still_count() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "src/bad.rs", b"fn a() {}\nfn b() { \"\xFF\" }\n");
    write(t.path(), "src/good.rs", STALE.as_bytes());
    write(t.path(), "conf.yaml", b"a: 1\n");
    let (code, v) = check_json(t.path(), &["."]);
    assert_eq!(code, 2);
    assert_eq!(
        v["errors"],
        serde_json::json!([{
            "path": "src/bad.rs", "line": 2, "column": 11,
            "message": "invalid UTF-8: byte 0xFF at offset 20"
        }])
    );
    assert_eq!(v["summary"]["files"], 3);
    assert_eq!(v["summary"]["errors"], 1);
    assert_eq!(finding_paths(&v), ["src/good.rs"]);

    msgaudit()
        .current_dir(t.path())
        .args(["check", "--format", "short", "."])
        .assert()
        .code(2)
        .stdout(predicate::str::contains(
            "src/bad.rs:2:11: error: invalid UTF-8",
        ))
        .stdout(predicate::str::contains("src/good.rs:1:11: warning[MA900]"));
}

#[test]
fn templated_yaml_is_skipped_not_an_error() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "chart/Chart.yaml", b"name: c\n");
    write(
        t.path(),
        "chart/templates/kafka.yaml",
        b"isolation.level: read_committed\n",
    );
    write(t.path(), "values.yaml", b"a: \"{{ .Values.x }}\"\n");
    write(t.path(), "plain.yaml", b"a: 1\n");
    let (code, v) = check_json(t.path(), &["."]);
    assert_eq!(code, 0);
    assert_eq!(v["summary"]["files"], 4);
    assert_eq!(v["summary"]["skipped"]["templated_yaml"], 2);
    assert_eq!(v["errors"], serde_json::json!([]));
}

#[test]
fn gitignored_file_is_skipped_unless_named() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), ".gitignore", b"generated/\n");
    write(t.path(), "generated/x.rs", STALE.as_bytes());
    write(t.path(), "src/a.rs", b"fn a() {}\n");
    let (code, v) = check_json(t.path(), &["."]);
    assert_eq!(code, 0);
    assert_eq!(v["summary"]["files"], 1);
    assert_eq!(finding_paths(&v), Vec::<String>::new());

    let (code, v) = check_json(t.path(), &["generated/x.rs"]);
    assert_eq!(code, 1);
    assert_eq!(v["summary"]["files"], 1);
    assert_eq!(finding_paths(&v), ["generated/x.rs"]);
}

#[test]
fn exclude_globs_are_relative_to_the_config() {
    let t = tempfile::tempdir().unwrap();
    // A repository: the config is found from `svc` up to its root.
    std::fs::create_dir(t.path().join(".git")).unwrap();
    write(
        t.path(),
        "msgaudit.toml",
        b"exclude = [\"vendor/**\", \"*.gen.rs\"]\n",
    );
    write(t.path(), "vendor/v.rs", STALE.as_bytes());
    write(t.path(), "svc/src/x.gen.rs", STALE.as_bytes());
    write(t.path(), "svc/src/a.rs", STALE.as_bytes());
    let (_, v) = check_json(t.path(), &["."]);
    assert_eq!(finding_paths(&v), ["svc/src/a.rs"]);
    assert_eq!(v["summary"]["files"], 1);
    // The same from a subdirectory: the config is found upward, globs stay rooted.
    let (_, v) = check_json(&t.path().join("svc"), &["src"]);
    assert_eq!(finding_paths(&v), ["src/a.rs"]);
}

#[test]
fn display_paths_follow_the_path_argument() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "a/src/x.rs", STALE.as_bytes());
    let (_, v) = check_json(&t.path().join("a"), &["."]);
    assert_eq!(finding_paths(&v), ["src/x.rs"]);
    let (_, v) = check_json(t.path(), &["a"]);
    assert_eq!(finding_paths(&v), ["a/src/x.rs"]);
    let (_, v) = check_json(t.path(), &["./a/"]);
    assert_eq!(finding_paths(&v), ["a/src/x.rs"]);
}

#[test]
fn exit_codes_follow_fail_on_and_selection() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "x.rs", STALE.as_bytes());
    let run = |args: &[&str]| {
        msgaudit()
            .current_dir(t.path())
            .arg("check")
            .args(args)
            .output()
            .unwrap()
            .status
            .code()
            .unwrap()
    };
    assert_eq!(run(&["."]), 1);
    assert_eq!(run(&["--fail-on", "warning", "."]), 1);
    assert_eq!(run(&["--fail-on", "error", "."]), 0);
    assert_eq!(run(&["--fail-on", "never", "."]), 0);
    assert_eq!(run(&["--ignore", "unused-suppression", "."]), 0);
    // A suppression of a rule that is not selected is not stale.
    assert_eq!(run(&["--select", "MA002", "."]), 0);
    assert_eq!(run(&["--select", "MA001", "."]), 1);
    // Prefixes select as in ruff: `MA00` is MA001-MA009 (the stale suppression's rule
    // among them), `MA9` only the unused-suppression check.
    assert_eq!(run(&["--select", "MA00", "."]), 1);
    assert_eq!(run(&["--select", "MA01", "."]), 0);
    assert_eq!(run(&["--ignore", "MA9", "."]), 0);
    // Input errors exit 2 whatever --fail-on says.
    assert_eq!(run(&["--fail-on", "never", "missing-dir"]), 2);
}

#[test]
fn config_rules_and_overrides_set_levels() {
    let t = tempfile::tempdir().unwrap();
    write(
        t.path(),
        "msgaudit.toml",
        b"[rules]\nMA900 = \"error\"\n[[overrides]]\npaths = [\"legacy/**\"]\nrules = { unused-suppression = \"off\" }\n",
    );
    write(t.path(), "legacy/old.rs", STALE.as_bytes());
    write(t.path(), "src/new.rs", STALE.as_bytes());
    let (code, v) = check_json(t.path(), &["."]);
    assert_eq!(code, 1);
    assert_eq!(finding_paths(&v), ["src/new.rs"]);
    assert_eq!(v["findings"][0]["code"], "MA900");
    assert_eq!(v["findings"][0]["severity"], "error");
}

#[test]
fn human_output_ends_with_a_summary() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "x.rs", STALE.as_bytes());
    write(t.path(), "y.yml", b"a: {{ x }}\n");
    msgaudit()
        .current_dir(t.path())
        .args(["check", "."])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "x.rs:1:11: MA900 unused-suppression",
        ))
        .stdout(predicate::str::ends_with(
            "1 finding (0 errors, 1 warning), 0 input errors, 2 files (0 analyzed, 2 skipped)\n",
        ));
}

#[test]
fn odd_files_do_not_crash() {
    let t = tempfile::tempdir().unwrap();
    fs::create_dir_all(t.path().join("dir.rs")).unwrap();
    write(t.path(), "empty.rs", b"");
    write(
        t.path(),
        "bom.rs",
        b"\xEF\xBB\xBFfn a() {} // msgaudit:allow(MA001)\n",
    );
    #[cfg(not(unix))]
    let fifo_made = false;
    #[cfg(unix)]
    let fifo_made = {
        let fifo = t.path().join("pipe.rs");
        let ok = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            // Named explicitly, a FIFO is an error; walked, it is skipped unopened.
            msgaudit()
                .current_dir(t.path())
                .args(["check", "pipe.rs"])
                .assert()
                .code(2)
                .stderr(predicate::str::is_empty());
        }
        ok
    };
    let (code, v) = check_json(t.path(), &["."]);
    assert_eq!(code, 1);
    assert_eq!(finding_paths(&v), ["bom.rs"]);
    // The BOM is stripped: the comment starts at column 11 of the text.
    assert_eq!(v["findings"][0]["column"], 11);
    // A walked FIFO is counted as skipped, never opened.
    if fifo_made {
        assert_eq!(v["summary"]["files"], 3);
        assert_eq!(v["summary"]["skipped"]["not_a_regular_file"], 1);
    } else {
        assert_eq!(v["summary"]["files"], 2);
    }
}

/// Runs `msgaudit check ARGS` from the repository root; returns (stdout, stderr).
fn run_in_repo(args: &[&str]) -> (Vec<u8>, String) {
    let out = msgaudit()
        .timeout(Duration::from_secs(300))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("check")
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.code().unwrap() <= 1, "{out:?}");
    (out.stdout, String::from_utf8(out.stderr).unwrap())
}

#[test]
fn output_does_not_depend_on_jobs() {
    let (one, _) = run_in_repo(&["fixtures", "--format", "json", "--jobs", "1"]);
    let (four, _) = run_in_repo(&["fixtures", "--format", "json", "--jobs", "4"]);
    let json: Value = serde_json::from_slice(&one).unwrap();
    assert!(json["findings"].as_array().unwrap().len() > 100);
    assert!(one == four, "--jobs 1 and --jobs 4 print different reports");
}

#[test]
fn output_does_not_depend_on_sharding_crates_over_threads() {
    // Every crate of two files or more parsed and lowered on several threads.
    let (one, _) = run_in_repo(&["fixtures", "--format", "json", "--jobs", "1"]);
    let out = msgaudit()
        .timeout(Duration::from_secs(300))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("MSGAUDIT_SHARD_MIN_FILES", "2")
        .args(["check", "fixtures", "--format", "json", "--jobs", "3"])
        .output()
        .unwrap();
    assert!(one == out.stdout, "sharded crates print a different report");
}

#[test]
fn jobs_must_be_positive() {
    msgaudit()
        .args(["check", "--jobs", "0", "."])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--jobs"));
}

#[test]
fn statistics_go_to_stderr_and_leave_stdout_unchanged() {
    let (plain, plain_err) = run_in_repo(&["fixtures/demo", "--format", "json"]);
    let (stats, err) = run_in_repo(&["fixtures/demo", "--format", "json", "--statistics"]);
    assert!(plain == stats, "--statistics changed stdout");
    assert!(!plain_err.contains("msgaudit: time"));
    for line in [
        "msgaudit: files seen: ",
        "msgaudit: files analyzed: ",
        "msgaudit: threads: ",
        "msgaudit: time discovery+reading: ",
        "msgaudit: time analysis: ",
        "msgaudit: time output: ",
        "msgaudit: time total: ",
        "msgaudit: cpu lexical: ",
        "msgaudit: cpu parse: ",
        "msgaudit: cpu lower: ",
        "msgaudit: cpu rules: ",
    ] {
        assert!(
            err.lines().any(|l| l.starts_with(line)),
            "{line:?} in {err}"
        );
    }
    // The fixture tree (hundreds of files) is parsed and lowered: those phases took
    // measurable time (analyzed, not read from the analysis cache).
    let (_, fixtures_err) =
        run_in_repo(&["fixtures", "--format", "json", "--statistics", "--no-cache"]);
    for phase in ["parse", "lower"] {
        let line = fixtures_err
            .lines()
            .find_map(|l| l.strip_prefix(&format!("msgaudit: cpu {phase}: ")))
            .unwrap();
        let secs: f64 = line.trim_end_matches(" s").parse().unwrap();
        assert!(secs > 0.0, "{phase}: {line}");
    }
    // Function bodies that name no API and that nothing needs are not parsed; all
    // are without the prefilter.
    let bodies = |err: &str| -> usize {
        err.lines()
            .find_map(|l| l.strip_prefix("msgaudit: function bodies not parsed: "))
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(bodies(&fixtures_err) > 20, "{fixtures_err}");
    let (_, all_err) = run_in_repo(&[
        "fixtures",
        "--format",
        "json",
        "--statistics",
        "--no-prefilter",
    ]);
    assert_eq!(bodies(&all_err), 0);
    let json: Value = serde_json::from_slice(&plain).unwrap();
    let seen = &json["summary"]["files"];
    assert!(
        err.contains(&format!("msgaudit: files seen: {seen}\n")),
        "{err}"
    );
}

#[test]
fn statistics_count_skips_by_reason() {
    let t = tempfile::tempdir().unwrap();
    write(
        t.path(),
        "plain/src/lib.rs",
        b"pub fn add(a: u8, b: u8) -> u8 { a + b }\n",
    );
    write(t.path(), "conf/values.yaml", b"a: {{ .Values.x }}\n");
    let out = msgaudit()
        .current_dir(t.path())
        .args(["check", ".", "--statistics", "--jobs", "2"])
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("msgaudit: skipped (no_relevant_tokens): 1\n"),
        "{err}"
    );
    assert!(
        err.contains("msgaudit: skipped (templated_yaml): 1\n"),
        "{err}"
    );
    assert!(err.contains("msgaudit: threads: 2\n"), "{err}");
}

#[test]
fn progress_only_on_a_terminal_and_never_with_quiet() {
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo");
    // Piped stderr: no progress bar.
    let out = msgaudit()
        .args(["check", demo, "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A terminal (script(1) gives the run one), when the machine has script; the
    // analysis runs (a run that reads it from the cache has nothing to show).
    let bin = assert_cmd::cargo::cargo_bin("msgaudit");
    let run_in_tty = |extra: &str| {
        std::process::Command::new("script")
            .args(["-qec"])
            .arg(format!(
                "{} check {demo} --format json --no-cache {extra} > /dev/null",
                bin.display()
            ))
            .arg("/dev/null")
            .output()
    };
    let Ok(tty) = run_in_tty("") else {
        return;
    };
    if !tty.status.success() && tty.status.code() != Some(1) {
        return;
    }
    let shown = String::from_utf8_lossy(&tty.stdout).into_owned();
    assert!(shown.contains("analyzing"), "{shown:?}");
    let quiet = run_in_tty("--quiet").unwrap();
    assert!(!String::from_utf8_lossy(&quiet.stdout).contains("analyzing"));
}

#[test]
fn max_file_size_from_config_and_flag() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "src/small.rs", STALE.as_bytes());
    let big = format!("{STALE}// {}\n", "x".repeat(2_000));
    write(t.path(), "src/big.rs", big.as_bytes());
    let size = big.len();
    // The default (10 MiB) reads both.
    let (code, v) = check_json(t.path(), &["."]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(finding_paths(&v), ["src/big.rs", "src/small.rs"]);

    // The config's limit refuses the big file, naming it, its size, the limit and the
    // ways to raise it; the small one is still analyzed.
    write(t.path(), "msgaudit.toml", b"max_file_size = \"1KiB\"\n");
    let (code, v) = check_json(t.path(), &["."]);
    assert_eq!(code, 2, "{v}");
    assert_eq!(
        v["errors"],
        serde_json::json!([{
            "path": "src/big.rs",
            "message": format!(
                "file too large: {size} bytes, over the limit of 1024 bytes (1 KiB); raise it \
                 with `--max-file-size` or `max_file_size` in msgaudit.toml"
            )
        }])
    );
    assert_eq!(finding_paths(&v), ["src/small.rs"]);

    // The flag wins over the config, in both directions.
    let (code, v) = check_json(t.path(), &[".", "--max-file-size", "1MB"]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(finding_paths(&v).len(), 2);
    assert!(STALE.len() > 50);
    let (code, v) = check_json(t.path(), &[".", "--max-file-size", "50"]);
    assert_eq!(code, 2, "{v}");
    assert_eq!(v["errors"].as_array().unwrap().len(), 2);
    msgaudit()
        .current_dir(t.path())
        .args(["check", "--format", "short", ".", "--max-file-size", "50"])
        .assert()
        .code(2)
        .stdout(predicate::str::contains(format!(
            "src/big.rs: error: file too large: {size} bytes, over the limit of 50 bytes;"
        )));
}

#[test]
fn bad_max_file_size_is_a_usage_or_config_error() {
    for bad in ["0", "ten", "5TB", "-1", "1.5MB", ""] {
        msgaudit()
            .args(["check", &format!("--max-file-size={bad}"), "."])
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(format!(
                "invalid value '{bad}' for '--max-file-size <BYTES|SIZE>'"
            )));
    }
    config_error(
        "max_file_size = 0\n",
        "msgaudit.toml:1:17: error: invalid `max_file_size`: must be a positive number of bytes, not 0",
    );
    config_error(
        "max_file_size = \"lots\"\n",
        "msgaudit.toml:1:17: error: invalid `max_file_size`: `lots` is not a size",
    );
    config_error(
        "max_file_size = [1]\n",
        "msgaudit.toml:1:17: error: invalid `max_file_size`: expected a number of bytes or a size such as \"10MB\", found array",
    );
}

/// Test modules declared out of line are skipped like inline ones, and counted as
/// skipped test code; with `include_tests = true` they are analyzed.
#[test]
fn out_of_line_test_modules_follow_include_tests() {
    let fixture = "fixtures/ma001_ack_before_commit/bad_cfg_test_module_files_beside_helper";
    let config = std::env::temp_dir().join(format!("msgaudit-tests-{}.toml", std::process::id()));
    std::fs::write(&config, "include_tests = true\n").unwrap();
    let count = |json: &[u8]| -> (usize, Value) {
        let v: Value = serde_json::from_slice(json).unwrap();
        (
            v["findings"].as_array().unwrap().len(),
            v["summary"].clone(),
        )
    };
    let (plain, _) = run_in_repo(&[fixture, "--format", "json"]);
    let (with_tests, _) = run_in_repo(&[
        fixture,
        "--format",
        "json",
        "--config",
        config.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_file(&config);
    let (n, summary) = count(&plain);
    assert_eq!(n, 1, "{summary}");
    // The three files, counted as files, and the declaration `mod fakes;` in the
    // parsed `ingest.rs` as an item (`lib.rs` names no API: it is not parsed).
    assert_eq!(summary["skipped"]["test_modules"], 3, "{summary}");
    assert_eq!(summary["skipped"]["test_code_items"], 1, "{summary}");
    assert_eq!(summary["analyzed"], 2, "{summary}");
    let (n, summary) = count(&with_tests);
    assert_eq!(n, 4, "{summary}");
}

/// A function body left out of the parse that turns out to be needed is parsed
/// then; a syntax error in it is the file's error, as when the file is parsed
/// whole, and the file is not analyzed.
#[test]
fn syntax_error_in_a_needed_body_is_the_files_error() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"b\"\n").unwrap();
    std::fs::write(
        src.join("main.rs"),
        "use sqlx::PgPool;\n\
         pub struct Db { pool: PgPool }\n\
         async fn save(db: &Db) {\n\
         \x20   sqlx::query(\"INSERT INTO t VALUES (1)\").execute(&db.pool).await.unwrap();\n\
         }\n\
         async fn helper(db: &Db) {\n\
         \x20   save(db).await;\n\
         \x20   let x = ;\n\
         }\n",
    )
    .unwrap();
    let errors = |extra: &[&str]| {
        let out = msgaudit()
            .arg("check")
            .args(["--format", "json"])
            .args(extra)
            .arg(dir.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["errors"].clone()
    };
    let lazy = errors(&[]);
    assert_eq!(lazy, errors(&["--no-prefilter"]));
    assert_eq!(lazy[0]["line"], 8, "{lazy}");
    assert_eq!(lazy[0]["column"], 13, "{lazy}");
}

/// SPEC §3: run on one member of a workspace, its path dependency outside the PATH is
/// not read (the cross-crate finding is absent) and the summaries name it; run from
/// the workspace root, the call into it is followed.
#[test]
fn path_dependencies_outside_the_paths_are_named() {
    let ws = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/workspaces/ws_bad_ack_before_store_in_sibling_crate");
    let (_, member) = check_json(&ws, &["worker"]);
    assert!(finding_paths(&member).is_empty(), "{member}");
    assert_eq!(
        member["summary"]["outside_dependencies"],
        serde_json::json!(["storage"])
    );
    let (_, root) = check_json(&ws, &["."]);
    assert_eq!(finding_paths(&root), vec!["worker/src/main.rs"]);
    assert!(root["summary"].get("outside_dependencies").is_none());
    let human = msgaudit()
        .current_dir(&ws)
        .args(["check", "worker"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.contains("path dependencies outside the analyzed paths, not read: storage"),
        "{text}"
    );
}

/// Findings and labels name the crate of their place, and the summary counts crates
/// and workspaces (issue 18): a label in `storage` reached from `worker`. A member
/// run counts one workspace only when its root is inside the PATH.
#[test]
fn places_name_their_crate_and_the_summary_counts_crates() {
    let ws = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/workspaces/ws_bad_ack_before_store_in_sibling_crate");
    let (_, root) = check_json(&ws, &["."]);
    let finding = &root["findings"][0];
    assert_eq!(finding["crate"], "worker", "{root}");
    let crates: Vec<(&str, &str)> = finding["labels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["path"].as_str().unwrap(), l["crate"].as_str().unwrap()))
        .collect();
    assert!(
        crates.contains(&("storage/src/lib.rs", "storage")),
        "{crates:?}"
    );
    assert_eq!(root["summary"]["crates"], 2);
    assert_eq!(root["summary"]["workspaces"], 1);
    let (_, member) = check_json(&ws, &["worker"]);
    assert_eq!(member["summary"]["crates"], 1);
    assert_eq!(member["summary"]["workspaces"], 0);
    // A file with no manifest inside the PATH names no crate.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "consumer.rs", ACK_BEFORE_INSERT);
    let (_, lone) = check_json(dir.path(), &["."]);
    assert_eq!(lone["findings"].as_array().unwrap().len(), 1, "{lone}");
    assert!(lone["findings"][0].get("crate").is_none(), "{lone}");
    assert_eq!(lone["summary"]["crates"], 1);
}

/// ruff's and clippy's habits (issue 20): `--output-format`, `-o FILE` written
/// atomically, `--exit-zero`, `--color`, and per-rule counts in `--statistics`.
#[test]
fn output_file_exit_zero_color_and_per_rule_statistics() {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.json");
    let out = msgaudit()
        .current_dir(&demo)
        .args([
            "check",
            ".",
            "--output-format",
            "json",
            "--exit-zero",
            "--statistics",
            "-o",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stdout.is_empty(), "the report goes to the file only");
    let json: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    let findings = json["findings"].as_array().unwrap();
    let ma001 = findings.iter().filter(|f| f["code"] == "MA001").count();
    assert!(ma001 > 0);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("findings MA001 ack-before-commit: {ma001}")),
        "{stderr}"
    );
    // No temporary file is left beside the report.
    let names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["report.json"]);
    // A report that cannot be written is an error (exit 2), not silence.
    msgaudit()
        .current_dir(&demo)
        .args(["check", ".", "-o"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot write report"));
    msgaudit()
        .current_dir(&demo)
        .args(["check", ".", "--exit-zero", "--fail-on", "error"])
        .assert()
        .code(2);
    // Without --exit-zero the same findings fail the run.
    msgaudit()
        .current_dir(&demo)
        .args(["check", "."])
        .assert()
        .code(1);
    let human = |args: &[&str], env: &[(&str, &str)]| {
        let mut cmd = msgaudit();
        cmd.current_dir(&demo).args(["check", "."]).args(args);
        cmd.env_remove("NO_COLOR").env_remove("FORCE_COLOR");
        for (k, v) in env {
            cmd.env(k, v);
        }
        String::from_utf8(cmd.output().unwrap().stdout).unwrap()
    };
    let ansi = |s: &str| s.contains('\u{1b}');
    assert!(!ansi(&human(&[], &[])), "not a terminal: no colour");
    assert!(ansi(&human(&["--color", "always"], &[("NO_COLOR", "1")])));
    assert!(ansi(&human(&[], &[("FORCE_COLOR", "1")])));
    assert!(!ansi(&human(
        &["--color", "never"],
        &[("FORCE_COLOR", "1")]
    )));
}

/// A manifest Cargo would refuse is an input error at its position (exit 2), and the
/// package's files are still analyzed (SPEC §3: its crates, file by file as before).
#[test]
fn a_refused_manifest_is_an_input_error_and_its_files_are_analyzed() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "Cargo.toml",
        "[package]\nname = \"relay\"\nedition = \"2099\"\n",
    );
    write(dir.path(), "src/main.rs", ACK_BEFORE_INSERT);
    let (code, root) = check_json(dir.path(), &["."]);
    assert_eq!(code, 2, "{root}");
    let errors = root["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{root}");
    assert_eq!(errors[0]["path"], "Cargo.toml");
    assert_eq!(errors[0]["line"], 3);
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .contains("Cargo would refuse this manifest"),
        "{root}"
    );
    assert_eq!(root["findings"].as_array().unwrap().len(), 1, "{root}");
}

/// `msgaudit completions bash` is a script bash loads and completes with: the
/// subcommands and `check`'s options.
#[test]
fn bash_completes_subcommands_and_options() {
    let out = msgaudit().args(["completions", "bash"]).output().unwrap();
    assert!(out.status.success());
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("msgaudit.bash");
    fs::write(&script, &out.stdout).unwrap();
    // As bash calls a completion function: the command, the word being completed
    // and the word before it.
    let complete = |words: &str, cword: usize| {
        let w: Vec<&str> = words.split(' ').collect();
        let run = format!(
            "source '{}'; COMP_WORDS=({words}); COMP_CWORD={cword}; _msgaudit msgaudit '{}' '{}'; echo \"${{COMPREPLY[@]}}\"",
            script.display(),
            w[cword],
            w[cword - 1]
        );
        let out = std::process::Command::new("bash")
            .args(["--noprofile", "--norc", "-c", &run])
            .output()
            .expect("bash runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let subcommands = complete("msgaudit ch", 1);
    assert!(
        subcommands.contains("check") && subcommands.contains("checklist"),
        "{subcommands}"
    );
    assert_eq!(complete("msgaudit check --fai", 2).trim(), "--fail-on");
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let out = msgaudit().args(["completions", shell]).output().unwrap();
        assert!(out.status.success() && !out.stdout.is_empty(), "{shell}");
    }
}

/// `msgaudit man` and `msgaudit man check` are manual pages groff renders without
/// a warning; an unknown subcommand is a usage error.
#[test]
fn manual_pages_render_with_groff() {
    if std::process::Command::new("groff")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(
            std::env::var_os("MSGAUDIT_REQUIRE_NVIM").is_none(),
            "groff is missing in CI"
        );
        eprintln!("skipped: groff is not installed");
        return;
    }
    for (args, title, option) in [
        (vec!["man"], "msgaudit", "completions"),
        (vec!["man", "check"], "msgaudit-check", "--fail-on"),
    ] {
        let out = msgaudit().args(&args).output().unwrap();
        assert!(out.status.success());
        let roff = String::from_utf8(out.stdout).unwrap();
        assert!(roff.contains(&format!(".TH {title} 1")), "{roff}");
        let dir = tempfile::tempdir().unwrap();
        let page = dir.path().join("page.1");
        fs::write(&page, &roff).unwrap();
        let rendered = std::process::Command::new("groff")
            .args(["-man", "-Tutf8", "-ww"])
            .arg(&page)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&rendered.stderr);
        assert!(
            rendered.status.success() && stderr.trim().is_empty(),
            "{stderr}"
        );
        // groff renders `-` as U+2010 in UTF-8 output: compare without hyphens.
        let text = String::from_utf8_lossy(&rendered.stdout).replace(['\u{2010}', '-'], "");
        assert!(text.contains(&option.replace('-', "")), "{text}");
    }
    msgaudit()
        .args(["man", "nope"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no subcommand `nope`"));
}

/// `--show-files` prints what a check would read (exclude and test targets applied)
/// and exits 0; `--show-settings` prints each setting with where it comes from.
#[test]
fn show_files_and_show_settings() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "Cargo.toml", "[package]\nname = \"svc\"\n");
    write(dir.path(), "src/main.rs", "fn main() {}\n");
    write(dir.path(), "src/gen/schema.rs", "fn g() {}\n");
    write(dir.path(), "tests/it.rs", "fn t() {}\n");
    write(dir.path(), "deploy/app.yaml", "a: 1\n");
    write(
        dir.path(),
        "msgaudit.toml",
        "exclude = [\"src/gen/**\"]\nmax_file_size = \"2MiB\"\n[rules]\nMA001 = \"warning\"\n\
         [[overrides]]\npaths = [\"src/legacy/**\"]\nrules = { MA006 = \"off\" }\n",
    );
    let out = msgaudit()
        .current_dir(dir.path())
        .args(["check", "--show-files"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "deploy/app.yaml\nsrc/main.rs\n"
    );
    let out = msgaudit()
        .current_dir(dir.path())
        .args(["check", "--show-settings", "--ignore", "MA014"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for line in [
        "config file: msgaudit.toml (found upward from .)",
        "max_file_size: 2097152 bytes (from msgaudit.toml)",
        "include_tests: false (default)",
    ] {
        assert!(text.lines().any(|l| l == line), "{line:?} in\n{text}");
    }
    let rule = |code: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(code))
            .unwrap()
    };
    assert!(
        rule("MA001").ends_with("warning (from msgaudit.toml)"),
        "{text}"
    );
    assert!(rule("MA002").ends_with("error   (default)"), "{text}");
    assert!(rule("MA014").ends_with("off     (--ignore)"), "{text}");
    assert!(
        text.contains("override: paths [\"src/legacy/**\"]: MA006 = off"),
        "{text}"
    );
    msgaudit()
        .current_dir(dir.path())
        .args(["check", "--show-files", "--show-settings"])
        .assert()
        .code(2);
}

/// `--jobs 0` says what is allowed.
#[test]
fn jobs_zero_says_what_is_allowed() {
    msgaudit()
        .args(["check", "--jobs", "0", "."])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("give 1 or more"));
    msgaudit()
        .args(["check", "--jobs", "many", "."])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a whole number of threads"));
}
