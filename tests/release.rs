//! The release: the package's metadata (what `cargo publish` and crates.io need), the
//! one minimum toolchain (`rust-version`, the README, the getting-started page and the
//! CI step that builds with it say the same), the documented install commands
//! (`--locked`), the changelog (every rule, with its stability), and CI's dry run of
//! `cargo publish`.

use std::fs;
use std::path::Path;

fn read(rel: &str) -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel))
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn manifest() -> toml::Table {
    read("Cargo.toml").parse().unwrap()
}

fn package() -> toml::Table {
    manifest()["package"].as_table().unwrap().clone()
}

fn rust_version() -> String {
    package()["rust-version"].as_str().unwrap().to_string()
}

#[test]
fn the_package_has_what_publishing_needs() {
    let p = package();
    for key in ["description", "license", "repository", "homepage", "readme"] {
        let value = p.get(key).and_then(|v| v.as_str()).unwrap_or_default();
        assert!(!value.trim().is_empty(), "Cargo.toml has no {key}");
    }
    assert_eq!(p["license"].as_str(), Some("MIT OR Apache-2.0"));
    assert!(p["repository"]
        .as_str()
        .unwrap()
        .starts_with("https://github.com/"));
    assert!(p["keywords"].as_array().unwrap().len() <= 5);
    // `include` ships the sources, the packs, the lockfile, the README, the changelog
    // and both licenses, and each of them exists.
    let include: Vec<&str> = p["include"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for needed in [
        "/src/**/*",
        "/rules/**/*",
        "/Cargo.toml",
        "/Cargo.lock",
        "/README.md",
        "/CHANGELOG.md",
        "/LICENSE-MIT",
        "/LICENSE-APACHE",
    ] {
        assert!(include.contains(&needed), "include lacks {needed}");
        if !needed.contains('*') {
            assert!(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join(&needed[1..])
                    .is_file(),
                "{needed} is not a file"
            );
        }
    }
    assert!(read("LICENSE-MIT").contains("Permission is hereby granted"));
    assert!(read("LICENSE-APACHE").contains("Apache License"));
}

/// Every file the binary compiles in with `include_str!`/`include_bytes!` is in the
/// package: under `src/` or `rules/`.
#[test]
fn compiled_in_files_are_in_the_package() {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in fs::read_dir(dir).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|x| x == "rs") {
                out.push(path);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    walk(&root.join("src"), &mut files);
    let pattern = regex::Regex::new(r#"include_(?:str|bytes)!\("([^"]+)"\)"#).unwrap();
    let mut seen = 0;
    for file in files {
        let text = fs::read_to_string(&file).unwrap();
        for line in text.lines() {
            let code = line.trim_start();
            // Comments, and the analyzer's own test inputs (string literals that hold
            // `include_str!` as text), name no file of msgaudit.
            if code.starts_with("//") || code.contains("r#\"") || code.contains("\\\"") {
                continue;
            }
            for cap in pattern.captures_iter(line) {
                let target = file.parent().unwrap().join(&cap[1]);
                let Ok(target) = target.canonicalize() else {
                    continue; // a test input of the analyzer, not a file of msgaudit
                };
                let rel = target.strip_prefix(root.canonicalize().unwrap()).unwrap();
                assert!(
                    rel.starts_with("src") || rel.starts_with("rules"),
                    "{} compiles in {}, which `include` leaves out",
                    file.display(),
                    rel.display()
                );
                seen += 1;
            }
        }
    }
    assert!(seen > 10, "found only {seen} compiled-in files");
}

/// One minimum toolchain: Cargo.toml's `rust-version` is what the README and the
/// getting-started page state, and what CI builds with (`.ci/run`).
#[test]
fn the_minimum_toolchain_is_stated_once() {
    let msrv = rust_version();
    let stated = format!("Needs a Rust toolchain, {msrv} or newer");
    for page in ["README.md", "docs/getting-started.md"] {
        let text = read(page);
        assert!(text.contains(&stated), "{page} does not say {stated:?}");
        let others: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("Needs a Rust toolchain") && !l.contains(&stated))
            .collect();
        assert!(others.is_empty(), "{page}: {others:?}");
    }
    let ci = read(".ci/run");
    assert!(
        ci.contains("rust-version") && ci.contains("cargo \"+$msrv\" check --locked"),
        ".ci/run does not build with Cargo.toml's rust-version"
    );
}

/// CI checks that the package is publishable (`cargo publish --dry-run`, locked and
/// without rebuilding it) before the tests.
#[test]
fn ci_checks_the_package_is_publishable() {
    let ci = read(".ci/run");
    let lines: Vec<&str> = ci.lines().map(str::trim).collect();
    let publish = lines
        .iter()
        .position(|l| *l == "cargo publish --dry-run --locked --allow-dirty --no-verify")
        .expect(".ci/run does not run `cargo publish --dry-run`");
    let test = lines
        .iter()
        .position(|l| *l == "cargo test --locked")
        .expect(".ci/run does not run the tests");
    assert!(publish < test, "the dry run comes after the tests");
}

/// The documented ways to install msgaudit build with the committed lockfile.
#[test]
fn documented_installs_are_locked() {
    let mut installs = 0;
    for page in ["README.md", "docs/getting-started.md", "docs/ci.md"] {
        for line in read(page).lines() {
            if line.contains("cargo install") && line.contains("msgaudit") {
                assert!(line.contains("--locked"), "{page}: {line}");
                installs += 1;
            }
        }
    }
    assert!(installs >= 3, "{installs}");
    assert!(read("README.md")
        .contains("cargo install --locked --git https://github.com/msgaudit/msgaudit msgaudit"));
}

/// CHANGELOG.md has an Unreleased section naming every rule with its default severity
/// and stability, and no release that has not happened (no tag exists before the release
/// creates `v` + version).
#[test]
fn the_changelog_lists_every_rule_and_its_stability() {
    let changelog = read("CHANGELOG.md");
    assert!(
        changelog.contains("\n## Unreleased\n"),
        "no Unreleased section"
    );
    let releases: Vec<&str> = changelog
        .lines()
        .filter(|l| l.starts_with("## ") && *l != "## Unreleased")
        .collect();
    assert!(releases.is_empty(), "releases listed: {releases:?}");
    for rule in msgaudit::rules::ALL {
        let row = format!(
            "| {} | `{}` | {} | stable |",
            rule.code,
            rule.name,
            rule.default_severity.as_str()
        );
        assert!(changelog.contains(&row), "CHANGELOG.md lacks {row}");
    }
    assert!(changelog.contains(&format!("`v{}`", env!("CARGO_PKG_VERSION"))));
}
