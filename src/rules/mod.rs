//! The rule registry: code, kebab-case name, default severity and documentation of
//! every rule, its properties (concern, consequence), and the checks. Rules read only the
//! delivery model (`crate::ir`), never syntax trees.

use crate::diagnostic::{Concern, Consequence, Severity};

mod fixes;
mod group;
pub mod ma001_ack_before_commit;
pub mod ma002_fresh_id_per_attempt;
pub mod ma003_split_dedup_transaction;
pub mod ma004_missing_read_committed;
pub mod ma005_unchecked_dedup_claim;
pub mod ma006_dual_write;
pub mod ma007_auto_ack;
pub mod ma008_unconfirmed_publish;
pub mod ma009_effect_in_broker_transaction;
pub mod ma010_offsets_outside_transaction;
pub mod ma011_non_idempotent_effect;
pub mod ma012_dedup_retention_window;
pub mod ma013_discarded_transaction;
pub mod ma014_ack_on_failure;
pub mod ma015_batch_failures_not_reported;
mod pairs;

/// Static description of one rule. `doc` is the rule's full explanation, written as
/// the doc comment on the rule's declaration: `msgaudit explain` prints it.
#[derive(Debug)]
pub struct RuleMeta {
    pub code: &'static str,
    pub name: &'static str,
    pub default_severity: Severity,
    /// One line: what the rule finds.
    pub summary: &'static str,
    /// The boundary the defect breaks.
    pub boundary: &'static str,
    /// Which boundary, as the checklist groups findings into its questions.
    pub concern: Concern,
    /// What a crash or retry at a finding does: what the guarantee inference reads.
    pub consequence: Consequence,
    /// Markdown explanation (What it does / Why is this bad? / Example / Use instead).
    pub doc: &'static str,
    /// The fix its findings carry when the value is written in place (docs/fixes.md,
    /// "Fixes"), one line; empty when the rule has none.
    pub fix: &'static str,
    /// The unsafe fix its findings carry where it applies (docs/getting-started.md: only with
    /// `--unsafe-fixes`), one line; empty when the rule has none.
    pub unsafe_fix: &'static str,
}

/// The project's home page (`homepage` in Cargo.toml).
pub const HOMEPAGE: &str = env!("CARGO_PKG_HOMEPAGE");

/// Where the rules' pages are published: `docs/rules/` of the main branch of the
/// repository (`repository` in Cargo.toml), which renders Markdown. The one base of
/// every rule link (SARIF `helpUri`, the language server's code link, the checklist).
pub const RULE_DOCS_BASE: &str = concat!(env!("CARGO_PKG_REPOSITORY"), "/blob/main/docs/rules/");

impl RuleMeta {
    /// The file name of the rule's page in `docs/rules/`: `MA001-ack-before-commit.md`.
    pub fn page_file(&self) -> String {
        format!("{}-{}.md", self.code, self.name)
    }

    /// The rule's documentation page, a stable URL:
    /// `<repository>/blob/main/docs/rules/MA001-ack-before-commit.md`.
    pub fn doc_url(&self) -> String {
        format!("{RULE_DOCS_BASE}{}", self.page_file())
    }

    /// A finding of this rule at `at` (its primary location), with the rule's code,
    /// name, default severity and boundary: the one way a rule makes a finding.
    pub fn finding(
        &self,
        at: &crate::ir::Loc,
        message: String,
        window: String,
        labels: Vec<crate::diagnostic::Label>,
        help: String,
    ) -> crate::diagnostic::Finding {
        crate::diagnostic::Finding {
            code: self.code,
            name: self.name,
            severity: self.default_severity,
            path: at.path.to_string(),
            span: at.span,
            message,
            boundary: self.boundary.to_string(),
            window,
            labels,
            help,
            fix: None,
        }
    }
}

