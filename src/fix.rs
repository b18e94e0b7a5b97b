//! Applying the fixes findings carry (SPEC §4, "Fixes"): which fixes a run takes,
//! the edited text of each file (edits that overlap an earlier one wait for the
//! next round), the check that the result still parses, and the unified diff.

use std::collections::BTreeMap;

use crate::diagnostic::{Applicability, Edit, Finding};

/// The rounds `check --fix` runs at most: each applies the fixes that do not
/// overlap, then the tree is analyzed again.
pub const MAX_ROUNDS: usize = 4;

/// The new text of each file the fixes of `findings` change (display path -> text
/// without BOM), from `sources` (the analyzed text). A fix is taken whole or not at
/// all; a fix whose edits overlap one taken before, or fall outside the text, waits.
/// Returns the texts and how many fixes were taken.
pub fn apply(
    findings: &[Finding],
    sources: &BTreeMap<String, String>,
    unsafe_fixes: bool,
) -> (BTreeMap<String, String>, usize) {
    let mut taken: BTreeMap<&str, Vec<&Edit>> = BTreeMap::new();
    let mut count = 0;
    for fix in findings.iter().filter_map(|f| f.fix.as_ref()) {
        if fix.applicability == Applicability::Unsafe && !unsafe_fixes {
            continue;
        }
        let fits =
            fix.edits.iter().all(|e| {
                let Some(text) = sources.get(&e.path) else {
                    return false;
                };
                let (s, t) = (e.span.byte_start, e.span.byte_end);
                s <= t
                    && text.is_char_boundary(s)
                    && text.is_char_boundary(t)
                    && t <= text.len()
                    && taken.get(e.path.as_str()).is_none_or(|done| {
                        done.iter()
                            .all(|d| t <= d.span.byte_start || s >= d.span.byte_end)
                    })
                    && fix.edits.iter().filter(|o| o.path == e.path).all(|o| {
                        std::ptr::eq(o, e) || t <= o.span.byte_start || s >= o.span.byte_end
                    })
            });
        if !fits {
            continue;
        }
        for e in &fix.edits {
            taken.entry(&e.path).or_default().push(e);
        }
        count += 1;
    }
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
    (out, count)
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
    /// Findings of the first analysis that the last one no longer has.
    pub fixed: usize,
    /// With `--diff`: the unified diff of every file the fixes change.
    pub diff: String,
    /// Files left as they were because the fixed text would not parse, or could not
    /// be written (display path, why).
    pub refused: Vec<(String, String)>,
}

/// Runs the analysis, applies the fixes its findings carry and analyzes again, in
/// rounds, until no fix is left to take ([`MAX_ROUNDS`] at most). With `write`
/// false (`--diff`) one round is computed and nothing is written. Returns the last
/// report (what remains) and what was done.
pub fn fix_tree(
    paths: &[std::path::PathBuf],
    options: &crate::Options,
    unsafe_fixes: bool,
    write: bool,
) -> Result<(crate::Report, Outcome), crate::InputError> {
    let mut report = crate::check(paths, options)?;
    let before = report.findings.len();
    let mut outcome = Outcome::default();
    for _ in 0..MAX_ROUNDS {
        let (texts, _) = apply(&report.findings, &report.sources, unsafe_fixes);
        let mut changed = false;
        for (path, text) in &texts {
            if !still_parses(path, text) {
                outcome
                    .refused
                    .push((path.clone(), "the fixed text would not parse".into()));
                continue;
            }
            if !write {
                outcome
                    .diff
                    .push_str(&unified_diff(path, &report.sources[path], text));
                continue;
            }
            let bom = if report.bom.contains(path) {
                "\u{feff}"
            } else {
                ""
            };
            let disk = disk_path(path, report.raw_paths.get(path));
            match crate::support::files::write_atomic(&disk, &format!("{bom}{text}"), "fixed file")
            {
                Ok(()) => changed = true,
                Err(e) => outcome.refused.push((path.clone(), e)),
            }
        }
        if !write {
            // What the diff fixes does not remain.
            let shown = |f: &Finding| {
                f.fix.as_ref().is_some_and(|x| {
                    (unsafe_fixes || x.applicability == Applicability::Safe)
                        && x.edits.iter().all(|e| {
                            texts.contains_key(&e.path)
                                && !outcome.refused.iter().any(|(p, _)| *p == e.path)
                        })
                })
            };
            report.findings.retain(|f| !shown(f));
            report.finish();
            outcome.fixed = before - report.findings.len();
            return Ok((report, outcome));
        }
        if !changed {
            break;
        }
        report = crate::check(paths, options)?;
    }
    outcome.fixed = before.saturating_sub(report.findings.len());
    Ok((report, outcome))
}

/// The file a display path names (relative to the directory msgaudit runs in).
fn disk_path(display: &str, raw: Option<&Vec<u8>>) -> std::path::PathBuf {
    #[cfg(unix)]
    if let Some(bytes) = raw {
        use std::os::unix::ffi::OsStrExt;
        return std::path::PathBuf::from(std::ffi::OsStr::from_bytes(bytes));
    }
    let _ = raw;
    std::path::PathBuf::from(display)
}
