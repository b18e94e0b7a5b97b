//! Hostile input (issue 7, "Never crash, never lose a file"): every case is generated
//! at test time next to an ordinary file with a known finding, and the whole tree is
//! checked in one run: no crash, no hang, no internal error; each hostile file is
//! refused with an error naming it (and its position, when it has one) or gives a
//! clean result; the ordinary file's finding is still reported. Smaller tests then
//! pin the exact error of each case.
//!
//! Each hostile Rust file mentions an API (`use sqlx::PgPool;`) and each YAML file a
//! Kafka key, so that no prefilter skips it unparsed.

mod common;
use common::{check_output, msgaudit, write};

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

/// An rdkafka consumer that commits its offset before the transaction: MA001 at 67:14.
const BAD: &str =
    include_str!("../fixtures/ma001_ack_before_commit/bad_commit_message_before_tx_commit.rs");
const BAD_LINE: u64 = 67;
const BAD_COLUMN: u64 = 14;
/// The first line of every hostile Rust file.
const HEAD: &str = "use sqlx::PgPool;\n";
/// The default `max_file_size`.
const LIMIT: usize = 10 * 1024 * 1024;

/// `msgaudit check --format json ARGS` in `dir`: (exit code, JSON, stderr). Fails on
/// a crash (no exit code), output that is not JSON, or a panic message.
fn check_json(dir: &Path, args: &[&str]) -> (i32, Value, String) {
    let out = check_output(dir, args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let code = out
        .status
        .code()
        .unwrap_or_else(|| panic!("msgaudit was killed: {:?}\n{stderr}", out.status));
    for bad in ["panicked", "stack overflow", "internal error"] {
        assert!(!stderr.contains(bad), "{bad} on stderr: {stderr}");
    }
    let json: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: stdout {:?}, stderr {stderr}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    for e in json["errors"].as_array().unwrap() {
        let m = e["message"].as_str().unwrap();
        assert!(!m.contains("internal error"), "{e}");
    }
    (code, json, stderr)
}

/// Errors by path: (line, column, message).
fn errors(v: &Value) -> BTreeMap<String, (Option<u64>, Option<u64>, String)> {
    v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["path"].as_str().unwrap().to_string(),
                (
                    e["line"].as_u64(),
                    e["column"].as_u64(),
                    e["message"].as_str().unwrap().to_string(),
                ),
            )
        })
        .collect()
}

