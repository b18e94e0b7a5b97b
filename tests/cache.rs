//! The analysis cache (issue 40): a warm run prints what the cold run printed, in
//! every format; an entry that does not check out is ignored and replaced; a change
//! to the config or to a file misses; `--no-cache` writes nothing; `msgaudit clean`
//! removes the cache. Each test runs on a copy of a fixture in a temporary directory.

mod common;
use common::{msgaudit, write};

use std::fs;
use std::path::{Path, PathBuf};

/// A copy of `fixtures/demo` (a service with findings of several rules) in a fresh
/// temporary directory, with a `msgaudit.toml` (the project root, where the cache goes).
fn demo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo"),
        dir.path(),
    );
    write(dir.path(), "msgaudit.toml", "include_tests = false\n");
    dir
}

fn copy(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy(&e.path(), &target);
        } else {
            fs::copy(e.path(), target).unwrap();
        }
    }
}

/// `msgaudit check --format FORMAT .` in `dir` (plus `args`): stdout, and the exit code.
fn run(dir: &Path, format: &str, args: &[&str]) -> (String, i32) {
    let out = msgaudit()
        .current_dir(dir)
        .env_remove("MSGAUDIT_NO_CACHE")
        .args(["check", "--format", format, "."])
        .args(args)
        .output()
        .unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        out.status.code().unwrap(),
    )
}

fn cache_dir(dir: &Path) -> PathBuf {
    dir.join(".msgaudit_cache")
}

/// The cache's entries (`<key>.json`).
fn entries(dir: &Path) -> Vec<PathBuf> {
    json_files(&cache_dir(dir))
}

/// The `.json` files of `dir`, sorted (none when it does not exist).
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = read
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    out.sort();
    out
}

/// An entry's header line and JSON body (its checksum line taken off).
fn unseal(text: &str) -> (&str, &str) {
    let (header, rest) = text.split_once('\n').unwrap();
    let (body, sum) = rest.strip_suffix('\n').unwrap().rsplit_once('\n').unwrap();
    assert_eq!(
        sum,
        format!("{:016x}", xxhash_rust::xxh3::xxh3_64(body.as_bytes()))
    );
    (header, body)
}

/// An entry of `header` and `body`, with the checksum line of `body`.
fn seal(header: &str, body: &str) -> String {
    let sum = xxhash_rust::xxh3::xxh3_64(body.as_bytes());
    format!("{header}\n{body}\n{sum:016x}\n")
}

