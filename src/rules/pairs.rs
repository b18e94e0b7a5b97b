//! Shared shape of the rules that report one event in relation to another
//! (a publish and the commit it is split from, a claim and the effect it fails to
//! guard): group the facts by primary location, one finding each, with a label for
//! every related event and for the calls that reach them.

use crate::analysis::flow::{EvRef, Facts, PairFact};
use crate::diagnostic::{Finding, Label};
use crate::ir::Loc;
use crate::rules::group::{by_primary, Labels};
use crate::rules::RuleMeta;

/// The words of one finding, built from the facts about its primary event.
pub struct Wording {
    pub message: String,
    pub window: String,
    pub help: String,
    /// Label of the `other` event of each fact.
    pub other_label: String,
}

/// Analyzed code in a message, through [`crate::diagnostic::quoted`] (a name holding
/// backticks gets a longer fence).
pub fn code(text: &str) -> String {
    crate::diagnostic::quoted(text)
}

/// `tx.commit()` for a call written without arguments in the text, as written otherwise.
pub fn call_text(e: &EvRef) -> String {
    if e.text.ends_with(')') || e.text.ends_with('!') || e.text.contains(' ') {
        e.text.clone()
    } else if e.describe == "transaction"
        || e.text.ends_with("commit")
        || e.text.ends_with("rollback")
    {
        format!("{}()", e.text)
    } else {
        e.text.clone()
    }
}

pub fn label(loc: &Loc, message: impl Into<String>) -> Label {
    Label {
        path: loc.path.to_string(),
        span: loc.span,
        message: message.into(),
    }
}

/// One finding per primary location of the facts of `kind`.
pub fn report(
    meta: &'static RuleMeta,
    facts: &Facts,
    reports: fn(&PairFact, &Facts) -> bool,
    word: impl Fn(&PairFact) -> Wording,
) -> Vec<Finding> {
    let depth = |f: &PairFact| f.primary.via.len() + f.other.via.len();
    by_primary(
        facts.pairs.iter().filter(|p| reports(p, facts)),
        |f| &f.primary.loc,
        depth,
    )
    .into_iter()
    .map(|group| {
        // The fact seen from the closest entry explains best.
        let first = group[0];
        let w = word(first);
        let mut labels = Labels::default();
        for f in &group {
            labels.push(&f.other.loc, word(f).other_label);
            for (ev, text) in &f.related {
                labels.push(&ev.loc, text.clone());
            }
            if depth(f) == depth(first) {
                for site in &f.primary.via {
                    labels.push(
                        site,
                        format!("reached through this call in {}", code(&f.entry)),
                    );
                }
                for site in &f.other.via {
                    labels.push(site, "the related step happens inside this call");
                }
            }
        }
        meta.finding(
            &first.primary.loc,
            w.message,
            w.window,
            labels.sorted(),
            w.help,
        )
    })
    .collect()
}

/// A pair fact between two events at `lines`, for the rules' query tests.
#[cfg(test)]
pub fn fact(relation: crate::analysis::flow::Relation, lines: (u32, u32)) -> PairFact {
    let ev = |line: u32| {
        EvRef::new(crate::analysis::flow::EvData {
            loc: Loc {
                path: "src/h.rs".into(),
                span: crate::diagnostic::Span {
                    line,
                    column: 5,
                    end_line: line,
                    end_column: 9,
                    ..Default::default()
                },
            },
            text: "sqlx::query".into(),
            describe: "INSERT".into(),
            phrase: "runs the INSERT".into(),
            via: Vec::new(),
            dispatch: Vec::new(),
            capped: false,
        })
    };
    PairFact {
        relation,
        primary: ev(lines.0),
        other: ev(lines.1),
        related: Vec::new(),
        entry: "handle".into(),
    }
}

#[cfg(test)]
mod quoting_tests {
    /// Messages quote analyzed names through one helper, which fences a name
    /// holding backticks with a longer run.
    #[test]
    fn code_fences_backticks() {
        assert_eq!(super::code("orders"), "`orders`");
        assert_eq!(super::code("a`b"), "``a`b``");
    }
}
