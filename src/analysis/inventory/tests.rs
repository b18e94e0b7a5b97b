use super::*;
use crate::analysis::flow::{Durability, EvRef};
use crate::diagnostic::Span;

fn loc(line: u32) -> Loc {
    Loc {
        path: "src/c.rs".into(),
        span: Span {
            line,
            column: 5,
            end_line: line,
            end_column: 9,
            ..Span::default()
        },
    }
}

fn s(line: u32, text: &str, describe: &str) -> Site {
    Site {
        loc: loc(line),
        text: text.into(),
        describe: describe.into(),
    }
}

fn evref(line: u32, text: &str) -> EvRef {
    EvRef::new(crate::analysis::flow::EvData {
        loc: loc(line),
        text: text.into(),
        describe: text.into(),
        phrase: text.into(),
        via: Vec::new(),
        dispatch: Vec::new(),
        capped: false,
    })
}

fn write(line: u32, idempotent: Option<bool>, autocommit: bool) -> Effect {
    Effect {
        site: s(line, "sqlx::query", "INSERT into `orders`"),
        class: EffectClass::Write,
        tables: vec!["orders".into()],
        idempotent,
        autocommit,
    }
}

fn base() -> Consumer {
    Consumer {
        name: "handle".into(),
        receives: vec![s(1, "consumer.recv", "message received")],
        acks: vec![s(9, "consumer.commit_message", "offset committed")],
        effects: vec![write(5, Some(false), false)],
        ..Consumer::default()
    }
}

fn finding(code: &'static str) -> FindingRef {
    let rule = crate::rules::lookup(code).unwrap();
    FindingRef {
        path: "src/c.rs".into(),
        line: 9,
        column: 5,
        code,
        name: "x",
        severity: Severity::Error,
        message: String::new(),
        concern: rule.concern,
        consequence: rule.consequence,
    }
}

#[test]
fn ack_before_effect_is_at_most_once() {
    let mut c = base();
    c.ack_before_effect.push(AckBeforeEffect {
        ack: evref(3, "consumer.commit_message"),
        effect: evref(5, "sqlx::query"),
        kind: crate::analysis::flow::EffectKind::Immediate,
        entry: "handle".into(),
        transient_source: false,
    });
    c.findings.push(finding("MA001"));
    let inf = infer(&c);
    assert_eq!(inf.guarantee, Guarantee::AtMostOnce);
    assert_eq!(inf.deciding.len(), 1);
    assert_eq!(inf.deciding[0].code, "MA001");
}

#[test]
fn auto_ack_is_at_most_once() {
    let mut c = base();
    c.auto_ack.push(AutoAck {
        what: "`no_ack: true`".into(),
        loc: loc(2),
    });
    assert_eq!(infer(&c).guarantee, Guarantee::AtMostOnce);
}

#[test]
fn ack_after_non_idempotent_effect_is_at_least_once() {
    let mut c = base();
    c.findings.push(finding("MA011"));
    let inf = infer(&c);
    assert_eq!(inf.guarantee, Guarantee::AtLeastOnce);
    assert_eq!(inf.deciding[0].code, "MA011");
}

#[test]
fn idempotent_effects_are_effectively_once() {
    let mut c = base();
    c.effects = vec![write(5, Some(true), true)];
    let inf = infer(&c);
    assert_eq!(inf.guarantee, Guarantee::EffectivelyOnce);
    assert!(inf.deciding.is_empty());
}

#[test]
fn dedup_claim_in_the_same_transaction_is_effectively_once() {
    let mut c = base();
    c.dedup = vec![write(4, Some(true), false)];
    assert_eq!(infer(&c).guarantee, Guarantee::EffectivelyOnce);
    // ... but not when the claim commits apart from the effect.
    c.pairs.push(PairFact {
        relation: Relation::DedupAndEffect {
            dedup: Durability::Transaction,
            effect: Durability::Autocommit,
            same_transaction: false,
            effect_guarded: false,
            effect_to_outbox: false,
            idle_transaction_open: false,
        },
        primary: evref(4, "sqlx::query"),
        other: evref(5, "sqlx::query"),
        related: Vec::new(),
        entry: "handle".into(),
    });
    assert_eq!(infer(&c).guarantee, Guarantee::AtLeastOnce);
}

#[test]
fn offsets_in_the_kafka_transaction_are_effectively_once() {
    let mut c = base();
    c.acks.clear();
    c.effects = vec![Effect {
        class: EffectClass::Publish,
        idempotent: None,
        ..write(6, None, false)
    }];
    assert_eq!(infer(&c).guarantee, Guarantee::Unknown);
    c.offsets_in_tx = Some(s(7, "producer.send_offsets_to_transaction", "offsets"));
    assert_eq!(infer(&c).guarantee, Guarantee::EffectivelyOnce);
}

#[test]
fn fresh_id_per_attempt_is_not_effectively_once() {
    let mut c = base();
    c.effects = vec![write(5, Some(true), false)];
    c.fresh_ids.push(IdFlow {
        idgen: loc(4),
        idgen_text: "Uuid::new_v4".into(),
        sink: loc(5),
        sink_text: "sqlx::query".into(),
        retry: None,
        sink_call: None,
        hoist: None,
    });
    assert_eq!(infer(&c).guarantee, Guarantee::AtLeastOnce);
}

#[test]
fn no_effect_or_no_ack_is_unknown() {
    let mut c = base();
    c.effects.clear();
    assert_eq!(infer(&c).guarantee, Guarantee::Unknown);
    let mut c = base();
    c.acks.clear();
    assert_eq!(infer(&c).guarantee, Guarantee::Unknown);
}
