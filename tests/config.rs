//! The config file never costs a run (issue 38, "Never lose a run, round two"): a
//! `msgaudit.toml` in error is reported, positioned, and the tree is still analyzed,
//! with the valid part of the config or with the defaults (exit 2). Every tree is
//! generated at test time, and git's global configuration is moved to a temporary
//! home.

mod common;
use common::{git_repo, mkfifo, msgaudit_at_home, write};

use std::path::Path;

use serde_json::Value;

/// An rdkafka consumer that commits its offset before the transaction: MA001 (an
/// error by default) at line 67.
const BAD: &str =
    include_str!("../fixtures/ma001_ack_before_commit/bad_commit_message_before_tx_commit.rs");

/// `msgaudit check --format json ARGS` in `dir`: (exit code, JSON). Fails on a
/// crash, a hang or output that is not JSON.
fn check(dir: &Path, args: &[&str]) -> (i32, Value) {
    let home = tempfile::tempdir().unwrap();
    let out = msgaudit_at_home(home.path())
        .current_dir(dir)
        .arg("check")
        .args(["--format", "json"])
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    let json: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: stdout {:?}, stderr {stderr}", out.stdout));
    (out.status.code().expect("not killed"), json)
}

/// (code, severity, path) of every finding.
fn findings(v: &Value) -> Vec<(String, String, String)> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
                f["path"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// `path:line:column: message` of every input error.
fn errors(v: &Value) -> Vec<String> {
    v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{}:{}:{}: {}",
                e["path"].as_str().unwrap(),
                e["line"],
                e["column"],
                e["message"].as_str().unwrap()
            )
        })
        .collect()
}

// ----- 3. a config in error is reported, and the tree still analyzed --------------

/// A config that is not TOML, or does not fit the schema, once stopped the run:
/// `files: 0`, no finding. Now the error is in `errors`, positioned, and the tree is
/// analyzed with the defaults (the config's `MA001 = "off"` does not apply), exit 2.
/// The same with `--config FILE`.
#[test]
fn a_config_that_cannot_be_parsed_is_reported_and_the_defaults_apply() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "src/consumer.rs", BAD);
    let defaults = "the config is not applied: this run uses the default settings";
    for (config, at) in [
        ("[rules\nMA001 = \"off\"\n", "1:7"),
        ("bogus = 1\n[rules]\nMA001 = \"off\"\n", "1:1"),
        ("[rules]\nMA001 = \"off\"\n[overrides]\nx = 1\n", "3:1"),
    ] {
        write(root, "msgaudit.toml", config);
        let (code, v) = check(root, &["."]);
        assert_eq!(code, 2, "{config}: {v}");
        assert_eq!(
            findings(&v),
            [("MA001".into(), "error".into(), "src/consumer.rs".into())],
            "{config}: {v}"
        );
        assert_eq!(v["summary"]["analyzed"], 1, "{config}: {v}");
        let errs = errors(&v);
        assert_eq!(errs.len(), 1, "{config}: {v}");
        assert!(
            errs[0].starts_with(&format!("msgaudit.toml:{at}: "))
                && errs[0].ends_with(&format!("({defaults})")),
            "{config}: {errs:?}"
        );
        // Named by `--config`, the same.
        std::fs::rename(root.join("msgaudit.toml"), root.join("other.toml")).unwrap();
        let (code, v) = check(root, &["--config", "other.toml", "."]);
        assert_eq!(code, 2, "{config}: {v}");
        assert_eq!(findings(&v).len(), 1, "{config}: {v}");
        let errs = errors(&v);
        assert!(
            errs[0].starts_with(&format!("other.toml:{at}: ")),
            "{errs:?}"
        );
        std::fs::remove_file(root.join("other.toml")).unwrap();
    }
    // A `--config` that does not exist: the defaults, and the error names it.
    let (code, v) = check(root, &["--config", "nope.toml", "."]);
    assert_eq!((code, findings(&v).len()), (2, 1), "{v}");
    assert_eq!(
        errors(&v),
        [format!(
            "nope.toml:null:null: config file not found ({defaults})"
        )]
    );
}

