//! Helpers shared by the integration tests (each `tests/*.rs` is its own crate and
//! includes this module with `mod common;`).

#![allow(dead_code)] // each test crate uses a part

use std::fs;
use std::path::Path;
use std::time::Duration;

use assert_cmd::Command;

/// The `msgaudit` binary, killed after 60 s (a hang fails the test instead of CI).
pub fn msgaudit() -> Command {
    let mut cmd = Command::cargo_bin("msgaudit").unwrap();
    cmd.timeout(Duration::from_secs(60));
    cmd
}

/// Runs `msgaudit check --format json ARGS` in `dir` (each suite reads the output
/// its own way).
pub fn check_output(dir: &Path, args: &[&str]) -> std::process::Output {
    msgaudit()
        .current_dir(dir)
        .arg("check")
        .args(["--format", "json"])
        .args(args)
        .output()
        .unwrap()
}

/// Writes `content` to `root/rel`, creating the directories on the way.
pub fn write(root: &Path, rel: &str, content: impl AsRef<[u8]>) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, content).unwrap();
}

/// Makes a FIFO at `path`; false when the system has no `mkfifo` (the caller then
/// has nothing to check).
pub fn mkfifo(path: &Path) -> bool {
    std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success())
}

/// `msgaudit` with git's global and system configuration moved to `home` (nothing
/// there unless a test writes it) and no Cargo target directory in the environment,
/// so that the machine running the tests cannot change what is walked.
pub fn msgaudit_at_home(home: &Path) -> Command {
    let mut cmd = msgaudit();
    cmd.env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("GIT_CONFIG_GLOBAL", home.join(".gitconfig"))
        .env("GIT_CONFIG_SYSTEM", home.join("gitconfig-system"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR");
    cmd
}

/// Runs `git ARGS` in `dir` (system config ignored) and returns its trimmed stdout;
/// fails the test when git fails.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git is installed");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A new git repository at `dir`, with a committer set in its own config.
pub fn git_repo(dir: &Path) {
    fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q"]);
    for (key, value) in [
        ("user.name", "msgaudit"),
        ("user.email", "msgaudit@example.com"),
        ("commit.gpgsign", "false"),
    ] {
        git(dir, &["config", key, value]);
    }
}

/// The errors of a SARIF log against the official SARIF 2.1.0 schema (draft-04),
/// with format checks on.
pub fn sarif_schema_errors(log: &serde_json::Value) -> Vec<String> {
    let schema: serde_json::Value =
        serde_json::from_str(&fs::read_to_string("tests/data/sarif-schema-2.1.0.json").unwrap())
            .unwrap();
    let validator = jsonschema::draft4::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the SARIF schema compiles");
    validator
        .iter_errors(log)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// Whether the tests that run npm tools (the SARIF Multitool, the Mermaid CLI) must
/// run rather than be skipped: `CI` or `MSGAUDIT_REQUIRE_NPX` is set.
pub fn npx_required() -> bool {
    ["CI", "MSGAUDIT_REQUIRE_NPX"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()))
}

/// Skips an npm-based test, saying `skipped` on the process's own stderr (which the
/// harness does not capture, so the skip shows in a plain `cargo test`); fails
/// instead where [`npx_required`], telling what to `install`.
pub fn skip_npx_test(why: &str, install: &str, skipped: &str) {
    assert!(
        !npx_required(),
        "{why}, and CI or MSGAUDIT_REQUIRE_NPX is set: {install}"
    );
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIPPED: {why} ({skipped})");
}

/// Whether `npx` runs here.
pub fn npx_found() -> bool {
    std::process::Command::new("npx")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}