/// (path, line, column, code) of every finding.
fn findings(v: &Value) -> Vec<(String, u64, u64, String)> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
                f["column"].as_u64().unwrap(),
                f["code"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

// ----- the hostile inputs ------------------------------------------------------------

/// What a hostile file must produce: an error with this position and message, or
/// nothing at all (`None`).
type Expected = Option<(Option<u64>, Option<u64>, String)>;

fn nesting_error(line: u64, column: u64) -> Expected {
    Some((
        Some(line),
        Some(column),
        "nesting deeper than 200 levels; file not analyzed".into(),
    ))
}

fn operators_error(line: u64, column: u64) -> Expected {
    Some((
        Some(line),
        Some(column),
        "more than 500 operators in a row; file not analyzed".into(),
    ))
}

/// 100 000 nested parentheses. The function's `{` is the first level, so the 200th
/// parenthesis is one too many.
fn parens() -> (String, Expected) {
    let prefix = "fn f() { let x = ";
    let text = format!(
        "{HEAD}{prefix}{}1{}; }}\n",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    (text, nesting_error(2, prefix.len() as u64 + 200))
}

/// 100 000 nested blocks.
fn blocks() -> (String, Expected) {
    let prefix = "fn f() ";
    let text = format!(
        "{HEAD}{prefix}{}{}\n",
        "{".repeat(100_000),
        "}".repeat(100_000)
    );
    (text, nesting_error(2, prefix.len() as u64 + 201))
}

/// 20 000 chained closures: the 501st bar is over the limit.
fn closures() -> (String, Expected) {
    let prefix = "fn f() { let x = ";
    let text = format!("{HEAD}{prefix}{}1; }}\n", "|| ".repeat(20_000));
    (text, operators_error(2, prefix.len() as u64 + 250 * 3 + 1))
}

/// 100 000 `!` in a row.
fn bangs() -> (String, Expected) {
    let prefix = "fn f() { let x = ";
    let text = format!("{HEAD}{prefix}{}true; }}\n", "!".repeat(100_000));
    (text, operators_error(2, prefix.len() as u64 + 501))
}

/// A quote in a char literal once hid the nesting after it from the pre-parse scan,
/// and the process died of a stack overflow.
fn quote_then_parens() -> (String, Expected) {
    let prefix = "fn f() { let q = '\"'; let x = ";
    let text = format!(
        "{HEAD}{prefix}{}1{}; }}\n",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    (text, nesting_error(2, prefix.len() as u64 + 200))
}

/// 100 000 nested generic arguments: no bracket, but syn recurses on each.
fn generics() -> (String, Expected) {
    let text = format!(
        "{HEAD}type T = {}u8{};\n",
        "Vec<".repeat(100_000),
        ">".repeat(100_000)
    );
    let message = "an expression, type or pattern nested too deeply (more than 1000 tokens \
                   on one path into it); file not analyzed";
    // `type`, `T`, `=`, then two tokens per `Vec<`: the 1001st is the `<` of the 499th.
    (text, Some((Some(2), Some(9 + 498 * 4 + 4), message.into())))
}

/// One line of `len` bytes in all (with `HEAD`): a string literal.
fn long_string_line(len: usize) -> String {
    let prefix = format!("{HEAD}fn f() {{ let s = \"");
    let suffix = "\"; }\n";
    format!(
        "{prefix}{}{suffix}",
        "a".repeat(len - prefix.len() - suffix.len())
    )
}

/// One line of `len` bytes in all (with `HEAD`): a comment.
fn long_comment_line(len: usize) -> String {
    let prefix = format!("{HEAD}// ");
    format!("{prefix}{}\n", "x".repeat(len - prefix.len() - 1))
}

fn too_large(size: usize) -> Expected {
    Some((
        None,
        None,
        format!(
            "file too large: {size} bytes, over the limit of 10485760 bytes (10 MiB); raise it \
             with `--max-file-size` or `max_file_size` in msgaudit.toml"
        ),
    ))
}

/// Billion laughs: nine levels of nine aliases each.
fn alias_bomb() -> (String, Expected) {
    let mut text = String::from(
        "bootstrap.servers: kafka:9092\na: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n",
    );
    let mut prev = 'a';
    for name in "bcdefghi".chars() {
        let refs = vec![format!("*{prev}"); 9].join(", ");
        text.push_str(&format!("{name}: &{name} [{refs}]\n"));
        prev = name;
    }
    let message =
        "invalid YAML: refused: the file expands to more than 250000 nodes (an alias bomb?)";
    // Found while expanding `f` (line 7), at its third alias.
    (text, Some((Some(7), Some(16), message.into())))
}

fn yaml_depth_error(line: u64, column: u64) -> Expected {
    Some((
        Some(line),
        Some(column),
        "invalid YAML: refused: nesting deeper than 64 levels".into(),
    ))
}

/// 10 000 nested flow sequences. The scanner stops at the 256th bracket.
fn yaml_flow_deep() -> (String, Expected) {
    let text = format!(
        "bootstrap.servers: kafka:9092\nk: {}{}\n",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    (text, yaml_depth_error(2, 259))
}

/// 10 000 nested block sequences (`- - - …`, one line).
fn yaml_block_deep() -> (String, Expected) {
    let text = format!(
        "bootstrap.servers: kafka:9092\nk:\n{}1\n",
        "- ".repeat(10_000)
    );
    // The root map, then sequences: the 64th `- ` is one level too many.
    (text, yaml_depth_error(3, 127))
}

/// 200 nested block maps, indented one more space each: refused at the first key of
/// the 65th map, `k62` on line 65 (the root map holds `spring`, the 3rd map `k0`).
fn yaml_map_deep() -> (String, Expected) {
    let mut text = String::from("spring:\n kafka:\n");
    for i in 0..200 {
        text.push_str(&format!("{}k{i}:\n", " ".repeat(i + 2)));
    }
    text.push_str(&format!("{}v: 1\n", " ".repeat(202)));
    (text, yaml_depth_error(65, 65))
}

fn utf8_error(line: u64, column: u64, byte: u8, offset: usize) -> Expected {
    Some((
        Some(line),
        Some(column),
        format!("invalid UTF-8: byte 0x{byte:02X} at offset {offset}"),
    ))
}

fn bad_utf8_rust() -> (Vec<u8>, Expected) {
    let mut text = format!("{HEAD}fn f() {{ let s = \"é").into_bytes();
    let offset = text.len();
    text.extend_from_slice(b"\xC3\x28\"; }\n");
    // `fn f() { let s = "é` is 19 characters.
    (text, utf8_error(2, 20, 0xC3, offset))
}

fn bad_utf8_yaml() -> (Vec<u8>, Expected) {
    let text = b"bootstrap.servers: kafka:9092\ngroup.id: \xFF\xFE\n".to_vec();
    (text, utf8_error(2, 11, 0xFF, 40))
}

/// A Spring consumer with auto-commit on (MA007 at 4:27), with a BOM and CRLF.
const SPRING: &str =
    "spring:\n  kafka:\n    consumer:\n      enable-auto-commit: true\n      group-id: g\n";

/// Six levels of functions that each call the next four times, the last one running
/// an UPDATE: 4^6 spliced calls made a 1 KB file run for minutes.
fn call_fan_out() -> String {
    let mut src = String::from(
        "use sqlx::PgPool;\nuse rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};\n\
         async fn l7(pool: &PgPool) { sqlx::query(\"UPDATE orders SET a = 1\").execute(pool).await.unwrap(); }\n",
    );
    for level in (1..=6).rev() {
        let calls = format!("l{}(pool).await; ", level + 1).repeat(4);
        src.push_str(&format!("async fn l{level}(pool: &PgPool) {{ {calls}}}\n"));
    }
    src.push_str(
        "async fn run(consumer: StreamConsumer, pool: PgPool) {\n    loop {\n        \
         let msg = consumer.recv().await.unwrap();\n        \
         consumer.commit_message(&msg, CommitMode::Async).unwrap();\n        \
         l1(&pool).await;\n    }\n}\n",
    );
    src
}

/// The ordinary file with tabs for indentation, and where its finding then starts.
fn bad_with_tabs() -> (String, u64) {
    let text = BAD.replace("    ", "\t");
    let line = text.lines().nth(BAD_LINE as usize - 1).unwrap();
    let column = line[..line.find("commit_message(").unwrap()]
        .chars()
        .count() as u64
        + 1;
    (text, column)
}

// ----- one run over all of it ----------------------------------------------------------

#[test]
fn one_run_over_every_hostile_input() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // No msgaudit.toml above the tree may change the run.
    write(root, "msgaudit.toml", "");
    let tree = root.join("tree");
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "bad.rs", BAD);

    // path (as reported) -> expected error, or None for a clean result.
    let mut expect: BTreeMap<String, Expected> = BTreeMap::new();
    let mut add = |rel: &str, content: &[u8], expected: Expected| {
        write(&tree, rel, content);
        expect.insert(format!("tree/{rel}"), expected);
    };
    for (rel, (text, e)) in [
        ("parens.rs", parens()),
        ("blocks.rs", blocks()),
        ("closures.rs", closures()),
        ("bangs.rs", bangs()),
        ("quote_then_parens.rs", quote_then_parens()),
        ("generics.rs", generics()),
        ("bomb.yaml", alias_bomb()),
        ("deep_flow.yaml", yaml_flow_deep()),
        ("deep_block.yaml", yaml_block_deep()),
        ("deep_map.yaml", yaml_map_deep()),
    ] {
        add(rel, text.as_bytes(), e);
    }
    for (rel, (bytes, e)) in [
        ("bad_utf8.rs", bad_utf8_rust()),
        ("bad_utf8.yaml", bad_utf8_yaml()),
    ] {
        add(rel, &bytes, e);
    }
    add("long_string.rs", long_string_line(LIMIT).as_bytes(), None);
    add("long_comment.rs", long_comment_line(LIMIT).as_bytes(), None);
    add(
        "too_large.rs",
        long_comment_line(LIMIT + 1).as_bytes(),
        too_large(LIMIT + 1),
    );
    add("empty.rs", b"", None);
    add("empty.yaml", b"", None);
    // A large ordinary YAML file: one line/column lookup per node used to walk the text.
    let keys: String = (0..20_000).map(|i| format!("key{i}: value{i}\n")).collect();
    add(
        "many_keys.yaml",
        format!("bootstrap.servers: kafka:9092\n{keys}").as_bytes(),
        None,
    );
    fs::create_dir_all(tree.join("foo.rs")).unwrap();
    fs::create_dir_all(tree.join("bar.yaml")).unwrap();

    // Files with findings: the ordinary one, and the same with a BOM, tabs, CRLF.
    let (tabbed, tab_column) = bad_with_tabs();
    write(&tree, "normal.rs", BAD);
    write(&tree, "bom.rs", format!("\u{feff}{BAD}"));
    write(
        &tree,
        "bom_crlf.rs",
        format!("\u{feff}{}", BAD.replace('\n', "\r\n")),
    );
    write(&tree, "tabs_lf.rs", &tabbed);
    write(&tree, "tabs_crlf.rs", tabbed.replace('\n', "\r\n"));
    write(
        &tree,
        "bom_crlf.yaml",
        format!("\u{feff}{}", SPRING.replace('\n', "\r\n")),
    );
    let mut expected_findings = vec![
        ("tree/bom.rs".to_string(), BAD_LINE, BAD_COLUMN, "MA001"),
        (
            "tree/bom_crlf.rs".to_string(),
            BAD_LINE,
            BAD_COLUMN,
            "MA001",
        ),
        ("tree/bom_crlf.yaml".to_string(), 4, 27, "MA007"),
        ("tree/normal.rs".to_string(), BAD_LINE, BAD_COLUMN, "MA001"),
        (
            "tree/tabs_crlf.rs".to_string(),
            BAD_LINE,
            tab_column,
            "MA001",
        ),
        ("tree/tabs_lf.rs".to_string(), BAD_LINE, tab_column, "MA001"),
    ];
    #[cfg(not(unix))]
    let (symlinks, special) = (0, 0);
    #[cfg(unix)]
    let (symlinks, special) = {
        use std::os::unix::ffi::OsStrExt;
        use std::os::unix::fs::symlink;
        // Names that are not UTF-8, twice (they once printed alike and one was lost).
        for (raw, shown) in [
            (&b"bad\xFF.rs"[..], "bad\\xFF.rs"),
            (b"bad\xFE.rs", "bad\\xFE.rs"),
        ] {
            fs::write(tree.join(std::ffi::OsStr::from_bytes(raw)), BAD).unwrap();
            expected_findings.push((format!("tree/{shown}"), BAD_LINE, BAD_COLUMN, "MA001"));
        }
        // A symlink loop, a directory link to its parent, and links out of the tree
        // to a file with a finding: never followed.
        symlink("loop_b.rs", tree.join("loop_a.rs")).unwrap();
        symlink("loop_a.rs", tree.join("loop_b.rs")).unwrap();
        fs::create_dir_all(tree.join("sub")).unwrap();
        symlink("..", tree.join("sub/up")).unwrap();
        symlink(outside.path().join("bad.rs"), tree.join("escape.rs")).unwrap();
        symlink(outside.path(), tree.join("escape_dir")).unwrap();
        // FIFOs would block a reader forever.
        let mut special = 0;
        for name in ["pipe.rs", "pipe.yaml"] {
            let made = std::process::Command::new("mkfifo")
                .arg(tree.join(name))
                .status()
                .is_ok_and(|s| s.success());
            special += usize::from(made);
        }
        (5, special)
    };
    // An unreadable file: an error naming it, unless we run as root (chmod does not
    // stop root from reading, so the file is then simply analyzed: it is clean).
    write(&tree, "locked.rs", HEAD);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(tree.join("locked.rs"), fs::Permissions::from_mode(0o000)).unwrap();
    }
    let locked_readable = fs::read(tree.join("locked.rs")).is_ok();
    expect.insert(
        "tree/locked.rs".into(),
        (!locked_readable).then(|| (None, None, "cannot read file: Permission denied".into())),
    );
    expected_findings.sort();

    let start = Instant::now();
    let (code, v, stderr) = check_json(root, &["tree"]);
    let elapsed = start.elapsed();
    assert_eq!(code, 2, "{stderr}");

    // Every hostile file: its exact error, or none.
    let got = errors(&v);
    for (path, e) in &expect {
        match e {
            Some(e) => assert_eq!(got.get(path), Some(e), "{path}"),
            None => assert!(!got.contains_key(path), "{path}: {:?}", got[path]),
        }
    }
    let expected_errors: BTreeSet<&String> = expect
        .iter()
        .filter(|(_, e)| e.is_some())
        .map(|(p, _)| p)
        .collect();
    assert_eq!(got.keys().collect::<BTreeSet<_>>(), expected_errors);

    // The findings: the ordinary file's, at the same place with a BOM, and with CRLF
    // exactly where the LF copy has it; nothing from outside the tree.
    let found = findings(&v);
    let expected_findings: Vec<(String, u64, u64, String)> = expected_findings
        .into_iter()
        .map(|(p, l, c, code)| (p, l, c, code.to_string()))
        .collect();
    assert_eq!(found, expected_findings);
    let lf = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "tree/tabs_lf.rs");
    let crlf = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "tree/tabs_crlf.rs");
    let same = |f: &Value| f.to_string().replace("tabs_crlf.rs", "tabs_lf.rs");
    assert_eq!(
        same(lf.unwrap()),
        same(crlf.unwrap()),
        "CRLF moved a position"
    );

    // Nothing lost: every candidate file, link and FIFO is counted.
    let s = &v["summary"];
    let regular = expect.len() + 6; // the six files with findings
    let named_badly = if cfg!(unix) { 2 } else { 0 };
    assert_eq!(
        s["files"].as_u64().unwrap() as usize,
        regular + named_badly + symlinks + special,
        "{s}"
    );
    assert_eq!(
        s["skipped"]["symlink"].as_u64().unwrap_or(0) as usize,
        symlinks
    );
    assert_eq!(
        s["skipped"]["not_a_regular_file"].as_u64().unwrap_or(0) as usize,
        special
    );
    eprintln!("one run over every hostile input: {elapsed:?}");
}

