//! `--diff-base REV`: report only findings whose primary location lies on lines
//! added or changed since the git revision REV, for pull-request checks on large
//! repositories.
//!
//! Changed lines are what `git diff REV` shows against the working tree
//! (commits since REV, staged and unstaged changes alike), plus every line of
//! untracked files that are not ignored. Every file is diffed as text, whatever
//! its attributes say, without external diff programs or text conversions, and
//! hunks are read by their line counts (see [`parse_diff`]). Pure deletions
//! change no remaining line, so they choose no finding; the review checklist
//! counts a removal inside a function as touching it. The `git` command is run locally; nothing is fetched
//! (a lazy fetch in a partial clone is turned off).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::config::Config;
use crate::diagnostic::InputError;
use crate::report::Report;

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
    /// Where lines were removed, per file: the pair of remaining lines the removal
    /// sat between (a removal inside a function touches it; docs/review.md scopes the
    /// checklist by it). Findings are never chosen by removals.
    pub removed: BTreeMap<String, Vec<(u32, u32)>>,
}

impl ChangedLines {
    /// Whether the change touches lines `first..=last` of `path` (a display path):
    /// a changed line among them, or lines removed between two of them.
    pub fn touches(&self, path: &str, first: u32, last: u32) -> bool {
        let resolver = Config {
            root: Some(self.toplevel.clone()),
            ..Config::default()
        };
        let Some(rel) = resolver.relative_to_root(Path::new(path)) else {
            return false;
        };
        let within = |l: u32| (first..=last).contains(&l);
        self.files
            .get(&rel)
            .is_some_and(|lines| lines.intersects(first, last))
            || self
                .removed
                .get(&rel)
                .is_some_and(|r| r.iter().any(|&(a, b)| within(a) && within(b)))
    }
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
        // Every file as text, whatever `.gitattributes` says (`*.rs -diff` or a
        // `binary` diff driver would print "Binary files differ" and no lines),
        // without the external diff programs and text conversions configured.
        "--text",
        "--no-ext-diff",
        "--no-textconv",
        "--ignore-submodules",
        "--find-renames",
        "--unified=0",
        "--inter-hunk-context=0",
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
    let (mut files, removed) = parse(&String::from_utf8_lossy(&out.stdout));

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
    Ok(ChangedLines {
        toplevel,
        files,
        removed,
    })
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

/// `@@ -a[,b] +c[,d] @@ ...`: (b, c, d), the old line count, the new start line
/// and the new line count (a count left out is 1).
fn hunk_header(line: &str) -> Option<(u32, u32, u32)> {
    let rest = line.strip_prefix("@@ -")?;
    let (ranges, _) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let count = |r: &str| -> Option<(u32, u32)> {
        match r.split_once(',') {
            Some((start, n)) => Some((start.parse().ok()?, n.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    let (_, old_count) = count(old)?;
    let (new_start, new_count) = count(new)?;
    Some((old_count, new_start, new_count))
}

/// Added or changed lines per file (paths relative to the top level) from
/// `git diff --unified=0` output.
///
/// A hunk is read by the line counts of its `@@ -a,b +c,d @@` header: its next
/// `b` removed and `d` added (or context) lines are file content whatever they
/// start with, so an added line whose text is `++ b/x.rs` (printed `+++ b/x.rs`)
/// is a line of the file, not the header of another. File headers (`diff --git`,
/// `+++ b/path`) are read only between hunks. The lines marked are those printed
/// with `+`, by their line number in the new file.
pub fn parse_diff(diff: &str) -> BTreeMap<String, Lines> {
    parse(diff).0
}

/// Where lines were removed, per file, as [`ChangedLines::removed`] holds them.
type Removals = BTreeMap<String, Vec<(u32, u32)>>;

/// [`parse_diff`], and where lines were removed.
fn parse(diff: &str) -> (BTreeMap<String, Lines>, Removals) {
    let mut files: BTreeMap<String, Lines> = BTreeMap::new();
    let mut removed = Removals::new();
    let mut current: Option<String> = None;
    // Lines of the current hunk still to read, and the new file's next line number.
    let (mut old_left, mut new_left, mut new_line) = (0u32, 0u32, 0u32);
    // A hunk that adds nothing (`+c,0`) names the line before the removal.
    let mut adds_none = false;
    for line in diff.split('\n') {
        if old_left > 0 || new_left > 0 {
            match line.as_bytes().first() {
                Some(b'+') if new_left > 0 => {
                    if let Some(Lines::Ranges(r)) = current.as_ref().and_then(|f| files.get_mut(f))
                    {
                        match r.last_mut() {
                            Some((_, end)) if *end + 1 == new_line => *end = new_line,
                            _ => r.push((new_line, new_line)),
                        }
                    }
                    new_line += 1;
                    new_left -= 1;
                    continue;
                }
                Some(b'-') if old_left > 0 => {
                    old_left -= 1;
                    let between = if adds_none {
                        (new_line, new_line + 1)
                    } else {
                        (new_line.saturating_sub(1), new_line)
                    };
                    if let Some(file) = &current {
                        let r = removed.entry(file.clone()).or_default();
                        if r.last() != Some(&between) {
                            r.push(between);
                        }
                    }
                    continue;
                }
                Some(b' ') if old_left > 0 && new_left > 0 => {
                    new_line += 1;
                    old_left -= 1;
                    new_left -= 1;
                    continue;
                }
                // `\ No newline at end of file`, after a line of either side.
                Some(b'\\') => continue,
                // Not a line of the hunk (the counts were wrong): read it as a header.
                _ => (old_left, new_left) = (0, 0),
            }
        }
        if let Some(target) = line.strip_prefix("+++ ") {
            let target = unquote(target.trim_end_matches(['\t', '\r']));
            current = target.strip_prefix("b/").map(str::to_string);
        } else if line.starts_with("diff --git ") {
            current = None;
        } else if let Some((old_count, new_start, new_count)) = hunk_header(line) {
            (old_left, new_left, new_line) = (old_count, new_count, new_start);
            adds_none = new_count == 0;
            if let Some(file) = &current {
                files
                    .entry(file.clone())
                    .or_insert_with(|| Lines::Ranges(Vec::new()));
            }
        }
    }
    (files, removed)
}

/// Removes from `report.findings` those whose primary span touches no changed
/// line; returns how many. Suppressed findings (kept for SARIF) are filtered the
/// same way, uncounted.
pub fn filter(report: &mut Report, changed: &ChangedLines) -> usize {
    let resolver = Config {
        root: Some(changed.toplevel.clone()),
        ..Config::default()
    };
    let on_changed_line = |f: &crate::diagnostic::Finding| {
        let Some(rel) = resolver.relative_to_root(Path::new(&f.path)) else {
            return false;
        };
        let last = f.span.end_line.max(f.span.line);
        changed
            .files
            .get(&rel)
            .is_some_and(|lines| lines.intersects(f.span.line, last))
    };
    let before = report.findings.len();
    report.findings.retain(|f| on_changed_line(f));
    report.suppressed.retain(|s| on_changed_line(&s.finding));
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
-gone
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
+b
+c
";
        let (files, removed) = parse(diff);
        assert_eq!(files["src/a.rs"], Lines::Ranges(vec![(4, 5), (12, 12)]));
        // A line replaced sits between the lines around its replacement; a pure
        // removal (`+21,0`) between line 21 and line 22.
        assert_eq!(removed["src/a.rs"], vec![(11, 12), (21, 22)]);
        let changed = ChangedLines {
            toplevel: PathBuf::from("/"),
            files: files.clone(),
            removed: removed.clone(),
        };
        // Only the removal falls in lines 21..=30; nothing in 13..=20.
        assert!(changed.touches("/src/a.rs", 21, 30));
        assert!(!changed.touches("/src/a.rs", 22, 30));
        assert!(!changed.touches("/src/a.rs", 13, 20));
        assert!(!files.contains_key("old.rs"));
        // The quoted target is `"b/..."`: unquoted first, then the prefix dropped.
        assert_eq!(files["sp\u{e9}cial\tname.rs"], Lines::Ranges(vec![(1, 3)]));
    }

    #[test]
    fn hunk_lines_are_content_whatever_they_start_with() {
        // Added lines whose text is `++ b/other.rs`, `-- a/x`, `diff --git ...` and
        // `@@ -1 +1 @@`, then a second hunk: all of it is `src/a.rs`.
        let diff = "\
diff --git a/src/a.rs b/src/a.rs
--- a/src/a.rs
+++ b/src/a.rs
@@ -1,0 +2,4 @@
+++ b/other.rs
+--- a/x
+diff --git a/y b/y
+@@ -1 +1 @@
@@ -9 +13,2 @@
-old
+new
+new
\\ No newline at end of file
";
        let files = parse_diff(diff);
        assert_eq!(files.len(), 1, "{files:?}");
        assert_eq!(files["src/a.rs"], Lines::Ranges(vec![(2, 5), (13, 14)]));
    }

    #[test]
    fn context_lines_are_not_changed_lines() {
        let diff = "\
diff --git a/a.rs b/a.rs
--- a/a.rs
+++ b/a.rs
@@ -1,3 +1,4 @@
 same
+new
 same
-old
+new
";
        assert_eq!(
            parse_diff(diff)["a.rs"],
            Lines::Ranges(vec![(2, 2), (4, 4)])
        );
    }

    #[test]
    fn hunk_headers() {
        assert_eq!(hunk_header("@@ -3,0 +4,2 @@ fn f() {"), Some((0, 4, 2)));
        assert_eq!(hunk_header("@@ -10 +12 @@"), Some((1, 12, 1)));
        assert_eq!(hunk_header("@@ -1 +x @@"), None);
        assert_eq!(hunk_header("+@@ -1 +1 @@"), None);
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
