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
