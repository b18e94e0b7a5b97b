//! Discovery and reading of input files. The only module that touches the disk
//! for inputs (config.rs reads msgaudit.toml).
//!
//! Each PATH argument is walked for `.rs`, `.yml` and `.yaml` files, honouring
//! `.gitignore` (also outside a git repository), `.ignore` and `.git/info/exclude`,
//! but not the user's global git excludes, so that a run gives the same result on
//! every machine. The config's `exclude` globs prune further. `target/` and VCS
//! directories (`.git`, `.hg`, `.svn`) are skipped; other hidden directories are
//! walked. Symlinks are never followed: each one met in a walk is counted as
//! skipped (`symlink`). FIFOs, sockets and devices with a candidate name are never
//! opened (`not_a_regular_file`). A PATH that names a file is read even when ignored
//! or excluded.
//!
//! Display paths are printable: on Unix, bytes of a file name that are not UTF-8,
//! and control characters, print as `\xNN`.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::config::Config;
use crate::diagnostic::InputError;

/// Files larger than this are not read (an input error), unless `max_file_size` in
/// the config or `--max-file-size` sets another limit: 10 MiB.
pub const MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// Directory names never walked into.
const SKIPPED_DIRS: [&str; 4] = ["target", ".git", ".hg", ".svn"];

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FileKind {
    Rust,
    Yaml,
    /// A schema or migration (`.sql`): read for the tables' unique keys.
    Sql,
}

impl FileKind {
    /// The kind a file name implies by its extension.
    pub fn from_path(path: &Path) -> Option<FileKind> {
        match path.extension()?.to_str()? {
            "rs" => Some(FileKind::Rust),
            "yml" | "yaml" => Some(FileKind::Yaml),
            "sql" => Some(FileKind::Sql),
            _ => None,
        }
    }
}

/// One input file, read and decoded.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// Display path: as reached from the PATH argument, leading `./` dropped, `/` separators.
    pub path: String,
    /// Path on disk.
    pub abs: PathBuf,
    /// UTF-8 text with a leading BOM removed.
    pub text: String,
    /// The file on disk starts with a UTF-8 BOM (3 bytes before `text`).
    pub bom: bool,
    pub kind: FileKind,
    /// Identifies the crate the file belongs to (SPEC §3): the display path of the
    /// directory of the nearest `Cargo.toml` (searched upward, never above the PATH
    /// argument), or the file's own display path when there is none; an example
    /// (`examples/x.rs`, `examples/x/`) or a binary under `src/bin/` is a crate of its
    /// own, keyed by its file or directory (SPEC §3: a crate is a Cargo target).
    pub crate_key: String,
    /// The package the file belongs to: the directory of the nearest `Cargo.toml` (the
    /// file's own path when there is none). Kafka clients link within a package (MA004).
    pub package_key: String,
}

/// The result of walking the PATH arguments.
#[derive(Clone, Debug, Default)]
pub struct Discovery {
    /// Files to analyze, sorted by display path.
    pub files: Vec<SourceFile>,
    /// Unreadable, non-UTF-8 or oversized files.
    pub errors: Vec<InputError>,
    /// reason -> count (e.g. `templated_yaml`)
    pub skipped: BTreeMap<String, usize>,
    /// Number of candidate files seen (`.rs`, `.yml`, `.yaml`), symlinks, FIFOs,
    /// sockets and devices included.
    pub seen: usize,
}

/// 1-based line and column (counted in characters) of byte offset `byte` in
/// `text`. An offset past the end, or inside a character, is clamped.
pub fn line_col(text: &str, byte: usize) -> (u32, u32) {
    let mut byte = byte.min(text.len());
    while !text.is_char_boundary(byte) {
        byte -= 1;
    }
    let before = &text[..byte];
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line as u32, column as u32)
}