fn codes(json: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn warm_runs_print_what_cold_runs_print() {
    let dir = demo();
    let (cold_json, code) = run(dir.path(), "json", &[]);
    assert_eq!(code, 1, "the demo has findings");
    assert!(!codes(&cold_json).is_empty());
    let cache = cache_dir(dir.path());
    assert_eq!(entries(dir.path()).len(), 1);
    assert!(fs::read_to_string(cache.join("CACHEDIR.TAG"))
        .unwrap()
        .starts_with("Signature: 8a477f597d28d172789f06886806bc55"));
    assert_eq!(fs::read_to_string(cache.join(".gitignore")).unwrap(), "*\n");
    let (warm_json, code) = run(dir.path(), "json", &[]);
    assert_eq!(code, 1);
    assert_eq!(cold_json, warm_json);
    for format in [
        "sarif",
        "human",
        "short",
        "github",
        "rustc-json",
        "checklist",
    ] {
        let (warm, _) = run(dir.path(), format, &[]);
        let (cold, _) = run(dir.path(), format, &["--no-cache"]);
        assert_eq!(cold, warm, "{format}");
    }
    // One analysis, one entry: the formats share it.
    assert_eq!(entries(dir.path()).len(), 1);
    let stats = |args: &[&str]| {
        let out = msgaudit()
            .current_dir(dir.path())
            .env_remove("MSGAUDIT_NO_CACHE")
            .args(["check", "--statistics", "."])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8(out.stderr).unwrap()
    };
    assert!(stats(&[]).contains("msgaudit: analysis cache: hit"));
    assert!(stats(&["--no-cache"]).contains("msgaudit: analysis cache: not used"));
    fs::remove_dir_all(cache_dir(dir.path())).unwrap();
    assert!(stats(&[]).contains("msgaudit: analysis cache: miss"));
}

#[test]
fn the_entry_is_what_a_warm_run_reports() {
    // Seen from outside: a warm run reads the entry (an entry emptied of its
    // findings, header intact, empties the report), so the tests above compare a
    // cached output with an analyzed one.
    let dir = demo();
    let (cold, _) = run(dir.path(), "json", &[]);
    let entry = entries(dir.path()).pop().unwrap();
    let text = fs::read_to_string(&entry).unwrap();
    let (header, body) = unseal(&text);
    let mut v: serde_json::Value = serde_json::from_str(body).unwrap();
    // The stored form: [strings, findings, the rest of the output].
    assert!(!v[1].as_array().unwrap().is_empty());
    v[1] = serde_json::json!([]);
    fs::write(&entry, seal(header, &v.to_string())).unwrap();
    let (warm, code) = run(dir.path(), "json", &[]);
    assert_eq!(code, 0, "{warm}");
    assert!(codes(&warm).is_empty());
    assert_ne!(cold, warm);
}

#[test]
fn corrupt_entries_are_ignored_and_rewritten() {
    let dir = demo();
    let (cold, _) = run(dir.path(), "json", &[]);
    let (cold_sarif, _) = run(dir.path(), "sarif", &[]);
    let entry = entries(dir.path()).pop().unwrap();
    let good = fs::read(&entry).unwrap();
    let half = good[..good.len() / 2].to_vec();
    let mut foreign = good.clone();
    // Another key in the header.
    let at = good.iter().position(|&b| b == b'\n').unwrap() - 1;
    foreign[at] = if good[at] == b'0' { b'1' } else { b'0' };
    let text = String::from_utf8(good.clone()).unwrap();
    let (header, body) = unseal(&text);
    assert!(body.contains("[\"MA0"));
    let wrong_code = seal(header, &body.replacen("[\"MA0", "[\"XX0", 1));
    // A body that no longer matches its checksum (a torn write), still valid JSON.
    let torn = text.replacen("[\"MA0", "[\"XX0", 1);
    let bad: [(&str, Vec<u8>); 6] = [
        ("checksum", torn.into_bytes()),
        ("truncated", half),
        ("garbage", vec![0xff, 0x00, 0x13, 0x37, b'\n', b'{']),
        ("empty", Vec::new()),
        ("foreign key", foreign),
        ("unknown rule", wrong_code.into_bytes()),
    ];
    for (what, bytes) in bad {
        fs::write(&entry, &bytes).unwrap();
        let (json, _) = run(dir.path(), "json", &[]);
        assert_eq!(cold, json, "{what}");
        assert_eq!(fs::read(&entry).unwrap(), good, "{what}: rewritten");
        fs::write(&entry, &bytes).unwrap();
        let (sarif, _) = run(dir.path(), "sarif", &[]);
        assert_eq!(cold_sarif, sarif, "{what}");
    }
}

#[test]
fn a_config_change_misses() {
    let dir = demo();
    let (before, _) = run(dir.path(), "json", &[]);
    assert!(codes(&before).iter().any(|c| c == "MA001"));
    write(dir.path(), "msgaudit.toml", "[rules]\nMA001 = \"off\"\n");
    let (after, _) = run(dir.path(), "json", &[]);
    assert!(!codes(&after).iter().any(|c| c == "MA001"), "{after}");
    assert!(!codes(&after).is_empty());
    assert_eq!(entries(dir.path()).len(), 2);
    // An `[apis]` entry is API knowledge: another key, though the demo does not call it.
    write(
        dir.path(),
        "msgaudit.toml",
        "[rules]\nMA001 = \"off\"\n[apis]\nwrite = [\"crate::store::append_event\"]\n",
    );
    let (with_apis, _) = run(dir.path(), "json", &[]);
    assert_eq!(entries(dir.path()).len(), 3);
    assert_eq!(codes(&with_apis), codes(&after));
    // Back to the first config: its entry, the first output.
    write(dir.path(), "msgaudit.toml", "include_tests = false\n");
    let (again, _) = run(dir.path(), "json", &[]);
    assert_eq!(before, again);
    assert_eq!(entries(dir.path()).len(), 3);
}

/// A consumer that commits the offset before its insert (one MA001), or after it
/// (one MA011: the insert is not idempotent).
fn consumer(commit_first: bool) -> String {
    let (a, b) = (
        "c.commit_message(&m, CommitMode::Async)?;",
        "sqlx::query(\"INSERT INTO t (id) VALUES (1)\").execute(&pool).await?;",
    );
    let (first, second) = if commit_first { (a, b) } else { (b, a) };
    format!(
        "use rdkafka::consumer::{{CommitMode, Consumer, StreamConsumer}};\n\
         async fn run(c: StreamConsumer, pool: sqlx::PgPool) -> anyhow::Result<()> {{\n\
         \x20   loop {{\n\
         \x20       let m = c.recv().await?;\n\
         \x20       {first}\n\
         \x20       {second}\n\
         \x20   }}\n\
         }}\n"
    )
}

#[test]
fn editing_a_file_changes_the_findings() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "msgaudit.toml", "");
    write(dir.path(), "src/main.rs", consumer(true));
    let (bad, _) = run(dir.path(), "json", &[]);
    assert_eq!(codes(&bad), ["MA001"]);
    write(dir.path(), "src/main.rs", consumer(false));
    // Acked after a plain insert: no MA001, an MA011 instead.
    let (after, _) = run(dir.path(), "json", &[]);
    assert_eq!(codes(&after), ["MA011"]);
    write(dir.path(), "src/main.rs", consumer(true));
    let (bad_again, _) = run(dir.path(), "json", &[]);
    assert_eq!(bad, bad_again);
    assert_eq!(entries(dir.path()).len(), 2);
}