// ----- each case on its own ------------------------------------------------------------

/// Checks `content` at `name` next to the ordinary file: the error is exactly
/// `expected` (or there is none), and the ordinary file's finding is still there.
fn alone(name: &str, content: &[u8], expected: Expected) -> Value {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "msgaudit.toml", "");
    write(dir.path(), name, content);
    write(dir.path(), "normal.rs", BAD);
    let (code, v, stderr) = check_json(dir.path(), &["."]);
    let got = errors(&v);
    match &expected {
        Some(e) => {
            assert_eq!(code, 2, "{stderr}");
            assert_eq!(got.get(name), Some(e), "{}", v["errors"]);
            assert_eq!(got.len(), 1, "{}", v["errors"]);
        }
        None => {
            assert_eq!(code, 1, "{}", v["errors"]);
            assert!(got.is_empty(), "{}", v["errors"]);
        }
    }
    assert!(findings(&v).contains(&("normal.rs".into(), BAD_LINE, BAD_COLUMN, "MA001".into())));
    v
}

#[test]
fn nested_parentheses_and_blocks_are_refused_with_their_position() {
    let (text, e) = parens();
    alone("parens.rs", text.as_bytes(), e);
    let (text, e) = blocks();
    alone("blocks.rs", text.as_bytes(), e);
}