/// A path as printed: `/` separators; on Unix, a byte that is not valid UTF-8 and
/// a control character (a newline in a file name) are written `\xNN`, so that every
/// name prints on one line and two names never print alike.
fn printable(path: &Path) -> String {
    #[cfg(unix)]
    {
        use std::fmt::Write;
        use std::os::unix::ffi::OsStrExt;
        let mut out = String::new();
        for chunk in path.as_os_str().as_bytes().utf8_chunks() {
            for c in chunk.valid().chars() {
                if c.is_ascii_control() {
                    let _ = write!(out, "\\x{:02X}", c as u32);
                } else {
                    out.push(c);
                }
            }
            for b in chunk.invalid() {
                let _ = write!(out, "\\x{b:02X}");
            }
        }
        out
    }
    #[cfg(not(unix))]
    {
        path.to_string_lossy().replace('\\', "/")
    }
}

/// Turns a path as given on the command line into its display form: `/`
/// separators, `.` components dropped (`./src` → `src`, `.` → ``).
fn display_of(path: &Path) -> String {
    let s = printable(path);
    let absolute = s.starts_with('/');
    let parts: Vec<&str> = s
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

fn join_display(base: &str, rel: &str) -> String {
    match (base.is_empty(), rel.is_empty()) {
        (true, _) => rel.to_string(),
        (false, true) => base.to_string(),
        (false, false) if base.ends_with('/') => format!("{base}{rel}"),
        (false, false) => format!("{base}/{rel}"),
    }
}

/// A file found by the walk, not read yet.
struct Candidate {
    abs: PathBuf,
    kind: FileKind,
    keys: Keys,
}

/// Which package and which Cargo target a file belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Keys {
    package: String,
    target: String,
    /// Under the package's `tests/` or `benches/`: an integration test or bench target.
    test_target: bool,
}

#[derive(Default)]
struct Walker {
    candidates: BTreeMap<String, Candidate>,
    errors: Vec<InputError>,
    /// Display paths of symlinks met (a set, so that overlapping PATHs count once).
    symlinks: std::collections::BTreeSet<String>,
    /// Display paths of FIFOs, sockets and devices with a `.rs`/`.yml`/`.yaml` name.
    special: std::collections::BTreeSet<String>,
    /// Files refused because another one prints under the same name.
    clashes: usize,
    cargo_toml: HashMap<PathBuf, bool>,
    /// Rust files of integration-test and bench targets, skipped (no `include_tests`).
    test_targets: usize,
}

impl Walker {
    fn error(&mut self, path: String, message: String) {
        self.errors.push(InputError {
            path,
            line: None,
            column: None,
            message,
        });
    }

    fn has_cargo_toml(&mut self, dir: &Path) -> bool {
        if let Some(&b) = self.cargo_toml.get(dir) {
            return b;
        }
        let b = dir.join("Cargo.toml").is_file();
        self.cargo_toml.insert(dir.to_path_buf(), b);
        b
    }

    /// `limit` is the directory the search stops at (the PATH, or a file PATH's
    /// directory), `limit_display` its display path, `rel_dir` the file's directory
    /// relative to it (`/`-separated, possibly empty).
    fn crate_key(
        &mut self,
        limit: &Path,
        limit_display: &str,
        rel_dir: &str,
        file_display: &str,
    ) -> Keys {
        let parts: Vec<&str> = rel_dir.split('/').filter(|p| !p.is_empty()).collect();
        for n in (0..=parts.len()).rev() {
            let rel = parts[..n].join("/");
            let dir = if rel.is_empty() {
                limit.to_path_buf()
            } else {
                limit.join(&rel)
            };
            if self.has_cargo_toml(&dir) {
                let shown = join_display(limit_display, &rel);
                let package = if shown.is_empty() {
                    ".".to_string()
                } else {
                    shown.clone()
                };
                return target_keys(package, &shown, &parts[n..], file_display);
            }
        }
        Keys {
            package: file_display.to_string(),
            target: file_display.to_string(),
            test_target: false,
        }
    }

