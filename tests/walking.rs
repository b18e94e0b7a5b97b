//! Walking the tree (issue 15, "Never lose a run"): ignore files are read like any
//! other input (regular files only, never through a symlink, size-capped) and count
//! from the repository root down, never from above it; a `target` directory is
//! skipped only where Cargo puts it, and counted; a file reached by overlapping PATHs
//! is one file in one crate; a baseline is read like a source file; `--jobs` is
//! bounded. Every tree is generated at test time, and git's global configuration is
//! moved to a temporary home.

mod common;
use common::{mkfifo, msgaudit_at_home, write};

use std::fs;
use std::path::Path;

use serde_json::Value;

/// An rdkafka consumer that commits its offset before the transaction: MA001 at 67:14.
const BAD: &str =
    include_str!("../fixtures/ma001_ack_before_commit/bad_commit_message_before_tx_commit.rs");
const BAD_LINE: u64 = 67;

/// A crate whose worker (`src/worker.rs`) acks a Redis entry and then calls
/// `store::apply_payment` (`src/store.rs`), which commits the effect: one MA001 at the
/// `xack`, found only when both files are one crate.
const XF: [(&str, &str); 4] = [
    (
        "Cargo.toml",
        include_str!("../fixtures/ma001_ack_before_commit/bad_tx_helper_cross_file/Cargo.toml"),
    ),
    (
        "src/main.rs",
        include_str!("../fixtures/ma001_ack_before_commit/bad_tx_helper_cross_file/src/main.rs"),
    ),
    (
        "src/worker.rs",
        include_str!("../fixtures/ma001_ack_before_commit/bad_tx_helper_cross_file/src/worker.rs"),
    ),
    (
        "src/store.rs",
        include_str!("../fixtures/ma001_ack_before_commit/bad_tx_helper_cross_file/src/store.rs"),
    ),
];

/// `msgaudit check --format json ARGS` in `dir` with git's configuration in `home`:
/// (exit code, JSON, stderr). Fails on a crash, a hang (killed after 60 s) or output
/// that is not JSON.
fn check_in(dir: &Path, home: &Path, args: &[&str], env: &[(&str, &Path)]) -> (i32, Value, String) {
    let mut cmd = msgaudit_at_home(home);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .current_dir(dir)
        .arg("check")
        .args(["--format", "json"])
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let code = out
        .status
        .code()
        .unwrap_or_else(|| panic!("msgaudit was killed: {:?}\n{stderr}", out.status));
    assert!(!stderr.contains("panicked"), "{stderr}");
    let json: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: stdout {:?}, stderr {stderr}", out.stdout));
    (code, json, stderr)
}

/// `check_in` with an empty home and nothing else in the environment.
fn check(dir: &Path, args: &[&str]) -> (i32, Value) {
    let home = tempfile::tempdir().unwrap();
    let (code, v, _) = check_in(dir, home.path(), args, &[]);
    (code, v)
}

/// (path, line) of every finding.
fn findings(v: &Value) -> Vec<(String, u64)> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// (path, message) of every input error.
fn errors(v: &Value) -> Vec<(String, String)> {
    v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["path"].as_str().unwrap().to_string(),
                e["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn bad_at(paths: &[&str]) -> Vec<(String, u64)> {
    paths.iter().map(|p| (p.to_string(), BAD_LINE)).collect()
}

// ----- 1. ignore files and baselines are read like source files ------------------------

/// A committed `src/.gitignore -> /dev/zero` (git refuses to follow it) once made
/// msgaudit read zeros until it had 7 GB. A symlinked ignore file is never followed,
/// not even to a regular file: an error names it, and its patterns do not apply.
#[cfg(unix)]
#[test]
fn symlinked_ignore_files_are_refused_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "src/consumer.rs", BAD);
    write(root, "patterns", "consumer.rs\n");
    std::os::unix::fs::symlink("/dev/zero", root.join("src/.gitignore")).unwrap();
    std::os::unix::fs::symlink("../patterns", root.join("src/.ignore")).unwrap();
    let (code, v) = check(root, &["."]);
    assert_eq!(code, 2, "{v}");
    let link = "ignore file not read: it is a symbolic link (git does not follow one \
                either); its patterns are not applied";
    assert_eq!(
        errors(&v),
        [
            ("src/.gitignore".to_string(), link.to_string()),
            ("src/.ignore".to_string(), link.to_string()),
        ]
    );
    assert_eq!(findings(&v), bad_at(&["src/consumer.rs"]));
}

