//! Applying the fixes findings carry (docs/fixes.md, "Fixes"): which fixes a run takes,
//! the edited text of each file (edits that overlap an earlier one wait for the
//! next round), the check that the result still parses, and the unified diff.

use std::collections::{BTreeMap, BTreeSet};

use crate::diagnostic::{Applicability, Finding};

/// The rounds `check --fix` runs at most: each applies the fixes that do not
/// overlap, then the tree is analyzed again.
pub const MAX_ROUNDS: usize = 4;

/// The new text of each file the fixes of `findings` change (display path -> text
/// without BOM), from `sources` (the analyzed text). A fix is taken whole or not at
/// all; a fix whose edits overlap one taken before (other than by the very same
/// edit, which two findings may share), or fall outside the text, waits.
/// Returns the texts and, for each fix taken, the files it edits.
pub fn apply(
    findings: &[Finding],
    sources: &BTreeMap<String, String>,
    unsafe_fixes: bool,
) -> (BTreeMap<String, String>, Vec<BTreeSet<String>>) {
    let fixes = findings
        .iter()
        .filter_map(|f| f.fix.as_ref())
        .filter(|fix| unsafe_fixes || fix.applicability == Applicability::Safe);
    let (taken, fixes) = crate::diagnostic::select_fixes(fixes, sources);
    let fixes = fixes
        .iter()
        .map(|fix| fix.edits.iter().map(|e| e.path.clone()).collect())
        .collect();
    let mut out = BTreeMap::new();
    for (path, mut edits) in taken {
        let text = &sources[path];
        edits.sort_by_key(|e| e.span.byte_start);
        let mut new = String::with_capacity(text.len());
        let mut at = 0;
        for e in edits {
            new.push_str(&text[at..e.span.byte_start]);
            new.push_str(&e.content);
            at = e.span.byte_end;
        }
        new.push_str(&text[at..]);
        if new != *text {
            out.insert(path.to_string(), new);
        }
    }
    (out, fixes)
}

/// Whether the fixed text of the file at `path` still parses (YAML loads, Rust
/// parses); other files are taken as they are.
pub fn still_parses(path: &str, text: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    if lower.ends_with(".rs") {
        syn::parse_file(text).is_ok()
    } else if lower.ends_with(".yaml") || lower.ends_with(".yml") {
        crate::frontend::yaml::tree::parse(text).is_ok()
    } else {
        true
    }
}

/// A unified diff of `old` to `new` for the file at `path`, as `git apply` reads
/// it (`a/` and `b/` prefixes; a path outside the directory is written as given).
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    let diff = similar::TextDiff::from_lines(old, new);
    let (a, b) = if path.starts_with('/') {
        (path.to_string(), path.to_string())
    } else {
        (format!("a/{path}"), format!("b/{path}"))
    };
    let mut out = format!("diff --git {a} {b}\n");
    out.push_str(
        &diff
            .unified_diff()
            .context_radius(3)
            .header(&a, &b)
            .to_string(),
    );
    out
}

/// What `check --fix` (or `--diff`) did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The fixes applied (or, with `--diff`, shown), over all rounds: one per
    /// finding fixed.
    pub fixed: usize,
    /// With `--diff`: the unified diff, original to final text, of every file the
    /// fixes change.
    pub diff: String,
    /// Files left as they were because the fixed text would not parse, or could not
    /// be written (display path, why).
    pub refused: Vec<(String, String)>,
}

/// Runs the analysis, applies the fixes its findings carry and analyzes the fixed
/// text again (in memory), in rounds, until no fix is left to take
/// ([`MAX_ROUNDS`] at most). Then, with `write`, each changed file is rewritten
/// once, atomically; without (`--diff`), the diff of the original to the final
/// text is kept. Returns the last report (what remains) and what was done.
pub fn fix_tree(
    paths: &[std::path::PathBuf],
    options: &crate::Options,
    unsafe_fixes: bool,
    write: bool,
) -> Result<(crate::report::Report, Outcome), crate::diagnostic::InputError> {
    let mut report = crate::check(paths, options)?;
    let first = report.clone();
    let mut outcome = Outcome::default();
    // Display path -> fixed text so far.
    let mut fixed: BTreeMap<String, String> = BTreeMap::new();
    let mut refused: BTreeSet<String> = BTreeSet::new();
    for _ in 0..MAX_ROUNDS {
        let (texts, taken) = apply(&report.findings, &report.sources, unsafe_fixes);
        let mut changed = false;
        for (path, text) in texts {
            if refused.contains(&path) {
                continue;
            }
            if !still_parses(&path, &text) {
                outcome
                    .refused
                    .push((path.clone(), "the fixed text would not parse".into()));
                refused.insert(path);
                continue;
            }
            fixed.insert(path, text);
            changed = true;
        }
        outcome.fixed += taken
            .iter()
            .filter(|files| files.iter().all(|p| !refused.contains(p)))
            .count();
        if !changed {
            break;
        }
        let mut overlay = (*options.overlay).clone();
        for (path, text) in &fixed {
            if let Some(disk) = first.disk.get(path) {
                overlay.insert(disk.clone(), text.clone());
            }
        }
        let again = crate::Options {
            overlay: std::sync::Arc::new(overlay),
            ..options.clone()
        };
        report = crate::check(paths, &again)?;
    }
    // What the overlay read is on disk as it was (BOM and paths from the first run).
    report.bom = first.bom.clone();
    report.raw_paths = first.raw_paths.clone();
    for (path, text) in &fixed {
        let Some(old) = first.sources.get(path) else {
            continue;
        };
        if !write {
            outcome.diff.push_str(&unified_diff(path, old, text));
            continue;
        }
        let bom = if first.bom.contains(path) {
            "\u{feff}"
        } else {
            ""
        };
        let disk = disk_path(path, first.raw_paths.get(path), first.disk.get(path));
        if let Err(e) =
            crate::support::files::write_atomic(&disk, &format!("{bom}{text}"), "fixed file")
        {
            outcome.refused.push((path.clone(), e));
        }
    }
    Ok((report, outcome))
}

/// The file a display path names: where it was read, else its bytes or the display
/// path itself (relative to the directory msgaudit runs in).
fn disk_path(
    display: &str,
    raw: Option<&Vec<u8>>,
    read: Option<&std::path::PathBuf>,
) -> std::path::PathBuf {
    if let Some(p) = read {
        return p.clone();
    }
    #[cfg(unix)]
    if let Some(bytes) = raw {
        use std::os::unix::ffi::OsStrExt;
        return std::path::PathBuf::from(std::ffi::OsStr::from_bytes(bytes));
    }
    let _ = raw;
    std::path::PathBuf::from(display)
}
