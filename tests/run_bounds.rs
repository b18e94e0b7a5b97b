//! Never lose a run (issue 15): inputs generated at test time that used to abort the
//! whole process, take exponential or super-linear time, or print output quadratic in
//! the input. Each runs next to an ordinary crate with a known finding, which must
//! still be reported. The process is killed after 60 s (`common::msgaudit`); on the
//! analyzer before these fixes each case took far longer (or aborted), here each takes
//! well under a second in a release build (bench/hostile.sh measures them).

mod common;
use common::{check_output, write};

use std::path::Path;

use serde_json::Value;

const CARGO: &str = "[package]\nname = \"h\"\nversion = \"0.1.0\"\n\n[dependencies]\nlapin = \"2\"\nsqlx = \"0.7\"\n";
const HEAD: &str = "use lapin::options::BasicAckOptions;\n";
const RECEIVE: &str = "let d = consumer.next().await.unwrap().unwrap();\n";
const ACK: &str = "d.ack(BasicAckOptions::default()).await.unwrap();\n";
const INSERT: &str =
    "sqlx::query(\"INSERT INTO t (a) VALUES (1)\").execute(&pool).await.unwrap();\n";

/// A crate whose one file acks before its insert: MA001 at 3:1.
fn ordinary(root: &Path) {
    write(root, "ok/Cargo.toml", CARGO);
    write(
        root,
        "ok/src/main.rs",
        format!("{HEAD}async fn handle(consumer: lapin::Consumer, pool: sqlx::PgPool) {{\n{RECEIVE}{ACK}{INSERT}}}\n"),
    );
}

fn handler(body: &str) -> String {
    format!("{HEAD}async fn handle(consumer: lapin::Consumer, pool: sqlx::PgPool, xs: Vec<u8>, c: bool) {{\n{body}}}\n")
}

/// Checks `hostile` (a crate's `src/main.rs`) beside the ordinary crate: the run
/// finishes, the ordinary finding is there, and the JSON is returned.
fn run(hostile: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    ordinary(dir.path());
    write(dir.path(), "h/Cargo.toml", CARGO);
    write(dir.path(), "h/src/main.rs", hostile);
    let out = check_output(dir.path(), &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code().is_some(),
        "msgaudit did not exit normally: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let ok = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["path"] == "ok/src/main.rs" && f["code"] == "MA001" && f["line"] == 4);
    assert!(ok, "the ordinary crate's finding is lost: {v}");
    v
}

fn findings_in<'a>(v: &'a Value, path: &str) -> Vec<&'a Value> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["path"] == path)
        .collect()
}

#[test]
fn a_tuple_index_chain_lexed_as_floats_is_refused_not_a_stack_overflow() {
    // `d.0.0.0…`: Rust lexes `0.0` as one float literal, so a guard counting tokens
    // saw half the levels syn builds; 37 000 of them overflowed the stack and aborted
    // the process with no output for any file.
    let chain = ".0".repeat(37_000);
    let v = run(&handler(&format!(
        "{RECEIVE}let _x = d{chain};\n{ACK}{INSERT}"
    )));
    let errors = v["errors"].as_array().unwrap();
    let e = errors
        .iter()
        .find(|e| e["path"] == "h/src/main.rs")
        .expect("the chain is refused with an error naming the file");
    assert_eq!(e["line"], 4, "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("nested too deeply"),
        "{e}"
    );
}

#[test]
fn a_short_tuple_index_chain_is_still_analyzed() {
    let chain = ".0".repeat(100);
    let v = run(&handler(&format!(
        "{RECEIVE}let _x = d{chain};\n{ACK}{INSERT}"
    )));
    assert_eq!(findings_in(&v, "h/src/main.rs").len(), 1, "{v}");
}

