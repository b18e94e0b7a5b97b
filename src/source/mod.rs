//! Discovery and reading of input files. The only module that touches the disk
//! for inputs (config.rs reads msgaudit.toml).
//!
//! Each PATH argument is walked for `.rs`, `.yml` and `.yaml` files, honouring the
//! ignore files as git reads them (`.gitignore`, also outside a git repository, and
//! `.ignore`, from the repository root down; `info/exclude`; the user's global
//! excludes), read by msgaudit itself, safely (see `ignores`). The config's `exclude`
//! globs prune further. Cargo target directories (`target` beside a `Cargo.toml`,
//! `CARGO_TARGET_DIR`, `build.target-dir`) are skipped and counted
//! (`cargo_target_dirs`), as are VCS directories (`.git`, `.hg`, `.svn`, not
//! counted); other hidden directories are walked. Symlinks are never followed: each
//! one met in a walk is counted as skipped (`symlink`). FIFOs, sockets and devices
//! with a candidate name are never opened (`not_a_regular_file`). A PATH that names a
//! file is read even when ignored or excluded.
//!
//! A file is one file whichever PATHs reach it: keyed by its canonical path, it
//! prints as reached from the outermost directory PATH holding it, and its crate is
//! found from there (the nearest `Cargo.toml`, never above that PATH).
//!
//! Display paths are printable: on Unix, bytes of a file name that are not UTF-8,
//! and control characters, print as `\xNN`.

pub mod cargo;
mod ignores;
mod modules;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use rayon::prelude::*;

use crate::config::Config;
use crate::diagnostic::InputError;
use crate::support::files::{describe_size, read_regular, Refusal};
use crate::support::lines::line_col;
use ignores::Rules;
pub use ignores::{IGNORE_FILE_MAX_BYTES, IGNORE_TOTAL_MAX_BYTES};

/// Files larger than this are not read (an input error), unless `max_file_size` in
/// the config or `--max-file-size` sets another limit: 10 MiB.
pub const MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// Version-control directories, never walked into.
const VCS_DIRS: [&str; 3] = [".git", ".hg", ".svn"];

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
    /// Identifies the crate the file belongs to (docs/what-is-analyzed.md): the display path of the
    /// directory of the nearest `Cargo.toml` (searched upward from the file's real
    /// location, never above the outermost directory PATH holding it, or above its
    /// own directory when it is named as a PATH and no directory PATH holds it), or
    /// the file's own display path when there is none; an example
    /// (`examples/x.rs`, `examples/x/`) or a binary under `src/bin/` is a crate of its
    /// own, keyed by its file or directory (docs/what-is-analyzed.md: a crate is a Cargo target).
    pub crate_key: String,
    /// The package the file belongs to: the directory of the nearest `Cargo.toml` (the
    /// file's own path when there is none). Kafka clients link within a package
    /// (read_committed for transactional topics).
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
    /// Each crate's dependencies inside the analyzed tree (docs/what-is-analyzed.md): the name its
    /// code imports each by, and the dependency's crate key (its library's).
    pub crate_deps: cargo::CrateDeps,
    /// Path dependencies outside the analyzed tree (not read), by the name the code
    /// imports them by: calls into them are calls into another crate.
    pub outside_deps: BTreeSet<String>,
    /// Every dependency each crate's manifest names, registry ones included (a
    /// crate without a readable manifest is left out): a library type whose name
    /// others share counts only in a crate that may import its library.
    pub crate_uses: cargo::CrateUses,
    /// Crates (Cargo targets, or files with no `Cargo.toml`) with a Rust file read.
    pub crates: usize,
    /// The names of each crate's binary (by crate key): its Cargo target's, its
    /// package's and the package's `[[bin]]` names, which deploy files name it by.
    pub target_names: BTreeMap<String, Vec<String>>,
    /// Cargo workspaces (manifests with a `[workspace]` table inside the PATH
    /// arguments) that hold a package with a file read.
    pub workspaces: usize,
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

