//! Which walked paths the ignore files exclude, and which directories are Cargo
//! target directories.
//!
//! msgaudit reads the ignore files itself, like any other input: regular files only,
//! never through a symlink (git does not follow a symlinked `.gitignore` either),
//! each at most [`IGNORE_FILE_MAX_BYTES`] and all of them together at most
//! [`IGNORE_TOTAL_MAX_BYTES`] in one run (compiled, patterns take several hundred
//! times their size in memory). A file refused is an input error naming it, and its
//! patterns are not applied.
//!
//! Which ignore files count follows git: the `.gitignore` and `.ignore` files from
//! the repository root (the nearest directory holding `.git`) down, the repository's
//! `info/exclude` and the user's global excludes (`core.excludesFile`, by default
//! `$XDG_CONFIG_HOME/git/ignore`), never a file above the repository root. Outside a
//! repository, only the ignore files inside the outermost PATH count. A match in a
//! deeper directory wins over one above it; `.ignore` wins over `.gitignore`, which
//! wins over `info/exclude`, then the global excludes; within a file the last
//! matching line wins, and `!pattern` re-includes.
//!
//! Every path here is canonical, so that a directory reached from two PATH
//! arguments has the same rules, whatever the order of the arguments.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;

use super::{read_regular, Refusal};
use crate::support::files::describe_size;

/// The largest ignore file read: 256 KiB (the largest real ones are a few KiB).
pub const IGNORE_FILE_MAX_BYTES: u64 = 256 * 1024;
/// The most ignore-file bytes read in one run, all files together: 1 MiB.
pub const IGNORE_TOTAL_MAX_BYTES: u64 = 1024 * 1024;
/// `.git` files (worktrees, submodules), `commondir`, `.cargo/config.toml`.
const SMALL_FILE_MAX_BYTES: u64 = 64 * 1024;

/// The ignore files of one directory, with those of the directories above it.
struct Dir {
    /// The directory above, up to the repository root (outside a repository, up to
    /// the outermost PATH).
    parent: Option<Arc<Dir>>,
    dot_ignore: Option<Gitignore>,
    gitignore: Option<Gitignore>,
    /// The repository holding the directory.
    repo: Option<Arc<Repo>>,
}

/// The ignore rules of a repository as a whole, relative to its root.
#[derive(Default)]
struct Repo {
    exclude: Option<Gitignore>,
    global: Option<Gitignore>,
}

/// An ignore file that was refused.
pub(super) struct RuleError {
    /// Canonical path of the file.
    pub path: PathBuf,
    pub message: String,
}

/// The state of one discovery: the rules of every directory met, built when first
/// needed and shared by every PATH.
pub(super) struct Rules {
    /// The directory PATHs not inside another one (canonical).
    tops: HashSet<PathBuf>,
    dirs: HashMap<PathBuf, Arc<Dir>>,
    has_git: HashMap<PathBuf, bool>,
    cargo_toml: HashMap<PathBuf, bool>,
    /// `CARGO_TARGET_DIR`, `CARGO_BUILD_TARGET_DIR`, `build.target-dir` (canonical).
    target_dirs: HashSet<PathBuf>,
    /// The global excludes file and its text, once read (`Some(None)`: there is none).
    global: Option<Option<(PathBuf, String)>>,
    /// Ignore-file bytes that may still be read.
    budget: u64,
    pub errors: Vec<RuleError>,
    /// Cargo target directories not walked (canonical).
    pub skipped_targets: BTreeSet<PathBuf>,
    /// Package key (display path) -> the package's directory (canonical).
    pub package_dirs: BTreeMap<String, PathBuf>,
}

impl Rules {
    /// `dir_paths`: the canonical directories given as PATH arguments.
    pub fn new(dir_paths: &[PathBuf]) -> Rules {
        let tops = dir_paths
            .iter()
            .filter(|d| !dir_paths.iter().any(|o| o != *d && d.starts_with(o)))
            .cloned()
            .collect();
        let target_dirs = ["CARGO_TARGET_DIR", "CARGO_BUILD_TARGET_DIR"]
            .iter()
            .filter_map(std::env::var_os)
            .filter(|v| !v.is_empty())
            .filter_map(|v| fs::canonicalize(v).ok())
            .collect();
        Rules {
            tops,
            dirs: HashMap::new(),
            has_git: HashMap::new(),
            cargo_toml: HashMap::new(),
            target_dirs,
            global: None,
            budget: IGNORE_TOTAL_MAX_BYTES,
            errors: Vec::new(),
            skipped_targets: BTreeSet::new(),
            package_dirs: BTreeMap::new(),
        }
    }