#[test]
fn deeply_nested_loops_of_every_kind_finish() {
    // Each loop ran its body twice whatever came back: 2^depth passes (22 levels took
    // 43 s and 2.6 GB).
    for open in [
        "loop {\n",
        "for x in xs.iter() {\n",
        "while c {\n",
        "loop {\nif c { break; }\n",
    ] {
        let depth = 40;
        let body = format!(
            "{}{RECEIVE}{INSERT}{ACK}{}",
            open.repeat(depth),
            "}\n".repeat(depth)
        );
        let v = run(&handler(&body));
        let codes: Vec<&str> = findings_in(&v, "h/src/main.rs")
            .iter()
            .map(|f| f["code"].as_str().unwrap())
            .collect();
        assert_eq!(codes, ["MA011"], "{open}: {v}");
    }
}

#[test]
fn one_message_acked_between_thousands_of_effects_is_linear_and_bounded() {
    // Every ack paired with every later effect: 2 000 pairs took 35 s, 3.2 GB and
    // printed 700 MB of JSON. Each ack now reports the effects up to the next ack of
    // its message, and a finding shows at most 16 labels.
    let pairs = 3_000;
    let body = format!("{RECEIVE}{}", format!("{ACK}{INSERT}").repeat(pairs));
    let v = run(&handler(&body));
    let found = findings_in(&v, "h/src/main.rs");
    let ma001 = found.iter().filter(|f| f["code"] == "MA001").count();
    assert_eq!(ma001, pairs, "one MA001 per ack");
    for f in &found {
        assert!(f["labels"].as_array().unwrap().len() <= 16, "{f}");
    }
}

#[test]
fn messages_handled_one_after_another_pair_only_their_own_effects() {
    // MA011 paired each message's insert with the next message's ack.
    let body = format!("{RECEIVE}{INSERT}{ACK}").repeat(2_000);
    let v = run(&handler(&body));
    let found = findings_in(&v, "h/src/main.rs");
    assert_eq!(found.len(), 2_000, "one MA011 per message");
    assert!(found.iter().all(|f| f["code"] == "MA011"));
    // Each names the ack on the line after its insert, not a later message's.
    for f in &found {
        let labels = f["labels"].as_array().unwrap();
        assert_eq!(labels.len(), 1, "{f}");
        assert_eq!(labels[0]["line"], f["line"].as_u64().unwrap() + 1, "{f}");
    }
}

#[test]
fn thousands_of_branches_join_in_linear_time() {
    // Sequential `if`s (each join searched one list per element of the other) and
    // the arms of one `match` (joined one by one into an ever larger state).
    let ifs: String = (0..3_000)
        .map(|i| format!("if xs.len() == {i} {{ {INSERT} }}\n"))
        .collect();
    let v = run(&handler(&format!("{RECEIVE}{ifs}{ACK}")));
    assert_eq!(
        findings_in(&v, "h/src/main.rs").len(),
        3_000,
        "one MA011 per insert"
    );
    let arms: String = (0..5_000)
        .map(|i| format!("{i} => {{ {INSERT} }}\n"))
        .collect();
    let v = run(&handler(&format!(
        "{RECEIVE}match xs.len() {{\n{arms}_ => {{}}\n}}\n{ACK}"
    )));
    assert_eq!(findings_in(&v, "h/src/main.rs").len(), 5_000);
}

#[test]
fn the_human_report_of_thousands_of_findings_is_linear_in_their_number() {
    // 3 000 inserts in the arms of one `match`, each acked by the one `ack` after
    // it: every finding draws its insert and the ack thousands of lines below. miette
    // joined two labels into one snippet of every line between them once the first
    // was past the middle of the file, so half the findings each printed thousands
    // of lines (2 000 findings: 56 MB; 20 000: over 9 GB of memory).
    let arms: String = (0..3_000)
        .map(|i| format!("{i} => {{ {INSERT} }}\n"))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "h/Cargo.toml", CARGO);
    write(
        dir.path(),
        "h/src/main.rs",
        handler(&format!(
            "{RECEIVE}match xs.len() {{\n{arms}_ => {{}}\n}}\n{ACK}"
        )),
    );
    let out = common::msgaudit()
        .current_dir(dir.path())
        .args(["check", "--format", "human", "--no-cache", "."])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let findings = stdout.matches(": MA011 ").count();
    assert_eq!(findings, 3_000, "{}", String::from_utf8_lossy(&out.stderr));
    // About 20 lines a finding (two snippets, help, notes); quadratic was ~750 on average.
    let lines = stdout.lines().count();
    assert!(
        lines < 30 * findings,
        "{lines} lines for {findings} findings"
    );
}