/// The bytes of the path a display path stands for, when it escapes some (`\xNN`):
/// each component of `display`, from the last, is the name of the matching component
/// of `abs` when that name prints as it (so a name with a real `\` is never taken for
/// an escape); the components above those are kept as printed. `None` when nothing
/// is escaped. Links percent-encode these bytes, not the escapes.
pub fn raw_display(display: &str, abs: &Path) -> Option<Vec<u8>> {
    if !display.contains('\\') {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let mut names = abs.components().rev();
        let mut parts: Vec<Vec<u8>> = Vec::new();
        let mut matching = true;
        for shown in display.rsplit('/') {
            let name = if matching { names.next() } else { None };
            match name {
                Some(c) if printable(Path::new(c.as_os_str())) == shown => {
                    parts.push(c.as_os_str().as_bytes().to_vec());
                }
                _ => {
                    matching = false;
                    parts.push(shown.as_bytes().to_vec());
                }
            }
        }
        parts.reverse();
        Some(parts.join(&b'/'))
    }
    #[cfg(not(unix))]
    {
        let _ = abs;
        None
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

/// A file found by the walk or named as a PATH, not read yet.
struct Candidate {
    kind: FileKind,
    /// (display path, display path of its directory) for each way the file was
    /// named as a PATH argument; empty when only a walk reached it.
    named: BTreeSet<(String, String)>,
}

/// Which package and which Cargo target a file belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Keys {
    package: String,
    target: String,
    /// Under the package's `tests/` or `benches/`: an integration test or bench target.
    test_target: bool,
}

/// A directory given as a PATH argument.
struct DirPath {
    /// As given.
    arg: PathBuf,
    /// Canonical.
    real: PathBuf,
    /// Display path (`.` components dropped).
    shown: String,
}

/// Walks the PATH arguments. Every file is keyed by its canonical path, so that a
/// file reached twice (overlapping PATHs, a link to a directory given as a PATH) is
/// one file, whatever the order of the arguments.
#[derive(Default)]
struct Walker {
    candidates: BTreeMap<PathBuf, Candidate>,
    errors: Vec<InputError>,
    /// Symlinks met (canonical path of the link itself).
    symlinks: BTreeSet<PathBuf>,
    /// FIFOs, sockets and devices with a `.rs`/`.yml`/`.yaml` name.
    special: BTreeSet<PathBuf>,
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

    /// Checks one PATH argument: a file is a candidate right away, a directory is
    /// returned to be walked.
    fn add_path(&mut self, arg: &Path, overlay: &Overlay) -> Option<DirPath> {
        let base = display_of(arg);
        let shown_arg = if base.is_empty() {
            ".".to_string()
        } else {
            base.clone()
        };
        let meta = match fs::metadata(arg) {
            Ok(m) => m,
            // A file named as PATH that exists only as an editor's buffer (a new file,
            // never saved, in no crate): analyzed alone, from the buffer.
            Err(_) if overlay.contains_key(arg) => {
                let kind = FileKind::from_path(arg)?;
                let dir = display_of(arg.parent().unwrap_or(Path::new("")));
                self.candidates
                    .entry(arg.to_path_buf())
                    .or_insert_with(|| Candidate {
                        kind,
                        named: BTreeSet::new(),
                    })
                    .named
                    .insert((base, dir));
                return None;
            }
            Err(e) => {
                self.error(shown_arg, format!("cannot read path: {}", io_message(&e)));
                return None;
            }
        };
        if meta.is_file() {
            let Some(kind) = FileKind::from_path(arg) else {
                self.error(
                    shown_arg,
                    "not a Rust or YAML file (expected `.rs`, `.yml` or `.yaml`)".to_string(),
                );
                return None;
            };
            let real = match fs::canonicalize(arg) {
                Ok(r) => r,
                Err(e) => {
                    self.error(shown_arg, format!("cannot read path: {}", io_message(&e)));
                    return None;
                }
            };
            let dir = display_of(arg.parent().unwrap_or(Path::new("")));
            self.candidates
                .entry(real)
                .or_insert_with(|| Candidate {
                    kind,
                    named: BTreeSet::new(),
                })
                .named
                .insert((base, dir));
            return None;
        }
        if !meta.is_dir() {
            self.error(shown_arg, "not a regular file or directory".to_string());
            return None;
        }
        match fs::canonicalize(arg) {
            Ok(real) => Some(DirPath {
                arg: arg.to_path_buf(),
                real,
                shown: base,
            }),
            Err(e) => {
                self.error(shown_arg, format!("cannot read path: {}", io_message(&e)));
                None
            }
        }
    }

    fn walk_dir(&mut self, root: &DirPath, rules: &Arc<Mutex<Rules>>, config: &Config) {
        let shown_arg = if root.shown.is_empty() {
            ".".to_string()
        } else {
            root.shown.clone()
        };
        let filter_rules = Arc::clone(rules);
        let filter_config = config.clone();
        let (arg, real) = (root.arg.clone(), root.real.clone());
        let walk = ignore::WalkBuilder::new(&root.arg)
            // msgaudit reads the ignore files itself (see `ignores`), safely.
            .standard_filters(false)
            .follow_links(false)
            // A fixed order, so that walk errors come out the same on every file system.
            .sort_by_file_name(|a, b| a.cmp(b))
            .filter_entry(move |entry| {
                if entry.depth() == 0 {
                    return true;
                }
                let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                if is_dir
                    && entry
                        .file_name()
                        .to_str()
                        .is_some_and(|n| VCS_DIRS.contains(&n))
                {
                    return false;
                }
                let Ok(rel) = entry.path().strip_prefix(&arg) else {
                    return true;
                };
                let path = real.join(rel);
                let mut rules = filter_rules.lock().unwrap_or_else(PoisonError::into_inner);
                if is_dir && rules.is_cargo_target(&path) {
                    return false;
                }
                if filter_config.is_excluded(entry.path(), is_dir) {
                    return false;
                }
                !rules.is_ignored(&path, is_dir)
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
            let Ok(rel) = entry.path().strip_prefix(&root.arg) else {
                continue;
            };
            let path = root.real.join(rel);
            let Some(ft) = entry.file_type() else {
                continue;
            };
            if entry.path_is_symlink() || ft.is_symlink() {
                self.symlinks.insert(path);
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
                self.special.insert(path);
                continue;
            }
            self.candidates.entry(path).or_insert_with(|| Candidate {
                kind,
                named: BTreeSet::new(),
            });
        }
    }
}

/// The outermost directory PATH holding `path` (canonical): the one a file's display
/// path and its crate are reckoned from, whichever PATH reached it. Of two PATHs
/// naming the same directory, the one that prints first.
fn outermost<'a>(dirs: &'a [DirPath], path: &Path) -> Option<&'a DirPath> {
    dirs.iter()
        .filter(|d| path.starts_with(&d.real))
        .min_by(|a, b| {
            let depth = |d: &DirPath| d.real.components().count();
            depth(a).cmp(&depth(b)).then_with(|| a.shown.cmp(&b.shown))
        })
}