#[test]
fn runs_of_closures_and_bangs_are_refused() {
    let (text, e) = closures();
    alone("closures.rs", text.as_bytes(), e);
    let (text, e) = bangs();
    alone("bangs.rs", text.as_bytes(), e);
}

#[test]
fn quotes_cannot_hide_nesting_and_chains_without_brackets_are_refused() {
    let (text, e) = quote_then_parens();
    alone("quote.rs", text.as_bytes(), e);
    let (text, e) = generics();
    alone("generics.rs", text.as_bytes(), e);
}

/// Schema files are read only for unique keys, statement by statement: a huge
/// INSERT, deep nesting inside a CREATE and tens of thousands of CREATEs are analyzed
/// (no error, bounded time and memory) beside the normal file.
#[test]
fn hostile_schema_files_are_read_without_error() {
    let huge = format!("INSERT INTO t VALUES {}(1);\n", "(1),".repeat(2_000_000));
    alone("huge.sql", huge.as_bytes(), None);
    let deep = format!(
        "CREATE TABLE t (a INT CHECK {}1{});",
        "(".repeat(200_000),
        ")".repeat(200_000)
    );
    alone("deep.sql", deep.as_bytes(), None);
    let many = "CREATE TABLE a (k TEXT UNIQUE);\n".repeat(50_000);
    alone("many.sql", many.as_bytes(), None);
}

