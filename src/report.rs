//! What one run produced, for the emitters: the findings and errors (`diagnostic`),
//! the counts, the inventory of consumers and producers, the sources. It sits above
//! everything that fills it (the analysis, the source reader) and below the emitters.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use crate::diagnostic::{Finding, InputError, Suppressed};

/// Counts reported in the JSON `summary`, so that silence is never mistaken for a clean result.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub files: usize,
    pub analyzed: usize,
    /// reason (`no_relevant_tokens`, `templated_yaml`, `test_code`, ...) -> count
    pub skipped: BTreeMap<String, usize>,
    pub findings: usize,
    pub suppressed: usize,
    pub errors: usize,
    /// Findings hidden by `--baseline`/`--write-baseline`; `None` without them.
    pub baselined: Option<usize>,
    /// Findings hidden by `--diff-base` (not on a changed line); `None` without it.
    pub outside_diff: Option<usize>,
    /// Path dependencies outside the analyzed tree (not read), by the name the code
    /// imports them by: calls into them are calls into another crate (docs/what-is-analyzed.md).
    pub outside_deps: Vec<String>,
    /// Crates (Cargo targets, docs/what-is-analyzed.md) and Cargo workspaces in the analyzed tree.
    pub crates: usize,
    pub workspaces: usize,
}

/// Where a `check` run spent its time (`--statistics`). Never part of any output
/// format: timings differ from run to run, output must not.
#[derive(Clone, Debug, Default)]
pub struct Timings {
    /// Loading the config and API packs, `--baseline` and `--diff-base` inputs.
    pub setup: Duration,
    /// Walking the PATH arguments and reading every candidate file.
    pub discovery: Duration,
    /// Parsing, lowering, facts, rules, then suppressions and adoption filters.
    pub analysis: Duration,
    /// Threads in the pool that read and analyzed the files (`--jobs`).
    pub threads: usize,
    /// Processor time per phase of the analysis, summed over threads.
    pub cpu: Vec<(&'static str, Duration)>,
    /// Function bodies of parsed files that the prefilter left unparsed.
    pub unparsed_bodies: usize,
    /// The most crates analyzed at one time (admitted within the memory budget).
    pub peak_crates: usize,
    /// Crates whose result was read from the per-crate cache.
    pub crates_cached: usize,
    /// The analysis cache: `Some(true)` when the output was read from it (the
    /// processor times are then zero), `Some(false)` when analyzed and stored, `None`
    /// when the run went without it.
    pub cache_hit: Option<bool>,
}

/// Everything one `msgaudit check` run produced, sorted and ready for an emitter.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub findings: Vec<Finding>,
    /// Findings suppressed in the source (`msgaudit: allow(…)`), sorted like
    /// `findings`: SARIF keeps them as suppressed results; the other formats only
    /// count them (`summary.suppressed`).
    pub suppressed: Vec<Suppressed>,
    pub errors: Vec<InputError>,
    pub summary: Summary,
    /// Time per phase, for `--statistics`; emitters never read it.
    pub timings: Timings,
    /// Display path -> file text (BOM removed), for emitters that show source snippets.
    pub sources: BTreeMap<String, String>,
    /// Display path -> the bytes of the path, for display paths that escape bytes
    /// (`\x09`): links percent-encode the bytes ([`crate::source::raw_display`]).
    pub raw_paths: BTreeMap<String, Vec<u8>>,
    /// Display paths of the files in `sources` that start with a UTF-8 BOM on disk.
    pub bom: BTreeSet<String>,
    /// Display path -> the file on disk, for `check --fix` (docs/fixes.md, "Fixes").
    pub disk: BTreeMap<String, std::path::PathBuf>,
    /// Consumers and producers found, for the review checklist (`--format checklist`).
    pub inventory: crate::analysis::inventory::Inventory,
    /// Display path -> the Cargo package and target of each file a finding, a label
    /// or an input error names (none for a file outside every package), for
    /// `rustc-json`: the package rust-analyzer keys diagnostics by, wherever its
    /// manifest is.
    pub cargo: BTreeMap<String, crate::source::cargo::CargoTarget>,
    /// Display path -> the name of the crate (Cargo target, docs/what-is-analyzed.md) a Rust file
    /// named by a finding, a label or the inventory is in, when its package's
    /// manifest is inside the analyzed tree.
    pub crates: BTreeMap<String, String>,
}

impl Report {
    /// The name of the crate (Cargo target) the file at display path `path` is in.
    pub fn crate_of(&self, path: &str) -> Option<&str> {
        self.crates.get(path).map(String::as_str)
    }

    /// Sort findings and errors into the order docs/getting-started.md prescribes and fill the counts.
    pub fn finish(&mut self) {
        self.findings
            .sort_by(|a, b| a.sort_key().cmp(&b.sort_key()).then(a.span.cmp(&b.span)));
        self.findings
            .dedup_by(|a, b| a.code == b.code && a.path == b.path && a.span == b.span);
        self.suppressed.sort_by(|a, b| {
            let (a, b) = (&a.finding, &b.finding);
            a.sort_key().cmp(&b.sort_key()).then(a.span.cmp(&b.span))
        });
        self.suppressed.dedup_by(|a, b| {
            let (a, b) = (&a.finding, &b.finding);
            a.code == b.code && a.path == b.path && a.span == b.span
        });
        self.errors.sort_by(|a, b| {
            (&a.path, a.line, a.column, &a.message).cmp(&(&b.path, b.line, b.column, &b.message))
        });
        self.errors.dedup();
        self.summary.findings = self.findings.len();
        self.summary.errors = self.errors.len();
    }
}
