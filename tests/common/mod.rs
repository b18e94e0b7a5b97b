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