    /// Whether `dir` holds a `Cargo.toml` (a package or workspace root).
    pub fn has_cargo_toml(&mut self, dir: &Path) -> bool {
        if let Some(&b) = self.cargo_toml.get(dir) {
            return b;
        }
        let b = dir.join("Cargo.toml").is_file();
        self.cargo_toml.insert(dir.to_path_buf(), b);
        b
    }

    /// Whether the directory `path` is where Cargo puts build output: `target`
    /// beside a `Cargo.toml`, or the target directory the environment or a
    /// `.cargo/config.toml` names. Counted when it is.
    pub fn is_cargo_target(&mut self, path: &Path) -> bool {
        let Some(parent) = path.parent() else {
            return false;
        };
        // The parent's rules read its `.cargo/config.toml`.
        self.dir(parent);
        let beside_manifest =
            path.file_name().is_some_and(|n| n == "target") && self.has_cargo_toml(parent);
        if beside_manifest || self.target_dirs.contains(path) {
            self.skipped_targets.insert(path.to_path_buf());
            return true;
        }
        false
    }

    /// Whether the ignore files exclude `path` (a file or, with `is_dir`, a directory).
    pub fn is_ignored(&mut self, path: &Path, is_dir: bool) -> bool {
        let Some(parent) = path.parent() else {
            return false;
        };
        let dir = self.dir(parent);
        let decide = |m: &Gitignore| match m.matched(path, is_dir) {
            Match::None => None,
            Match::Ignore(_) => Some(true),
            Match::Whitelist(_) => Some(false),
        };
        let pickers: [fn(&Dir) -> Option<&Gitignore>; 2] =
            [|d| d.dot_ignore.as_ref(), |d| d.gitignore.as_ref()];
        for pick in pickers {
            let mut cur = Some(dir.as_ref());
            while let Some(d) = cur {
                if let Some(decision) = pick(d).and_then(decide) {
                    return decision;
                }
                cur = d.parent.as_deref();
            }
        }
        if let Some(repo) = &dir.repo {
            for m in [&repo.exclude, &repo.global].into_iter().flatten() {
                if let Some(decision) = decide(m) {
                    return decision;
                }
            }
        }
        false
    }

    fn has_git(&mut self, dir: &Path) -> bool {
        if let Some(&b) = self.has_git.get(dir) {
            return b;
        }
        let b = crate::support::files::is_repository_root(dir);
        self.has_git.insert(dir.to_path_buf(), b);
        b
    }

    /// Whether a directory above `dir` holds `.git`.
    fn repo_above(&mut self, dir: &Path) -> bool {
        dir.ancestors().skip(1).any(|a| self.has_git(a))
    }

    /// The rules of directory `dir` (canonical), read when first asked for.
    fn dir(&mut self, dir: &Path) -> Arc<Dir> {
        if let Some(d) = self.dirs.get(dir) {
            return Arc::clone(d);
        }
        let git = self.has_git(dir);
        let top = git || (self.tops.contains(dir) && !self.repo_above(dir));
        let parent = match dir.parent() {
            Some(p) if !top => Some(self.dir(p)),
            _ => None,
        };
        let repo = if git {
            Some(Arc::new(self.repo(dir)))
        } else {
            parent.as_ref().and_then(|p| p.repo.clone())
        };
        let dot_ignore = self.ignore_file(dir, ".ignore");
        let gitignore = self.ignore_file(dir, ".gitignore");
        self.cargo_config(dir);
        let d = Arc::new(Dir {
            parent,
            dot_ignore,
            gitignore,
            repo,
        });
        self.dirs.insert(dir.to_path_buf(), Arc::clone(&d));
        d
    }

    fn error(&mut self, path: &Path, message: String) {
        self.errors.push(RuleError {
            path: path.to_path_buf(),
            message,
        });
    }

    /// Reads an ignore file: `follow` says whether a symlink is followed (the
    /// repository's `info/exclude` and the user's global excludes), which an
    /// ignore file inside the tree never is. `None` when it is missing or refused.
    fn read_ignore_file(&mut self, path: &Path, follow: bool) -> Option<String> {
        let why = match read_regular(path, IGNORE_FILE_MAX_BYTES, follow) {
            Ok(bytes) => return Some(String::from_utf8_lossy(&bytes).into_owned()),
            Err(Refusal::Missing) => return None,
            Err(Refusal::Symlink) => {
                "it is a symbolic link (git does not follow one either)".to_string()
            }
            Err(Refusal::NotRegular) => "not a regular file".to_string(),
            Err(Refusal::Io(e)) => format!("cannot read it: {}", super::io_message(&e)),
            Err(Refusal::TooLarge(size)) => {
                let size = size.map_or_else(|| "more bytes".to_string(), |n| format!("{n} bytes"));
                let limit = describe_size(IGNORE_FILE_MAX_BYTES);
                self.error(
                    path,
                    format!(
                        "ignore file too large: {size}, over the limit of {limit}; its \
                         patterns are not applied"
                    ),
                );
                return None;
            }
        };
        self.error(
            path,
            format!("ignore file not read: {why}; its patterns are not applied"),
        );
        None
    }

