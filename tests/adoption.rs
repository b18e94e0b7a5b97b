//! Adoption in an existing codebase: `--baseline`, `--write-baseline` and
//! `--diff-base`, run through the binary on generated trees and git repositories.

mod common;
use common::{check_output, msgaudit, write};

use std::fs;
use std::path::Path;
use std::process::Command as StdCommand;

use serde_json::Value;

/// An rdkafka consumer that commits the offset before the transaction (MA001 on line 16).
const TPL_COMMIT: &str =
    include_str!("../fixtures/ma001_ack_before_commit/bad_tpl_commit_before_tx_commit.rs");
/// A lapin consumer that acks before writing the file (MA001 on line 11).
const ACK_THEN_WRITE: &str =
    include_str!("../fixtures/ma001_ack_before_commit/bad_ack_then_file_write.rs");

/// Runs `msgaudit check --format json ARGS` in `dir`; returns (exit code, JSON, stderr).
fn check_json(dir: &Path, args: &[&str]) -> (i32, Value, String) {
    let out = check_output(dir, args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap(), json, stderr)
}

/// (path, line, code) of every finding.
fn findings(v: &Value) -> Vec<(String, u64, String)> {
    v["findings"]
        .as_array()
        .unwrap_or_else(|| panic!("no findings array in {v}"))
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
                f["code"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn baseline_paths(file: &Path) -> Vec<String> {
    let v: Value = serde_json::from_str(&fs::read_to_string(file).unwrap()).unwrap();
    assert_eq!(v["version"], 1);
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap().to_string())
        .collect()
}

fn prepend(path: &Path, lines: &str) {
    let text = fs::read_to_string(path).unwrap();
    fs::write(path, format!("{lines}{text}")).unwrap();
}

#[test]
fn baseline_survives_inserted_lines_and_new_findings_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "msgaudit.toml", "");
    write(root, "src/consumer.rs", TPL_COMMIT);

    let (code, v, stderr) = check_json(root, &[".", "--write-baseline", "baseline.json"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(findings(&v).is_empty());
    assert_eq!(v["summary"]["baselined"], 1);
    assert_eq!(
        baseline_paths(&root.join("baseline.json")),
        ["src/consumer.rs"]
    );

    // Without the baseline the finding is there, on line 16.
    let (code, v, _) = check_json(root, &["."]);
    assert_eq!(code, 1);
    assert_eq!(
        findings(&v),
        [("src/consumer.rs".into(), 16, "MA001".into())]
    );
    assert!(v["summary"].get("baselined").is_none());

    // Unrelated lines inserted above move the finding to line 22: still baselined.
    prepend(
        &root.join("src/consumer.rs"),
        "// The order consumer.\n\n/// Unrelated.\npub fn helper() -> u32 {\n    1\n}\n",
    );
    let (code, v, _) = check_json(root, &[".", "--baseline", "baseline.json"]);
    let (_, all, _) = check_json(root, &["."]);
    assert_eq!(
        findings(&all),
        [("src/consumer.rs".into(), 22, "MA001".into())]
    );
    assert_eq!(code, 0, "{v}");
    assert!(findings(&v).is_empty());
    assert_eq!(v["summary"]["baselined"], 1);

    // A new finding in another file is reported; the old one stays hidden.
    write(root, "src/spool.rs", ACK_THEN_WRITE);
    let (code, v, _) = check_json(root, &[".", "--baseline", "baseline.json"]);
    assert_eq!(code, 1);
    assert_eq!(findings(&v), [("src/spool.rs".into(), 11, "MA001".into())]);
    assert_eq!(v["summary"]["baselined"], 1);

    // The same defect a second time in the baselined file is new too: entries count.
    let second: String = TPL_COMMIT
        .replace("pub async fn run(", "pub async fn run_again(")
        .lines()
        .filter(|l| !l.starts_with("use "))
        .map(|l| format!("{l}\n"))
        .collect();
    let current = fs::read_to_string(root.join("src/consumer.rs")).unwrap();
    write(root, "src/consumer.rs", format!("{current}{second}"));
    fs::remove_file(root.join("src/spool.rs")).unwrap();
    let (_, all, _) = check_json(root, &["."]);
    assert_eq!(findings(&all).len(), 2, "{all}");
    let (code, v, _) = check_json(root, &[".", "--baseline", "baseline.json"]);
    assert_eq!(code, 1);
    assert_eq!(findings(&v).len(), 1);
    assert_eq!(v["summary"]["baselined"], 1);

    // Changing the finding's own text makes it new.
    let edited = fs::read_to_string(root.join("src/consumer.rs"))
        .unwrap()
        .replace("CommitMode::Sync", "CommitMode::Async");
    write(root, "src/consumer.rs", &edited);
    let (code, v, _) = check_json(root, &[".", "--baseline", "baseline.json"]);
    assert_eq!(code, 1);
    assert_eq!(findings(&v).len(), 2);
    assert_eq!(v["summary"]["baselined"], 0);
}

#[test]
fn baseline_paths_are_relative_to_the_config_directory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    // A repository: the config is found from `svc` up to its root.
    fs::create_dir_all(root.join(".git")).unwrap();
    write(&root, "msgaudit.toml", "");
    write(&root, "svc/src/consumer.rs", TPL_COMMIT);
    let abs = root.canonicalize().unwrap();
    let abs = abs.to_str().unwrap();

    // Written as `check .` in the root...
    let (code, _, stderr) = check_json(&root, &[".", "--write-baseline", "b1.json"]);
    assert_eq!(code, 0, "{stderr}");
    // ... as `check /abs/path` from elsewhere, and as `check svc` from the root.
    let (code, _, stderr) = check_json(
        dir.path(),
        &[abs, "--write-baseline", &format!("{abs}/b2.json")],
    );
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = check_json(&root, &["svc", "--write-baseline", "b3.json"]);
    assert_eq!(code, 0, "{stderr}");
    let b1 = fs::read_to_string(root.join("b1.json")).unwrap();
    assert_eq!(
        baseline_paths(&root.join("b1.json")),
        ["svc/src/consumer.rs"]
    );
    assert_eq!(b1, fs::read_to_string(root.join("b2.json")).unwrap());
    assert_eq!(b1, fs::read_to_string(root.join("b3.json")).unwrap());

    // One baseline serves every way of naming the tree.
    for (cwd, path, file) in [
        (dir.path(), abs.to_string(), format!("{abs}/b1.json")),
        (root.as_path(), ".".to_string(), "b2.json".to_string()),
        (root.as_path(), "svc".to_string(), "b1.json".to_string()),
        (
            root.join("svc").as_path(),
            ".".to_string(),
            "../b1.json".to_string(),
        ),
    ] {
        let (code, v, stderr) = check_json(cwd, &[&path, "--baseline", &file]);
        assert_eq!(code, 0, "{path} {file}: {v} {stderr}");
        assert_eq!(v["summary"]["baselined"], 1, "{path}");
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = StdCommand::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=msgaudit",
            "-c",
            "user.email=msgaudit@example.com",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
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

#[test]
fn baseline_paths_are_relative_to_the_git_root_without_config() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    fs::create_dir_all(&root).unwrap();
    git(&root, &["init", "-q"]);
    write(&root, "svc/src/consumer.rs", TPL_COMMIT);
    let (code, _, stderr) = check_json(&root.join("svc"), &[".", "--write-baseline", "../b.json"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        baseline_paths(&root.join("b.json")),
        ["svc/src/consumer.rs"]
    );
    let abs = root.join("svc").canonicalize().unwrap();
    let (code, v, stderr) = check_json(
        dir.path(),
        &[abs.to_str().unwrap(), "--baseline", "repo/b.json"],
    );
    assert_eq!(code, 0, "{v} {stderr}");
    assert_eq!(v["summary"]["baselined"], 1);
}

#[test]
fn writing_a_baseline_is_atomic_and_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "msgaudit.toml", "");
    write(root, "src/consumer.rs", TPL_COMMIT);
    let listing = || {
        let mut names: Vec<String> = fs::read_dir(root)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            // The analysis cache's directory is meant to stay.
            .filter(|n| n != ".msgaudit_cache")
            .collect();
        names.sort();
        names
    };

    // A first write, then an overwrite of a stale baseline.
    let (code, _, stderr) = check_json(root, &[".", "--write-baseline", "baseline.json"]);
    assert_eq!(code, 0, "{stderr}");
    fs::write(root.join("baseline.json"), "stale").unwrap();
    let (code, _, stderr) = check_json(root, &[".", "--write-baseline", "baseline.json"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(listing(), ["baseline.json", "msgaudit.toml", "src"]);
    assert_eq!(
        baseline_paths(&root.join("baseline.json")),
        ["src/consumer.rs"]
    );

    // A baseline that cannot be written is an error (exit 2), and leaves nothing behind.
    let (code, _, stderr) = check_json(root, &[".", "--write-baseline", "missing/dir/b.json"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot write baseline"), "{stderr}");
    assert_eq!(listing(), ["baseline.json", "msgaudit.toml", "src"]);
    // Writing over a directory fails at the rename: the temporary file is removed.
    fs::create_dir(root.join("adir")).unwrap();
    write(root, "adir/keep", "");
    let (code, _, stderr) = check_json(root, &[".", "--write-baseline", "adir"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("not a regular file"), "{stderr}");
    assert_eq!(listing(), ["adir", "baseline.json", "msgaudit.toml", "src"]);
    // A FIFO (or a device such as /dev/null) is refused, not replaced by a file:
    // the rename would otherwise swap the special file for a regular one.
    #[cfg(unix)]
    if std::process::Command::new("mkfifo")
        .arg(root.join("fifo"))
        .status()
        .is_ok_and(|s| s.success())
    {
        use std::os::unix::fs::FileTypeExt;
        let (code, _, stderr) = check_json(root, &[".", "--write-baseline", "fifo"]);
        assert_eq!(code, 2, "{stderr}");
        assert!(
            stderr.contains(
                "fifo: error: cannot write baseline: the path exists and is not a regular file"
            ),
            "{stderr}"
        );
        assert!(fs::symlink_metadata(root.join("fifo"))
            .unwrap()
            .file_type()
            .is_fifo());
        assert_eq!(
            listing(),
            ["adir", "baseline.json", "fifo", "msgaudit.toml", "src"]
        );
    }
}

/// `-o FILE` and `--write-baseline FILE` once replaced a read-only file and gave it
/// mode 0644 (a 0600 baseline became world-readable). The file keeps its mode; a
/// read-only one is refused, as `cp` refuses it, and left as it was (exit 2).
#[cfg(unix)]
#[test]
fn written_files_keep_their_mode_and_read_only_ones_are_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "msgaudit.toml", "");
    write(root, "src/consumer.rs", TPL_COMMIT);
    let mode = |name: &str| fs::metadata(root.join(name)).unwrap().permissions().mode() & 0o777;
    let chmod = |name: &str, mode: u32| {
        fs::set_permissions(root.join(name), fs::Permissions::from_mode(mode)).unwrap();
    };
    for (flag, what) in [("--write-baseline", "baseline"), ("-o", "report")] {
        let file = format!("{what}.out");
        write(root, &file, "old");
        chmod(&file, 0o600);
        let (code, _, stderr) = check_json(root, &[".", flag, &file]);
        assert!(code == 0 || code == 1, "{flag}: {code} {stderr}");
        assert_ne!(
            fs::read_to_string(root.join(&file)).unwrap(),
            "old",
            "{flag}"
        );
        assert_eq!(mode(&file), 0o600, "{flag}");
        chmod(&file, 0o664);
        let (code, _, stderr) = check_json(root, &[".", flag, &file]);
        assert!(code == 0 || code == 1, "{flag}: {code} {stderr}");
        assert_eq!(mode(&file), 0o664, "{flag}");

        // Read-only: refused, untouched, whoever runs it (root too).
        write(root, &file, "old");
        chmod(&file, 0o444);
        let out = msgaudit()
            .current_dir(root)
            .args(["check", "--format", "json", ".", flag, &file])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "{file}: cannot write {what}: the file is read-only; msgaudit leaves it as it is"
            )) || stderr.contains(&format!(
                "{file}: error: cannot write {what}: the file is read-only; msgaudit leaves it \
                 as it is"
            )),
            "{flag}: {stderr}"
        );
        assert_eq!(
            fs::read_to_string(root.join(&file)).unwrap(),
            "old",
            "{flag}"
        );
        assert_eq!(mode(&file), 0o444, "{flag}");
    }
    // No temporary file left behind (the analysis cache's directory is meant to stay).
    let mut names: Vec<String> = fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != ".msgaudit_cache")
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["baseline.out", "msgaudit.toml", "report.out", "src"]
    );
}

