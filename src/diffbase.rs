//! `--diff-base REV`: report only findings whose primary location lies on lines
//! added or changed since the git revision REV, for pull-request checks on large
//! repositories.
//!
//! Changed lines are what `git diff REV` shows against the working tree
//! (commits since REV, staged and unstaged changes alike), plus every line of
//! untracked files that are not ignored. Pure deletions change no remaining
//! line. The `git` command is run locally; nothing is fetched (a lazy fetch in a
//! partial clone is turned off).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::config::Config;
use crate::diagnostic::{InputError, Report};

/// The lines of one file that count as changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lines {
    /// A new or untracked file: every line.
    All,
    /// Inclusive 1-based line ranges, in diff order.
    Ranges(Vec<(u32, u32)>),
}

impl Lines {
    fn intersects(&self, first: u32, last: u32) -> bool {
        match self {
            Lines::All => true,
            Lines::Ranges(r) => r.iter().any(|&(a, b)| a <= last && first <= b),
        }
    }
}

/// The changed lines of a working tree since a revision.
#[derive(Clone, Debug)]
pub struct ChangedLines {
    /// The repository's top-level directory; `files` keys are relative to it.
    pub toplevel: PathBuf,
    pub files: BTreeMap<String, Lines>,
}

fn usage(message: String) -> InputError {
    InputError {
        path: String::new(),
        line: None,
        column: None,
        message,
    }
}