/// The display path of `path` (canonical), reckoned from the outermost directory PATH
/// holding it; an absolute path when none does.
fn display_under(dirs: &[DirPath], path: &Path) -> String {
    match outermost(dirs, path) {
        Some(d) => join_display(
            &d.shown,
            &printable(path.strip_prefix(&d.real).unwrap_or(path)),
        ),
        None => printable(path),
    }
}

/// The package and target of a file: the nearest `Cargo.toml` from the file's
/// directory (`rel_dir`, relative to `limit`) up to `limit`, never above;
/// `limit_display` is the display path of `limit`.
fn crate_key(
    rules: &mut Rules,
    limit: &Path,
    limit_display: &str,
    rel_dir: &Path,
    file_display: &str,
) -> Keys {
    let components: Vec<&std::ffi::OsStr> = rel_dir.components().map(|c| c.as_os_str()).collect();
    let parts: Vec<String> = components.iter().map(|c| printable(Path::new(c))).collect();
    for n in (0..=components.len()).rev() {
        let mut dir = limit.to_path_buf();
        dir.extend(&components[..n]);
        if rules.has_cargo_toml(&dir) {
            let shown = join_display(limit_display, &parts[..n].join("/"));
            let package = if shown.is_empty() {
                ".".to_string()
            } else {
                shown.clone()
            };
            let inner: Vec<&str> = parts[n..].iter().map(String::as_str).collect();
            rules.package_dirs.insert(package.clone(), dir.clone());
            return target_keys(package, &shown, &inner, file_display);
        }
    }
    Keys {
        package: file_display.to_string(),
        target: file_display.to_string(),
        test_target: false,
    }
}

/// The Cargo target of a file inside a package (docs/what-is-analyzed.md), by Cargo's auto-discovery:
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
        describe_size(limit)
    )
}