#[test]
fn bindings_never_read_again_stay_linear() {
    // Each `let x = call()` looked through every later statement of its block for a
    // read of `x` (a batch response's failed entries): 10 000 bindings never read took
    // 5.6 s of lowering, 40 000 over a minute. Only the statements naming `x`, up to
    // its next binding, are read now.
    let unique: String = (0..20_000)
        .map(|i| format!("let r{i} = pool.fetch_thing({i}).await;\n"))
        .collect();
    let shadowed = "let r = pool.fetch_thing(1).await;\n".repeat(20_000);
    let v = run(&handler(&format!(
        "{RECEIVE}{ACK}{unique}{shadowed}{INSERT}"
    )));
    assert_eq!(findings_in(&v, "h/src/main.rs").len(), 1, "the MA001: {v}");
}

#[test]
fn functions_that_each_call_all_later_ones_finish() {
    // 2^n call paths, bounded by the budget of inlined calls, but each call copied the
    // whole state (20 such functions took 26 s).
    let n = 100;
    let mut text = String::from(HEAD);
    for i in 0..n {
        text.push_str(&format!("async fn f{i}(pool: &sqlx::PgPool) {{\n"));
        for j in i + 1..n {
            text.push_str(&format!("f{j}(pool).await;\n"));
        }
        text.push_str(&INSERT.replace("&pool", "pool"));
        text.push_str("}\n");
    }
    text.push_str(&format!(
        "async fn handle(consumer: lapin::Consumer, pool: sqlx::PgPool) {{\n{RECEIVE}{ACK}f0(&pool).await;\n}}\n"
    ));
    let v = run(&text);
    assert!(findings_in(&v, "h/src/main.rs")
        .iter()
        .any(|f| f["code"] == "MA001"));
}

#[test]
fn ten_megabytes_of_empty_statements_are_refused_before_parsing() {
    // 10 MB of `;` in a handler took 8.6 GB: each is a syntax tree node of its own.
    // The file is refused at the token bound, with the position of the first token
    // over it; the ordinary crate is still analyzed.
    let v = run(&handler(&format!(
        "{RECEIVE}{}\n{ACK}",
        ";".repeat(10_000_000)
    )));
    let e = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["path"] == "h/src/main.rs")
        .expect("refused with an error naming the file");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("more than 1000000 tokens"),
        "{e}"
    );
    assert_eq!(e["line"], 4, "{e}");
}

#[test]
fn long_runs_of_blocks_and_attributes_are_lists_not_nesting() {
    // `{}{}{}…` and 50 000 attributes were refused as "nested too deeply".
    let blocks = handler(&format!("{RECEIVE}{ACK}{}\n{INSERT}", "{}".repeat(20_000)));
    let v = run(&blocks);
    assert!(v["errors"].as_array().unwrap().is_empty(), "{v}");
    assert_eq!(findings_in(&v, "h/src/main.rs").len(), 1, "{v}");
    let attrs = format!(
        "{HEAD}{}\nasync fn handle(consumer: lapin::Consumer, pool: sqlx::PgPool) {{\n{RECEIVE}{ACK}{}\n{INSERT}}}\n",
        "#[inline]".repeat(50_000),
        "#[allow(unused)]".repeat(5_000)
    );
    let v = run(&attrs);
    assert!(v["errors"].as_array().unwrap().is_empty(), "{v}");
    assert_eq!(findings_in(&v, "h/src/main.rs").len(), 1, "{v}");
}