/// Declares a rule's metadata from a doc comment, clippy style: the doc comment is
/// the explanation that `msgaudit explain` prints.
macro_rules! declare_rule {
    (
        $(#[doc = $doc:literal])*
        pub static $ident:ident = {
            code: $code:literal,
            name: $name:literal,
            severity: $sev:ident,
            concern: $concern:ident,
            consequence: $consequence:ident,
            summary: $summary:literal,
            boundary: $boundary:literal
            $(, fix: $fix:literal)?
            $(, unsafe_fix: $unsafe_fix:literal)? $(,)?
        };
    ) => {
        pub static $ident: $crate::rules::RuleMeta = $crate::rules::RuleMeta {
            code: $code,
            name: $name,
            default_severity: $crate::diagnostic::Severity::$sev,
            summary: $summary,
            boundary: $boundary,
            concern: $crate::diagnostic::Concern::$concern,
            consequence: $crate::diagnostic::Consequence::$consequence,
            doc: concat!($($doc, "\n"),*),
            fix: concat!("" $(, $fix)?),
            unsafe_fix: concat!("" $(, $unsafe_fix)?),
        };
    };
}
pub(crate) use declare_rule;

/// The `Check` of a rule over the flow analysis's relations: `check(facts)` makes its
/// findings and `reports(pair, facts)` says which relations it reports, both
/// functions of the rule's own file.
macro_rules! relation_rule {
    ($meta:ident) => {
        #[doc = concat!(stringify!($meta), " as the dispatcher runs it ([`super::Rule`]).")]
        pub struct Check;

        impl super::Rule for Check {
            fn meta(&self) -> &'static super::RuleMeta {
                &$meta
            }

            fn check_crate(&self, cx: &super::CrateInput) -> Vec<$crate::diagnostic::Finding> {
                check(cx.facts)
            }

            fn reports(
                &self,
                p: &$crate::analysis::flow::PairFact,
                facts: &$crate::analysis::flow::Facts,
            ) -> bool {
                reports(p, facts)
            }
        }
    };
}
pub(crate) use relation_rule;

/// The unused-suppression diagnostic of docs/getting-started.md.
pub static UNUSED_SUPPRESSION: RuleMeta = RuleMeta {
    code: "MA900",
    name: "unused-suppression",
    default_severity: Severity::Warning,
    summary: "A `msgaudit:allow(...)` comment that suppresses no finding.",
    boundary: "none: hygiene of suppressions",
    concern: Concern::Hygiene,
    consequence: Consequence::Nothing,
    fix: "",
    unsafe_fix: "",
    doc: "## What it does\n\nReports a `// msgaudit:allow(CODE)` (or `# msgaudit:allow(CODE)`) comment \
          that matches no finding on its own line or the line after it, and a comment that starts \
          like a suppression but is not one (`// msgaudit allow(MA001)`, `// msgaudit:alow(MA001)`, \
          an unclosed `(`), with the right spelling.\n\n## Why is this bad?\n\n\
          Stale suppressions accumulate and hide the next real defect written on that line; a \
          malformed one suppresses nothing while a reader takes the finding as accepted.\n\n\
          A suppression of a rule that `--select`, `--ignore` or the config turned off is not stale.\n\n\
          ## Example\n\n\
          ```rust\n\
          // msgaudit:allow(MA001) replayed from the outbox on restart\n\
          tx.commit().await?; // the ack that was here moved below: nothing to suppress\n\
          consumer.commit_message(&msg, CommitMode::Async)?;\n\
          ```\n\n\
          Use instead: remove the comment, so that the next finding on that line shows.\n",
};

/// Every rule, in code order.
pub static ALL: [&RuleMeta; 16] = [
    &ma001_ack_before_commit::MA001,
    &ma002_fresh_id_per_attempt::MA002,
    &ma003_split_dedup_transaction::MA003,
    &ma004_missing_read_committed::MA004,
    &ma005_unchecked_dedup_claim::MA005,
    &ma006_dual_write::MA006,
    &ma007_auto_ack::MA007,
    &ma008_unconfirmed_publish::MA008,
    &ma009_effect_in_broker_transaction::MA009,
    &ma010_offsets_outside_transaction::MA010,
    &ma011_non_idempotent_effect::MA011,
    &ma012_dedup_retention_window::MA012,
    &ma013_discarded_transaction::MA013,
    &ma014_ack_on_failure::MA014,
    &ma015_batch_failures_not_reported::MA015,
    &UNUSED_SUPPRESSION,
];