#[test]
fn a_10_mb_line_is_analyzed_and_one_byte_more_is_refused() {
    alone("string.rs", long_string_line(LIMIT).as_bytes(), None);
    alone("comment.rs", long_comment_line(LIMIT).as_bytes(), None);
    alone(
        "over.rs",
        long_comment_line(LIMIT + 1).as_bytes(),
        too_large(LIMIT + 1),
    );
    // Raising the limit reads it.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "over.rs", long_comment_line(LIMIT + 1));
    let (code, v, _) = check_json(dir.path(), &[".", "--max-file-size", "11MB"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["summary"]["analyzed"], 1);
}

#[test]
fn a_10_mb_sql_literal_is_analyzed_without_parsing_it() {
    let prefix =
        format!("{HEAD}async fn f(pool: PgPool) {{ sqlx::query(\"INSERT INTO orders VALUES ");
    let suffix = "(1)\").execute(&pool).await; }\n";
    let rows = "(1),".repeat((LIMIT - prefix.len() - suffix.len()) / 4);
    alone("sql.rs", format!("{prefix}{rows}{suffix}").as_bytes(), None);
}

#[test]
fn yaml_alias_bombs_and_deep_nesting_are_refused() {
    let (text, e) = alias_bomb();
    alone("bomb.yaml", text.as_bytes(), e);
    let (text, e) = yaml_flow_deep();
    alone("flow.yaml", text.as_bytes(), e);
    let (text, e) = yaml_block_deep();
    alone("block.yaml", text.as_bytes(), e);
    let (text, e) = yaml_map_deep();
    alone("map.yaml", text.as_bytes(), e);
}

#[test]
fn invalid_utf8_is_refused_with_its_position() {
    let (bytes, e) = bad_utf8_rust();
    alone("bad.rs", &bytes, e);
    let (bytes, e) = bad_utf8_yaml();
    alone("bad.yaml", &bytes, e);
}

#[test]
fn bom_crlf_and_tabs_keep_lines_and_columns() {
    let v = alone("bom.rs", format!("\u{feff}{BAD}").as_bytes(), None);
    assert!(findings(&v).contains(&("bom.rs".into(), BAD_LINE, BAD_COLUMN, "MA001".into())));
    let (tabbed, column) = bad_with_tabs();
    assert_eq!(
        column,
        BAD_COLUMN - 3,
        "one tab for four spaces is one column"
    );
    let v = alone("tabs.rs", tabbed.replace('\n', "\r\n").as_bytes(), None);
    let f = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "tabs.rs")
        .unwrap();
    assert_eq!(
        (f["line"].as_u64(), f["column"].as_u64()),
        (Some(BAD_LINE), Some(column))
    );
    // The span ends after `)` on the same line, with or without the `\r` after it.
    let line = tabbed.lines().nth(BAD_LINE as usize - 1).unwrap();
    let end = line[..line.find(")?;").unwrap() + 1].chars().count() as u64 + 1;
    assert_eq!(
        (f["end_line"].as_u64(), f["end_column"].as_u64()),
        (Some(BAD_LINE), Some(end))
    );
    let v = alone(
        "spring.yaml",
        format!("\u{feff}{}", SPRING.replace('\n', "\r\n")).as_bytes(),
        None,
    );
    assert!(findings(&v).contains(&("spring.yaml".into(), 4, 27, "MA007".into())));
}

