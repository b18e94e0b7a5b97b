use super::*;
use std::fs;

fn write(root: &Path, rel: &str, content: &[u8]) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, content).unwrap();
}

fn paths(d: &Discovery) -> Vec<&str> {
    d.files.iter().map(|f| f.path.as_str()).collect()
}

#[test]
fn an_overlay_replaces_the_text_on_disk() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    write(r, "a.rs", b"fn on_disk() {}\n");
    write(r, "b.rs", b"fn b() {}\n");
    write(r, "c.yaml", b"a: 1\n");
    let real = |p: &str| fs::canonicalize(r.join(p)).unwrap();
    let mut overlay = Overlay::new();
    overlay.insert(real("a.rs"), "\u{feff}fn in_buffer() {}\n".into());
    overlay.insert(real("c.yaml"), "a: {{ templated }}\n".into());
    // Not on disk: analyzed where the walk would find it; not in an ignored
    // directory, nor outside the PATHs.
    overlay.insert(real(".").join("new.rs"), "fn new() {}\n".into());
    write(r, ".ignore", b"gen/\n");
    overlay.insert(real(".").join("gen/x.rs"), "fn x() {}\n".into());
    overlay.insert(
        PathBuf::from("/nonexistent-msgaudit/z.rs"),
        "fn z() {}\n".into(),
    );
    let d = discover_with(
        &[r.to_path_buf()],
        &Config::default(),
        MAX_FILE_BYTES,
        &overlay,
    );
    let texts: Vec<(&str, &str, bool)> = d
        .files
        .iter()
        .map(|f| (f.path.rsplit('/').next().unwrap(), f.text.as_str(), f.bom))
        .collect();
    assert_eq!(
        texts,
        [
            ("a.rs", "fn in_buffer() {}\n", true),
            ("b.rs", "fn b() {}\n", false),
            ("new.rs", "fn new() {}\n", false)
        ]
    );
    assert_eq!(d.skipped.get("templated_yaml"), Some(&1));
    let small = discover_with(&[r.to_path_buf()], &Config::default(), 12, &overlay);
    assert!(small
        .errors
        .iter()
        .any(|e| e.path.ends_with("a.rs") && e.message.starts_with("file too large")));
}

#[test]
fn line_col_counts_characters() {
    assert_eq!(line_col("abc", 0), (1, 1));
    assert_eq!(line_col("a\nbc", 3), (2, 2));
    assert_eq!(line_col("é\nxé y", 6), (2, 3));
    assert_eq!(line_col("éa", 1), (1, 1));
    assert_eq!(line_col("ab", 99), (1, 3));
}

#[test]
fn display_paths_drop_dot() {
    assert_eq!(display_of(Path::new(".")), "");
    assert_eq!(display_of(Path::new("./a/")), "a");
    assert_eq!(display_of(Path::new("a/./b")), "a/b");
    assert_eq!(display_of(Path::new("/x/y")), "/x/y");
    assert_eq!(join_display("", "src/x.rs"), "src/x.rs");
    assert_eq!(join_display("a", "src/x.rs"), "a/src/x.rs");
}