    /// Compiles ignore-file `text` with patterns relative to `root`. Counts the text
    /// against the run's budget.
    fn compile(&mut self, path: &Path, root: &Path, text: &str) -> Option<Gitignore> {
        let size = text.len() as u64;
        if size > self.budget {
            self.error(
                path,
                format!(
                    "ignore file not read: the ignore files of this run reach the limit of {} \
                     in total; its patterns are not applied",
                    describe_size(IGNORE_TOTAL_MAX_BYTES)
                ),
            );
            return None;
        }
        self.budget -= size;
        let mut builder = GitignoreBuilder::new(root);
        for (i, line) in text.lines().enumerate() {
            let line = if i == 0 {
                line.trim_start_matches('\u{feff}')
            } else {
                line
            };
            // git reads `{` and `}` literally, globset as alternatives: an unclosed
            // `{` is read git's way. A line that still does not compile (an invalid
            // range, `[z-a]`) never matches in git either: it is left out, as it was
            // when the `ignore` crate read the files.
            if builder.add_line(None, line).is_err() && (line.contains('{') || line.contains('}')) {
                let literal = line.replace('{', "[{]").replace('}', "[}]");
                let _ = builder.add_line(None, &literal);
            }
        }
        match builder.build() {
            Ok(m) if m.is_empty() => None,
            Ok(m) => Some(m),
            Err(e) => {
                self.error(
                    path,
                    format!(
                        "cannot compile the ignore file ({e}: too many or too complex \
                         patterns); its patterns are not applied"
                    ),
                );
                None
            }
        }
    }

    /// `dir/name` (`.gitignore`, `.ignore`), compiled.
    fn ignore_file(&mut self, dir: &Path, name: &str) -> Option<Gitignore> {
        let path = dir.join(name);
        let text = self.read_ignore_file(&path, false)?;
        self.compile(&path, dir, &text)
    }

    /// The repository rooted at `root`: its `info/exclude` and the global excludes.
    fn repo(&mut self, root: &Path) -> Repo {
        let mut repo = Repo::default();
        if let Some(git_dir) = git_common_dir(root) {
            let exclude = git_dir.join("info").join("exclude");
            if let Some(text) = self.read_ignore_file(&exclude, true) {
                repo.exclude = self.compile(&exclude, root, &text);
            }
        }
        if self.global.is_none() {
            let global = ignore::gitignore::gitconfig_excludes_path()
                .and_then(|p| self.read_ignore_file(&p, true).map(|text| (p, text)));
            self.global = Some(global);
        }
        if let Some(Some((path, text))) = self.global.clone() {
            repo.global = self.compile(&path, root, &text);
        }
        repo
    }

    /// Reads `build.target-dir` from `dir/.cargo/config.toml` (or `config`, which
    /// Cargo prefers when both exist): relative to `dir`.
    fn cargo_config(&mut self, dir: &Path) {
        let cargo = dir.join(".cargo");
        if !cargo.symlink_metadata().is_ok_and(|m| m.is_dir()) {
            return;
        }
        for name in ["config", "config.toml"] {
            let Ok(bytes) = read_regular(&cargo.join(name), SMALL_FILE_MAX_BYTES, false) else {
                continue;
            };
            let target = std::str::from_utf8(&bytes)
                .ok()
                .and_then(|text| text.parse::<toml::Table>().ok())
                .and_then(|t| {
                    let dir = t.get("build")?.get("target-dir")?.as_str()?;
                    Some(dir.to_string())
                });
            if let Some(real) = target.and_then(|t| fs::canonicalize(dir.join(t)).ok()) {
                self.target_dirs.insert(real);
            }
            return;
        }
    }
}

/// The directory holding the repository's `info/exclude`: `.git` itself, or for a
/// worktree or a submodule (`.git` is a file, `gitdir: …`) the git directory it
/// names, or that one's `commondir`.
fn git_common_dir(root: &Path) -> Option<PathBuf> {
    let git = root.join(".git");
    let meta = fs::metadata(&git).ok()?;
    if meta.is_dir() {
        return Some(git);
    }
    let bytes = read_regular(&git, SMALL_FILE_MAX_BYTES, false).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let git_dir = root.join(text.trim().strip_prefix("gitdir:")?.trim());
    match read_regular(&git_dir.join("commondir"), SMALL_FILE_MAX_BYTES, false) {
        Ok(bytes) => {
            let common = String::from_utf8(bytes).ok()?;
            Some(git_dir.join(common.trim()))
        }
        Err(_) => Some(git_dir),
    }
}