/// Whether a YAML file sits in a Helm chart's `templates/` (docs/what-is-analyzed.md): a `templates`
/// directory among the ones its display path names, with a `Chart.yaml` beside it (in
/// its parent directory). A `templates/` directory elsewhere (SAM and CloudFormation
/// templates often live in one) is read like any YAML.
fn in_chart_templates(display: &str, abs: &Path) -> bool {
    // The directories the display path names, innermost first, paired with the real
    // directories they are (the real path's ancestors, the file itself skipped).
    display
        .split('/')
        .rev()
        .skip(1)
        .zip(abs.ancestors().skip(1))
        .any(|(name, dir)| {
            name == "templates" && dir.parent().is_some_and(|p| p.join("Chart.yaml").is_file())
        })
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
    if kind == FileKind::Yaml && in_chart_templates(display, abs) {
        return ReadOutcome::Skip("templated_yaml");
    }
    let bytes = match read_regular(abs, max_bytes, true) {
        Ok(bytes) => bytes,
        Err(Refusal::NotRegular | Refusal::Symlink) => {
            return err(None, None, "not a regular file".to_string())
        }
        Err(Refusal::TooLarge(size)) => return err(None, None, too_large(size, max_bytes)),
        Err(Refusal::Missing) => return err(None, None, "cannot read file: not found".to_string()),
        Err(Refusal::Io(e)) => {
            return err(None, None, format!("cannot read file: {}", io_message(&e)))
        }
    };
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

/// Texts that replace files on disk for one run (an editor's unsaved buffers, for
/// `msgaudit server`), keyed by canonical path (of a file not on disk: its
/// directory's canonical path joined with its name). A buffer never saved to disk
/// is analyzed where the walk would find it if it were saved.
pub type Overlay = BTreeMap<PathBuf, String>;

/// An overlay's text, checked as [`read_file`] checks a file's.
fn overlay_text(
    display: &str,
    abs: &Path,
    text: &str,
    kind: FileKind,
    max_bytes: u64,
) -> ReadOutcome {
    if text.len() as u64 > max_bytes {
        return ReadOutcome::Error(InputError {
            path: display.to_string(),
            line: None,
            column: None,
            message: too_large(Some(text.len() as u64), max_bytes),
        });
    }
    let templated =
        kind == FileKind::Yaml && (in_chart_templates(display, abs) || text.contains("{{"));
    if templated {
        return ReadOutcome::Skip("templated_yaml");
    }
    match text.strip_prefix('\u{feff}') {
        Some(rest) => ReadOutcome::Text(rest.to_string(), true),
        None => ReadOutcome::Text(text.to_string(), false),
    }
}

/// Makes candidates of the buffers in `overlay` that are not on disk (an editor's
/// new file, never saved), where the walk would have found them: under a directory
/// PATH, in no version control or Cargo target directory, neither excluded nor
/// ignored. They then belong to the crate their path would.
fn add_unsaved(
    walker: &mut Walker,
    dirs: &[DirPath],
    rules: &mut Rules,
    config: &Config,
    overlay: &Overlay,
) {
    for path in overlay.keys() {
        if walker.candidates.contains_key(path) || fs::symlink_metadata(path).is_ok() {
            continue;
        }
        let Some(kind) = FileKind::from_path(path) else {
            continue;
        };
        let Some(d) = outermost(dirs, path) else {
            continue;
        };
        let Ok(rel) = path.strip_prefix(&d.real) else {
            continue;
        };
        let parts: Vec<_> = rel.components().collect();
        let mut sub = PathBuf::new();
        let dropped = parts.iter().enumerate().any(|(i, part)| {
            sub.push(part);
            let is_dir = i + 1 < parts.len();
            let real = d.real.join(&sub);
            (is_dir
                && (part
                    .as_os_str()
                    .to_str()
                    .is_some_and(|n| VCS_DIRS.contains(&n))
                    || rules.is_cargo_target(&real)))
                || config.is_excluded(&d.arg.join(&sub), is_dir)
                || rules.is_ignored(&real, is_dir)
        });
        if !dropped {
            walker.candidates.insert(
                path.clone(),
                Candidate {
                    kind,
                    named: BTreeSet::new(),
                },
            );
        }
    }
}

/// Walks the PATH arguments and reads every candidate file (see the module docs).
/// A file larger than `max_file_bytes` is an input error ([`MAX_FILE_BYTES`] by default).
pub fn discover(paths: &[PathBuf], config: &Config, max_file_bytes: u64) -> Discovery {
    discover_with(paths, config, max_file_bytes, &Overlay::new())
}

/// [`discover`], with the text of the files in `overlay` taken from it instead of
/// the disk (checked like a file's text: size limit, BOM, templated YAML).
pub fn discover_with(
    paths: &[PathBuf],
    config: &Config,
    max_file_bytes: u64,
    overlay: &Overlay,
) -> Discovery {
    let (mut walker, dirs, mut rules) = walk_paths(paths, config, overlay);
    let (by_display, test_targets) = display_names(&mut walker, &dirs, &mut rules, config);

    let mut out = Discovery {
        seen: walker.candidates.len() + walker.symlinks.len() + walker.special.len(),
        ..Discovery::default()
    };
    let counts = [
        ("test_targets", test_targets),
        ("symlink", walker.symlinks.len()),
        ("not_a_regular_file", walker.special.len()),
        ("cargo_target_dirs", rules.skipped_targets.len()),
    ];
    for (reason, n) in counts {
        if n > 0 {
            out.skipped.insert(reason.to_string(), n);
        }
    }
    out.errors = walker.errors;
    read_candidates(&mut out, by_display, overlay, max_file_bytes);
    // One resolver: each manifest is read and parsed once for both.
    let mut resolver = cargo::Resolver::default();
    undeclared_files(&mut out.files, &mut resolver);
    crate_facts(&mut out, &rules, &dirs, config, &mut resolver);
    out
}

/// Walks the PATH arguments (files and directories) and adds the editor's unsaved
/// files: the candidates found, the directories walked, and the ignore rules and
/// Cargo layout seen (their errors are the walker's).
fn walk_paths(
    paths: &[PathBuf],
    config: &Config,
    overlay: &Overlay,
) -> (Walker, Vec<DirPath>, Rules) {
    let mut walker = Walker::default();
    let dirs: Vec<DirPath> = paths
        .iter()
        .filter_map(|p| walker.add_path(p, overlay))
        .collect();
    let real_dirs: Vec<PathBuf> = dirs.iter().map(|d| d.real.clone()).collect();
    let rules = Arc::new(Mutex::new(Rules::new(&real_dirs)));
    for d in &dirs {
        walker.walk_dir(d, &rules, config);
    }
    let mut rules = match Arc::try_unwrap(rules) {
        Ok(m) => m.into_inner().unwrap_or_else(PoisonError::into_inner),
        // Unreachable: each walk's filter, holding a reference, is dropped with it.
        Err(shared) => std::mem::replace(
            &mut *shared.lock().unwrap_or_else(PoisonError::into_inner),
            Rules::new(&[]),
        ),
    };
    add_unsaved(&mut walker, &dirs, &mut rules, config, overlay);
    for e in std::mem::take(&mut rules.errors) {
        walker.errors.push(InputError {
            path: display_under(&dirs, &e.path),
            line: None,
            column: None,
            message: e.message,
        });
    }
    (walker, dirs, rules)
}

/// The candidates to read, by display path, with their real path, kind and crate
/// keys; and how many were test targets left out. Display paths and crates come
/// from each file's real location: reckoned from the outermost directory PATH
/// holding it, or as named when none does. Two files printing alike are errors.
fn display_names(
    walker: &mut Walker,
    dirs: &[DirPath],
    rules: &mut Rules,
    config: &Config,
) -> (BTreeMap<String, (PathBuf, FileKind, Keys)>, usize) {
    let mut by_display: BTreeMap<String, (PathBuf, FileKind, Keys)> = BTreeMap::new();
    let mut clashes = Vec::new();
    let mut test_targets = 0;
    for (real, c) in &walker.candidates {
        let (display, mut keys) = match (outermost(dirs, real), c.named.first()) {
            (Some(d), _) => {
                let rel = real.strip_prefix(&d.real).unwrap_or(real);
                let display = join_display(&d.shown, &printable(rel));
                let rel_dir = rel.parent().unwrap_or(Path::new(""));
                let keys = crate_key(rules, &d.real, &d.shown, rel_dir, &display);
                (display, keys)
            }
            (None, Some((display, dir_display))) => {
                let dir = real.parent().unwrap_or(Path::new("/"));
                let keys = crate_key(rules, dir, dir_display, Path::new(""), display);
                (display.clone(), keys)
            }
            (None, None) => continue,
        };
        // A file named on the command line is analyzed whatever target it is.
        if !c.named.is_empty() {
            keys.test_target = false;
        }
        if by_display.contains_key(&display) {
            clashes.push(display);
            continue;
        }
        if keys.test_target && c.kind == FileKind::Rust && !config.include_tests {
            test_targets += 1;
            continue;
        }
        by_display.insert(display, (real.clone(), c.kind, keys));
    }
    for display in clashes.iter().cloned() {
        walker.error(
            display,
            "not analyzed: another file prints under the same name \
             (bytes that are not UTF-8 print as \\xNN); rename one of them"
                .to_string(),
        );
    }
    (by_display, test_targets)
}

/// Reads the candidates (from `overlay` when it holds them) in parallel, keeping
/// their order: the files, the files skipped by reason, and the read errors.
fn read_candidates(
    out: &mut Discovery,
    by_display: BTreeMap<String, (PathBuf, FileKind, Keys)>,
    overlay: &Overlay,
    max_file_bytes: u64,
) {
    // Reading is I/O bound and independent per file; collect keeps the order.
    let candidates: Vec<(String, (PathBuf, FileKind, Keys))> = by_display.into_iter().collect();
    let read: Vec<ReadOutcome> = candidates
        .par_iter()
        .map(|(display, (real, kind, _))| match overlay.get(real) {
            Some(text) => overlay_text(display, real, text, *kind, max_file_bytes),
            None => read_file(display, real, *kind, max_file_bytes),
        })
        .collect();
    for ((display, (real, kind, keys)), outcome) in candidates.into_iter().zip(read) {
        match outcome {
            ReadOutcome::Text(text, bom) => out.files.push(SourceFile {
                path: display,
                abs: real,
                text,
                bom,
                kind,
                crate_key: keys.target,
                package_key: keys.package,
            }),
            ReadOutcome::Skip(reason) => *out.skipped.entry(reason.to_string()).or_default() += 1,
            ReadOutcome::Error(e) => out.errors.push(e),
        }
    }
}

/// Takes the files no target of their crate declares out of it
/// ([`modules`]): each is a crate by itself, in no package, as a `.rs` file
/// outside every package is.
fn undeclared_files(files: &mut [SourceFile], resolver: &mut cargo::Resolver) {
    let mut crates: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, f) in files.iter().enumerate() {
        if f.kind == FileKind::Rust && f.crate_key != f.path {
            crates.entry(f.crate_key.as_str()).or_default().push(i);
        }
    }
    let mut orphans = Vec::new();
    for members in crates.values().filter(|m| m.len() > 1) {
        let roots: std::collections::HashSet<PathBuf> = members
            .iter()
            .flat_map(|&i| resolver.roots(&files[i].abs))
            .collect();
        let texts: Vec<(&Path, &str)> = members
            .iter()
            .map(|&i| (files[i].abs.as_path(), files[i].text.as_str()))
            .collect();
        if let Some(seen) = modules::reached(&texts, &roots) {
            orphans.extend(
                members
                    .iter()
                    .zip(seen)
                    .filter(|(_, s)| !s)
                    .map(|(&i, _)| i),
            );
        }
    }
    for i in orphans {
        let f = &mut files[i];
        f.crate_key = f.path.clone();
        f.package_key = f.path.clone();
    }
}