#[test]
fn empty_files_and_directories_named_like_files_are_clean() {
    let v = alone("empty.rs", b"", None);
    alone("empty.yaml", b"", None);
    assert_eq!(v["summary"]["files"], 2);
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("foo.rs")).unwrap();
    fs::create_dir_all(dir.path().join("bar.yaml")).unwrap();
    write(dir.path(), "foo.rs/inner.rs", BAD);
    let (code, v, _) = check_json(dir.path(), &["."]);
    assert_eq!(code, 1);
    assert_eq!(v["summary"]["files"], 1);
    assert_eq!(findings(&v)[0].0, "foo.rs/inner.rs");
}

#[test]
fn exponential_call_fan_out_finishes() {
    let start = Instant::now();
    alone("fan_out.rs", call_fan_out().as_bytes(), None);
    // Unbounded, this ran for minutes; the process timeout is 60 s.
    assert!(start.elapsed() < Duration::from_secs(60));
}

/// A function that receives, returning a binding whose `let`s hold tuples of the
/// name they shadow: searched path by path, whether it returns the message took
/// 9^12 steps (minutes); answered once per name and depth, microseconds.
const BINDING_KNOT: &str = "use rdkafka::consumer::StreamConsumer;

async fn knot(consumer: &StreamConsumer) -> Option<u32> {
    let other = consumer.recv().await;
    let m = 0;
    let m = (m, m, m);
    let m = (m, m, m);
    let m = (m, m, m);
    drop(other);
    Some(m)
}
";

