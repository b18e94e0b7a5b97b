//! Findings, labels, spans and input errors: the one result model shared by the
//! analysis (which produces them) and the emitters (which print them).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// Severity of a finding, as configured (`off` removes the finding altogether).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// A region of one file. Lines are 1-based; columns are 1-based and count
/// characters. `end_column` is exclusive: it points one past the last character,
/// as rustc and SARIF do. Byte offsets are into the file's text with any BOM removed
/// (`Report::sources`); a format that prints byte offsets into the file on disk
/// adds the BOM back (`Report::bom`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Span {
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
    pub byte_start: usize,
    pub byte_end: usize,
}

/// A secondary location with its explanation ("transaction begins here").
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Label {
    pub path: String,
    pub span: Span,
    pub message: String,
}

/// One defect: a rule, where it is, and what a crash or retry there does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub code: &'static str,
    pub name: &'static str,
    pub severity: Severity,
    pub path: String,
    pub span: Span,
    pub message: String,
    pub boundary: String,
    pub window: String,
    pub labels: Vec<Label>,
    pub help: String,
}

/// Most labels a finding carries: the rest are counted on the last one shown (a
/// handler with thousands of effects after one ack would otherwise print them all,
/// for every ack).
pub const MAX_LABELS: usize = 16;

impl Finding {
    /// Keeps the first [`MAX_LABELS`] labels; the last one kept says how many more
    /// there were.
    pub fn bound_labels(&mut self) {
        if self.labels.len() <= MAX_LABELS {
            return;
        }
        // "At least": the analysis itself records a bounded number of effects per ack
        // (`flow::MAX_EFFECTS_PER_ACK`).
        let omitted = self.labels.len() - MAX_LABELS;
        self.labels.truncate(MAX_LABELS);
        let last = &mut self.labels[MAX_LABELS - 1];
        last.message = format!(
            "{} (and at least {omitted} more like it, not shown)",
            last.message
        );
    }

    /// The deterministic output order of SPEC §5: path, line, column, code.
    pub fn sort_key(&self) -> (&str, u32, u32, &str) {
        (&self.path, self.span.line, self.span.column, self.code)
    }
}

/// An input that could not be (fully) analyzed: unparsable Rust, invalid UTF-8, a bad config.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct InputError {
    pub path: String,
    /// 1-based; `None` when the error has no position (an unreadable file).
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub message: String,
}

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
    /// imports them by: calls into them are calls into another crate (SPEC §3).
    pub outside_deps: Vec<String>,
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
}

/// Everything one `msgaudit check` run produced, sorted and ready for an emitter.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub findings: Vec<Finding>,
    pub errors: Vec<InputError>,
    pub summary: Summary,
    /// Time per phase, for `--statistics`; emitters never read it.
    pub timings: Timings,
    /// Display path -> file text (BOM removed), for emitters that show source snippets.
    pub sources: BTreeMap<String, String>,
    /// Display paths of the files in `sources` that start with a UTF-8 BOM on disk.
    pub bom: BTreeSet<String>,
    /// Consumers and producers found, for the review checklist (`--format checklist`).
    pub inventory: crate::analysis::inventory::Inventory,
    /// Display path -> the Cargo package and target of the file, for `rustc-json`
    /// (filled only when [`crate::Options::cargo_targets`] asks for it).
    pub cargo: BTreeMap<String, crate::source::cargo::CargoTarget>,
}

impl Report {
    /// Sort findings and errors into the order SPEC §5 prescribes and fill the counts.
    pub fn finish(&mut self) {
        self.findings
            .sort_by(|a, b| a.sort_key().cmp(&b.sort_key()).then(a.span.cmp(&b.span)));
        self.findings
            .dedup_by(|a, b| a.code == b.code && a.path == b.path && a.span == b.span);
        self.errors.sort_by(|a, b| {
            (&a.path, a.line, a.column, &a.message).cmp(&(&b.path, b.line, b.column, &b.message))
        });
        self.errors.dedup();
        self.summary.findings = self.findings.len();
        self.summary.errors = self.errors.len();
    }
}

/// The message a panic carried (`panic!("…")`), for an internal-error entry.
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}