#[test]
fn a_yaml_file_with_cr_line_endings_has_findings_on_their_lines() {
    // A CR alone ends a line in YAML: parse errors counted so, findings did not (all
    // on line 1).
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "app.yaml",
        "# a producer\rproducer:\r  bootstrap.servers: kafka:9092\r  acks: 0\r",
    );
    write(
        dir.path(),
        "broken.yaml",
        "producer:\r  bootstrap.servers: kafka:9092\r  acks: [\r",
    );
    let out = check_output(dir.path(), &[]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = &findings_in(&v, "app.yaml")[0];
    assert_eq!(
        (f["code"].as_str(), f["line"].as_u64()),
        (Some("MA008"), Some(4)),
        "{v}"
    );
    let e = &v["errors"][0];
    assert_eq!(e["path"], "broken.yaml");
    assert_eq!(e["line"], 3, "{e}");
}

#[cfg(target_os = "linux")]
#[test]
fn a_report_that_cannot_be_written_is_exit_2_with_a_message() {
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    ordinary(dir.path());
    let bin = assert_cmd::cargo::cargo_bin("msgaudit");
    for format in ["sarif", "json", "human"] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = Command::new(&bin)
            .current_dir(dir.path())
            .args(["check", "--format", format])
            .stdout(Stdio::from(full))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{format}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("cannot write the report to standard output"),
            "{format}: {stderr}"
        );
    }
    // Standard error that cannot be written either: still an exit code, no panic.
    let full = |_| {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let out = Command::new(&bin)
        .current_dir(dir.path())
        .args(["check", "--format", "json", "--select", "MA999"])
        .stdout(Stdio::from(full(())))
        .stderr(Stdio::from(full(())))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // A closed pipe is the reader's choice, not an error.
    let mut child = Command::new(&bin)
        .current_dir(dir.path())
        .args(["check", "--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_configuration_error_still_prints_the_document_with_the_error() {
    let dir = tempfile::tempdir().unwrap();
    ordinary(dir.path());
    write(dir.path(), "msgaudit.toml", "select = [\n");
    let out = check_output(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&out.stdout).expect("a JSON document");
    let e = &v["errors"][0];
    assert!(
        e["path"].as_str().unwrap().ends_with("msgaudit.toml"),
        "{v}"
    );
    assert!(e["line"].as_u64().is_some(), "{v}");
    let out = common::msgaudit()
        .current_dir(dir.path())
        .args(["check", "--format", "sarif", "--select", "MA999"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&out.stdout).expect("a SARIF document");
    let n = &v["runs"][0]["invocations"][0]["toolExecutionNotifications"][0];
    assert!(
        n["message"]["text"].as_str().unwrap().contains("MA999"),
        "{v}"
    );
}

#[cfg(unix)]
#[test]
fn a_config_is_read_like_a_source_file() {
    // `msgaudit.toml -> /dev/zero` was read until memory ran out; a huge config too.
    let dir = tempfile::tempdir().unwrap();
    ordinary(dir.path());
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.toml")).unwrap();
    write(dir.path(), "big.toml", "# padding\n".repeat(200_000));
    for (config, message) in [
        ("zero.toml", "config file is not a regular file"),
        ("big.toml", "config file too large (2000000 bytes"),
    ] {
        let out = check_output(dir.path(), &["--config", config]);
        assert_eq!(out.status.code(), Some(2), "{config}");
        // An input error of the run, which is still analyzed with the defaults.
        let v: Value = serde_json::from_slice(&out.stdout).expect("a JSON document");
        let e = &v["errors"][0];
        assert_eq!(e["path"], config, "{v}");
        assert!(e["message"].as_str().unwrap().contains(message), "{v}");
        assert!(v["summary"]["analyzed"].as_u64().unwrap() > 0, "{v}");
    }
}

/// Runs `msgaudit check --format json` in `dir` under an address-space limit of
/// `mib` MiB (the shell's `ulimit -v`), so that memory growth shows as a failed run.
fn check_within(dir: &Path, mib: u64) -> std::process::Output {
    check_within_args(dir, mib, "")
}

/// [`check_within`] with more arguments (`args`, as the shell splits them).
fn check_within_args(dir: &Path, mib: u64, args: &str) -> std::process::Output {
    let bin = assert_cmd::cargo::cargo_bin("msgaudit");
    let mut sh = std::process::Command::new("sh");
    sh.current_dir(dir)
        .arg("-c")
        .arg(format!(
            "ulimit -v {}; exec \"$0\" check --format json {args}",
            mib * 1024
        ))
        .arg(bin);
    assert_cmd::Command::from_std(sh)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap()
}

/// `count` `if`s in a row in one handler, each acking the message, then writing.
fn acking_branches(count: usize) -> String {
    let branches: String = (0..count)
        .map(|_| format!("if c {{ {ACK}{INSERT} }}\n"))
        .collect();
    handler(&format!("{RECEIVE}{branches}"))
}

/// Issue 38, item 1: one function with 1 000 `if`s in sequence, each acking the
/// message and then writing, used memory quadratic in the branches (every ack was
/// paired with every later write, and the findings' facts with it: 220 MiB here,
/// 2.5 GiB at 4 000 branches), and the run aborted under a 512 MiB address-space
/// limit with no output at all. The facts are now bounded per ack and per effect,
/// and joins cost what a branch added: the run completes under the limit, with the
/// ordinary crate's finding and the hostile function's first ack.
#[test]
fn a_function_of_many_acking_branches_stays_within_a_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    ordinary(dir.path());
    write(dir.path(), "h/Cargo.toml", CARGO);
    write(dir.path(), "h/src/main.rs", acking_branches(1_000));
    let out = check_within(dir.path(), 512);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert!(
        findings_in(&v, "ok/src/main.rs")
            .iter()
            .any(|f| f["code"] == "MA001"),
        "{v}"
    );
    assert!(
        findings_in(&v, "h/src/main.rs")
            .iter()
            .any(|f| f["code"] == "MA001" && f["line"] == 4),
        "the first branch's ack is reported"
    );
}

/// Issue 38, item 1: past the per-function budget (4 000 acking branches: 50 s and
/// 2.5 GiB before), the function is named as not analyzed, at its name, and the
/// rest of the run is reported (exit 2, as for any input error).
#[test]
fn a_function_over_the_budget_is_named_and_the_run_goes_on() {
    let v = run(&acking_branches(4_000));
    assert!(findings_in(&v, "h/src/main.rs").is_empty(), "{v}");
    let e = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["path"] == "h/src/main.rs")
        .expect("the function is named");
    assert_eq!(
        (e["line"].as_u64(), e["column"].as_u64()),
        (Some(2), Some(10))
    );
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("`handle` has too many paths"),
        "{e}"
    );
}