#[test]
fn receive_helper_search_through_shadowed_bindings_finishes() {
    let start = Instant::now();
    let v = alone("knot.rs", BINDING_KNOT.as_bytes(), None);
    assert!(findings(&v).iter().all(|f| f.0 != "knot.rs"));
    assert!(start.elapsed() < Duration::from_secs(20));
}

#[cfg(unix)]
#[test]
fn symlinks_are_never_followed_out_of_the_tree_or_around_a_loop() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "bad.rs", BAD);
    write(outside.path(), "conf/app.yaml", SPRING);
    let tree = dir.path();
    write(tree, "normal.rs", BAD);
    symlink(outside.path().join("bad.rs"), tree.join("escape.rs")).unwrap();
    symlink(outside.path(), tree.join("escape_dir")).unwrap();
    symlink("b.rs", tree.join("a.rs")).unwrap();
    symlink("a.rs", tree.join("b.rs")).unwrap();
    fs::create_dir(tree.join("sub")).unwrap();
    symlink("..", tree.join("sub/up")).unwrap();
    let (code, v, _) = check_json(tree, &["."]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(
        findings(&v),
        [("normal.rs".into(), BAD_LINE, BAD_COLUMN, "MA001".into())]
    );
    assert_eq!(v["summary"]["skipped"]["symlink"], 5);
    assert_eq!(v["errors"], serde_json::json!([]));
}

#[cfg(unix)]
#[test]
fn fifos_are_skipped_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "normal.rs", BAD);
    for name in ["pipe.rs", "pipe.yml"] {
        let made = std::process::Command::new("mkfifo")
            .arg(dir.path().join(name))
            .status()
            .is_ok_and(|s| s.success());
        if !made {
            return; // no mkfifo here
        }
    }
    let (code, v, _) = check_json(dir.path(), &["."]);
    assert_eq!(code, 1);
    assert_eq!(v["summary"]["skipped"]["not_a_regular_file"], 2);
    assert_eq!(v["summary"]["files"], 3);
}

#[cfg(unix)]
#[test]
fn unreadable_files_are_errors_naming_them() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "normal.rs", BAD);
    write(dir.path(), "locked.rs", HEAD);
    fs::set_permissions(
        dir.path().join("locked.rs"),
        fs::Permissions::from_mode(0o000),
    )
    .unwrap();
    if fs::read(dir.path().join("locked.rs")).is_ok() {
        // Running as root: permissions do not stop reading, so there is no error to see.
        return;
    }
    let (code, v, _) = check_json(dir.path(), &["."]);
    assert_eq!(code, 2);
    assert_eq!(
        errors(&v)["locked.rs"],
        (
            None,
            None,
            "cannot read file: Permission denied".to_string()
        )
    );
    assert_eq!(findings(&v).len(), 1);
}

#[cfg(unix)]
#[test]
fn file_names_that_are_not_utf8_are_analyzed_under_a_printable_name() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    for raw in [&b"bad\xFF.rs"[..], b"bad\xFE.rs", b"tab\t.rs"] {
        fs::write(dir.path().join(std::ffi::OsStr::from_bytes(raw)), BAD).unwrap();
    }
    let (code, v, _) = check_json(dir.path(), &["."]);
    assert_eq!(code, 1);
    let paths: Vec<String> = findings(&v).into_iter().map(|f| f.0).collect();
    assert_eq!(paths, ["bad\\xFE.rs", "bad\\xFF.rs", "tab\\x09.rs"]);
    // The short format prints them on one line each.
    let out = msgaudit()
        .current_dir(dir.path())
        .args(["check", "--format", "short", "."])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 3, "{text}");
    assert!(
        text.starts_with("bad\\xFE.rs:67:14: error[MA001]"),
        "{text}"
    );
}