/// An entry in error inside a valid config (an unknown rule, an invalid level, an
/// invalid glob, an unknown API kind, an invalid `max_file_size`) is reported where
/// it is written and left out; the rest of the config still applies.
#[test]
fn an_entry_in_error_is_left_out_and_the_rest_of_the_config_applies() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "src/consumer.rs", BAD);
    write(root, "gen/consumer.rs", BAD);
    write(
        root,
        "msgaudit.toml",
        "exclude = [\"gen/**\", \"a/[\"]\nmax_file_size = \"lots\"\n[rules]\n\
         MA001 = \"warning\"\nMA099 = \"off\"\nMA006 = \"warn\"\n[apis]\nacks = [\"x\"]\n",
    );
    let (code, v) = check(root, &["."]);
    assert_eq!(code, 2, "{v}");
    // `exclude` still leaves `gen` out, `MA001 = "warning"` still applies.
    assert_eq!(
        findings(&v),
        [("MA001".into(), "warning".into(), "src/consumer.rs".into())],
        "{v}"
    );
    let left_out = "(this entry is left out: the rest of the config applies)";
    let errs = errors(&v);
    let at: Vec<&str> = errs.iter().map(|e| e.split(": ").next().unwrap()).collect();
    assert_eq!(
        at,
        [
            "msgaudit.toml:1:22",
            "msgaudit.toml:2:17",
            "msgaudit.toml:5:1",
            "msgaudit.toml:6:9",
            "msgaudit.toml:8:1"
        ],
        "{errs:?}"
    );
    assert!(errs.iter().all(|e| e.ends_with(left_out)), "{errs:?}");
    assert!(errs[2].contains("unknown rule `MA099`"), "{errs:?}");
}

// ----- 4. the config is searched up to the repository root, never above ------------

/// A `msgaudit.toml` above the repository (a parent directory, `/tmp`) is not the
/// repository's: it once turned MA001 off, exit 0. The repository's own config still
/// applies from a subdirectory.
#[test]
fn a_config_above_the_repository_root_does_not_apply() {
    let dir = tempfile::tempdir().unwrap();
    let outer = dir.path();
    write(outer, "msgaudit.toml", "[rules]\nMA001 = \"off\"\n");
    let repo = outer.join("repo");
    git_repo(&repo);
    write(&repo, "src/consumer.rs", BAD);
    let ma001 = |path: &str| vec![("MA001".to_string(), "error".to_string(), path.to_string())];
    for (cwd, path, shown) in [
        (&repo, ".", "src/consumer.rs"),
        (&repo, "src", "src/consumer.rs"),
        (&repo.join("src"), "consumer.rs", "consumer.rs"),
    ] {
        let (code, v) = check(cwd, &[path]);
        assert_eq!((code, findings(&v)), (1, ma001(shown)), "{path}: {v}");
    }
    // The repository's own config, found from a subdirectory.
    write(&repo, "msgaudit.toml", "[rules]\nMA001 = \"warning\"\n");
    let (code, v) = check(&repo.join("src"), &["consumer.rs"]);
    assert_eq!(
        (code, findings(&v)),
        (
            1,
            vec![("MA001".into(), "warning".into(), "consumer.rs".into())]
        ),
        "{v}"
    );
}

/// Outside any repository only the PATH's own directory is searched: a config in the
/// directory above once turned MA001 off.
#[test]
fn outside_a_repository_only_the_path_directory_is_searched() {
    let dir = tempfile::tempdir().unwrap();
    let outer = dir.path();
    write(outer, "msgaudit.toml", "[rules]\nMA001 = \"off\"\n");
    write(outer, "proj/consumer.rs", BAD);
    let (code, v) = check(outer, &["proj"]);
    assert_eq!(
        (code, findings(&v)),
        (
            1,
            vec![("MA001".into(), "error".into(), "proj/consumer.rs".into())]
        ),
        "{v}"
    );
    let (code, v) = check(&outer.join("proj"), &["."]);
    assert_eq!((code, findings(&v).len()), (1, 1), "{v}");
    // In the PATH's directory, it applies.
    let (code, v) = check(outer, &["."]);
    assert_eq!((code, findings(&v).len()), (0, 0), "{v}");
}

/// A found `msgaudit.toml` that is not a regular file (a FIFO, a link to `/dev/zero`,
/// a directory) was silently skipped; it is an error naming it, as with `--config`,
/// and the tree is analyzed with the defaults.
#[cfg(unix)]
#[test]
fn a_found_config_that_is_not_a_regular_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    git_repo(&repo);
    write(&repo, "src/consumer.rs", BAD);
    let config = repo.join("msgaudit.toml");
    let mut kinds = vec!["symlink to /dev/zero", "directory"];
    if mkfifo(&config) {
        kinds.insert(0, "FIFO");
    }
    for kind in kinds {
        match kind {
            "symlink to /dev/zero" => std::os::unix::fs::symlink("/dev/zero", &config).unwrap(),
            "directory" => std::fs::create_dir(&config).unwrap(),
            _ => {}
        }
        let (code, v) = check(&repo, &["src"]);
        assert_eq!(code, 2, "{kind}: {v}");
        assert_eq!(
            errors(&v),
            [
                "msgaudit.toml:null:null: config file is not a regular file (the config is not \
              applied: this run uses the default settings)"
            ],
            "{kind}"
        );
        assert_eq!(findings(&v).len(), 1, "{kind}: {v}");
        if config.is_dir() {
            std::fs::remove_dir(&config).unwrap();
        } else {
            std::fs::remove_file(&config).unwrap();
        }
    }
}
