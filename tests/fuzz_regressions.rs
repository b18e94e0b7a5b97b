//! Inputs kept from fuzzing (`fuzz/`, see "Fuzzing" in docs/development.md): every
//! file under `tests/data/fuzz/<target>/` goes through what that fuzz target calls.
//! `tests/data/fuzz/README.md` says where each file comes from.
//!
//! The Rust and YAML inputs run through the built binary, whose analysis threads
//! have the stack size the fuzz targets use: a stack overflow aborts the process,
//! so the exit code shows it, and a panic caught per crate shows as an "internal
//! error" in the report.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;
use msgaudit::config::Config;
use msgaudit::source::FileKind;
use serde_json::Value;

fn inputs(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/fuzz")
        .join(target);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no inputs in {}", dir.display());
    files
}

fn text(path: &Path) -> String {
    String::from_utf8(fs::read(path).unwrap())
        .unwrap_or_else(|_| panic!("{}: the fuzz targets only see UTF-8", path.display()))
}

/// Runs `msgaudit check DIR --format json`: the report's error messages, or why
/// the run failed (a crash, a stack overflow, a timeout, an internal error).
fn check_survives(dir: &Path) -> Result<Vec<String>, String> {
    let out = Command::cargo_bin("msgaudit")
        .unwrap()
        .timeout(Duration::from_secs(120))
        .arg("check")
        .arg(dir)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let code = out.status.code();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !matches!(code, Some(0..=2)) {
        return Err(format!(
            "exit {code:?} (crash, stack overflow or timeout): {stderr}"
        ));
    }
    let report: Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("{e}; stderr: {stderr}"))?;
    let errors: Vec<String> = report["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["message"].as_str().unwrap().to_string())
        .collect();
    match errors.iter().find(|m| m.contains("internal error")) {
        Some(m) => Err(m.clone()),
        None => Ok(errors),
    }
}

/// Runs one Rust text as `lib.rs` of a directory of its own.
fn check_rust(text: &str) -> Result<Vec<String>, String> {
    let dir = tempfile::tempdir().unwrap();
    // The relevance prefilter reads raw text: the name of a client crate anywhere
    // (here after the input) makes the file analyzed, whatever it holds.
    fs::write(dir.path().join("lib.rs"), format!("{text}\n// rdkafka\n")).unwrap();
    check_survives(dir.path())
}

fn assert_no_failures(failures: &[String]) {
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn rust_frontend_inputs() {
    let mut failures = Vec::new();
    for input in inputs("rust_frontend") {
        // Every input kept so far overflowed the stack before the pre-parse scan
        // refused it: it must be refused, not merely fail to parse.
        match check_rust(&text(&input)) {
            Ok(errors) if errors.iter().any(|m| m.ends_with("file not analyzed")) => {}
            Ok(errors) => failures.push(format!("{}: not refused: {errors:?}", input.display())),
            Err(e) => failures.push(format!("{}: {e}", input.display())),
        }
    }
    assert_no_failures(&failures);
}

/// Literals and comments that hold some 50 brackets and some `"`: the pre-parse scan
/// skips them as the lexer does, so that 190 levels of brackets after them pass.
const LITERALS: &str = r##"let _ = r#"((((((((((("(((((((((("#; let _ = '\''; let _ = '"';
let _ = b'"'; let _ = "\"(((((((((("; let _ = '\u{1F600}'; let _ = 'é'; let _ = "é\\";
let _: &'a str = x; // "((((((((((
/* /* " */ (((((((((( */ let _ = '(';"##;

/// Deep input well inside the pre-parse scan's limits is analyzed, and does not
/// overflow the analysis stack, even in a debug build (the one tests run).
#[test]
fn rust_deep_but_accepted() {
    let cases = [
        (
            "literals and comments, then brackets",
            format!(
                "fn f<'a>(x: &'a str) {{\n{LITERALS}\nlet _ = {}1{};\n}}",
                "(".repeat(190),
                ")".repeat(190)
            ),
        ),
        (
            "nested generics",
            format!("type T = {}u8{};", "Vec<".repeat(300), ">".repeat(300)),
        ),
        (
            "generics across commas",
            format!("type T = {}u8{};", "A<b, ".repeat(300), ">".repeat(300)),
        ),
        (
            "closures across commas",
            format!("fn f() {{ let g = {}1; }}", "|a, b| ".repeat(250)),
        ),
        (
            "returns",
            format!("fn f() {{ {}1; }}", "return ".repeat(900)),
        ),
        (
            "method chain",
            format!("fn f(x: X) {{ x{}; }}", ".a()".repeat(300)),
        ),
        (
            "else-if chain",
            format!("fn f() {{ if a {{}} {} }}", "else if a {} ".repeat(150)),
        ),
        (
            "match arms",
            format!(
                "fn f() {{ match x {{ {} _ => {{}} }} }}",
                "A | B => {} ".repeat(3000)
            ),
        ),
        (
            "methods",
            format!("impl X {{ {} }}", "fn a(&self) -> u8 { 1 } ".repeat(3000)),
        ),
        (
            "array",
            format!("const A: [u8; 5000] = [{}];", "1, ".repeat(5000)),
        ),
    ];
    let mut failures = Vec::new();
    for (what, text) in cases {
        match check_rust(&text) {
            Ok(errors) if errors.is_empty() => {}
            Ok(errors) => failures.push(format!("{what}: {errors:?}")),
            Err(e) => failures.push(format!("{what}: {e}")),
        }
    }
    assert_no_failures(&failures);
}

#[test]
fn yaml_frontend_inputs() {
    let mut failures = Vec::new();
    for input in inputs("yaml_frontend") {
        let dir = tempfile::tempdir().unwrap();
        // The fuzz target's file name: a pipeline description is always parsed.
        fs::write(dir.path().join("msgaudit-pipeline.yml"), text(&input)).unwrap();
        if let Err(e) = check_survives(dir.path()) {
            failures.push(format!("{}: {e}", input.display()));
        }
    }
    assert_no_failures(&failures);
}

#[test]
fn config_inputs() {
    for input in inputs("config") {
        if let Ok(config) = Config::parse(&text(&input), "msgaudit.toml") {
            let _ = config.level_for("MA001", "src/lib.rs");
            let _ = msgaudit::apis::Apis::with_user(&config.apis);
        }
    }
}

#[test]
fn suppress_inputs() {
    for input in inputs("suppress") {
        let text = text(&input);
        for kind in [FileKind::Rust, FileKind::Yaml] {
            for s in msgaudit::suppress::scan(&text, kind) {
                assert!(
                    s.span.byte_start <= s.span.byte_end && s.span.byte_end <= text.len(),
                    "{}: {s:?}",
                    input.display()
                );
            }
        }
    }
}
