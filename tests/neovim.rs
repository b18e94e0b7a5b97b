//! A real editor: Neovim (headless, 0.7 or newer) runs `msgaudit server` through its
//! built-in LSP client (`tests/nvim/check_server.lua`), opens a file, waits for the
//! diagnostics, applies the "suppress on this line" code action and waits for the
//! diagnostics of the edited buffer. The test compares what Neovim saw with
//! `msgaudit::check` on the same texts.
//!
//! Without `nvim` on the PATH the test is skipped with a message, unless `CI` or
//! `MSGAUDIT_REQUIRE_NVIM` is set (`.ci/run` installs Neovim and sets the latter):
//! there it fails.

use std::fs;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

fn nvim_available() -> bool {
    let found = std::process::Command::new("nvim")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        let required = ["CI", "MSGAUDIT_REQUIRE_NVIM"]
            .iter()
            .any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()));
        assert!(
            !required,
            "nvim is not installed, and CI or MSGAUDIT_REQUIRE_NVIM is set: install it \
             (apt-get install neovim)"
        );
        // Written to the process's stderr itself, which the test harness does not
        // capture, so that the skip shows in a plain `cargo test`.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: nvim is not installed (apt-get install neovim to run the Neovim tests)"
        );
    }
    found
}

/// (code, line, column, end line, end column), 0-based, of each finding in `file`,
/// by `check` with `file`'s text replaced by `text` (ASCII texts: columns are bytes,
/// as Neovim counts them).
fn expected(root: &Path, file: &Path, text: &str) -> Vec<(String, u64, u64, u64, u64)> {
    let options = msgaudit::Options {
        overlay: std::sync::Arc::new([(file.to_path_buf(), text.to_string())].into()),
        ..msgaudit::Options::default()
    };
    let report = msgaudit::check(&[root.to_path_buf()], &options).unwrap();
    let mut out: Vec<_> = report
        .findings
        .iter()
        .filter(|f| Path::new(&f.path) == file)
        .map(|f| {
            let s = f.span;
            (
                f.code.to_string(),
                u64::from(s.line - 1),
                u64::from(s.column - 1),
                u64::from(s.end_line - 1),
                u64::from(s.end_column - 1),
            )
        })
        .collect();
    out.sort();
    out
}

fn seen(diagnostics: &Value) -> Vec<(String, u64, u64, u64, u64)> {
    let mut out: Vec<_> = diagnostics
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let n = |k: &str| d[k].as_u64().unwrap();
            (
                d["code"].as_str().unwrap().to_string(),
                n("lnum"),
                n("col"),
                n("end_lnum"),
                n("end_col"),
            )
        })
        .collect();
    out.sort();
    out
}

/// Runs Neovim on `file` (a copy under `root`), asking for code actions on 0-based
/// `line`; returns what the script wrote, and the directory of Neovim's (and the
/// server's) own files.
fn run_nvim(root: &Path, file: &Path, line: u32) -> (Value, tempfile::TempDir) {
    // Neovim's and the server's own files, outside the analyzed tree.
    let dirs = tempfile::tempdir().unwrap();
    let home = dirs.path();
    for d in ["cache", "state", "data", "config"] {
        fs::create_dir_all(home.join(d)).unwrap();
    }
    let out = home.join("result.json");
    let status = assert_cmd::Command::new("nvim")
        .args(["--headless", "-u", "NONE", "-i", "NONE", "-n", "-c"])
        .arg(format!(
            "luafile {}",
            fs::canonicalize("tests/nvim/check_server.lua")
                .unwrap()
                .display()
        ))
        .env("MSGAUDIT_BIN", env!("CARGO_BIN_EXE_msgaudit"))
        .env("MSGAUDIT_ROOT", root)
        .env("MSGAUDIT_FILE", file)
        .env("MSGAUDIT_LINE", line.to_string())
        .env("MSGAUDIT_OUT", &out)
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        // Only a guard against a hang: the script's own waits are shorter.
        .timeout(Duration::from_secs(600))
        .output()
        .unwrap();
    assert!(status.status.success(), "nvim failed: {status:?}");
    let text = fs::read_to_string(&out).unwrap_or_else(|e| panic!("no result ({e}): {status:?}"));
    let v: Value = serde_json::from_str(&text).unwrap();
    assert!(
        v.get("error").is_none(),
        "the script failed: {}",
        v["error"]
    );
    (v, dirs)
}

fn check_in_nvim(src: &str, rel: &str, line: u32, comment: &str) {
    let t = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(t.path()).unwrap();
    let src = Path::new(src);
    if src.is_dir() {
        copy_dir(src, &root);
    } else {
        fs::copy(src, root.join(rel)).unwrap();
    }
    let file = root.join(rel);
    let text = fs::read_to_string(&file).unwrap();
    let (v, _dirs) = run_nvim(&root, &file, line);
    let events: Vec<&str> = v["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert_eq!(
        events,
        [
            "attached",
            "diagnostics",
            "applied",
            "diagnostics after the edit",
            "stopped"
        ]
    );

    // Codes and ranges as `check` finds them; the code links to the rule's published
    // page.
    let before = seen(&v["before"]);
    assert_eq!(before, expected(&root, &file, &text));
    let first = v["before"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["lnum"] == line)
        .expect("a finding on the line");
    let code = first["code"].as_str().unwrap();
    assert_eq!(first["source"], "msgaudit");
    assert_eq!(
        first["href"],
        msgaudit::rules::lookup(code).unwrap().doc_url()
    );

    // The code action's edit, as Neovim applied it: the suppression on a new line
    // above, indented like the finding's line; the finding is gone, nothing else moved
    // but by that line.
    let action = &v["actions"][0];
    assert!(
        action["title"]
            .as_str()
            .unwrap()
            .starts_with(&format!("Suppress {code} ")),
        "{action}"
    );
    let buffer: Vec<&str> = v["buffer"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    let original: Vec<&str> = text.lines().collect();
    let indent: String = original[line as usize]
        .chars()
        .take_while(|c| c.is_whitespace())
        .collect();
    assert_eq!(
        buffer[line as usize],
        format!("{indent}{comment} msgaudit:allow({code}) reason")
    );
    assert_eq!(buffer.len(), original.len() + 1);
    let edited = format!("{}\n", buffer.join("\n"));
    let after = seen(&v["after"]);
    assert_eq!(after, expected(&root, &file, &edited));
    assert_eq!(after.len(), before.len() - 1, "{after:?}");
}

fn copy_dir(src: &Path, dst: &Path) {
    for entry in fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let to = dst.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            fs::create_dir_all(&to).unwrap();
            copy_dir(&entry.path(), &to);
        } else {
            fs::copy(entry.path(), &to).unwrap();
        }
    }
}

#[test]
fn neovim_shows_rust_findings_and_applies_the_suppression() {
    if !nvim_available() {
        return;
    }
    check_in_nvim("fixtures/demo", "src/consumer.rs", 75, "//");
}

#[test]
fn neovim_shows_yaml_findings_and_applies_the_suppression() {
    if !nvim_available() {
        return;
    }
    check_in_nvim(
        "fixtures/ma004_missing_read_committed/bad_read_uncommitted_through_merge_key.yaml",
        "pipeline.yaml",
        4,
        "#",
    );
}
