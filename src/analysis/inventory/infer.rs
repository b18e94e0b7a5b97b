//! Guarantee inference (docs/review.md): what a consumer promises, from what the inventory
//! knows of it and the properties of the findings attached to it.

use super::*;

/// The delivery guarantee a consumer provides (docs/review.md, MODEL §6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Guarantee {
    /// Some path records progress before the effect commits (an ack before the
    /// commit, auto-ack), or acknowledges a message whose effect failed.
    AtMostOnce,
    /// Progress follows the effect: a crash in between redelivers the message.
    AtLeastOnce,
    /// At-least-once, and every effect is idempotent or gated by a dedup claim in its
    /// transaction (or offsets and output commit in one Kafka transaction).
    EffectivelyOnce,
    /// The analysis does not see enough (no ack, no effect) to say.
    Unknown,
}

impl Guarantee {
    pub fn as_str(self) -> &'static str {
        match self {
            Guarantee::AtMostOnce => "at-most-once",
            Guarantee::AtLeastOnce => "at-least-once",
            Guarantee::EffectivelyOnce => "effectively-once",
            Guarantee::Unknown => "unknown",
        }
    }
}

/// The guarantee with why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inference {
    pub guarantee: Guarantee,
    /// Sentences, each with the location it is about (emitters add the link).
    pub reasons: Vec<(String, Option<Loc>)>,
    /// The findings that decide it.
    pub deciding: Vec<FindingRef>,
}

/// A dedup record is written, its claim is tested, and it commits with the effect.
pub fn dedup_gates(c: &Consumer) -> bool {
    !c.dedup.is_empty()
        && !c.pairs.iter().any(|p| {
            matches!(
                p.relation,
                Relation::DedupAndEffect { .. } | Relation::UntestedClaimBeforeEffect { .. }
            )
        })
        && !c.findings.iter().any(|f| f.concern == Concern::DedupRecord)
}

/// Whether every effect is covered: idempotent by shape, or a DB write gated by a
/// dedup claim that commits with it.
fn uncovered(c: &Consumer) -> Vec<&Effect> {
    let gated = dedup_gates(c);
    let kafka_tx = c.offsets_in_tx.is_some();
    c.effects
        .iter()
        .filter(|e| {
            let covered = e.idempotent == Some(true)
                || (gated && e.class == EffectClass::Write && !e.autocommit)
                || (kafka_tx && e.class == EffectClass::Publish);
            !covered
        })
        .collect()
}

pub fn infer(c: &Consumer) -> Inference {
    let pick = |consequence: Consequence| -> Vec<FindingRef> {
        c.findings
            .iter()
            .filter(|f| f.consequence == consequence)
            .cloned()
            .collect()
    };
    let mut reasons = Vec::new();
    // At-most-once: progress before the effect, on some path, or not tied to it at all.
    let loses = pick(Consequence::Loss);
    if !c.ack_before_effect.is_empty() || !c.auto_ack.is_empty() || !loses.is_empty() {
        let mut seen = BTreeSet::new();
        for a in &c.ack_before_effect {
            if seen.insert((a.ack.loc.clone(), a.effect.loc.clone())) {
                reasons.push((
                    format!(
                        "{} ({}) runs before {} ({}) is applied",
                        crate::diagnostic::quoted(&a.ack.text),
                        a.ack.describe,
                        crate::diagnostic::quoted(&a.effect.text),
                        a.effect.describe
                    ),
                    Some(a.ack.loc.clone()),
                ));
            }
        }
        for a in &c.auto_ack {
            reasons.push((
                format!("{} acknowledges independently of processing", a.what),
                Some(a.loc.clone()),
            ));
        }
        for f in loses.iter().filter(|f| f.concern == Concern::AckOnFailure) {
            // At a serverless event source that ignores the records the handler lists
            // as failed: those records are acked with the batch.
            let ignored = c.event_sources.iter().find(|s| {
                s.ignores_listed() && *s.loc.path == *f.path && s.loc.span.line == f.line
            });
            reasons.push(match ignored {
                Some(s) => (
                    format!(
                        "the records the handler lists as failed are lost (at-most-once for them): \
                         {}'s event source does not enable `ReportBatchItemFailures`, so they \
                         are deleted with the batch",
                        crate::diagnostic::quoted(&s.function)
                    ),
                    Some(s.loc.clone()),
                ),
                None => (
                    format!(
                        "on failure, the message is acknowledged anyway ({}:{})",
                        f.path, f.line
                    ),
                    None,
                ),
            });
        }
        return Inference {
            guarantee: Guarantee::AtMostOnce,
            reasons,
            deciding: loses,
        };
    }
    if c.effects.is_empty() && c.dedup.is_empty() {
        return Inference {
            guarantee: Guarantee::Unknown,
            reasons: vec![(
                "no effect is reached from this consumer in the analyzed code".into(),
                None,
            )],
            deciding: Vec::new(),
        };
    }
    if c.acks.is_empty() && c.offsets_in_tx.is_none() {
        return Inference {
            guarantee: Guarantee::Unknown,
            reasons: vec![(
                "no ack or offset commit is reached: progress is recorded outside the analyzed code"
                    .into(),
                None,
            )],
            deciding: Vec::new(),
        };
    }
    reasons.push(("every path records progress after its effects".into(), None));
    let dup = pick(Consequence::Duplicate);
    // The relations the inventory holds are those a rule reports (`Facts` as the
    // driver hands them over): each is a defect of the path.
    let blocking_pairs = !c.pairs.is_empty();
    let open = uncovered(c);
    for e in &open {
        let why = match (e.class, e.idempotent) {
            (_, Some(false)) => "is not idempotent",
            (EffectClass::Publish, _) => "re-publishes on redelivery",
            _ => "has no idempotency the analysis can see",
        };
        reasons.push((
            format!(
                "{} ({}) {why}",
                crate::diagnostic::quoted(&e.site.text),
                e.site.describe
            ),
            Some(e.site.loc.clone()),
        ));
    }
    for x in &c.fresh_ids {
        reasons.push((
            format!(
                "{} mints a new id for each attempt",
                crate::diagnostic::quoted(&x.idgen_text)
            ),
            Some(x.idgen.clone()),
        ));
    }
    let effectively =
        dup.is_empty() && !blocking_pairs && open.is_empty() && c.fresh_ids.is_empty();
    if effectively {
        let why = if c.offsets_in_tx.is_some() {
            "offsets and output commit in one Kafka transaction"
        } else if c.dedup.is_empty() {
            "every effect is idempotent"
        } else {
            "every effect is idempotent or gated by a dedup claim in its transaction"
        };
        reasons.push((why.into(), None));
    }
    Inference {
        guarantee: if effectively {
            Guarantee::EffectivelyOnce
        } else {
            Guarantee::AtLeastOnce
        },
        reasons,
        deciding: dup,
    }
}

/// Producer settings by key, for the checklist: the last value set.
pub fn producer_settings(p: &Producer) -> BTreeMap<String, (Option<String>, Loc)> {
    let mut out = BTreeMap::new();
    for c in &p.clients {
        for prop in &c.props {
            out.insert(prop.key.clone(), (prop.value.clone(), prop.loc.clone()));
        }
    }
    out
}