#[test]
fn the_cache_keeps_a_bounded_number_of_entries() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "msgaudit.toml", "");
    for i in 0..11 {
        write(
            dir.path(),
            "src/main.rs",
            format!("{}// {i}\n", consumer(true)),
        );
        run(dir.path(), "json", &[]);
    }
    assert_eq!(entries(dir.path()).len(), 8);
}

#[test]
fn no_cache_writes_nothing() {
    let dir = demo();
    let (json, _) = run(dir.path(), "json", &["--no-cache"]);
    assert!(!cache_dir(dir.path()).exists());
    let out = msgaudit()
        .current_dir(dir.path())
        .env("MSGAUDIT_NO_CACHE", "1")
        .args(["check", "--format", "json", "."])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), json);
    assert!(!cache_dir(dir.path()).exists());
    // Without either, the same output and an entry.
    let (cached, _) = run(dir.path(), "json", &[]);
    assert_eq!(cached, json);
    assert_eq!(entries(dir.path()).len(), 1);
}

#[test]
fn clean_removes_the_cache() {
    let dir = demo();
    run(dir.path(), "json", &[]);
    assert!(cache_dir(dir.path()).is_dir());
    let out = msgaudit()
        .current_dir(dir.path().join("src"))
        .args(["clean", ".."])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(!cache_dir(dir.path()).exists());
    assert!(String::from_utf8_lossy(&out.stderr).contains("removed"));
    // Nothing to remove is not an error.
    msgaudit()
        .current_dir(dir.path())
        .arg("clean")
        .assert()
        .success();
}

#[test]
fn fix_and_baseline_runs_stay_right_with_a_cache() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "msgaudit.toml", "");
    write(dir.path(), "src/main.rs", consumer(true));
    let (_, code) = run(dir.path(), "json", &["--write-baseline", "b.json"]);
    assert_eq!(code, 0);
    let (json, code) = run(dir.path(), "json", &["--baseline", "b.json"]);
    assert_eq!(code, 0, "{json}");
    assert!(codes(&json).is_empty());
    let (json, code) = run(dir.path(), "json", &[]);
    assert_eq!(code, 1);
    assert_eq!(codes(&json), ["MA001"]);
}

#[test]
fn warm_runs_print_what_cold_runs_print_on_every_fixture() {
    // The stored output is compacted (what the emitters read of it): on every
    // fixture together (every rule, consumer and producer shape), a warm run prints
    // what a run without the cache prints, the review checklist included.
    let dir = tempfile::tempdir().unwrap();
    copy(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
        dir.path(),
    );
    write(dir.path(), "msgaudit.toml", "");
    for format in ["json", "checklist", "sarif", "human"] {
        let (cold, _) = run(dir.path(), format, &["--no-cache"]);
        let (stored, _) = run(dir.path(), format, &[]);
        let (warm, _) = run(dir.path(), format, &[]);
        assert!(!cold.is_empty(), "{format}");
        assert_eq!(cold, stored, "{format}: the run that stores");
        assert_eq!(cold, warm, "{format}: the run that reads");
    }
    assert_eq!(entries(dir.path()).len(), 1);
}

/// `msgaudit check --statistics`'s count of crates read from the per-crate cache.
fn crates_cached(dir: &Path) -> usize {
    let out = msgaudit()
        .current_dir(dir)
        .env_remove("MSGAUDIT_NO_CACHE")
        .args(["check", "--format", "json", "--statistics", "."])
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    let line = err
        .lines()
        .find_map(|l| l.strip_prefix("msgaudit: crates read from the per-crate cache: "))
        .unwrap_or_else(|| panic!("{err}"));
    line.trim().parse().unwrap()
}