/// Issue 38, item 2: crates are admitted into the pool by their estimated memory, so
/// memory does not grow with `--jobs`. With a budget that fits one crate
/// (`MSGAUDIT_MEMORY_BUDGET_MIB`, a test hook), `--jobs 4` analyzes one crate at a
/// time, and finds what an unbounded run finds.
#[test]
fn crates_are_admitted_within_the_memory_budget_whatever_the_jobs() {
    let dir = tempfile::tempdir().unwrap();
    for k in 0..4 {
        write(dir.path(), &format!("c{k}/Cargo.toml"), CARGO);
        let fns: String = (0..2_000).map(|i| format!("fn f{i}() {{ }}\n")).collect();
        write(
            dir.path(),
            &format!("c{k}/src/main.rs"),
            format!("{}{fns}", handler(&format!("{RECEIVE}{ACK}{INSERT}"))),
        );
    }
    let run = |budget: Option<&str>| {
        let mut cmd = common::msgaudit();
        cmd.current_dir(dir.path()).args([
            "check",
            "--format",
            "json",
            "--jobs",
            "4",
            "--statistics",
        ]);
        if let Some(b) = budget {
            cmd.env("MSGAUDIT_MEMORY_BUDGET_MIB", b);
        }
        cmd.output().unwrap()
    };
    let bounded = run(Some("1"));
    let stderr = String::from_utf8_lossy(&bounded.stderr);
    assert!(
        stderr.contains("crates analyzed at one time, at most: 1\n"),
        "{stderr}"
    );
    let free = run(None);
    assert_eq!(bounded.status.code(), Some(1));
    assert_eq!(bounded.stdout, free.stdout, "admission changes no finding");
    let v: Value = serde_json::from_slice(&bounded.stdout).unwrap();
    for k in 0..4 {
        assert_eq!(
            findings_in(&v, &format!("c{k}/src/main.rs")).len(),
            1,
            "{v}"
        );
    }
}

