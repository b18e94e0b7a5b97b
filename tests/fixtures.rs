//! The annotation runner: every fixture under `fixtures/` is checked on its own, and
//! its findings must match its inline marks exactly (ui_test style). `//~ MA001`
//! (or `#~ MA004` in YAML) marks the line of an expected finding, `//~^ MA001` the
//! line above; a fixture without marks must produce no finding. A fixture is a
//! `.rs`/`.yml` file directly in a rule folder, or a sub-folder (a small crate).
//!
//! Each fixture's committed renderings (messages, labels, windows, help) are in
//! `tests/snapshots/fixtures/<folder>/<fixture>.short` and `.human`, clippy's blessed
//! `.stderr` style, one pair per fixture so that a diff names the case: any change
//! of wording or of a label's place fails `every_fixture_renders_as_committed` until
//! the renderings are blessed again with `MSGAUDIT_BLESS=1 cargo test --test
//! fixtures`, so that it shows in review.
//!
//! `MSGAUDIT_FIXTURE=ma006` runs only the fixtures whose path contains `ma006` (a
//! rule folder, a file name, a shape), for fast feedback on one rule.

use std::collections::BTreeSet;
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
    // A filter for fast feedback on one rule or shape; every test of this file reads
    // the same cases, so a filtered run checks (or blesses) only those.
    if let Some(filter) = std::env::var_os("MSGAUDIT_FIXTURE") {
        let filter = filter.to_string_lossy().into_owned();
        cases.retain(|c| display(c).contains(&filter));
        assert!(
            !cases.is_empty(),
            "MSGAUDIT_FIXTURE={filter} matches no fixture"
        );
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

/// Where a fixture's committed rendering in `ext` (`short`, `human`) lives:
/// `tests/snapshots/fixtures/<folder>/<fixture>.<ext>` (the demo directly under
/// `fixtures/`).
fn rendering_path(case: &Path, ext: &str) -> PathBuf {
    let rel = case.strip_prefix("fixtures").unwrap_or(case);
    let mut name = rel.as_os_str().to_owned();
    name.push(format!(".{ext}"));
    Path::new("tests/snapshots/fixtures").join(name)
}

#[test]
fn every_fixture_renders_as_committed() {
    let bless = std::env::var_os("MSGAUDIT_BLESS").is_some();
    let mut stale = Vec::new();
    for (case, report) in runs() {
        for (format, ext) in [(Format::Short, "short"), (Format::Human, "human")] {
            let text = render(report, format);
            let path = rendering_path(case, ext);
            if bless {
                fs::create_dir_all(path.parent().unwrap()).unwrap();
                fs::write(&path, &text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                continue;
            }
            let committed = fs::read_to_string(&path).unwrap_or_default();
            if committed != text {
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

/// Every committed rendering belongs to a fixture: a fixture renamed or removed
/// leaves none behind (skipped when a filter runs only some fixtures).
#[test]
fn no_rendering_without_its_fixture() {
    if std::env::var_os("MSGAUDIT_FIXTURE").is_some() {
        return;
    }
    let expected: BTreeSet<PathBuf> = runs()
        .iter()
        .flat_map(|(case, _)| ["short", "human"].map(|ext| rendering_path(case, ext)))
        .collect();
    let mut committed = Vec::new();
    collect_renderings(Path::new("tests/snapshots/fixtures"), &mut committed);
    let orphans: Vec<String> = committed
        .into_iter()
        .filter(|p| !expected.contains(p))
        .map(|p| display(&p))
        .collect();
    if std::env::var_os("MSGAUDIT_BLESS").is_some() {
        for o in &orphans {
            fs::remove_file(o).unwrap();
        }
        return;
    }
    assert!(
        orphans.is_empty(),
        "renderings of no fixture (bless to remove them):\n{}",
        orphans.join("\n")
    );
}

fn collect_renderings(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect_renderings(&p, out);
        } else if matches!(
            p.extension().and_then(|x| x.to_str()),
            Some("short" | "human")
        ) {
            out.push(p);
        }
    }
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
