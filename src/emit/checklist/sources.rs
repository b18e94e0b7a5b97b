//! What the checklist says about the ends of a message path: how long a consumer's
//! source keeps messages, and what a producer's sends promise.

use super::{at, code, findings_of, join, md};
use crate::analysis::inventory::{self, Consumer, Guarantee, Producer};
use crate::apis::Broker;
use crate::diagnostic::Concern;

/// How long the consumer's source keeps messages, as the analysis reads it (topic
/// `retention.ms` set in code, a pipeline description's replay window), or that it
/// is not known.
pub(super) fn source_kept(c: &Consumer) -> String {
    if c.windows.is_empty() {
        return "How long the source keeps messages is not stated in the analyzed code \
                (a topic's `retention.ms`, a queue's retention period): unknown."
            .into();
    }
    let kept: Vec<String> = c
        .windows
        .iter()
        .map(|w| {
            let how = if w.millis == crate::support::duration::UNLIMITED {
                "forever".to_string()
            } else {
                format!("for {}", crate::support::duration::human(w.millis))
            };
            let topic = w
                .topic
                .as_deref()
                .map(|t| format!(" on {}", code(t)))
                .unwrap_or_default();
            format!("{how}{topic} ({} {})", md(&w.source), at(&w.loc))
        })
        .collect();
    format!("Source messages are kept {}.", join(&kept))
}

/// What a producer's sends promise (the map's edge label) and when a send counts as
/// sent, from its acks, idempotence, transaction and publisher confirms.
pub(super) fn send_promise(p: &Producer) -> (Guarantee, String) {
    let weakened = findings_of(&p.findings, &[Concern::SendPromise]);
    if !weakened.is_empty() {
        return (
            Guarantee::AtMostOnce,
            format!(
                "the client has handed it over, unconfirmed ({})",
                join(&weakened)
            ),
        );
    }
    match p.broker {
        Some(Broker::Kafka) => {
            let settings = inventory::producer_settings(p);
            let acks = settings
                .get("acks")
                .or_else(|| settings.get("request.required.acks"));
            let (lossy, written) = match acks {
                Some((Some(v), l)) if v == "0" => (
                    true,
                    format!("the client has put it on the wire, never confirmed ({} {})", code("acks=0"), at(l)),
                ),
                Some((Some(v), l)) if v == "1" => (
                    true,
                    format!(
                        "the partition leader has written it, before any replica ({} {}: a leader failure can lose it)",
                        code("acks=1"),
                        at(l)
                    ),
                ),
                Some((Some(v), l)) => (
                    false,
                    format!("all in-sync replicas have written it ({} {})", code(&format!("acks={v}")), at(l)),
                ),
                _ => (
                    false,
                    "all in-sync replicas have written it (`acks` is not set: librdkafka's default is `all`)".to_string(),
                ),
            };
            let idempotent = matches!(settings.get("enable.idempotence"), Some((Some(v), _)) if v == "true");
            let (g, retried) = if lossy {
                (Guarantee::AtMostOnce, "")
            } else if p.broker_tx.is_some() {
                (
                    Guarantee::EffectivelyOnce,
                    " and its transaction commits; read with `isolation.level=read_committed`, a retried send is seen once",
                )
            } else if idempotent {
                (
                    Guarantee::EffectivelyOnce,
                    "; the broker drops a retried duplicate (`enable.idempotence=true`)",
                )
            } else {
                (
                    Guarantee::AtLeastOnce,
                    "; a retried send may be written twice (`enable.idempotence` is not `true`)",
                )
            };
            (g, format!("{written}{retried}"))
        }
        Some(Broker::Rabbitmq) => match (p.confirm_select, p.confirms_checked) {
            (true, Some(true)) => (
                Guarantee::AtLeastOnce,
                "the broker has confirmed it (publisher confirms, each awaited); a retry after a lost confirm publishes it again".into(),
            ),
            _ => (
                Guarantee::AtMostOnce,
                "the client has written it to the channel: no publisher confirm is checked".into(),
            ),
        },
        Some(_) => (
            Guarantee::AtLeastOnce,
            "the broker's response to the send call returns; a retry after a lost response sends it again".into(),
        ),
        None => (
            Guarantee::Unknown,
            "the library's send returns: what it promises is not known to the analysis".into(),
        ),
    }
}