/// Issue 38, item 2: under an address-space limit, a crate whose estimate does not
/// fit what the limit leaves (after the threads' stacks) is not started, since the
/// system would refuse its memory and the process would abort with no output (the
/// build before this aborted here at every `--jobs`). Its file is named as not
/// analyzed, the other crate's finding is reported, and the exit code is 2.
#[test]
fn a_crate_too_large_for_the_address_space_limit_is_named_and_the_rest_reported() {
    let dir = tempfile::tempdir().unwrap();
    ordinary(dir.path());
    write(dir.path(), "big/Cargo.toml", CARGO);
    let fns: String = (0..100_000).map(|i| format!("fn f{i}() {{ }}\n")).collect();
    write(dir.path(), "big/src/main.rs", format!("{HEAD}{fns}"));
    for jobs in ["1", "8"] {
        let out = check_within_args(dir.path(), 800, &format!("--jobs {jobs}"));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--jobs {jobs}: {stderr}");
        let v: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
        assert!(
            findings_in(&v, "ok/src/main.rs")
                .iter()
                .any(|f| f["code"] == "MA001"),
            "{v}"
        );
        let e = v["errors"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["path"] == "big/src/main.rs")
            .expect("the crate left out is named");
        assert!(
            e["message"]
                .as_str()
                .unwrap()
                .contains("not analyzed: its crate needs about"),
            "{e}"
        );
    }
}

/// Crates whose analysis keeps taking memory after the system refused it (a test hook
/// makes lowering `hog.rs` take 32 MiB at a time; issue 38 item 2: a second refusal
/// after the reserve was given back, or several threads refused at once, aborted the
/// process). Each such crate stops at its next check point and is named; the run ends
/// with exit 2 and valid JSON at every `--jobs`, and with one thread the crate
/// analyzed before them keeps its finding.
#[test]
fn crates_that_run_out_of_memory_one_after_another_or_at_once_are_named() {
    let dir = tempfile::tempdir().unwrap();
    // `ok` sorts first: with one thread it is analyzed before memory runs out.
    ordinary(dir.path());
    for c in ["p0", "p1", "p2", "p3"] {
        write(dir.path(), &format!("{c}/Cargo.toml"), CARGO);
        write(
            dir.path(),
            &format!("{c}/src/main.rs"),
            "mod hog;\nfn main() {}\n",
        );
        write(
            dir.path(),
            &format!("{c}/src/hog.rs"),
            handler(&format!("{RECEIVE}{ACK}{INSERT}")),
        );
    }
    for jobs in ["1", "4", "8"] {
        let bin = assert_cmd::cargo::cargo_bin("msgaudit");
        let mut sh = std::process::Command::new("sh");
        sh.current_dir(dir.path())
            .env("MSGAUDIT_FAULT_INJECT", "oom:hog.rs")
            .arg("-c")
            .arg(format!(
                "ulimit -v {}; exec \"$0\" check --format json --jobs {jobs}",
                800 * 1024
            ))
            .arg(bin);
        let out = assert_cmd::Command::from_std(sh)
            .timeout(std::time::Duration::from_secs(120))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--jobs {jobs}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        let v: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
        let errors = v["errors"].as_array().unwrap();
        for c in ["p0", "p1", "p2", "p3"] {
            let e = errors
                .iter()
                .find(|e| e["path"] == format!("{c}/src/hog.rs"))
                .unwrap_or_else(|| panic!("--jobs {jobs}: {c} is named: {v}"));
            assert!(
                e["message"]
                    .as_str()
                    .unwrap()
                    .contains("the system refused memory"),
                "{e}"
            );
        }
        if jobs == "1" {
            assert!(
                findings_in(&v, "ok/src/main.rs")
                    .iter()
                    .any(|f| f["code"] == "MA001"),
                "{v}"
            );
        }
    }
}