    fn walk_path(&mut self, arg: &Path, config: &Config) {
        let base = display_of(arg);
        let shown_arg = if base.is_empty() {
            ".".to_string()
        } else {
            base.clone()
        };
        let meta = match fs::metadata(arg) {
            Ok(m) => m,
            Err(e) => {
                self.error(shown_arg, format!("cannot read path: {}", io_message(&e)));
                return;
            }
        };
        if meta.is_file() {
            let Some(kind) = FileKind::from_path(arg) else {
                self.error(
                    shown_arg,
                    "not a Rust or YAML file (expected `.rs`, `.yml` or `.yaml`)".to_string(),
                );
                return;
            };
            let limit = arg.parent().unwrap_or(Path::new(""));
            let limit = if limit.as_os_str().is_empty() {
                Path::new(".")
            } else {
                limit
            };
            let limit_display = display_of(limit);
            let mut keys = self.crate_key(limit, &limit_display, "", &base);
            // A file named on the command line is analyzed whatever target it is.
            keys.test_target = false;
            self.candidates.insert(
                base,
                Candidate {
                    abs: arg.to_path_buf(),
                    kind,
                    keys,
                },
            );
            return;
        }
        if !meta.is_dir() {
            self.error(shown_arg, "not a regular file or directory".to_string());
            return;
        }

        let config_for_filter = config.clone();
        let walk = ignore::WalkBuilder::new(arg)
            .follow_links(false)
            .hidden(false)
            .git_global(false)
            .require_git(false)
            // A fixed order, so that which of two files printing alike is refused
            // does not depend on the file system.
            .sort_by_file_name(|a, b| a.cmp(b))
            .filter_entry(move |entry| {
                if entry.depth() == 0 {
                    return true;
                }
                let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                if is_dir {
                    if let Some(name) = entry.file_name().to_str() {
                        if SKIPPED_DIRS.contains(&name) {
                            return false;
                        }
                    }
                }
                !config_for_filter.is_excluded(entry.path(), is_dir)
            })
            .build();
        for result in walk {
            let entry = match result {
                Ok(e) => e,
                Err(err) => {
                    let path = walk_error_path(&err)
                        .map(|p| display_of(&p))
                        .unwrap_or_else(|| shown_arg.clone());
                    self.error(
                        path,
                        format!("cannot walk directory: {}", walk_error_message(&err)),
                    );
                    continue;
                }
            };
            if entry.depth() == 0 {
                continue;
            }
            let rel = match entry.path().strip_prefix(arg) {
                Ok(r) => printable(r),
                Err(_) => continue,
            };
            let display = join_display(&base, &rel);
            let Some(ft) = entry.file_type() else {
                continue;
            };
            if entry.path_is_symlink() || ft.is_symlink() {
                self.symlinks.insert(display);
                continue;
            }
            let Some(kind) = FileKind::from_path(entry.path()) else {
                continue;
            };
            if ft.is_dir() {
                continue;
            }
            if !ft.is_file() {
                // FIFOs, sockets and devices are never opened (a FIFO would block).
                self.special.insert(display);
                continue;
            }
            if let Some(other) = self.candidates.get(&display) {
                let same = |a: &Path, b: &Path| {
                    fs::canonicalize(a)
                        .ok()
                        .is_some_and(|a| Some(a) == fs::canonicalize(b).ok())
                };
                if !same(&other.abs, entry.path()) {
                    self.clashes += 1;
                    self.error(
                        display,
                        "not analyzed: another file prints under the same name \
                         (bytes that are not UTF-8 print as \\xNN); rename one of them"
                            .to_string(),
                    );
                    continue;
                }
            }
            let rel_dir = rel.rsplit_once('/').map_or("", |(d, _)| d);
            let keys = self.crate_key(arg, &base, rel_dir, &display);
            if keys.test_target && kind == FileKind::Rust && !config.include_tests {
                self.test_targets += 1;
                continue;
            }
            self.candidates.insert(
                display,
                Candidate {
                    abs: entry.path().to_path_buf(),
                    kind,
                    keys,
                },
            );
        }
    }
}

/// The Cargo target of a file inside a package (SPEC §3), by Cargo's auto-discovery:
/// `inner` are the directories between the package and the file. An example
/// (`examples/x.rs`, or every file under `examples/x/`) and a binary under `src/bin/`
/// are crates of their own; `tests/` and `benches/` hold test targets; everything else
/// is the package's library and main binary, analyzed together.
fn target_keys(package: String, shown: &str, inner: &[&str], file_display: &str) -> Keys {
    let own = |rel: &str| {
        let key = join_display(shown, rel);
        if key.is_empty() {
            ".".to_string()
        } else {
            key
        }
    };
    let (target, test_target) = match inner {
        ["tests" | "benches", ..] => (package.clone(), true),
        ["examples"] | ["src", "bin"] => (file_display.to_string(), false),
        ["examples", name, ..] => (own(&format!("examples/{name}")), false),
        ["src", "bin", name, ..] => (own(&format!("src/bin/{name}")), false),
        _ => (package.clone(), false),
    };
    Keys {
        package,
        target,
        test_target,
    }
}

