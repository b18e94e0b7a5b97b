//! Findings, labels, spans and input errors: the leaf result types shared by the
//! rules (which produce them) and the emitters (which print them). They import
//! nothing of the crate.

/// Text from the analyzed code (a table, topic or key name) as messages quote it:
/// in backticks (`` `orders` ``), the fence one backtick longer than the longest
/// run inside and padded with a space where the text starts or ends with one, so
/// that a Markdown reader (the checklist) sees one code span holding the whole
/// name, whatever backticks the name holds.
pub fn quoted(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    if text.starts_with('`') || text.ends_with('`') {
        format!("{fence} {text} {fence}")
    } else {
        format!("{fence}{text}{fence}")
    }
}

/// Severity of a finding, as configured (`off` removes the finding altogether).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
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

/// What a crash or a retry at a finding does to a message (MODEL.md): the property
/// of a rule that the guarantee inference reads (`analysis::inventory::infer`).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Consequence {
    /// The message (or what it causes) can be lost: progress is recorded before the
    /// effect commits, or whatever the effect did.
    Loss,
    /// The effect can be applied twice: a redelivery or retry is not recognized.
    Duplicate,
    /// A reader can see what never committed (an aborted transaction's records).
    Visibility,
    /// None for a message: hygiene of the tool's own comments.
    Nothing,
}

impl Consequence {
    pub fn as_str(self) -> &'static str {
        match self {
            Consequence::Loss => "loss",
            Consequence::Duplicate => "duplicate",
            Consequence::Visibility => "visibility",
            Consequence::Nothing => "none",
        }
    }

    /// What it means, for `msgaudit explain`.
    pub fn describe(self) -> &'static str {
        match self {
            Consequence::Loss => {
                "a crash or a failure at a finding can lose the message, or what it should cause"
            }
            Consequence::Duplicate => {
                "a redelivery or a retry at a finding can apply the effect twice"
            }
            Consequence::Visibility => "a reader can see records that never committed",
            Consequence::Nothing => "none for a message",
        }
    }
}

/// The boundary a rule's findings are about, as the review checklist (docs/review.md) groups
/// them into its questions: a rule property, so that the checklist and the guarantee
/// never spell rule codes.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Concern {
    /// Question 1: the event id is stable across retries and redeliveries.
    EventId,
    /// Question 3: the ack (or offset commit) follows the effect.
    AckOrder,
    /// Question 3: a failed message is not acknowledged.
    AckOnFailure,
    /// Question 4: the dedup record commits with the effect and gates it.
    DedupRecord,
    /// Question 4: offsets and output commit in one broker transaction, and only
    /// broker writes are in it.
    BrokerTransaction,
    /// Question 4 for producers: the DB write and the publish commit together.
    DualWrite,
    /// Question 5: effects are idempotent under redelivery.
    SideEffect,
    /// Question 6: dedup records outlive the replay window.
    Retention,
    /// What a producer's sends promise: the broker confirms each publish.
    SendPromise,
    /// A consumer reads only committed records.
    Isolation,
    /// Suppression comments.
    Hygiene,
}

impl Concern {
    /// The question of the review checklist (docs/review.md) the concern answers; `None`
    /// for a line of its own (sends, isolation) or none at all.
    pub fn question(self) -> Option<u8> {
        match self {
            Concern::EventId => Some(1),
            Concern::AckOrder | Concern::AckOnFailure => Some(3),
            Concern::DedupRecord | Concern::BrokerTransaction | Concern::DualWrite => Some(4),
            Concern::SideEffect => Some(5),
            Concern::Retention => Some(6),
            Concern::SendPromise | Concern::Isolation | Concern::Hygiene => None,
        }
    }
}

/// A region of one file. Lines are 1-based; columns are 1-based and count
/// characters. `end_column` is exclusive: it points one past the last character,
/// as rustc and SARIF do. Byte offsets are into the file's text with any BOM removed
/// (`Report::sources`); a format that prints byte offsets into the file on disk
/// adds the BOM back (`Report::bom`).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct Span {
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
    pub byte_start: usize,
    pub byte_end: usize,
}

/// A secondary location with its explanation ("transaction begins here").
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Label {
    pub path: String,
    pub span: Span,
    pub message: String,
}

/// One defect: a rule, where it is, and what a crash or retry there does.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Finding {
    #[serde(with = "static_str")]
    pub code: StaticStr,
    #[serde(with = "static_str")]
    pub name: StaticStr,
    pub severity: Severity,
    pub path: String,
    pub span: Span,
    pub message: String,
    pub boundary: String,
    pub window: String,
    pub labels: Vec<Label>,
    pub help: String,
    /// The edit that removes the defect, when the rule knows one (docs/fixes.md, "Fixes").
    pub fix: Option<Fix>,
}

/// Whether a fix can be applied without review (docs/getting-started.md): a safe fix changes a
/// setting to the value the rule asks for and nothing else; an unsafe one is right
/// in most programs but can change what the program does.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Applicability {
    Safe,
    Unsafe,
}

impl Applicability {
    pub fn as_str(self) -> &'static str {
        match self {
            Applicability::Safe => "safe",
            Applicability::Unsafe => "unsafe",
        }
    }
}

/// One replacement of analyzed text: the bytes of `span` in the file at display path
/// `path` become `content`.
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Edit {
    pub path: String,
    pub span: Span,
    pub content: String,
}