#[test]
fn bad_baseline_files_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "src/consumer.rs", TPL_COMMIT);
    let (code, _, stderr) = check_json(root, &[".", "--baseline", "nope.json"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("nope.json: error: baseline file not found"),
        "{stderr}"
    );
    write(root, "bad.json", "{\"version\": 1,\n \"findings\": [1]}\n");
    let (code, _, stderr) = check_json(root, &[".", "--baseline", "bad.json"]);
    assert_eq!(code, 2);
    assert!(stderr.starts_with("bad.json:2:"), "{stderr}");
    write(root, "v9.json", "{\"version\": 9, \"findings\": []}");
    let (code, _, stderr) = check_json(root, &[".", "--baseline", "v9.json"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("unsupported baseline version 9"),
        "{stderr}"
    );
}

/// An innocuous file, and what it becomes with a defect appended.
const CLEAN: &str = "pub fn helper() -> u32 {\n    1\n}\n";

#[test]
fn diff_base_reports_only_changed_lines() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    fs::create_dir_all(&root).unwrap();
    git(&root, &["init", "-q"]);
    write(&root, ".gitignore", "ignored/\n");
    write(&root, "src/old.rs", TPL_COMMIT);
    write(&root, "src/staged.rs", CLEAN);
    write(&root, "src/unstaged.rs", CLEAN);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-q", "-m", "base"]);
    let base = git(&root, &["rev-parse", "HEAD"]);

    // Committed after the base.
    write(&root, "src/committed.rs", ACK_THEN_WRITE);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-q", "-m", "second"]);
    // Staged, unstaged, untracked.
    write(&root, "src/staged.rs", format!("{CLEAN}{TPL_COMMIT}"));
    git(&root, &["add", "src/staged.rs"]);
    write(&root, "src/unstaged.rs", format!("{TPL_COMMIT}{CLEAN}"));
    write(&root, "src/untracked.rs", ACK_THEN_WRITE);
    // The old finding moves down, but its own line is unchanged.
    prepend(&root.join("src/old.rs"), "// moved\n\n");

    let (code, all, _) = check_json(&root, &["."]);
    assert_eq!(code, 1);
    assert_eq!(findings(&all).len(), 5, "{all}");

    let expected: Vec<(String, u64, String)> = vec![
        ("src/committed.rs".into(), 11, "MA001".into()),
        ("src/staged.rs".into(), 19, "MA001".into()),
        ("src/unstaged.rs".into(), 16, "MA001".into()),
        ("src/untracked.rs".into(), 11, "MA001".into()),
    ];
    for rev in [base.as_str(), "HEAD~1"] {
        let (code, v, stderr) = check_json(&root, &[".", "--diff-base", rev]);
        assert_eq!(code, 1, "{stderr}");
        assert_eq!(findings(&v), expected);
        assert_eq!(v["summary"]["outside_diff"], 1);
    }
    // Against HEAD the committed file no longer counts.
    let (_, v, _) = check_json(&root, &[".", "--diff-base", "HEAD"]);
    assert_eq!(findings(&v), expected[1..]);

    // Named by absolute path, from a subdirectory: the same lines.
    let abs = root.canonicalize().unwrap().join("src");
    let (_, v, stderr) = check_json(
        &root.join("src"),
        &[abs.to_str().unwrap(), "--diff-base", &base],
    );
    let rel: Vec<(String, u64)> = findings(&v)
        .into_iter()
        .map(|(p, l, _)| (p.rsplit('/').next().unwrap().to_string(), l))
        .collect();
    assert_eq!(
        rel,
        [
            ("committed.rs".to_string(), 11),
            ("staged.rs".to_string(), 19),
            ("unstaged.rs".to_string(), 16),
            ("untracked.rs".to_string(), 11)
        ],
        "{stderr}"
    );

    // Combined with a baseline: the baseline hides, then the diff filters.
    let (code, _, _) = check_json(&root, &[".", "--write-baseline", "../b.json"]);
    assert_eq!(code, 0);
    let (code, v, _) = check_json(
        &root,
        &[".", "--baseline", "../b.json", "--diff-base", &base],
    );
    assert_eq!(code, 0);
    assert!(findings(&v).is_empty());
}