/// A FIFO named `.gitignore` (or `.ignore`) made the walk block forever.
#[cfg(unix)]
#[test]
fn ignore_files_that_are_fifos_are_refused_not_opened() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "src/consumer.rs", BAD);
    if !mkfifo(&root.join(".gitignore")) || !mkfifo(&root.join("src/.ignore")) {
        return; // no mkfifo here: nothing to check
    }
    let (code, v) = check(root, &["."]);
    assert_eq!(code, 2, "{v}");
    let fifo = "ignore file not read: not a regular file; its patterns are not applied";
    assert_eq!(
        errors(&v),
        [
            (".gitignore".to_string(), fifo.to_string()),
            ("src/.ignore".to_string(), fifo.to_string()),
        ]
    );
    assert_eq!(findings(&v), bad_at(&["src/consumer.rs"]));
}

/// Compiled ignore patterns take hundreds of times their size in memory (five nested
/// 2.2 MB `.gitignore`s took 4.2 GB): an ignore file over 256 KiB is refused.
#[test]
fn an_oversized_ignore_file_is_refused_with_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "consumer.rs", BAD);
    let mut text = "consumer.rs\n".to_string();
    while text.len() <= 256 * 1024 {
        text.push_str("# padding padding padding padding padding padding padding\n");
    }
    write(root, ".gitignore", &text);
    let (code, v) = check(root, &["."]);
    assert_eq!(code, 2, "{v}");
    assert_eq!(
        errors(&v),
        [(
            ".gitignore".to_string(),
            format!(
                "ignore file too large: {} bytes, over the limit of 262144 bytes (256 KiB); \
                 its patterns are not applied",
                text.len()
            )
        )]
    );
    assert_eq!(findings(&v), bad_at(&["consumer.rs"]));
}

/// Ignore files under the limit one by one still add up: all of one run's together
/// are read up to 1 MiB, and the next one is refused.
#[test]
fn ignore_files_share_one_budget() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut padding = String::new();
    while padding.len() < 250 * 1024 {
        padding.push_str("# padding padding padding padding padding padding padding\n");
    }
    let deepest = "a/b/c/d/e";
    for depth in 1..=5 {
        let d = deepest.split('/').take(depth).collect::<Vec<_>>().join("/");
        write(
            root,
            &format!("{d}/.gitignore"),
            format!("consumer.rs\n{padding}"),
        );
    }
    write(root, &format!("{deepest}/consumer.rs"), BAD);
    let (code, v) = check(root, &["."]);
    assert_eq!(code, 2, "{v}");
    assert_eq!(
        errors(&v),
        [(
            format!("{deepest}/.gitignore"),
            "ignore file not read: the ignore files of this run reach the limit of \
             1048576 bytes (1 MiB) in total; its patterns are not applied"
                .to_string()
        )]
    );
    // The four files read still ignore `consumer.rs`.
    assert_eq!(findings(&v), []);
    assert_eq!(v["summary"]["files"], 0);
}