/// The per-crate cache's entries (`crates/<key>.json`).
fn crate_entries(dir: &Path) -> Vec<PathBuf> {
    json_files(&cache_dir(dir).join("crates"))
}

/// Two packages, `orders` and `billing` (a consumer each), and `app`, which depends
/// on `billing`.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "msgaudit.toml", "");
    for name in ["orders", "billing"] {
        write(
            root,
            &format!("{name}/Cargo.toml"),
            format!("[package]\nname = \"{name}\"\n\n[dependencies]\nrdkafka = \"0.36\"\nsqlx = \"0.8\"\n"),
        );
        write(root, &format!("{name}/src/lib.rs"), consumer(true));
    }
    write(
        root,
        "app/Cargo.toml",
        "[package]\nname = \"app\"\n\n[dependencies]\nbilling = { path = \"../billing\" }\nrdkafka = \"0.36\"\n",
    );
    write(
        root,
        "app/src/main.rs",
        "use rdkafka::consumer::StreamConsumer;\n\nfn main() {\n    let _ = billing::run;\n}\n",
    );
    dir
}

#[test]
fn an_edit_reanalyzes_only_the_crates_it_can_change() {
    let dir = workspace();
    let root = dir.path();
    let (cold, _) = run(root, "json", &[]);
    assert_eq!(codes(&cold), ["MA001", "MA001"]);
    let stored = crate_entries(root).len();
    assert!(stored >= 2, "{stored}");
    // `orders` edited: the other crates' results are read back.
    write(root, "orders/src/lib.rs", consumer(false));
    let cached = crates_cached(root);
    let (after, _) = run(root, "json", &[]);
    let (fresh, _) = run(root, "json", &["--no-cache"]);
    assert_eq!(after, fresh);
    assert_eq!(codes(&after), ["MA001", "MA011"]);
    assert_eq!(cached, stored - 1, "every crate but the edited one");
    // `billing` edited: it and `app`, which is analyzed with billing's files, miss.
    write(root, "billing/src/lib.rs", consumer(false));
    let cached = crates_cached(root);
    assert_eq!(cached, stored - 2, "orders only");
    let (after, _) = run(root, "json", &[]);
    let (fresh, _) = run(root, "json", &["--no-cache"]);
    assert_eq!(after, fresh);
    assert_eq!(codes(&after), ["MA011", "MA011"]);
}

#[test]
fn corrupt_crate_entries_are_ignored_and_rewritten() {
    let dir = workspace();
    let root = dir.path();
    let (cold, _) = run(root, "json", &[]);
    let good: Vec<(PathBuf, Vec<u8>)> = crate_entries(root)
        .into_iter()
        .map(|p| {
            let b = fs::read(&p).unwrap();
            (p, b)
        })
        .collect();
    assert!(!good.is_empty());
    for (what, bad) in [
        ("garbage", b"\xff\x00{".to_vec()),
        ("truncated", good[0].1[..good[0].1.len() / 2].to_vec()),
        ("empty", Vec::new()),
    ] {
        for (p, _) in &good {
            fs::write(p, &bad).unwrap();
        }
        // The whole-run entry goes too, so that the crates' entries are read.
        for e in entries(root) {
            fs::remove_file(e).unwrap();
        }
        assert_eq!(crates_cached(root), 0, "{what}");
        for (p, b) in &good {
            assert_eq!(&fs::read(p).unwrap(), b, "{what}: rewritten");
        }
        for e in entries(root) {
            fs::remove_file(e).unwrap();
        }
        let (json, _) = run(root, "json", &[]);
        assert_eq!(cold, json, "{what}");
    }
}

#[test]
fn touched_files_on_every_fixture_print_what_cold_runs_print() {
    // The fixtures together (every rule, crate and workspace shape): after one file of
    // each of a few crates is touched, the crates read back and those analyzed again
    // print what a run without the cache prints.
    let dir = tempfile::tempdir().unwrap();
    copy(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
        dir.path(),
    );
    write(dir.path(), "msgaudit.toml", "");
    run(dir.path(), "json", &[]);
    for touched in [
        "demo/src/main.rs",
        "ma001_ack_before_commit/bad_ack_in_if_branch.rs",
    ] {
        let path = dir.path().join(touched);
        if let Ok(mut text) = fs::read_to_string(&path) {
            text.push_str("\n// touched\n");
            fs::write(&path, text).unwrap();
        }
    }
    assert!(crates_cached(dir.path()) > 0);
    for format in ["json", "checklist"] {
        let (cold, _) = run(dir.path(), format, &["--no-cache"]);
        let (warm, _) = run(dir.path(), format, &[]);
        assert_eq!(cold, warm, "{format}");
    }
}
