//! The annotation runner: every fixture under `fixtures/` is checked on its own, and
//! its findings must match its inline marks exactly (ui_test style). `//~ MA001`
//! (or `#~ MA004` in YAML) marks the line of an expected finding, `//~^ MA001` the
//! line above; a fixture without marks must produce no finding. A fixture is a
//! `.rs`/`.yml` file directly in a rule folder, or a sub-folder (a small crate).
//!
//! Beside each folder, `fixtures/<folder>.short` and `fixtures/<folder>.human` hold
//! its fixtures' committed renderings (messages, labels, windows, help), clippy's
//! blessed `.stderr` style: any change of wording or of a label's place fails
//! `every_fixture_folder_renders_as_committed` until the renderings are blessed
//! again with `MSGAUDIT_BLESS=1 cargo test --test fixtures`, so that it shows in
//! review.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use msgaudit::emit::{render, Format};

type Mark = (String, u32, String); // (path, line, code)

fn marks_in(path: &Path, display: &str) -> Vec<Mark> {
    let Ok(text) = fs::read_to_string(path) else {
        return vec![];
    };
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        for prefix in ["//~", "#~"] {
            let mut rest = line;
            while let Some(pos) = rest.find(prefix) {
                let after = &rest[pos + prefix.len()..];
                let up = after.chars().take_while(|c| *c == '^').count();
                let code: String = after[up..]
                    .trim_start()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric())
                    .collect();
                if code.starts_with("MA") {
                    out.push((display.to_string(), (i + 1 - up) as u32, code));
                }
                rest = &after[up..];
            }
        }
    }
    out
}

fn files_under(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_dir() {
        let mut entries: Vec<_> = fs::read_dir(p)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for e in entries {
            files_under(&e, out);
        }
    } else if matches!(
        p.extension().and_then(|e| e.to_str()),
        Some("rs" | "yml" | "yaml")
    ) {
        out.push(p.to_path_buf());
    }
}

fn cases() -> Vec<PathBuf> {
    let mut cases = Vec::new();
    let root = Path::new("fixtures");
    let mut dirs: Vec<_> = fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.sort();
    for d in dirs {
        if d.file_name().is_some_and(|n| n == "demo") {
            cases.push(d);
            continue;
        }
        if !d.is_dir() {
            continue;
        }
        let mut entries: Vec<_> = fs::read_dir(&d)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for e in entries {
            let is_src = e.is_dir()
                || matches!(
                    e.extension().and_then(|x| x.to_str()),
                    Some("rs" | "yml" | "yaml")
                );
            if is_src {
                cases.push(e);
            }
        }
    }
    cases
}

fn display(p: &Path) -> String {
    p.to_string_lossy().replace('\\', "/")
}

/// Every fixture checked on its own, once for all the tests of this file.
fn runs() -> &'static [(PathBuf, msgaudit::Report)] {
    static RUNS: OnceLock<Vec<(PathBuf, msgaudit::Report)>> = OnceLock::new();
    RUNS.get_or_init(|| {
        cases()
            .into_iter()
            .map(|case| {
                let report =
                    msgaudit::check(std::slice::from_ref(&case), &msgaudit::Options::default())
                        .unwrap_or_else(|e| panic!("{}: {}", case.display(), e.message));
                (case, report)
            })
            .collect()
    })
}

#[test]
fn every_fixture_matches_its_marks() {
    let mut failures = Vec::new();
    let mut n_cases = 0;
    let mut n_marks = 0;
    for (case, report) in runs() {
        n_cases += 1;
        let mut files = Vec::new();
        files_under(case, &mut files);
        let expected: BTreeSet<Mark> = files
            .iter()
            .flat_map(|f| marks_in(f, &display(f)))
            .collect();
        n_marks += expected.len();
        for e in &report.errors {
            failures.push(format!(
                "{}: input error {}:{:?}: {}",
                case.display(),
                e.path,
                e.line,
                e.message
            ));
        }
        let got: BTreeSet<Mark> = report
            .findings
            .iter()
            .map(|f| (f.path.clone(), f.span.line, f.code.to_string()))
            .collect();
        for m in expected.difference(&got) {
            failures.push(format!("missed   {}:{} {}", m.0, m.1, m.2));
        }
        for f in &report.findings {
            let key = (f.path.clone(), f.span.line, f.code.to_string());
            if !expected.contains(&key) {
                failures.push(format!(
                    "unmarked {}:{}:{} {}: {}",
                    f.path, f.span.line, f.span.column, f.code, f.message
                ));
            }
        }
    }
    assert!(n_cases > 0, "no fixtures found");
    assert!(
        failures.is_empty(),
        "{} of {n_cases} fixtures ({n_marks} marks) disagree:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The renderings of a fixture folder's cases, in order, each under its path.
fn renderings() -> BTreeMap<PathBuf, [String; 2]> {
    let mut out: BTreeMap<PathBuf, [String; 2]> = BTreeMap::new();
    for (case, report) in runs() {
        let folder = if case.file_name().is_some_and(|n| n == "demo") {
            case.clone()
        } else {
            case.parent().expect("a case is in a folder").to_path_buf()
        };
        let entry = out.entry(folder).or_default();
        for (text, format) in entry.iter_mut().zip([Format::Short, Format::Human]) {
            text.push_str(&format!("==> {} <==\n", display(case)));
            text.push_str(&render(report, format));
            text.push('\n');
        }
    }
    out
}

#[test]
fn every_fixture_folder_renders_as_committed() {
    let bless = std::env::var_os("MSGAUDIT_BLESS").is_some();
    let mut stale = Vec::new();
    for (folder, texts) in renderings() {
        for (text, ext) in texts.iter().zip(["short", "human"]) {
            let path = folder.with_extension(ext);
            if bless {
                fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                continue;
            }
            let committed = fs::read_to_string(&path).unwrap_or_default();
            if committed != *text {
                let first = committed
                    .lines()
                    .zip(text.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or_else(|| committed.lines().count().min(text.lines().count()));
                stale.push(format!(
                    "{} differs from line {}:\n  committed: {}\n  now:       {}",
                    path.display(),
                    first + 1,
                    committed.lines().nth(first).unwrap_or("<end>"),
                    text.lines().nth(first).unwrap_or("<end>"),
                ));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "renderings changed (review, then bless with `MSGAUDIT_BLESS=1 cargo test --test fixtures`):\n{}",
        stale.join("\n")
    );
}

#[test]
fn marks_parse() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.rs");
    fs::write(&p, "a //~ MA001\nb\n//~^ MA002\n# c #~ MA004\n").unwrap();
    let m = marks_in(&p, "x.rs");
    assert_eq!(
        m,
        vec![
            ("x.rs".into(), 1, "MA001".into()),
            ("x.rs".into(), 2, "MA002".into()),
            ("x.rs".into(), 4, "MA004".into())
        ]
    );
}