#[test]
fn walks_candidates_with_display_paths_and_crate_keys() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    write(r, "Cargo.toml", b"[package]\nname = \"app\"\n");
    write(r, "src/main.rs", b"fn main() {}\n");
    write(r, "sub/Cargo.toml", b"[package]\nname = \"sub\"\n");
    write(r, "sub/src/lib.rs", b"\xEF\xBB\xBFpub fn f() {}\n");
    write(r, "conf/app.yaml", b"a: 1\n");
    write(r, "notes.txt", b"x");
    write(r, "target/debug/x.rs", b"x");
    let d = discover(&[r.to_path_buf()], &Config::default(), MAX_FILE_BYTES);
    let base = display_of(r);
    let names: Vec<String> = d
        .files
        .iter()
        .map(|f| {
            f.path
                .strip_prefix(&format!("{base}/"))
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(names, ["conf/app.yaml", "src/main.rs", "sub/src/lib.rs"]);
    assert_eq!(d.seen, 3);
    assert_eq!(d.files[1].crate_key, base);
    assert_eq!(d.files[2].crate_key, format!("{base}/sub"));
    assert_eq!(d.files[2].text, "pub fn f() {}\n");
    assert_eq!(d.files[0].kind, FileKind::Yaml);
    assert!(d.errors.is_empty());
}

/// docs/what-is-analyzed.md: examples and `src/bin` binaries are crates of their own, within their
/// package; integration tests and benches are test targets, skipped unless
/// `include_tests`.
#[test]
fn cargo_targets_key_examples_and_binaries_and_skip_test_targets() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    write(r, "Cargo.toml", b"[package]\nname = \"app\"\n");
    // Each target declares its modules; `src/stray.rs` is declared by none (a
    // module commented out) and is a crate by itself.
    for (f, text) in [
        ("src/lib.rs", "mod db;\n// mod stray;\nfn f() {}\n"),
        ("src/db.rs", "fn f() {}\n"),
        ("src/stray.rs", "fn f() {}\n"),
        ("src/bin/tool.rs", "fn f() {}\n"),
        ("src/bin/daemon/main.rs", "mod cli;\nfn f() {}\n"),
        ("src/bin/daemon/cli.rs", "fn f() {}\n"),
        ("examples/a.rs", "fn f() {}\n"),
        ("examples/b/main.rs", "mod util;\nfn f() {}\n"),
        ("examples/b/util.rs", "fn f() {}\n"),
        ("tests/it.rs", "mod common;\nfn f() {}\n"),
        ("tests/common/mod.rs", "fn f() {}\n"),
        ("benches/load.rs", "fn f() {}\n"),
    ] {
        write(r, f, text.as_bytes());
    }
    write(r, "tests/data/kafka.yaml", b"a: 1\n");
    let base = display_of(r);
    let keys = |config: &Config| {
        let d = discover(&[r.to_path_buf()], config, MAX_FILE_BYTES);
        let rel = |p: &str| p.strip_prefix(base.as_str()).unwrap().to_string();
        let keys: Vec<(String, String, String)> = d
            .files
            .iter()
            .map(|f| (rel(&f.path), rel(&f.crate_key), rel(&f.package_key)))
            .collect();
        (keys, d.skipped.get("test_targets").copied(), d.seen)
    };
    let (got, skipped, seen) = keys(&Config::default());
    let want: Vec<(String, String, String)> = [
        ("/examples/a.rs", "/examples/a.rs"),
        ("/examples/b/main.rs", "/examples/b"),
        ("/examples/b/util.rs", "/examples/b"),
        ("/src/bin/daemon/cli.rs", "/src/bin/daemon"),
        ("/src/bin/daemon/main.rs", "/src/bin/daemon"),
        ("/src/bin/tool.rs", "/src/bin/tool.rs"),
        ("/src/db.rs", ""),
        ("/src/lib.rs", ""),
        ("/src/stray.rs", "/src/stray.rs"),
        ("/tests/data/kafka.yaml", ""),
    ]
    .iter()
    .map(|(p, k)| {
        // A file in no target is in no package either.
        let package = if *p == "/src/stray.rs" { p } else { "" };
        (p.to_string(), k.to_string(), package.to_string())
    })
    .collect();
    assert_eq!(got, want);
    assert_eq!(skipped, Some(3));
    assert_eq!(seen, 13);
    let with_tests = Config {
        include_tests: true,
        ..Config::default()
    };
    let (got, skipped, _) = keys(&with_tests);
    assert_eq!(got.len(), 13);
    // An integration test's modules are its own (`tests/it.rs` declares `common`).
    assert!(got.contains(&("/tests/common/mod.rs".into(), String::new(), String::new())));
    assert_eq!(skipped, None);
}

#[test]
fn invalid_utf8_is_positioned() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "bad.rs", b"fn a() {}\n  // \xC3\xA9 \xFF\n");
    write(t.path(), "good.rs", b"fn b() {}\n");
    let d = discover(
        &[t.path().to_path_buf()],
        &Config::default(),
        MAX_FILE_BYTES,
    );
    assert_eq!(d.seen, 2);
    assert_eq!(d.files.len(), 1);
    assert_eq!(d.errors.len(), 1);
    let e = &d.errors[0];
    assert!(e.path.ends_with("bad.rs"));
    assert_eq!((e.line, e.column), (Some(2), Some(8)));
    assert!(e.message.starts_with("invalid UTF-8"));
}