/// `--baseline` accepted `/dev/zero` (read until memory ran out), FIFOs (blocked
/// forever) and any size: it is read like a source file now.
#[test]
fn baseline_must_be_a_regular_file_within_the_size_limit() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "consumer.rs", BAD);
    let home = tempfile::tempdir().unwrap();
    let refused = |baseline: &str, extra: &[&str]| {
        let out = msgaudit_at_home(home.path())
            .current_dir(root)
            .args(["check", ".", "--format", "json", "--baseline", baseline])
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    #[cfg(unix)]
    {
        assert_eq!(
            refused("/dev/zero", &[]),
            "/dev/zero: error: cannot read baseline: not a regular file\n"
        );
        if mkfifo(&root.join("fifo.json")) {
            assert_eq!(
                refused("fifo.json", &[]),
                "fifo.json: error: cannot read baseline: not a regular file\n"
            );
        }
    }
    // A valid baseline, padded past `--max-file-size`.
    let text = format!(
        "{{\"version\": 1, \"findings\": []}}{}\n",
        " ".repeat(20_000)
    );
    write(root, "big.json", &text);
    assert_eq!(
        refused("big.json", &["--max-file-size", "16KiB"]),
        format!(
            "big.json: error: baseline file too large: {} bytes, over the limit of 16384 \
             bytes (16 KiB); raise it with `--max-file-size` or `max_file_size` in \
             msgaudit.toml\n",
            text.len()
        )
    );
    // Under the limit it is read as before.
    let out = msgaudit_at_home(home.path())
        .current_dir(root)
        .args(["check", ".", "--format", "json", "--baseline", "big.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}

// ----- 2. ignore files count from the repository root down ------------------------------

/// The dotfiles setup: `~/.gitignore` (or `~/.ignore`) says `*`. Above the
/// repository root it is not the repository's: it once hid every file (0 files,
/// exit 0). The repository's own ignore files still apply from its root down, also
/// when a subdirectory is checked.
#[test]
fn ignore_files_above_the_repository_root_do_not_apply() {
    let dir = tempfile::tempdir().unwrap();
    let outer = dir.path();
    write(outer, ".gitignore", "*\n");
    write(outer, ".ignore", "*\n");
    let repo = outer.join("repo");
    fs::create_dir_all(repo.join(".git")).unwrap();
    write(&repo, ".gitignore", "generated.rs\n");
    write(&repo, "src/consumer.rs", BAD);
    write(&repo, "src/generated.rs", BAD);
    let (code, v) = check(&repo, &["."]);
    assert_eq!(
        (code, findings(&v)),
        (1, bad_at(&["src/consumer.rs"])),
        "{v}"
    );
    let (code, v) = check(&repo, &["src"]);
    assert_eq!(
        (code, findings(&v)),
        (1, bad_at(&["src/consumer.rs"])),
        "{v}"
    );
    let (code, v) = check(outer, &["repo"]);
    assert_eq!(
        (code, findings(&v)),
        (1, bad_at(&["repo/src/consumer.rs"])),
        "{v}"
    );
}

/// Outside any repository only the ignore files inside the PATH count: a `*` in the
/// directory above once gave 0 files and exit 0.
#[test]
fn outside_a_repository_only_ignore_files_inside_the_path_apply() {
    let dir = tempfile::tempdir().unwrap();
    let outer = dir.path();
    write(outer, ".gitignore", "*\n");
    write(outer, "proj/.gitignore", "skipped.rs\n");
    write(outer, "proj/consumer.rs", BAD);
    write(outer, "proj/skipped.rs", BAD);
    write(outer, "proj/sub/nested.rs", BAD);
    let (code, v) = check(outer, &["proj"]);
    assert_eq!(
        (code, findings(&v)),
        (1, bad_at(&["proj/consumer.rs", "proj/sub/nested.rs"])),
        "{v}"
    );
    // From inside the project, the same.
    let (code, v) = check(&outer.join("proj"), &["."]);
    assert_eq!(
        (code, findings(&v)),
        (1, bad_at(&["consumer.rs", "sub/nested.rs"])),
        "{v}"
    );
    // A subdirectory: `proj/.gitignore` is above it, outside the PATH.
    write(outer, "proj/sub/skipped.rs", BAD);
    let (code, v) = check(outer, &["proj/sub"]);
    assert_eq!(
        (code, findings(&v)),
        (1, bad_at(&["proj/sub/nested.rs", "proj/sub/skipped.rs"])),
        "{v}"
    );
}

/// As git reads them: the repository's `info/exclude` (also through a worktree's
/// `.git` file and its `commondir`) and the user's global excludes, the default
/// `$XDG_CONFIG_HOME/git/ignore` or the file `core.excludesFile` names. Neither applies
/// outside a repository.
#[test]
fn repository_and_global_excludes_apply() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let home = root.join("home");
    write(&home, ".config/git/ignore", "global.rs\n");
    let repo = root.join("repo");
    write(&repo, ".git/info/exclude", "local.rs\n");
    for f in ["kept.rs", "local.rs", "global.rs", "custom.rs"] {
        write(&repo, f, BAD);
    }
    let (code, v, _) = check_in(&repo, &home, &["."], &[]);
    assert_eq!(
        (code, findings(&v)),
        (1, bad_at(&["custom.rs", "kept.rs"])),
        "{v}"
    );
    // `core.excludesFile` replaces the default.
    write(
        &home,
        ".gitconfig",
        "[core]\n\texcludesFile = ~/my-ignore\n",
    );
    write(&home, "my-ignore", "custom.rs\n");
    let (code, v, _) = check_in(&repo, &home, &["."], &[]);
    assert_eq!(
        (code, findings(&v)),
        (1, bad_at(&["global.rs", "kept.rs"])),
        "{v}"
    );
    // A worktree: `.git` is a file naming the git directory, whose `commondir` holds
    // `info/exclude`.
    let tree = root.join("tree");
    write(&tree, ".git", "gitdir: ../main.git/worktrees/tree\n");
    write(root, "main.git/worktrees/tree/commondir", "../..\n");
    write(root, "main.git/info/exclude", "local.rs\n");
    for f in ["kept.rs", "local.rs"] {
        write(&tree, f, BAD);
    }
    let (code, v, _) = check_in(&tree, &home, &["."], &[]);
    assert_eq!((code, findings(&v)), (1, bad_at(&["kept.rs"])), "{v}");
    // Outside a repository neither counts.
    let loose = root.join("loose");
    for f in ["custom.rs", "global.rs"] {
        write(&loose, f, BAD);
    }
    let (code, v, _) = check_in(&loose, &home, &["."], &[]);
    assert_eq!(
        (code, findings(&v)),
        (1, bad_at(&["custom.rs", "global.rs"])),
        "{v}"
    );
}

// ----- 3. Cargo target directories -------------------------------------------------------

/// Every directory named `target` was skipped, uncounted: `src/target/mod.rs` was
/// never seen. Only Cargo's own are skipped now: `target` beside a `Cargo.toml`, and
/// the directory `CARGO_TARGET_DIR` or `build.target-dir` names; each is counted as
/// `cargo_target_dirs`.
#[test]
fn target_directories_are_skipped_only_where_cargo_puts_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "Cargo.toml", "[package]\nname = \"svc\"\n");
    write(root, "src/lib.rs", "mod target;\n");
    write(root, "src/target/mod.rs", BAD);
    write(root, "target/debug/build/out.rs", BAD);
    write(root, "notes/target/draft.rs", BAD);
    write(root, "env-out/gen.rs", BAD);
    write(root, "cfg-out/gen.rs", BAD);
    let home = tempfile::tempdir().unwrap();
    let (code, v, _) = check_in(root, home.path(), &["."], &[]);
    assert_eq!(
        (code, findings(&v)),
        (
            1,
            bad_at(&[
                "cfg-out/gen.rs",
                "env-out/gen.rs",
                "notes/target/draft.rs",
                "src/target/mod.rs"
            ])
        ),
        "{v}"
    );
    assert_eq!(v["summary"]["skipped"]["cargo_target_dirs"], 1, "{v}");

    write(
        root,
        ".cargo/config.toml",
        "[build]\ntarget-dir = \"cfg-out\"\n",
    );
    let env_out = root.join("env-out");
    let (code, v, _) = check_in(
        root,
        home.path(),
        &["."],
        &[("CARGO_TARGET_DIR", env_out.as_path())],
    );
    assert_eq!(
        (code, findings(&v)),
        (1, bad_at(&["notes/target/draft.rs", "src/target/mod.rs"])),
        "{v}"
    );
    assert_eq!(v["summary"]["skipped"]["cargo_target_dirs"], 3, "{v}");
}