/// Where two rules report the same primary location, the first of each pair wins and
/// the second is dropped: one defect, one finding.
pub const PRECEDENCE: &[(&str, &str)] = &[
    // Consume-transform-produce with a transactional producer: the consumer's commit
    // belongs in the Kafka transaction (MA010), whatever it runs before.
    ("MA010", "MA001"),
    // An ack on a failure path before the failure record is written: the order is
    // the defect (MA001); the record, once written, keeps the message.
    ("MA001", "MA014"),
];

/// What a rule checks one crate with: its model and the flow analysis's facts.
pub struct CrateInput<'a> {
    pub krate: &'a crate::ir::Crate,
    pub facts: &'a crate::analysis::flow::Facts,
}

/// What a rule checks the whole tree with, once every crate and YAML file is read:
/// per crate its retention facts, every Kafka client (Rust ones keyed by their
/// package, YAML ones by their directory), replay windows, pipeline stages, the
/// clients configured in YAML, and serverless event source mappings and batch handlers.
pub struct TreeInput<'a> {
    pub crates: &'a [(String, crate::ir::RetentionFacts)],
    pub clients: &'a [(String, crate::ir::KafkaClient)],
    pub windows: &'a [crate::ir::ReplayWindow],
    pub stages: &'a [crate::ir::PipelineStage],
    pub config_clients: &'a [crate::ir::ConfigClient],
    /// Event source mappings of serverless deploy files.
    pub mappings: &'a [crate::ir::EventSourceMapping],
    /// Serverless batch handlers of every crate.
    pub handlers: &'a [crate::ir::BatchHandler],
}

/// A rule: its metadata, and its checks. A rule checks one crate at a time, the
/// whole tree (rules that link files: topics, pipeline descriptions, YAML clients),
/// or both; and says which of the flow analysis's relations it reports (what the
/// review inventory reads as a path's defects). The dispatcher ([`check_crate`],
/// [`check_tree`]) runs every rule of [`RULES`]; nothing else names a rule.
pub trait Rule: Sync {
    fn meta(&self) -> &'static RuleMeta;

    fn check_crate(&self, _cx: &CrateInput) -> Vec<crate::diagnostic::Finding> {
        Vec::new()
    }

    fn check_tree(&self, _tree: &TreeInput) -> Vec<crate::diagnostic::Finding> {
        Vec::new()
    }

    /// Whether this rule reports the relation `p` (a defect of its path).
    fn reports(
        &self,
        _p: &crate::analysis::flow::PairFact,
        _facts: &crate::analysis::flow::Facts,
    ) -> bool {
        false
    }
}

/// Every rule's checks, in code order.
pub static RULES: [&dyn Rule; 15] = [
    &ma001_ack_before_commit::Check,
    &ma002_fresh_id_per_attempt::Check,
    &ma003_split_dedup_transaction::Check,
    &ma004_missing_read_committed::Check,
    &ma005_unchecked_dedup_claim::Check,
    &ma006_dual_write::Check,
    &ma007_auto_ack::Check,
    &ma008_unconfirmed_publish::Check,
    &ma009_effect_in_broker_transaction::Check,
    &ma010_offsets_outside_transaction::Check,
    &ma011_non_idempotent_effect::Check,
    &ma012_dedup_retention_window::Check,
    &ma013_discarded_transaction::Check,
    &ma014_ack_on_failure::Check,
    &ma015_batch_failures_not_reported::Check,
];