fn walk_error_path(err: &ignore::Error) -> Option<PathBuf> {
    match err {
        ignore::Error::WithPath { path, .. } => Some(path.clone()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            walk_error_path(err)
        }
        ignore::Error::Loop { child, .. } => Some(child.clone()),
        _ => None,
    }
}

fn walk_error_message(err: &ignore::Error) -> String {
    match err {
        ignore::Error::WithPath { err, .. }
        | ignore::Error::WithDepth { err, .. }
        | ignore::Error::WithLineNumber { err, .. } => walk_error_message(err),
        ignore::Error::Io(e) => io_message(e),
        other => other.to_string(),
    }
}

/// An io error's message without the platform's " (os error N)" suffix.
fn io_message(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// Why a file was read but is not analyzed.
enum ReadOutcome {
    /// The text, and whether a BOM was removed from its start.
    Text(String, bool),
    Skip(&'static str),
    Error(InputError),
}

/// The error for a file over the size limit.
fn too_large(size: Option<u64>, limit: u64) -> String {
    let size = match size {
        Some(n) => format!("{n} bytes"),
        None => "more bytes".to_string(),
    };
    format!(
        "file too large: {size}, over the limit of {}; raise it with \
         `--max-file-size` or `max_file_size` in msgaudit.toml",
        crate::config::describe_size(limit)
    )
}

/// Reads one candidate: size limit (`max_bytes`), UTF-8 check with the position of
/// the first invalid byte, BOM removal, templated YAML detection.
fn read_file(display: &str, abs: &Path, kind: FileKind, max_bytes: u64) -> ReadOutcome {
    let err = |line: Option<u32>, column: Option<u32>, message: String| {
        ReadOutcome::Error(InputError {
            path: display.to_string(),
            line,
            column,
            message,
        })
    };
    if kind == FileKind::Yaml && display.split('/').rev().skip(1).any(|c| c == "templates") {
        return ReadOutcome::Skip("templated_yaml");
    }
    let file = match fs::File::open(abs) {
        Ok(f) => f,
        Err(e) => return err(None, None, format!("cannot read file: {}", io_message(&e))),
    };
    match file.metadata() {
        Ok(m) if !m.is_file() => {
            return err(None, None, "not a regular file".to_string());
        }
        Ok(m) if m.len() > max_bytes => {
            return err(None, None, too_large(Some(m.len()), max_bytes));
        }
        Err(e) => return err(None, None, format!("cannot read file: {}", io_message(&e))),
        Ok(_) => {}
    }
    let mut bytes = Vec::new();
    if let Err(e) = file
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
    {
        return err(None, None, format!("cannot read file: {}", io_message(&e)));
    }
    if bytes.len() as u64 > max_bytes {
        // The file grew after its size was read.
        return err(None, None, too_large(None, max_bytes));
    }
    let (bytes, bom) = match bytes.strip_prefix(b"\xEF\xBB\xBF") {
        Some(rest) => (rest.to_vec(), true),
        None => (bytes, false),
    };
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let bytes = e.as_bytes();
            let prefix = std::str::from_utf8(&bytes[..valid]).unwrap_or_default();
            let (line, column) = line_col(prefix, valid);
            return err(
                Some(line),
                Some(column),
                format!(
                    "invalid UTF-8: byte 0x{:02X} at offset {valid}",
                    bytes[valid]
                ),
            );
        }
    };
    if kind == FileKind::Yaml && text.contains("{{") {
        return ReadOutcome::Skip("templated_yaml");
    }
    ReadOutcome::Text(text, bom)
}