/// A finding's fix: a one-line title, its safety, and the edits (never overlapping
/// one another).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Fix {
    pub title: String,
    pub applicability: Applicability,
    pub edits: Vec<Edit>,
}

/// The fixes of `fixes` that can be applied together, in order: each taken whole
/// or not at all; one whose edits overlap an edit taken before (other than by the
/// very same edit, which two findings may share), overlap one another, or fall
/// outside the text of `sources`, is left. Returns the edits taken (display path ->
/// edits, each once) and the fixes taken.
pub fn select_fixes<'a>(
    fixes: impl IntoIterator<Item = &'a Fix>,
    sources: &std::collections::BTreeMap<String, String>,
) -> (
    std::collections::BTreeMap<&'a str, Vec<&'a Edit>>,
    Vec<&'a Fix>,
) {
    let mut taken: std::collections::BTreeMap<&str, Vec<&Edit>> = std::collections::BTreeMap::new();
    let mut out = Vec::new();
    for fix in fixes {
        let disjoint = |a: &Edit, b: &Edit| {
            a == b || a.span.byte_end <= b.span.byte_start || a.span.byte_start >= b.span.byte_end
        };
        let fits = fix.edits.iter().all(|e| {
            let Some(text) = sources.get(&e.path) else {
                return false;
            };
            let (s, t) = (e.span.byte_start, e.span.byte_end);
            s <= t
                && t <= text.len()
                && text.is_char_boundary(s)
                && text.is_char_boundary(t)
                && taken
                    .get(e.path.as_str())
                    .is_none_or(|done| done.iter().all(|d| disjoint(e, d)))
                && fix
                    .edits
                    .iter()
                    .filter(|o| o.path == e.path)
                    .all(|o| std::ptr::eq(o, e) || disjoint(e, o))
        });
        if !fits {
            continue;
        }
        for e in &fix.edits {
            let done = taken.entry(&e.path).or_default();
            if !done.contains(&e) {
                done.push(e);
            }
        }
        out.push(fix);
    }
    (taken, out)
}

/// A finding that an in-source `msgaudit:allow(…)` comment suppressed, with the
/// comment's reason (the text after the `)`, empty when there is none). Only SARIF
/// shows them (as results with `suppressions`); every other format counts them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suppressed {
    pub finding: Finding,
    pub justification: String,
}

/// Most labels a finding carries: the rest are counted on the last one shown (a
/// handler with thousands of effects after one ack would otherwise print them all,
/// for every ack).
pub const MAX_LABELS: usize = 16;

impl Finding {
    /// The finding with `fix` attached (none: as it was).
    pub fn with_fix(mut self, fix: Option<Fix>) -> Self {
        if fix.is_some() {
            self.fix = fix;
        }
        self
    }

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

    /// The deterministic output order of docs/getting-started.md: path, line, column, code.
    pub fn sort_key(&self) -> (&str, u32, u32, &str) {
        (&self.path, self.span.line, self.span.column, self.code)
    }
}

/// An input that could not be (fully) analyzed: unparsable Rust, invalid UTF-8, a bad config.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct InputError {
    pub path: String,
    /// 1-based; `None` when the error has no position (an unreadable file).
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub message: String,
}

/// The message a panic carried (`panic!("…")`), for an internal-error entry.
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// A rule's code or name. An alias so that serde's derive does not take the field
/// for one borrowed from the input (it is read back through [`intern`]).
pub type StaticStr = &'static str;

/// Serde for the `&'static str` codes and names of findings (the analysis cache):
/// written as strings, read back through [`intern`].
pub mod static_str {
    pub fn serialize<S: serde::Serializer>(s: &&'static str, ser: S) -> Result<S::Ok, S::Error> {
        ser.serialize_str(s)
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(de: D) -> Result<&'static str, D::Error> {
        let s = <String as serde::Deserialize>::deserialize(de)?;
        super::intern(s).ok_or_else(|| serde::de::Error::custom("too many distinct rule names"))
    }
}

/// Most distinct strings [`intern`] keeps: rule codes and names are a few dozen.
const MAX_INTERNED: usize = 1024;

/// The one `&'static str` for `s`: rule codes and names read back from the analysis
/// cache. Each distinct string is leaked once; `None` past [`MAX_INTERNED`] of them
/// (a foreign file cannot make the process grow without bound).
pub fn intern(s: String) -> Option<&'static str> {
    use std::collections::BTreeSet;
    use std::sync::{Mutex, OnceLock};
    static SET: OnceLock<Mutex<BTreeSet<&'static str>>> = OnceLock::new();
    let mut set = SET
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(&known) = set.get(s.as_str()) {
        return Some(known);
    }
    if set.len() >= MAX_INTERNED {
        return None;
    }
    let leaked: &'static str = Box::leak(s.into_boxed_str());
    set.insert(leaked);
    Some(leaked)
}

#[cfg(test)]
mod quoted_tests {
    use super::quoted;

    #[test]
    fn names_with_backticks_stay_one_code_span() {
        assert_eq!(quoted("orders"), "`orders`");
        assert_eq!(quoted("ta`b"), "``ta`b``");
        assert_eq!(quoted("a``b`"), "``` a``b` ```");
        assert_eq!(quoted(""), "``");
    }
}