/// Drops the findings that a finding of a winning rule at the same place replaces.
/// The winners' places are gathered once, so this stays linear in the findings.
fn apply_precedence(out: &mut Vec<crate::diagnostic::Finding>) {
    let winners: std::collections::HashSet<(&str, &str, crate::diagnostic::Span)> = out
        .iter()
        .filter(|g| PRECEDENCE.iter().any(|(winner, _)| g.code == *winner))
        .map(|g| (g.code, g.path.as_str(), g.span))
        .collect();
    let at = |f: &crate::diagnostic::Finding, code: &str| {
        winners.contains(&(code, f.path.as_str(), f.span))
    };
    let keep: Vec<bool> = out
        .iter()
        .map(|f| {
            !PRECEDENCE
                .iter()
                .any(|(winner, loser)| f.code == *loser && at(f, winner))
        })
        .collect();
    let mut keep = keep.into_iter();
    out.retain(|_| keep.next().unwrap_or(true));
}

/// Keeps the relations some rule reports: what the review inventory and the
/// guarantee read as defects of a path, the rules' decision and not the analysis's.
/// The decisions the path analysis asks of the rules while it walks a path
/// ([`crate::analysis::flow::Policy`]); each lives in its rule's file.
pub fn path_policy() -> crate::analysis::flow::Policy {
    crate::analysis::flow::Policy {
        progress_write: ma014_ack_on_failure::progress_write,
    }
}

pub fn keep_reported(facts: &mut crate::analysis::flow::Facts) {
    let keep: Vec<bool> = facts
        .pairs
        .iter()
        .map(|p| RULES.iter().any(|r| r.reports(p, facts)))
        .collect();
    let mut keep = keep.into_iter();
    facts.pairs.retain(|_| keep.next().unwrap_or(false));
}

/// Runs every rule that `running` allows over one crate's model and facts, then the
/// precedence between rules (one defect, one finding; a rule that did not run
/// replaces nothing).
pub fn check_crate(
    cx: &CrateInput,
    running: &dyn Fn(&str) -> bool,
) -> Vec<crate::diagnostic::Finding> {
    dispatch(running, |r| r.check_crate(cx))
}

/// Runs the check of the whole tree of every rule that `running` allows, then the
/// precedence between rules.
pub fn check_tree(
    tree: &TreeInput,
    running: &dyn Fn(&str) -> bool,
) -> Vec<crate::diagnostic::Finding> {
    dispatch(running, |r| r.check_tree(tree))
}

/// `check` of every rule that `running` allows, in code order, then the precedence
/// and the label bound.
fn dispatch(
    running: &dyn Fn(&str) -> bool,
    check: impl Fn(&dyn Rule) -> Vec<crate::diagnostic::Finding>,
) -> Vec<crate::diagnostic::Finding> {
    let mut out: Vec<crate::diagnostic::Finding> = RULES
        .iter()
        .filter(|r| running(r.meta().code))
        .flat_map(|r| check(*r))
        .collect();
    finish(&mut out);
    out
}

fn finish(out: &mut Vec<crate::diagnostic::Finding>) {
    apply_precedence(out);
    for f in out.iter_mut() {
        f.bound_labels();
    }
}

/// Finds a rule by code (`MA001`, case-insensitive) or kebab-case name (`ack-before-commit`).
pub fn lookup(code_or_name: &str) -> Option<&'static RuleMeta> {
    let key = code_or_name.trim();
    ALL.iter()
        .copied()
        .find(|r| r.code.eq_ignore_ascii_case(key) || r.name == key)
}

/// The rules a `--select`/`--ignore` item names, as ruff reads its selectors: a code
/// or a name, `ALL`, or a prefix of codes (`MA00`: MA001 to MA009; `MA`: every rule).
/// Empty when it names none.
pub fn matching(item: &str) -> Vec<&'static RuleMeta> {
    let key = item.trim();
    if let Some(r) = lookup(key) {
        return vec![r];
    }
    if key.eq_ignore_ascii_case("ALL") {
        return ALL.to_vec();
    }
    let upper = key.to_ascii_uppercase();
    if upper.len() < 2 || !upper.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Vec::new();
    }
    ALL.iter()
        .copied()
        .filter(|r| r.code.starts_with(&upper))
        .collect()
}