/// What the manifests tell of the files read: each crate's dependencies in the
/// tree and outside it, its binary's names, how many crates and workspaces there
/// are, and the errors of manifests inside the PATHs.
fn crate_facts(
    out: &mut Discovery,
    rules: &Rules,
    dirs: &[DirPath],
    config: &Config,
    resolver: &mut cargo::Resolver,
) {
    let (deps, outside) = cargo::crate_dependencies(
        &out.files,
        &rules.package_dirs,
        config.include_tests,
        resolver,
    );
    out.crate_deps = deps;
    out.outside_deps = outside;
    out.crate_uses = cargo::crate_uses(&out.files, &rules.package_dirs, resolver);
    // A resolver of its own: the manifests' errors are reported once, above.
    let mut names = cargo::Resolver::default();
    for f in out.files.iter().filter(|f| f.kind == FileKind::Rust) {
        if !out.target_names.contains_key(&f.crate_key) {
            let n = names.target_names(&f.abs);
            out.target_names.insert(f.crate_key.clone(), n);
        }
    }
    out.crates = out
        .files
        .iter()
        .filter(|f| f.kind == FileKind::Rust)
        .map(|f| f.crate_key.as_str())
        .collect::<BTreeSet<_>>()
        .len();
    let roots: BTreeSet<PathBuf> = rules
        .package_dirs
        .values()
        .filter_map(|dir| {
            let limit = outermost(dirs, dir)?;
            resolver.workspace_root(dir, &limit.real)
        })
        .collect();
    out.workspaces = roots.len();
    // A manifest Cargo would refuse, inside the PATHs (one outside is not the
    // user's to fix here): an input error with its position.
    for e in std::mem::take(&mut resolver.errors) {
        if outermost(dirs, &e.path).is_none() {
            continue;
        }
        out.errors.push(InputError {
            path: display_under(dirs, &e.path),
            line: e.position.map(|p| p.0),
            column: e.position.map(|p| p.1),
            message: e.message,
        });
    }
}

#[cfg(test)]
mod tests;