#[test]
fn templated_yaml_is_skipped() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "chart/Chart.yaml", b"name: c\n");
    write(t.path(), "chart/templates/cm.yaml", b"a: 1\n");
    write(t.path(), "chart/templates/sub/x.yaml", b"a: 1\n");
    write(t.path(), "values.yaml", b"a: {{ .Values.x }}\n");
    write(t.path(), "plain.yml", b"a: 1\n");
    let d = discover(
        &[t.path().to_path_buf()],
        &Config::default(),
        MAX_FILE_BYTES,
    );
    let paths: Vec<&str> = d.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths.len(), 2, "{paths:?}");
    assert!(
        paths.iter().any(|p| p.ends_with("chart/Chart.yaml")),
        "{paths:?}"
    );
    assert_eq!(d.skipped["templated_yaml"], 3);
    assert_eq!(d.seen, 5);
}

/// A `templates/` directory with no `Chart.yaml` beside it (SAM, CloudFormation) is
/// read like any YAML; a `Chart.yaml` inside it, or further up, does not make it a chart's.
#[test]
fn templates_without_a_chart_are_read() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "sam/templates/template.yaml", b"a: 1\n");
    write(t.path(), "other/templates/Chart.yaml", b"name: c\n");
    write(t.path(), "other/templates/x.yaml", b"a: 1\n");
    write(t.path(), "Chart.yaml", b"name: top\n");
    write(t.path(), "deep/templates/y.yaml", b"a: 1\n");
    write(t.path(), "sam/templates/t.yaml", b"a: {{ x }}\n");
    let d = discover(
        &[t.path().to_path_buf()],
        &Config::default(),
        MAX_FILE_BYTES,
    );
    let paths: Vec<&str> = d.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths.len(), 5, "{paths:?}");
    assert!(paths
        .iter()
        .any(|p| p.ends_with("sam/templates/template.yaml")));
    assert!(paths.iter().any(|p| p.ends_with("deep/templates/y.yaml")));
    assert_eq!(d.skipped["templated_yaml"], 1);
}

#[test]
fn explicit_file_has_its_directory_as_crate_limit() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "Cargo.toml", b"");
    write(t.path(), "a/x.rs", b"");
    let file = t.path().join("a/x.rs");
    let d = discover(
        std::slice::from_ref(&file),
        &Config::default(),
        MAX_FILE_BYTES,
    );
    assert_eq!(d.files.len(), 1);
    assert_eq!(d.files[0].crate_key, d.files[0].path);
}

#[test]
fn odd_inputs_do_not_crash() {
    let t = tempfile::tempdir().unwrap();
    fs::create_dir_all(t.path().join("dir.rs")).unwrap();
    write(t.path(), "dir.rs/inner.rs", b"");
    let missing = t.path().join("missing");
    let txt = t.path().join("x.txt");
    write(t.path(), "x.txt", b"");
    let d = discover(
        &[t.path().to_path_buf(), missing, txt],
        &Config::default(),
        MAX_FILE_BYTES,
    );
    assert_eq!(paths(&d).len(), 1);
    assert!(paths(&d)[0].ends_with("dir.rs/inner.rs"));
    assert_eq!(d.errors.len(), 2);
}

#[cfg(unix)]
#[test]
fn symlinks_are_counted_not_followed() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "a/x.rs", b"");
    std::os::unix::fs::symlink(t.path(), t.path().join("a/loop")).unwrap();
    std::os::unix::fs::symlink(t.path().join("a/x.rs"), t.path().join("y.rs")).unwrap();
    let d = discover(
        &[t.path().to_path_buf()],
        &Config::default(),
        MAX_FILE_BYTES,
    );
    assert_eq!(d.files.len(), 1);
    assert_eq!(d.skipped["symlink"], 2);
    assert_eq!(d.seen, 3);
}