/// The rule code or name closest to an unknown one (`MA099` -> `MA009`,
/// `dual-writes` -> `dual-write`), when one is close.
pub fn suggestion(unknown: &str) -> Option<&'static str> {
    let key = unknown.trim();
    ALL.iter()
        .flat_map(|r| [r.code, r.name])
        .map(|c| {
            (
                strsim::levenshtein(&key.to_ascii_lowercase(), &c.to_ascii_lowercase()),
                c,
            )
        })
        .filter(|(d, c)| *d <= 2.max(c.len() / 4) && *d < c.len())
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// `unknown rule `x``, with the closest rule when one is close.
pub fn unknown_rule_message(unknown: &str) -> String {
    match suggestion(unknown) {
        Some(s) => format!(
            "unknown rule {} (did you mean `{s}`?)",
            crate::diagnostic::quoted(unknown)
        ),
        None => format!("unknown rule {}", crate::diagnostic::quoted(unknown)),
    }
}

/// A rule's properties by its code, for the inventory; an unknown code (none is
/// made) has no consequence for a message.
pub fn properties(code: &str) -> (Concern, Consequence) {
    lookup(code).map_or((Concern::Hygiene, Consequence::Nothing), |r| {
        (r.concern, r.consequence)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_by_code_and_name() {
        assert_eq!(lookup("ma001").unwrap().name, "ack-before-commit");
        assert_eq!(lookup("discarded-transaction").unwrap().code, "MA013");
        assert!(lookup("MA999").is_none());
    }

    #[test]
    fn the_inventory_keeps_only_the_relations_a_rule_reports() {
        use crate::analysis::flow::{Durability, Facts, Relation};
        let dedup = |same_transaction| Relation::DedupAndEffect {
            dedup: Durability::Transaction,
            effect: Durability::Transaction,
            same_transaction,
            effect_guarded: false,
            effect_to_outbox: false,
            idle_transaction_open: false,
        };
        let mut facts = Facts {
            pairs: vec![
                pairs::fact(dedup(true), (3, 4)),
                pairs::fact(dedup(false), (5, 6)),
                pairs::fact(Relation::InBrokerTransaction, (7, 2)),
            ],
            ..Facts::default()
        };
        keep_reported(&mut facts);
        let kept: Vec<u32> = facts
            .pairs
            .iter()
            .map(|p| p.primary.loc.span.line)
            .collect();
        assert_eq!(kept, [5, 7]);
    }

    #[test]
    fn every_rule_has_one_check_in_code_order() {
        let codes: Vec<&str> = RULES.iter().map(|r| r.meta().code).collect();
        let declared: Vec<&str> = ALL
            .iter()
            .map(|r| r.code)
            .filter(|c| *c != UNUSED_SUPPRESSION.code)
            .collect();
        assert_eq!(codes, declared);
    }

    #[test]
    fn codes_and_names_are_unique_and_ordered() {
        for w in ALL.windows(2) {
            assert!(w[0].code < w[1].code);
        }
        let mut names: Vec<_> = ALL.iter().map(|r| r.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
    }
}

#[cfg(test)]
mod doc_tests {
    use super::*;

    /// Every rule explains itself the same way (`msgaudit explain`).
    #[test]
    fn rules_have_full_docs() {
        for r in ALL.iter().filter(|r| r.code != "MA900") {
            for heading in [
                "## What it does",
                "## Why is this bad?",
                "## Example",
                "Use instead",
            ] {
                assert!(r.doc.contains(heading), "{} lacks {heading}", r.code);
            }
            assert!(
                r.doc.contains("Boundary broken"),
                "{} does not name its boundary",
                r.code
            );
        }
    }
}