/// `git` with settings that make its output parseable, keep it offline, and keep the
/// analyzed repository's own configuration from running programs (an fsmonitor
/// hook runs when `git diff` refreshes the index).
fn git(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(dir)
        .args(["-c", "core.quotePath=false", "-c", "core.fsmonitor=false"])
        .env("GIT_NO_LAZY_FETCH", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env_remove("GIT_EXTERNAL_DIFF");
    cmd
}

fn run(mut cmd: Command, what: &str) -> Result<std::process::Output, InputError> {
    cmd.output()
        .map_err(|e| usage(format!("--diff-base: cannot run `git` ({what}): {e}")))
}

/// The top-level directory of the git work tree holding `dir`, or `None`
/// (not a repository, or no `git`).
pub fn git_toplevel(dir: &Path) -> Option<PathBuf> {
    let mut cmd = git(dir);
    cmd.args(["rev-parse", "--show-toplevel"]);
    let out = cmd.output().ok()?;
    if !out.status.success() {
        return None;
    }
    let top = String::from_utf8(out.stdout).ok()?;
    let top = PathBuf::from(top.trim_end_matches(['\n', '\r']));
    Some(top.canonicalize().unwrap_or(top))
}

/// The directory to ask git from, for the first PATH argument.
fn start_dir(first_path: &Path) -> PathBuf {
    if first_path.is_dir() {
        return first_path.to_path_buf();
    }
    match first_path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Collects the lines changed since `rev` in the repository holding `first_path`.
/// Not a repository, an unknown revision or a failing `git` are usage errors.
pub fn collect(first_path: &Path, rev: &str) -> Result<ChangedLines, InputError> {
    if rev.is_empty() || rev.starts_with('-') {
        return Err(usage(format!("--diff-base: `{rev}` is not a git revision")));
    }
    let dir = start_dir(first_path);
    let toplevel = git_toplevel(&dir).ok_or_else(|| {
        usage(format!(
            "--diff-base needs a git repository, and `{}` is not inside one",
            dir.display()
        ))
    })?;

    let mut cmd = git(&toplevel);
    cmd.args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
        .arg(format!("{rev}^{{commit}}"));
    let out = run(cmd, "rev-parse")?;
    if !out.status.success() {
        return Err(usage(format!(
            "--diff-base: unknown revision `{rev}` (not a commit in {})",
            toplevel.display()
        )));
    }
    let commit = String::from_utf8_lossy(&out.stdout).trim().to_string();

    let mut cmd = git(&toplevel);
    cmd.args([
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--ignore-submodules",
        "--find-renames",
        "--unified=0",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        &commit,
        "--",
    ]);
    let out = run(cmd, "diff")?;
    if !out.status.success() {
        return Err(usage(format!(
            "--diff-base: `git diff {rev}` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let mut files = parse_diff(&String::from_utf8_lossy(&out.stdout));

    let mut cmd = git(&toplevel);
    cmd.args(["ls-files", "-z", "--others", "--exclude-standard"]);
    let out = run(cmd, "ls-files")?;
    if !out.status.success() {
        return Err(usage(format!(
            "--diff-base: `git ls-files` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    for path in String::from_utf8_lossy(&out.stdout).split('\0') {
        if !path.is_empty() {
            files.insert(path.to_string(), Lines::All);
        }
    }
    Ok(ChangedLines { toplevel, files })
}

/// Undoes git's C-style quoting of a path (`"a\tb"`); other paths are returned as is.
fn unquote(s: &str) -> String {
    let Some(inner) = s.strip_prefix('"').and_then(|s| s.strip_suffix('"')) else {
        return s.to_string();
    };
    let mut bytes = Vec::new();
    let mut it = inner.bytes().peekable();
    while let Some(b) = it.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match it.next() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(b'r') => bytes.push(b'\r'),
            Some(b'a') => bytes.push(7),
            Some(b'b') => bytes.push(8),
            Some(b'f') => bytes.push(12),
            Some(b'v') => bytes.push(11),
            Some(d @ b'0'..=b'7') => {
                let mut v = u32::from(d - b'0');
                for _ in 0..2 {
                    match it.peek() {
                        Some(&d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            it.next();
                        }
                        _ => break,
                    }
                }
                bytes.push(v as u8);
            }
            Some(other) => bytes.push(other),
            None => bytes.push(b'\\'),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Added or changed lines per file (paths relative to the top level) from
/// `git diff --unified=0` output.
pub fn parse_diff(diff: &str) -> BTreeMap<String, Lines> {
    let mut files: BTreeMap<String, Lines> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in diff.lines() {
        if let Some(target) = line.strip_prefix("+++ ") {
            let target = unquote(target.trim_end_matches('\t'));
            current = target.strip_prefix("b/").map(str::to_string);
            continue;
        }
        if line.starts_with("diff --git ") {
            current = None;
            continue;
        }
        let Some(rest) = line.strip_prefix("@@ ") else {
            continue;
        };
        let Some(file) = &current else { continue };
        // @@ -a[,b] +c[,d] @@
        let Some(new) = rest.split_whitespace().find(|t| t.starts_with('+')) else {
            continue;
        };
        let new = &new[1..];
        let (start, count) = match new.split_once(',') {
            Some((s, c)) => (s.parse::<u32>().ok(), c.parse::<u32>().ok()),
            None => (new.parse::<u32>().ok(), Some(1)),
        };
        let (Some(start), Some(count)) = (start, count) else {
            continue;
        };
        let entry = files
            .entry(file.clone())
            .or_insert_with(|| Lines::Ranges(Vec::new()));
        if count > 0 {
            if let Lines::Ranges(r) = entry {
                r.push((start, start + count - 1));
            }
        }
    }
    files
}

/// Removes from `report.findings` those whose primary span touches no changed
/// line; returns how many.
pub fn filter(report: &mut Report, changed: &ChangedLines) -> usize {
    let resolver = Config {
        root: Some(changed.toplevel.clone()),
        ..Config::default()
    };
    let before = report.findings.len();
    report.findings.retain(|f| {
        let Some(rel) = resolver.relative_to_root(Path::new(&f.path)) else {
            return false;
        };
        let last = f.span.end_line.max(f.span.line);
        changed
            .files
            .get(&rel)
            .is_some_and(|lines| lines.intersects(f.span.line, last))
    });
    before - report.findings.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks_become_line_ranges() {
        let diff = "\
diff --git a/src/a.rs b/src/a.rs
index 1..2 100644
--- a/src/a.rs
+++ b/src/a.rs
@@ -3,0 +4,2 @@ fn f() {
+x
+y
@@ -10 +12 @@
-a
+b
@@ -20,3 +21,0 @@
-gone
diff --git a/old.rs b/old.rs
deleted file mode 100644
--- a/old.rs
+++ /dev/null
@@ -1,2 +0,0 @@
-a
-b
diff --git a/new.rs b/\"sp\\303\\251cial\\tname.rs\"
--- /dev/null
+++ \"b/sp\\303\\251cial\\tname.rs\"
@@ -0,0 +1,3 @@
+a
";
        let files = parse_diff(diff);
        assert_eq!(files["src/a.rs"], Lines::Ranges(vec![(4, 5), (12, 12)]));
        assert!(!files.contains_key("old.rs"));
        // The quoted target is `"b/..."`: unquoted first, then the prefix dropped.
        assert_eq!(files["sp\u{e9}cial\tname.rs"], Lines::Ranges(vec![(1, 3)]));
    }

    #[test]
    fn ranges_intersect_spans() {
        let l = Lines::Ranges(vec![(4, 5)]);
        assert!(l.intersects(5, 7));
        assert!(l.intersects(1, 4));
        assert!(!l.intersects(6, 9));
        assert!(Lines::All.intersects(100, 100));
    }
}