#[cfg(unix)]
#[test]
fn names_that_are_not_utf8_print_escaped_and_distinct() {
    use std::os::unix::ffi::OsStrExt;
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("src");
    fs::create_dir_all(&dir).unwrap();
    for name in [
        &b"bad\xff.rs"[..],
        b"bad\xfe.rs",
        b"new\nline.rs",
        b"caf\xc3\xa9.rs",
    ] {
        fs::write(dir.join(std::ffi::OsStr::from_bytes(name)), b"fn f() {}\n").unwrap();
    }
    let d = discover(
        std::slice::from_ref(&dir),
        &Config::default(),
        MAX_FILE_BYTES,
    );
    let base = display_of(&dir);
    let names: Vec<&str> = d
        .files
        .iter()
        .map(|f| f.path.strip_prefix(&format!("{base}/")).unwrap())
        .collect();
    assert_eq!(
        names,
        ["bad\\xFE.rs", "bad\\xFF.rs", "café.rs", "new\\x0Aline.rs"]
    );
    assert!(d.errors.is_empty());
    assert_eq!(d.seen, 4);
    // A real name that prints like an escaped one is refused, not lost.
    fs::write(dir.join("bad\\xFF.rs"), b"fn g() {}\n").unwrap();
    let d = discover(
        std::slice::from_ref(&dir),
        &Config::default(),
        MAX_FILE_BYTES,
    );
    assert_eq!(d.files.len(), 4);
    assert_eq!(d.seen, 5);
    assert_eq!(d.errors.len(), 1);
    assert!(d.errors[0].path.ends_with("bad\\xFF.rs"));
    assert!(d.errors[0]
        .message
        .starts_with("not analyzed: another file prints"));
}

#[cfg(unix)]
#[test]
fn fifos_are_counted_not_opened() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "a.rs", b"");
    let fifo = t.path().join("pipe.rs");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        return; // no mkfifo here: nothing to check
    }
    let d = discover(
        &[t.path().to_path_buf()],
        &Config::default(),
        MAX_FILE_BYTES,
    );
    assert_eq!(d.files.len(), 1);
    assert_eq!(d.skipped["not_a_regular_file"], 1);
    assert_eq!(d.seen, 2);
}

#[cfg(unix)]
#[test]
fn a_file_reached_twice_is_read_once() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "real/x.rs", b"");
    std::os::unix::fs::symlink(t.path().join("real"), t.path().join("link")).unwrap();
    let d = discover(
        &[
            t.path().join("real"),
            t.path().join("link"),
            t.path().join("real/x.rs"),
        ],
        &Config::default(),
        MAX_FILE_BYTES,
    );
    assert_eq!(paths(&d).len(), 1);
    assert!(paths(&d)[0].ends_with("link/x.rs"));
    assert_eq!(d.seen, 1);
}

#[test]
fn gitignore_and_excludes() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), ".gitignore", b"ignored.rs\n");
    write(t.path(), "ignored.rs", b"");
    write(t.path(), "vendor/v.rs", b"");
    write(t.path(), "kept.rs", b"");
    let mut config = Config::parse("exclude = [\"vendor/**\"]", "msgaudit.toml").unwrap();
    config.root = Some(t.path().canonicalize().unwrap());
    let d = discover(&[t.path().to_path_buf()], &config, MAX_FILE_BYTES);
    assert_eq!(paths(&d).len(), 1);
    assert!(paths(&d)[0].ends_with("kept.rs"));
    // An explicit file is read even when ignored or excluded.
    let d = discover(
        &[t.path().join("ignored.rs"), t.path().join("vendor/v.rs")],
        &config,
        MAX_FILE_BYTES,
    );
    assert_eq!(d.files.len(), 2);
}

#[test]
fn too_large_file_is_an_error() {
    let t = tempfile::tempdir().unwrap();
    let f = fs::File::create(t.path().join("big.rs")).unwrap();
    f.set_len(MAX_FILE_BYTES + 1).unwrap();
    let d = discover(
        &[t.path().to_path_buf()],
        &Config::default(),
        MAX_FILE_BYTES,
    );
    assert!(d.files.is_empty());
    assert_eq!(
        d.errors[0].message,
        "file too large: 10485761 bytes, over the limit of 10485760 bytes (10 MiB); \
             raise it with `--max-file-size` or `max_file_size` in msgaudit.toml"
    );
}

#[test]
fn the_size_limit_is_a_parameter() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), "a.rs", &[b'x'; 100]);
    write(t.path(), "b.yaml", &[b'x'; 101]);
    let d = discover(&[t.path().to_path_buf()], &Config::default(), 100);
    assert_eq!(paths(&d).len(), 1);
    assert!(paths(&d)[0].ends_with("a.rs"));
    assert!(d.errors[0].path.ends_with("b.yaml"));
    assert!(d.errors[0]
        .message
        .starts_with("file too large: 101 bytes, over the limit of 100 bytes;"));
}