#[test]
fn diff_base_errors_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain");
    write(&plain, "src/a.rs", TPL_COMMIT);
    let out = msgaudit()
        .current_dir(&plain)
        .args(["check", ".", "--diff-base", "main"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not inside"), "{stderr}");
    assert!(out.stdout.is_empty());

    let repo = dir.path().join("repo");
    write(&repo, "src/a.rs", TPL_COMMIT);
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "one"]);
    for rev in ["no-such-branch", "HEAD~5", "--output=x"] {
        let out = msgaudit()
            .current_dir(&repo)
            .args(["check", ".", &format!("--diff-base={rev}")])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{rev}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&format!("`{rev}`")), "{rev}: {stderr}");
    }
    assert!(!repo.join("x").exists());
}

fn yaml(rel: &str) -> Value {
    let text = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap();
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The default hook (`msgaudit`) checks the whole tree, so that `pre-commit run
/// --all-files` on a clean checkout (CI) reports the findings there; `msgaudit-changed`
/// reports only the lines changed since HEAD, and nothing on a clean checkout.
#[test]
fn pre_commit_hooks_run_msgaudit_with_valid_options() {
    let hooks = yaml(".pre-commit-hooks.yaml");
    let hooks = hooks.as_array().unwrap();
    let ids: Vec<&str> = hooks.iter().map(|h| h["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["msgaudit", "msgaudit-changed"]);
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    write(repo, "src/a.rs", CLEAN);
    write(repo, "src/old.rs", TPL_COMMIT);
    git(repo, &["init", "-q"]);
    git(repo, &["add", "."]);
    git(repo, &["commit", "-q", "-m", "one"]);
    let run = |hook: &Value| -> (i32, Vec<String>) {
        assert_eq!(hook["language"], "rust");
        assert_eq!(hook["pass_filenames"], false);
        let entry: Vec<&str> = hook["entry"].as_str().unwrap().split(' ').collect();
        assert_eq!(entry[..2], ["msgaudit", "check"]);
        assert!(entry.contains(&"short"), "{hook}");
        let out = msgaudit()
            .current_dir(repo)
            .args(&entry[1..])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let files = stdout
            .lines()
            .map(|l| l.split(':').next().unwrap().to_string())
            .collect();
        (out.status.code().unwrap(), files)
    };
    // A clean checkout, as `pre-commit run --all-files` sees it in CI.
    assert_eq!(run(&hooks[0]), (1, vec!["src/old.rs".to_string()]));
    assert_eq!(run(&hooks[1]), (0, vec![]));
    // A defect on a changed line: the default hook reports both, the other the new one.
    write(repo, "src/b.rs", TPL_COMMIT);
    assert_eq!(
        run(&hooks[0]),
        (1, vec!["src/b.rs".to_string(), "src/old.rs".to_string()])
    );
    assert_eq!(run(&hooks[1]), (1, vec!["src/b.rs".to_string()]));
}

/// The `rev:` that docs/ci.md shows is the tag the release of this version creates
/// (`v` and Cargo.toml's version), and the page says so.
#[test]
fn the_documented_pre_commit_rev_is_this_versions_tag() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let ci = fs::read_to_string(root.join("docs/ci.md")).unwrap();
    let tag = format!("v{}", env!("CARGO_PKG_VERSION"));
    let revs: Vec<&str> = ci
        .lines()
        .filter_map(|l| l.trim().strip_prefix("rev: "))
        .map(|r| r.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(revs, [tag.as_str()]);
    assert!(
        ci.contains(&format!(
            "Releases are tagged `v` and the `version` of `Cargo.toml` (`{tag}`"
        )),
        "docs/ci.md does not state the tag convention"
    );
    // Plainly: the tag is made by the first release, and before it a commit SHA.
    assert!(
        ci.contains(&format!("`{tag}` is the tag the first release creates"))
            && ci.contains("set `rev:` to the full SHA of a commit"),
        "docs/ci.md does not say what `rev:` to use before the first release"
    );
    let changelog = fs::read_to_string(root.join("CHANGELOG.md")).unwrap();
    assert!(
        changelog.contains(&format!("`{tag}`")),
        "CHANGELOG.md names no tag {tag}"
    );
}

#[test]
fn the_action_runs_check_as_sarif_and_uploads_it() {
    let action = yaml("action.yml");
    assert_eq!(action["runs"]["using"], "composite");
    let steps = action["runs"]["steps"].as_array().unwrap();
    let runs: Vec<&str> = steps.iter().filter_map(|s| s["run"].as_str()).collect();
    assert!(runs.iter().any(|r| r.contains("cargo install --locked")));
    // The build is cached: the installed root is restored under the key step's key,
    // and the install runs only on a miss.
    let step = |id: &str| steps.iter().find(|s| s["id"] == id).unwrap();
    assert_eq!(step("cache")["uses"], "actions/cache@v4");
    assert_eq!(step("cache")["with"]["path"], "${{ runner.temp }}/msgaudit");
    assert_eq!(step("cache")["with"]["key"], "${{ steps.key.outputs.key }}");
    let install = steps
        .iter()
        .find(|s| s["name"] == "Install msgaudit")
        .unwrap();
    assert!(install["run"]
        .as_str()
        .unwrap()
        .contains("--root \"$RUNNER_TEMP/msgaudit\""));
    assert_eq!(
        install["if"],
        "${{ steps.cache.outputs.cache-hit != 'true' }}"
    );
    let order: Vec<&str> = steps.iter().filter_map(|s| s["name"].as_str()).collect();
    let at = |name: &str| order.iter().position(|n| *n == name).unwrap();
    assert!(at("Cache key") < at("Restore msgaudit"));
    assert!(at("Restore msgaudit") < at("Install msgaudit"));
    assert!(at("Install msgaudit") < at("Add msgaudit to the PATH"));
    assert!(at("Add msgaudit to the PATH") < at("Run msgaudit"));
    assert!(runs
        .iter()
        .any(|r| r.contains("msgaudit check") && r.contains("--format sarif")));
    assert!(steps
        .iter()
        .any(|s| s["uses"] == "github/codeql-action/upload-sarif@v4"));
    for input in [
        "path",
        "baseline",
        "diff-base",
        "fail-on",
        "args",
        "sarif-file",
    ] {
        assert!(action["inputs"].get(input).is_some(), "{input}");
    }
}

/// `--diff-base` runs git in the analyzed repository; git would run the program the
/// repository configures as its fsmonitor hook on `git diff`. msgaudit turns it off.
#[cfg(unix)]
#[test]
fn diff_base_does_not_run_the_repositorys_fsmonitor_hook() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    write(&repo, "src/a.rs", CLEAN);
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "one"]);
    let marker = dir.path().join("hook-ran");
    let hook = dir.path().join("hook.sh");
    fs::write(
        &hook,
        format!("#!/bin/sh\ntouch '{}'\nexit 1\n", marker.display()),
    )
    .unwrap();
    fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
    git(&repo, &["config", "core.fsmonitor", hook.to_str().unwrap()]);
    write(&repo, "src/a.rs", format!("{CLEAN}// changed\n"));
    let (code, v, stderr) = check_json(&repo, &[".", "--diff-base", "HEAD"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(v["summary"]["files"], 1);
    assert!(
        !marker.exists(),
        "msgaudit ran the repository's fsmonitor hook"
    );
    // The hook is real: git on its own runs it.
    git(&repo, &["diff", "HEAD", "--stat"]);
    assert!(marker.exists());
}

/// The action's run step, run as GitHub would (its env, `GITHUB_OUTPUT`): `args`
/// with a quoted config path holding a space reaches msgaudit as one argument, and
/// a finding suppressed in the source is dropped from the SARIF log before the
/// upload (code scanning shows `suppressions` as open alerts), or kept when asked.
/// Before: `read -a` split `'ci/my config.toml'` in two and the run wrote no SARIF.
#[cfg(unix)]
#[test]
fn the_action_passes_quoted_args_and_drops_suppressed_results() {
    for tool in ["bash", "jq", "xargs"] {
        let found = StdCommand::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .status()
            .is_ok_and(|s| s.success());
        assert!(found, "the action needs {tool}");
    }
    let action = yaml("action.yml");
    let step = action["runs"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "check")
        .unwrap();
    let script = step["run"].as_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    write(repo, "src/a.rs", ACK_THEN_WRITE);
    let suppressed = ACK_THEN_WRITE.replace(
        "        delivery.ack(BasicAckOptions::default()).await?; //~ MA001",
        "        // msgaudit:allow(MA001) the spool is replayed from the broker's copy\n        \
         delivery.ack(BasicAckOptions::default()).await?;",
    );
    assert_ne!(suppressed, ACK_THEN_WRITE);
    write(repo, "src/b.rs", &suppressed);
    write(repo, "ci/my config.toml", "[rules]\nMA006 = \"off\"\n");
    let bin = Path::new(env!("CARGO_BIN_EXE_msgaudit")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = |keep: &str| -> (Value, String) {
        let output = repo.join("github_output");
        let out = StdCommand::new("bash")
            .args(["-c", script])
            .current_dir(repo)
            .env("PATH", &path)
            .env("GITHUB_OUTPUT", &output)
            .env("MSGAUDIT_PATH", "src")
            .env("MSGAUDIT_BASELINE", "")
            .env("MSGAUDIT_DIFF_BASE", "")
            .env("MSGAUDIT_FAIL_ON", "never")
            .env("MSGAUDIT_ARGS", "--config 'ci/my config.toml'")
            .env("MSGAUDIT_SARIF", "out.sarif")
            .env("MSGAUDIT_SUPPRESSED", keep)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        let sarif = fs::read_to_string(repo.join("out.sarif")).unwrap();
        (
            serde_json::from_str(&sarif).unwrap(),
            fs::read_to_string(output).unwrap(),
        )
    };
    let results = |v: &Value| -> Vec<(String, bool)> {
        v["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                    .as_str()
                    .unwrap()
                    .to_string();
                (uri, r.get("suppressions").is_some())
            })
            .collect()
    };
    let (dropped, output) = run("drop");
    assert_eq!(output.trim(), "exit-code=0");
    assert_eq!(results(&dropped), vec![("src/a.rs".to_string(), false)]);
    let (kept, _) = run("keep");
    let mut kept = results(&kept);
    kept.sort();
    assert_eq!(
        kept,
        vec![
            ("src/a.rs".to_string(), false),
            ("src/b.rs".to_string(), true)
        ]
    );
}

/// The action's cache key, computed by its key step as GitHub would run it: the same
/// for the same files, another when a file changes, is added or the toolchain differs;
/// the build directory (`target`) and `.git` do not count.
#[cfg(unix)]
#[test]
fn the_actions_cache_key_follows_the_sources() {
    let action = yaml("action.yml");
    let script = action["runs"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "key")
        .unwrap()["run"]
        .as_str()
        .unwrap()
        .to_string();
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("action");
    write(&src, "Cargo.toml", "[package]\n");
    write(&src, "src/main.rs", "fn main() {}\n");
    // A fake rustc: its `-vV` is part of the key.
    let bin = dir.path().join("bin");
    write(&bin, "rustc", "#!/bin/sh\necho \"rustc $FAKE_RUSTC\"\n");
    write(&bin, "cargo", "#!/bin/sh\n");
    use std::os::unix::fs::PermissionsExt;
    for tool in ["rustc", "cargo"] {
        fs::set_permissions(bin.join(tool), fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let key = |rustc: &str| -> String {
        let output = dir.path().join("github_output");
        let _ = fs::remove_file(&output);
        let out = StdCommand::new("bash")
            .args(["-c", &script])
            .env("PATH", &path)
            .env("FAKE_RUSTC", rustc)
            .env("MSGAUDIT_SRC", &src)
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", "X64")
            .env("GITHUB_OUTPUT", &output)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = fs::read_to_string(&output).unwrap();
        let key = text.trim().strip_prefix("key=").unwrap().to_string();
        assert!(key.starts_with("msgaudit-Linux-X64-"), "{key}");
        assert_eq!(key.len(), "msgaudit-Linux-X64-".len() + 32, "{key}");
        key
    };
    let first = key("1.89.0");
    assert_eq!(key("1.89.0"), first);
    write(&src, "target/release/msgaudit", "built");
    write(&src, ".git/HEAD", "ref");
    assert_eq!(key("1.89.0"), first);
    assert_ne!(key("1.90.0"), first);
    write(&src, "src/main.rs", "fn main() { }\n");
    let edited = key("1.89.0");
    assert_ne!(edited, first);
    write(&src, "rules/new.toml", "");
    assert_ne!(key("1.89.0"), edited);
}