// ----- 4. overlapping PATHs --------------------------------------------------------------

/// `check xf xf/src` once gave 0 findings where `check xf` gave 1: the walk of
/// `xf/src` made each of its files a crate of its own, losing the call from the
/// worker into the store. A file is one file in the crate of its real location,
/// whatever PATH reached it and in whatever order.
#[test]
fn overlapping_paths_give_the_same_report() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for (rel, text) in XF {
        write(root, &format!("xf/{rel}"), text);
    }
    let home = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = msgaudit_at_home(home.path())
            .current_dir(root)
            .arg("check")
            .args(["--format", "json"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let alone = run(&["xf"]);
    let v: Value = serde_json::from_str(&alone).unwrap();
    assert_eq!(findings(&v), [("xf/src/worker.rs".to_string(), 32)]);
    for args in [
        &["xf", "xf/src"][..],
        &["xf/src", "xf"],
        &["./xf/src/", "xf", "xf/src/worker.rs"],
        &["xf/src/store.rs", "xf/src", "xf"],
    ] {
        assert_eq!(run(args), alone, "check {args:?}");
    }
}

// ----- 5. --jobs --------------------------------------------------------------------------

/// `--jobs 5000` started 5 000 threads (27 s on two files): it is lowered to four per
/// core.
#[test]
fn jobs_beyond_four_per_core_are_lowered() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.rs", BAD);
    write(dir.path(), "b.rs", "fn main() {}\n");
    let home = tempfile::tempdir().unwrap();
    let out = msgaudit_at_home(home.path())
        .current_dir(dir.path())
        .args([
            "check",
            ".",
            "--format",
            "json",
            "--statistics",
            "--jobs",
            "5000",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    let threads: usize = stderr
        .lines()
        .find_map(|l| l.strip_prefix("msgaudit: threads: "))
        .unwrap_or_else(|| panic!("{stderr}"))
        .parse()
        .unwrap();
    let cores = std::thread::available_parallelism().unwrap().get();
    assert_eq!(threads, 4 * cores, "{stderr}");
}

/// The findings of `msgaudit check SPELLING` run in `cwd`, each as
/// `path-below-fixtures:line:column:code` (the spelling's prefix taken off).
fn findings_below_fixtures(cwd: &Path, spelling: &str) -> Vec<String> {
    let out = common::check_output(cwd, &[spelling]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let prefix = if spelling == "." {
        String::new()
    } else {
        // JSON paths drop a leading `./` (SPEC §2).
        let s = spelling.strip_prefix("./").unwrap_or(spelling);
        format!("{}/", s.trim_end_matches('/'))
    };
    let mut found: Vec<String> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let path = f["path"].as_str().unwrap();
            let below = path.strip_prefix(&prefix).unwrap_or_else(|| {
                panic!("`{path}` is not spelled from `{spelling}`");
            });
            format!("{below}:{}:{}:{}", f["line"], f["column"], f["code"])
        })
        .collect();
    found.sort();
    found
}

/// Issue 38, item 0: findings never depend on how the PATH is spelled. The pipeline
/// description's stage paths used to lose the leading `/` of an absolute directory,
/// so `check /abs/fixtures` (and the language server, and `$GITHUB_WORKSPACE`) lost
/// an MA012 that `check fixtures` reports.
#[test]
fn findings_do_not_depend_on_how_the_path_is_spelled() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fixtures = repo.join("fixtures");
    let link_home = tempfile::tempdir().unwrap();
    let link = link_home.path().join("checkout");
    std::os::unix::fs::symlink(repo, &link).unwrap();

    let reference = findings_below_fixtures(repo, "fixtures");
    assert!(
        reference
            .iter()
            .any(|f| f.contains("pipeline_description") && f.ends_with("\"MA012\"")),
        "the pipeline description's MA012 is among the reference findings"
    );
    let spellings: Vec<(std::path::PathBuf, String)> = vec![
        (repo.to_path_buf(), "./fixtures".into()),
        (repo.to_path_buf(), "fixtures/".into()),
        (repo.to_path_buf(), fixtures.to_string_lossy().into_owned()),
        (repo.to_path_buf(), "fixtures/../fixtures".into()),
        (fixtures.clone(), ".".into()),
        (fixtures.join("demo"), "..".into()),
        (
            link_home.path().to_path_buf(),
            link.join("fixtures").to_string_lossy().into_owned(),
        ),
        (link.clone(), "fixtures".into()),
    ];
    for (cwd, spelling) in spellings {
        let found = findings_below_fixtures(&cwd, &spelling);
        let lost: Vec<&String> = reference.iter().filter(|f| !found.contains(f)).collect();
        let gained: Vec<&String> = found.iter().filter(|f| !reference.contains(f)).collect();
        assert!(
            lost.is_empty() && gained.is_empty(),
            "`msgaudit check {spelling}` in {}: lost {lost:?}, gained {gained:?}",
            cwd.display()
        );
    }
}