/// Walks the PATH arguments and reads every candidate file (see the module docs).
/// A file larger than `max_file_bytes` is an input error ([`MAX_FILE_BYTES`] by default).
pub fn discover(paths: &[PathBuf], config: &Config, max_file_bytes: u64) -> Discovery {
    let mut walker = Walker::default();
    for p in paths {
        walker.walk_path(p, config);
    }
    // The same file reached twice (`check link real` with `link -> real`) is read
    // once, under the display path that sorts first.
    let mut by_file = std::collections::HashSet::new();
    walker.candidates.retain(|_, c| {
        let key = fs::canonicalize(&c.abs).unwrap_or_else(|_| c.abs.clone());
        by_file.insert(key)
    });
    let mut out = Discovery {
        seen: walker.candidates.len()
            + walker.symlinks.len()
            + walker.special.len()
            + walker.clashes
            + walker.test_targets,
        ..Discovery::default()
    };
    if walker.test_targets > 0 {
        out.skipped
            .insert("test_targets".to_string(), walker.test_targets);
    }
    if !walker.symlinks.is_empty() {
        out.skipped
            .insert("symlink".to_string(), walker.symlinks.len());
    }
    if !walker.special.is_empty() {
        out.skipped
            .insert("not_a_regular_file".to_string(), walker.special.len());
    }
    out.errors = walker.errors;
    // Reading is I/O bound and independent per file; collect keeps the order.
    let candidates: Vec<(String, Candidate)> = walker.candidates.into_iter().collect();
    let read: Vec<ReadOutcome> = candidates
        .par_iter()
        .map(|(display, c)| read_file(display, &c.abs, c.kind, max_file_bytes))
        .collect();
    for ((display, c), outcome) in candidates.into_iter().zip(read) {
        match outcome {
            ReadOutcome::Text(text, bom) => out.files.push(SourceFile {
                path: display,
                abs: c.abs,
                text,
                bom,
                kind: c.kind,
                crate_key: c.keys.target,
                package_key: c.keys.package,
            }),
            ReadOutcome::Skip(reason) => *out.skipped.entry(reason.to_string()).or_default() += 1,
            ReadOutcome::Error(e) => out.errors.push(e),
        }
    }
    out
}

#[cfg(test)]
mod tests {
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
        write(r, "Cargo.toml", b"[package]\n");
        write(r, "src/main.rs", b"fn main() {}\n");
        write(r, "sub/Cargo.toml", b"[package]\n");
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

    /// SPEC §3: examples and `src/bin` binaries are crates of their own, within their
    /// package; integration tests and benches are test targets, skipped unless
    /// `include_tests`.
    #[test]
    fn cargo_targets_key_examples_and_binaries_and_skip_test_targets() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        write(r, "Cargo.toml", b"[package]\n");
        for f in [
            "src/lib.rs",
            "src/db.rs",
            "src/bin/tool.rs",
            "src/bin/daemon/main.rs",
            "src/bin/daemon/cli.rs",
            "examples/a.rs",
            "examples/b/main.rs",
            "examples/b/util.rs",
            "tests/it.rs",
            "tests/common/mod.rs",
            "benches/load.rs",
        ] {
            write(r, f, b"fn f() {}\n");
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
            ("/tests/data/kafka.yaml", ""),
        ]
        .iter()
        .map(|(p, k)| (p.to_string(), k.to_string(), String::new()))
        .collect();
        assert_eq!(got, want);
        assert_eq!(skipped, Some(3));
        assert_eq!(seen, 12);
        let with_tests = Config {
            include_tests: true,
            ..Config::default()
        };
        let (got, skipped, _) = keys(&with_tests);
        assert_eq!(got.len(), 12);
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
        write(t.path(), "chart/templates/cm.yaml", b"a: 1\n");
        write(t.path(), "values.yaml", b"a: {{ .Values.x }}\n");
        write(t.path(), "plain.yml", b"a: 1\n");
        let d = discover(
            &[t.path().to_path_buf()],
            &Config::default(),
            MAX_FILE_BYTES,
        );
        assert_eq!(d.files.len(), 1);
        assert_eq!(d.skipped["templated_yaml"], 2);
        assert_eq!(d.seen, 3);
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
}
